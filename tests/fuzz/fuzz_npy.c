/* .npy from memory: magic, version, the header dict, dtype and shape, data size; then the f32
 * conversion of whatever the reader accepts. */
#include "models/formats/npy.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkf_npy_array a;
  vkf_status s = vkf_npy_parse(data, size, "fuzz.npy", &a);
  if (s) {
    FUZZ_ASSERT(a.data == NULL && a.element_count == 0);
    fuzz_check_status(s);
    return 0;
  }
  FUZZ_ASSERT(a.rank >= 0 && a.rank <= VKF_NPY_MAX_RANK);
  FUZZ_ASSERT(a.data_size == a.element_count * vkf_npy_dtype_size(a.dtype));
  FUZZ_ASSERT(a.data_size <= size);
  size_t product = 1;
  for (int i = 0; i < a.rank; i++) product *= (size_t)a.shape[i];
  FUZZ_ASSERT(product == a.element_count);
  float *values = malloc((a.element_count ? a.element_count : 1) * sizeof *values);
  FUZZ_ASSERT(values);
  fuzz_check_status(vkf_npy_array_to_f32(&a, a.element_count, values));
  if (a.element_count) fuzz_check_status(vkf_npy_array_to_f32(&a, a.element_count - 1, values));
  free(values);
  vkf_npy_array_release(&a);
  return 0;
}
