/* preprocessor_config.json from memory. What the reader accepts is then handed to the image
 * pipeline as models/arch/vit.c hands it (size computation on a landscape and a portrait image,
 * and the whole pipeline on a small image when the output is small): the reader's bounds must be
 * the pipeline's preconditions, so nothing it accepts may crash or overflow there. */
#include "models/formats/hf_config.h"
#include "models/image/image.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static vkf_image_preprocess_params params_of(const vkf_hf_preprocessor *p) {
  vkf_image_preprocess_params o = {0};
  o.do_resize = p->do_resize;
  if (p->size_mode == VKF_HF_SIZE_SHORTEST_EDGE) {
    o.shortest_edge = (uint32_t)p->shortest_edge;
    o.longest_edge = (uint32_t)p->longest_edge;
  } else {
    o.resize_height = (uint32_t)p->size_height;
    o.resize_width = (uint32_t)p->size_width;
  }
  o.resample = (vkf_image_resample)p->resample;
  o.do_center_crop = p->do_center_crop;
  o.crop_height = (uint32_t)p->crop_height;
  o.crop_width = (uint32_t)p->crop_width;
  o.do_rescale = p->do_rescale;
  o.rescale_factor = p->rescale_factor;
  o.do_normalize = p->do_normalize;
  for (int c = 0; c < 3; c++) o.mean[c] = p->image_mean[c], o.std[c] = p->image_std[c];
  return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkf_hf_preprocessor p;
  vkf_status s =
      vkf_hf_preprocessor_parse((const char *)data, size, "preprocessor_config.json", &p);
  if (s) {
    fuzz_check_status(s);
    return 0;
  }
  FUZZ_ASSERT(p.channel_count >= 0 && p.channel_count <= VKF_HF_MAX_CHANNELS);
  for (int i = 0; i < p.channel_count; i++) FUZZ_ASSERT(p.image_std[i] > 0);
  FUZZ_ASSERT(p.size_height <= VKF_HF_MAX_IMAGE_SIZE && p.size_width <= VKF_HF_MAX_IMAGE_SIZE);
  FUZZ_ASSERT(p.shortest_edge <= VKF_HF_MAX_IMAGE_SIZE && p.longest_edge <= VKF_HF_MAX_IMAGE_SIZE);
  FUZZ_ASSERT(p.crop_height <= VKF_HF_MAX_IMAGE_SIZE && p.crop_width <= VKF_HF_MAX_IMAGE_SIZE);
  if (p.channel_count != 3) return 0; /* the models refuse it before the pipeline */

  vkf_image_preprocess_params o = params_of(&p);
  static const uint32_t probe[3][2] = {{640, 480}, {480, 640}, {7, 5}};
  for (int i = 0; i < 3; i++) {
    uint32_t h = 0, w = 0;
    s = vkf_image_preprocess_output_size(&o, probe[i][0], probe[i][1], &h, &w);
    if (s) {
      fuzz_check_status(s);
      continue;
    }
    FUZZ_ASSERT(h > 0 && w > 0);
    if ((uint64_t)h * w > 64 * 64 || (uint64_t)probe[i][0] * probe[i][1] > 64 * 64) continue;
    vkf_image image;
    FUZZ_ASSERT(vkf_image_create(probe[i][0], probe[i][1], &image) == VKF_OK);
    for (size_t k = 0; k < (size_t)probe[i][0] * probe[i][1] * 3; k++)
      image.pixels[k] = (uint8_t)(k * 37);
    size_t count = (size_t)3 * h * w;
    float *out = malloc(count * sizeof *out);
    FUZZ_ASSERT(out);
    fuzz_check_status(vkf_image_preprocess(&image, &o, out, count));
    free(out);
    vkf_image_destroy(&image);
  }
  return 0;
}
