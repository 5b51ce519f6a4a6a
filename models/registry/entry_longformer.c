/* Longformer in the model registry: input_ids, attention_mask, global_attention_mask,
 * token_type_ids in (Hugging Face's defaults for the optional three: ones; none, the first
 * token for LongformerForSequenceClassification or the question for
 * LongformerForQuestionAnswering; zeros); last_hidden_state, pooler_output and the task head's
 * logits (start_logits, end_logits for question answering) out. Where the global tokens are is read
 * on the host (vkf_model_derive -> vkf_longformer_derive): the graph takes the derived position ids
 * and indices as inputs after the declared ones, and its shapes depend only on the most global
 * tokens in a row of the batch. */
#include <string.h>

#include "models/arch/longformer.h"
#include "models/registry/arch_entry.h"

static vkf_status load(const char *dir, void **out_impl) {
  return vkf_longformer_load(dir, (vkf_longformer_model **)out_impl);
}
static void destroy(void *impl) {
  vkf_longformer_destroy(impl);
}
static const char *architecture(const void *impl) {
  return vkf_longformer_architecture(impl);
}

static uint32_t outputs_of(const vkf_longformer_model *m, vkf_model_io *out, uint32_t *bits) {
  const vkf_hf_config *c = vkf_longformer_config(m);
  int64_t d = c->hidden_size;
  uint32_t n = 0;
  out[n] = (vkf_model_io){
      .name = "last_hidden_state", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, d}};
  bits[n++] = VKF_LONGFORMER_OUT_LAST_HIDDEN_STATE;
  if (vkf_longformer_has_pooler(m)) {
    out[n] = (vkf_model_io){.name = "pooler_output", .dtype = VKF_F32, .rank = 2, .shape = {-1, d}};
    bits[n++] = VKF_LONGFORMER_OUT_POOLER_OUTPUT;
  }
  vkf_longformer_head head = vkf_longformer_head_of(m);
  if (head == VKF_LONGFORMER_HEAD_TOKEN_CLASSIFICATION) {
    out[n] = (vkf_model_io){
        .name = "logits", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, c->num_labels}};
    bits[n++] = VKF_LONGFORMER_OUT_LOGITS;
  } else if (head == VKF_LONGFORMER_HEAD_SEQUENCE_CLASSIFICATION) {
    out[n] =
        (vkf_model_io){.name = "logits", .dtype = VKF_F32, .rank = 2, .shape = {-1, c->num_labels}};
    bits[n++] = VKF_LONGFORMER_OUT_LOGITS;
  } else if (head == VKF_LONGFORMER_HEAD_QUESTION_ANSWERING) {
    const char *qa[2] = {"start_logits", "end_logits"};
    for (int k = 0; k < 2; k++) {
      out[n] = (vkf_model_io){.name = qa[k], .dtype = VKF_F32, .rank = 2, .shape = {-1, -1}};
      bits[n++] = k ? VKF_LONGFORMER_OUT_END_LOGITS : VKF_LONGFORMER_OUT_START_LOGITS;
    }
  }
  return n;
}

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_longformer_model *m = impl;
  const vkf_hf_config *c = vkf_longformer_config(m);
  int64_t max = vkf_longformer_max_seq(m);
  const char *names[4] = {"input_ids", "attention_mask", "global_attention_mask", "token_type_ids"};
  int64_t bounds[4] = {c->vocab_size, 2, 2, c->type_vocab_size};
  for (int i = 0; i < 4; i++)
    in[i] = (vkf_model_io){.name = names[i],
                           .dtype = VKF_I32,
                           .rank = 2,
                           .shape = {-1, -1},
                           .max_seq = max,
                           .required = i == 0,
                           .fill = i == 1,
                           .value_bound = bounds[i]};
  if (vkf_longformer_head_of(m) == VKF_LONGFORMER_HEAD_SEQUENCE_CLASSIFICATION)
    in[2].fill_note = "the first token global, as transformers does when it is None";
  if (vkf_longformer_head_of(m) == VKF_LONGFORMER_HEAD_QUESTION_ANSWERING)
    in[2].fill_note =
        "the question (tokens before the first sep_token_id) global, as transformers "
        "does when it is None";
  *in_count = 4;
  uint32_t bits[VKF_MODEL_MAX_IO];
  *out_count = outputs_of(m, out, bits);
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  vkf_longformer_model *m = impl;
  vkf_model_io decl[VKF_MODEL_MAX_IO];
  uint32_t bits[VKF_MODEL_MAX_IO], want_bits = 0;
  uint32_t n = outputs_of(m, decl, bits);
  for (uint32_t i = 0; i < n; i++)
    if (want[i]) want_bits |= bits[i];
  vkf_longformer_build_options lo = {.batch = o->batch ? o->batch : 1,
                                     .seq_len = o->seq_len,
                                     .global_tokens = o->derived ? o->derived->build_param : 0,
                                     .dtype = o->dtype,
                                     .outputs = want_bits};
  vkf_longformer_graph lg;
  VKF_RETURN_IF_ERROR(vkf_longformer_build(m, &lo, &lg));
  out->graph = lg.graph;
  out->input_count = 4 + lg.derived_count;
  for (uint32_t i = 0; i < out->input_count; i++) out->inputs[i] = lg.inputs[i];
  for (uint32_t i = 0; i < n; i++)
    if (want[i])
      out->outputs[i] = bits[i] == VKF_LONGFORMER_OUT_LAST_HIDDEN_STATE ? lg.last_hidden_state
                        : bits[i] == VKF_LONGFORMER_OUT_POOLER_OUTPUT   ? lg.pooler_output
                        : bits[i] == VKF_LONGFORMER_OUT_START_LOGITS    ? lg.start_logits
                        : bits[i] == VKF_LONGFORMER_OUT_END_LOGITS      ? lg.end_logits
                                                                        : lg.logits;
  return VKF_OK;
}

static vkf_status derive(const void *impl, const int32_t *const *inputs, int64_t batch,
                         int64_t seq_len, vkf_model_derived *out) {
  vkf_longformer_derived d;
  VKF_RETURN_IF_ERROR(
      vkf_longformer_derive(impl, inputs[0], inputs[1], inputs[2], batch, seq_len, &d));
  _Static_assert((int)VKF_LONGFORMER_DERIVED_COUNT <= (int)VKF_MODEL_MAX_DERIVED, "fits");
  out->build_param = d.global_tokens;
  out->count = d.count;
  memcpy(out->data, d.data, sizeof d.data);
  memcpy(out->size, d.size, sizeof d.size);
  return VKF_OK;
}

static const char *const model_types[] = {"longformer", NULL};
static const char *const architectures[] = {"LongformerModel", "LongformerForTokenClassification",
                                            "LongformerForSequenceClassification",
                                            "LongformerForQuestionAnswering", NULL};

static vkf_status quantize(void *impl, const char *format) {
  return vkf_longformer_quantize(impl, format);
}
static const struct vkf_arch_files *files(const void *impl) {
  return vkf_longformer_files(impl);
}

const vkf_arch_entry vkf_entry_longformer = {"longformer", model_types,  architectures, load,
                                             destroy,      architecture, declare,       build,
                                             derive,       NULL, .quantize = quantize, .files = files,
    .text = 1, .pooled_embed = VKF_POOL_MEAN};
