/* models/npy: files written by NumPy (tools/goldens/make_reader_fixtures.py), writer round trips, every
 * rejection case, and a truncation / byte-flip loop that must never crash. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/half.h"
#include "models/formats/npy.h"
#include "tests/test_util.h"

#define DATA "tests/models/data/"

static char tmp_dir[64];

static const char *tmp_path(const char *name) {
  static char paths[8][160];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, sizeof paths[0], "%s/%s", tmp_dir, name);
  return p;
}

static const char *write_tmp(const char *name, const void *bytes, size_t size) {
  const char *path = tmp_path(name);
  FILE *f = fopen(path, "wb");
  VKF_ASSERT(f);
  if (size) VKF_ASSERT(fwrite(bytes, 1, size, f) == size);
  fclose(f);
  return path;
}

/* A v1.0 file with a hand-written header dict (padded like NumPy) and `data_size` bytes. */
static const char *write_npy_text(const char *name, const char *dict, size_t data_size) {
  uint8_t buf[512] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  size_t n = strlen(dict), total = (10 + n + 1 + 63) / 64 * 64, hlen = total - 10;
  VKF_ASSERT(total + data_size <= sizeof buf);
  buf[8] = (uint8_t)hlen;
  buf[9] = (uint8_t)(hlen >> 8);
  memcpy(buf + 10, dict, n);
  memset(buf + 10 + n, ' ', hlen - n - 1);
  buf[total - 1] = '\n';
  for (size_t i = 0; i < data_size; i++) buf[total + i] = (uint8_t)i;
  return write_tmp(name, buf, total + data_size);
}

static void test_numpy_files(void) {
  vkf_npy_array a;
  CHECK_OK(vkf_npy_load(DATA "readers_f32.npy", &a));
  CHECK(a.dtype == VKF_NPY_F32 && a.rank == 3 && a.shape[0] == 2 && a.shape[1] == 3 &&
        a.shape[2] == 4 && a.shape[3] == 0 && a.element_count == 24 && a.data_size == 96);
  if (a.data) {
    const float *v = a.data;
    for (int i = 0; i < 24; i++) CHECK(v[i] == i * 0.5f - 3.0f);
  }
  vkf_npy_array_release(&a);
  CHECK(a.data == NULL && a.element_count == 0);

  CHECK_OK(vkf_npy_load(DATA "readers_f16.npy", &a));
  CHECK(a.dtype == VKF_NPY_F16 && a.rank == 1 && a.shape[0] == 5 && a.data_size == 10);
  if (a.data) {
    const uint16_t *h = a.data;
    CHECK(h[0] == 0x3c00 && h[1] == 0x8000 && h[2] == 0x7bff && h[3] == 0x0001 && h[4] == 0x3555);
    float f[5];
    CHECK_OK(vkf_npy_array_to_f32(&a, 5, f));
    CHECK(f[0] == 1.0f && f[2] == 65504.0f && f[3] == 0x1p-24f && f[4] == 0.333251953125f);
    CHECK_STATUS(vkf_npy_array_to_f32(&a, 4, f), VKF_STATUS_INVALID_ARGUMENT, "5 elements");
  }
  vkf_npy_array_release(&a);

  CHECK_OK(vkf_npy_load(DATA "readers_i32.npy", &a));
  CHECK(a.dtype == VKF_NPY_I32 && a.rank == 2 && a.shape[0] == 3 && a.shape[1] == 2);
  if (a.data) {
    const int32_t *v = a.data;
    CHECK(v[0] == 1 && v[1] == -2 && v[2] == INT32_MAX && v[3] == INT32_MIN && v[4] == 0 &&
          v[5] == 7);
    float f[6];
    CHECK_OK(vkf_npy_array_to_f32(&a, 6, f));
    CHECK(f[1] == -2.0f && f[5] == 7.0f);
  }
  vkf_npy_array_release(&a);

  CHECK_OK(vkf_npy_load(DATA "readers_scalar.npy", &a));
  CHECK(a.dtype == VKF_NPY_F32 && a.rank == 0 && a.element_count == 1);
  if (a.data) CHECK(*(const float *)a.data == 7.25f);
  vkf_npy_array_release(&a);

  CHECK_OK(vkf_npy_load(DATA "readers_v2.npy", &a)); /* format version 2.0 */
  CHECK(a.dtype == VKF_NPY_I32 && a.rank == 4 && a.shape[0] == 1 && a.shape[1] == 2 &&
        a.shape[2] == 3 && a.shape[3] == 1);
  if (a.data)
    for (int i = 0; i < 6; i++) CHECK(((const int32_t *)a.data)[i] == i);
  vkf_npy_array_release(&a);

  /* numpy's default float64: read as f32 (vkf forward's inputs), each value rounded */
  CHECK_OK(vkf_npy_load(DATA "readers_f64.npy", &a));
  CHECK(a.dtype == VKF_NPY_F32 && a.rank == 1 && a.element_count == 3 && a.data_size == 12);
  if (a.data) CHECK(((const float *)a.data)[0] == 0.0f && ((const float *)a.data)[2] == 2.0f);
  vkf_npy_array_release(&a);
  CHECK_STATUS(vkf_npy_load(DATA "readers_fortran.npy", &a), VKF_STATUS_UNSUPPORTED,
               "readers_fortran.npy: fortran_order True is not supported");
}

static void check_round_trip(vkf_npy_dtype dtype, int rank, const int64_t *shape, const void *data,
                             size_t data_size) {
  const char *p = tmp_path("rt.npy");
  CHECK_OK(vkf_npy_save(p, dtype, rank, shape, data));
  vkf_npy_array a;
  CHECK_OK(vkf_npy_load(p, &a));
  CHECK(a.dtype == dtype && a.rank == rank && a.data_size == data_size);
  for (int i = 0; i < rank && i == a.rank; i++) CHECK(a.shape[i] == shape[i]);
  if (a.data && a.data_size == data_size && data_size) CHECK(memcmp(a.data, data, data_size) == 0);
  vkf_npy_array_release(&a);
  /* NumPy's layout: the data starts on a 64-byte boundary after a '\n'-terminated header. */
  FILE *f = fopen(p, "rb");
  uint8_t head[10] = {0};
  long size = -1;
  if (f) {
    CHECK(fread(head, 1, 10, f) == 10);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fclose(f);
  }
  size_t data_start = 10 + (size_t)(head[8] | head[9] << 8);
  CHECK(head[6] == 1 && head[7] == 0 && data_start % 64 == 0);
  CHECK(size >= 0 && (size_t)size == data_start + data_size);
}

static void test_round_trips(void) {
  float f[6] = {1.5f, -2.0f, 0.0f, 3.0e38f, -1e-30f, 0.1f};
  check_round_trip(VKF_NPY_F32, 2, (int64_t[]){2, 3}, f, sizeof f);
  uint16_t h[5];
  for (int i = 0; i < 5; i++) h[i] = vkf_float_to_half(f[i]);
  check_round_trip(VKF_NPY_F16, 1, (int64_t[]){5}, h, sizeof h);
  int32_t v[16];
  for (int i = 0; i < 16; i++) v[i] = i * 1000003 - 7;
  check_round_trip(VKF_NPY_I32, 4, (int64_t[]){2, 2, 2, 2}, v, sizeof v);
  int64_t w[6] = {0, 1, -1, 30521, INT64_MAX, INT64_MIN};
  check_round_trip(VKF_NPY_I64, 2, (int64_t[]){3, 2}, w, sizeof w);
  check_round_trip(VKF_NPY_F32, 0, NULL, f, 4);
  check_round_trip(VKF_NPY_I32, 2, (int64_t[]){0, 3}, NULL, 0);
  check_round_trip(VKF_NPY_F32, 1, (int64_t[]){1}, f, 4); /* (1,) needs its trailing comma */
  char bad[160];
  snprintf(bad, sizeof bad, "%s/no/such/dir/out.npy", tmp_dir);
  CHECK_STATUS(vkf_npy_save(bad, VKF_NPY_F32, 1, (int64_t[]){1}, f), VKF_STATUS_IO,
               "no/such/dir/out.npy: cannot create");
}

static void test_bad_files(void) {
  vkf_npy_array a;
  char missing[128];
  snprintf(missing, sizeof missing, "%s/missing.npy", tmp_dir);
  CHECK_STATUS(vkf_npy_load(missing, &a), VKF_STATUS_NOT_FOUND, "missing.npy");
  const char *p = write_tmp("magic.npy", "\x93NUMPX\x01\x00\x10\x00{}", 12);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "magic.npy: not a .npy file");
  p = write_tmp("tiny.npy", "\x93NUM", 4);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "tiny.npy: not a .npy file");
  p = write_tmp("empty.npy", NULL, 0);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "empty.npy: not a .npy file");
  p = write_tmp("version.npy", "\x93NUMPY\x09\x00\x10\x00{}", 12);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_UNSUPPORTED, "version.npy: .npy format version 9.0");
  p = write_tmp("hlen.npy", "\x93NUMPY\x01\x00\xff\x00{}", 12);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "hlen.npy: truncated: header of 255 bytes");
  /* A directory, a FIFO and a sparse file past the bound are refused before any allocation. */
  p = tmp_path("dir.npy");
  VKF_ASSERT(mkdir(p, 0700) == 0);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_IO, "dir.npy: is a directory, not a file");
  rmdir(p);
  p = tmp_path("fifo.npy");
  VKF_ASSERT(mkfifo(p, 0600) == 0);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_IO, "fifo.npy: not a regular file");
  unlink(p);
  p = write_tmp("huge.npy", NULL, 0);
  VKF_ASSERT(truncate(p, (off_t)VKF_NPY_MAX_FILE_SIZE + 1) == 0);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_UNSUPPORTED,
               "huge.npy: 4294967297 bytes, more than a .npy file may have");
  unlink(p);

  const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  p = write_npy_text("short.npy", ok, 23);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE,
               "short.npy: truncated: data is 23 bytes but the shape needs 24");
  p = write_npy_text("long.npy", ok, 25);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "long.npy: 25 bytes of data");
  p = write_npy_text("good.npy", ok, 24);
  CHECK_OK(vkf_npy_load(p, &a));
  vkf_npy_array_release(&a);

  p = write_npy_text("be.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_UNSUPPORTED, "be.npy: dtype '>f4' is not supported");
  p = write_npy_text("u1.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", 2);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_UNSUPPORTED, "dtype '|u1'");
  p = write_npy_text("struct.npy",
                     "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_UNSUPPORTED, "struct.npy: structured dtypes");
  p = write_npy_text("rank5.npy",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 2), }", 8);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_UNSUPPORTED, "rank5.npy: arrays of rank above 4");
  p = write_npy_text("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_UNSUPPORTED, "fortran.npy: fortran_order True");
  p = write_npy_text("noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", 4);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE,
               "noshape.npy: malformed .npy header: missing");
  p = write_npy_text("negdim.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "negdim.npy: malformed .npy header");
  p = write_npy_text("bigdim.npy",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                     0);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "dimension too large");
  p = write_npy_text(
      "product.npy",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "product.npy: shape has too many elements");
  p = write_npy_text("brace.npy", "'descr': '<f4'", 0);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "brace.npy: malformed .npy header");
  p = write_npy_text("key.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", 4);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "unknown key");
  p = write_npy_text("quote.npy", "{'descr: '<f4'}", 4);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "quote.npy: malformed .npy header");
  p = write_npy_text("bool.npy", "{'descr': '<f4', 'fortran_order': 0, 'shape': (), }", 4);
  CHECK_STATUS(vkf_npy_load(p, &a), VKF_STATUS_PARSE, "'fortran_order' is not True or False");
  /* Python 2 longs and double-quoted strings are NumPy spellings too. */
  p = write_npy_text("py2.npy",
                     "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2L, 1L)}", 8);
  CHECK_OK(vkf_npy_load(p, &a));
  CHECK(a.rank == 2 && a.shape[0] == 2 && a.shape[1] == 1);
  vkf_npy_array_release(&a);
}

/* Loads an exact-size heap copy so ASan sees any overread. */
static int parse_copy(const uint8_t *bytes, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  VKF_ASSERT(copy);
  if (size) memcpy(copy, bytes, size);
  vkf_npy_array a;
  vkf_status s = vkf_npy_parse(copy, size, "fuzz.npy", &a);
  int ok = s == VKF_OK;
  if (ok) {
    CHECK(a.data_size == a.element_count * vkf_npy_dtype_size(a.dtype));
  } else {
    CHECK(a.data == NULL && strstr(vkf_status_message(s), "fuzz.npy") != NULL);
  }
  vkf_status_free(s);
  vkf_npy_array_release(&a);
  free(copy);
  return ok;
}

static void test_fuzz(void) {
  FILE *f = fopen(DATA "readers_f32.npy", "rb");
  uint8_t bytes[224];
  size_t size = f ? fread(bytes, 1, sizeof bytes, f) : 0;
  if (f) fclose(f);
  CHECK(size == 224);
  CHECK(parse_copy(bytes, size) == 1);
  int opened = 0;
  for (size_t len = 0; len < size; len++) opened += parse_copy(bytes, len);
  CHECK_MSG(opened == 0, "%d truncated copies parsed", opened);
  uint8_t m[224];
  int mutants = 0;
  for (size_t at = 0; at < 128; at++) {
    for (int bit = 0; bit < 8; bit++) {
      memcpy(m, bytes, size);
      m[at] ^= (uint8_t)(1u << bit);
      parse_copy(m, size);
      mutants++;
    }
  }
  CHECK(mutants == 1024);
}

int main(void) {
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/vkf_test_npy_XXXXXX");
  if (!mkdtemp(tmp_dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_numpy_files();
  test_round_trips();
  test_bad_files();
  test_fuzz();
  static const char *const names[] = {
      "rt.npy",    "magic.npy",   "tiny.npy",    "empty.npy",  "version.npy", "hlen.npy",
      "short.npy", "long.npy",    "good.npy",    "be.npy",     "u1.npy",      "struct.npy",
      "rank5.npy", "fortran.npy", "noshape.npy", "negdim.npy", "bigdim.npy",  "product.npy",
      "brace.npy", "key.npy",     "quote.npy",   "bool.npy",   "py2.npy"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tmp_path(names[i]));
  rmdir(tmp_dir);
  return test_report();
}
