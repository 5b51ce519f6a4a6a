/* PNG and JPEG through the public decoder (whatever library sits behind it), then what the models
 * do with a decoded image: resize with every filter and a centre crop. */
#include "models/image/image.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkf_image image;
  vkf_status s = vkf_image_decode(data, size, "fuzz.img", &image);
  if (s) {
    FUZZ_ASSERT(image.pixels == NULL);
    fuzz_check_status(s);
    return 0;
  }
  FUZZ_ASSERT(image.width > 0 && image.height > 0 && image.pixels);
  FUZZ_ASSERT(image.width <= VKF_IMAGE_MAX_SIDE && image.height <= VKF_IMAGE_MAX_SIDE);
  FUZZ_ASSERT((uint64_t)image.width * image.height <= VKF_IMAGE_MAX_PIXELS);
  /* Touch every pixel, so a short buffer shows under ASan. */
  unsigned sum = 0;
  for (size_t i = 0, n = (size_t)image.width * image.height * 3; i < n; i++) sum += image.pixels[i];
  (void)sum;
  if ((uint64_t)image.width * image.height <= 256 * 256) {
    vkf_image out;
    vkf_image_resample filter = (vkf_image_resample)(size % VKF_IMAGE_RESAMPLE_COUNT);
    fuzz_check_status(vkf_image_resize(&image, 7, 5, filter, &out));
    vkf_image_destroy(&out);
    fuzz_check_status(vkf_image_center_crop(&image, 5, 9, &out));
    vkf_image_destroy(&out);
  }
  vkf_image_destroy(&image);
  return 0;
}
