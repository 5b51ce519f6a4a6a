/* A GGUF's SentencePiece vocabulary (tokenizer.ggml.model "llama": tokens, scores, token types)
 * as tokenizer.json, the way transformers' GGUFLlamaConverter builds it: a byte-fallback BPE whose
 * merges are every split of every token into two tokens, ranked by the merged token's score
 * (then the halves' scores), the legacy Llama normalizer (Prepend "▁" when add_space_prefix,
 * Replace " " -> "▁"), the Llama decoder, CONTROL and UNKNOWN tokens as special added tokens,
 * and BOS added unless add_bos_token says otherwise. */
#include <stdlib.h>
#include <string.h>

#include "models/formats/gguf_spm.h"
#include "models/formats/gguf_tokens.h"

/* llama.cpp token types (llama_token_type). */
enum { TOKEN_UNKNOWN = 2, TOKEN_CONTROL = 3 };

/* Open-addressing map from a token's bytes to the last id that has them (a later duplicate wins,
 * as in the converter's {token: id} dict). */
typedef struct token_map {
  const vkf_gguf *g;
  const vkf_gguf_kv *tokens;
  int64_t *slots; /* id or -1 */
  size_t mask;
} token_map;

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h;
}

static int64_t map_find(const token_map *m, const char *s, size_t n, size_t *slot) {
  for (size_t i = hash_bytes(s, n) & m->mask;; i = (i + 1) & m->mask) {
    if (slot) *slot = i;
    int64_t id = m->slots[i];
    if (id < 0) return -1;
    const char *t;
    size_t tn;
    vkf_gguf_array_string(m->g, m->tokens, (uint64_t)id, &t, &tn);
    if (tn == n && !memcmp(t, s, n)) return id;
  }
}

static int map_build(token_map *m) {
  size_t cap = 16;
  while (cap < m->tokens->count * 2) cap *= 2;
  m->slots = malloc(cap * sizeof *m->slots);
  if (!m->slots) return 0;
  for (size_t i = 0; i < cap; i++) m->slots[i] = -1;
  m->mask = cap - 1;
  for (uint64_t id = 0; id < m->tokens->count; id++) {
    const char *t;
    size_t n, slot;
    vkf_gguf_array_string(m->g, m->tokens, id, &t, &n);
    map_find(m, t, n, &slot);
    m->slots[slot] = (int64_t)id;
  }
  return 1;
}

typedef struct merge {
  int64_t left, right; /* ids (the last id of each string) */
  int64_t piece;       /* the merged token's first id: the converter's dict order */
  float piece_score, left_score, right_score;
  uint32_t split; /* byte offset of the split, for a total order */
} merge;

/* The converter's order: merged score descending (a stable sort over the tokens in dict order),
 * then, within one token, the halves' scores descending (stable over the split positions). */
static int merge_cmp(const void *pa, const void *pb) {
  const merge *a = pa, *b = pb;
  if (a->piece_score != b->piece_score) return a->piece_score > b->piece_score ? -1 : 1;
  if (a->piece != b->piece) return a->piece < b->piece ? -1 : 1;
  if (a->left_score != b->left_score) return a->left_score > b->left_score ? -1 : 1;
  if (a->right_score != b->right_score) return a->right_score > b->right_score ? -1 : 1;
  return a->split < b->split ? -1 : a->split > b->split;
}

static size_t utf8_len(uint8_t c) {
  return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* Every (left, right) whose concatenation is a token, both halves tokens, split at character
 * boundaries (Python slices code points). */
static vkf_status build_merges(const token_map *m, const vkf_gguf_kv *scores, merge **out,
                               size_t *out_count) {
  size_t cap = 1024, count = 0;
  merge *list = malloc(cap * sizeof *list);
  /* seen[last id of a string]: the string's first id came already (the converter's dict keeps a
   * repeated token once, at its first position, with its last score) */
  uint8_t *seen = calloc(m->tokens->count, 1);
  if (!list || !seen) {
    free(list), free(seen);
    return vkf_gguf_oom(m->g);
  }
  for (uint64_t id = 0; id < m->tokens->count; id++) {
    const char *t;
    size_t n;
    vkf_gguf_array_string(m->g, m->tokens, id, &t, &n);
    int64_t last = map_find(m, t, n, NULL);
    if (seen[last]) continue;
    seen[last] = 1;
    for (size_t at = n ? utf8_len((uint8_t)t[0]) : 0; at < n; at += utf8_len((uint8_t)t[at])) {
      int64_t l = map_find(m, t, at, NULL), r = map_find(m, t + at, n - at, NULL);
      if (l < 0 || r < 0) continue;
      if (count == cap) {
        merge *grown = realloc(list, 2 * cap * sizeof *list);
        if (!grown) {
          free(list), free(seen);
          return vkf_gguf_oom(m->g);
        }
        list = grown, cap *= 2;
      }
      list[count++] = (merge){l,
                              r,
                              (int64_t)id,
                              (float)vkf_gguf_array_float(scores, (uint64_t)last),
                              (float)vkf_gguf_array_float(scores, (uint64_t)l),
                              (float)vkf_gguf_array_float(scores, (uint64_t)r),
                              (uint32_t)at};
    }
  }
  free(seen);
  qsort(list, count, sizeof *list, merge_cmp);
  *out = list;
  *out_count = count;
  return VKF_OK;
}

static cJSON *token_json(const vkf_gguf *g, const vkf_gguf_kv *tokens, int64_t id) {
  const char *s;
  size_t n;
  vkf_gguf_array_string(g, tokens, (uint64_t)id, &s, &n);
  char *t = vkf_gguf_dup_n(s, n);
  cJSON *j = t ? cJSON_CreateString(t) : NULL;
  free(t);
  return j;
}

static vkf_status model_json(const vkf_gguf *g, cJSON *doc, const vkf_gguf_kv *tokens,
                             const vkf_gguf_kv *types, const merge *merges, size_t merge_count) {
  cJSON *model = cJSON_AddObjectToObject(doc, "model");
  cJSON *vocab = model ? cJSON_AddObjectToObject(model, "vocab") : NULL;
  cJSON *list = model ? cJSON_AddArrayToObject(model, "merges") : NULL;
  cJSON *added = cJSON_AddArrayToObject(doc, "added_tokens");
  if (!vocab || !list || !added || !cJSON_AddStringToObject(model, "type", "BPE") ||
      !cJSON_AddBoolToObject(model, "fuse_unk", 1) || !cJSON_AddBoolToObject(model, "byte_fallback", 1))
    return vkf_gguf_oom(g);
  int64_t unk;
  VKF_RETURN_IF_ERROR(vkf_gguf_token_id(g, "tokenizer.ggml.unknown_token_id", tokens->count, &unk));
  cJSON *unk_json = unk >= 0 ? token_json(g, tokens, unk) : cJSON_CreateNull();
  if (!unk_json) return vkf_gguf_oom(g);
  cJSON_AddItemToObject(model, "unk_token", unk_json);
  for (uint64_t i = 0; i < tokens->count; i++) {
    const char *s;
    size_t n;
    vkf_gguf_array_string(g, tokens, i, &s, &n);
    char *t = vkf_gguf_dup_n(s, n);
    if (!t) return vkf_gguf_oom(g);
    if (strlen(t) != n) {
      free(t);
      return vkf_status_make(VKF_STATUS_PARSE, "%s: token %llu holds a NUL byte", vkf_gguf_path(g),
                             (unsigned long long)i);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(vocab, t);
    int ok = cJSON_AddNumberToObject(vocab, t, (double)i) != NULL;
    int64_t type = types ? vkf_gguf_array_int(types, i) : 1;
    if (ok && (type == TOKEN_CONTROL || type == TOKEN_UNKNOWN)) {
      cJSON *a = cJSON_CreateObject();
      ok = a && cJSON_AddItemToArray(added, a) && cJSON_AddNumberToObject(a, "id", (double)i) &&
           cJSON_AddStringToObject(a, "content", t) && cJSON_AddBoolToObject(a, "single_word", 0) &&
           cJSON_AddBoolToObject(a, "lstrip", 0) && cJSON_AddBoolToObject(a, "rstrip", 0) &&
           cJSON_AddBoolToObject(a, "normalized", 0) && cJSON_AddBoolToObject(a, "special", 1);
    }
    free(t);
    if (!ok) return vkf_gguf_oom(g);
  }
  for (size_t i = 0; i < merge_count; i++) {
    cJSON *pair = cJSON_CreateArray();
    cJSON *l = token_json(g, tokens, merges[i].left), *r = token_json(g, tokens, merges[i].right);
    int ok = pair && l && r && cJSON_AddItemToArray(pair, l) && (l = NULL, 1) &&
             cJSON_AddItemToArray(pair, r) && (r = NULL, 1) && cJSON_AddItemToArray(list, pair);
    if (!ok) {
      cJSON_Delete(l), cJSON_Delete(r), cJSON_Delete(pair);
      return vkf_gguf_oom(g);
    }
  }
  return VKF_OK;
}

/* The legacy Llama normalizer and the decoder (transformers' LlamaConverter). */
static vkf_status steps_json(const vkf_gguf *g, cJSON *doc) {
  int prefix = 1;
  VKF_RETURN_IF_ERROR(vkf_gguf_get_bool_or(g, "tokenizer.ggml.add_space_prefix", 1, &prefix));
  const char *norm = prefix ? "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", "
                              "\"prepend\": \"\\u2581\"}, {\"type\": \"Replace\", \"pattern\": "
                              "{\"String\": \" \"}, \"content\": \"\\u2581\"}]}"
                            : "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Replace\", "
                              "\"pattern\": {\"String\": \" \"}, \"content\": \"\\u2581\"}]}";
  const char *dec = prefix ? "{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"ByteFallback\"}, "
                             "{\"type\": \"Fuse\"}, {\"type\": \"Replace\", \"pattern\": "
                             "{\"String\": \"\\u2581\"}, \"content\": \" \"}, {\"type\": \"Strip\", "
                             "\"content\": \" \", \"start\": 1, \"stop\": 0}]}"
                           : "{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"ByteFallback\"}, "
                             "{\"type\": \"Fuse\"}, {\"type\": \"Replace\", \"pattern\": "
                             "{\"String\": \"\\u2581\"}, \"content\": \" \"}]}";
  cJSON *n = cJSON_Parse(norm), *d = cJSON_Parse(dec);
  if (!n || !d) {
    cJSON_Delete(n), cJSON_Delete(d);
    return vkf_gguf_oom(g);
  }
  cJSON_AddItemToObject(doc, "normalizer", n);
  cJSON_AddItemToObject(doc, "decoder", d);
  return VKF_OK;
}

vkf_status vkf_gguf_spm_tokenizer_json(const vkf_gguf *g, cJSON *doc) {
  const char *path = vkf_gguf_path(g);
  const vkf_gguf_kv *tokens, *scores, *types = NULL;
  VKF_RETURN_IF_ERROR(vkf_gguf_get_array(g, "tokenizer.ggml.tokens", VKF_GGUF_STRING, &tokens));
  VKF_RETURN_IF_ERROR(vkf_gguf_get_array(g, "tokenizer.ggml.scores", VKF_GGUF_FLOAT32, &scores));
  if (scores->count != tokens->count)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tokenizer.ggml.scores has %llu entries for %llu "
                           "tokens", path, (unsigned long long)scores->count,
                           (unsigned long long)tokens->count);
  if (vkf_gguf_find_kv(g, "tokenizer.ggml.token_type")) {
    VKF_RETURN_IF_ERROR(vkf_gguf_get_array(g, "tokenizer.ggml.token_type", VKF_GGUF_INT32, &types));
    if (types->count != tokens->count)
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: tokenizer.ggml.token_type has %llu entries for %llu tokens", path,
                             (unsigned long long)types->count, (unsigned long long)tokens->count);
  }
  if (!tokens->count) return vkf_status_make(VKF_STATUS_PARSE, "%s: tokenizer.ggml.tokens is empty", path);
  token_map m = {g, tokens, NULL, 0};
  if (!map_build(&m)) return vkf_gguf_oom(g);
  merge *merges = NULL;
  size_t merge_count = 0;
  vkf_status st = build_merges(&m, scores, &merges, &merge_count);
  free(m.slots);
  if (!st) st = model_json(g, doc, tokens, types, merges, merge_count);
  free(merges);
  if (!st) st = steps_json(g, doc);
  if (!st) st = vkf_gguf_add_template(g, doc, tokens, 1);
  return st;
}
