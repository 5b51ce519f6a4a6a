/* The batch split, without a GPU: a softmax with valid lengths (which lowering cannot slice) over
 * 1 KiB per batch row, or a fused attention over q, k, v of 1 KiB per row, split for caps whose
 * storage range, allocation size, workgroup grid or heap hold only a few rows; the runs cover the
 * batch evenly, none larger than what fits, and the reason names the limit; a row that alone
 * exceeds a limit is an error naming the node and the limit; an error that is not a limit is
 * returned as it is. */
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/lower/batch_split.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "tests/graph/desktop_caps.h"
#include "tests/test_util.h"

typedef struct probe_log {
  int builds;
  int fail_with_not_found;
  int attention; /* the attention graph (else the softmax) */
} probe_log;

/* x [rows, 16, 16] f32 (1 KiB per row), lens [rows] -> softmax over the valid lengths. Or q, k, v
 * [rows, 2, 16, 8] f32 (1 KiB per row each) -> attention. */
static vkf_status build(void *user, int64_t rows, vkf_batch_graph *out) {
  probe_log *log = user;
  log->builds++;
  *out = (vkf_batch_graph){0};
  if (log->fail_with_not_found)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "tensor \"w\" not found");
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create("split", &g));
  if (!log->attention) {
    int64_t xs[3] = {rows, 16, 16}, ls[1] = {rows};
    vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, xs);
    vkf_value lens = vkf_graph_input(g, "lens", VKF_I32, 1, ls);
    vkf_value y = vkf_softmax(g, "masked", x, &(vkf_softmax_options){.valid_lens = lens});
    vkf_graph_output(g, y, "y");
    *out = (vkf_batch_graph){
        .graph = g, .input_count = 2, .output_count = 1, .inputs = {x, lens}, .outputs = {y}};
    return vkf_graph_status(g);
  }
  int64_t shape[4] = {rows, 2, 16, 8};
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, shape);
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, shape);
  vkf_value v = vkf_graph_input(g, "v", VKF_F32, 4, shape);
  vkf_value o = vkf_attention(g, "attn", q, k, v, &(vkf_attention_options){0});
  vkf_graph_output(g, o, "o");
  *out = (vkf_batch_graph){
      .graph = g, .input_count = 3, .output_count = 1, .inputs = {q, k, v}, .outputs = {o}};
  return vkf_graph_status(g);
}

/* Checks the split of `batch` rows: `runs` runs of `rows` (last `last`), reason naming `limit`. */
static void expect_split(const char *what, const vkf_device_caps *caps, int64_t batch, int64_t runs,
                         int64_t rows, int64_t last, const char *limit, int attention) {
  probe_log log = {.attention = attention};
  vkf_batch_split s;
  vkf_status st = vkf_batch_split_choose(caps, batch, build, &log, &s);
  CHECK_MSG(st == VKF_OK, "%s: %s", what, vkf_status_message(st));
  vkf_status_free(st);
  CHECK_MSG(s.run_count == runs && s.rows_per_run == rows && s.last_rows == last,
            "%s: %lld runs of %lld (last %lld), want %lld of %lld (last %lld)", what,
            (long long)s.run_count, (long long)s.rows_per_run, (long long)s.last_rows,
            (long long)runs, (long long)rows, (long long)last);
  CHECK_MSG(limit ? strstr(s.reason, limit) != NULL : s.reason[0] == 0, "%s: reason \"%s\"", what,
            s.reason);
  int64_t covered = 0;
  for (int64_t i = 0; i < s.run_count; i++) {
    int64_t first = 0, n = vkf_batch_split_rows(&s, i, &first);
    CHECK_MSG(first == covered && n >= 1 && n <= rows, "%s: run %lld", what, (long long)i);
    covered += n;
  }
  CHECK_MSG(covered == batch, "%s: runs cover %lld of %lld rows", what, (long long)covered,
            (long long)batch);
  /* A binary search, not a scan: a handful of probes even for a big batch. */
  CHECK_MSG(log.builds <= 2 + 2 * 12, "%s: %d probe builds", what, log.builds);
  /* Every run of the chosen size lowers within the caps (the check vkf_lower_graph makes). */
  vkf_batch_graph bg;
  vkf_lowered low = {0};
  CHECK_OK(build(&log, s.rows_per_run, &bg));
  CHECK_OK(vkf_memory_plan_build(bg.graph, NULL));
  CHECK_OK(vkf_lower_graph(bg.graph, caps, NULL, &low));
  vkf_lowered_free(&low);
  vkf_graph_destroy(bg.graph);
  char line[512];
  vkf_batch_split_describe(&s, line, sizeof line);
  CHECK_MSG(runs == 1 ? strstr(line, "1 run") != NULL : strstr(line, "runs of") != NULL,
            "%s: \"%s\"", what, line);
}

int main(void) {
  vkf_device_caps caps = desktop_caps();
  expect_split("fits", &caps, 10, 1, 10, 10, NULL, 0);
  expect_split("fits, attention", &caps, 10, 1, 10, 10, NULL, 1);

  caps.max_storage_buffer_range = 4096; /* 4 rows of x or the output */
  expect_split("storage range", &caps, 10, 3, 4, 2, "maxStorageBufferRange (4096 bytes)", 0);
  expect_split("storage range, even", &caps, 8, 2, 4, 4, "maxStorageBufferRange", 0);
  /* 100000 rows also outgrow the softmax's grid (a workgroup per row, 65535 x 65535 at most is
   * plenty; the range is the limit). */
  expect_split("storage range, big batch", &caps, 100000, 25000, 4, 4, "maxStorageBufferRange", 0);
  /* The attention is sliced along its batch instead: one run. */
  expect_split("storage range, attention sliced", &caps, 10, 1, 10, 10, NULL, 1);

  caps = desktop_caps();
  caps.max_memory_allocation_size = 3000; /* each input is its own plan buffer: 2 rows */
  expect_split("allocation size", &caps, 5, 3, 2, 1, "maxMemoryAllocationSize (3000 bytes)", 0);
  expect_split("allocation size, attention", &caps, 5, 3, 2, 1, "maxMemoryAllocationSize", 1);

  caps = desktop_caps();
  caps.max_workgroup_count[1] = 6; /* the attention grid's y is rows x heads */
  expect_split("workgroup grid", &caps, 7, 3, 3, 1, "needs 14 workgroups (limit 6)", 1);

  caps = desktop_caps();
  caps.heap_count = 1;
  caps.heap_size[0] = 6000; /* q, k, v, output: 4 KiB per row */
  expect_split("heap", &caps, 3, 3, 1, 1, "largest memory heap (6000 bytes)", 1);

  /* One row alone is too big: an error naming the node and the limit. */
  caps = desktop_caps();
  caps.max_storage_buffer_range = 512;
  probe_log log = {0};
  vkf_batch_split s;
  CHECK_STATUS(vkf_batch_split_choose(&caps, 6, build, &log, &s), VKF_STATUS_OUT_OF_MEMORY,
               "even one batch row exceeds the device's limits: node \"masked\"");
  CHECK_STATUS(vkf_batch_split_choose(&caps, 1, build, &log, &s), VKF_STATUS_OUT_OF_MEMORY,
               "spans 1024 bytes, over the device's maxStorageBufferRange (512 bytes)");
  /* Not a limit: returned as it is, without probing smaller batches. */
  log = (probe_log){.fail_with_not_found = 1};
  CHECK_STATUS(vkf_batch_split_choose(&caps, 6, build, &log, &s), VKF_STATUS_NOT_FOUND,
               "tensor \"w\" not found");
  CHECK(log.builds == 1);
  CHECK_STATUS(vkf_batch_split_choose(&caps, 0, build, &log, &s), VKF_STATUS_INVALID_ARGUMENT,
               "at least 1");
  return test_report();
}
