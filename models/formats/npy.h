/* NumPy .npy files (format versions 1.0 and 2.0): the golden inputs and outputs that tools/
 * scripts write and tests and the CLI read back, plus a writer for dumps. */
#ifndef VKF_MODELS_NPY_H
#define VKF_MODELS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

#define VKF_NPY_MAX_RANK 4
/* Goldens and dumps are far smaller; past this a file is refused before anything is allocated. */
#define VKF_NPY_MAX_FILE_SIZE ((size_t)4 << 30)

/* Little-endian, C order only: '<f4', '<f2' (IEEE half bit patterns), '<i4', '<i8' (token ids as
 * numpy and torch save them). */
typedef enum vkf_npy_dtype {
  VKF_NPY_F32 = 0,
  VKF_NPY_F16,
  VKF_NPY_I32,
  VKF_NPY_I64,
  VKF_NPY_DTYPE_COUNT
} vkf_npy_dtype;

typedef struct vkf_npy_array {
  vkf_npy_dtype dtype;
  int rank;                        /* 0 for a scalar */
  int64_t shape[VKF_NPY_MAX_RANK]; /* shape[rank..] are 0 */
  size_t element_count;            /* product of shape; 1 for a scalar */
  void *data;                      /* malloc'd, element_count elements, owned by the array */
  size_t data_size;                /* bytes */
} vkf_npy_array;

/* Reads the whole file. Errors name `path`: NOT_FOUND (missing), IO (also a directory, FIFO or
 * other non-regular file), UNSUPPORTED (over VKF_NPY_MAX_FILE_SIZE bytes), PARSE (bad magic, bad or
 * truncated header, data shorter than the shape needs, trailing bytes), UNSUPPORTED (a dtype
 * other than the four above and '<f8', naming its descr string, e.g. '>f4'; fortran_order True;
 * rank above VKF_NPY_MAX_RANK). On failure *out_array is zeroed and owns nothing. */
/* '<f8' (numpy's default float) is read as VKF_NPY_F32, each value rounded to float. */
vkf_status vkf_npy_load(const char *path, vkf_npy_array *out_array);
/* Same over bytes in memory; `name` is used in messages; the data is copied. */
vkf_status vkf_npy_parse(const void *bytes, size_t size, const char *name,
                         vkf_npy_array *out_array);
/* Frees the data and zeroes the array. Safe on a zeroed array. */
void vkf_npy_array_release(vkf_npy_array *array);

/* Converts the array to f32 into `out_values` (capacity `out_count` >= element_count). F16 is
 * exact, I32 and I64 round above 2^24. INVALID_ARGUMENT when the buffer is short. */
vkf_status vkf_npy_array_to_f32(const vkf_npy_array *array, size_t out_count, float *out_values);

/* Writes a version 1.0 file (header padded to 64 bytes, as NumPy does) holding `data` (element
 * count = product of shape, in the little-endian layout of `dtype`). `rank` <=
 * VKF_NPY_MAX_RANK, dims >= 0. IO errors name `path`. The file is written in place (not atomic). */
vkf_status vkf_npy_save(const char *path, vkf_npy_dtype dtype, int rank, const int64_t *shape,
                        const void *data);

/* "<f4", "<f2", "<i4", "<i8". */
const char *vkf_npy_dtype_descr(vkf_npy_dtype dtype);
size_t vkf_npy_dtype_size(vkf_npy_dtype dtype);

#endif
