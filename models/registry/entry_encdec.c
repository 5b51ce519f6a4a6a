/* Encoder–decoders in the model registry: input_ids and attention_mask (the source) and an optional
 * decoder_input_ids; without it the encoder runs alone (encoder_last_hidden_state), with it the
 * whole forward pass (logits, the decoder's last_hidden_state). */
#include "models/arch/encdec.h"
#include "models/registry/arch_entry.h"

static vkf_status load(const char *dir, void **out_impl) {
  return vkf_encdec_load(dir, (vkf_encdec_model **)out_impl);
}
static void destroy(void *impl) {
  vkf_encdec_destroy(impl);
}
static const char *architecture(const void *impl) {
  return vkf_encdec_architecture(impl);
}

enum { OUT_LOGITS = 0, OUT_ENCODER, OUT_DECODER };

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_encdec_model *m = impl;
  const vkf_hf_config *c = vkf_encdec_config(m);
  int64_t max = vkf_encdec_max_positions(m);
  in[0] = (vkf_model_io){.name = "input_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .required = 1,
                         .value_bound = vkf_encdec_source_vocab(m)};
  in[1] = (vkf_model_io){.name = "attention_mask",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .fill = 1,
                         .value_bound = 2};
  in[2] = (vkf_model_io){.name = "decoder_input_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = max,
                         .value_bound = c->vocab_size,
                         .target = 1};
  *in_count = 3;
  uint32_t n = 0;
  /* Fixed slots so the build can tell them apart: logits first when there is a head. */
  if (vkf_encdec_has_lm_head(m))
    out[n++] = (vkf_model_io){.name = "logits",
                              .dtype = VKF_F32,
                              .rank = 3,
                              .shape = {-1, -1, c->vocab_size},
                              .target = 1};
  out[n++] = (vkf_model_io){.name = "encoder_last_hidden_state",
                            .dtype = VKF_F32,
                            .rank = 3,
                            .shape = {-1, -1, c->hidden_size}};
  out[n++] = (vkf_model_io){.name = "last_hidden_state",
                            .dtype = VKF_F32,
                            .rank = 3,
                            .shape = {-1, -1, c->hidden_size},
                            .target = 1};
  *out_count = n;
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  vkf_encdec_model *m = impl;
  int head = vkf_encdec_has_lm_head(m);
  int logits = head && want[0];
  int enc = want[head ? 1 : 0], dec = want[head ? 2 : 1];
  if ((logits || dec) && !o->target_len)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: output %s needs input decoder_input_ids (without it the encoder "
                           "runs alone: encoder_last_hidden_state)",
                           vkf_encdec_architecture(m), logits ? "logits" : "last_hidden_state");
  vkf_encdec_build_options bo = {.mode = o->target_len ? VKF_ENCDEC_FULL : VKF_ENCDEC_ENCODE,
                                 .batch = o->batch,
                                 .src_len = o->seq_len,
                                 .tgt_len = o->target_len,
                                 .dtype = o->dtype,
                                 .encoder_output = enc,
                                 .logits = logits,
                                 .last_hidden_state = dec};
  vkf_encdec_graph eg;
  VKF_RETURN_IF_ERROR(vkf_encdec_build(m, &bo, &eg));
  out->graph = eg.graph;
  out->inputs[0] = eg.input_ids;
  out->inputs[1] = eg.attention_mask;
  out->inputs[2] = eg.decoder_input_ids;
  if (head) out->outputs[0] = eg.logits;
  out->outputs[head ? 1 : 0] = eg.encoder_last_hidden_state;
  out->outputs[head ? 2 : 1] = eg.last_hidden_state;
  /* ENCODE and FULL builds allocate cache arrays only for STEP; free the empty ones. */
  eg.graph = NULL;
  vkf_encdec_graph_release(&eg);
  return VKF_OK;
}

/* An encoder–decoder: the prompt is the source, the decoder starts from its start token; padded
 * sources carry the config's pad id when it is a source id, else 0 (masked out either way). */
static vkf_status generate(void *impl, vkf_model_generate *out) {
  const vkf_hf_config *c = vkf_encdec_config(impl);
  if (!vkf_encdec_has_lm_head(impl))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "has no language-model head");
  int64_t max = vkf_encdec_max_positions(impl);
  *out = (vkf_model_generate){
      .engine = VKF_GEN_ENGINE_SEQ2SEQ,
      .engine_model = impl,
      .vocab = c->vocab_size,
      .prompt_vocab = vkf_encdec_source_vocab(impl),
      .max_ctx = max,
      .config_ctx = c->max_position_embeddings,
      .max_source = max,
      .decoder_start_id = c->decoder_start_token_id,
      .bos_id = c->bos_token_id,
      .pad_id = c->pad_token_id >= 0 && c->pad_token_id < c->src_vocab_size ? c->pad_token_id : 0,
      .text_prompts = 1};
  return VKF_OK;
}

static const char *const model_types[] = {"bart", "marian", "t5", "mt5", "d2l_transformer", NULL};
static const char *const architectures[] = {"BartForConditionalGeneration",
                                            "BartModel",
                                            "MarianMTModel",
                                            "MarianModel",
                                            "T5ForConditionalGeneration",
                                            "T5Model",
                                            "MT5ForConditionalGeneration",
                                            "MT5Model",
                                            "D2LTransformer",
                                            NULL};

static vkf_status quantize(void *impl, const char *format) {
  return vkf_encdec_quantize(impl, format);
}
static const struct vkf_arch_files *files(const void *impl) {
  return vkf_encdec_files(impl);
}

const vkf_arch_entry vkf_entry_encdec = {"encdec",     model_types, architectures, load, destroy,
                                         architecture, declare,     build,         NULL, NULL,
                                         .quantize = quantize, .files = files,
                                         .text = 1, .generate = generate};
