/* The device side of `vkf generate` for ReformerModelWithLMHead (models/arch/reformer.h): each
 * row's ids stay on the host, and every step runs the whole row again, alone, with the windows
 * Hugging Face's cached generation gives the generated tokens (vkf_reformer_build's prompt_len),
 * so the greedy ids equal generate()'s. A recompute costs O(n) per layer and token: fine for the
 * small models this runs, and it needs no cache of past states and buckets. */
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
/* tokens[r] at positions[r] (the row's earlier tokens fill 0 .. positions[r]-1). */
vkf_status vkf_reformer_engine_step(vkf_reformer_engine *engine, const int32_t *tokens,
                                    const int64_t *positions, const float **out_logits);
/* Row r becomes row rows[r] (beam search). */
vkf_status vkf_reformer_engine_reorder(vkf_reformer_engine *engine, const int64_t *rows);

#endif
