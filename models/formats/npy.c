/* .npy parsing and writing. The header is a Python dict literal; only the subset NumPy itself
 * writes is accepted (string keys; a string, a bool or a tuple of ints as values). */
#include "models/formats/npy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph/base/half.h"
#include "models/formats/file_read.h"

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static const struct {
  const char *descr;
  size_t size;
} npy_dtypes[VKF_NPY_DTYPE_COUNT] = {
    [VKF_NPY_F32] = {"<f4", 4},
    [VKF_NPY_F16] = {"<f2", 2},
    [VKF_NPY_I32] = {"<i4", 4},
    [VKF_NPY_I64] = {"<i8", 8},
};

const char *vkf_npy_dtype_descr(vkf_npy_dtype dtype) {
  VKF_ASSERT(dtype >= 0 && dtype < VKF_NPY_DTYPE_COUNT);
  return npy_dtypes[dtype].descr;
}

size_t vkf_npy_dtype_size(vkf_npy_dtype dtype) {
  VKF_ASSERT(dtype >= 0 && dtype < VKF_NPY_DTYPE_COUNT);
  return npy_dtypes[dtype].size;
}

/* Cursor over the header text; every read is bounded by `end`. */
typedef struct header_cursor {
  const char *p, *end;
  const char *name; /* file name for messages */
} header_cursor;

static void skip_space(header_cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int take(header_cursor *c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

static vkf_status header_error(const header_cursor *c, const char *what) {
  return vkf_status_make(VKF_STATUS_PARSE, "%s: malformed .npy header: %s", c->name, what);
}

/* A quoted string ('...' or "..."), copied into buf (without escapes, which NumPy never writes). */
static vkf_status parse_string(header_cursor *c, char *buf, size_t buf_size) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return header_error(c, "expected a string");
  char quote = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != quote) {
    if (n + 1 >= buf_size) return header_error(c, "string too long");
    buf[n++] = *c->p++;
  }
  if (c->p >= c->end) return header_error(c, "unterminated string");
  c->p++;
  buf[n] = '\0';
  return VKF_OK;
}

static vkf_status parse_shape(header_cursor *c, vkf_npy_array *a) {
  if (!take(c, '(')) return header_error(c, "'shape' is not a tuple");
  int rank = 0;
  for (;;) {
    skip_space(c);
    if (take(c, ')')) break;
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
      return header_error(c, "'shape' holds something other than non-negative integers");
    int64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      if (v > (INT64_MAX - 9) / 10) return header_error(c, "'shape' dimension too large");
      v = v * 10 + (*c->p++ - '0');
    }
    if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 longs */
    if (rank >= VKF_NPY_MAX_RANK)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s: arrays of rank above %d are not supported", c->name,
                             VKF_NPY_MAX_RANK);
    a->shape[rank++] = v;
    if (!take(c, ',')) {
      if (!take(c, ')')) return header_error(c, "'shape' tuple not closed");
      break;
    }
  }
  a->rank = rank;
  return VKF_OK;
}

static vkf_status parse_header(header_cursor *c, vkf_npy_array *a, int *f64) {
  int have_descr = 0, have_order = 0, have_shape = 0;
  if (!take(c, '{')) return header_error(c, "does not start with '{'");
  for (;;) {
    if (take(c, '}')) break;
    char key[32], value[32];
    VKF_RETURN_IF_ERROR(parse_string(c, key, sizeof key));
    if (!take(c, ':')) return header_error(c, "expected ':' after a key");
    if (strcmp(key, "descr") == 0) {
      skip_space(c);
      if (c->p < c->end && *c->p == '[')
        return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                               "%s: structured dtypes are not supported (expected '<f4', '<f2', "
                               "'<i4' or '<i8')",
                               c->name);
      VKF_RETURN_IF_ERROR(parse_string(c, value, sizeof value));
      /* numpy's default float: read as f32, each value rounded (what the models take) */
      int found = *f64 = strcmp(value, "<f8") == 0;
      if (found) a->dtype = VKF_NPY_F32;
      for (int i = 0; i < VKF_NPY_DTYPE_COUNT && !found; i++) {
        if (strcmp(value, npy_dtypes[i].descr) == 0) {
          a->dtype = (vkf_npy_dtype)i;
          found = 1;
        }
      }
      if (!found)
        return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                               "%s: dtype '%s' is not supported (expected '<f4', '<f2', '<i4' or '<i8')",
                               c->name, value);
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      skip_space(c);
      if ((size_t)(c->end - c->p) >= 5 && memcmp(c->p, "False", 5) == 0) {
        c->p += 5;
      } else if ((size_t)(c->end - c->p) >= 4 && memcmp(c->p, "True", 4) == 0) {
        return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                               "%s: fortran_order True is not supported (save C-ordered arrays)",
                               c->name);
      } else {
        return header_error(c, "'fortran_order' is not True or False");
      }
      have_order = 1;
    } else if (strcmp(key, "shape") == 0) {
      VKF_RETURN_IF_ERROR(parse_shape(c, a));
      have_shape = 1;
    } else {
      return header_error(c, "unknown key");
    }
    if (!take(c, ',')) {
      if (!take(c, '}')) return header_error(c, "expected ',' or '}'");
      break;
    }
  }
  skip_space(c);
  if (c->p != c->end) return header_error(c, "bytes after the closing '}'");
  if (!have_descr || !have_order || !have_shape)
    return header_error(c, "missing 'descr', 'fortran_order' or 'shape'");
  return VKF_OK;
}

vkf_status vkf_npy_parse(const void *bytes, size_t size, const char *name,
                         vkf_npy_array *out_array) {
  VKF_ASSERT(out_array && name && (bytes || size == 0));
  memset(out_array, 0, sizeof *out_array);
  const uint8_t *b = bytes;
  if (size < 10 || memcmp(b, npy_magic, sizeof npy_magic) != 0)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: not a .npy file (bad magic or shorter than 10 bytes)", name);
  uint8_t major = b[6], minor = b[7];
  size_t header_size, header_start;
  if (major == 1) {
    header_size = (size_t)b[8] | (size_t)b[9] << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) { /* 3.0 only changes the header text to UTF-8 */
    if (size < 12) return vkf_status_make(VKF_STATUS_PARSE, "%s: truncated .npy header", name);
    header_size = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    header_start = 12;
  } else {
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: .npy format version %u.%u is not supported",
                           name, major, minor);
  }
  if (header_size > size - header_start)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: truncated: header of %zu bytes runs past the end of the file (%zu "
                           "bytes)",
                           name, header_size, size);
  vkf_npy_array a = {0};
  header_cursor c = {(const char *)b + header_start, (const char *)b + header_start + header_size,
                     name};
  int f64 = 0;
  VKF_RETURN_IF_ERROR(parse_header(&c, &a, &f64));

  size_t esize = f64 ? 8 : npy_dtypes[a.dtype].size, count = 1;
  for (int i = 0; i < a.rank; i++) {
    uint64_t d = (uint64_t)a.shape[i];
    if (d != 0 && count > SIZE_MAX / esize / d)
      return vkf_status_make(VKF_STATUS_PARSE, "%s: shape has too many elements", name);
    count *= (size_t)d;
  }
  size_t need = count * esize, have = size - header_start - header_size;
  if (have < need)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: truncated: data is %zu bytes but the shape needs %zu", name, have,
                           need);
  if (have > need)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: %zu bytes of data but the shape needs only %zu",
                           name, have, need);
  a.element_count = count;
  a.data_size = f64 ? count * 4 : need;
  a.data = malloc(a.data_size ? a.data_size : 1);
  if (!a.data)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for %zu bytes", name, need);
  if (f64) {
    for (size_t i = 0; i < count; i++) {
      double v;
      memcpy(&v, b + header_start + header_size + 8 * i, 8);
      ((float *)a.data)[i] = (float)v;
    }
  } else {
    memcpy(a.data, b + header_start + header_size, need);
  }
  *out_array = a;
  return VKF_OK;
}

vkf_status vkf_npy_load(const char *path, vkf_npy_array *out_array) {
  VKF_ASSERT(out_array && path);
  memset(out_array, 0, sizeof *out_array);
  char *bytes = NULL;
  size_t size = 0;
  vkf_status status =
      vkf_file_read_bounded(path, VKF_NPY_MAX_FILE_SIZE, "a .npy file", &bytes, &size);
  if (!status) status = vkf_npy_parse(bytes, size, path, out_array);
  free(bytes);
  return status;
}

void vkf_npy_array_release(vkf_npy_array *array) {
  if (!array) return;
  free(array->data);
  memset(array, 0, sizeof *array);
}

vkf_status vkf_npy_array_to_f32(const vkf_npy_array *array, size_t out_count, float *out_values) {
  if (out_count < array->element_count)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "npy array has %zu elements but the f32 buffer holds %zu",
                           array->element_count, out_count);
  const uint8_t *p = array->data;
  for (size_t i = 0; i < array->element_count; i++) {
    switch (array->dtype) {
      case VKF_NPY_F32:
        memcpy(&out_values[i], p + 4 * i, 4);
        break;
      case VKF_NPY_F16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        out_values[i] = vkf_half_to_float(h);
        break;
      }
      case VKF_NPY_I32: {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        out_values[i] = (float)v;
        break;
      }
      case VKF_NPY_I64: {
        int64_t v;
        memcpy(&v, p + 8 * i, 8);
        out_values[i] = (float)v;
        break;
      }
      default:
        VKF_ASSERT(!"bad npy dtype");
    }
  }
  return VKF_OK;
}

vkf_status vkf_npy_save(const char *path, vkf_npy_dtype dtype, int rank, const int64_t *shape,
                        const void *data) {
  VKF_ASSERT(path && dtype >= 0 && dtype < VKF_NPY_DTYPE_COUNT);
  VKF_ASSERT(rank >= 0 && rank <= VKF_NPY_MAX_RANK && (shape || rank == 0));
  char dict[256];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   npy_dtypes[dtype].descr);
  size_t count = 1;
  for (int i = 0; i < rank; i++) {
    VKF_ASSERT(shape[i] >= 0);
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    count *= (size_t)shape[i];
  }
  /* A 1-tuple needs its trailing comma to stay a tuple in Python. */
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", rank == 1 ? "," : "");
  VKF_ASSERT(n > 0 && (size_t)n < sizeof dict);
  VKF_ASSERT(count == 0 || data);

  /* NumPy pads magic + length + dict + '\n' to a multiple of 64 so the data is aligned. */
  size_t prefix = 10, total = prefix + (size_t)n + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t header_size = padded - prefix;
  uint8_t head[512];
  memcpy(head, npy_magic, sizeof npy_magic);
  head[6] = 1;
  head[7] = 0;
  head[8] = (uint8_t)(header_size & 0xff);
  head[9] = (uint8_t)(header_size >> 8);
  memcpy(head + prefix, dict, (size_t)n);
  memset(head + prefix + n, ' ', header_size - (size_t)n - 1);
  head[padded - 1] = '\n';

  FILE *f = fopen(path, "wb");
  if (!f) return vkf_status_make(VKF_STATUS_IO, "%s: cannot create: %s", path, strerror(errno));
  size_t data_size = count * npy_dtypes[dtype].size;
  int ok = fwrite(head, 1, padded, f) == padded;
  if (ok && data_size) ok = fwrite(data, 1, data_size, f) == data_size;
  if (fclose(f) != 0) ok = 0;
  if (!ok) return vkf_status_make(VKF_STATUS_IO, "%s: write of %zu bytes failed", path, data_size);
  return VKF_OK;
}
