/* NystromformerModel in the model registry: input_ids, attention_mask, token_type_ids in (Hugging
 * Face's defaults for the optional two), last_hidden_state out. */
#include "models/arch/nystromformer.h"
#include "models/registry/arch_entry.h"

static vkf_status load(const char *dir, void **out_impl) {
  return vkf_nystromformer_load(dir, (vkf_nystromformer **)out_impl);
}
static void destroy(void *impl) {
  vkf_nystromformer_destroy(impl);
}
static const char *architecture(const void *impl) {
  (void)impl;
  return "NystromformerModel";
}

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_hf_config *c = vkf_nystromformer_config(impl);
  const vkf_nystrom_config *ny = vkf_nystromformer_nystrom_config(impl);
  int64_t max = c->max_position_embeddings;
  /* fewer landmarks than segment_means_seq_len: segments of exactly that many tokens */
  int64_t exact = ny->num_landmarks != ny->segment_means_seq_len ? ny->segment_means_seq_len : 0;
  in[0] = (vkf_model_io){.name = "input_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .exact_seq = exact,
                         .required = 1,
                         .value_bound = c->vocab_size};
  in[1] = (vkf_model_io){.name = "attention_mask",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .exact_seq = exact,
                         .fill = 1,
                         .value_bound = 2};
  in[2] = (vkf_model_io){.name = "token_type_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .exact_seq = exact,
                         .fill = 0,
                         .value_bound = c->type_vocab_size};
  *in_count = 3;
  out[0] = (vkf_model_io){
      .name = "last_hidden_state", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, c->hidden_size}};
  *out_count = 1;
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  (void)want; /* one output */
  vkf_nystromformer_graph ng;
  VKF_RETURN_IF_ERROR(vkf_nystromformer_build(impl, o->batch, o->seq_len, o->dtype, &ng));
  out->graph = ng.graph;
  out->inputs[0] = ng.input_ids;
  out->inputs[1] = ng.attention_mask;
  out->inputs[2] = ng.token_type_ids;
  out->outputs[0] = ng.last_hidden_state;
  return VKF_OK;
}

static const char *const model_types[] = {"nystromformer", NULL};
static const char *const architectures[] = {"NystromformerModel", NULL};

static vkf_status quantize(void *impl, const char *format) {
  return vkf_nystromformer_quantize(impl, format);
}
static const struct vkf_arch_files *files(const void *impl) {
  return vkf_nystromformer_files(impl);
}

const vkf_arch_entry vkf_entry_nystromformer = {
    "nystromformer", model_types, architectures, load, destroy,
    architecture,    declare,     build,         NULL, NULL, .quantize = quantize, .files = files,
    .text = 1, .pooled_embed = VKF_POOL_MEAN};
