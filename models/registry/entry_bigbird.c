/* BigBird in the model registry: input_ids, attention_mask, token_type_ids in (Hugging Face's
 * defaults for the optional two); last_hidden_state, pooler_output and the task head's logits out.
 */
#include "models/arch/bigbird.h"
#include "models/registry/arch_entry.h"

static vkf_status load(const char *dir, void **out_impl) {
  return vkf_bigbird_load(dir, (vkf_bigbird_model **)out_impl);
}
static void destroy(void *impl) {
  vkf_bigbird_destroy(impl);
}
static const char *architecture(const void *impl) {
  return vkf_bigbird_architecture(impl);
}

/* Outputs in declaration order with their build bits. */
static uint32_t outputs_of(const vkf_bigbird_model *m, vkf_model_io *out, uint32_t *bits) {
  const vkf_hf_config *c = vkf_bigbird_config(m);
  int64_t d = c->hidden_size;
  uint32_t n = 0;
  out[n] = (vkf_model_io){
      .name = "last_hidden_state", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, d}};
  bits[n++] = VKF_BIGBIRD_OUT_LAST_HIDDEN_STATE;
  if (vkf_bigbird_has_pooler(m)) {
    out[n] = (vkf_model_io){.name = "pooler_output", .dtype = VKF_F32, .rank = 2, .shape = {-1, d}};
    bits[n++] = VKF_BIGBIRD_OUT_POOLER_OUTPUT;
  }
  if (vkf_bigbird_head_of(m) == VKF_BIGBIRD_HEAD_MASKED_LM) {
    out[n] = (vkf_model_io){
        .name = "logits", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, c->vocab_size}};
    bits[n++] = VKF_BIGBIRD_OUT_LOGITS;
  } else if (vkf_bigbird_head_of(m) == VKF_BIGBIRD_HEAD_CLASSIFICATION) {
    out[n] =
        (vkf_model_io){.name = "logits", .dtype = VKF_F32, .rank = 2, .shape = {-1, c->num_labels}};
    bits[n++] = VKF_BIGBIRD_OUT_LOGITS;
  }
  return n;
}

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_bigbird_model *m = impl;
  const vkf_hf_config *c = vkf_bigbird_config(m);
  int64_t max = c->max_position_embeddings;
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
  in[2] = (vkf_model_io){.name = "token_type_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .value_bound = c->type_vocab_size};
  *in_count = 3;
  uint32_t bits[VKF_MODEL_MAX_IO];
  *out_count = outputs_of(m, out, bits);
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  vkf_bigbird_model *m = impl;
  vkf_model_io decl[VKF_MODEL_MAX_IO];
  uint32_t bits[VKF_MODEL_MAX_IO], want_bits = 0;
  uint32_t n = outputs_of(m, decl, bits);
  for (uint32_t i = 0; i < n; i++)
    if (want[i]) want_bits |= bits[i];
  vkf_bigbird_build_options bo = {
      .batch = o->batch, .seq_len = o->seq_len, .dtype = o->dtype, .outputs = want_bits};
  vkf_bigbird_graph bg;
  VKF_RETURN_IF_ERROR(vkf_bigbird_build(m, &bo, &bg));
  out->graph = bg.graph;
  out->inputs[0] = bg.input_ids;
  out->inputs[1] = bg.attention_mask;
  out->inputs[2] = bg.token_type_ids;
  for (uint32_t i = 0; i < n; i++)
    if (want[i])
      out->outputs[i] = bits[i] == VKF_BIGBIRD_OUT_LAST_HIDDEN_STATE ? bg.last_hidden_state
                        : bits[i] == VKF_BIGBIRD_OUT_POOLER_OUTPUT   ? bg.pooler_output
                                                                     : bg.logits;
  return VKF_OK;
}

static const char *const model_types[] = {"big_bird", NULL};
static const char *const architectures[] = {"BigBirdModel", "BigBirdForMaskedLM",
                                            "BigBirdForSequenceClassification", NULL};

static vkf_status quantize(void *impl, const char *format) {
  return vkf_bigbird_quantize(impl, format);
}
static const struct vkf_arch_files *files(const void *impl) {
  return vkf_bigbird_files(impl);
}

const vkf_arch_entry vkf_entry_bigbird = {"bigbird",    model_types, architectures, load, destroy,
                                          architecture, declare,     build,         NULL, NULL,
                                          .quantize = quantize, .files = files,
    .text = 1, .pooled_embed = VKF_POOL_MEAN};
