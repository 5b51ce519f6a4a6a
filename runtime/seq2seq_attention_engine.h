/* The device side of `vkf generate` for D2L's Bahdanau encoder-decoder
 * (models/arch/seq2seq_attention.h): the sources are encoded once (the encoder's outputs and
 * final GRU state come back to the host), then one STEP plan per token. Its whole decoding state
 * is the GRU state [L, rows, H], a few KiB, so it stays on the host and goes up with each step's
 * tokens; beam search reorders it there (no KV cache to copy on the device). */
#ifndef VKF_RUNTIME_SEQ2SEQ_ATTENTION_ENGINE_H
#define VKF_RUNTIME_SEQ2SEQ_ATTENTION_ENGINE_H

#include <stdint.h>

#include "host/device.h"
#include "models/arch/seq2seq_attention.h"

typedef struct vkf_s2sa_engine vkf_s2sa_engine;

/* Encodes `sources` sources (ids[i] of lens[i] >= 1 tokens), each alone at its own length, for
 * `rows` decoder rows (rows / sources adjacent rows per source, its beams); the steps attend to
 * each row's lens[i] encoder outputs, so every source gets the tokens it gets alone. */
vkf_status vkf_s2sa_engine_create(vkf_device *device, vkf_s2sa_model *model, int64_t rows,
                                  int64_t sources, const int64_t *const *ids, const int64_t *lens,
                                  vkf_s2sa_engine **out);
void vkf_s2sa_engine_destroy(vkf_s2sa_engine *engine);

/* One token per row from the current state: the next logits [rows, vocab] (owned by the engine
 * until the next call); the state advances. */
vkf_status vkf_s2sa_engine_step(vkf_s2sa_engine *engine, const int32_t *tokens,
                                const float **out_logits);
/* Row r's state becomes row rows[r]'s (beam search). */
vkf_status vkf_s2sa_engine_reorder(vkf_s2sa_engine *engine, const int64_t *rows);
/* The last step's attention weights [rows, S] over the (padded) sources. */
const float *vkf_s2sa_engine_weights(const vkf_s2sa_engine *engine, int64_t *out_src_len);

#endif
