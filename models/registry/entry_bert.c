/* BERT in the model registry: input_ids, attention_mask, token_type_ids in (Hugging Face's
 * defaults for the optional two); last_hidden_state, pooler_output, the task head's logits and the
 * sentence-transformers sentence_embedding out. */
#include "models/arch/bert.h"
#include "models/registry/arch_entry.h"

static vkf_status load(const char *dir, void **out_impl) {
  return vkf_bert_load(dir, (vkf_bert_model **)out_impl);
}
static void destroy(void *impl) {
  vkf_bert_destroy(impl);
}
static const char *architecture(const void *impl) {
  return vkf_bert_architecture(impl);
}

/* Outputs in declaration order with their build bits; absent ones are skipped. */
static uint32_t outputs_of(const vkf_bert_model *m, vkf_model_io *out, uint32_t *bits) {
  const vkf_hf_config *c = vkf_bert_config(m);
  int64_t d = c->hidden_size;
  uint32_t n = 0;
  out[n] = (vkf_model_io){
      .name = "last_hidden_state", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, d}};
  bits[n++] = VKF_BERT_OUT_LAST_HIDDEN_STATE;
  if (vkf_bert_has_pooler(m)) {
    out[n] = (vkf_model_io){.name = "pooler_output", .dtype = VKF_F32, .rank = 2, .shape = {-1, d}};
    bits[n++] = VKF_BERT_OUT_POOLER_OUTPUT;
  }
  if (vkf_bert_head_of(m) == VKF_BERT_HEAD_MASKED_LM) {
    out[n] = (vkf_model_io){
        .name = "logits", .dtype = VKF_F32, .rank = 3, .shape = {-1, -1, c->vocab_size}};
    bits[n++] = VKF_BERT_OUT_LOGITS;
  } else if (vkf_bert_head_of(m) == VKF_BERT_HEAD_CLASSIFICATION) {
    out[n] =
        (vkf_model_io){.name = "logits", .dtype = VKF_F32, .rank = 2, .shape = {-1, c->num_labels}};
    bits[n++] = VKF_BERT_OUT_LOGITS;
  }
  out[n] =
      (vkf_model_io){.name = "sentence_embedding", .dtype = VKF_F32, .rank = 2, .shape = {-1, d}};
  bits[n++] = VKF_BERT_OUT_SENTENCE_EMBEDDING;
  return n;
}

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_bert_model *m = impl;
  const vkf_hf_config *c = vkf_bert_config(m);
  int64_t max = c->max_position_embeddings;
  in[0] = (vkf_model_io){.name = "input_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .required = 1,
                         .fill = 0,
                         .value_bound = c->vocab_size};
  in[1] = (vkf_model_io){.name = "attention_mask",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .required = 0,
                         .fill = 1,
                         .value_bound = 2};
  in[2] = (vkf_model_io){.name = "token_type_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .required = 0,
                         .fill = 0,
                         .value_bound = c->type_vocab_size};
  *in_count = 3;
  uint32_t bits[VKF_MODEL_MAX_IO];
  *out_count = outputs_of(m, out, bits);
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  vkf_bert_model *m = impl;
  vkf_model_io decl[VKF_MODEL_MAX_IO];
  uint32_t bits[VKF_MODEL_MAX_IO], want_bits = 0;
  uint32_t n = outputs_of(m, decl, bits);
  for (uint32_t i = 0; i < n; i++)
    if (want[i]) want_bits |= bits[i];
  vkf_bert_build_options bo = {.batch = o->batch,
                               .seq_len = o->seq_len,
                               .dtype = o->dtype,
                               .outputs = want_bits,
                               .hf_forward = 1,
                               .attentions = o->attentions};
  vkf_bert_graph bg;
  VKF_RETURN_IF_ERROR(vkf_bert_build(m, &bo, &bg));
  out->graph = bg.graph;
  out->inputs[0] = bg.input_ids;
  out->inputs[1] = bg.attention_mask;
  out->inputs[2] = bg.token_type_ids;
  for (uint32_t i = 0; i < n; i++) {
    if (!want[i]) continue;
    uint32_t b = bits[i];
    out->outputs[i] = b == VKF_BERT_OUT_LAST_HIDDEN_STATE ? bg.last_hidden_state
                      : b == VKF_BERT_OUT_POOLER_OUTPUT   ? bg.pooler_output
                      : b == VKF_BERT_OUT_LOGITS          ? bg.logits
                                                          : bg.sentence_embedding;
  }
  return VKF_OK;
}

/* sentence-transformers' pipeline (bert_pipeline.h): its pooling over the encoder's tokens. */
static vkf_status embed(void *impl, vkf_model_embed *out) {
  const vkf_bert_pipeline *p = vkf_bert_pipeline_of(impl);
  vkf_embed_pooling pooling = p->pooling == VKF_BERT_POOL_CLS ? VKF_POOL_CLS : VKF_POOL_MEAN;
  *out = (vkf_model_embed){
      .encoder = impl, .pooling = pooling, .dims = vkf_bert_config(impl)->hidden_size};
  return VKF_OK;
}

static const char *const model_types[] = {"bert", NULL};
static const char *const architectures[] = {"BertModel", "BertForMaskedLM",
                                            "BertForSequenceClassification", NULL};

static int64_t attention_layers(const void *impl) {
  const vkf_hf_config *c = vkf_bert_config(impl);
  /* The efficient vkf_attention kinds have no probability matrix. */
  return vkf_hf_attn_is_softmax(c->attention.kind) ? c->num_hidden_layers : 0;
}

static vkf_status quantize(void *impl, const char *format) {
  return vkf_bert_quantize(impl, format);
}
static const struct vkf_arch_files *files(const void *impl) {
  return vkf_bert_files(impl);
}

const vkf_arch_entry vkf_entry_bert = {"bert",  model_types,     architectures, load,
                                       destroy, architecture,    declare,       build,
                                       NULL,    attention_layers, .quantize = quantize, .files = files,
                                       .text = 1,  .embed = embed};
