/* GGUF: every tensor type's dequantisation bit-equal to the gguf package's (tests/models/data/gguf
 * from tools/goldens/make_gguf_goldens.py); the metadata and tensor table of a converted Llama;
 * the JSON files a GGUF stands for; and bad files, each a one-line error naming what is wrong. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/formats/gguf.h"
#include "models/formats/gguf_model.h"
#include "graph/base/quant.h"
#include "models/formats/gguf_quant.h"
#include "tests/test_util.h"

#define VKF_NAME_OF(buf, ...) (snprintf(buf, sizeof buf, __VA_ARGS__), buf)

static char *path_of(const char *rel) {
  const char *root = getenv("VKF_SOURCE_DIR");
  size_t n = strlen(rel) + (root ? strlen(root) : 1) + 2;
  char *p = malloc(n);
  VKF_ASSERT(p);
  snprintf(p, n, "%s/%s", root ? root : ".", rel);
  return p;
}

static vkf_gguf *open_data(const char *rel) {
  char *p = path_of(rel);
  vkf_gguf *g = NULL;
  CHECK_OK(vkf_gguf_open(p, &g));
  free(p);
  return g;
}

static void check_dequantize(void) {
  vkf_gguf *q = open_data("tests/models/data/gguf/quants.gguf");
  vkf_gguf *e = open_data("tests/models/data/gguf/quants_expected.gguf");
  if (!q || !e) {
    vkf_gguf_close(q);
    vkf_gguf_close(e);
    return;
  }
  static const char *const types[] = {"F32",  "F16",  "BF16", "Q4_0", "Q4_1", "Q5_0",
                                      "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K"};
  CHECK_MSG(vkf_gguf_tensor_count(q) == sizeof types / sizeof *types, "%zu tensors",
            vkf_gguf_tensor_count(q));
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    char name[32];
    snprintf(name, sizeof name, "q.%s", types[i]);
    const vkf_gguf_tensor *t = vkf_gguf_find_tensor(q, name), *x = vkf_gguf_find_tensor(e, name);
    CHECK_MSG(t && x, "tensor %s", name);
    if (!t || !x) continue;
    vkf_gguf_type_info info = vkf_gguf_type_info_of(t->type);
    CHECK_MSG(info.name && !strcmp(info.name, types[i]), "%s has type %s", name, info.name);
    CHECK_MSG(t->n_dims == 2 && t->dims[0] == 512 && t->dims[1] == 2 && x->type == VKF_GGUF_F32,
              "%s: %d dims [%lld, %lld]", name, t->n_dims, (long long)t->dims[0],
              (long long)t->dims[1]);
    CHECK_MSG(t->size == (size_t)(1024 / info.block) * info.bytes, "%s: %zu bytes", name, t->size);
    float *got = malloc(1024 * sizeof *got);
    CHECK_OK(vkf_gguf_dequantize(t->type, t->data, 1024, got));
    size_t differ = 0, first = 0;
    for (size_t k = 0; k < 1024; k++) {
      float want;
      memcpy(&want, x->data + 4 * k, 4);
      if (memcmp(&got[k], &want, 4) && !differ++) first = k;
    }
    CHECK_MSG(!differ, "%s: %zu values differ from gguf.quants.dequantize, first [%zu]", name,
              differ, first);
    free(got);
  }
  CHECK_STATUS(vkf_gguf_dequantize(VKF_GGUF_Q2_K, NULL, 256, NULL), VKF_STATUS_UNSUPPORTED,
               "Q2_K");
  vkf_gguf_close(q);
  vkf_gguf_close(e);
}

/* vkformer's quantisers byte-equal to ggml's reference ones (tools/goldens/
 * make_quantize_goldens.py: the gguf package for the legacy types, ggml's C for Q4_K) on rows made
 * to stress them: ties, zero and constant sub-blocks, one sign, outliers. */
static void check_quantize(void) {
  vkf_gguf *g = open_data("tests/models/data/gguf/quantize.gguf");
  if (!g) return;
  const vkf_gguf_tensor *x = vkf_gguf_find_tensor(g, "x");
  CHECK_MSG(x && x->type == VKF_GGUF_F32 && x->dims[0] == 512, "x: [rows, 512] f32");
  static const vkf_quant_format formats[] = {VKF_QUANT_Q8_0, VKF_QUANT_Q4_0, VKF_QUANT_Q4_1,
                                             VKF_QUANT_Q5_0, VKF_QUANT_Q5_1, VKF_QUANT_Q4_K};
  size_t n = x ? (size_t)x->element_count : 0;
  float *values = malloc(n * sizeof *values + 1);
  uint8_t *got = malloc(n * 2 + 1);
  VKF_ASSERT(values && got);
  if (x) memcpy(values, x->data, n * sizeof *values);
  for (size_t f = 0; x && f < sizeof formats / sizeof *formats; f++) {
    vkf_quant_layout l = vkf_quant_layout_of(formats[f]);
    char name[32];
    const vkf_gguf_tensor *want = vkf_gguf_find_tensor(g, VKF_NAME_OF(name, "q.%s", l.name));
    size_t bytes = n / l.block * l.bytes;
    CHECK_MSG(want && want->size == bytes, "%s: %zu bytes", name, want ? want->size : 0);
    CHECK_MSG(vkf_quant_quantize(formats[f], values, n, got), "%s has a quantiser", l.name);
    if (!want || want->size != bytes) continue;
    size_t differ = 0, first = 0;
    for (size_t b = 0; b < n / l.block; b++)
      if (memcmp(got + b * l.bytes, want->data + b * l.bytes, l.bytes) && !differ++) first = b;
    CHECK_MSG(!differ, "%s: %zu of %zu blocks differ from ggml's, first block %zu (row %zu)",
              l.name, differ, n / l.block, first, first * l.block / 512);
  }
  CHECK_MSG(!vkf_quant_quantize(VKF_QUANT_Q6_K, values, 256, got), "no Q6_K quantiser");
  free(values);
  free(got);
  vkf_gguf_close(g);
}

/* The converted tiny Llama: metadata read back, and the config.json it stands for. */
static void check_llama(void) {
  vkf_gguf *g = open_data("tests/models/data/gguf/llama_tiny_q8_0.gguf");
  if (!g) return;
  CHECK_MSG(vkf_gguf_version(g) == 3, "version %u", vkf_gguf_version(g));
  uint64_t heads = 0;
  CHECK_OK(vkf_gguf_get_uint(g, "llama.attention.head_count", 1000, &heads));
  CHECK_MSG(heads == 4, "heads %llu", (unsigned long long)heads);
  const char *arch;
  size_t n;
  CHECK_OK(vkf_gguf_get_string(g, "general.architecture", &arch, &n));
  CHECK_MSG(n == 5 && !memcmp(arch, "llama", 5), "architecture %.*s", (int)n, arch);
  CHECK_STATUS(vkf_gguf_get_string(g, "llama.block_count", &arch, &n), VKF_STATUS_PARSE,
               "\"llama.block_count\" is a UINT32, STRING expected");
  CHECK_STATUS(vkf_gguf_get_uint(g, "llama.block_count", 1, &heads), VKF_STATUS_PARSE,
               "0 to 1 allowed");
  CHECK_STATUS(vkf_gguf_get_uint(g, "no.such.key", 1, &heads), VKF_STATUS_NOT_FOUND, "no.such.key");
  const vkf_gguf_tensor *q = vkf_gguf_find_tensor(g, "blk.1.attn_q.weight");
  CHECK_MSG(q && q->type == VKF_GGUF_Q8_0 && q->dims[0] == 64 && q->dims[1] == 64, "attn_q");
  char *text = NULL;
  size_t size = 0;
  CHECK_OK(vkf_gguf_model_file(g, "config.json", &text, &size));
  cJSON *c = text ? cJSON_Parse(text) : NULL;
  CHECK_MSG(c, "config.json parses");
  static const struct {
    const char *key;
    double value;
  } want[] = {{"hidden_size", 64},        {"num_hidden_layers", 2},
              {"intermediate_size", 96},  {"num_attention_heads", 4},
              {"num_key_value_heads", 2}, {"max_position_embeddings", 64},
              {"vocab_size", 256},        {"rope_theta", 10000},
              {"bos_token_id", 1},        {"eos_token_id", 2}};
  for (size_t i = 0; c && i < sizeof want / sizeof *want; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, want[i].key);
    CHECK_MSG(cJSON_IsNumber(v) && v->valuedouble == want[i].value, "config %s", want[i].key);
  }
  CHECK_MSG(c && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c, "tie_word_embeddings")),
            "output.weight present: not tied");
  cJSON_Delete(c);
  free(text);
  CHECK_STATUS(vkf_gguf_model_file(g, "tokenizer.json", &text, &size), VKF_STATUS_NOT_FOUND,
               "tokenizer.ggml.model");
  CHECK_STATUS(vkf_gguf_model_file(g, "vocab.txt", &text, &size), VKF_STATUS_NOT_FOUND,
               "holds no vocab.txt");
  vkf_checkpoint *ck = NULL;
  CHECK_OK(vkf_gguf_model_checkpoint(g, &ck));
  const vkf_safetensors_info *w = ck ? vkf_checkpoint_find(ck, "model.layers.1.mlp.down_proj.weight")
                                     : NULL;
  /* quantised tensors keep their blocks under Hugging Face's name and shape; reading them
   * dequantises exactly as ggml does */
  const vkf_gguf_tensor *down = vkf_gguf_find_tensor(g, "blk.1.ffn_down.weight");
  CHECK_MSG(w && down && vkf_safetensors_quant_format(w->dtype) == vkf_gguf_quant_format(down->type) &&
                w->rank == 2 && w->shape[0] == 64 && w->shape[1] == 96 &&
                w->data_size == (size_t)down->size && !memcmp(w->data, down->data, w->data_size),
            "down_proj as [64, 96] blocks, the file's bytes");
  float got[64 * 96], ref[64 * 96];
  if (w && ck && down) {
    CHECK_OK(vkf_checkpoint_read_f32(ck, w, 64 * 96, got));
    CHECK_OK(vkf_gguf_dequantize(down->type, down->data, 64 * 96, ref));
    CHECK_MSG(!memcmp(got, ref, sizeof got), "down_proj read as F32 = ggml's dequantisation");
  }
  vkf_checkpoint_close(ck);
  vkf_gguf_close(g);
}

/* ---- a small GGUF writer for the bad files ---- */

typedef struct buf {
  uint8_t data[4096];
  size_t n;
} buf;

static void put(buf *b, const void *p, size_t n) {
  VKF_ASSERT(b->n + n <= sizeof b->data);
  memcpy(b->data + b->n, p, n);
  b->n += n;
}
static void put_u32(buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(buf *b, uint64_t v) { put(b, &v, 8); }
static void put_str(buf *b, const char *s) {
  put_u64(b, strlen(s));
  put(b, s, strlen(s));
}
static void header(buf *b, uint32_t version, uint64_t tensors, uint64_t kvs) {
  b->n = 0;
  put(b, "GGUF", 4);
  put_u32(b, version);
  put_u64(b, tensors);
  put_u64(b, kvs);
}
static void kv_u32(buf *b, const char *key, uint32_t v) {
  put_str(b, key);
  put_u32(b, VKF_GGUF_UINT32);
  put_u32(b, v);
}
static void tensor(buf *b, const char *name, uint32_t n_dims, const uint64_t *dims, uint32_t type,
                   uint64_t offset) {
  put_str(b, name);
  put_u32(b, n_dims);
  for (uint32_t d = 0; d < n_dims; d++) put_u64(b, dims[d]);
  put_u32(b, type);
  put_u64(b, offset);
}
static void pad_data(buf *b, size_t align, size_t bytes) {
  while (b->n % align) b->data[b->n++] = 0;
  VKF_ASSERT(b->n + bytes <= sizeof b->data);
  memset(b->data + b->n, 0, bytes);
  b->n += bytes;
}

static void expect_bad(const buf *b, const char *needle, const char *what) {
  vkf_gguf *g = NULL;
  vkf_status s = vkf_gguf_open_memory(b->data, b->n, "bad.gguf", &g);
  CHECK_MSG(s && !g, "%s: opened", what);
  if (s) {
    const char *m = vkf_status_message(s);
    CHECK_MSG(strstr(m, "bad.gguf") && strstr(m, needle) && !strchr(m, '\n'),
              "%s: message \"%s\" lacks \"%s\"", what, m, needle);
  }
  vkf_status_free(s);
  vkf_gguf_close(g);
}

static void check_bad_files(void) {
  buf b;
  const uint64_t d32[2] = {32, 2}, d33[1] = {33}, d0[1] = {0}, d5[5] = {1, 1, 1, 1, 1};
  /* a good file first: one Q8_0 tensor of 2 blocks */
  header(&b, 3, 1, 1);
  kv_u32(&b, "general.alignment", 32);
  tensor(&b, "t", 2, d32, VKF_GGUF_Q8_0, 0);
  pad_data(&b, 32, 68);
  vkf_gguf *g = NULL;
  CHECK_OK(vkf_gguf_open_memory(b.data, b.n, "good.gguf", &g));
  vkf_gguf_close(g);
  /* every truncation of it */
  buf cut = b;
  for (size_t n = 0; n < b.n; n++) {
    cut.n = n;
    vkf_status s = vkf_gguf_open_memory(cut.data, n, "cut.gguf", &g);
    CHECK_MSG(s && !g && strstr(vkf_status_message(s), "cut.gguf"), "cut at %zu opened", n);
    vkf_status_free(s);
  }
  buf x = b;
  memcpy(x.data, "GGUX", 4);
  expect_bad(&x, "not a GGUF file", "magic");
  header(&b, 1, 0, 0);
  expect_bad(&b, "version 1 is not supported", "v1");
  header(&b, 7, 0, 0);
  expect_bad(&b, "GGUF version 7", "v7");
  header(&b, 0x03000000, 0, 0);
  expect_bad(&b, "big-endian", "byte-swapped");
  header(&b, 3, UINT64_MAX / 2, 0);
  expect_bad(&b, "claims", "huge tensor count");
  header(&b, 3, 0, 1000000);
  expect_bad(&b, "claims", "huge kv count");
  header(&b, 3, 0, 1);
  put_u64(&b, 1u << 30);
  put(&b, "key and more bytes", 18);
  expect_bad(&b, "claims 1073741824 bytes", "lying key length");
  header(&b, 3, 0, 1);
  put_str(&b, "k");
  put_u32(&b, 13);
  put_u32(&b, 0);
  expect_bad(&b, "unknown value type 13", "value type");
  header(&b, 3, 0, 1);
  put_str(&b, "k");
  put_u32(&b, VKF_GGUF_ARRAY);
  put_u32(&b, VKF_GGUF_UINT32);
  put_u64(&b, 1ull << 40);
  put_u32(&b, 0);
  expect_bad(&b, "claims 1099511627776 UINT32 elements", "lying array count");
  header(&b, 3, 0, 1);
  put_str(&b, "k");
  put_u32(&b, VKF_GGUF_ARRAY);
  put_u32(&b, VKF_GGUF_STRING);
  put_u64(&b, 1ull << 40);
  put_u64(&b, 0);
  expect_bad(&b, "claims 1099511627776 strings", "lying string array");
  header(&b, 3, 0, 1);
  put_str(&b, "k");
  put_u32(&b, VKF_GGUF_ARRAY);
  put_u32(&b, VKF_GGUF_ARRAY);
  put_u64(&b, 0);
  expect_bad(&b, "nested", "nested array");
  header(&b, 3, 0, 1);
  put_str(&b, "k");
  put_u32(&b, VKF_GGUF_BOOL);
  put(&b, "\x02", 1);
  expect_bad(&b, "BOOL of value 2", "bool 2");
  header(&b, 3, 0, 2);
  kv_u32(&b, "k", 1);
  kv_u32(&b, "k", 2);
  expect_bad(&b, "\"k\" appears twice", "duplicate key");
  header(&b, 3, 0, 1);
  kv_u32(&b, "general.alignment", 24);
  expect_bad(&b, "not a power of two", "alignment 24");
  header(&b, 3, 1, 0);
  tensor(&b, "t", 5, d5, VKF_GGUF_F32, 0);
  expect_bad(&b, "has 5 dims", "5 dims");
  header(&b, 3, 1, 0);
  tensor(&b, "t", 1, d0, VKF_GGUF_F32, 0);
  expect_bad(&b, "dim 0 is 0", "zero dim");
  header(&b, 3, 1, 0);
  tensor(&b, "t", 1, d32, 4, 0);
  expect_bad(&b, "unknown type 4", "removed type");
  header(&b, 3, 1, 0);
  tensor(&b, "t", 1, d33, VKF_GGUF_Q4_0, 0);
  expect_bad(&b, "not a multiple of Q4_0's block of 32", "partial block");
  header(&b, 3, 1, 0);
  tensor(&b, "t", 2, d32, VKF_GGUF_Q8_0, 32);
  pad_data(&b, 32, 100);
  expect_bad(&b, "has offset 32; 0 expected", "offset");
  header(&b, 3, 1, 0);
  tensor(&b, "t", 2, d32, VKF_GGUF_Q8_0, 0);
  pad_data(&b, 32, 60);
  expect_bad(&b, "runs past the end", "short data");
  header(&b, 3, 2, 0);
  tensor(&b, "t", 1, d32, VKF_GGUF_F32, 0);
  tensor(&b, "t", 1, d32, VKF_GGUF_F32, 128);
  pad_data(&b, 32, 256);
  expect_bad(&b, "tensor \"t\" appears twice", "duplicate tensor");
  char long_name[80];
  memset(long_name, 'n', 64);
  long_name[64] = 0;
  header(&b, 3, 1, 0);
  tensor(&b, long_name, 1, d32, VKF_GGUF_F32, 0);
  expect_bad(&b, "more than 63", "long tensor name");
}

/* What the model layer refuses, naming the file and the entry. */
static void check_model_errors(void) {
  buf b;
  const uint64_t d32[1] = {32};
  header(&b, 3, 1, 1);
  put_str(&b, "general.architecture");
  put_u32(&b, VKF_GGUF_STRING);
  put_str(&b, "mamba");
  tensor(&b, "blk.0.ssm_in.weight", 1, d32, VKF_GGUF_F32, 0);
  pad_data(&b, 32, 128);
  vkf_gguf *g = NULL;
  CHECK_OK(vkf_gguf_open_memory(b.data, b.n, "m.gguf", &g));
  char *text = NULL;
  size_t size;
  CHECK_STATUS(vkf_gguf_model_file(g, "config.json", &text, &size), VKF_STATUS_UNSUPPORTED,
               "general.architecture \"mamba\" is not supported");
  vkf_checkpoint *ck = NULL;
  CHECK_STATUS(vkf_gguf_model_checkpoint(g, &ck), VKF_STATUS_UNSUPPORTED,
               "tensor \"blk.0.ssm_in.weight\" has no place");
  vkf_gguf_close(g);
}

/* A SentencePiece vocabulary whose "ab" appears twice, past the 65th id: the converter's
 * {token: score} dict keeps it once, so the merge a + b is made once (a scan over the first ids
 * only once made it twice); an empty token is no merge. */
static void check_spm_duplicates(void) {
  static buf b;
  enum { FILLERS = 70 };
  const char *head[] = {"<unk>", "a", "b", "ab", ""};
  uint64_t count = 5 + FILLERS + 1;
  header(&b, 3, 0, 3);
  put_str(&b, "tokenizer.ggml.model");
  put_u32(&b, VKF_GGUF_STRING);
  put_str(&b, "llama");
  put_str(&b, "tokenizer.ggml.tokens");
  put_u32(&b, VKF_GGUF_ARRAY);
  put_u32(&b, VKF_GGUF_STRING);
  put_u64(&b, count);
  for (int i = 0; i < FILLERS; i++) { /* first, so "ab" stands past the scan's reach */
    char name[8];
    snprintf(name, sizeof name, "x%d", i);
    put_str(&b, name);
  }
  for (int i = 0; i < 5; i++) put_str(&b, head[i]);
  put_str(&b, "ab");
  put_str(&b, "tokenizer.ggml.scores");
  put_u32(&b, VKF_GGUF_ARRAY);
  put_u32(&b, VKF_GGUF_FLOAT32);
  put_u64(&b, count);
  for (uint64_t i = 0; i < count; i++) {
    float score = -(float)i;
    put(&b, &score, 4);
  }
  vkf_gguf *g = NULL;
  CHECK_OK(vkf_gguf_open_memory(b.data, b.n, "spm.gguf", &g));
  char *text = NULL;
  size_t size = 0;
  if (g) CHECK_OK(vkf_gguf_model_file(g, "tokenizer.json", &text, &size));
  cJSON *doc = text ? cJSON_Parse(text) : NULL;
  const cJSON *merges = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "model"), "merges"), *m;
  int ab = 0, all = 0;
  cJSON_ArrayForEach(m, merges) {
    all++;
    ab += !strcmp(cJSON_GetArrayItem(m, 0)->valuestring, "a") &&
          !strcmp(cJSON_GetArrayItem(m, 1)->valuestring, "b");
  }
  CHECK_MSG(ab == 1 && all >= 1, "the merge a + b %d times (of %d merges)", ab, all);
  cJSON_Delete(doc);
  free(text);
  vkf_gguf_close(g);
}

int main(void) {
  check_dequantize();
  check_quantize();
  check_llama();
  check_bad_files();
  check_model_errors();
  check_spm_duplicates();
  return test_report();
}
