/* Arithmetic intensity of each fused attention body from its tiles: what one workgroup moves per
 * key tile, as the shaders are written (shaders/attention*.comp|glsl); the count ignores
 * caches, so global bytes are the loads and stores the kernel issues. Masks are taken as absent
 * (every key visited), the once-per-row Q load and O store as part of the global bytes, and the
 * coopmat body's lazy rescale (rare: a row's max jumping by 2^8) as never taken. */
#include "tools/vkf/bench_attention_intensity.h"

/* Shared bytes one workgroup moves per key tile of bc keys, and the rows sharing one global
 * load of each K/V element (the whole workgroup when staged, a subgroup for the broadcast
 * body, one row when read in place). */
static double shared_per_tile(const vkf_attention_config *c, double br, double bc, double d,
                              double dv, double *rows_per_load) {
  *rows_per_load = c->stage_kv ? br : 1;
  switch (c->layout) {
  case VKF_ATTENTION_LAYOUT_COOPMAT: {
    /* K/V tiles written once (f16) and read whole by each of the 4 subgroups; S stored (f32),
     * read, rewritten and read again by the softmax; P written and read (f16). */
    *rows_per_load = br;
    return bc * (d + dv) * 2 * (1 + 4) + br * bc * (4 * 4 + 2 * 2);
  }
  case VKF_ATTENTION_LAYOUT_TILED: {
    /* 128 invocations as 16 x 8: each reads tr = br/16 q and kt = bc/8 k values per d, then
     * tr p and ceil(dv/8) v values per key; K/V and P written once; the max through tl_red. */
    double tr = br / 16, kt = bc / 8, dt = (double)(((uint32_t)dv + 7) / 8);
    *rows_per_load = br;
    return 4 * (bc * (d + dv) + 128 * d * (tr + kt) + 128 * bc * (tr + dt) + br * bc +
                br * 8 * 9);
  }
  case VKF_ATTENTION_LAYOUT_LANES: {
    /* q·k reads Qs (and Ks when staged) per (row, key, d); p·v Ps (and Vs) per (row, key, dv). */
    double per = c->stage_kv ? 8 : 4;
    double red = c->subgroup_reduce ? 0 : 2 * br * c->lanes * 4 * (1 + c->lanes);
    return (c->stage_kv ? 4 * bc * (d + dv) : 0) + br * bc * (d + dv) * per + br * bc * 4 + red;
  }
  default: /* ROW: the broadcast body has no shared memory; the plain one reads staged K/V */
    if (c->cpu_bcast) {
      *rows_per_load = c->rows ? c->rows : 8;
      return 0;
    }
    return c->stage_kv ? 4 * bc * (d + dv) + br * bc * (d + dv) * 4 : 0;
  }
}

vkf_attention_intensity vkf_bench_attention_intensity(const vkf_attention_config *c,
                                                      const vkf_attention_shape *s) {
  vkf_attention_intensity r = {0, 0};
  double br = c->br ? c->br : 1, bc = c->bc ? c->bc : 1, d = s->d, dv = s->dv, nq = s->nq,
         nk = s->nk, es = s->dtype == VKF_F16 ? 2 : 4;
  double rows_per_load;
  double sh_tile = shared_per_tile(c, br, bc, d, dv, &rows_per_load);
  /* per (batch, kv head's group of query heads; one head without grouped rows): FLOPs, shared
   * bytes over every workgroup's tiles, global bytes. Grouped rows stack the group's queries in
   * one workgroup, so one K/V load serves them all. */
  double rows = nq * (c->gqa_group ? c->gqa_group : 1);
  double flop = 2 * rows * nk * (d + dv);
  double workgroups = (double)(((uint64_t)rows + (uint64_t)br - 1) / (uint64_t)br);
  double tiles = (double)(((uint64_t)nk + (uint64_t)bc - 1) / (uint64_t)bc);
  double loaders =
      (double)(((uint64_t)rows + (uint64_t)rows_per_load - 1) / (uint64_t)rows_per_load);
  double global = loaders * nk * (d + dv) * es + rows * (d + dv) * es;
  if (sh_tile > 0) r.flop_per_shared_byte = flop / (workgroups * tiles * sh_tile);
  r.flop_per_global_byte = global > 0 ? flop / global : 0;
  return r;
}
