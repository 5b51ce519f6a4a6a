/* The WordPiece tokenizer: vocab.txt + tokenizer_config.json loading, a hashed vocabulary, and
 * BertTokenizerFast's pipeline (special tokens split from the raw text, clean, CJK split, lower,
 * strip accents, punctuation split, greedy WordPiece) up to padded, masked batches. */
#include "text/wordpiece.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/file_read.h"
#include "models/formats/json_fields.h"
#include "text/unicode.h"

/* BertTokenizer's WordpieceTokenizer.max_input_chars_per_word: longer words become [UNK] whole. */
#define WORD_MAX_CHARS 100
#define DEFAULT_MAX_LENGTH 512

enum { SPECIAL_UNK, SPECIAL_SEP, SPECIAL_PAD, SPECIAL_CLS, SPECIAL_MASK, SPECIAL_COUNT };
static const char *const k_special_keys[SPECIAL_COUNT] = {"unk_token", "sep_token", "pad_token",
                                                          "cls_token", "mask_token"};
static const char *const k_special_defaults[SPECIAL_COUNT] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]",
                                                              "[MASK]"};

struct vkf_wordpiece {
  char *vocab_text;      /* vocab.txt contents; each line NUL-terminated in place */
  const char **tokens;   /* [vocab_count] into vocab_text */
  uint32_t *token_sizes; /* [vocab_count] bytes */
  size_t vocab_count;
  size_t token_size_max; /* longest entry: bounds the WordPiece match window */
  uint32_t *slots;       /* open addressing; id + 1, 0 = empty */
  size_t slot_mask;
  size_t max_length;
  int tokenize_cjk;
  char special[SPECIAL_COUNT][64];
  int32_t special_ids[SPECIAL_COUNT];
};

/* ---- vocabulary hash ---------------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t size) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < size; i++) {
    h ^= (uint8_t)s[i];
    h *= 1099511628211ull;
  }
  return h;
}

static int32_t vocab_find(const vkf_wordpiece *tok, const char *s, size_t size) {
  for (size_t i = hash_bytes(s, size) & tok->slot_mask;; i = (i + 1) & tok->slot_mask) {
    uint32_t slot = tok->slots[i];
    if (slot == 0) return -1;
    uint32_t id = slot - 1;
    if (tok->token_sizes[id] == size && memcmp(tok->tokens[id], s, size) == 0) return (int32_t)id;
  }
}

/* Python's dict keeps the last index of a repeated line, so a later duplicate replaces the slot. */
static void vocab_insert(vkf_wordpiece *tok, uint32_t id) {
  const char *s = tok->tokens[id];
  size_t size = tok->token_sizes[id];
  for (size_t i = hash_bytes(s, size) & tok->slot_mask;; i = (i + 1) & tok->slot_mask) {
    uint32_t slot = tok->slots[i];
    if (slot == 0 ||
        (tok->token_sizes[slot - 1] == size && memcmp(tok->tokens[slot - 1], s, size) == 0)) {
      tok->slots[i] = id + 1;
      return;
    }
  }
}

/* ---- loading -------------------------------------------------------------------------------- */

/* No real vocab.txt comes near this (BERT's is 230 KB); past it the file is refused unread. */
#define VOCAB_MAX_FILE_SIZE ((size_t)256 << 20)

/* Lines as Python's text-mode readlines() sees them: "\n", "\r\n" and "\r" all end a line. */
static vkf_status vocab_parse(vkf_wordpiece *tok, const char *path, size_t size) {
  char *text = tok->vocab_text;
  size_t lines = 0;
  for (size_t i = 0; i < size; i++) {
    if (text[i] == '\n' || (text[i] == '\r' && text[i + 1] != '\n')) lines++;
  }
  if (size > 0 && text[size - 1] != '\n' && text[size - 1] != '\r') lines++;
  if (lines == 0 || lines >= UINT32_MAX / 2) {
    return vkf_status_make(VKF_STATUS_PARSE, "%s: %s vocabulary", path,
                           lines ? "oversized" : "empty");
  }
  tok->tokens = malloc(lines * sizeof(*tok->tokens));
  tok->token_sizes = malloc(lines * sizeof(*tok->token_sizes));
  size_t slot_count = 16;
  while (slot_count < lines * 2) slot_count *= 2;
  tok->slots = calloc(slot_count, sizeof(*tok->slots));
  if (!tok->tokens || !tok->token_sizes || !tok->slots) {
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: out of memory for %zu tokens", path,
                           lines);
  }
  tok->slot_mask = slot_count - 1;
  size_t start = 0;
  for (size_t i = 0; i <= size && tok->vocab_count < lines; i++) {
    int end_of_line = i == size || text[i] == '\n' || text[i] == '\r';
    if (!end_of_line) continue;
    if (i < size && text[i] == '\r' && text[i + 1] == '\n') text[i++] = '\0';
    text[i] = '\0';
    size_t id = tok->vocab_count++;
    tok->tokens[id] = text + start;
    tok->token_sizes[id] = (uint32_t)(strlen(text + start));
    if (tok->token_sizes[id] > tok->token_size_max) tok->token_size_max = tok->token_sizes[id];
    vocab_insert(tok, (uint32_t)id);
    start = i + 1;
  }
  return VKF_OK;
}

/* A special token in tokenizer_config.json is a string or a serialized AddedToken {"content": ...}.
 */
static const char *json_token_string(const cJSON *item) {
  if (cJSON_IsString(item)) return item->valuestring;
  if (cJSON_IsObject(item)) {
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(item, "content");
    if (cJSON_IsString(content)) return content->valuestring;
  }
  return NULL;
}

static vkf_status config_parse(vkf_wordpiece *tok, const char *path, const char *text) {
  cJSON *root = cJSON_Parse(text);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return vkf_status_make(VKF_STATUS_PARSE, "%s: not a JSON object", path);
  }
  vkf_status status = VKF_OK;
  /* Each of these switches selects a pipeline this file does not implement (the cased path also
   * needs NFC composition); refusing is better than returning ids the model was not trained on. */
  static const char *const unsupported_if_false[] = {"do_lower_case", "do_basic_tokenize",
                                                     "strip_accents"};
  for (size_t i = 0; i < sizeof(unsupported_if_false) / sizeof(unsupported_if_false[0]); i++) {
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(root, unsupported_if_false[i]))) {
      status = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                               "%s: %s is false; only uncased BERT tokenizers (lower-casing, "
                               "accent stripping, basic tokenization) are supported",
                               path, unsupported_if_false[i]);
      break;
    }
  }
  const cJSON *cjk = cJSON_GetObjectItemCaseSensitive(root, "tokenize_chinese_chars");
  tok->tokenize_cjk = !cJSON_IsFalse(cjk);
  const cJSON *max_len = cJSON_GetObjectItemCaseSensitive(root, "model_max_length");
  /* Hugging Face writes a huge sentinel (1e30) when a checkpoint states no limit. */
  if (cJSON_IsNumber(max_len) && max_len->valuedouble >= 2 && max_len->valuedouble <= 1e6) {
    tok->max_length = (size_t)max_len->valuedouble;
  }
  for (int s = 0; s < SPECIAL_COUNT && !status; s++) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, k_special_keys[s]);
    if (!item || cJSON_IsNull(item)) continue;
    const char *value = json_token_string(item);
    if (!value || !*value || strlen(value) >= sizeof(tok->special[s])) {
      status = vkf_status_make(VKF_STATUS_PARSE, "%s: %s is not a token string", path,
                               k_special_keys[s]);
    } else {
      strcpy(tok->special[s], value);
    }
  }
  cJSON_Delete(root);
  return status;
}

static vkf_status tokenizer_fill(vkf_wordpiece *tok, const char *model_dir) {
  size_t dir_size = strlen(model_dir);
  char *path = malloc(dir_size + 32);
  if (!path) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of memory");
  vkf_status status = VKF_OK;
  snprintf(path, dir_size + 32, "%s/tokenizer_config.json", model_dir);
  char *config = NULL;
  size_t size = 0;
  vkf_status config_status = vkf_json_read_file(path, &config, &size);
  if (vkf_status_code_of(config_status) == VKF_STATUS_NOT_FOUND) {
    vkf_status_free(config_status); /* optional: BERT defaults apply */
  } else if (config_status) {
    status = config_status;
  } else {
    status = config_parse(tok, path, config);
    free(config);
  }
  if (!status) {
    snprintf(path, dir_size + 32, "%s/vocab.txt", model_dir);
    status = vkf_file_read_bounded(path, VOCAB_MAX_FILE_SIZE, "a vocab.txt", &tok->vocab_text,
                                   &size);
    if (vkf_status_code_of(status) == VKF_STATUS_NOT_FOUND) {
      status = vkf_status_annotate(status, "tokenizer vocabulary missing: ");
    }
  }
  if (!status) status = vocab_parse(tok, path, size);
  for (int s = 0; s < SPECIAL_COUNT && !status; s++) {
    tok->special_ids[s] = vocab_find(tok, tok->special[s], strlen(tok->special[s]));
    if (tok->special_ids[s] < 0) {
      status = vkf_status_make(VKF_STATUS_PARSE, "%s has no %s \"%s\"", path, k_special_keys[s],
                               tok->special[s]);
    }
  }
  free(path);
  return status;
}

vkf_status vkf_wordpiece_load(const char *model_dir, vkf_wordpiece **out_tok) {
  VKF_ASSERT(model_dir && out_tok);
  *out_tok = NULL;
  vkf_wordpiece *tok = calloc(1, sizeof(*tok));
  if (!tok) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of memory");
  tok->max_length = DEFAULT_MAX_LENGTH;
  tok->tokenize_cjk = 1;
  for (int s = 0; s < SPECIAL_COUNT; s++) strcpy(tok->special[s], k_special_defaults[s]);
  vkf_status status = tokenizer_fill(tok, model_dir);
  if (status) {
    vkf_wordpiece_destroy(tok);
    return vkf_status_annotate(status, "loading tokenizer from %s: ", model_dir);
  }
  *out_tok = tok;
  return VKF_OK;
}

void vkf_wordpiece_destroy(vkf_wordpiece *tok) {
  if (!tok) return;
  free(tok->vocab_text);
  free(tok->tokens);
  free(tok->token_sizes);
  free(tok->slots);
  free(tok);
}

size_t vkf_wordpiece_max_length(const vkf_wordpiece *tok) {
  return tok->max_length;
}
size_t vkf_wordpiece_vocab_count(const vkf_wordpiece *tok) {
  return tok->vocab_count;
}
int32_t vkf_wordpiece_pad_id(const vkf_wordpiece *tok) {
  return tok->special_ids[SPECIAL_PAD];
}

int32_t vkf_wordpiece_token_to_id(const vkf_wordpiece *tok, const char *token) {
  return vocab_find(tok, token, strlen(token));
}

const char *vkf_wordpiece_id_to_token(const vkf_wordpiece *tok, int32_t id) {
  return (id >= 0 && (size_t)id < tok->vocab_count) ? tok->tokens[id] : NULL;
}

/* ---- encoding ---------------------------------------------------------------------------------
 */

typedef struct u32_buf {
  uint32_t *data;
  size_t count, cap;
} u32_buf;

static int u32_reserve(u32_buf *b, size_t extra) {
  if (b->count + extra <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->count + extra) cap *= 2;
  uint32_t *data = realloc(b->data, cap * sizeof(*data));
  if (!data) return 0;
  b->data = data;
  b->cap = cap;
  return 1;
}

/* Scratch for one encode call. Ids go to `out` until `cap` content tokens are there; after that the
 * rest of the text cannot change the result, so `full` stops the work early. */
typedef struct encoder {
  const vkf_wordpiece *tok;
  u32_buf lowered, stripped, pieces; /* per word */
  char *bytes;                       /* "##" + UTF-8 of one piece (<= WORD_MAX_CHARS code points) */
  int32_t *out;
  size_t count, cap;
  int full, oom;
} encoder;

static void emit(encoder *e, int32_t id) {
  if (e->count < e->cap) e->out[e->count++] = id;
  if (e->count == e->cap) e->full = 1;
}

/* Greedy longest-match-first over one piece that holds no space or punctuation. */
static void wordpiece(encoder *e, const uint32_t *cps, size_t n) {
  const vkf_wordpiece *tok = e->tok;
  if (n > WORD_MAX_CHARS) {
    emit(e, tok->special_ids[SPECIAL_UNK]);
    return;
  }
  uint32_t offsets[WORD_MAX_CHARS + 1]; /* byte offset of each code point within bytes + 2 */
  char *text = e->bytes + 2;
  size_t size = 0;
  for (size_t i = 0; i < n; i++) {
    offsets[i] = (uint32_t)size;
    size += vkf_utf8_encode(cps[i], text + size);
  }
  offsets[n] = (uint32_t)size;
  int32_t sub_ids[WORD_MAX_CHARS];
  size_t sub_count = 0;
  for (size_t start = 0; start < n;) {
    /* A continuation is looked up as "##" + rest; the two bytes before `start` are consumed text,
     * so "##" is written over them rather than copying the candidate. */
    const char *key = text + offsets[start];
    size_t prefix = 0;
    if (start > 0) {
      prefix = 2;
      key -= 2;
      memcpy((char *)key, "##", 2);
    }
    int32_t found = -1;
    size_t end = n;
    while (end > start && offsets[end] - offsets[start] + prefix > tok->token_size_max) end--;
    for (; end > start; end--) {
      found = vocab_find(tok, key, offsets[end] - offsets[start] + prefix);
      if (found >= 0) break;
    }
    if (found < 0) {
      emit(e, tok->special_ids[SPECIAL_UNK]);
      return;
    }
    sub_ids[sub_count++] = found;
    start = end;
  }
  for (size_t i = 0; i < sub_count; i++) emit(e, sub_ids[i]);
}

/* Which special token's text starts at `cps` (the code points of at most `n`), or -1. */
static int special_match(const vkf_wordpiece *tok, const uint32_t *cps, size_t n,
                         size_t *out_size) {
  for (int s = 0; s < SPECIAL_COUNT; s++) {
    const uint8_t *sp = (const uint8_t *)tok->special[s];
    size_t sp_size = strlen(tok->special[s]), at = 0, i = 0;
    for (; at < sp_size && i < n; i++) {
      uint32_t cp = 0;
      size_t used = vkf_utf8_decode(sp + at, sp_size - at, &cp);
      if (used == 0 || cp != cps[i]) break;
      at += used;
    }
    if (at == sp_size) {
      *out_size = i;
      return s;
    }
  }
  return -1;
}

/* One whitespace-delimited word (cleaned, CJK already apart): the BasicTokenizer steps after the
 * split, then WordPiece on each punctuation-delimited piece. */
static void encode_word(encoder *e, const uint32_t *cps, size_t n) {
  e->lowered.count = 0;
  for (size_t i = 0; i < n && !e->oom; i++) {
    if (!u32_reserve(&e->lowered, 3)) {
      e->oom = 1;
    } else { /* code point by code point, as Rust's char::to_lowercase: Σ is always σ */
      e->lowered.count += vkf_unicode_lower_cp(cps[i], e->lowered.data + e->lowered.count);
    }
  }
  e->stripped.count = 0; /* NFD, then non-spacing marks dropped */
  for (size_t i = 0; i < e->lowered.count && !e->oom; i++) {
    if (!u32_reserve(&e->stripped, 4)) {
      e->oom = 1;
    } else {
      e->stripped.count +=
          vkf_unicode_decompose_cp(e->lowered.data[i], e->stripped.data + e->stripped.count);
    }
  }
  if (e->oom) return;
  vkf_unicode_canonical_order(e->stripped.data, e->stripped.count);
  size_t kept = 0;
  for (size_t i = 0; i < e->stripped.count; i++) {
    if (!(vkf_unicode_props(e->stripped.data[i]) & VKF_UNICODE_STRIP)) {
      e->stripped.data[kept++] = e->stripped.data[i];
    }
  }
  size_t start = 0;
  for (size_t i = 0; i < kept && !e->full; i++) {
    if (vkf_unicode_props(e->stripped.data[i]) & VKF_UNICODE_PUNCT) {
      if (i > start) wordpiece(e, e->stripped.data + start, i - start);
      if (!e->full) wordpiece(e, e->stripped.data + i, 1);
      start = i + 1;
    }
  }
  if (start < kept && !e->full) wordpiece(e, e->stripped.data + start, kept - start);
}

/* Splits on special-token strings in the raw text, drops what cleaning drops, and cuts words at
 * whitespace and around CJK ideographs. */
static void encode_text(encoder *e, const uint32_t *cps, size_t n) {
  const vkf_wordpiece *tok = e->tok;
  u32_buf *word = &e->pieces;
  word->count = 0;
  for (size_t i = 0; i < n && !e->full && !e->oom; i++) {
    uint32_t cp = cps[i];
    size_t special_size = 0;
    int s = special_match(tok, cps + i, n - i, &special_size);
    uint32_t props = vkf_unicode_props(cp);
    /* Cleaning comes first: an unassigned code point inside a CJK block is dropped, not split. */
    if (props & VKF_UNICODE_REMOVE) continue;
    int cjk = tok->tokenize_cjk && (props & VKF_UNICODE_CJK);
    if (s >= 0 || cjk || (props & (VKF_UNICODE_SPACE | VKF_UNICODE_SPLIT))) {
      if (word->count) encode_word(e, word->data, word->count);
      word->count = 0;
      if (e->full) break;
      if (s >= 0) {
        emit(e, tok->special_ids[s]);
        i += special_size - 1;
      } else if (cjk) {
        encode_word(e, &cp, 1);
      }
    } else {
      if (!u32_reserve(word, 1)) {
        e->oom = 1;
      } else {
        word->data[word->count++] = cp;
      }
    }
  }
  if (word->count && !e->full && !e->oom) encode_word(e, word->data, word->count);
}

static vkf_status utf8_to_cps(const char *text, uint32_t **out_cps, size_t *out_count) {
  *out_cps = NULL;
  *out_count = 0;
  size_t size = strlen(text);
  uint32_t *cps = malloc((size + 1) * sizeof(*cps));
  if (!cps) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of memory for %zu bytes", size);
  size_t n = 0;
  for (size_t i = 0; i < size;) {
    size_t used = vkf_utf8_decode((const uint8_t *)text + i, size - i, &cps[n]);
    if (used == 0) {
      free(cps);
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "text is not valid UTF-8: byte 0x%02X at byte offset %zu",
                             (uint8_t)text[i], i);
    }
    i += used;
    n++;
  }
  *out_cps = cps;
  *out_count = n;
  return VKF_OK;
}

static size_t effective_max_len(const vkf_wordpiece *tok, size_t max_len) {
  return (max_len == 0 || max_len > tok->max_length) ? tok->max_length : max_len;
}

/* [CLS] + at most `cap` tokens of `text` + [SEP] into out_ids (room for cap + 2). */
static vkf_status encode_capped(const vkf_wordpiece *tok, const char *text, size_t cap,
                                int32_t *out_ids, size_t *out_count) {
  uint32_t *cps = NULL;
  size_t n = 0;
  VKF_RETURN_IF_ERROR(utf8_to_cps(text, &cps, &n));
  encoder e = {.tok = tok, .out = out_ids + 1, .cap = cap, .full = cap == 0};
  e.bytes = malloc(WORD_MAX_CHARS * 4 + 2);
  if (!e.bytes) e.oom = 1;
  if (!e.oom) encode_text(&e, cps, n);
  free(cps);
  free(e.bytes);
  free(e.lowered.data);
  free(e.stripped.data);
  free(e.pieces.data);
  if (e.oom) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "tokenizing: out of memory");
  out_ids[0] = tok->special_ids[SPECIAL_CLS];
  out_ids[e.count + 1] = tok->special_ids[SPECIAL_SEP];
  *out_count = e.count + 2;
  return VKF_OK;
}

vkf_status vkf_wordpiece_encode(const vkf_wordpiece *tok, const char *text, size_t max_len,
                                int32_t *out_ids, size_t *out_count) {
  VKF_ASSERT(tok && text && out_ids && out_count);
  *out_count = 0;
  max_len = effective_max_len(tok, max_len);
  if (max_len < 2) {
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "max_len %zu leaves no room for [CLS] and [SEP]", max_len);
  }
  return encode_capped(tok, text, max_len - 2, out_ids, out_count);
}

vkf_status vkf_wordpiece_encode_all(const vkf_wordpiece *tok, const char *text,
                                    int32_t **out_ids, size_t *out_count) {
  VKF_ASSERT(tok && text && out_ids && out_count);
  *out_ids = NULL;
  *out_count = 0;
  /* Every token covers at least one code point, hence at most one per byte of text. */
  size_t cap = strlen(text);
  int32_t *ids = malloc((cap + 2) * sizeof *ids);
  if (!ids) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "tokenizing %zu bytes", cap);
  vkf_status s = encode_capped(tok, text, cap, ids, out_count);
  if (s) {
    free(ids);
    *out_count = 0;
    return s;
  }
  *out_ids = ids;
  return VKF_OK;
}

vkf_status vkf_wordpiece_encode_batch(const vkf_wordpiece *tok, const char *const *texts,
                                      size_t count, size_t max_len, int32_t *out_ids,
                                      int32_t *out_mask, size_t *out_len) {
  VKF_ASSERT(tok && (texts || count == 0) && out_ids && out_mask && out_len);
  *out_len = 0;
  size_t stride = effective_max_len(tok, max_len);
  size_t *lens = malloc((count ? count : 1) * sizeof(*lens));
  if (!lens) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of memory");
  size_t longest = 0;
  for (size_t b = 0; b < count; b++) {
    vkf_status status =
        vkf_wordpiece_encode(tok, texts[b], max_len, out_ids + b * stride, &lens[b]);
    if (status) {
      free(lens);
      return vkf_status_annotate(status, "text %zu of %zu: ", b, count);
    }
    if (lens[b] > longest) longest = lens[b];
  }
  /* Rows were written max_len apart; pack them `longest` apart. Row b moves to a lower address
   * than it was written at, and rows move in order, so no row overwrites one not yet moved. */
  int32_t pad = tok->special_ids[SPECIAL_PAD];
  for (size_t b = 0; b < count; b++) {
    int32_t *row = out_ids + b * longest; /* [longest] */
    memmove(row, out_ids + b * stride, lens[b] * sizeof(*row));
    for (size_t t = 0; t < longest; t++) {
      if (t >= lens[b]) row[t] = pad;
      out_mask[b * longest + t] = t < lens[b] ? 1 : 0;
    }
  }
  free(lens);
  *out_len = longest;
  return VKF_OK;
}
