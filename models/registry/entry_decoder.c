/* Decoder-only language models in the model registry: input_ids and an optional attention_mask
 * (default ones) in; logits (models with a head) and last_hidden_state out. */
#include "models/arch/decoder.h"
#include "models/registry/arch_entry.h"

static vkf_status load(const char *dir, void **out_impl) {
  return vkf_decoder_load(dir, (vkf_decoder_model **)out_impl);
}
static void destroy(void *impl) {
  vkf_decoder_destroy(impl);
}
static const char *architecture(const void *impl) {
  return vkf_decoder_architecture(impl);
}

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_decoder_model *m = impl;
  const vkf_hf_config *c = vkf_decoder_config(m);
  int64_t max = vkf_decoder_max_positions(m);
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
  uint32_t n = 0;
  if (vkf_decoder_has_lm_head(m))
    out[n++] = (vkf_model_io){
        .name = "logits", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, c->vocab_size}};
  out[n++] = (vkf_model_io){
      .name = "last_hidden_state", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, c->hidden_size}};
  *out_count = n;
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  vkf_decoder_model *m = impl;
  int head = vkf_decoder_has_lm_head(m);
  vkf_decoder_build_options bo = {.batch = o->batch,
                                  .seq_len = o->seq_len,
                                  .dtype = o->dtype,
                                  .logits = head && want[0],
                                  .last_hidden_state = want[head ? 1 : 0]};
  vkf_decoder_graph dg;
  VKF_RETURN_IF_ERROR(vkf_decoder_build(m, &bo, &dg));
  out->graph = dg.graph; /* FULL mode allocates no cache arrays: the graph is all there is */
  out->inputs[0] = dg.input_ids;
  out->inputs[1] = dg.attention_mask;
  if (head) out->outputs[0] = dg.logits;
  out->outputs[head ? 1 : 0] = dg.last_hidden_state;
  return VKF_OK;
}

/* A decoder-only LM: the prompt is the decoder's own, any position up to the config's. */
static vkf_status generate(void *impl, vkf_model_generate *out) {
  const vkf_hf_config *c = vkf_decoder_config(impl);
  if (!vkf_decoder_has_lm_head(impl))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "has no language-model head");
  *out = (vkf_model_generate){.engine = VKF_GEN_ENGINE_DECODER,
                              .engine_model = impl,
                              .vocab = c->vocab_size,
                              .prompt_vocab = c->vocab_size,
                              .max_ctx = vkf_decoder_max_positions(impl),
                              .config_ctx = c->max_position_embeddings,
                              .decoder_start_id = -1,
                              .bos_id = c->bos_token_id,
                              .pad_id = c->pad_token_id,
                              .text_prompts = 1,
                              .continuous = 1};
  return VKF_OK;
}

static const char *const model_types[] = {"gpt2", "llama", "mistral", "qwen2", NULL};
static const char *const architectures[] = {
    "GPT2LMHeadModel", "GPT2Model",        "LlamaForCausalLM", "LlamaModel", "MistralForCausalLM",
    "MistralModel",    "Qwen2ForCausalLM", "Qwen2Model",       NULL};

static vkf_status quantize(void *impl, const char *format) {
  return vkf_decoder_quantize(impl, format);
}
static const struct vkf_arch_files *files(const void *impl) {
  return vkf_decoder_files(impl);
}

const vkf_arch_entry vkf_entry_decoder = {"decoder",    model_types, architectures, load, destroy,
                                          architecture, declare,     build,         NULL, NULL,
                                          .quantize = quantize, .files = files,
                                          .text = 1, .chat = 1, .generate = generate};
