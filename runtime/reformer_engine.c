/* Owns each row's ids and prompt length, and runs a row's whole sequence per step. */
#include "runtime/reformer_engine.h"

#include <stdlib.h>
#include <string.h>

#include "host/runner.h"

struct vkf_reformer_engine {
  vkf_device *device;
  vkf_reformer *model;
  vkf_dtype dtype;
  int64_t rows, capacity, vocab;
  int32_t *ids, *spare_ids; /* [rows, capacity] */
  int64_t *len, *prompt, *spare_len, *spare_prompt;
  int32_t *ones;  /* [capacity] attention mask */
  float *all;     /* [capacity, vocab] one run's logits */
  float *logits;  /* [rows, vocab] */
};

void vkf_reformer_engine_destroy(vkf_reformer_engine *e) {
  if (!e) return;
  free(e->ids);
  free(e->spare_ids);
  free(e->len);
  free(e->prompt);
  free(e->spare_len);
  free(e->spare_prompt);
  free(e->ones);
  free(e->all);
  free(e->logits);
  free(e);
}

vkf_status vkf_reformer_engine_create(vkf_device *device, vkf_reformer *model, int64_t rows,
                                      int64_t capacity, vkf_dtype dtype,
                                      vkf_reformer_engine **out) {
  *out = NULL;
  int64_t max = vkf_reformer_max_seq(model);
  if (rows < 1 || capacity < 1 || capacity > max)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%lld rows of %lld tokens (the model takes at most %lld)",
                           (long long)rows, (long long)capacity, (long long)max);
  vkf_reformer_engine *e = calloc(1, sizeof *e);
  if (!e) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  e->device = device, e->model = model, e->dtype = dtype;
  e->rows = rows, e->capacity = capacity, e->vocab = vkf_reformer_hf_config(model)->vocab_size;
  size_t cells = (size_t)(rows * capacity);
  e->ids = calloc(cells, sizeof *e->ids);
  e->spare_ids = calloc(cells, sizeof *e->spare_ids);
  e->len = calloc((size_t)rows, sizeof *e->len);
  e->prompt = calloc((size_t)rows, sizeof *e->prompt);
  e->spare_len = calloc((size_t)rows, sizeof *e->spare_len);
  e->spare_prompt = calloc((size_t)rows, sizeof *e->spare_prompt);
  e->ones = malloc((size_t)capacity * sizeof *e->ones);
  e->all = malloc((size_t)(capacity * e->vocab) * sizeof *e->all);
  e->logits = malloc((size_t)(rows * e->vocab) * sizeof *e->logits);
  if (!e->ids || !e->spare_ids || !e->len || !e->prompt || !e->spare_len || !e->spare_prompt ||
      !e->ones || !e->all || !e->logits) {
    vkf_reformer_engine_destroy(e);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  }
  for (int64_t i = 0; i < capacity; i++) e->ones[i] = 1;
  *out = e;
  return VKF_OK;
}

/* Row r's sequence alone; its last position's logits into e->logits row r. */
static vkf_status run_row(vkf_reformer_engine *e, int64_t r) {
  int64_t n = e->len[r];
  vkf_reformer_graph g;
  /* The prompt's own forward (prefill) needs no generation windows. */
  int64_t prompt = e->prompt[r] < n ? e->prompt[r] : 0;
  VKF_RETURN_IF_ERROR(vkf_reformer_build(e->model, 1, n, e->dtype, prompt, &g));
  vkf_runner *run = NULL;
  vkf_status s = vkf_runner_create(e->device, g.graph, NULL, &run);
  if (!s) s = vkf_runner_set(run, g.input_ids, e->ids + r * e->capacity, (size_t)n * sizeof(int32_t));
  if (!s) s = vkf_runner_set(run, g.attention_mask, e->ones, (size_t)n * sizeof(int32_t));
  if (!s) s = vkf_runner_run(run);
  if (!s) s = vkf_runner_get(run, g.logits, e->all, (size_t)(n * e->vocab) * sizeof *e->all);
  if (!s)
    memcpy(e->logits + r * e->vocab, e->all + (n - 1) * e->vocab,
           (size_t)e->vocab * sizeof *e->logits);
  vkf_runner_destroy(run);
  vkf_graph_destroy(g.graph);
  return s;
}

vkf_status vkf_reformer_engine_prefill(vkf_reformer_engine *e, const int32_t *ids,
                                       int64_t prompt_len, const int64_t *lens,
                                       const float **out_logits) {
  for (int64_t r = 0; r < e->rows; r++) {
    if (lens[r] < 1 || lens[r] > prompt_len || lens[r] > e->capacity)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "row %lld: prompt of %lld tokens",
                             (long long)r, (long long)lens[r]);
    memcpy(e->ids + r * e->capacity, ids + r * prompt_len, (size_t)lens[r] * sizeof *ids);
    e->len[r] = e->prompt[r] = lens[r];
    VKF_RETURN_IF_ERROR(run_row(e, r));
  }
  *out_logits = e->logits;
  return VKF_OK;
}

vkf_status vkf_reformer_engine_step(vkf_reformer_engine *e, const int32_t *tokens,
                                    const int64_t *positions, const float **out_logits) {
  for (int64_t r = 0; r < e->rows; r++) {
    if (positions[r] < e->prompt[r] || positions[r] > e->len[r] || positions[r] >= e->capacity)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "row %lld: a step at position %lld after %lld tokens (capacity %lld)",
                             (long long)r, (long long)positions[r], (long long)e->len[r],
                             (long long)e->capacity);
    e->ids[r * e->capacity + positions[r]] = tokens[r];
    e->len[r] = positions[r] + 1;
    VKF_RETURN_IF_ERROR(run_row(e, r));
  }
  *out_logits = e->logits;
  return VKF_OK;
}

vkf_status vkf_reformer_engine_reorder(vkf_reformer_engine *e, const int64_t *rows) {
  for (int64_t r = 0; r < e->rows; r++) {
    if (rows[r] < 0 || rows[r] >= e->rows)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam row %lld of %lld",
                             (long long)rows[r], (long long)e->rows);
    memcpy(e->spare_ids + r * e->capacity, e->ids + rows[r] * e->capacity,
           (size_t)e->capacity * sizeof *e->ids);
    e->spare_len[r] = e->len[rows[r]];
    e->spare_prompt[r] = e->prompt[rows[r]];
  }
  int32_t *t = e->ids;
  e->ids = e->spare_ids, e->spare_ids = t;
  int64_t *a = e->len;
  e->len = e->spare_len, e->spare_len = a;
  a = e->prompt;
  e->prompt = e->spare_prompt, e->spare_prompt = a;
  return VKF_OK;
}
