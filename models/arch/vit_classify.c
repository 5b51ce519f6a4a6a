/* The image side of classification with a ViT checkpoint: files -> a pixel_values batch through
 * the checkpoint's processor, and logits -> top-K (id, probability). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/arch/vit.h"
#include "models/arch/vit_classify.h"

vkf_status vkf_vit_load_images(const vkf_vit_model *model, const char *const *paths, size_t count,
                               float *out_pixels) {
  const vkf_image_preprocess_params *params = vkf_vit_preprocess_params(model);
  int64_t s = vkf_vit_image_size(model);
  size_t per_image = (size_t)(3 * s * s);
  for (size_t i = 0; i < count; i++) {
    vkf_image image = {0};
    VKF_RETURN_IF_ERROR(vkf_image_load(paths[i], &image));
    uint32_t h = 0, w = 0;
    vkf_status st = vkf_image_preprocess_output_size(params, image.width, image.height, &h, &w);
    if (!st && ((int64_t)h != s || (int64_t)w != s))
      st = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: preprocessing gives %ux%u, the model takes %lldx%lld", paths[i], w,
                           h, (long long)s, (long long)s);
    if (!st) st = vkf_image_preprocess(&image, params, out_pixels + i * per_image, per_image);
    vkf_image_destroy(&image);
    if (st) return vkf_status_annotate(st, "%s: ", paths[i]);
  }
  return VKF_OK;
}

void vkf_vit_top_k(const float *logits, int64_t label_count, int64_t k, int64_t *out_ids,
                   float *out_probs) {
  VKF_ASSERT(k >= 0 && k <= label_count);
  /* softmax in double, max subtracted first */
  double mx = -INFINITY, sum = 0;
  for (int64_t i = 0; i < label_count; i++) mx = logits[i] > mx ? logits[i] : mx;
  for (int64_t i = 0; i < label_count; i++) sum += exp((double)logits[i] - mx);
  /* selection of the k best, ties to the lower id (as torch.topk on CPU in practice) */
  for (int64_t j = 0; j < k; j++) {
    int64_t best = -1;
    for (int64_t i = 0; i < label_count; i++) {
      int taken = 0;
      for (int64_t t = 0; t < j && !taken; t++) taken = out_ids[t] == i;
      if (!taken && (best < 0 || logits[i] > logits[best])) best = i;
    }
    out_ids[j] = best;
    out_probs[j] = (float)(exp((double)logits[best] - mx) / sum);
  }
}
