/* Owns the pass pipeline: the ordered list below is the whole compiler middle end. Each pass is
 * skippable by key (VKF_NO_FUSE), verified after it runs, and dumped with VKF_DUMP=passes. */
#include "graph/passes/passes.h"

#include <string.h>

#include "graph/base/env.h"
#include "graph/base/log.h"
#include "graph/ir/dump.h"
#include "graph/ir/graph_internal.h"
#include "graph/ir/verify.h"
#include "graph/passes/memory_plan.h"

static const vkf_pass k_passes[] = {
    {"verify", NULL, vkf_pass_verify},                        /* shapes/dtypes re-inferred */
    {"dce", NULL, vkf_pass_dce},                              /* drop what no output needs */
    {"fuse_attention", "attention", vkf_pass_fuse_attention}, /* before gemm: needs plain matmuls */
    {"fuse_gemm", "gemm", vkf_pass_fuse_gemm},                /* bias + activation + residual */
    {"fuse_norm", "norm", vkf_pass_fuse_norm}, /* after gemm: the matmul keeps its epilogue */
    {"fuse_glu", "glu", vkf_pass_fuse_glu},    /* before elementwise takes act·mul */
    {"fuse_elementwise", "elementwise", vkf_pass_fuse_elementwise}, /* what is left elementwise */
    {"memory_plan", NULL, vkf_pass_memory_plan}, /* last: needs the final order */
};
_Static_assert(sizeof k_passes / sizeof k_passes[0] <= VKF_MAX_PASSES, "raise VKF_MAX_PASSES");

const vkf_pass *vkf_passes_list(uint32_t *out_count) {
  *out_count = (uint32_t)(sizeof k_passes / sizeof k_passes[0]);
  return k_passes;
}

vkf_status vkf_pass_verify(vkf_graph *g, const vkf_pass_options *options, uint32_t *out_rewrites) {
  (void)options;
  *out_rewrites = 0;
  return vkf_graph_verify(g);
}

vkf_status vkf_pass_memory_plan(vkf_graph *g, const vkf_pass_options *options,
                                uint32_t *out_rewrites) {
  *out_rewrites = 0;
  vkf_memory_plan_options mo = {.alignment = options ? options->alignment : 0};
  return vkf_memory_plan_build(g, &mo);
}

int64_t vkf_pass_prologue_rows(int device_is_cpu) {
  return device_is_cpu ? 1 : 0;
}

vkf_status vkf_passes_run(vkf_graph *g, const vkf_pass_options *options,
                          vkf_pass_report *out_report) {
  vkf_pass_report local;
  vkf_pass_report *report = out_report ? out_report : &local;
  memset(report, 0, sizeof *report);
  vkf_pass_options o = options ? *options : (vkf_pass_options){0};
  const vkf_env *env = vkf_env_get();
  if (!o.skip) o.skip = env->no_fuse;
  if (!o.dump) o.dump = env->dump;
  if (!o.dump_dir) o.dump_dir = env->dump_dir ? env->dump_dir : ".";
  int dump = o.dump && vkf_env_list_has(o.dump, "passes");

  VKF_RETURN_IF_ERROR(vkf_graph_status(g));
  uint32_t count;
  const vkf_pass *passes = vkf_passes_list(&count);
  for (uint32_t i = 0; i < count; i++) {
    const vkf_pass *p = &passes[i];
    vkf_pass_report_entry *e = &report->passes[report->count++];
    e->name = p->name;
    e->nodes_before = vkf_graph_node_count(g);
    e->skipped = p->skip_key && vkf_env_list_has(o.skip, p->skip_key);
    if (!e->skipped) {
      vkf_status st = p->run(g, &o, &e->rewrites);
      if (st) return vkf_status_annotate(st, "pass %s: ", p->name);
      if (!o.no_verify) {
        st = vkf_graph_verify(g);
        if (st) return vkf_status_annotate(st, "verifier after pass %s: ", p->name);
      }
    }
    e->nodes_after = vkf_graph_node_count(g);
    vkf_log(VKF_LOG_DEBUG, "pass %s: %u -> %u nodes, %u rewrites%s", p->name, e->nodes_before,
            e->nodes_after, e->rewrites, e->skipped ? " (skipped)" : "");
    if (dump) {
      char stem[64];
      snprintf(stem, sizeof stem, "%02u_%s", i, p->name);
      VKF_RETURN_IF_ERROR(vkf_dump_files(g, o.dump_dir, stem));
    }
  }
  const vkf_memory_plan *mp = vkf_graph_memory_plan(g);
  report->peak_size = mp->peak_size;
  report->naive_size = mp->naive_size;
  return VKF_OK;
}
