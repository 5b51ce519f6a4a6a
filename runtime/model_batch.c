/* Glue between the subcommands' model builders and the batch split / batched run: the passes
 * (with VKF_CHECK's pinning) run here once for every build, so the split that is chosen is the
 * one that runs. */
#include <stdio.h>

#include "graph/base/env.h"
#include "graph/base/log.h"
#include "graph/passes/passes.h"
#include "host/batch_run.h"
#include "host/check.h"
#include "runtime/model_batch.h"

typedef struct built {
  vkf_rt_build_fn build;
  void *user;
  int check; /* VKF_CHECK: every node pinned so the interpreter can replay it */
} built;

static vkf_status build_with_passes(void *user, int64_t rows, vkf_batch_graph *out) {
  const built *b = user;
  VKF_RETURN_IF_ERROR(b->build(b->user, rows, out));
  vkf_status st = b->check ? vkf_check_pin_all(out->graph) : VKF_OK;
  if (!st) st = vkf_passes_run(out->graph, NULL, NULL);
  if (st) {
    vkf_graph_destroy(out->graph);
    out->graph = NULL;
  }
  return st;
}

vkf_status vkf_rt_batch_split(const vkf_device_caps *caps, int64_t batch, vkf_rt_build_fn build,
                              void *user, vkf_batch_split *out) {
  built b = {build, user, vkf_env_get()->check};
  return vkf_batch_split_choose(caps, batch, build_with_passes, &b, out);
}

_Static_assert((int)VKF_MODEL_MAX_IO <= (int)VKF_BATCH_MAX_IO, "model slots fit a batch graph");

typedef struct check_state {
  vkf_check_report total;
  char worst_node[256]; /* the runs' graphs (and their node names) are gone after the run */
} check_state;

/* VKF_CHECK per run: node counts add up, the worst node over all runs is kept. */
static vkf_status check_run(void *user, vkf_runner *runner, const vkf_batch_graph *g,
                            int64_t first_row, int64_t rows) {
  (void)first_row, (void)rows;
  check_state *c = user;
  vkf_check_report rep;
  VKF_RETURN_IF_ERROR(vkf_check_run(runner, g->graph, NULL, &rep));
  c->total.nodes_checked += rep.nodes_checked;
  if (rep.worst_ratio >= c->total.worst_ratio) {
    c->total.worst_ratio = rep.worst_ratio;
    c->total.worst_error = rep.worst_error;
    snprintf(c->worst_node, sizeof c->worst_node, "%s", rep.worst_node ? rep.worst_node : "-");
    c->total.worst_node = c->worst_node;
  }
  return VKF_OK;
}

vkf_status vkf_rt_batch_run(const char *tool, vkf_device *device, int64_t batch,
                            vkf_rt_build_fn build, void *user, const vkf_batch_input *inputs,
                            const vkf_batch_output *outputs) {
  built b = {build, user, vkf_env_get()->check};
  vkf_batch_split split;
  VKF_RETURN_IF_ERROR(
      vkf_batch_split_choose(vkf_device_caps_get(device), batch, build_with_passes, &b, &split));
  if (split.run_count > 1) {
    char line[512];
    vkf_batch_split_describe(&split, line, sizeof line);
    vkf_log(VKF_LOG_INFO, "%s: %s", tool, line);
  }
  check_state c = {{0}, ""};
  vkf_batch_run_options o = {.after_run = b.check ? check_run : NULL, .user = &c};
  VKF_RETURN_IF_ERROR(vkf_batch_run(device, &split, build_with_passes, &b, inputs, outputs, &o));
  if (b.check)
    fprintf(stderr,
            "%s: VKF_CHECK: %u nodes agree with the interpreter (closest to the bound: \"%s\", "
            "max error %.3g, %.0f%% of tolerance)\n",
            tool, c.total.nodes_checked, c.total.worst_node ? c.total.worst_node : "-",
            c.total.worst_error, 100.0 * c.total.worst_ratio);
  return VKF_OK;
}

vkf_status vkf_rt_model_build_fn(void *user, int64_t rows, vkf_batch_graph *out) {
  const vkf_rt_model_build *mb = user;
  vkf_model_build_options o = {.batch = rows,
                               .seq_len = mb->seq_len,
                               .target_len = mb->target_len,
                               .memory_len = mb->memory_len,
                               .dtype = mb->dtype,
                               .outputs = mb->outputs,
                               .output_count = mb->output_count,
                               .derived = mb->derived};
  vkf_model_graph mg;
  *out = (vkf_batch_graph){0};
  VKF_RETURN_IF_ERROR(vkf_model_build(mb->model, &o, &mg));
  out->graph = mg.graph;
  out->input_count = mg.input_count;
  out->output_count = vkf_model_output_count(mb->model);
  for (uint32_t i = 0; i < out->input_count; i++) out->inputs[i] = mg.inputs[i];
  for (uint32_t i = 0; i < out->output_count; i++) out->outputs[i] = mg.outputs[i];
  return VKF_OK;
}
