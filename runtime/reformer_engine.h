/* The device side of `vkf generate` for ReformerModelWithLMHead (models/arch/reformer.h): Hugging
 * Face's cached generation, row by row (each row alone, batch 1). The prefill runs the prompt's
 * forward and keeps, per layer, the layer-normed states and (LSH layers that hashed) the buckets
 * with their rounds' offsets, as ReformerAttention caches them; each step runs one token through
 * vkf_reformer_build_step against that cache and appends the layer's new state and buckets, so
 * greedy ids equal generate()'s. Rows in step (beams, prompts of one length) copy Hugging Face's
 * batched cached LSH step, which reads every row's keys from row 0 (its batch offset is always 0):
 * row 0 steps first and lends the others its states. Rows of different lengths run as alone. */
#ifndef VKF_RUNTIME_REFORMER_ENGINE_H
#define VKF_RUNTIME_REFORMER_ENGINE_H

#include <stdint.h>

#include "host/device.h"
#include "models/arch/reformer.h"

typedef struct vkf_reformer_engine vkf_reformer_engine;

/* `rows` rows of at most `capacity` tokens each. */
vkf_status vkf_reformer_engine_create(vkf_device *device, vkf_reformer *model, int64_t rows,
                                      int64_t capacity, vkf_dtype dtype,
                                      vkf_reformer_engine **out);
void vkf_reformer_engine_destroy(vkf_reformer_engine *engine);
/* Right-padded prompts ids [rows, prompt_len], lens[r] in [1, prompt_len]: logits [rows, vocab]
 * of each row's last prompt token (owned by the engine until the next call). */
vkf_status vkf_reformer_engine_prefill(vkf_reformer_engine *engine, const int32_t *ids,
                                       int64_t prompt_len, const int64_t *lens,
                                       const float **out_logits);
/* tokens[r] at positions[r], at most the row's cached length: an earlier position (a finished
 * row repeating its last token) drops the cache from there first. */
vkf_status vkf_reformer_engine_step(vkf_reformer_engine *engine, const int32_t *tokens,
                                    const int64_t *positions, const float **out_logits);
/* Row r becomes row rows[r] (beam search). */
vkf_status vkf_reformer_engine_reorder(vkf_reformer_engine *engine, const int64_t *rows);

#endif
