/* Read-only, memory-mapped reader for Hugging Face .safetensors files: header validation, tensor
 * lookup by name, shape checks for model builders, and conversion of a tensor to f32 / f16. */
#ifndef VKF_MODELS_SAFETENSORS_H
#define VKF_MODELS_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

/* The reader keeps shapes up to this rank; a tensor of higher rank makes open() fail. */
#define VKF_SAFETENSORS_MAX_RANK 8

/* Every dtype the format defines; the reader records all of them, conversions take a subset. */
typedef enum vkf_safetensors_dtype {
  VKF_SAFETENSORS_BOOL = 0,
  VKF_SAFETENSORS_U8,
  VKF_SAFETENSORS_I8,
  VKF_SAFETENSORS_U16,
  VKF_SAFETENSORS_I16,
  VKF_SAFETENSORS_F16,
  VKF_SAFETENSORS_BF16,
  VKF_SAFETENSORS_U32,
  VKF_SAFETENSORS_I32,
  VKF_SAFETENSORS_F32,
  VKF_SAFETENSORS_U64,
  VKF_SAFETENSORS_I64,
  VKF_SAFETENSORS_F64,
  VKF_SAFETENSORS_F8_E4M3,
  VKF_SAFETENSORS_F8_E5M2,
  /* ggml's quantised blocks, in vkf_quant_format order (graph/base/quant.h): not part of the
   * format, so only images made in memory by vkformer (vkf_safetensors_adopt_memory: a GGUF's
   * tensors) may hold them; the last dim is whole blocks, the data size blocks x block bytes. */
  VKF_SAFETENSORS_GGML_Q8_0,
  VKF_SAFETENSORS_GGML_Q4_0,
  VKF_SAFETENSORS_GGML_Q4_1,
  VKF_SAFETENSORS_GGML_Q5_0,
  VKF_SAFETENSORS_GGML_Q5_1,
  VKF_SAFETENSORS_GGML_Q4_K,
  VKF_SAFETENSORS_GGML_Q5_K,
  VKF_SAFETENSORS_GGML_Q6_K,
  VKF_SAFETENSORS_DTYPE_COUNT
} vkf_safetensors_dtype;

/* One tensor of an open file. Every field is valid until vkf_safetensors_close(). */
typedef struct vkf_safetensors_info {
  const char *name;
  vkf_safetensors_dtype dtype;
  int rank;                                /* 0 for a scalar */
  int64_t shape[VKF_SAFETENSORS_MAX_RANK]; /* shape[rank..] are 0 */
  int64_t element_count;                   /* product of shape; 1 for a scalar */
  /* Little-endian raw bytes inside the mapping. Alignment is whatever the file gives (the format
   * promises none): read through memcpy or the conversion helpers, or check before casting. */
  const void *data;
  size_t data_size;   /* == element_count * dtype size, checked at open */
  size_t file_offset; /* where `data` starts in the file */
} vkf_safetensors_info;

typedef struct vkf_safetensors vkf_safetensors;

/* Maps `path` read-only and validates the whole header: a valid 8-byte length, JSON, every
 * dtype known, every shape of rank <= VKF_SAFETENSORS_MAX_RANK with non-negative dims, every
 * [begin, end) inside the data section with begin <= end and end - begin == elements * dtype
 * size, no two tensors overlapping, no duplicate names. "__metadata__" is skipped. Any failure
 * returns a one-line status naming `path` (and the tensor): NOT_FOUND for a missing file, IO for
 * an unreadable one, PARSE for bad contents, UNSUPPORTED for a rank above the maximum. *out_st is
 * NULL on failure. The handle is immutable after open, so concurrent lookups and reads are safe. */
vkf_status vkf_safetensors_open(const char *path, vkf_safetensors **out_st);
/* Same validation over caller-owned bytes (tests, embedded weights). The bytes are not copied and
 * must outlive the handle; `name` is used in messages. */
vkf_status vkf_safetensors_open_memory(const void *bytes, size_t size, const char *name,
                                       vkf_safetensors **out_st);
/* As open_memory over malloc'd bytes the handle takes over (freed at close, or at once on
 * failure): files made in memory (a GGUF's tensors under Hugging Face names), which may also hold
 * the GGML_* block dtypes. */
vkf_status vkf_safetensors_adopt_memory(void *bytes, size_t size, const char *name,
                                        vkf_safetensors **out_st);
/* Unmaps the file and frees the handle; every info pointer from it dies. NULL is a no-op. */
void vkf_safetensors_close(vkf_safetensors *st);

/* The path (or name) the handle was opened with. */
const char *vkf_safetensors_path(const vkf_safetensors *st);
/* Number of tensors (the "__metadata__" entry does not count). */
size_t vkf_safetensors_count(const vkf_safetensors *st);
/* Tensors in the order of their data offsets; index < count. */
const vkf_safetensors_info *vkf_safetensors_at(const vkf_safetensors *st, size_t index);
/* NULL when absent (O(log n)). */
const vkf_safetensors_info *vkf_safetensors_find(const vkf_safetensors *st, const char *name);
/* Like find, but absence is a NOT_FOUND status: tensor "x" not found in model.safetensors. */
vkf_status vkf_safetensors_get(const vkf_safetensors *st, const char *name,
                               const vkf_safetensors_info **out_info);
/* What model builders call: the tensor must exist and have exactly `rank` dims equal to `dims`
 * (any dtype). Fails with NOT_FOUND, or SHAPE: tensor "a.b" has shape [1,1,192], expected
 * [1,1,768] in model.safetensors. */
vkf_status vkf_safetensors_expect(const vkf_safetensors *st, const char *name, int rank,
                                  const int64_t *dims, const vkf_safetensors_info **out_info);

/* Converts a whole tensor into `out_values` (capacity `out_count` elements, >= element_count).
 * F32, F16 and BF16 convert exactly; the GGML_* blocks dequantise as ggml does; F64 and the integer types round to nearest (integers above
 * 2^24 in magnitude lose low bits; 64-bit ones above 2^53 go through double, so may be 1 ulp
 * off); BOOL gives 0/1; F8 is UNSUPPORTED. INVALID_ARGUMENT when out_count is short. */
vkf_status vkf_safetensors_read_f32(const vkf_safetensors *st, const vkf_safetensors_info *info,
                                    size_t out_count, float *out_values);
/* As read_f32 but to IEEE half bit patterns, rounding to nearest even (overflow gives infinity). */
vkf_status vkf_safetensors_read_f16(const vkf_safetensors *st, const vkf_safetensors_info *info,
                                    size_t out_count, uint16_t *out_values);

/* "F32", "BF16", ...: the spelling the file format uses. */
const char *vkf_safetensors_dtype_name(vkf_safetensors_dtype dtype);
/* Bytes per element (0 for the GGML_* block dtypes: see vkf_safetensors_quant_format). */
size_t vkf_safetensors_dtype_size(vkf_safetensors_dtype dtype);
/* The vkf_quant_format of a GGML_* dtype, or -1. */
int vkf_safetensors_quant_format(vkf_safetensors_dtype dtype);

#endif
