/* `vkf generate --num-beams N` for decoder-only models: generate(num_beams=N) of transformers
 * 4.38.2 with the device KV cache: every source's prompt expanded to N rows, one prefill, then per
 * token one beam-search step on the host (models/generate/beam_search.h), one device reorder of
 * the cache rows (kv_reorder.h) and one decode step for all rows. */
#ifndef VKF_RUNTIME_GENERATE_BEAM_H
#define VKF_RUNTIME_GENERATE_BEAM_H

#include <stdint.h>

#include "host/device.h"
#include "runtime/gen_backend.h"
#include "models/generate/beam_search.h"

typedef struct vkf_gen_beam_request {
  int64_t batch;                 /* sources */
  const int64_t *const *prompts; /* [batch]: each source's ids, unpadded */
  const int64_t *prompt_lens;    /* [batch], each >= 1 */
  int64_t max_new;               /* new tokens at most: max_length = longest prompt + max_new */
  int64_t capacity;              /* cache positions: every prompt + max_new must fit */
  vkf_dtype dtype, cache_dtype;
  int64_t chunk; /* prefill chunk (0: the engine's default) */
  /* Encoder–decoders: each source (prompts are then the decoder start tokens). */
  const int64_t *const *source_ids;
  const int64_t *source_lens;
  int64_t source_pad_id;
  /* num_beams, length_penalty, early_stopping, eos / pad ids and the processors; batch,
   * vocab_size, prompt_len and max_length are filled in here. */
  vkf_beam_options beam;
} vkf_gen_beam_request;

/* One source's best sequence: the tokens after its prompt (the eos Hugging Face writes after a
 * finished hypothesis included, its padding not), and its score. */
typedef struct vkf_gen_beam_result {
  int64_t *generated; /* malloc'd; free it */
  int64_t count;
  float score;
} vkf_gen_beam_result;

/* Prompts shorter than the longest are left-padded with beam.pad_token_id in the rows the beam
 * search sees (as a Hugging Face tokenizer pads a batch for generate(): the repetition penalty and
 * n-gram bans see the padding, lengths count it), while the model runs each row unpadded at its
 * own positions, which is what the attention mask makes of the padded row. out[batch]; *out_steps
 * gets the decode steps run (for the speed line). */
vkf_status vkf_gen_beam_run(vkf_device *device, const vkf_model_generate *model,
                            const vkf_gen_beam_request *request, vkf_gen_beam_result *out,
                            int64_t *out_steps);

#endif
