/* The one generation engine interface the loops of `vkf generate` (greedy / sampling in
 * generate_loop.c, beams in generate_beam.c) drive: a model on the device that takes each row's
 * prompt, then one token per row per step, and returns logits; its self-attention cache can be
 * reordered. Every engine (decoder-only, seq2seq, Bahdanau, Transformer-XL, Reformer) fills this
 * table when opened for a model's generate facet (models/registry/model.h), which names the engine
 * and hands over the model it runs. A decoder-only model's prompt is the user's prompt; an
 * encoder–decoder's is its decoder start token, its source having been encoded when the backend
 * was opened. */
#ifndef VKF_RUNTIME_GEN_BACKEND_H
#define VKF_RUNTIME_GEN_BACKEND_H

#include <stdint.h>

#include "host/device.h"
#include "host/kv_cache.h"
#include "models/registry/model.h"

typedef struct vkf_gen_backend {
  void *impl;
  /* Right-padded prompts ids [rows, prompt_len], lens[r] in [1, prompt_len]: logits [rows, vocab]
   * of each row's last prompt token. */
  vkf_status (*prefill)(void *impl, const int32_t *ids, const int64_t *lens,
                        const float **out_logits);
  /* One token per row at positions[r] (the row's earlier tokens fill 0 .. positions[r]-1). */
  vkf_status (*step)(void *impl, const int32_t *tokens, const int64_t *positions,
                     const float **out_logits);
  vkf_kv_cache *(*cache)(void *impl);
  void (*destroy)(void *impl);
  /* Optional: a backend whose state is not a KV cache (the Bahdanau encoder-decoder's GRU state)
   * moves row rows[r]'s state to row r itself; beam search then calls this instead of copying
   * cache rows, and `cache` may return NULL. */
  vkf_status (*reorder)(void *impl, const int64_t *rows);
  /* Optional (NULL: not measured): device bytes of the weights and prefill plan, the decode plan
   * and the cache, for the speed line. */
  void (*memory)(void *impl, uint64_t *prefill_plan, uint64_t *decode_plan, uint64_t *cache);
} vkf_gen_backend;

/* What a backend is opened for. Row r belongs to source r / (rows / sources) (beams of one source
 * are adjacent). */
typedef struct vkf_gen_backend_options {
  int64_t rows;
  int64_t prompt_len; /* the longest prompt (decoder-only) */
  int64_t capacity;   /* cache positions of the decoder */
  vkf_dtype dtype, cache_dtype;
  int64_t chunk; /* decoder-only prefill chunk (0: the engine's default) */
  /* Encoder–decoders: each source's ids (unpadded) and length, and the pad id they are padded
   * with (attention_mask 0 there). */
  int64_t sources;
  const int64_t *const *source_ids;
  const int64_t *source_lens;
  int64_t source_pad_id;
} vkf_gen_backend_options;

/* Opens the engine the generate facet names for its model (for an encoder–decoder: and encodes
 * the sources). */
vkf_status vkf_gen_backend_open(vkf_device *device, const vkf_model_generate *model,
                                const vkf_gen_backend_options *options, vkf_gen_backend *out);
void vkf_gen_backend_close(vkf_gen_backend *backend);

#endif
