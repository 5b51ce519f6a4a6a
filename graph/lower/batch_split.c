/* Chooses how a batch splits into runs that fit the device: probe builds of the batch (or of
 * doubling row counts up to it) and, when it does not fit, of fewer rows, lowered for the caps;
 * any probe error counts as "does not fit" once one row is known to fit, since every limit error
 * grows with the rows. */
#include <stdio.h>
#include <string.h>

#include "graph/lower/batch_split.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"

/* Builds, plans and lowers `rows` rows; the plan itself is discarded. */
static vkf_status probe(const vkf_device_caps *caps, int64_t rows, vkf_batch_build_fn build,
                        void *user) {
  vkf_batch_graph bg = {0};
  vkf_status st = build(user, rows, &bg);
  if (!st) st = vkf_memory_plan_build(bg.graph, NULL);
  vkf_lowered low = {0};
  if (!st) st = vkf_lower_graph(bg.graph, caps, NULL, &low);
  vkf_lowered_free(&low);
  if (bg.graph) vkf_graph_destroy(bg.graph);
  return st;
}

/* A batch up to this many rows is probed whole first (one probe in the common case); a larger
 * one is reached by doubling from one row, so no probe builds more than twice the rows the device
 * takes: a build may hold host memory per row (ids laid out per row), and a request for 10^8 rows
 * must fail or split in moments, not allocate for all of them first. */
enum { PROBE_WHOLE_MAX = 4096 };

static int is_limit(vkf_status s) {
  /* Limits are OUT_OF_MEMORY (vkf_plan_check_limits, buffer sizes) or UNSUPPORTED (workgroup
   * grids the op lowerings refuse); anything else is not about the batch's size. */
  vkf_status_code code = vkf_status_code_of(s);
  return code == VKF_STATUS_OUT_OF_MEMORY || code == VKF_STATUS_UNSUPPORTED;
}

vkf_status vkf_batch_split_choose(const vkf_device_caps *caps, int64_t batch,
                                  vkf_batch_build_fn build, void *user, vkf_batch_split *out) {
  memset(out, 0, sizeof *out);
  if (batch < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "batch of %lld rows: at least 1 needed",
                           (long long)batch);
  out->batch = batch;
  int64_t lo = 0, hi = 0; /* the most rows known to fit; the fewest known not to (0: none yet) */
  vkf_status fail = VKF_OK;
  for (int64_t n = batch <= PROBE_WHOLE_MAX ? batch : 1;;) {
    vkf_status s = probe(caps, n, build, user);
    if (s) {
      if (!is_limit(s)) return s;
      fail = s, hi = n;
      break;
    }
    lo = n;
    if (n == batch) break;
    n = n <= batch / 2 ? 2 * n : batch;
  }
  if (!hi) {
    out->rows_per_run = out->last_rows = batch;
    out->run_count = 1;
    return VKF_OK;
  }
  snprintf(out->reason, sizeof out->reason, "%s", vkf_status_message(fail));
  out->failed_rows = hi;
  if (!lo) { /* nothing probed fit yet: does one row? */
    vkf_status one = hi == 1 ? fail : probe(caps, 1, build, user);
    if (one != fail) vkf_status_free(fail);
    if (one && vkf_status_code_of(one) == VKF_STATUS_OUT_OF_MEMORY)
      return vkf_status_annotate(one, "even one batch row exceeds the device's limits: ");
    if (one) return one;
    lo = 1;
  } else {
    vkf_status_free(fail);
  }
  /* Every error past one row is a limit the rows outgrow (the same graph fits with one). */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    vkf_status s = probe(caps, mid, build, user);
    if (s)
      hi = mid;
    else
      lo = mid;
    vkf_status_free(s);
  }
  /* Even runs: the same number of runs, none larger than what fits. */
  out->run_count = (batch + lo - 1) / lo;
  out->rows_per_run = (batch + out->run_count - 1) / out->run_count;
  out->last_rows = batch - (out->run_count - 1) * out->rows_per_run;
  return VKF_OK;
}

int64_t vkf_batch_split_rows(const vkf_batch_split *split, int64_t index, int64_t *out_first) {
  *out_first = index * split->rows_per_run;
  return index + 1 < split->run_count ? split->rows_per_run : split->last_rows;
}

void vkf_batch_split_describe(const vkf_batch_split *s, char *out, size_t out_size) {
  if (s->run_count <= 1) {
    snprintf(out, out_size, "batch %lld: 1 run (the whole batch fits the device's limits)",
             (long long)s->batch);
    return;
  }
  char last[64] = "";
  if (s->last_rows != s->rows_per_run)
    snprintf(last, sizeof last, " (last %lld)", (long long)s->last_rows);
  char who[64] = "the whole batch exceeds";
  if (s->failed_rows && s->failed_rows != s->batch)
    snprintf(who, sizeof who, "%lld rows exceed", (long long)s->failed_rows);
  snprintf(out, out_size, "batch %lld: %lld runs of %lld rows%s; %s: %s", (long long)s->batch,
           (long long)s->run_count, (long long)s->rows_per_run, last, who, s->reason);
}
