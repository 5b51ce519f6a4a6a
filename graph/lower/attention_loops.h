/* The loop iterations one invocation of shaders/attention.comp runs per workgroup, for devices
 * with a loop-iteration limit (caps.h: lavapipe leaves every loop of an invocation once 65535
 * iterations of all its loops have run, so a workgroup walking too many key tiles silently drops
 * the rest of its keys). The chooser splits the keys (split-K) so each workgroup stays within it.
 * Upper bounds, counted from the loops the shader keeps at run time (those marked [[unroll]]
 * excluded). */
#ifndef VKF_GRAPH_LOWER_ATTENTION_LOOPS_H
#define VKF_GRAPH_LOWER_ATTENTION_LOOPS_H

#include <stdint.h>

#include "graph/base/caps.h"
#include "graph/lower/bind.h"
#include "graph/lower/lower_attention.h"

/* Iterations per key tile (`bc` keys; 16 in the CPU broadcast body, whose one loop walks 16 keys
 * per iteration) as lavapipe counts them (a loop of n iterations counts n + 1): the tile loop,
 * K/V staging (its elements over the workgroup); ROW: the 8-key chunks; LANES: q·k (BC / LANES
 * keys of D dims), the probabilities, p·v (DV / LANES dims of BC keys) and the shared-memory row
 * max; `fixed`: once per workgroup, the Q block's load, the row sum and the tile loop's last
 * test. */
static inline uint64_t vkf_attention_tile_loops(const vkf_attention_config *c,
                                                const vkf_attention_shape *s, uint64_t *fixed) {
  uint64_t wg = c->local_size ? c->local_size : 1, bc = c->bc ? c->bc : 1;
  uint64_t lanes = c->lanes ? c->lanes : 1;
  uint64_t tile = 1;
  if (c->stage_kv && !c->cpu_bcast)
    tile += vkf_div_up(bc * s->d, wg) + 1 + vkf_div_up(bc * s->dv, wg) + 1;
  *fixed = 1;
  if (c->cpu_bcast) return tile;
  if (c->layout == VKF_ATTENTION_LAYOUT_LANES) {
    uint64_t kpl = bc / lanes, dpl = vkf_div_up(s->dv, lanes);
    tile += (kpl + 1) + kpl * (s->d + 1) + (kpl + 1) + dpl * (bc + 1) +
            (c->subgroup_reduce ? 0 : lanes);
    *fixed += vkf_div_up((uint64_t)c->br * s->d, wg) + 1 + (c->subgroup_reduce ? 0 : lanes + 1);
  } else {
    tile += bc / 8 + 2;
  }
  return tile;
}

/* The fewest splits of the keys whose every workgroup stays within 7/8 of the device's loop
 * limit under config `c` (bc and local size final); 1 without a limit. */
static inline uint32_t vkf_attention_loop_splits(const vkf_device_caps *caps,
                                                 const vkf_attention_config *c,
                                                 const vkf_attention_shape *s) {
  if (!caps->loop_iteration_limit || s->nk == 0) return 1;
  uint64_t fixed = 0, tile = vkf_attention_tile_loops(c, s, &fixed);
  uint64_t step = c->cpu_bcast ? 16 : (c->bc ? c->bc : 1); /* keys per iteration counted */
  uint64_t budget = (uint64_t)caps->loop_iteration_limit / 8 * 7;
  uint64_t keys = budget > fixed ? (budget - fixed) / tile * step : 0;
  if (c->bc) keys = keys / c->bc * c->bc; /* whole tiles: a split's chunk is a multiple of bc */
  return keys ? vkf_div_up(s->nk, keys) : UINT32_MAX;
}

#endif
