/* For graph tests that read a lowered plan: memory planning and lowering of `g` for `caps`, a
 * failure printed and counted as a failed check. */
#ifndef VKF_TESTS_GRAPH_LOWER_CHECKED_H
#define VKF_TESTS_GRAPH_LOWER_CHECKED_H

#include <stdio.h>

#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "tests/test_util.h"

/* 1 with *out filled (free it with vkf_lowered_free), 0 after a failed CHECK. */
static inline int lower_checked(vkf_graph *g, const vkf_device_caps *caps, vkf_lowered *out) {
  vkf_status st = vkf_graph_status(g);
  if (!st) st = vkf_memory_plan_build(g, NULL);
  if (!st) st = vkf_lower_graph(g, caps, NULL, out);
  if (!st) return 1;
  fprintf(stderr, "lowering failed: %s\n", vkf_status_message(st));
  vkf_status_free(st);
  CHECK(0);
  return 0;
}

#endif
