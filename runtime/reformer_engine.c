/* Per row and layer, the cache Hugging Face's generate() keeps for Reformer (see the header). */
#include "runtime/reformer_engine.h"

#include <stdlib.h>
#include <string.h>

#include "host/runner.h"

/* One row's cache. states [layers][capacity·D]; buckets [layers][capacity·H·R], position-major
 * ([pos][h][r]) so a step appends, with the rounds' offsets as Hugging Face caches them. */
typedef struct row_cache {
  int64_t len, prompt;
  float *states, *buckets;
  uint8_t *hashed;   /* [layers]: the LSH layer's buckets exist */
  int64_t *hashed_at; /* [layers]: the length when they came to exist */
} row_cache;

struct vkf_reformer_engine {
  vkf_device *device;
  vkf_reformer *model;
  vkf_dtype dtype;
  int64_t rows, capacity, vocab, layers, d, hr, nb;
  row_cache *row, *spare;
  float *all;    /* [capacity, vocab] the prefill's logits */
  float *packed; /* [H·R·capacity] buckets as a step reads them */
  float *logits; /* [rows, vocab] */
  int64_t *offset_step;
};

static void free_rows(row_cache *rows, int64_t n) {
  for (int64_t r = 0; rows && r < n; r++) {
    free(rows[r].states);
    free(rows[r].buckets);
    free(rows[r].hashed);
    free(rows[r].hashed_at);
  }
  free(rows);
}

void vkf_reformer_engine_destroy(vkf_reformer_engine *e) {
  if (!e) return;
  free_rows(e->row, e->rows);
  free_rows(e->spare, e->rows);
  free(e->all);
  free(e->packed);
  free(e->logits);
  free(e->offset_step);
  free(e);
}

static row_cache *alloc_rows(const vkf_reformer_engine *e) {
  row_cache *rows = calloc((size_t)e->rows, sizeof *rows);
  for (int64_t r = 0; rows && r < e->rows; r++) {
    rows[r].states = malloc((size_t)(e->layers * e->capacity * e->d) * sizeof(float));
    rows[r].buckets = malloc((size_t)(e->layers * e->capacity * e->hr) * sizeof(float));
    rows[r].hashed = calloc((size_t)e->layers, 1);
    rows[r].hashed_at = calloc((size_t)e->layers, sizeof(int64_t));
    if (!rows[r].states || !rows[r].buckets || !rows[r].hashed || !rows[r].hashed_at) {
      free_rows(rows, e->rows);
      return NULL;
    }
  }
  return rows;
}

vkf_status vkf_reformer_engine_create(vkf_device *device, vkf_reformer *model, int64_t rows,
                                      int64_t capacity, vkf_dtype dtype,
                                      vkf_reformer_engine **out) {
  *out = NULL;
  const vkf_hf_config *c = vkf_reformer_hf_config(model);
  const vkf_reformer_config *rc = vkf_reformer_config_of(model);
  int64_t max = vkf_reformer_max_positions(model);
  if (rows < 1 || capacity < 1 || capacity > max)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%lld rows of %lld tokens (the model has %lld positions)",
                           (long long)rows, (long long)capacity, (long long)max);
  int64_t hr = c->num_attention_heads * rc->num_hashes, per_row = c->hidden_size + hr;
  /* The cache: rows (and their beam-search spares) x layers x capacity x (D + H·R) floats. */
  if (per_row > ((int64_t)1 << 40) / capacity / c->num_hidden_layers / rows / 8)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                           "a Reformer generation cache of %lld rows x %lld layers x %lld tokens "
                           "x %lld floats",
                           (long long)rows, (long long)c->num_hidden_layers, (long long)capacity,
                           (long long)per_row);
  vkf_reformer_engine *e = calloc(1, sizeof *e);
  if (!e) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  e->device = device, e->model = model, e->dtype = dtype;
  e->rows = rows, e->capacity = capacity, e->vocab = c->vocab_size;
  e->layers = c->num_hidden_layers, e->d = c->hidden_size, e->hr = hr, e->nb = 1;
  for (int f = 0; f < rc->bucket_factor_count; f++) e->nb *= rc->bucket_factors[f];
  e->row = alloc_rows(e);
  e->spare = alloc_rows(e);
  e->all = malloc((size_t)(capacity * e->vocab) * sizeof *e->all);
  e->packed = malloc((size_t)(hr * capacity) * sizeof *e->packed);
  e->logits = malloc((size_t)(rows * e->vocab) * sizeof *e->logits);
  e->offset_step = calloc((size_t)e->layers, sizeof *e->offset_step);
  if (!e->row || !e->spare || !e->all || !e->packed || !e->logits || !e->offset_step) {
    vkf_reformer_engine_destroy(e);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  }
  *out = e;
  return VKF_OK;
}

static int is_lsh(const vkf_reformer_engine *e, int64_t l) {
  return vkf_reformer_config_of(e->model)->attn[l] == VKF_REFORMER_LSH;
}

/* Raw buckets [H, n, R] (a graph's [1, H, n, R]) of positions 0..count-1 into the cache from
 * position `at`, with offsets r·step. */
static void store_buckets(vkf_reformer_engine *e, row_cache *rc, int64_t l, const float *raw,
                          int64_t n, int64_t count, int64_t at, int64_t step) {
  int64_t r = vkf_reformer_config_of(e->model)->num_hashes, h = e->hr / r;
  float *dst = rc->buckets + l * e->capacity * e->hr;
  for (int64_t p = 0; p < count; p++)
    for (int64_t i = 0; i < h; i++)
      for (int64_t k = 0; k < r; k++)
        dst[(at + p) * e->hr + i * r + k] = raw[(i * n + p) * r + k] + (float)(k * step);
}

static vkf_status prefill_row(vkf_reformer_engine *e, int64_t row, const int32_t *ids,
                              int64_t n) {
  row_cache *rc = &e->row[row];
  vkf_reformer_graph g;
  VKF_RETURN_IF_ERROR(vkf_reformer_build(e->model, 1, n, e->dtype, 1, &g));
  int64_t np = g.padded_len;
  int32_t *ones = malloc((size_t)n * sizeof *ones);
  /* the padded prompt's states [np, D], then its buckets [H, np, R] */
  float *states = malloc((size_t)(np * (e->d > e->hr ? e->d : e->hr)) * sizeof *states);
  vkf_runner *run = NULL;
  vkf_status s = ones && states ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "prefill");
  for (int64_t i = 0; ones && i < n; i++) ones[i] = 1;
  if (!s) s = vkf_runner_create(e->device, g.graph, NULL, &run);
  if (!s) s = vkf_runner_set(run, g.input_ids, ids, (size_t)n * sizeof *ids);
  if (!s) s = vkf_runner_set(run, g.attention_mask, ones, (size_t)n * sizeof *ones);
  if (!s) s = vkf_runner_run(run);
  if (!s) s = vkf_runner_get(run, g.logits, e->all, (size_t)(n * e->vocab) * sizeof *e->all);
  if (!s)
    memcpy(e->logits + row * e->vocab, e->all + (n - 1) * e->vocab,
           (size_t)e->vocab * sizeof *e->logits);
  for (int64_t l = 0; !s && l < e->layers; l++) {
    s = vkf_runner_get(run, g.cache_states[l], states, (size_t)(np * e->d) * sizeof *states);
    if (!s)
      memcpy(rc->states + l * e->capacity * e->d, states, (size_t)(n * e->d) * sizeof *states);
    rc->hashed[l] = 0;
    if (!s && vkf_value_valid(g.cache_buckets[l])) {
      s = vkf_runner_get(run, g.cache_buckets[l], states, (size_t)(np * e->hr) * sizeof(float));
      /* Padding (attention_mask zeros) made Hugging Face count the extra bucket in the offsets;
       * the padded positions are not cached. */
      if (!s) store_buckets(e, rc, l, states, np, n, 0, np > n ? e->nb + 1 : e->nb);
      rc->hashed[l] = 1, rc->hashed_at[l] = n;
    }
  }
  rc->len = rc->prompt = n;
  vkf_runner_destroy(run);
  vkf_graph_destroy(g.graph);
  free(ones);
  free(states);
  return s;
}

vkf_status vkf_reformer_engine_prefill(vkf_reformer_engine *e, const int32_t *ids,
                                       int64_t prompt_len, const int64_t *lens,
                                       const float **out_logits) {
  for (int64_t r = 0; r < e->rows; r++) {
    if (lens[r] < 1 || lens[r] > prompt_len || lens[r] > e->capacity)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "row %lld: prompt of %lld tokens",
                             (long long)r, (long long)lens[r]);
    VKF_RETURN_IF_ERROR(prefill_row(e, r, ids + r * prompt_len, lens[r]));
  }
  *out_logits = e->logits;
  return VKF_OK;
}

/* Each LSH layer's offset step for the new buckets of rows [first, last): 0 without cached
 * buckets, else nb, or nb + 1 when a cached bucket of any of those rows exceeds R·nb - 1
 * (increase_num_buckets: the max is over Hugging Face's whole batch). */
static void offset_steps(vkf_reformer_engine *e, int64_t first, int64_t last) {
  int64_t r = vkf_reformer_config_of(e->model)->num_hashes;
  for (int64_t l = 0; l < e->layers; l++) {
    e->offset_step[l] = 0;
    if (!is_lsh(e, l) || !e->row[first].hashed[l]) continue;
    float top = -1.0f;
    for (int64_t row = first; row < last; row++) {
      const float *b = e->row[row].buckets + l * e->capacity * e->hr;
      for (int64_t i = 0; i < e->row[row].len * e->hr; i++) top = b[i] > top ? b[i] : top;
    }
    e->offset_step[l] = top > (float)(r * e->nb - 1) ? e->nb + 1 : e->nb;
  }
}

/* row0_keys: Hugging Face's batched LSH step, keys from row 0's cache (already stepped).
 * e->offset_step: offset_steps of this row's batch. */
static vkf_status step_row(vkf_reformer_engine *e, int64_t row, int32_t token, int row0_keys) {
  row_cache *rc = &e->row[row];
  int64_t past = rc->len, n = past + 1;
  vkf_reformer_step_graph g;
  VKF_RETURN_IF_ERROR(
      vkf_reformer_build_step(e->model, past, e->dtype, e->offset_step, row0_keys, &g));
  vkf_runner *run = NULL;
  vkf_status s = vkf_runner_create(e->device, g.graph, NULL, &run);
  if (!s) s = vkf_runner_set(run, g.input_ids, &token, sizeof token);
  for (int64_t l = 0; !s && l < e->layers; l++) {
    if (vkf_value_valid(g.past_states[l]))
      s = vkf_runner_set(run, g.past_states[l], rc->states + l * e->capacity * e->d,
                         (size_t)(past * e->d) * sizeof(float));
    if (!s && vkf_value_valid(g.key_states[l]))
      s = vkf_runner_set(run, g.key_states[l], e->row[0].states + l * e->capacity * e->d,
                         (size_t)(n * e->d) * sizeof(float));
    if (!s && vkf_value_valid(g.past_buckets[l])) {
      /* [pos][h][r] -> [h][r][pos] */
      const float *b = rc->buckets + l * e->capacity * e->hr;
      for (int64_t p = 0; p < past; p++)
        for (int64_t i = 0; i < e->hr; i++) e->packed[i * past + p] = b[p * e->hr + i];
      s = vkf_runner_set(run, g.past_buckets[l], e->packed, (size_t)(past * e->hr) * sizeof(float));
    }
  }
  if (!s) s = vkf_runner_run(run);
  if (!s) s = vkf_runner_get(run, g.logits, e->logits + row * e->vocab, (size_t)e->vocab * sizeof(float));
  for (int64_t l = 0; !s && l < e->layers; l++) {
    s = vkf_runner_get(run, g.states[l], rc->states + (l * e->capacity + past) * e->d,
                       (size_t)e->d * sizeof(float));
    if (s || !vkf_value_valid(g.buckets[l])) continue;
    if (rc->hashed[l]) {
      s = vkf_runner_get(run, g.buckets[l], e->packed, (size_t)e->hr * sizeof(float));
      if (!s) store_buckets(e, rc, l, e->packed, 1, 1, past, e->offset_step[l]);
    } else {
      /* The layer hashed its whole cache now, without a mask: offsets r·nb. */
      s = vkf_runner_get(run, g.buckets[l], e->packed, (size_t)(n * e->hr) * sizeof(float));
      if (!s) store_buckets(e, rc, l, e->packed, n, n, 0, e->nb);
      rc->hashed[l] = 1, rc->hashed_at[l] = n;
    }
  }
  if (!s) rc->len = n;
  vkf_runner_destroy(run);
  vkf_graph_destroy(g.graph);
  return s;
}

vkf_status vkf_reformer_engine_step(vkf_reformer_engine *e, const int32_t *tokens,
                                    const int64_t *positions, const float **out_logits) {
  /* Rows in step (beams, or prompts of one length) share Hugging Face's batched LSH quirk. */
  int lockstep = 1;
  for (int64_t r = 0; r < e->rows; r++) {
    row_cache *rc = &e->row[r];
    if (positions[r] < rc->prompt || positions[r] > rc->len || positions[r] >= e->capacity)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "row %lld: a step at position %lld after %lld tokens (capacity %lld)",
                             (long long)r, (long long)positions[r], (long long)rc->len,
                             (long long)e->capacity);
    lockstep &= positions[r] == positions[0] && rc->len == e->row[0].len;
  }
  for (int64_t r = 0; r < e->rows; r++) {
    row_cache *rc = &e->row[r];
    /* Back to positions[r] tokens: buckets hashed after that never existed then. */
    rc->len = positions[r];
    for (int64_t l = 0; l < e->layers; l++)
      if (rc->hashed[l] && rc->hashed_at[l] > rc->len) rc->hashed[l] = 0;
  }
  /* Rows in step are one Hugging Face batch, decided before any of them steps. */
  if (lockstep) offset_steps(e, 0, e->rows);
  for (int64_t r = 0; r < e->rows; r++) {
    if (!lockstep) offset_steps(e, r, r + 1);
    VKF_RETURN_IF_ERROR(step_row(e, r, tokens[r], lockstep && r > 0));
  }
  *out_logits = e->logits;
  return VKF_OK;
}

static void copy_row(const vkf_reformer_engine *e, row_cache *dst, const row_cache *src) {
  dst->len = src->len, dst->prompt = src->prompt;
  for (int64_t l = 0; l < e->layers; l++) {
    memcpy(dst->states + l * e->capacity * e->d, src->states + l * e->capacity * e->d,
           (size_t)(src->len * e->d) * sizeof(float));
    memcpy(dst->buckets + l * e->capacity * e->hr, src->buckets + l * e->capacity * e->hr,
           (size_t)(src->len * e->hr) * sizeof(float));
  }
  memcpy(dst->hashed, src->hashed, (size_t)e->layers);
  memcpy(dst->hashed_at, src->hashed_at, (size_t)e->layers * sizeof *dst->hashed_at);
}

vkf_status vkf_reformer_engine_reorder(vkf_reformer_engine *e, const int64_t *rows) {
  for (int64_t r = 0; r < e->rows; r++)
    if (rows[r] < 0 || rows[r] >= e->rows)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam row %lld of %lld",
                             (long long)rows[r], (long long)e->rows);
  for (int64_t r = 0; r < e->rows; r++) copy_row(e, &e->spare[r], &e->row[rows[r]]);
  row_cache *t = e->row;
  e->row = e->spare, e->spare = t;
  return VKF_OK;
}
