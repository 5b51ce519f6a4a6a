/* Reformer in the model registry: input_ids and attention_mask in (all ones when absent, which is
 * Hugging Face's no-mask result); last_hidden_state [B, N, 2·hidden_size] out for ReformerModel,
 * logits for ReformerModelWithLMHead and ReformerForMaskedLM. */
#include <string.h>

#include "models/arch/reformer.h"
#include "models/registry/arch_entry.h"

static vkf_status load(const char *dir, void **out_impl) {
  return vkf_reformer_load(dir, (vkf_reformer **)out_impl);
}
static void destroy(void *impl) {
  vkf_reformer_destroy(impl);
}
static const char *architecture(const void *impl) {
  return vkf_reformer_architecture(impl);
}

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_hf_config *c = vkf_reformer_hf_config(impl);
  int64_t max = vkf_reformer_max_seq(impl);
  in[0] = (vkf_model_io){.name = "input_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .required = 1,
                         .value_bound = c->vocab_size};
  in[1] = (vkf_model_io){.name = "attention_mask",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .fill = 1,
                         .value_bound = 2};
  *in_count = 2;
  if (vkf_reformer_has_lm_head(impl))
    out[0] = (vkf_model_io){
        .name = "logits", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, c->vocab_size}};
  else
    out[0] = (vkf_model_io){.name = "last_hidden_state",
                            .dtype = VKF_F32,
                            .rank = 3,
                            .shape = {-1, -1, 2 * c->hidden_size}};
  *out_count = 1;
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  (void)want; /* one output */
  vkf_reformer_graph rg;
  VKF_RETURN_IF_ERROR(vkf_reformer_build(impl, o->batch, o->seq_len, o->dtype, 0, &rg));
  out->graph = rg.graph;
  out->inputs[0] = rg.input_ids;
  out->inputs[1] = rg.attention_mask;
  out->outputs[0] = vkf_reformer_has_lm_head(impl) ? rg.logits : rg.last_hidden_state;
  return VKF_OK;
}

static vkf_status quantize(void *impl, const char *format) {
  return vkf_reformer_quantize(impl, format);
}
static const struct vkf_arch_files *files(const void *impl) {
  return vkf_reformer_files(impl);
}

/* ReformerModelWithLMHead: the rows recomputed per step, steps not padded. */
static vkf_status generate(void *impl, vkf_model_generate *out) {
  const vkf_hf_config *c = vkf_reformer_hf_config(impl);
  if (strcmp(vkf_reformer_architecture(impl), "ReformerModelWithLMHead") != 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "is not a causal language model (ReformerModelWithLMHead)");
  *out = (vkf_model_generate){.engine = VKF_GEN_ENGINE_REFORMER,
                              .engine_model = impl,
                              .vocab = c->vocab_size,
                              .prompt_vocab = c->vocab_size,
                              .max_ctx = vkf_reformer_max_positions(impl),
                              .config_ctx = c->max_position_embeddings,
                              .decoder_start_id = -1,
                              .bos_id = c->bos_token_id,
                              .pad_id = c->pad_token_id,
                              .text_prompts = 1};
  return VKF_OK;
}

static const char *const model_types[] = {"reformer", NULL};
static const char *const architectures[] = {"ReformerModel", "ReformerModelWithLMHead",
                                            "ReformerForMaskedLM", NULL};

const vkf_arch_entry vkf_entry_reformer = {
    "reformer",   model_types, architectures, load, destroy,
    architecture, declare,     build,         NULL, NULL, .quantize = quantize, .files = files,
    .text = 1, .generate = generate};
