/* safetensors from memory: the header (length, JSON, dtypes, shapes, offsets), lookups, and every
 * conversion on every tensor the reader accepts, cross-checked against what open() promised. */
#include <string.h>

#include "models/formats/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkf_safetensors *st = NULL;
  vkf_status s = vkf_safetensors_open_memory(data, size, "fuzz.safetensors", &st);
  if (s) {
    FUZZ_ASSERT(st == NULL);
    fuzz_check_status(s);
    return 0;
  }
  const vkf_safetensors_info *got = NULL;
  for (size_t i = 0, n = vkf_safetensors_count(st); i < n; i++) {
    const vkf_safetensors_info *info = vkf_safetensors_at(st, i);
    FUZZ_ASSERT(vkf_safetensors_find(st, info->name) == info);
    FUZZ_ASSERT(info->data_size ==
                (size_t)info->element_count * vkf_safetensors_dtype_size(info->dtype));
    FUZZ_ASSERT((const uint8_t *)info->data >= data &&
                (const uint8_t *)info->data + info->data_size <= data + size);
    fuzz_check_status(vkf_safetensors_expect(st, info->name, info->rank, info->shape, &got));
    FUZZ_ASSERT(got == info);
    if (info->element_count > (1 << 16))
      continue; /* the conversion, not the allocator, is under test */
    size_t count = (size_t)info->element_count;
    float *f32 = malloc((count ? count : 1) * sizeof *f32);
    uint16_t *f16 = malloc((count ? count : 1) * sizeof *f16);
    FUZZ_ASSERT(f32 && f16);
    fuzz_check_status(vkf_safetensors_read_f32(st, info, count, f32));
    fuzz_check_status(vkf_safetensors_read_f16(st, info, count, f16));
    if (count) fuzz_check_status(vkf_safetensors_read_f32(st, info, count - 1, f32)); /* short */
    free(f32);
    free(f16);
  }
  /* A name no tensor has is NOT_FOUND. The fuzzer learns this very name from the binary and
   * writes it into a header (tests/fuzz/crashers/fuzz_safetensors/name_of_the_probe), so the
   * probe only counts when no tensor carries it. */
  static const char probe[] = "\x01 not a tensor";
  int present = 0;
  for (size_t i = 0, n = vkf_safetensors_count(st); i < n; i++)
    present |= !strcmp(vkf_safetensors_at(st, i)->name, probe);
  vkf_status missing = vkf_safetensors_get(st, probe, &got);
  FUZZ_ASSERT(present ? !missing && got && !strcmp(got->name, probe) : missing != VKF_OK);
  fuzz_check_status(missing);
  vkf_safetensors_close(st);
  return 0;
}
