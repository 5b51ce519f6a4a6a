/* ViT and DeiT in the model registry: pixel_values in; logits, or last_hidden_state and
 * pooler_output for head-less checkpoints, out. */
#include "models/arch/vit.h"
#include "models/registry/arch_entry.h"

static vkf_status load(const char *dir, void **out_impl) {
  return vkf_vit_load(dir, (vkf_vit_model **)out_impl);
}
static void destroy(void *impl) {
  vkf_vit_destroy(impl);
}
static const char *architecture(const void *impl) {
  return vkf_vit_architecture(impl);
}

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_vit_model *m = impl;
  const vkf_hf_config *c = vkf_vit_config(m);
  int64_t s = c->image_size, d = c->hidden_size;
  in[0] = (vkf_model_io){.name = "pixel_values",
                         .dtype = VKF_F32,
                         .rank = 4,
                         .shape = {-1, c->num_channels, s, s},
                         .required = 1};
  *in_count = 1;
  uint32_t n = 0;
  if (vkf_vit_head_of(m) != VKF_VIT_HEAD_NONE) {
    out[n++] = (vkf_model_io){
        .name = "logits", .dtype = VKF_F32, .rank = 2, .shape = {-1, vkf_vit_label_count(m)}};
  } else {
    out[n++] = (vkf_model_io){.name = "last_hidden_state",
                              .dtype = VKF_F32,
                              .rank = 3,
                              .shape = {-1, vkf_vit_token_count(m), d}};
    if (vkf_vit_has_pooler(m))
      out[n++] =
          (vkf_model_io){.name = "pooler_output", .dtype = VKF_F32, .rank = 2, .shape = {-1, d}};
  }
  *out_count = n;
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  vkf_vit_model *m = impl;
  vkf_vit_build_options vo = {.batch = o->batch, .dtype = o->dtype, .attentions = o->attentions};
  vkf_vit_graph vg;
  VKF_RETURN_IF_ERROR(vkf_vit_build(m, &vo, &vg));
  out->graph = vg.graph;
  out->inputs[0] = vg.pixel_values;
  /* Declaration order: logits, or last_hidden_state then pooler_output. */
  if (vkf_vit_head_of(m) != VKF_VIT_HEAD_NONE) {
    if (want[0]) out->outputs[0] = vg.logits;
  } else {
    if (want[0]) out->outputs[0] = vg.last_hidden_state;
    if (vkf_vit_has_pooler(m) && want[1]) out->outputs[1] = vg.pooler_output;
  }
  return VKF_OK;
}

/* A ViT / DeiT with a classification head and its labels (vit_classify.h). */
static vkf_status classify(void *impl, vkf_model_classify *out) {
  if (vkf_vit_head_of(impl) == VKF_VIT_HEAD_NONE)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "has no classification head");
  *out = (vkf_model_classify){.classifier = impl, .labels = vkf_vit_label_count(impl)};
  return VKF_OK;
}

static const char *const model_types[] = {"vit", "deit", NULL};
static const char *const architectures[] = {"ViTModel",
                                            "ViTForImageClassification",
                                            "DeiTModel",
                                            "DeiTForImageClassification",
                                            "DeiTForImageClassificationWithTeacher",
                                            NULL};

static int64_t attention_layers(const void *impl) {
  return vkf_vit_config(impl)->num_hidden_layers;
}

static vkf_status quantize(void *impl, const char *format) {
  return vkf_vit_quantize(impl, format);
}
static const struct vkf_arch_files *files(const void *impl) {
  return vkf_vit_files(impl);
}

const vkf_arch_entry vkf_entry_vit = {"vit",   model_types,     architectures, load,
                                      destroy, architecture,    declare,       build,
                                      NULL,    attention_layers, .quantize = quantize, .files = files,
                                      .classify = classify};
