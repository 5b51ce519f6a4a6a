/* models/safetensors: the committed file written by the Python `safetensors` package (values
 * restated from tools/goldens/make_reader_fixtures.py), every rejection case on hand-built bad files, all
 * dtype conversions, and a truncation / byte-flip loop that must never crash. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/half.h"
#include "models/formats/safetensors.h"
#include "tests/test_util.h"

#define FIXTURE "tests/models/data/readers.safetensors"

static char tmp_dir[64];
static char tmp_paths[64][128];
static int tmp_count;

/* Writes bytes into the temp dir and returns the path (valid until the end of the test). */
static const char *write_tmp(const char *name, const void *bytes, size_t size) {
  VKF_ASSERT(tmp_count < 64);
  char *path = tmp_paths[tmp_count++];
  snprintf(path, sizeof tmp_paths[0], "%s/%s", tmp_dir, name);
  FILE *f = fopen(path, "wb");
  VKF_ASSERT(f);
  if (size) VKF_ASSERT(fwrite(bytes, 1, size, f) == size);
  fclose(f);
  return path;
}

/* 8-byte little-endian header length + header + data. */
static uint8_t *build(const char *header, const void *data, size_t data_size, size_t *out_size) {
  size_t n = strlen(header);
  uint8_t *b = malloc(8 + n + data_size + 1);
  VKF_ASSERT(b);
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)n >> (8 * i));
  memcpy(b + 8, header, n);
  if (data_size) memcpy(b + 8 + n, data, data_size);
  *out_size = 8 + n + data_size;
  return b;
}

/* Writes header+data as a file named `name` and opens it with the mmap path. */
static vkf_status open_built(const char *name, const char *header, size_t data_size,
                             vkf_safetensors **out_st) {
  static const uint8_t zeros[256];
  VKF_ASSERT(data_size <= sizeof zeros);
  size_t size;
  uint8_t *b = build(header, zeros, data_size, &size);
  const char *path = write_tmp(name, b, size);
  free(b);
  return vkf_safetensors_open(path, out_st);
}

/* 8 + the header length stored in the fixture's first 8 bytes (little-endian). */
static size_t fixture_data_start(void) {
  uint8_t b[8] = {0};
  FILE *f = fopen(FIXTURE, "rb");
  if (f) {
    if (fread(b, 1, 8, f) != 8) memset(b, 0, sizeof b);
    fclose(f);
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = (n << 8) | b[i];
  return 8 + (size_t)n;
}

static void test_fixture(void) {
  vkf_safetensors *st = NULL;
  CHECK_OK(vkf_safetensors_open(FIXTURE, &st));
  if (!st) return;
  CHECK(strcmp(vkf_safetensors_path(st), FIXTURE) == 0);
  CHECK(vkf_safetensors_count(st) == 8);

  /* Offset order, as the Python writer laid them out; the empty tensor sorts before the scalar
   * that starts at the same offset. */
  static const char *const order[] = {"ids",  "empty",  "scalar",   "vit.embeddings.cls_token",
                                      "mask", "w.bf16", "block.4d", "w.f16"};
  for (size_t i = 0; i < 8 && i < vkf_safetensors_count(st); i++)
    CHECK_MSG(strcmp(vkf_safetensors_at(st, i)->name, order[i]) == 0, "at(%zu) is %s", i,
              vkf_safetensors_at(st, i)->name);
  CHECK(vkf_safetensors_find(st, "__metadata__") == NULL);
  CHECK(vkf_safetensors_find(st, "vit.embeddings") == NULL);

  const vkf_safetensors_info *t = vkf_safetensors_find(st, "vit.embeddings.cls_token");
  CHECK(t && t->dtype == VKF_SAFETENSORS_F32 && t->rank == 3 && t->element_count == 8);
  if (t) {
    CHECK(t->shape[0] == 1 && t->shape[1] == 1 && t->shape[2] == 8 && t->shape[3] == 0);
    CHECK(t->data_size == 32);
    /* The data section starts after the 8-byte length and the header; cls_token at byte 44. */
    CHECK(t->file_offset == fixture_data_start() + 44);
    float v[8];
    CHECK_OK(vkf_safetensors_read_f32(st, t, 8, v));
    for (int i = 0; i < 8; i++) CHECK(v[i] == i * 0.5f - 2.0f);
    uint16_t h[8];
    CHECK_OK(vkf_safetensors_read_f16(st, t, 8, h));
    for (int i = 0; i < 8; i++) CHECK(h[i] == vkf_float_to_half(i * 0.5f - 2.0f));
    float small[7];
    CHECK_STATUS(vkf_safetensors_read_f32(st, t, 7, small), VKF_STATUS_INVALID_ARGUMENT,
                 "\"vit.embeddings.cls_token\" has 8 elements");
  }

  t = vkf_safetensors_find(st, "w.f16");
  CHECK(t && t->dtype == VKF_SAFETENSORS_F16 && t->rank == 2 && t->shape[0] == 3 &&
        t->shape[1] == 4);
  if (t) {
    float v[12];
    CHECK_OK(vkf_safetensors_read_f32(st, t, 12, v));
    for (int i = 0; i < 10; i++) CHECK(v[i] == (i - 5) * 0.375f);
    CHECK(v[10] == 65504.0f);
    CHECK(v[11] == 0x1p-24f);
    uint16_t h[12];
    CHECK_OK(vkf_safetensors_read_f16(st, t, 12, h));
    CHECK(memcmp(h, t->data, sizeof h) == 0);
    CHECK(h[10] == 0x7bff && h[11] == 0x0001);
  }

  t = vkf_safetensors_find(st, "w.bf16");
  CHECK(t && t->dtype == VKF_SAFETENSORS_BF16 && t->rank == 2 && t->element_count == 6);
  if (t) {
    static const float want[6] = {1.0f, -2.5f, 0.15625f, 256.0f, -0.0078125f, 196608.0f};
    float v[6];
    CHECK_OK(vkf_safetensors_read_f32(st, t, 6, v));
    for (int i = 0; i < 6; i++) CHECK(v[i] == want[i]);
    uint16_t h[6];
    CHECK_OK(vkf_safetensors_read_f16(st, t, 6, h));
    CHECK(h[0] == 0x3c00 && h[5] == 0x7c00); /* 196608 overflows half */
  }

  t = vkf_safetensors_find(st, "block.4d");
  CHECK(t && t->rank == 4 && t->shape[0] == 1 && t->shape[1] == 2 && t->shape[2] == 2 &&
        t->shape[3] == 3);
  if (t) {
    float v[12];
    CHECK_OK(vkf_safetensors_read_f32(st, t, 12, v));
    for (int i = 0; i < 12; i++) CHECK(v[i] == (float)i);
  }

  t = vkf_safetensors_find(st, "ids");
  CHECK(t && t->dtype == VKF_SAFETENSORS_I64 && t->data_size == 40);
  if (t) {
    float v[5];
    CHECK_OK(vkf_safetensors_read_f32(st, t, 5, v));
    CHECK(v[0] == 0.0f && v[1] == 1.0f && v[2] == -7.0f && v[3] == 123456.0f &&
          v[4] == 1099511627776.0f);
  }

  t = vkf_safetensors_find(st, "mask");
  CHECK(t && t->dtype == VKF_SAFETENSORS_I32);
  if (t) {
    float v[4];
    CHECK_OK(vkf_safetensors_read_f32(st, t, 4, v));
    CHECK(v[0] == 1.0f && v[1] == 0.0f && v[2] == -1.0f && v[3] == 2147483648.0f);
  }

  t = vkf_safetensors_find(st, "scalar");
  CHECK(t && t->rank == 0 && t->element_count == 1 && t->data_size == 4);
  if (t) {
    float v = 0;
    CHECK_OK(vkf_safetensors_read_f32(st, t, 1, &v));
    CHECK(v == 42.5f);
  }

  t = vkf_safetensors_find(st, "empty");
  CHECK(t && t->rank == 2 && t->shape[0] == 0 && t->shape[1] == 4 && t->element_count == 0 &&
        t->data_size == 0);
  if (t) CHECK_OK(vkf_safetensors_read_f32(st, t, 0, NULL));

  /* expect(): the call model builders make. */
  const vkf_safetensors_info *info = NULL;
  CHECK_OK(vkf_safetensors_expect(st, "vit.embeddings.cls_token", 3, (int64_t[]){1, 1, 8}, &info));
  CHECK(info && strcmp(info->name, "vit.embeddings.cls_token") == 0);
  CHECK_OK(vkf_safetensors_expect(st, "block.4d", 4, (int64_t[]){1, -1, 2, -1}, &info));
  CHECK_OK(vkf_safetensors_expect(st, "scalar", 0, NULL, &info));
  CHECK_STATUS(
      vkf_safetensors_expect(st, "vit.embeddings.cls_token", 3, (int64_t[]){1, 1, 768}, &info),
      VKF_STATUS_SHAPE,
      "tensor \"vit.embeddings.cls_token\" has shape [1,1,8], expected [1,1,768] in "
      "tests/models/data/readers.safetensors");
  CHECK(info == NULL);
  CHECK_STATUS(vkf_safetensors_expect(st, "mask", 1, (int64_t[]){4}, &info), VKF_STATUS_SHAPE,
               "tensor \"mask\" has shape [2,2], expected [4]");
  CHECK_STATUS(vkf_safetensors_expect(st, "scalar", 1, (int64_t[]){1}, &info), VKF_STATUS_SHAPE,
               "has shape [], expected [1]");
  CHECK_STATUS(
      vkf_safetensors_expect(st, "vit.pooler.dense.weight", 2, (int64_t[]){8, 8}, &info),
      VKF_STATUS_NOT_FOUND,
      "tensor \"vit.pooler.dense.weight\" not found in tests/models/data/readers.safetensors");
  CHECK_STATUS(vkf_safetensors_get(st, "nope", &info), VKF_STATUS_NOT_FOUND,
               "tensor \"nope\" not found in " FIXTURE);
  CHECK_OK(vkf_safetensors_get(st, "mask", &info));
  CHECK(info && info->dtype == VKF_SAFETENSORS_I32);
  vkf_safetensors_close(st);
}

/* Every rejection the reader promises, each naming the file (and the tensor where there is one). */
static void test_bad_files(void) {
  vkf_safetensors *st = (vkf_safetensors *)&st; /* must be reset to NULL on failure */
  char missing[128];
  snprintf(missing, sizeof missing, "%s/missing.safetensors", tmp_dir);
  CHECK_STATUS(vkf_safetensors_open(missing, &st), VKF_STATUS_NOT_FOUND, "missing.safetensors");
  CHECK(st == NULL);
  CHECK_STATUS(vkf_safetensors_open(tmp_dir, &st), VKF_STATUS_IO, "not a regular file");

  const char *p = write_tmp("empty.safetensors", NULL, 0);
  CHECK_STATUS(vkf_safetensors_open(p, &st), VKF_STATUS_PARSE, "empty.safetensors: file is empty");
  p = write_tmp("short.safetensors", "\x10\0\0\0\0", 5);
  CHECK_STATUS(vkf_safetensors_open(p, &st), VKF_STATUS_PARSE,
               "short.safetensors: truncated: 5 bytes");
  p = write_tmp("hlen.safetensors", "\x40\0\0\0\0\0\0\0{}", 10);
  CHECK_STATUS(vkf_safetensors_open(p, &st), VKF_STATUS_PARSE,
               "hlen.safetensors: header length 64 runs past the end of the file (10 bytes)");
  p = write_tmp("hbig.safetensors", "\xff\xff\xff\xff\xff\xff\xff\xff{}", 10);
  CHECK_STATUS(vkf_safetensors_open(p, &st), VKF_STATUS_PARSE, "hbig.safetensors: header length");

  CHECK_STATUS(open_built("json.safetensors", "{\"a\": {\"dtype\": \"F32\",", 0, &st),
               VKF_STATUS_PARSE, "json.safetensors: header is not valid JSON");
  CHECK_STATUS(open_built("array.safetensors", "[1, 2]", 0, &st), VKF_STATUS_PARSE,
               "array.safetensors: header is JSON but not an object");
  CHECK_STATUS(open_built("trail.safetensors", "{} x", 0, &st), VKF_STATUS_PARSE,
               "trail.safetensors: header has bytes after its JSON object");
  CHECK_STATUS(open_built("nothdr.safetensors", "", 0, &st), VKF_STATUS_PARSE,
               "nothdr.safetensors: header is not valid JSON");

  CHECK_STATUS(
      open_built("order.safetensors",
                 "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 8, &st),
      VKF_STATUS_PARSE, "order.safetensors: tensor \"w\": data_offsets [8, 4] begin after end");
  CHECK_STATUS(
      open_built("past.safetensors",
                 "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 12, &st),
      VKF_STATUS_PARSE,
      "past.safetensors: tensor \"w\": data_offsets [0, 16] past the end of the data "
      "section (12 bytes)");
  CHECK_STATUS(
      open_built("huge.safetensors",
                 "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[1e300,1e300]}}", 4,
                 &st),
      VKF_STATUS_PARSE, "tensor \"w\": data_offsets are not non-negative integers");
  CHECK_STATUS(
      open_built("neg.safetensors",
                 "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4, &st),
      VKF_STATUS_PARSE, "neg.safetensors: tensor \"w\": data_offsets");
  CHECK_STATUS(
      open_built("frac.safetensors",
                 "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0.5,4.5]}}", 8, &st),
      VKF_STATUS_PARSE, "tensor \"w\": data_offsets are not");
  CHECK_STATUS(
      open_built("three.safetensors",
                 "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8, &st),
      VKF_STATUS_PARSE, "tensor \"w\": \"data_offsets\" must be an array of 2");
  CHECK_STATUS(open_built("overlap.safetensors",
                          "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                          "\"b\":{\"dtype\":\"F16\",\"shape\":[8],\"data_offsets\":[8,24]}}",
                          24, &st),
               VKF_STATUS_PARSE,
               "overlap.safetensors: tensors \"a\" [0, 16) and \"b\" [8, 24) overlap");
  /* A tensor wholly inside an earlier, longer one overlaps too (not just its neighbour). */
  CHECK_STATUS(open_built("inside.safetensors",
                          "{\"a\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[0,32]},"
                          "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
                          "\"c\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[20,24]}}",
                          32, &st),
               VKF_STATUS_PARSE, "tensors \"a\" [0, 32) and \"b\" [4, 8) overlap");
  CHECK_STATUS(open_built("same.safetensors",
                          "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                          "\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                          8, &st),
               VKF_STATUS_PARSE, "overlap");
  CHECK_STATUS(
      open_built("size.safetensors",
                 "{\"w\":{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,16]}}", 16, &st),
      VKF_STATUS_PARSE,
      "size.safetensors: tensor \"w\": 16 data bytes but shape [2,3] of F16 needs 12");
  CHECK_STATUS(
      open_built("dtype.safetensors",
                 "{\"w\":{\"dtype\":\"F12\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2, &st),
      VKF_STATUS_PARSE, "dtype.safetensors: tensor \"w\": unknown dtype \"F12\"");
  /* ggml's block dtypes exist only in images vkformer makes in memory from a GGUF: a file naming
   * one is refused like any unknown dtype */
  CHECK_STATUS(
      open_built("ggml.safetensors",
                 "{\"w\":{\"dtype\":\"GGML_Q4_0\",\"shape\":[1,32],\"data_offsets\":[0,18]}}",
                 18, &st),
      VKF_STATUS_PARSE, "ggml.safetensors: tensor \"w\": unknown dtype \"GGML_Q4_0\"");
  CHECK_STATUS(
      open_built("nodtype.safetensors", "{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, &st),
      VKF_STATUS_PARSE, "tensor \"w\": missing or non-string \"dtype\"");
  CHECK_STATUS(open_built("noshape.safetensors",
                          "{\"w\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,4]}}", 4, &st),
               VKF_STATUS_PARSE, "tensor \"w\": missing or non-array \"shape\"");
  CHECK_STATUS(
      open_built("negdim.safetensors",
                 "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,-1],\"data_offsets\":[0,4]}}", 4, &st),
      VKF_STATUS_PARSE, "tensor \"w\": shape[1] is not a non-negative integer");
  CHECK_STATUS(open_built("bigdim.safetensors",
                          "{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4],"
                          "\"data_offsets\":[0,4]}}",
                          4, &st),
               VKF_STATUS_PARSE, "tensor \"w\": shape has too many elements");
  CHECK_STATUS(open_built("notobj.safetensors", "{\"w\": 3}", 0, &st), VKF_STATUS_PARSE,
               "tensor \"w\": header entry is not an object");
  CHECK_STATUS(open_built("dup.safetensors",
                          "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                          "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                          8, &st),
               VKF_STATUS_PARSE, "dup.safetensors: duplicate tensor name \"w\"");
  CHECK_STATUS(open_built("rank9.safetensors",
                          "{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],"
                          "\"data_offsets\":[0,4]}}",
                          4, &st),
               VKF_STATUS_UNSUPPORTED, "rank9.safetensors: tensor \"w\": rank 9 exceeds");
  CHECK(st == NULL);
}

/* Files that are odd but valid. */
static void test_edge_files(void) {
  vkf_safetensors *st = NULL;
  CHECK_OK(open_built(
      "rank8.safetensors",
      "{\"w\":{\"dtype\":\"F32\",\"shape\":[1,2,1,1,1,1,1,3],\"data_offsets\":[0,24]}}", 24, &st));
  if (st) {
    const vkf_safetensors_info *t = vkf_safetensors_find(st, "w");
    CHECK(t && t->rank == 8 && t->shape[1] == 2 && t->shape[7] == 3 && t->element_count == 6);
    vkf_safetensors_close(st);
  }
  /* Only metadata: zero tensors. Writers pad the header with spaces. */
  CHECK_OK(open_built("meta.safetensors", "{\"__metadata__\":{\"format\":\"pt\"}}    ", 0, &st));
  if (st) {
    CHECK(vkf_safetensors_count(st) == 0);
    CHECK(vkf_safetensors_find(st, "__metadata__") == NULL);
    vkf_safetensors_close(st);
  }
  /* Empty tensors share no bytes, so one inside another's range is fine; F8 records but does
   * not convert. */
  CHECK_OK(open_built("zero.safetensors",
                      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                      "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
                      "\"f8\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[8,10]}}",
                      10, &st));
  if (st) {
    const vkf_safetensors_info *t = vkf_safetensors_find(st, "f8");
    CHECK(t && t->dtype == VKF_SAFETENSORS_F8_E4M3 && t->data_size == 2);
    float v[2];
    if (t)
      CHECK_STATUS(vkf_safetensors_read_f32(st, t, 2, v), VKF_STATUS_UNSUPPORTED,
                   "zero.safetensors: tensor \"f8\": no conversion from F8_E4M3 to F32");
    vkf_safetensors_close(st);
  }
  vkf_safetensors_close(NULL);
}

static void put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Every integer and float dtype converts to f32 with the right sign and width. */
static void test_conversions(void) {
  uint8_t data[64] = {0};
  put_le(data + 0, 0x01, 1);                      /* BOOL [2] = {1, 0} */
  put_le(data + 2, 250, 1);                       /* U8 = 250 */
  put_le(data + 3, 0x9c, 1);                      /* I8 = -100 */
  put_le(data + 4, 65535, 2);                     /* U16 */
  put_le(data + 6, (uint16_t)-30000, 2);          /* I16 */
  put_le(data + 8, 4000000000u, 4);               /* U32 */
  put_le(data + 12, (uint32_t)-123456, 4);        /* I32 */
  put_le(data + 16, 1ull << 50, 8);               /* U64 */
  put_le(data + 24, (uint64_t) - (1ll << 40), 8); /* I64 */
  double d = -1.0 / 3.0;
  uint64_t db;
  memcpy(&db, &d, 8);
  put_le(data + 32, db, 8);     /* F64 */
  put_le(data + 40, 0x3555, 2); /* F16 0.333251953125 */
  put_le(data + 42, 0xbfc0, 2); /* BF16 -1.5 */
  float f = 3.25f;
  uint32_t fb;
  memcpy(&fb, &f, 4);
  put_le(data + 44, fb, 4); /* F32 */
  const char *header =
      "{\"bool\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]},"
      "\"u8\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[2,3]},"
      "\"i8\":{\"dtype\":\"I8\",\"shape\":[],\"data_offsets\":[3,4]},"
      "\"u16\":{\"dtype\":\"U16\",\"shape\":[],\"data_offsets\":[4,6]},"
      "\"i16\":{\"dtype\":\"I16\",\"shape\":[],\"data_offsets\":[6,8]},"
      "\"u32\":{\"dtype\":\"U32\",\"shape\":[],\"data_offsets\":[8,12]},"
      "\"i32\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[12,16]},"
      "\"u64\":{\"dtype\":\"U64\",\"shape\":[],\"data_offsets\":[16,24]},"
      "\"i64\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[24,32]},"
      "\"f64\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[32,40]},"
      "\"f16\":{\"dtype\":\"F16\",\"shape\":[],\"data_offsets\":[40,42]},"
      "\"bf16\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[42,44]},"
      "\"f32\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[44,48]}}";
  /* Pad the header so the data section starts at an odd file offset: every multi-byte tensor is
   * then misaligned, and reads must not assume alignment (UBSan flags a misaligned load). */
  char padded[2048];
  snprintf(padded, sizeof padded, "%s%s", header, (8 + strlen(header)) % 2 ? "" : " ");
  size_t size;
  uint8_t *bytes = build(padded, data, 48, &size);
  vkf_safetensors *st = NULL;
  CHECK_OK(vkf_safetensors_open_memory(bytes, size, "conv.safetensors", &st));
  if (st) {
    static const struct {
      const char *name;
      float want;
    } cases[] = {{"u8", 250.0f},           {"i8", -100.0f},        {"u16", 65535.0f},
                 {"i16", -30000.0f},       {"u32", 4000000000.0f}, {"i32", -123456.0f},
                 {"u64", 0x1p50f},         {"i64", -0x1p40f},      {"f64", (float)(-1.0 / 3.0)},
                 {"f16", 0.333251953125f}, {"bf16", -1.5f},        {"f32", 3.25f}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      const vkf_safetensors_info *t = vkf_safetensors_find(st, cases[i].name);
      float v = -999.0f;
      CHECK_MSG(t != NULL, "%s missing", cases[i].name);
      if (!t) continue;
      if (vkf_safetensors_dtype_size(t->dtype) > 1) CHECK(t->file_offset % 2 == 1);
      CHECK_OK(vkf_safetensors_read_f32(st, t, 1, &v));
      CHECK_MSG(v == cases[i].want, "%s: got %.9g want %.9g", cases[i].name, v, cases[i].want);
      uint16_t h = 0;
      CHECK_OK(vkf_safetensors_read_f16(st, t, 1, &h));
      CHECK_MSG(h == vkf_float_to_half(cases[i].want), "%s: f16 0x%04x", cases[i].name, h);
    }
    const vkf_safetensors_info *t = vkf_safetensors_find(st, "bool");
    float b[2] = {-1, -1};
    if (t) CHECK_OK(vkf_safetensors_read_f32(st, t, 2, b));
    CHECK(b[0] == 1.0f && b[1] == 0.0f);
    CHECK(strcmp(vkf_safetensors_dtype_name(VKF_SAFETENSORS_BF16), "BF16") == 0);
    CHECK(vkf_safetensors_dtype_size(VKF_SAFETENSORS_I64) == 8);
    vkf_safetensors_close(st);
  }
  free(bytes);
}

static uint8_t *read_whole(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *out_size = (size_t)n;
  return b;
}

/* Opens an exact-size heap copy (so ASan sees any read past the end) and, when it opens, reads
 * every tensor through both conversions. Returns 1 when the copy opened. */
static int open_and_read_all(const uint8_t *bytes, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  VKF_ASSERT(copy);
  if (size) memcpy(copy, bytes, size);
  vkf_safetensors *st = NULL;
  vkf_status s = vkf_safetensors_open_memory(copy, size, "fuzz.safetensors", &st);
  int opened = s == VKF_OK;
  if (!opened) {
    CHECK(st == NULL && strstr(vkf_status_message(s), "fuzz.safetensors") != NULL);
    vkf_status_free(s);
  }
  for (size_t i = 0; st && i < vkf_safetensors_count(st); i++) {
    const vkf_safetensors_info *t = vkf_safetensors_at(st, i);
    CHECK(t->file_offset + t->data_size <= size);
    size_t n = (size_t)t->element_count;
    if (n > (1u << 20)) continue; /* a flipped shape digit can only shrink within the file */
    float *f = malloc((n ? n : 1) * sizeof *f);
    uint16_t *h = malloc((n ? n : 1) * sizeof *h);
    vkf_status_free(vkf_safetensors_read_f32(st, t, n, f));
    vkf_status_free(vkf_safetensors_read_f16(st, t, n, h));
    free(f);
    free(h);
  }
  vkf_safetensors_close(st);
  free(copy);
  return opened;
}

static void test_fuzz(void) {
  size_t size = 0;
  uint8_t *bytes = read_whole(FIXTURE, &size);
  CHECK(bytes != NULL && size > 8);
  if (!bytes) return;
  CHECK(open_and_read_all(bytes, size) == 1);
  /* Every strict prefix lacks part of the last tensor, so none may open. */
  int opened = 0;
  for (size_t len = 0; len < size; len++) opened += open_and_read_all(bytes, len);
  CHECK_MSG(opened == 0, "%d truncated copies opened", opened);

  /* Flip bits in the length and the header. Some flips still give a valid file (a space turned
   * into a tab, a digit in a name); the check is that nothing crashes or reads out of bounds. */
  static const uint8_t masks[] = {0x01, 0x02, 0x04, 0x10, 0x20, 0x40, 0x80, 0xff};
  uint8_t *mutated = malloc(size);
  VKF_ASSERT(mutated);
  size_t header_end = fixture_data_start();
  CHECK(header_end > 8 && header_end < size);
  int mutants = 0;
  for (size_t at = 0; at < header_end; at++) {
    for (size_t m = 0; m < sizeof masks; m++) {
      memcpy(mutated, bytes, size);
      mutated[at] ^= masks[m];
      open_and_read_all(mutated, size);
      mutants++;
    }
  }
  /* Digits replaced by other digits reach the offset and shape checks rather than the parser. */
  for (size_t at = 8; at < header_end; at++) {
    if (bytes[at] < '0' || bytes[at] > '9') continue;
    for (char dgt = '0'; dgt <= '9'; dgt++) {
      memcpy(mutated, bytes, size);
      mutated[at] = (uint8_t)dgt;
      open_and_read_all(mutated, size);
      mutants++;
    }
  }
  CHECK(mutants > 5000);
  free(mutated);

  /* The mmap path on truncated files. */
  static const size_t cuts[] = {1, 7, 8, 9, 300, 591, 592, 593, 700, 743};
  for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
    if (cuts[i] >= size) continue;
    const char *p = write_tmp("cut.safetensors", bytes, cuts[i]);
    tmp_count--; /* same name each time */
    vkf_safetensors *st = NULL;
    vkf_status s = vkf_safetensors_open(p, &st);
    CHECK_MSG(vkf_status_code_of(s) == VKF_STATUS_PARSE && st == NULL, "cut at %zu: %s", cuts[i],
              vkf_status_message(s));
    CHECK(strstr(vkf_status_message(s), "cut.safetensors") != NULL);
    vkf_status_free(s);
  }
  free(bytes);
}

int main(void) {
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/vkf_test_safetensors_XXXXXX");
  if (!mkdtemp(tmp_dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_fixture();
  test_bad_files();
  test_edge_files();
  test_conversions();
  test_fuzz();
  for (int i = 0; i < tmp_count; i++) unlink(tmp_paths[i]);
  char cut[128];
  snprintf(cut, sizeof cut, "%s/cut.safetensors", tmp_dir);
  unlink(cut);
  rmdir(tmp_dir);
  return test_report();
}
