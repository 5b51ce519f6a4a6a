/* The device side of `vkf generate` for Transformer-XL (models/arch/transfo_xl.h), as
 * transformers 4.36's generate() runs TransfoXLLMHeadModel: the first call takes each row's whole
 * prompt on mem_len zero rows of memory (init_mems), every later call the last token alone on
 * the memory the previous call returned (prepare_inputs_for_generation feeds mems as the past);
 * the memory replaces the KV cache. It stays on the host ([rows, n_layer, mem_len, d_model], a few
 * KiB per row) and goes up with each step's token; beam search reorders it there. */
#ifndef VKF_RUNTIME_TRANSFO_XL_ENGINE_H
#define VKF_RUNTIME_TRANSFO_XL_ENGINE_H

#include <stdint.h>

#include "host/device.h"
#include "models/arch/transfo_xl.h"

typedef struct vkf_txl_engine vkf_txl_engine;

/* `rows` rows; the model's mem_len must be positive (with 0 Hugging Face keeps no memory and
 * reruns the whole sequence every step: INVALID_ARGUMENT). */
vkf_status vkf_txl_engine_create(vkf_device *device, vkf_txl_model *model, int64_t rows,
                                 vkf_txl_engine **out);
void vkf_txl_engine_destroy(vkf_txl_engine *engine);

/* Each row's prompt (ids [rows, prompt_len] right-padded, lens[r] >= 1 tokens), each run alone
 * at its own length: the log-probabilities [rows, vocab] of each row's last prompt token (owned
 * by the engine until the next call); the memory becomes the prompt's. */
vkf_status vkf_txl_engine_prefill(vkf_txl_engine *engine, const int32_t *ids, int64_t prompt_len,
                                  const int64_t *lens, const float **out_scores);
/* One token per row on the memory: the next log-probabilities [rows, vocab]; the memory moves. */
vkf_status vkf_txl_engine_step(vkf_txl_engine *engine, const int32_t *tokens,
                               const float **out_scores);
/* Row r's memory becomes row rows[r]'s (beam search). */
vkf_status vkf_txl_engine_reorder(vkf_txl_engine *engine, const int64_t *rows);

#endif
