/* Owns the step plan, the encoder's outputs and the host copy of the GRU state. */
#include "runtime/seq2seq_attention_engine.h"

#include <stdlib.h>
#include <string.h>

#include "host/runner.h"

struct vkf_s2sa_engine {
  vkf_s2sa_graph g; /* the STEP graph */
  vkf_runner *step;
  int64_t rows, src_len, layers, hidden, vocab;
  float *state, *spare; /* [L, rows, H] */
  float *logits;        /* [rows, vocab] */
  float *weights;       /* [rows, S] */
};

void vkf_s2sa_engine_destroy(vkf_s2sa_engine *e) {
  if (!e) return;
  vkf_runner_destroy(e->step);
  vkf_graph_destroy(e->g.graph);
  free(e->state);
  free(e->spare);
  free(e->logits);
  free(e->weights);
  free(e);
}

/* The encoder over source `src` alone (ids [1, n]), its outputs into rows [first, first + per)
 * of enc [rows, S, H] (zeros past n: the lengths mask them) and its final state into those rows
 * of e->state. Each source is encoded at its own length, so that a source padded in a batch gets
 * the state it gets alone: D2L's encoder runs its GRU over padding too, and its final state
 * would depend on how much the batch padded. */
static vkf_status encode(vkf_device *device, vkf_s2sa_model *model, vkf_s2sa_engine *e,
                         const int32_t *ids, int64_t n, int64_t first, int64_t per, float *enc) {
  vkf_s2sa_build_options bo = {.mode = VKF_S2SA_ENCODE, .batch = 1, .src_len = n, .dtype = VKF_F32};
  vkf_s2sa_graph g;
  VKF_RETURN_IF_ERROR(vkf_s2sa_build(model, &bo, &g));
  vkf_runner *r = NULL;
  size_t h = (size_t)e->hidden;
  float *out = malloc((size_t)n * h * sizeof *out);
  float *state = malloc((size_t)e->layers * h * sizeof *state);
  vkf_status s = out && state ? vkf_runner_create(device, g.graph, NULL, &r)
                              : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "encoder outputs");
  if (!s) s = vkf_runner_set(r, g.input_ids, ids, (size_t)n * sizeof *ids);
  if (!s) s = vkf_runner_run(r);
  if (!s) s = vkf_runner_get(r, g.encoder_outputs, out, (size_t)n * h * sizeof *out);
  if (!s) s = vkf_runner_get(r, g.final_state, state, (size_t)e->layers * h * sizeof *state);
  for (int64_t k = first; !s && k < first + per; k++) {
    memcpy(enc + (size_t)(k * e->src_len) * h, out, (size_t)n * h * sizeof *out);
    for (int64_t l = 0; l < e->layers; l++)
      memcpy(e->state + (size_t)(l * e->rows + k) * h, state + (size_t)l * h, h * sizeof *state);
  }
  vkf_runner_destroy(r);
  vkf_graph_destroy(g.graph);
  free(out);
  free(state);
  return s;
}

vkf_status vkf_s2sa_engine_create(vkf_device *device, vkf_s2sa_model *model, int64_t rows,
                                  int64_t sources, const int64_t *const *ids, const int64_t *lens,
                                  vkf_s2sa_engine **out) {
  *out = NULL;
  if (sources < 1 || rows % sources)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%lld rows for %lld sources",
                           (long long)rows, (long long)sources);
  const vkf_hf_config *c = vkf_s2sa_config(model);
  vkf_s2sa_engine *e = calloc(1, sizeof *e);
  if (!e) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  e->rows = rows, e->layers = c->num_hidden_layers, e->hidden = c->hidden_size;
  e->vocab = c->vocab_size;
  for (int64_t i = 0; i < sources; i++) {
    if (lens[i] < 1 || lens[i] > VKF_S2SA_MAX_SOURCE) {
      free(e);
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "source %lld of %lld tokens (1 .. %lld)",
                             (long long)i, (long long)lens[i], (long long)VKF_S2SA_MAX_SOURCE);
    }
    if (lens[i] > e->src_len) e->src_len = lens[i];
  }
  size_t state_n = (size_t)(e->layers * rows * e->hidden);
  e->state = malloc(state_n * sizeof *e->state);
  e->spare = malloc(state_n * sizeof *e->spare);
  e->logits = malloc((size_t)(rows * e->vocab) * sizeof *e->logits);
  e->weights = malloc((size_t)(rows * e->src_len) * sizeof *e->weights);
  int32_t *src = malloc((size_t)e->src_len * sizeof *src);
  int32_t *valid = malloc((size_t)rows * sizeof *valid);
  float *enc = calloc((size_t)(rows * e->src_len * e->hidden), sizeof *enc);
  vkf_status s = e->state && e->spare && e->logits && e->weights && src && valid && enc
                     ? VKF_OK
                     : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  int64_t per = rows / sources;
  for (int64_t i = 0; !s && i < sources; i++) {
    for (int64_t t = 0; t < lens[i]; t++) src[t] = (int32_t)ids[i][t];
    for (int64_t k = i * per; k < (i + 1) * per; k++) valid[k] = (int32_t)lens[i];
    s = encode(device, model, e, src, lens[i], i * per, per, enc);
  }
  vkf_s2sa_build_options bo = {.mode = VKF_S2SA_STEP,
                               .batch = rows,
                               .src_len = e->src_len,
                               .dtype = VKF_F32};
  if (!s) s = vkf_s2sa_build(model, &bo, &e->g);
  if (!s) s = vkf_runner_create(device, e->g.graph, NULL, &e->step);
  /* The encoder's outputs and the lengths stay in the step plan's inputs for every step. */
  if (!s)
    s = vkf_runner_set(e->step, e->g.enc_outputs, enc,
                       (size_t)(rows * e->src_len * e->hidden) * sizeof *enc);
  if (!s) s = vkf_runner_set(e->step, e->g.valid_lens, valid, (size_t)rows * sizeof *valid);
  free(enc);
  free(src);
  free(valid);
  if (s) {
    vkf_s2sa_engine_destroy(e);
    return s;
  }
  *out = e;
  return VKF_OK;
}

vkf_status vkf_s2sa_engine_step(vkf_s2sa_engine *e, const int32_t *tokens,
                                const float **out_logits) {
  size_t state_bytes = (size_t)(e->layers * e->rows * e->hidden) * sizeof *e->state;
  VKF_RETURN_IF_ERROR(
      vkf_runner_set(e->step, e->g.decoder_input_ids, tokens, (size_t)e->rows * sizeof *tokens));
  VKF_RETURN_IF_ERROR(vkf_runner_set(e->step, e->g.state, e->state, state_bytes));
  VKF_RETURN_IF_ERROR(vkf_runner_run(e->step));
  VKF_RETURN_IF_ERROR(vkf_runner_get(e->step, e->g.logits, e->logits,
                                     (size_t)(e->rows * e->vocab) * sizeof *e->logits));
  VKF_RETURN_IF_ERROR(vkf_runner_get(e->step, e->g.attention_weights, e->weights,
                                     (size_t)(e->rows * e->src_len) * sizeof *e->weights));
  VKF_RETURN_IF_ERROR(vkf_runner_get(e->step, e->g.final_state, e->state, state_bytes));
  *out_logits = e->logits;
  return VKF_OK;
}

vkf_status vkf_s2sa_engine_reorder(vkf_s2sa_engine *e, const int64_t *rows) {
  size_t h = (size_t)e->hidden;
  for (int64_t r = 0; r < e->rows; r++)
    if (rows[r] < 0 || rows[r] >= e->rows)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam row %lld of %lld",
                             (long long)rows[r], (long long)e->rows);
  for (int64_t l = 0; l < e->layers; l++)
    for (int64_t r = 0; r < e->rows; r++)
      memcpy(e->spare + ((size_t)(l * e->rows + r)) * h,
             e->state + ((size_t)(l * e->rows + rows[r])) * h, h * sizeof *e->state);
  float *t = e->state;
  e->state = e->spare, e->spare = t;
  return VKF_OK;
}

const float *vkf_s2sa_engine_weights(const vkf_s2sa_engine *e, int64_t *out_src_len) {
  *out_src_len = e->src_len;
  return e->weights;
}
