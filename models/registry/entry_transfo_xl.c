/* Transformer-XL in the model registry: input_ids [B, Q] and the optional mems, Hugging Face's
 * list of per-layer memories stacked as [n_layer, M, B, d_model] (time-major, as the model keeps
 * them); outputs last_hidden_state, prediction_scores (the LM head's log-probabilities) and the
 * next mems. Without mems a segment starts as Hugging Face's does: mem_len zero rows
 * (init_mems); mems with 0 rows is the empty start. */
#include <stdint.h>
#include <string.h>

#include "models/arch/transfo_xl.h"
#include "models/registry/arch_entry.h"

static const char *architecture(const void *impl) {
  return vkf_txl_has_head(impl) ? "TransfoXLLMHeadModel" : "TransfoXLModel";
}

enum { OUT_HIDDEN = 0, OUT_MEMS, OUT_SCORES };

static void declare(const void *impl, vkf_model_io *in, uint32_t *in_count, vkf_model_io *out,
                    uint32_t *out_count) {
  const vkf_txl_config *c = vkf_txl_config_of(impl);
  in[0] = (vkf_model_io){.name = "input_ids",
                         .dtype = VKF_I32,
                         .rank = 2,
                         .shape = {-1, -1},
                         .max_seq = VKF_TXL_MAX_SEGMENT,
                         .required = 1,
                         .value_bound = c->vocab_size};
  in[1] = (vkf_model_io){.name = "mems",
                         .dtype = VKF_F32,
                         .rank = 4,
                         .shape = {c->n_layer, -1, -1, c->d_model},
                         .fill_note = "mem_len zero rows (Hugging Face's init_mems)",
                         .batch_dim = 2,
                         .memory = 1,
                         .memory_default = c->mem_len};
  *in_count = 2;
  out[OUT_HIDDEN] = vkf_declare_f32("last_hidden_state", 3, c->d_model);
  out[OUT_MEMS] = (vkf_model_io){.name = "mems",
                                 .dtype = VKF_F32,
                                 .rank = 4,
                                 .shape = {c->n_layer, -1, -1, c->d_model},
                                 .batch_dim = 2,
                                 .memory = 1};
  *out_count = 2;
  if (vkf_txl_has_head(impl)) {
    out[OUT_SCORES] = vkf_declare_f32("prediction_scores", 3, c->vocab_size);
    *out_count = 3;
  }
}

static vkf_status build(void *impl, const vkf_model_build_options *o, const int *want,
                        vkf_model_graph *out) {
  vkf_txl_build_options bo = {.batch = o->batch,
                              .seq_len = o->seq_len,
                              .mem_len = o->memory_len,
                              .dtype = o->dtype ? o->dtype : VKF_F32,
                              .last_hidden_state = want[OUT_HIDDEN],
                              .mems = want[OUT_MEMS],
                              .prediction_scores = vkf_txl_has_head(impl) && want[OUT_SCORES]};
  vkf_txl_graph tg;
  VKF_RETURN_IF_ERROR(vkf_txl_build(impl, &bo, &tg));
  out->graph = tg.graph;
  out->inputs[0] = tg.input_ids;
  out->inputs[1] = tg.mems;
  out->outputs[OUT_HIDDEN] = tg.last_hidden_state;
  out->outputs[OUT_MEMS] = tg.new_mems;
  out->outputs[OUT_SCORES] = tg.prediction_scores;
  return VKF_OK;
}

/* TransfoXLLMHeadModel: the memory instead of a cache and no positions, so the context is bounded
 * by the graphs only. */
static vkf_status generate(void *impl, vkf_model_generate *out) {
  const vkf_txl_config *c = vkf_txl_config_of(impl);
  if (!vkf_txl_has_head(impl))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "has no language-model head (TransfoXLLMHeadModel)");
  *out = (vkf_model_generate){.engine = VKF_GEN_ENGINE_TRANSFO_XL,
                              .engine_model = impl,
                              .vocab = c->vocab_size,
                              .prompt_vocab = c->vocab_size,
                              .max_ctx = VKF_TXL_MAX_KEYS,
                              .decoder_start_id = -1,
                              .bos_id = -1,
                              .pad_id = -1,
                              .text_prompts = 1};
  return VKF_OK;
}

static const char *const model_types[] = {"transfo-xl", NULL};
static const char *const architectures[] = {"TransfoXLLMHeadModel", "TransfoXLModel", NULL};

const vkf_arch_entry vkf_entry_transfo_xl = {
    .family = "transfo_xl",
    .model_types = model_types,
    .architectures = architectures,
    .loader = &vkf_txl_loader,
    .architecture = architecture,
    .declare = declare,
    .build = build,
    .text = 1,
    .generate = generate,
};
