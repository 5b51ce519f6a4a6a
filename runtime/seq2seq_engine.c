/* Owns the encoder plan, the step plan, the two caches and the per-step input arrays. */
#include "runtime/seq2seq_engine.h"

#include <stdlib.h>
#include <string.h>

#include "graph/lower/lower_matmul.h"
#include "graph/passes/passes.h"
#include "host/device.h"
#include "host/runner.h"

struct vkf_s2s_engine {
  vkf_encdec_model *model;
  vkf_s2s_engine_options o;
  int64_t vocab;
  vkf_kv_cache *self_cache, *cross_cache;
  vkf_encdec_graph encode_g, step_g;
  vkf_runner *encode, *step;
  int32_t *mask;    /* [rows, src_len], kept for the steps */
  int32_t *scratch; /* [rows · capacity] */
  float *logits;    /* [rows, vocab] */
};

/* Binds every cache input of `g` (cross caches always, self caches in the step plan). */
static vkf_status make_runner(vkf_device *device, vkf_s2s_engine *e, vkf_encdec_graph *g,
                              const vkf_runner *share, vkf_runner **out) {
  /* the prologue folds only where they pay on this device (graph/passes/passes.h) */
  vkf_pass_options po = vkf_gemm_pass_options(vkf_device_caps_get(device));
  VKF_RETURN_IF_ERROR(vkf_passes_run(g->graph, &po, NULL));
  vkf_runner_binding *b = calloc((size_t)(4 * g->layers), sizeof *b);
  if (!b) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "cache bindings");
  uint32_t n = 0;
  for (int64_t l = 0; l < g->layers; l++) {
    b[n++] = (vkf_runner_binding){g->cross_k[l], vkf_kv_cache_keys(e->cross_cache, l)};
    b[n++] = (vkf_runner_binding){g->cross_v[l], vkf_kv_cache_values(e->cross_cache, l)};
    if (g->self_k) {
      b[n++] = (vkf_runner_binding){g->self_k[l], vkf_kv_cache_keys(e->self_cache, l)};
      b[n++] = (vkf_runner_binding){g->self_v[l], vkf_kv_cache_values(e->self_cache, l)};
    }
  }
  vkf_runner_options ro = {
      .profile = e->o.profile, .bindings = b, .binding_count = n, .share_constants_with = share};
  vkf_status s = vkf_runner_create(device, g->graph, &ro, out);
  free(b);
  return s;
}

vkf_status vkf_s2s_engine_create(vkf_device *device, vkf_encdec_model *model,
                                 const vkf_s2s_engine_options *options, vkf_s2s_engine **out) {
  *out = NULL;
  const vkf_hf_config *c = vkf_encdec_config(model);
  vkf_s2s_engine *e = calloc(1, sizeof *e);
  if (!e) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  e->model = model;
  e->o = *options;
  e->vocab = c->vocab_size;
  int64_t rows = e->o.rows, cap = e->o.capacity;
  e->mask = malloc((size_t)(rows * e->o.src_len) * sizeof *e->mask);
  e->scratch = malloc((size_t)(rows * (cap > 1 ? cap : 1)) * sizeof *e->scratch);
  e->logits = malloc((size_t)(rows * e->vocab) * sizeof *e->logits);
  vkf_status s = e->mask && e->scratch && e->logits
                     ? VKF_OK
                     : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  vkf_kv_cache_options so = {.batch = rows,
                             .layers = c->decoder_layers,
                             .kv_heads = c->decoder_heads,
                             .capacity = cap,
                             .head_dim = c->head_dim,
                             .dtype = e->o.cache_dtype};
  vkf_kv_cache_options xo = so;
  xo.capacity = e->o.src_len;
  if (!s) s = vkf_kv_cache_create(device, &so, &e->self_cache);
  if (!s) s = vkf_kv_cache_create(device, &xo, &e->cross_cache);
  vkf_encdec_build_options eo = {.mode = VKF_ENCDEC_ENCODE,
                                 .batch = rows,
                                 .src_len = e->o.src_len,
                                 .dtype = e->o.dtype,
                                 .cross_cache = 1,
                                 .cache_dtype = e->o.cache_dtype};
  if (!s) s = vkf_encdec_build(model, &eo, &e->encode_g);
  vkf_encdec_build_options po = eo;
  po.mode = VKF_ENCDEC_STEP;
  po.cross_cache = 0;
  po.logits = 1;
  po.capacity = cap;
  if (!s) s = vkf_encdec_build(model, &po, &e->step_g);
  if (!s) s = make_runner(device, e, &e->encode_g, NULL, &e->encode);
  if (!s) s = make_runner(device, e, &e->step_g, e->encode, &e->step);
  if (s) {
    vkf_s2s_engine_destroy(e);
    return s;
  }
  *out = e;
  return VKF_OK;
}

void vkf_s2s_engine_destroy(vkf_s2s_engine *e) {
  if (!e) return;
  vkf_runner_destroy(e->step); /* before the encoder's runner, whose weight buffers it borrows */
  vkf_runner_destroy(e->encode);
  vkf_encdec_graph_release(&e->step_g);
  vkf_encdec_graph_release(&e->encode_g);
  vkf_kv_cache_destroy(e->self_cache);
  vkf_kv_cache_destroy(e->cross_cache);
  free(e->mask);
  free(e->scratch);
  free(e->logits);
  free(e);
}

static vkf_status set_i32(vkf_runner *r, vkf_value v, const int32_t *data, int64_t count) {
  return vkf_runner_set(r, v, data, (size_t)count * sizeof *data);
}

vkf_status vkf_s2s_engine_encode(vkf_s2s_engine *e, const int32_t *ids, const int32_t *mask) {
  int64_t n = e->o.rows * e->o.src_len;
  VKF_RETURN_IF_ERROR(set_i32(e->encode, e->encode_g.input_ids, ids, n));
  VKF_RETURN_IF_ERROR(set_i32(e->encode, e->encode_g.attention_mask, mask, n));
  memcpy(e->mask, mask, (size_t)n * sizeof *mask);
  VKF_RETURN_IF_ERROR(vkf_runner_run(e->encode));
  /* The step plan reads the mask for its cross attention; it never changes within a run. */
  return set_i32(e->step, e->step_g.attention_mask, e->mask, n);
}

vkf_status vkf_s2s_engine_step(vkf_s2s_engine *e, const int32_t *tokens, const int64_t *positions,
                               const float **out_logits) {
  int64_t rows = e->o.rows, cap = e->o.capacity;
  const vkf_encdec_graph *g = &e->step_g;
  for (int64_t r = 0; r < rows; r++)
    if (positions[r] < 0 || positions[r] >= cap)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "row %lld: decoder position %lld is outside the %lld the cache holds",
                             (long long)r, (long long)positions[r], (long long)cap);
  VKF_RETURN_IF_ERROR(set_i32(e->step, g->decoder_input_ids, tokens, rows));
  for (int64_t r = 0; r < rows; r++) e->scratch[r] = (int32_t)positions[r];
  VKF_RETURN_IF_ERROR(set_i32(e->step, g->positions, e->scratch, rows));
  for (int64_t r = 0; r < rows; r++) e->scratch[r] = (int32_t)positions[r] + 1;
  VKF_RETURN_IF_ERROR(set_i32(e->step, g->kv_len, e->scratch, rows));
  if (vkf_value_valid(g->buckets)) {
    for (int64_t r = 0; r < rows; r++)
      vkf_encdec_step_buckets(e->model, positions[r], cap, e->scratch + r * cap);
    VKF_RETURN_IF_ERROR(set_i32(e->step, g->buckets, e->scratch, rows * cap));
  }
  VKF_RETURN_IF_ERROR(vkf_runner_run(e->step));
  VKF_RETURN_IF_ERROR(
      vkf_runner_get(e->step, g->logits, e->logits, (size_t)(rows * e->vocab) * sizeof *e->logits));
  *out_logits = e->logits;
  return VKF_OK;
}

vkf_kv_cache *vkf_s2s_engine_cache(const vkf_s2s_engine *e) {
  return e->self_cache;
}
struct vkf_runner *vkf_s2s_engine_step_runner(const vkf_s2s_engine *e) {
  return e->step;
}
const vkf_graph *vkf_s2s_engine_step_graph(const vkf_s2s_engine *e) {
  return e->step_g.graph;
}
struct vkf_runner *vkf_s2s_engine_encode_runner(const vkf_s2s_engine *e) {
  return e->encode;
}
const vkf_graph *vkf_s2s_engine_encode_graph(const vkf_s2s_engine *e) {
  return e->encode_g.graph;
}
