/* Sentence embeddings of vkformer.h, as `vkf embed` computes them (runtime/text_embed.h): the
 * sentence-transformers pipeline of a BERT checkpoint, or another text encoder's last_hidden_state
 * pooled as its embed facet says. */
#include <string.h>

#include "api/handles.h"
#include "runtime/text_embed.h"

static vkf_status embed(vkformer_model *model, const char *const *texts, size_t count,
                        vkformer_tensor *out) {
  vkf_model_embed facet;
  VKF_RETURN_IF_ERROR(vkf_model_embed_facet(model->model, &facet));
  if (count < 1 || count > (size_t)1 << 24)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%zu texts to embed", count);
  for (size_t i = 0; i < count; i++)
    if (!texts[i]) return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "text %zu is NULL", i);
  float *e = NULL;
  if (facet.encoder) {
    if (!model->wordpiece)
      VKF_RETURN_IF_ERROR(vkf_wordpiece_load(vkf_model_dir(model->model), &model->wordpiece));
    VKF_RETURN_IF_ERROR(vkf_rt_embed(model->device->rt.device, facet.encoder, model->wordpiece,
                                     texts, (int64_t)count, model->dtype, "vkformer_embed", &e,
                                     NULL));
  } else {
    const vkformer_tokenizer *tok = NULL;
    VKF_RETURN_IF_ERROR(vkf_api_internal(vkformer_model_tokenizer(model, &tok)));
    VKF_RETURN_IF_ERROR(vkf_rt_embed_pooled(model->device->rt.device, model->model, tok->tok,
                                            texts, (int64_t)count, model->dtype, facet.pooling,
                                            "vkformer_embed", &e, NULL));
  }
  out->name = "sentence_embedding";
  out->dtype = VKFORMER_F32;
  out->rank = 2;
  out->shape[0] = (int64_t)count;
  out->shape[1] = facet.dims;
  out->data = e;
  return VKF_OK;
}

vkformer_status vkformer_embed(vkformer_model *model, const char *const *texts, size_t count,
                               vkformer_tensor *out) {
  VKF_API_REQUIRE(out, "vkformer_embed: out is NULL");
  memset(out, 0, sizeof *out);
  VKF_API_REQUIRE(model, "vkformer_embed: model is NULL");
  VKF_API_REQUIRE(texts, "vkformer_embed: texts is NULL");
  return vkf_api_status(embed(model, texts, count, out));
}
