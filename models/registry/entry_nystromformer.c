/* NystromformerModel in the model registry: input_ids, attention_mask, token_type_ids in (Hugging
 * Face's defaults for the optional two), last_hidden_state out. */
#include "models/arch/nystromformer.h"
#include "models/registry/arch_entry.h"

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_hf_config *c = vkf_nystromformer_config(impl);
  const vkf_nystrom_config *ny = vkf_nystromformer_nystrom_config(impl);
  *in_count =
      vkf_declare_text_inputs(in, 3, c->max_position_embeddings, c->vocab_size, c->type_vocab_size);
  /* fewer landmarks than segment_means_seq_len: segments of exactly that many tokens */
  if (ny->num_landmarks != ny->segment_means_seq_len)
    for (uint32_t i = 0; i < *in_count; i++) in[i].exact_seq = ny->segment_means_seq_len;
  out[0] = vkf_declare_f32("last_hidden_state", 3, c->hidden_size);
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

const vkf_arch_entry vkf_entry_nystromformer = {
    .family = "nystromformer",
    .model_types = model_types,
    .architectures = architectures,
    .loader = &vkf_nystromformer_loader,
    .declare = declare,
    .build = build,
    .text = 1,
    .pooled_embed = VKF_POOL_MEAN,
};
