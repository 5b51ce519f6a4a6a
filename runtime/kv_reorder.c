/* The reorder plan: per layer and per K / V, cache [B, H, C, D] viewed as a table [B, H·C·D],
 * gather(table, rows) -> [B, H·C·D], kv_write of that back into the cache at start 0. The
 * gather reads the whole row before kv_write overwrites it (kv_write consumes its output), so
 * repeated and swapped rows are safe. */
#include "runtime/kv_reorder.h"

#include <stdio.h>
#include <stdlib.h>

#include "graph/ir/builder.h"
#include "graph/passes/passes.h"
#include "host/runner.h"

struct vkf_kv_reorder {
  vkf_graph *graph;
  vkf_runner *runner;
  vkf_value rows; /* i32 [B] */
  int64_t batch;
  int32_t *scratch; /* [B] */
};

static void reorder_one(vkf_graph *g, const char *name, vkf_value cache, vkf_value rows,
                        vkf_value start, const vkf_kv_cache_options *o) {
  char nm[96];
  const int64_t flat[2] = {o->batch, o->kv_heads * o->capacity * o->head_dim};
  const int64_t full[4] = {o->batch, o->kv_heads, o->capacity, o->head_dim};
  snprintf(nm, sizeof nm, "%s.table", name);
  vkf_value table = vkf_reshape(g, nm, cache, 2, flat);
  snprintf(nm, sizeof nm, "%s.gather", name);
  vkf_value picked = vkf_gather(g, nm, table, rows);
  snprintf(nm, sizeof nm, "%s.rows", name);
  vkf_value back = vkf_reshape(g, nm, picked, 4, full);
  snprintf(nm, sizeof nm, "%s.write", name);
  vkf_kv_write(g, nm, cache, back, start);
}

vkf_status vkf_kv_reorder_create(vkf_device *device, vkf_kv_cache *cache, vkf_kv_reorder **out) {
  *out = NULL;
  const vkf_kv_cache_options *o = vkf_kv_cache_options_of(cache);
  vkf_kv_reorder *r = calloc(1, sizeof *r);
  vkf_runner_binding *b = calloc((size_t)(2 * o->layers), sizeof *b);
  int32_t *zeros = calloc((size_t)o->batch, sizeof *zeros);
  if (r) r->scratch = malloc((size_t)o->batch * sizeof *r->scratch);
  vkf_status s = r && b && zeros && r->scratch
                     ? VKF_OK
                     : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "KV cache reorder");
  if (!s) {
    r->batch = o->batch;
    s = vkf_graph_create("kv_reorder", &r->graph);
  }
  vkf_value start = VKF_NO_VALUE;
  if (!s) {
    vkf_graph *g = r->graph;
    const int64_t bshape[1] = {o->batch};
    const int64_t cshape[4] = {o->batch, o->kv_heads, o->capacity, o->head_dim};
    r->rows = vkf_graph_input(g, "beam_rows", VKF_I32, 1, bshape);
    start = vkf_graph_input(g, "start", VKF_I32, 1, bshape);
    for (int64_t l = 0; l < o->layers; l++) {
      char nm[64];
      for (int kv = 0; kv < 2; kv++) {
        snprintf(nm, sizeof nm, "past_key_values.%lld.%s", (long long)l, kv ? "value" : "key");
        vkf_value c = vkf_graph_input(g, nm, o->dtype, 4, cshape);
        reorder_one(g, nm, c, r->rows, start, o);
        b[2 * l + kv] = (vkf_runner_binding){
            c, kv ? vkf_kv_cache_values(cache, l) : vkf_kv_cache_keys(cache, l)};
      }
    }
    s = vkf_graph_status(g);
  }
  if (!s) s = vkf_passes_run(r->graph, NULL, NULL);
  if (!s) {
    vkf_runner_options ro = {.bindings = b, .binding_count = (uint32_t)(2 * o->layers)};
    s = vkf_runner_create(device, r->graph, &ro, &r->runner);
  }
  if (!s) s = vkf_runner_set(r->runner, start, zeros, (size_t)o->batch * sizeof *zeros);
  free(b);
  free(zeros);
  if (s) {
    vkf_kv_reorder_destroy(r);
    return vkf_status_annotate(s, "KV cache reorder: ");
  }
  *out = r;
  return VKF_OK;
}

void vkf_kv_reorder_destroy(vkf_kv_reorder *r) {
  if (!r) return;
  vkf_runner_destroy(r->runner);
  vkf_graph_destroy(r->graph);
  free(r->scratch);
  free(r);
}

vkf_status vkf_kv_reorder_run(vkf_kv_reorder *r, const int64_t *rows) {
  int identity = 1;
  for (int64_t i = 0; i < r->batch; i++) {
    if (rows[i] < 0 || rows[i] >= r->batch)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "KV cache reorder: row %lld takes row %lld of %lld", (long long)i,
                             (long long)rows[i], (long long)r->batch);
    identity &= rows[i] == i;
    r->scratch[i] = (int32_t)rows[i];
  }
  if (identity) return VKF_OK;
  VKF_RETURN_IF_ERROR(
      vkf_runner_set(r->runner, r->rows, r->scratch, (size_t)r->batch * sizeof *r->scratch));
  return vkf_runner_run(r->runner);
}
