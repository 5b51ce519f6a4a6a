/* Read-only, memory-mapped reader for GGUF files (llama.cpp's format, versions 2 and 3,
 * little-endian): the key/value metadata and the tensor table, every count, length, type, shape
 * and offset validated at open as ggml's gguf.cpp validates them, before anything is allocated
 * from them. Block layouts and dequantisation are in gguf_quant.h. */
#ifndef VKF_MODELS_GGUF_H
#define VKF_MODELS_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

/* ggml keeps at most 4 dims (GGML_MAX_DIMS); dims[0] is the fastest-varying (a row). */
#define VKF_GGUF_MAX_DIMS 4
/* Limits beyond ggml's own (which trusts the file up to memory): a key or tensor name longer
 * than ggml's GGML_MAX_NAME - 1 (63) is refused by ggml; keys we bound at 64 KiB. */
#define VKF_GGUF_MAX_NAME 63
#define VKF_GGUF_MAX_KEY 65535
/* The deepest array nesting read (ggml refuses nested arrays when reading, we read one level). */

/* Metadata value types, numbered as in the file. */
typedef enum vkf_gguf_value_type {
  VKF_GGUF_UINT8 = 0,
  VKF_GGUF_INT8 = 1,
  VKF_GGUF_UINT16 = 2,
  VKF_GGUF_INT16 = 3,
  VKF_GGUF_UINT32 = 4,
  VKF_GGUF_INT32 = 5,
  VKF_GGUF_FLOAT32 = 6,
  VKF_GGUF_BOOL = 7,
  VKF_GGUF_STRING = 8,
  VKF_GGUF_ARRAY = 9,
  VKF_GGUF_UINT64 = 10,
  VKF_GGUF_INT64 = 11,
  VKF_GGUF_FLOAT64 = 12,
  VKF_GGUF_VALUE_TYPE_COUNT
} vkf_gguf_value_type;

/* Tensor types, numbered as ggml's enum ggml_type. */
typedef enum vkf_gguf_type {
  VKF_GGUF_F32 = 0,
  VKF_GGUF_F16 = 1,
  VKF_GGUF_Q4_0 = 2,
  VKF_GGUF_Q4_1 = 3,
  VKF_GGUF_Q5_0 = 6,
  VKF_GGUF_Q5_1 = 7,
  VKF_GGUF_Q8_0 = 8,
  VKF_GGUF_Q8_1 = 9,
  VKF_GGUF_Q2_K = 10,
  VKF_GGUF_Q3_K = 11,
  VKF_GGUF_Q4_K = 12,
  VKF_GGUF_Q5_K = 13,
  VKF_GGUF_Q6_K = 14,
  VKF_GGUF_Q8_K = 15,
  VKF_GGUF_I8 = 24,
  VKF_GGUF_I16 = 25,
  VKF_GGUF_I32 = 26,
  VKF_GGUF_I64 = 27,
  VKF_GGUF_F64 = 28,
  VKF_GGUF_BF16 = 30,
  VKF_GGUF_TYPE_LIMIT = 40 /* ids at or past this are unknown */
} vkf_gguf_type;

/* One metadata entry. Scalars are decoded; strings and arrays point into the mapping. */
typedef struct vkf_gguf_kv {
  const char *key; /* NUL-terminated copy */
  vkf_gguf_value_type type;
  vkf_gguf_value_type array_type; /* arrays only */
  uint64_t count;                 /* arrays only: elements */
  union {
    uint64_t u;
    int64_t i;
    double f;
  } value; /* integers, bools (0/1) and floats, widened */
  const char *str; /* strings: bytes (not NUL-terminated) and length */
  size_t str_len;
  const uint8_t *array;       /* arrays of numbers: the packed little-endian elements */
  const uint64_t *str_offset; /* arrays of strings: each element's byte offset in the file */
} vkf_gguf_kv;

/* One tensor. */
typedef struct vkf_gguf_tensor {
  const char *name; /* NUL-terminated copy */
  vkf_gguf_type type;
  int n_dims;
  int64_t dims[VKF_GGUF_MAX_DIMS]; /* ggml order: dims[0] is the row; unused dims are 1 */
  int64_t element_count;
  const uint8_t *data; /* inside the mapping, aligned to the file's alignment */
  size_t size;         /* bytes */
  uint64_t offset;     /* in the data section */
} vkf_gguf_tensor;

typedef struct vkf_gguf vkf_gguf;

/* Maps `path` and validates all of it: the magic "GGUF"; version 2 or 3 (1 is refused, as ggml
 * refuses it; a byte-swapped version names big-endian); counts bounded by what the file can
 * hold; keys and names of bounded length, unique; every value type known, bools 0 or 1, arrays
 * of known non-array types whose total fits the file; general.alignment (if present) a UINT32
 * power of two; every tensor of 1..4 dims, each positive, a known type whose block size divides
 * dims[0], element and byte counts without overflow, and laid out as ggml lays them out (each
 * offset the previous tensor's end padded to the alignment) inside the file. Any failure: one
 * line naming `path` and the entry (NOT_FOUND, IO, PARSE, UNSUPPORTED); *out is NULL then. */
vkf_status vkf_gguf_open(const char *path, vkf_gguf **out);
/* The same over caller-owned bytes, which must outlive the handle (tests, fuzzing). */
vkf_status vkf_gguf_open_memory(const void *bytes, size_t size, const char *name, vkf_gguf **out);
void vkf_gguf_close(vkf_gguf *g);

/* Whether `path` is a regular file starting with the GGUF magic (never blocks on a FIFO). */
int vkf_gguf_is_file(const char *path);

const char *vkf_gguf_path(const vkf_gguf *g);
uint32_t vkf_gguf_version(const vkf_gguf *g);
size_t vkf_gguf_kv_count(const vkf_gguf *g);
const vkf_gguf_kv *vkf_gguf_kv_at(const vkf_gguf *g, size_t i);
const vkf_gguf_kv *vkf_gguf_find_kv(const vkf_gguf *g, const char *key); /* NULL: absent */
size_t vkf_gguf_tensor_count(const vkf_gguf *g);
const vkf_gguf_tensor *vkf_gguf_tensor_at(const vkf_gguf *g, size_t i); /* in file order */
const vkf_gguf_tensor *vkf_gguf_find_tensor(const vkf_gguf *g, const char *name);

/* Typed metadata reads. Absent: NOT_FOUND (or the default where one is taken). A value of
 * another type: PARSE naming the key, its type and the expected one. Integers of any width and
 * sign convert when the value fits the result. */
vkf_status vkf_gguf_get_uint(const vkf_gguf *g, const char *key, uint64_t max, uint64_t *out);
vkf_status vkf_gguf_get_uint_or(const vkf_gguf *g, const char *key, uint64_t max, uint64_t def,
                                uint64_t *out);
vkf_status vkf_gguf_get_float_or(const vkf_gguf *g, const char *key, double def, double *out);
vkf_status vkf_gguf_get_bool_or(const vkf_gguf *g, const char *key, int def, int *out);
/* A string value: pointer into the mapping and length (not NUL-terminated). */
vkf_status vkf_gguf_get_string(const vkf_gguf *g, const char *key, const char **out,
                               size_t *out_len);
/* An array of `type` elements (strings: use vkf_gguf_array_string). */
vkf_status vkf_gguf_get_array(const vkf_gguf *g, const char *key, vkf_gguf_value_type type,
                              const vkf_gguf_kv **out);
/* Element i of a string array. */
void vkf_gguf_array_string(const vkf_gguf *g, const vkf_gguf_kv *kv, uint64_t i, const char **out,
                           size_t *out_len);
/* Element i of a numeric array, widened (floats as double, integers exactly). */
int64_t vkf_gguf_array_int(const vkf_gguf_kv *kv, uint64_t i);
double vkf_gguf_array_float(const vkf_gguf_kv *kv, uint64_t i);

const char *vkf_gguf_value_type_name(vkf_gguf_value_type t);

#endif
