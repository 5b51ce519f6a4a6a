/* Owns the step plan and the host copy of every row's memory. */
#include "runtime/transfo_xl_engine.h"

#include <stdlib.h>
#include <string.h>

#include "host/runner.h"

struct vkf_txl_engine {
  vkf_device *device;
  vkf_txl_model *model;
  vkf_txl_graph g; /* the step graph: one token per row on mem_len rows */
  vkf_runner *step;
  int64_t rows, layers, mem_len, d_model, vocab;
  float *mems, *spare; /* [rows, L, mem_len, D] */
  float *scores;       /* [rows, vocab] */
};

void vkf_txl_engine_destroy(vkf_txl_engine *e) {
  if (!e) return;
  vkf_runner_destroy(e->step);
  vkf_graph_destroy(e->g.graph);
  free(e->mems);
  free(e->spare);
  free(e->scores);
  free(e);
}

vkf_status vkf_txl_engine_create(vkf_device *device, vkf_txl_model *model, int64_t rows,
                                 vkf_txl_engine **out) {
  *out = NULL;
  const vkf_txl_config *c = vkf_txl_config_of(model);
  if (!vkf_txl_has_head(model))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "TransfoXLModel has no language-model head (TransfoXLLMHeadModel)");
  if (c->mem_len < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "config mem_len is 0: generation keeps its memory in mem_len rows");
  if (rows < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%lld rows", (long long)rows);
  vkf_txl_engine *e = calloc(1, sizeof *e);
  if (!e) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  e->device = device, e->model = model, e->rows = rows;
  e->layers = c->n_layer, e->mem_len = c->mem_len, e->d_model = c->d_model;
  e->vocab = c->vocab_size;
  size_t n = (size_t)(rows * e->layers * e->mem_len * e->d_model);
  e->mems = calloc(n, sizeof *e->mems);
  e->spare = calloc(n, sizeof *e->spare);
  e->scores = malloc((size_t)(rows * e->vocab) * sizeof *e->scores);
  vkf_status s = e->mems && e->spare && e->scores
                     ? VKF_OK
                     : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation memory");
  vkf_txl_build_options bo = {.batch = rows,
                              .seq_len = 1,
                              .mem_len = e->mem_len,
                              .dtype = VKF_F32,
                              .prediction_scores = 1,
                              .mems = 1};
  if (!s) s = vkf_txl_build(model, &bo, &e->g);
  if (!s) s = vkf_runner_create(device, e->g.graph, NULL, &e->step);
  if (s) {
    vkf_txl_engine_destroy(e);
    return s;
  }
  *out = e;
  return VKF_OK;
}

/* Row r's prompt alone: [1, n] on mem_len zero rows; its last token's scores and its memory. */
static vkf_status prefill_row(vkf_txl_engine *e, int64_t r, const int32_t *ids, int64_t n) {
  vkf_txl_build_options bo = {.batch = 1,
                              .seq_len = n,
                              .mem_len = e->mem_len,
                              .dtype = VKF_F32,
                              .prediction_scores = 1,
                              .mems = 1};
  vkf_txl_graph g;
  VKF_RETURN_IF_ERROR(vkf_txl_build(e->model, &bo, &g));
  size_t mem_n = (size_t)(e->layers * e->mem_len * e->d_model), v = (size_t)e->vocab;
  float *scores = malloc((size_t)n * v * sizeof *scores);
  vkf_runner *run = NULL;
  vkf_status s = scores ? vkf_runner_create(e->device, g.graph, NULL, &run)
                        : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "prompt scores");
  float *row_mem = e->mems + (size_t)r * mem_n;
  memset(row_mem, 0, mem_n * sizeof *row_mem); /* init_mems */
  if (!s) s = vkf_runner_set(run, g.input_ids, ids, (size_t)n * sizeof *ids);
  if (!s) s = vkf_runner_set(run, g.mems, row_mem, mem_n * sizeof *row_mem);
  if (!s) s = vkf_runner_run(run);
  if (!s) s = vkf_runner_get(run, g.prediction_scores, scores, (size_t)n * v * sizeof *scores);
  if (!s) s = vkf_runner_get(run, g.new_mems, row_mem, mem_n * sizeof *row_mem);
  if (!s) memcpy(e->scores + (size_t)r * v, scores + (size_t)(n - 1) * v, v * sizeof *scores);
  vkf_runner_destroy(run);
  vkf_graph_destroy(g.graph);
  free(scores);
  return s;
}

vkf_status vkf_txl_engine_prefill(vkf_txl_engine *e, const int32_t *ids, int64_t prompt_len,
                                  const int64_t *lens, const float **out_scores) {
  for (int64_t r = 0; r < e->rows; r++) {
    if (lens[r] < 1 || lens[r] > prompt_len || lens[r] > VKF_TXL_MAX_SEGMENT)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "prompt %lld of %lld tokens",
                             (long long)r, (long long)lens[r]);
    VKF_RETURN_IF_ERROR(prefill_row(e, r, ids + r * prompt_len, lens[r]));
  }
  *out_scores = e->scores;
  return VKF_OK;
}

vkf_status vkf_txl_engine_step(vkf_txl_engine *e, const int32_t *tokens,
                               const float **out_scores) {
  size_t bytes = (size_t)(e->rows * e->layers * e->mem_len * e->d_model) * sizeof *e->mems;
  VKF_RETURN_IF_ERROR(
      vkf_runner_set(e->step, e->g.input_ids, tokens, (size_t)e->rows * sizeof *tokens));
  VKF_RETURN_IF_ERROR(vkf_runner_set(e->step, e->g.mems, e->mems, bytes));
  VKF_RETURN_IF_ERROR(vkf_runner_run(e->step));
  VKF_RETURN_IF_ERROR(vkf_runner_get(e->step, e->g.prediction_scores, e->scores,
                                     (size_t)(e->rows * e->vocab) * sizeof *e->scores));
  VKF_RETURN_IF_ERROR(vkf_runner_get(e->step, e->g.new_mems, e->mems, bytes));
  *out_scores = e->scores;
  return VKF_OK;
}

vkf_status vkf_txl_engine_reorder(vkf_txl_engine *e, const int64_t *rows) {
  size_t n = (size_t)(e->layers * e->mem_len * e->d_model);
  for (int64_t r = 0; r < e->rows; r++)
    if (rows[r] < 0 || rows[r] >= e->rows)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam row %lld of %lld",
                             (long long)rows[r], (long long)e->rows);
  for (int64_t r = 0; r < e->rows; r++)
    memcpy(e->spare + (size_t)r * n, e->mems + (size_t)rows[r] * n, n * sizeof *e->mems);
  float *t = e->mems;
  e->mems = e->spare, e->spare = t;
  return VKF_OK;
}
