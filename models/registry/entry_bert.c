/* BERT in the model registry: input_ids, attention_mask, token_type_ids in (Hugging Face's
 * defaults for the optional two); last_hidden_state, pooler_output, the task head's logits and the
 * sentence-transformers sentence_embedding out. */
#include "models/arch/bert.h"
#include "models/registry/arch_entry.h"

static const char *architecture(const void *impl) {
  return vkf_bert_architecture(impl);
}

/* Outputs in declaration order with their build bits; absent ones are skipped. */
static uint32_t outputs_of(const vkf_bert_model *m, vkf_model_io *out, uint32_t *bits) {
  const vkf_hf_config *c = vkf_bert_config(m);
  int64_t d = c->hidden_size;
  uint32_t n = 0;
  out[n] = vkf_declare_f32("last_hidden_state", 3, d);
  bits[n++] = VKF_BERT_OUT_LAST_HIDDEN_STATE;
  if (vkf_bert_has_pooler(m)) {
    out[n] = vkf_declare_f32("pooler_output", 2, d);
    bits[n++] = VKF_BERT_OUT_POOLER_OUTPUT;
  }
  if (vkf_bert_head_of(m) == VKF_BERT_HEAD_MASKED_LM) {
    out[n] = vkf_declare_f32("logits", 3, c->vocab_size);
    bits[n++] = VKF_BERT_OUT_LOGITS;
  } else if (vkf_bert_head_of(m) == VKF_BERT_HEAD_CLASSIFICATION) {
    out[n] = vkf_declare_f32("logits", 2, c->num_labels);
    bits[n++] = VKF_BERT_OUT_LOGITS;
  }
  out[n] = vkf_declare_f32("sentence_embedding", 2, d);
  bits[n++] = VKF_BERT_OUT_SENTENCE_EMBEDDING;
  return n;
}

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_bert_model *m = impl;
  const vkf_hf_config *c = vkf_bert_config(m);
  *in_count =
      vkf_declare_text_inputs(in, 3, c->max_position_embeddings, c->vocab_size, c->type_vocab_size);
  uint32_t bits[VKF_MODEL_MAX_IO];
  *out_count = outputs_of(m, out, bits);
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  vkf_bert_model *m = impl;
  vkf_model_io decl[VKF_MODEL_MAX_IO];
  uint32_t bits[VKF_MODEL_MAX_IO];
  uint32_t n = outputs_of(m, decl, bits);
  vkf_bert_build_options bo = {.batch = o->batch,
                               .seq_len = o->seq_len,
                               .dtype = o->dtype,
                               .outputs = vkf_declare_wanted(bits, n, want),
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

const vkf_arch_entry vkf_entry_bert = {
    .family = "bert",
    .model_types = model_types,
    .architectures = architectures,
    .loader = &vkf_bert_loader,
    .architecture = architecture,
    .declare = declare,
    .build = build,
    .attention_layers = attention_layers,
    .text = 1,
    .embed = embed,
};
