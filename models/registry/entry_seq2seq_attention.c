/* D2L's Bahdanau encoder-decoder in the model registry: input_ids [B, S], valid_lens [B]
 * (the source's lengths, as D2L's enc_valid_lens) and an optional decoder_input_ids [B, T];
 * without it the encoder runs alone (encoder_outputs), with it the teacher-forced decoder (logits,
 * every step's attention_weights). encoder_outputs is time-major [S, B, H], as the module returns
 * it. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "models/arch/seq2seq_attention.h"
#include "models/registry/arch_entry.h"

enum { OUT_LOGITS = 0, OUT_WEIGHTS, OUT_ENCODER };

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_hf_config *c = vkf_s2sa_config(impl);
  in[0] = (vkf_model_io){.name = "input_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = VKF_S2SA_MAX_SOURCE,
                         .required = 1,
                         .value_bound = c->src_vocab_size};
  /* Absent: no masking (D2L's valid_lens None); the op clamps lengths to the source's. */
  in[1] = (vkf_model_io){.name = "valid_lens",
                         .dtype = VKF_I32,
                         .rank = 1,
                         .shape = {-1},
                         .fill = INT32_MAX,
                         .fill_note = "the source length (no masking)"};
  in[2] = (vkf_model_io){.name = "decoder_input_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = VKF_S2SA_MAX_TARGET,
                         .value_bound = c->vocab_size,
                         .target = 1};
  *in_count = 3;
  out[OUT_LOGITS] = vkf_declare_f32("logits", 3, c->vocab_size);
  out[OUT_WEIGHTS] = vkf_declare_f32("attention_weights", 3, -1);
  out[OUT_LOGITS].target = out[OUT_WEIGHTS].target = 1;
  out[OUT_ENCODER] = vkf_declare_f32("encoder_outputs", 3, c->hidden_size);
  out[OUT_ENCODER].time_major = 1;
  *out_count = 3;
}

/* D2L's masked_softmax spreads a row whose valid length is below 1 evenly over every key
 * (all scores -1e6); the fused op gives such a row no weight at all. Refused rather than wrong. */
static vkf_status derive(const void *impl, const int32_t *const *inputs, int64_t batch,
                         int64_t seq_len, vkf_model_derived *out) {
  (void)impl, (void)seq_len, (void)out;
  if (!inputs[1]) return VKF_OK;
  for (int64_t b = 0; b < batch; b++)
    if (inputs[1][b] < 1)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "input valid_lens: value %" PRId32 " at [%" PRId64
                             "] is below 1 (each source has at least one token)",
                             inputs[1][b], b);
  return VKF_OK;
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  int dec = want[OUT_LOGITS] || want[OUT_WEIGHTS];
  if (dec && !o->target_len)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "D2LSeq2SeqAttention: output %s needs input decoder_input_ids "
                           "(without it the encoder runs alone: encoder_outputs)",
                           want[OUT_LOGITS] ? "logits" : "attention_weights");
  vkf_s2sa_build_options bo = {.mode = o->target_len ? VKF_S2SA_FULL : VKF_S2SA_ENCODE,
                               .batch = o->batch,
                               .src_len = o->seq_len,
                               .tgt_len = o->target_len,
                               .dtype = o->dtype ? o->dtype : VKF_F32,
                               .encoder_outputs = want[OUT_ENCODER],
                               .logits = want[OUT_LOGITS],
                               .attention_weights = want[OUT_WEIGHTS]};
  vkf_s2sa_graph sg;
  VKF_RETURN_IF_ERROR(vkf_s2sa_build(impl, &bo, &sg));
  out->graph = sg.graph;
  out->inputs[0] = sg.input_ids;
  out->inputs[1] = sg.valid_lens;
  out->inputs[2] = sg.decoder_input_ids;
  out->outputs[OUT_LOGITS] = sg.logits;
  out->outputs[OUT_WEIGHTS] = sg.attention_weights;
  out->outputs[OUT_ENCODER] = sg.encoder_outputs;
  return VKF_OK;
}

/* The Bahdanau encoder–decoder: no positions (its state is the GRU's), so the decoder's context
 * and the source are bounded by its graphs only. */
static vkf_status generate(void *impl, vkf_model_generate *out) {
  const vkf_hf_config *c = vkf_s2sa_config(impl);
  *out = (vkf_model_generate){
      .engine = VKF_GEN_ENGINE_BAHDANAU,
      .engine_model = impl,
      .vocab = c->vocab_size,
      .prompt_vocab = c->src_vocab_size,
      .max_ctx = VKF_S2SA_MAX_SOURCE,
      .config_ctx = c->max_position_embeddings,
      .max_source = VKF_S2SA_MAX_SOURCE,
      .decoder_start_id = c->decoder_start_token_id,
      .bos_id = c->bos_token_id,
      .pad_id = c->pad_token_id >= 0 && c->pad_token_id < c->src_vocab_size ? c->pad_token_id : 0,
      .text_prompts = 1};
  return VKF_OK;
}

static const char *const model_types[] = {"d2l_seq2seq_attention", NULL};
static const char *const architectures[] = {"D2LSeq2SeqAttention", NULL};

const vkf_arch_entry vkf_entry_seq2seq_attention = {
    .family = "seq2seq_attention",
    .model_types = model_types,
    .architectures = architectures,
    .loader = &vkf_s2sa_loader,
    .declare = declare,
    .build = build,
    .derive = derive,
    .text = 1,
    .generate = generate,
    .additive_attention = 1,
};
