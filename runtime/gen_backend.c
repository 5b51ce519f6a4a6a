/* The engines behind the one interface of gen_backend.h: the decoder-only engine
 * (generate_engine.c) as it is, the encoder–decoder engine (seq2seq_engine.c) with its sources
 * encoded at open and its "prefill" a step of the decoder start tokens at position 0, and the
 * Bahdanau, Reformer and Transformer-XL engines; one open per vkf_gen_engine_kind. */
#include "runtime/gen_backend.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/generate_engine.h"
#include "runtime/reformer_engine.h"
#include "runtime/seq2seq_attention_engine.h"
#include "runtime/seq2seq_engine.h"
#include "runtime/transfo_xl_engine.h"

static vkf_status dec_prefill(void *impl, const int32_t *ids, const int64_t *lens,
                              const float **out) {
  return vkf_gen_engine_prefill(impl, ids, lens, out);
}
static vkf_status dec_step(void *impl, const int32_t *tokens, const int64_t *positions,
                           const float **out) {
  return vkf_gen_engine_step(impl, tokens, positions, out);
}
static vkf_kv_cache *dec_cache(void *impl) {
  return vkf_gen_engine_cache(impl);
}
static void dec_destroy(void *impl) {
  vkf_gen_engine_destroy(impl);
}
static void dec_memory(void *impl, uint64_t *prefill_plan, uint64_t *decode_plan,
                       uint64_t *cache) {
  vkf_gen_engine_memory m = vkf_gen_engine_memory_of(impl);
  *prefill_plan = m.prefill_plan, *decode_plan = m.decode_plan, *cache = m.cache;
}

static vkf_status open_decoder(vkf_device *device, void *model, const vkf_gen_backend_options *o,
                               vkf_gen_backend *out) {
  vkf_gen_engine_options eo = {.batch = o->rows,
                               .prompt_len = o->prompt_len,
                               .capacity = o->capacity,
                               .dtype = o->dtype,
                               .cache_dtype = o->cache_dtype,
                               .chunk = o->chunk};
  vkf_gen_engine *e = NULL;
  VKF_RETURN_IF_ERROR(vkf_gen_engine_create(device, model, &eo, &e));
  *out = (vkf_gen_backend){e, dec_prefill, dec_step, dec_cache, dec_destroy, NULL, dec_memory};
  return VKF_OK;
}

typedef struct s2s_backend {
  vkf_s2s_engine *engine;
  int64_t rows;
  int32_t *tokens;
  int64_t *positions;
} s2s_backend;

static vkf_status s2s_step(void *impl, const int32_t *tokens, const int64_t *positions,
                           const float **out) {
  s2s_backend *b = impl;
  return vkf_s2s_engine_step(b->engine, tokens, positions, out);
}
/* The decoder's prompt is one start token per row (lens are 1): a step at position 0. */
static vkf_status s2s_prefill(void *impl, const int32_t *ids, const int64_t *lens,
                              const float **out) {
  s2s_backend *b = impl;
  for (int64_t r = 0; r < b->rows; r++) {
    if (lens[r] != 1)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "row %lld: an encoder-decoder's decoder prompt is its start token "
                             "alone, not %lld tokens",
                             (long long)r, (long long)lens[r]);
    b->positions[r] = 0;
  }
  (void)ids;
  for (int64_t r = 0; r < b->rows; r++) b->tokens[r] = ids[r];
  return vkf_s2s_engine_step(b->engine, b->tokens, b->positions, out);
}
static vkf_kv_cache *s2s_cache(void *impl) {
  return vkf_s2s_engine_cache(((s2s_backend *)impl)->engine);
}
static void s2s_destroy(void *impl) {
  s2s_backend *b = impl;
  if (!b) return;
  vkf_s2s_engine_destroy(b->engine);
  free(b->tokens);
  free(b->positions);
  free(b);
}

/* Every row's source, right-padded to the longest, and its mask; then the encoder. */
static vkf_status encode_sources(s2s_backend *b, const vkf_gen_backend_options *o,
                                 int64_t src_len) {
  int64_t per = o->rows / o->sources;
  int32_t *ids = malloc((size_t)(o->rows * src_len) * sizeof *ids);
  int32_t *mask = malloc((size_t)(o->rows * src_len) * sizeof *mask);
  vkf_status s = ids && mask ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "sources");
  for (int64_t r = 0; !s && r < o->rows; r++) {
    int64_t src = r / per, n = o->source_lens[src];
    for (int64_t t = 0; t < src_len; t++) {
      ids[r * src_len + t] = (int32_t)(t < n ? o->source_ids[src][t] : o->source_pad_id);
      mask[r * src_len + t] = t < n;
    }
  }
  if (!s) s = vkf_s2s_engine_encode(b->engine, ids, mask);
  free(ids);
  free(mask);
  return s;
}

static vkf_status open_s2s(vkf_device *device, void *model,
                           const vkf_gen_backend_options *o, vkf_gen_backend *out) {
  if (o->sources < 1 || o->rows % o->sources)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%lld rows for %lld sources",
                           (long long)o->rows, (long long)o->sources);
  int64_t src_len = 0;
  for (int64_t i = 0; i < o->sources; i++)
    if (o->source_lens[i] > src_len) src_len = o->source_lens[i];
  s2s_backend *b = calloc(1, sizeof *b);
  if (!b) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  b->rows = o->rows;
  b->tokens = malloc((size_t)o->rows * sizeof *b->tokens);
  b->positions = malloc((size_t)o->rows * sizeof *b->positions);
  vkf_s2s_engine_options eo = {.rows = o->rows,
                               .src_len = src_len,
                               .capacity = o->capacity,
                               .dtype = o->dtype,
                               .cache_dtype = o->cache_dtype};
  vkf_status s = b->tokens && b->positions
                     ? vkf_s2s_engine_create(device, model, &eo, &b->engine)
                     : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  if (!s) s = encode_sources(b, o, src_len);
  if (s) {
    s2s_destroy(b);
    return s;
  }
  *out = (vkf_gen_backend){b, s2s_prefill, s2s_step, s2s_cache, s2s_destroy, NULL, NULL};
  return VKF_OK;
}

/* The Bahdanau encoder-decoder: no positions (its state is the GRU's), its prompt the start
 * token alone. */
static vkf_status s2sa_step(void *impl, const int32_t *tokens, const int64_t *positions,
                            const float **out) {
  (void)positions;
  return vkf_s2sa_engine_step(impl, tokens, out);
}
static vkf_status s2sa_prefill(void *impl, const int32_t *ids, const int64_t *lens,
                               const float **out) {
  (void)lens; /* one token per row: the prompt is right-padded to 1 */
  return vkf_s2sa_engine_step(impl, ids, out);
}
static vkf_kv_cache *s2sa_cache(void *impl) {
  (void)impl;
  return NULL;
}
static void s2sa_destroy(void *impl) {
  vkf_s2sa_engine_destroy(impl);
}
static vkf_status s2sa_reorder(void *impl, const int64_t *rows) {
  return vkf_s2sa_engine_reorder(impl, rows);
}

static vkf_status open_s2sa(vkf_device *device, void *model,
                            const vkf_gen_backend_options *o, vkf_gen_backend *out) {
  if (o->prompt_len != 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "an encoder-decoder's decoder prompt is its start token alone, not "
                           "%lld tokens",
                           (long long)o->prompt_len);
  vkf_s2sa_engine *e = NULL;
  VKF_RETURN_IF_ERROR(vkf_s2sa_engine_create(device, model, o->rows, o->sources, o->source_ids,
                                             o->source_lens, &e));
  *out = (vkf_gen_backend){e,          s2sa_prefill, s2sa_step, s2sa_cache,
                           s2sa_destroy, s2sa_reorder, NULL};
  return VKF_OK;
}

/* Reformer: the rows recomputed per step (runtime/reformer_engine.h); the prompts' stride kept. */
typedef struct rf_backend {
  vkf_reformer_engine *engine;
  int64_t prompt_len;
} rf_backend;

static vkf_status rf_prefill(void *impl, const int32_t *ids, const int64_t *lens,
                             const float **out) {
  rf_backend *b = impl;
  return vkf_reformer_engine_prefill(b->engine, ids, b->prompt_len, lens, out);
}
static vkf_status rf_step(void *impl, const int32_t *tokens, const int64_t *positions,
                          const float **out) {
  return vkf_reformer_engine_step(((rf_backend *)impl)->engine, tokens, positions, out);
}
static vkf_kv_cache *rf_cache(void *impl) {
  (void)impl;
  return NULL;
}
static void rf_destroy(void *impl) {
  rf_backend *b = impl;
  if (!b) return;
  vkf_reformer_engine_destroy(b->engine);
  free(b);
}
static vkf_status rf_reorder(void *impl, const int64_t *rows) {
  return vkf_reformer_engine_reorder(((rf_backend *)impl)->engine, rows);
}

static vkf_status open_reformer(vkf_device *device, void *model,
                                const vkf_gen_backend_options *o, vkf_gen_backend *out) {
  rf_backend *b = calloc(1, sizeof *b);
  if (!b) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  b->prompt_len = o->prompt_len;
  vkf_status s = vkf_reformer_engine_create(device, model, o->rows, o->capacity, o->dtype,
                                            &b->engine);
  if (s) {
    free(b);
    return s;
  }
  *out = (vkf_gen_backend){b, rf_prefill, rf_step, rf_cache, rf_destroy, rf_reorder, NULL};
  return VKF_OK;
}

/* Transformer-XL: the memory instead of a cache (runtime/transfo_xl_engine.h); no positions. */
typedef struct txl_backend {
  vkf_txl_engine *engine;
  int64_t prompt_len;
} txl_backend;

static vkf_status txl_prefill(void *impl, const int32_t *ids, const int64_t *lens,
                              const float **out) {
  txl_backend *b = impl;
  return vkf_txl_engine_prefill(b->engine, ids, b->prompt_len, lens, out);
}
static vkf_status txl_step(void *impl, const int32_t *tokens, const int64_t *positions,
                           const float **out) {
  (void)positions;
  return vkf_txl_engine_step(((txl_backend *)impl)->engine, tokens, out);
}
static vkf_kv_cache *txl_cache(void *impl) {
  (void)impl;
  return NULL;
}
static void txl_destroy(void *impl) {
  txl_backend *b = impl;
  if (!b) return;
  vkf_txl_engine_destroy(b->engine);
  free(b);
}
static vkf_status txl_reorder(void *impl, const int64_t *rows) {
  return vkf_txl_engine_reorder(((txl_backend *)impl)->engine, rows);
}

static vkf_status open_txl(vkf_device *device, void *model,
                           const vkf_gen_backend_options *o, vkf_gen_backend *out) {
  txl_backend *b = calloc(1, sizeof *b);
  if (!b) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  b->prompt_len = o->prompt_len;
  vkf_status s = vkf_txl_engine_create(device, model, o->rows, &b->engine);
  if (s) {
    free(b);
    return s;
  }
  *out = (vkf_gen_backend){b, txl_prefill, txl_step, txl_cache, txl_destroy, txl_reorder, NULL};
  return VKF_OK;
}

/* Every engine's open, by the kind a generate facet names: adding an engine is one line here. */
typedef vkf_status (*engine_open)(vkf_device *device, void *model,
                                  const vkf_gen_backend_options *o, vkf_gen_backend *out);
static const engine_open k_engines[VKF_GEN_ENGINE_COUNT] = {
    [VKF_GEN_ENGINE_DECODER] = open_decoder,     [VKF_GEN_ENGINE_SEQ2SEQ] = open_s2s,
    [VKF_GEN_ENGINE_BAHDANAU] = open_s2sa,       [VKF_GEN_ENGINE_TRANSFO_XL] = open_txl,
    [VKF_GEN_ENGINE_REFORMER] = open_reformer,
};

vkf_status vkf_gen_backend_open(vkf_device *device, const vkf_model_generate *model,
                                const vkf_gen_backend_options *o, vkf_gen_backend *out) {
  memset(out, 0, sizeof *out);
  if (model->engine <= VKF_GEN_ENGINE_NONE || model->engine >= VKF_GEN_ENGINE_COUNT ||
      !k_engines[model->engine])
    return vkf_status_make(VKF_STATUS_INTERNAL, "generation engine %d is not built in",
                           (int)model->engine);
  return k_engines[model->engine](device, model->engine_model, o, out);
}

void vkf_gen_backend_close(vkf_gen_backend *b) {
  if (b->impl) b->destroy(b->impl);
  memset(b, 0, sizeof *b);
}
