/* The one tokenizer interface over the BPE (tokenizer.json) and WordPiece (vocab.txt) tokenizers,
 * and the streaming decoder, which re-decodes a short window of recent ids and emits what grew. */
#include "text/spm_t5.h"
#include "text/text_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/formats/gguf.h"
#include "models/formats/json_fields.h"
#include "text/bpe.h"
#include "text/marian.h"
#include "text/wordpiece.h"

struct vkf_text_tokenizer {
  vkf_bpe *bpe;             /* exactly one of these three */
  vkf_wordpiece *wordpiece;
  vkf_marian *marian;
  int clean_up; /* tokenizer_config.json's clean_up_tokenization_spaces (BPE, Unigram, Marian) */
};

/* transformers' clean_up_tokenization: these replacements in this order. */
static const char *const CLEAN_UPS[][2] = {{" .", "."},     {" ?", "?"},   {" !", "!"},
                                           {" ,", ","},     {" ' ", "'"},  {" n't", "n't"},
                                           {" 'm", "'m"},   {" 's", "'s"}, {" 've", "'ve"},
                                           {" 're", "'re"}};
#define CLEAN_UP_COUNT (sizeof CLEAN_UPS / sizeof CLEAN_UPS[0])

/* Applies CLEAN_UPS to out[0..n) in place (each only shortens) and returns the new length. */
static size_t clean_up(char *out, size_t n) {
  for (size_t f = 0; f < CLEAN_UP_COUNT; f++) {
    size_t fl = strlen(CLEAN_UPS[f][0]), tl = strlen(CLEAN_UPS[f][1]), w = 0;
    for (size_t r = 0; r < n;) {
      if (r + fl <= n && !memcmp(out + r, CLEAN_UPS[f][0], fl)) {
        memcpy(out + w, CLEAN_UPS[f][1], tl);
        w += tl;
        r += fl;
      } else {
        out[w++] = out[r++];
      }
    }
    n = w;
  }
  out[n] = '\0';
  return n;
}

/* What a later token may append that reaches back across the end: every end of a pattern, and the
 * letters after a quote, since " ' " -> "'" can join "n ' t" (or "  ' m") into a pattern that
 * begins before the end (" n't", " 'm"). */
static const char *const CLEAN_UP_REACH[] = {" t", " m", " s", " ve", " re"};
#define CLEAN_UP_REACH_COUNT (sizeof CLEAN_UP_REACH / sizeof CLEAN_UP_REACH[0])

static size_t common_prefix(const char *a, size_t an, const char *b, size_t bn) {
  size_t i = 0;
  while (i < an && i < bn && a[i] == b[i]) i++;
  return i;
}

/* Of clean_up(raw[0..n)), the length no continuation can change: the shortest common prefix of
 * it and the cleaned text of raw + each continuation that can reach back. */
static vkf_status clean_up_settled(const char *raw, size_t n, size_t *out_settled) {
  *out_settled = 0;
  enum { LONGEST = 8 }; /* longer than every continuation */
  char *base = malloc(n + 1), *grown = malloc(n + LONGEST + 1);
  if (!base || !grown) {
    free(base);
    free(grown);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "text decoder: %zu bytes", n);
  }
  memcpy(base, raw, n);
  size_t base_n = clean_up(base, n), settled = base_n;
  for (size_t f = 0; f < CLEAN_UP_COUNT + CLEAN_UP_REACH_COUNT; f++) {
    const char *pattern = f < CLEAN_UP_COUNT ? CLEAN_UPS[f][0] : CLEAN_UP_REACH[f - CLEAN_UP_COUNT];
    for (size_t k = 0; pattern[k]; k++) {
      size_t cn = strlen(pattern + k);
      memcpy(grown, raw, n);
      memcpy(grown + n, pattern + k, cn);
      size_t grown_n = clean_up(grown, n + cn);
      size_t same = common_prefix(base, base_n, grown, grown_n);
      if (same < settled) settled = same;
    }
  }
  free(base);
  free(grown);
  *out_settled = settled;
  return VKF_OK;
}

/* tokenizer_config.json's clean_up_tokenization_spaces; without the field transformers 4.38's
 * default, true; 0 without the file (the tokenizer.json-only folders are checked against
 * tokenizers' own decode). */
static vkf_status read_clean_up(const char *model_dir, int *out) {
  *out = 0;
  size_t n = strlen(model_dir) + 32;
  char *path = malloc(n), *text = NULL;
  if (!path) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  snprintf(path, n, "%s/tokenizer_config.json", model_dir);
  size_t size;
  vkf_status st = vkf_json_read_file(path, &text, &size);
  if (vkf_status_code_of(st) == VKF_STATUS_NOT_FOUND) {
    vkf_status_free(st);
    free(path);
    return VKF_OK;
  }
  cJSON *root = NULL;
  if (!st) st = vkf_json_parse_object(text, size, path, &root);
  bool value = false;
  if (!st) st = vkf_json_get_bool(path, root, "clean_up_tokenization_spaces", true, &value);
  *out = value;
  cJSON_Delete(root);
  free(text);
  free(path);
  return st;
}

/* Anything by the name counts: a directory or FIFO called tokenizer.json is an error the reader
 * names, not a reason to fall back silently to vocab.txt. */
static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* A Marian folder (target.spm) whose source.spm is missing is still Marian's. */
static int target_spm_exists(const char *model_dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/target.spm", model_dir);
  return file_exists(path);
}

vkf_status vkf_text_tokenizer_load(const char *model_dir, vkf_text_tokenizer **out_tok) {
  *out_tok = NULL;
  size_t n = strlen(model_dir) + 32;
  char *json = malloc(n), *vocab = malloc(n), *spm = malloc(n), *bpe_vocab = malloc(n);
  char *merges = malloc(n);
  vkf_text_tokenizer *t = calloc(1, sizeof *t);
  if (!json || !vocab || !spm || !bpe_vocab || !merges || !t) {
    free(json), free(vocab), free(spm), free(bpe_vocab), free(merges), free(t);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  }
  snprintf(json, n, "%s/tokenizer.json", model_dir);
  snprintf(vocab, n, "%s/vocab.txt", model_dir);
  snprintf(spm, n, "%s/source.spm", model_dir);
  snprintf(bpe_vocab, n, "%s/vocab.json", model_dir);
  snprintf(merges, n, "%s/merges.txt", model_dir);
  vkf_status st = VKF_OK;
  char type[32] = "";
  int has_vocab = file_exists(vocab);
  /* a GGUF file stands for a folder whose tokenizer.json its metadata makes (gguf_model.h) */
  if (file_exists(json) || vkf_gguf_is_file(model_dir)) st = vkf_bpe_load(json, &t->bpe, type);
  if (has_vocab && !strcmp(type, "WordPiece")) {
    /* A BERT folder keeps its vocab.txt path (BertTokenizer, batches, truncation), as before
     * tokenizer.json's WordPiece was read; without vocab.txt, tokenizer.json's model serves. */
    vkf_status_free(st);
    st = VKF_OK;
    vkf_bpe_destroy(t->bpe);
    t->bpe = NULL;
  }
  if (!st && !t->bpe) {
    if (has_vocab) st = vkf_wordpiece_load(model_dir, &t->wordpiece);
    else if (type[0])
      st = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: model type \"%s\" is not supported (only "
                           "BPE, Unigram, WordPiece and WordLevel)", json, type);
    else if (file_exists(spm) || target_spm_exists(model_dir)) /* Marian: source.spm +
                                                                 target.spm + vocab.json */
      st = vkf_marian_load(model_dir, &t->marian); /* names whichever file is missing */
    else if (file_exists(bpe_vocab) || file_exists(merges)) /* BartTokenizer without a fast file */
      st = vkf_bpe_load_files(model_dir, &t->bpe);
    else if (vkf_spm_t5_present(model_dir)) /* T5 without a fast file: converted as transformers */
      st = vkf_spm_t5_load(model_dir, &t->bpe);
    else
      st = vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: no tokenizer: none of tokenizer.json, "
                           "vocab.txt, source.spm (Marian), vocab.json + merges.txt, spiece.model "
                           "(T5)", model_dir);
  }
  if (!st && !t->wordpiece) st = read_clean_up(model_dir, &t->clean_up);
  free(json), free(vocab), free(spm), free(bpe_vocab), free(merges);
  if (st) {
    vkf_text_tokenizer_destroy(t);
    return st;
  }
  *out_tok = t;
  return VKF_OK;
}

void vkf_text_tokenizer_destroy(vkf_text_tokenizer *t) {
  if (!t) return;
  vkf_bpe_destroy(t->bpe);
  vkf_wordpiece_destroy(t->wordpiece);
  vkf_marian_destroy(t->marian);
  free(t);
}

const char *vkf_text_tokenizer_kind(const vkf_text_tokenizer *t) {
  if (t->marian) return "Marian";
  if (t->bpe) return vkf_bpe_model_name(t->bpe);
  return "WordPiece";
}
size_t vkf_text_tokenizer_vocab_count(const vkf_text_tokenizer *t) {
  if (t->marian) return vkf_marian_vocab_count(t->marian);
  return t->bpe ? vkf_bpe_vocab_count(t->bpe) : vkf_wordpiece_vocab_count(t->wordpiece);
}
int32_t vkf_text_tokenizer_bos_id(const vkf_text_tokenizer *t) {
  if (t->marian) return -1; /* Marian starts decoding from config.decoder_start_token_id */
  return t->bpe ? vkf_bpe_bos_id(t->bpe) : vkf_wordpiece_token_to_id(t->wordpiece, "[CLS]");
}
int32_t vkf_text_tokenizer_eos_id(const vkf_text_tokenizer *t) {
  if (t->marian) return vkf_marian_eos_id(t->marian);
  return t->bpe ? vkf_bpe_eos_id(t->bpe) : vkf_wordpiece_token_to_id(t->wordpiece, "[SEP]");
}
const char *vkf_text_tokenizer_id_to_token(const vkf_text_tokenizer *t, int32_t id) {
  if (t->marian) return vkf_marian_id_to_token(t->marian, id);
  return t->bpe ? vkf_bpe_id_to_token(t->bpe, id) : vkf_wordpiece_id_to_token(t->wordpiece, id);
}

vkf_status vkf_text_tokenizer_encode(const vkf_text_tokenizer *t, const char *text,
                                     int add_special, int32_t **out_ids, size_t *out_count) {
  if (t->bpe) return vkf_bpe_encode(t->bpe, text, strlen(text), add_special, out_ids, out_count);
  if (t->marian)
    return vkf_marian_encode(t->marian, text, strlen(text), add_special, out_ids, out_count);
  VKF_RETURN_IF_ERROR(vkf_wordpiece_encode_all(t->wordpiece, text, out_ids, out_count));
  if (!add_special) { /* drop [CLS] and [SEP] */
    memmove(*out_ids, *out_ids + 1, (*out_count - 2) * sizeof **out_ids);
    *out_count -= 2;
  }
  return VKF_OK;
}

/* BertTokenizer's decode: tokens joined by spaces, "##" pieces glued to the previous one (the
 * clean-up follows in decode_any). */
static int wordpiece_special(const char *tok) {
  static const char *const names[] = {"[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(tok, names[i])) return 1;
  return 0;
}

static vkf_status wordpiece_decode(const vkf_wordpiece *wp, const int32_t *ids, size_t count,
                                   int skip_special, char **out_text, size_t *out_size) {
  size_t cap = 1;
  for (size_t i = 0; i < count; i++) {
    const char *s = vkf_wordpiece_id_to_token(wp, ids[i]);
    if (!s)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "id %d (position %zu) is not in the "
                             "vocabulary of %zu tokens", ids[i], i, vkf_wordpiece_vocab_count(wp));
    cap += strlen(s) + 1;
  }
  char *out = malloc(cap);
  if (!out) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "decoding %zu ids", count);
  size_t n = 0;
  for (size_t i = 0; i < count; i++) {
    const char *s = vkf_wordpiece_id_to_token(wp, ids[i]);
    if (skip_special && wordpiece_special(s)) continue;
    if (!strncmp(s, "##", 2)) s += 2;
    else if (n) out[n++] = ' ';
    size_t len = strlen(s);
    memcpy(out + n, s, len);
    n += len;
  }
  out[n] = '\0';
  *out_text = out;
  *out_size = n;
  return VKF_OK;
}

static vkf_status decode_any(const vkf_text_tokenizer *t, const int32_t *ids, size_t count,
                             int skip_special, int hold, char **out_text, size_t *out_size,
                             size_t *out_held_from) {
  if (t->bpe || t->marian) {
    VKF_RETURN_IF_ERROR(t->bpe ? vkf_bpe_decode(t->bpe, ids, count, skip_special, hold, out_text,
                                                out_size, out_held_from)
                               : vkf_marian_decode(t->marian, ids, count, skip_special, hold,
                                                   out_text, out_size, out_held_from));
    if (!t->clean_up) return VKF_OK;
  } else {
    /* BertTokenizer always cleans up */
    VKF_RETURN_IF_ERROR(
        wordpiece_decode(t->wordpiece, ids, count, skip_special, out_text, out_size));
    *out_held_from = *out_size;
  }
  /* The clean-up runs over the settled text; held bytes (never ASCII) stay as they are, and the
   * end that a later token may still rewrite is held too. */
  char *s = *out_text;
  size_t held = *out_held_from, tail = *out_size - held, settled = 0;
  if (hold) {
    vkf_status st = clean_up_settled(s, held, &settled);
    if (st) {
      free(s);
      *out_text = NULL;
      return st;
    }
  }
  size_t cleaned = clean_up(s, held);
  memmove(s + cleaned, s + held, tail);
  s[cleaned + tail] = '\0';
  *out_size = cleaned + tail;
  *out_held_from = hold ? settled : cleaned;
  return VKF_OK;
}

vkf_status vkf_text_tokenizer_decode(const vkf_text_tokenizer *t, const int32_t *ids,
                                     size_t count, int skip_special, char **out_text) {
  size_t size, held;
  return decode_any(t, ids, count, skip_special, 0, out_text, &size, &held);
}

/* ---- streaming ------------------------------------------------------------------------------- */

#define WINDOW_KEEP 8 /* ids kept as context when the window is cut: decoders look at neighbours */
#define WINDOW_MAX 64

struct vkf_text_decoder {
  const vkf_text_tokenizer *tok;
  int skip_special;
  int32_t *ids; /* the window: grows past WINDOW_MAX only while bytes are held */
  size_t count, cap;
  size_t emitted; /* bytes of decode(ids) already returned */
  char *text;     /* the last decode, which the returned pointer points into */
};

vkf_status vkf_text_decoder_create(const vkf_text_tokenizer *tok, int skip_special,
                                   vkf_text_decoder **out_dec) {
  *out_dec = calloc(1, sizeof **out_dec);
  if (!*out_dec) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "text decoder");
  (*out_dec)->tok = tok;
  (*out_dec)->skip_special = skip_special;
  return VKF_OK;
}

void vkf_text_decoder_destroy(vkf_text_decoder *d) {
  if (!d) return;
  free(d->text);
  free(d->ids);
  free(d);
}

/* Drops all but the last WINDOW_KEEP ids when the kept ids decode, alone, to the end of the
 * current text: then later decodes see the same left context. Not otherwise: kept ids that decode
 * to nothing (skipped specials) lose the space a word gets after earlier text, and kept bytes
 * that are the valid end of an invalid byte-fallback run would turn back from U+FFFDs into text.
 * The window then grows until a later cut holds (a long run of such ids costs quadratic time). */
static vkf_status cut_window(vkf_text_decoder *d) {
  char *kept;
  size_t kept_size, kept_held;
  VKF_RETURN_IF_ERROR(decode_any(d->tok, d->ids + d->count - WINDOW_KEEP, WINDOW_KEEP,
                                 d->skip_special, 1, &kept, &kept_size, &kept_held));
  size_t settled = d->emitted;
  int same_end = kept_held > 0 && kept_held == kept_size && kept_held <= settled &&
                 !memcmp(kept, d->text + settled - kept_held, kept_held);
  free(kept);
  if (!same_end) return VKF_OK;
  memmove(d->ids, d->ids + d->count - WINDOW_KEEP, WINDOW_KEEP * sizeof d->ids[0]);
  d->count = WINDOW_KEEP;
  d->emitted = kept_held;
  return VKF_OK;
}

vkf_status vkf_text_decoder_push(vkf_text_decoder *d, int32_t id, const char **out_text,
                                 size_t *out_size) {
  *out_text = "";
  *out_size = 0;
  char *text;
  size_t size, held;
  if (d->count == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : WINDOW_MAX;
    int32_t *grown = realloc(d->ids, cap * sizeof *grown);
    if (!grown) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "text decoder");
    d->ids = grown;
    d->cap = cap;
  }
  d->ids[d->count] = id;
  VKF_RETURN_IF_ERROR(decode_any(d->tok, d->ids, d->count + 1, d->skip_special, 1, &text, &size,
                                 &held));
  d->count++;
  free(d->text);
  d->text = text;
  if (held > d->emitted) {
    *out_text = text + d->emitted;
    *out_size = held - d->emitted;
    d->emitted = held;
  }
  if (d->count >= WINDOW_MAX && held == size) return cut_window(d);
  return VKF_OK;
}

vkf_status vkf_text_decoder_flush(vkf_text_decoder *d, const char **out_text, size_t *out_size) {
  *out_text = "";
  *out_size = 0;
  char *text;
  size_t size, held;
  VKF_RETURN_IF_ERROR(decode_any(d->tok, d->ids, d->count, d->skip_special, 0, &text, &size, &held));
  free(d->text);
  d->text = text;
  if (size > d->emitted) {
    *out_text = text + d->emitted;
    *out_size = size - d->emitted;
  }
  d->count = 0;
  d->emitted = 0;
  return VKF_OK;
}
