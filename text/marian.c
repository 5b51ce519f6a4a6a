/* MarianTokenizer: the slow tokenizer's split on its special tokens, remove_language_code's regex
 * ">>.+<<" (a match at the start is kept as a token, every match anywhere is deleted), source.spm
 * pieces through vocab.json (unknown piece -> unk id), and convert_tokens_to_string on target.spm.
 */
#include "text/marian.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/file_read.h"
#include "models/formats/json_fields.h"
#include "text/spm.h"
#include "text/unicode.h"

#define MAX_VOCAB_FILE ((size_t)256 << 20)
#define MAX_IDS (1u << 24)

enum { SP_EOS, SP_UNK, SP_PAD, SP_COUNT };
static const char *const SPECIAL_KEYS[SP_COUNT] = {"eos_token", "unk_token", "pad_token"};
static const char *const SPECIAL_DEFAULTS[SP_COUNT] = {"</s>", "<unk>", "<pad>"};

typedef struct vocab {
  char **by_id; /* id -> piece (the last key naming an id wins, as {v: k for k, v}) */
  size_t id_count;
  char **keys; /* piece -> id, open addressing over keys/ids */
  int32_t *ids;
  size_t mask;
} vocab;

struct vkf_marian {
  vkf_spm *source, *target;
  vocab enc; /* vocab.json */
  vocab dec; /* target_vocab_file with separate_vocabs, else unused (enc decodes) */
  int separate;
  char *special[SP_COUNT];
  int32_t special_ids[SP_COUNT];
};

static uint64_t hash(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
  return h;
}

static int32_t vocab_find(const vocab *v, const char *p, size_t n) {
  if (!v->keys) return -1;
  for (size_t i = hash(p, n) & v->mask;; i = (i + 1) & v->mask) {
    if (!v->keys[i]) return -1;
    if (strlen(v->keys[i]) == n && !memcmp(v->keys[i], p, n)) return v->ids[i];
  }
}

static void vocab_free(vocab *v) {
  for (size_t i = 0; v->keys && i <= v->mask; i++) free(v->keys[i]);
  free(v->keys);
  free(v->ids);
  free(v->by_id);
  memset(v, 0, sizeof *v);
}

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static vkf_status vocab_load(const char *path, vocab *v) {
  char *text = NULL;
  size_t size = 0;
  VKF_RETURN_IF_ERROR(vkf_file_read_bounded(path, MAX_VOCAB_FILE, "a vocab.json", &text, &size));
  cJSON *root = NULL;
  vkf_status st = vkf_json_parse_object(text, size, path, &root);
  free(text);
  if (st) return st;
  size_t count = 0, slots = 16;
  double max_id = -1;
  const cJSON *item;
  cJSON_ArrayForEach(item, root) {
    if (!vkf_json_is_int(item) || item->valuedouble < 0 || item->valuedouble >= MAX_IDS) {
      st = vkf_status_make(VKF_STATUS_PARSE, "%s: \"%s\" has id %s, not an integer in [0, %u)",
                           path, item->string,
                           cJSON_IsNumber(item) ? "out of range"
                                                : "of a "
                                                  "wrong type",
                           MAX_IDS);
      break;
    }
    if (item->valuedouble > max_id) max_id = item->valuedouble;
    count++;
  }
  if (!st && !count) st = vkf_status_make(VKF_STATUS_PARSE, "%s: empty vocabulary", path);
  while (!st && slots < count * 2) slots *= 2;
  if (!st) {
    v->id_count = (size_t)max_id + 1;
    v->by_id = calloc(v->id_count, sizeof *v->by_id);
    v->keys = calloc(slots, sizeof *v->keys);
    v->ids = calloc(slots, sizeof *v->ids);
    v->mask = slots - 1;
    if (!v->by_id || !v->keys || !v->ids)
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  }
  cJSON_ArrayForEach(item, root) {
    if (st) break;
    size_t n = strlen(item->string), i = hash(item->string, n) & v->mask;
    while (v->keys[i] && strcmp(v->keys[i], item->string)) i = (i + 1) & v->mask;
    if (!v->keys[i] && !(v->keys[i] = malloc(n + 1))) {
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
      break;
    }
    memcpy(v->keys[i], item->string, n + 1);
    v->ids[i] = (int32_t)item->valuedouble; /* a repeated key keeps its last id, as json.load */
    v->by_id[v->ids[i]] = v->keys[i];
  }
  cJSON_Delete(root);
  if (st) vocab_free(v);
  return st;
}

/* tokenizer_config.json: the special tokens (strings or {"content": ...}) and separate_vocabs. */
static vkf_status read_config(vkf_marian *m, const char *dir, char **target_vocab) {
  char *path = join(dir, "tokenizer_config.json"), *text = NULL;
  if (!path) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", dir);
  size_t size;
  cJSON *root = NULL;
  vkf_status st = vkf_json_read_file(path, &text, &size);
  if (vkf_status_code_of(st) == VKF_STATUS_NOT_FOUND) {
    vkf_status_free(st);
    st = VKF_OK;
  } else if (!st) {
    st = vkf_json_parse_object(text, size, path, &root);
  }
  for (int k = 0; k < SP_COUNT && !st; k++) {
    const cJSON *f = vkf_json_field(root, SPECIAL_KEYS[k]);
    if (cJSON_IsObject(f)) f = cJSON_GetObjectItemCaseSensitive(f, "content");
    if (f && !cJSON_IsString(f)) {
      st = vkf_status_make(VKF_STATUS_PARSE, "%s: %s is not a string", path, SPECIAL_KEYS[k]);
      break;
    }
    const char *s = f ? f->valuestring : SPECIAL_DEFAULTS[k];
    size_t n = strlen(s) + 1;
    if (!st && (m->special[k] = malloc(n)))
      memcpy(m->special[k], s, n);
    else if (!st)
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  }
  bool separate = false;
  if (!st) st = vkf_json_get_bool(path, root, "separate_vocabs", false, &separate);
  m->separate = separate;
  const char *tv = NULL;
  if (!st && separate) {
    st = vkf_json_get_string(path, root, "target_vocab_file", &tv);
    if (!st && !tv)
      st = vkf_status_make(VKF_STATUS_PARSE, "%s: separate_vocabs without target_vocab_file", path);
    if (!st && strchr(tv, '/')) tv = strrchr(tv, '/') + 1; /* saved as a path: the file beside */
    if (!st && !(*target_vocab = join(dir, tv)))
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  }
  cJSON_Delete(root);
  free(text);
  free(path);
  return st;
}

vkf_status vkf_marian_load(const char *dir, vkf_marian **out) {
  *out = NULL;
  vkf_marian *m = calloc(1, sizeof *m);
  char *src = join(dir, "source.spm"), *tgt = join(dir, "target.spm"),
       *voc = join(dir, "vocab.json");
  char *target_vocab = NULL;
  vkf_status st =
      m && src && tgt && voc ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", dir);
  if (!st) st = read_config(m, dir, &target_vocab);
  if (!st) st = vkf_spm_load(src, &m->source);
  if (!st) st = vkf_spm_load(tgt, &m->target);
  if (!st) st = vocab_load(voc, &m->enc);
  if (!st && m->separate) st = vocab_load(target_vocab, &m->dec);
  for (int k = 0; k < SP_COUNT && !st; k++) {
    m->special_ids[k] = vocab_find(&m->enc, m->special[k], strlen(m->special[k]));
    if (m->special_ids[k] < 0 && k != SP_EOS)
      st = vkf_status_make(VKF_STATUS_PARSE, "%s: the %s \"%s\" is not in the vocabulary", voc,
                           SPECIAL_KEYS[k], m->special[k]);
  }
  free(src), free(tgt), free(voc), free(target_vocab);
  if (st) {
    vkf_marian_destroy(m);
    return st;
  }
  *out = m;
  return VKF_OK;
}

void vkf_marian_destroy(vkf_marian *m) {
  if (!m) return;
  vkf_spm_destroy(m->source);
  vkf_spm_destroy(m->target);
  vocab_free(&m->enc);
  vocab_free(&m->dec);
  for (int k = 0; k < SP_COUNT; k++) free(m->special[k]);
  free(m);
}

static const vocab *decoding(const vkf_marian *m) {
  return m->separate ? &m->dec : &m->enc;
}

size_t vkf_marian_vocab_count(const vkf_marian *m) {
  return decoding(m)->id_count;
}
const char *vkf_marian_id_to_token(const vkf_marian *m, int32_t id) {
  const vocab *v = decoding(m);
  return id >= 0 && (size_t)id < v->id_count ? v->by_id[id] : NULL;
}
int32_t vkf_marian_eos_id(const vkf_marian *m) {
  return m->special_ids[SP_EOS];
}

/* ---- encoding -------------------------------------------------------------------------------- */

typedef struct ids {
  int32_t *data;
  size_t count, cap;
  int failed;
} ids;

static void push(ids *v, int32_t id) {
  if (v->count == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 64;
    int32_t *d = realloc(v->data, cap * sizeof *d);
    if (!d) {
      v->failed = 1;
      return;
    }
    v->data = d;
    v->cap = cap;
  }
  v->data[v->count++] = id;
}

static int32_t piece_id(const vkf_marian *m, const char *p, size_t n) {
  int32_t id = vocab_find(&m->enc, p, n);
  return id >= 0 ? id : m->special_ids[SP_UNK];
}

/* The end of the match of ">>.+<<" at s[i] (greedy: the last "<<" of the line leaving one
 * character or more between), or 0 when none. */
static size_t code_match(const char *s, size_t n, size_t i) {
  if (i + 5 > n || s[i] != '>' || s[i + 1] != '>') return 0;
  size_t eol = i + 2;
  while (eol < n && s[eol] != '\n') eol++;
  for (size_t p = eol; p >= i + 5; p--)
    if (s[p - 2] == '<' && s[p - 1] == '<') return p;
  return 0;
}

/* _tokenize of one chunk between special tokens. */
static vkf_status tokenize_chunk(const vkf_marian *m, const char *s, size_t n, ids *out) {
  size_t code = code_match(s, n, 0);
  if (code) push(out, piece_id(m, s, code));
  char *rest = malloc(n + 1);
  if (!rest) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "encoding");
  size_t r = 0;
  for (size_t i = 0; i < n;) {
    size_t end = code_match(s, n, i);
    if (end) {
      i = end;
    } else {
      rest[r++] = s[i++];
    }
  }
  char *pieces;
  size_t *ends, count;
  vkf_status st = vkf_spm_encode(m->source, rest, r, &pieces, &ends, &count);
  free(rest);
  if (st) return st;
  for (size_t k = 0; k < count; k++) {
    size_t start = k ? ends[k - 1] : 0;
    push(out, piece_id(m, pieces + start, ends[k] - start));
  }
  free(pieces);
  free(ends);
  return VKF_OK;
}

/* The special token starting at s[i] (the longest), or -1. */
static int special_at(const vkf_marian *m, const char *s, size_t n, size_t i) {
  int best = -1;
  for (int k = 0; k < SP_COUNT; k++) {
    size_t len = strlen(m->special[k]);
    if (len && len <= n - i && !memcmp(s + i, m->special[k], len) && m->special_ids[k] >= 0 &&
        (best < 0 || len > strlen(m->special[best])))
      best = k;
  }
  return best;
}

vkf_status vkf_marian_encode(const vkf_marian *m, const char *text, size_t n, int add_special,
                             int32_t **out_ids, size_t *out_count) {
  *out_ids = NULL;
  *out_count = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = vkf_utf8_decode((const uint8_t *)text + i, n - i, &cp);
    if (!len)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "text is not valid UTF-8: byte 0x%02X at byte offset %zu",
                             (uint8_t)text[i], i);
    i += len;
  }
  ids out = {0};
  vkf_status st = VKF_OK;
  size_t seg = 0;
  for (size_t i = 0; i < n && !st;) {
    int k = special_at(m, text, n, i);
    if (k < 0) {
      i++;
      continue;
    }
    if (i > seg) st = tokenize_chunk(m, text + seg, i - seg, &out);
    push(&out, m->special_ids[k]);
    i += strlen(m->special[k]);
    seg = i;
  }
  if (!st && n > seg) st = tokenize_chunk(m, text + seg, n - seg, &out);
  if (!st && add_special && m->special_ids[SP_EOS] >= 0) push(&out, m->special_ids[SP_EOS]);
  if (!st && (out.failed || (!out.data && !(out.data = malloc(sizeof(int32_t))))))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "encoding %zu bytes", n);
  if (st) {
    free(out.data);
    return st;
  }
  *out_ids = out.data;
  *out_count = out.count;
  return VKF_OK;
}

/* ---- decoding -------------------------------------------------------------------------------- */

static int is_special(const vkf_marian *m, int32_t id) {
  for (int k = 0; k < SP_COUNT; k++)
    if (m->special_ids[k] == id) return 1;
  return 0;
}

static int special_token(const vkf_marian *m, const char *tok) {
  for (int k = 0; k < SP_COUNT; k++)
    if (!strcmp(tok, m->special[k])) return 1;
  return 0;
}

/* Python's str.isspace on one code point: White_Space plus the separators U+001C..U+001F. */
static int py_space(const char *s, size_t n, size_t i, size_t *len) {
  uint32_t cp;
  *len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
  if (!*len) return 0;
  return (cp >= 0x1C && cp <= 0x1F) || (vkf_unicode_props(cp) & VKF_UNICODE_WHITE_SPACE);
}

vkf_status vkf_marian_decode(const vkf_marian *m, const int32_t *id_list, size_t count,
                             int skip_special, int hold, char **out_text, size_t *out_size,
                             size_t *out_held_from) {
  *out_text = NULL;
  const char **run = malloc((count + 1) * sizeof *run);
  if (!run) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "decoding %zu ids", count);
  char *buf = NULL;
  size_t size = 0, cap = 0, run_count = 0;
  int ok = 1;
  for (size_t i = 0; i < count; i++) {
    const char *tok = vkf_marian_id_to_token(m, id_list[i]);
    if (!tok) {
      free(run), free(buf);
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "id %d (position %zu) is not in the "
                             "vocabulary of %zu tokens",
                             id_list[i], i, vkf_marian_vocab_count(m));
    }
    if (skip_special && is_special(m, id_list[i])) continue;
    if (!special_token(m, tok)) {
      run[run_count++] = tok;
      continue;
    }
    ok &= vkf_spm_decode_pieces(m->target, run, run_count, &buf, &size, &cap);
    run_count = 0;
    const char *parts[2] = {tok, " "};
    for (int p = 0; p < 2 && ok; p++) { /* the special token's text and a space, raw */
      size_t n = strlen(parts[p]);
      if (size + n + 1 > cap) {
        cap = (size + n + 1) * 2;
        char *grown = realloc(buf, cap);
        if (!grown)
          ok = 0;
        else
          buf = grown;
      }
      if (ok) memcpy(buf + size, parts[p], n), size += n;
    }
  }
  ok &= vkf_spm_decode_pieces(m->target, run, run_count, &buf, &size, &cap);
  free(run);
  if (!ok || (!buf && !(buf = malloc(1)))) {
    free(buf);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "decoding %zu ids", count);
  }
  /* "▁" left by unknown pieces becomes a space too; then strip() */
  size_t w = 0;
  for (size_t r = 0; r < size;) {
    if (r + 3 <= size && !memcmp(buf + r, "\xE2\x96\x81", 3))
      buf[w++] = ' ', r += 3;
    else
      buf[w++] = buf[r++];
  }
  size = w;
  size_t start = 0, len;
  while (start < size && py_space(buf, size, start, &len)) start += len;
  size_t end = size;
  while (end > start) {
    size_t back = end - 1;
    while (back > start && ((uint8_t)buf[back] & 0xC0) == 0x80) back--;
    if (!py_space(buf, end, back, &len)) break;
    end = back;
  }
  size_t keep = hold ? size : end;
  memmove(buf, buf + start, keep - start);
  buf[keep - start] = '\0';
  *out_text = buf;
  *out_size = keep - start;
  *out_held_from = end - start;
  return VKF_OK;
}
