/* Lowering of nodes whose bindings exceed maxStorageBufferRange, without a GPU: a batched matmul,
 * a softmax and a broadcasting add become one dispatch per slice of their leading dims, every
 * binding within the limit and the slices together covering the whole output; a softmax with
 * valid lengths (which index batches by position) is left whole, and lowering refuses it where it
 * then exceeds the range. */
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "tests/graph/desktop_caps.h"
#include "tests/test_util.h"

static vkf_device_caps small_range_caps(uint64_t range) {
  vkf_device_caps c = desktop_caps();
  c.max_storage_buffer_range = range;
  return c;
}

/* Lowers `g` for `caps`; returns the dispatches node `name` produced, checks every binding of
 * them fits `range`, and adds up the bytes their output bindings (binding `out`) cover. */
static uint32_t lower_and_count(vkf_graph *g, const vkf_device_caps *caps, const char *name,
                                uint32_t out, uint64_t *out_bytes) {
  *out_bytes = 0;
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  vkf_lowered low;
  vkf_status st = vkf_lower_graph(g, caps, NULL, &low);
  CHECK_MSG(st == VKF_OK, "lowering: %s", vkf_status_message(st));
  if (st) {
    vkf_status_free(st);
    return 0;
  }
  uint32_t count = 0;
  for (uint32_t i = 0; i < vkf_plan_dispatch_count(low.plan); i++) {
    const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, i);
    if (strcmp(d->node, name)) continue;
    count++;
    for (uint32_t j = 0; j < d->binding_count; j++)
      CHECK_MSG(d->bindings[j].size <= caps->max_storage_buffer_range,
                "%s dispatch %u binding %u: %llu bytes", name, count, j,
                (unsigned long long)d->bindings[j].size);
    *out_bytes += d->bindings[out].size;
  }
  vkf_lowered_free(&low);
  return count;
}

int main(void) {
  vkf_device_caps caps = small_range_caps(512);
  uint64_t bytes;

  /* [2, 3, 7, 9] scores from [2, 3, 7, 12] x [2, 3, 9, 12]^T: 252 bytes per head, 504 per two */
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("slices", &g));
  int64_t qs[4] = {2, 3, 7, 12}, ks[4] = {2, 3, 9, 12};
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, qs);
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, ks);
  vkf_value s = vkf_matmul(g, "scores", q, k, &(vkf_matmul_options){.transpose_b = 1});
  vkf_value p = vkf_softmax(g, "probs", s, &(vkf_softmax_options){.causal = 1});
  vkf_graph_output(g, p, "p");
  uint32_t n = lower_and_count(g, &caps, "scores", 2, &bytes);
  /* q and k of one head are 336 and 432 bytes: one head per dispatch */
  CHECK_MSG(n == 6, "scores: %u dispatches", n);
  CHECK_MSG(bytes >= 2 * 3 * 7 * 9 * 4, "scores: output bindings cover %llu bytes",
            (unsigned long long)bytes);
  n = lower_and_count(g, &caps, "probs", 1, &bytes);
  CHECK_MSG(n >= 3 && n <= 6, "probs: %u dispatches", n);
  vkf_graph_destroy(g);

  /* A broadcasting add: [3, 5, 40] + [40] (800 bytes per [5, 40]) */
  CHECK_OK(vkf_graph_create("add", &g));
  int64_t xs[3] = {3, 5, 40}, bs[1] = {40};
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, xs);
  vkf_value b = vkf_graph_input(g, "b", VKF_F32, 1, bs);
  vkf_graph_output(g, vkf_add(g, "sum", x, b), "y");
  n = lower_and_count(g, &caps, "sum", 2, &bytes);
  CHECK_MSG(n > 3, "sum: %u dispatches", n);
  vkf_graph_destroy(g);

  /* One sequence's projection: [1, 40, 8] x [8, 16] has no batch to slice and a 2560-byte
   * output, so it is sliced along M (rows of A and the output, B whole), halved to 5 rows. */
  CHECK_OK(vkf_graph_create("rows", &g));
  int64_t as[3] = {1, 40, 8}, ws[2] = {8, 16};
  x = vkf_graph_input(g, "x", VKF_F32, 3, as);
  vkf_value w = vkf_graph_input(g, "w", VKF_F32, 2, ws);
  vkf_graph_output(g, vkf_matmul(g, "proj", x, w, &(vkf_matmul_options){0}), "y");
  n = lower_and_count(g, &caps, "proj", 2, &bytes);
  CHECK_MSG(n == 8, "proj: %u dispatches", n);
  CHECK_MSG(bytes == 40 * 16 * 4, "proj: output bindings cover %llu bytes",
            (unsigned long long)bytes);
  vkf_graph_destroy(g);

  /* A copy of one shape (a [4, 8, 40] permuted view made dense) is sliced like an elementwise
   * op. */
  CHECK_OK(vkf_graph_create("copy", &g));
  int64_t cs[3] = {4, 40, 8};
  x = vkf_graph_input(g, "x", VKF_F32, 3, cs);
  uint32_t perm[3] = {0, 2, 1};
  vkf_graph_output(g, vkf_copy(g, "dense", vkf_permute(g, "t", x, perm)), "y");
  n = lower_and_count(g, &caps, "dense", 1, &bytes);
  CHECK_MSG(n >= 4, "dense: %u dispatches", n);
  vkf_graph_destroy(g);

  /* Softmax with valid lengths is not sliced: one dispatch, and where its binding then exceeds
   * the range, lowering fails naming the node and the limit (vkf_plan_check_limits) instead of
   * leaving it to the device. */
  CHECK_OK(vkf_graph_create("masked", &g));
  int64_t ss[3] = {4, 8, 40}, ls[1] = {4};
  x = vkf_graph_input(g, "x", VKF_F32, 3, ss);
  vkf_value lens = vkf_graph_input(g, "lens", VKF_I32, 1, ls);
  vkf_graph_output(g, vkf_softmax(g, "masked", x, &(vkf_softmax_options){.valid_lens = lens}),
                   "y");
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  vkf_lowered low;
  CHECK_STATUS(vkf_lower_graph(g, &caps, NULL, &low), VKF_STATUS_OUT_OF_MEMORY,
               "node \"masked\" (softmax.comp): binding 0 spans 5120 bytes, over the device's "
               "maxStorageBufferRange (512 bytes)");
  vkf_device_caps roomy = small_range_caps(8192);
  CHECK_OK(vkf_lower_graph(g, &roomy, NULL, &low));
  uint32_t masked = 0;
  for (uint32_t i = 0; low.plan && i < vkf_plan_dispatch_count(low.plan); i++)
    masked += strcmp(vkf_plan_dispatch_get(low.plan, i)->node, "masked") == 0;
  CHECK_MSG(masked == 1, "masked softmax: %u dispatches", masked);
  vkf_lowered_free(&low);
  vkf_graph_destroy(g);
  return test_report();
}
