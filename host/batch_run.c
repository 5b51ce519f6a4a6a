/* Executes a batch split: builds and creates a runner per distinct run size, then per run
 * uploads its rows, runs, and downloads its rows into the whole-batch outputs. */
#include <string.h>

#include "host/batch_run.h"

typedef struct run_plan {
  int64_t rows;
  vkf_batch_graph graph;
  vkf_runner *runner;
} run_plan;

/* Bytes per batch row of `v`, a batch-first tensor of `rows` rows, and a check that the host
 * array of the whole batch (`batch` rows) has exactly that many rows. */
static vkf_status row_size(const vkf_graph *g, vkf_value v, int64_t rows, int64_t batch,
                           size_t host_size, size_t *out) {
  const vkf_tensor *t = vkf_graph_tensor(g, v);
  if (t->rank < 1 || t->shape[0] != rows)
    return vkf_status_make(VKF_STATUS_INTERNAL,
                           "batched run: tensor \"%s\" is not batch-first with %lld rows",
                           t->name ? t->name : "?", (long long)rows);
  *out = vkf_tensor_size(t) / (size_t)rows;
  if (host_size / (size_t)batch != *out || host_size % (size_t)batch)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "batched run: tensor \"%s\": %zu host bytes for %lld rows of %zu bytes",
                           t->name ? t->name : "?", host_size, (long long)batch, *out);
  return VKF_OK;
}

static vkf_status create(vkf_device *device, vkf_batch_build_fn build, void *user,
                         const vkf_runner *share, run_plan *p) {
  VKF_RETURN_IF_ERROR(build(user, p->rows, &p->graph));
  vkf_runner_options ro = {.share_constants_with = share};
  return vkf_runner_create(device, p->graph.graph, &ro, &p->runner);
}

static vkf_status run_one(run_plan *p, int64_t first, int64_t batch, const vkf_batch_input *inputs,
                          const vkf_batch_output *outputs, const vkf_batch_run_options *options) {
  const vkf_batch_graph *g = &p->graph;
  for (uint32_t i = 0; i < g->input_count; i++) {
    if (!vkf_value_valid(g->inputs[i])) continue;
    if (!inputs[i].data)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "batched run: input %u has no data", i);
    size_t row = 0;
    VKF_RETURN_IF_ERROR(row_size(g->graph, g->inputs[i], p->rows, batch, inputs[i].size, &row));
    const char *src = (const char *)inputs[i].data + (size_t)first * row;
    VKF_RETURN_IF_ERROR(vkf_runner_set(p->runner, g->inputs[i], src, (size_t)p->rows * row));
  }
  VKF_RETURN_IF_ERROR(vkf_runner_run(p->runner));
  for (uint32_t i = 0; i < g->output_count; i++) {
    if (!vkf_value_valid(g->outputs[i]) || !outputs[i].data) continue;
    size_t row = 0;
    VKF_RETURN_IF_ERROR(row_size(g->graph, g->outputs[i], p->rows, batch, outputs[i].size, &row));
    char *dst = (char *)outputs[i].data + (size_t)first * row;
    VKF_RETURN_IF_ERROR(vkf_runner_get(p->runner, g->outputs[i], dst, (size_t)p->rows * row));
  }
  if (options && options->after_run)
    return options->after_run(options->user, p->runner, g, first, p->rows);
  return VKF_OK;
}

vkf_status vkf_batch_run(vkf_device *device, const vkf_batch_split *split, vkf_batch_build_fn build,
                         void *user, const vkf_batch_input *inputs, const vkf_batch_output *outputs,
                         const vkf_batch_run_options *options) {
  if (split->run_count < 1 || split->rows_per_run < 1 || split->last_rows < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "batched run: empty split");
  run_plan plans[2] = {{.rows = split->rows_per_run}, {.rows = split->last_rows}};
  const int distinct = split->run_count > 1 && split->last_rows != split->rows_per_run ? 2 : 1;
  vkf_status st = create(device, build, user, NULL, &plans[0]);
  if (!st && distinct == 2) st = create(device, build, user, plans[0].runner, &plans[1]);
  for (int64_t i = 0; i < split->run_count && !st; i++) {
    int64_t first = 0, rows = vkf_batch_split_rows(split, i, &first);
    st = run_one(&plans[rows == plans[0].rows ? 0 : 1], first, split->batch, inputs, outputs,
                 options);
  }
  /* The second runner binds the first's weights: destroy it first. */
  for (int k = 1; k >= 0; k--) {
    vkf_runner_destroy(plans[k].runner);
    if (plans[k].graph.graph) vkf_graph_destroy(plans[k].graph.graph);
  }
  return st;
}
