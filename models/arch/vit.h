/* ViT and DeiT from Hugging Face checkpoints (config.json + model.safetensors +
 * preprocessor_config.json): loading with every tensor checked, and the graph builder for
 * ViTModel, ViTForImageClassification, DeiTForImageClassification(WithTeacher). */
#ifndef VKF_MODELS_VIT_H
#define VKF_MODELS_VIT_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/arch/arch_loader.h"
#include "models/formats/hf_config.h"
#include "models/image/image.h"

/* What sits on top of the encoder, found from the tensors in the file. */
typedef enum vkf_vit_head {
  VKF_VIT_HEAD_NONE = 0,   /* ViTModel / DeiTModel: last_hidden_state (+ pooler_output) */
  VKF_VIT_HEAD_CLASSIFIER, /* ViTForImageClassification, DeiTForImageClassification: CLS token */
  VKF_VIT_HEAD_TEACHER,    /* DeiTForImageClassificationWithTeacher: mean of the CLS head and the
                              distillation head */
} vkf_vit_head;

/* A loaded checkpoint. Owns the mapping of model.safetensors (graph constants point into it) and
 * every weight it converted or fused, so it must outlive each graph built from it. Not
 * thread-safe: builds convert and cache weights. */
typedef struct vkf_vit_model vkf_vit_model;

/* Reads DIR/config.json, DIR/preprocessor_config.json (absent: the processor defaults for the
 * model type) and DIR/model.safetensors, and checks that every tensor the builder will use is
 * present with the configured shape. Errors are one line naming the directory and the file,
 * field or tensor at fault: NOT_FOUND (no such directory, file or tensor), PARSE (bad JSON or
 * safetensors), SHAPE (tensor of the wrong shape), UNSUPPORTED (model type, dtype). */
extern const vkf_arch_loader vkf_vit_loader;
/* vkf_arch_load and vkf_arch_unload with vkf_vit_loader, typed. */
vkf_status vkf_vit_load(const char *model_dir, vkf_vit_model **out_model);
void vkf_vit_destroy(vkf_vit_model *model);
/* --quantize: linear weights of the builds that follow become ggml blocks (see
 * vkf_arch_files_quantize for the names and vkf_arch_linear_weight for which weights). */
vkf_status vkf_vit_quantize(vkf_vit_model *model, const char *format);
/* The checkpoint and the weights its builds made (vkf classify reads what --quantize made). */
const struct vkf_arch_files *vkf_vit_files(const vkf_vit_model *model);

const vkf_hf_config *vkf_vit_config(const vkf_vit_model *model);
vkf_vit_head vkf_vit_head_of(const vkf_vit_model *model);
/* Number of classes (0 without a head). */
int64_t vkf_vit_label_count(const vkf_vit_model *model);
/* id2label name of class `id`; NULL when out of range. */
const char *vkf_vit_label(const vkf_vit_model *model, int64_t id);
/* The image processor of the checkpoint as vkf_image_preprocess parameters; the output is
 * [3, image_size, image_size] for every checkpoint this loader accepts. */
const vkf_image_preprocess_params *vkf_vit_preprocess_params(const vkf_vit_model *model);
/* Side of the square input image (config image_size). */
int64_t vkf_vit_image_size(const vkf_vit_model *model);
/* Whether a head-less checkpoint has a pooler (pooler_output), and the tokens per image (patches
 * plus the CLS and distillation tokens). */
int vkf_vit_has_pooler(const vkf_vit_model *model);
int64_t vkf_vit_token_count(const vkf_vit_model *model);
/* "ViTForImageClassification", ...: the architecture the loader recognised. */
const char *vkf_vit_architecture(const vkf_vit_model *model);

typedef struct vkf_vit_build_options {
  int64_t batch;   /* images per run; 0: 1 */
  vkf_dtype dtype; /* VKF_F32 (default) or VKF_F16: weights and activations; the input and the
                      outputs stay f32 (one cast at each end) */
  /* Hugging Face's output_attentions: when non-NULL (num_hidden_layers entries), attentions[l] is
   * layer l's softmax probabilities, f32 [B, H, N, N] (N = vkf_vit_token_count), a graph output
   * "attentions.l"; the layers' attention is then built unfused. NULL: the fused attention. */
  vkf_value *attentions;
} vkf_vit_build_options;

/* The graph of one build and the values a caller binds and reads. */
typedef struct vkf_vit_graph {
  vkf_graph *graph;            /* owned by the caller: vkf_graph_destroy */
  vkf_value pixel_values;      /* input, f32 [B, C, S, S] (vkf_image_preprocess output per image) */
  vkf_value logits;            /* output, f32 [B, num_labels]; VKF_NO_VALUE without a head */
  vkf_value last_hidden_state; /* output without a head: f32 [B, N, D] after the final norm */
  vkf_value pooler_output; /* output when the file has a pooler: f32 [B, D]; else VKF_NO_VALUE */
} vkf_vit_graph;

/* Emits the forward pass through graph/ir/builder.h. Node names follow the checkpoint's module names
 * ("vit.encoder.layer.3.attention", ...) so VKF_CHECK and profiles point at the layer. f32 weights
 * are read in place from the mapping; f16 / bf16 ones and the fused QKV / teacher-head weights are
 * converted once and cached in the model. *out is zeroed first; on failure nothing is kept. */
vkf_status vkf_vit_build(vkf_vit_model *model, const vkf_vit_build_options *options,
                         vkf_vit_graph *out);

#endif
