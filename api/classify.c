/* Image classification of vkformer.h: the checkpoint's processor on image files, the logits
 * through the model interface's batched forward, the top K with softmax probabilities. */
#include <stdlib.h>
#include <string.h>

#include "api/handles.h"
#include "models/arch/vit_classify.h"
#include "runtime/model_forward.h"

/* The classifier behind `model` (its classify facet), else NULL. */
static const vkf_vit_model *classifier(const vkformer_model *model) {
  vkf_model_classify facet;
  vkf_status s = vkf_model_classify_facet(model->model, &facet);
  int ok = s == VKF_OK;
  vkf_status_free(s);
  return ok ? facet.classifier : NULL;
}

int64_t vkformer_model_label_count(const vkformer_model *model) {
  const vkf_vit_model *vit = model ? classifier(model) : NULL;
  return vit ? vkf_vit_label_count(vit) : 0;
}

static vkf_status classify(vkformer_model *model, const char *const *paths, size_t count,
                           size_t top_k, vkformer_class *out) {
  const vkf_vit_model *vit = classifier(model);
  if (!vit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s is not an image classifier",
                           vkf_model_dir(model->model), vkf_model_architecture(model->model));
  int64_t labels = vkf_vit_label_count(vit), s = vkf_vit_image_size(vit);
  if (top_k < 1 || top_k > (size_t)labels)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "top_k %zu: the model has %lld labels",
                           top_k, (long long)labels);
  /* every image is 3 s s floats of memory: bound the batch by what can be addressed */
  if (count < 1 || count > ((size_t)1 << 32) / (size_t)(3 * s * s))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%zu images", count);
  for (size_t i = 0; i < count; i++)
    if (!paths[i]) return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "image path %zu is NULL", i);
  float *pixels = malloc(count * (size_t)(3 * s * s) * sizeof *pixels);
  if (!pixels) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%zu images", count);
  vkf_status st = vkf_vit_load_images(vit, paths, count, pixels);
  vkf_model_array in = {.name = "pixel_values",
                        .dtype = VKF_F32,
                        .rank = 4,
                        .shape = {(int64_t)count, 3, s, s},
                        .data = pixels};
  const char *names[1] = {"logits"};
  vkf_rt_forward f = {0};
  if (!st) st = vkf_rt_forward_prepare(&f, model->model, model->dtype, &in, 1, names, 1);
  if (!st) st = vkf_rt_forward_run(&f, "vkformer_classify", model->device->rt.device);
  if (!st) {
    uint32_t rank = 0;
    int64_t shape[VKF_MAX_DIMS];
    const float *logits = vkf_rt_forward_output(&f, 0, &rank, shape);
    int64_t ids[64];
    float probs[64];
    int64_t *id = top_k <= 64 ? ids : malloc(top_k * sizeof *id);
    float *prob = top_k <= 64 ? probs : malloc(top_k * sizeof *prob);
    if (!id || !prob) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "top %zu", top_k);
    for (size_t i = 0; !st && i < count; i++) {
      vkf_vit_top_k(logits + i * (size_t)labels, labels, (int64_t)top_k, id, prob);
      for (size_t j = 0; j < top_k; j++)
        out[i * top_k + j] =
            (vkformer_class){.id = id[j], .prob = prob[j], .label = vkf_vit_label(vit, id[j])};
    }
    if (id != ids) free(id);
    if (prob != probs) free(prob);
  }
  vkf_rt_forward_release(&f);
  free(pixels);
  return st;
}

vkformer_status vkformer_classify(vkformer_model *model, const char *const *paths, size_t count,
                                  size_t top_k, vkformer_class *out) {
  VKF_API_REQUIRE(model, "vkformer_classify: model is NULL");
  VKF_API_REQUIRE(paths && out, "vkformer_classify: paths or out is NULL");
  return vkf_api_status(classify(model, paths, count, top_k, out));
}
