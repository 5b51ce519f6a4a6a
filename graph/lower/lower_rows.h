/* Helpers shared by the row kernels' lowerings (graph/lower/lower_norm.c, graph/lower/lower_softmax.c): a
 * strided tensor seen as [lead0, lead1, lead2, row] for the kernels' push constants, the grid of
 * one workgroup per row, and the workgroup-size and reduction rules both choosers apply; also
 * small u32 arithmetic the attention choosers share. */
#ifndef VKF_GRAPH_LOWER_ROWS_H
#define VKF_GRAPH_LOWER_ROWS_H

#include <stdint.h>

#include "graph/lower/lower_node.h"

/* The choosers' small arithmetic (the dense and block-sparse attention lowerings share it). */
static inline uint32_t vkf_u32_min(uint32_t a, uint32_t b) {
  return a < b ? a : b;
}
static inline uint32_t vkf_u32_max(uint32_t a, uint32_t b) {
  return a > b ? a : b;
}
static inline uint32_t vkf_u32_round_up(uint32_t a, uint32_t m) {
  return (a + m - 1) / m * m;
}

/* A tensor broadcast to a rank-`rank` shape and padded with leading 1s to rank 4, as the kernels
 * index it: element [i0,i1,i2,j] is at off + i0*s[0] + i1*s[1] + i2*s[2] + j*s[3]. */
typedef struct vkf_rows_view {
  uint32_t lead[3]; /* leading dims of the (broadcast) shape; rows = lead[0]*lead[1]*lead[2] */
  uint32_t len;     /* last dim */
  uint32_t s[4];    /* element strides; 0 along broadcast dims */
} vkf_rows_view;

/* Views `t` broadcast to `shape` (rank <= 4, t->rank <= rank, dims of t are 1 or equal). Fails
 * when an index would not fit the kernels' 32-bit arithmetic. */
static inline vkf_status vkf_rows_view_make(const vkf_plan_tensor *t, uint32_t rank,
                                            const int64_t *shape, const char *node,
                                            const char *what, vkf_rows_view *out_view) {
  VKF_ASSERT(rank >= 1 && rank <= 4 && t->rank <= rank);
  int64_t dims[4] = {1, 1, 1, 1}, strides[4] = {0, 0, 0, 0};
  uint64_t span = 0;
  for (uint32_t k = 0; k < rank; k++) {
    uint32_t pad = 4 - rank + k; /* position in the rank-4 view */
    dims[pad] = shape[k];
    int64_t tk = (int64_t)k - (int64_t)(rank - t->rank); /* matching dim of t, right-aligned */
    if (tk >= 0 && t->shape[tk] == shape[k] && shape[k] > 1) strides[pad] = t->strides[tk];
    if (shape[k] > 0) span += (uint64_t)(shape[k] - 1) * (uint64_t)strides[pad];
  }
  int64_t rows = dims[0] * dims[1] * dims[2];
  if (span + 1 >= UINT32_MAX || rows >= UINT32_MAX || dims[3] >= INT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "node \"%s\": %s spans %llu elements (%lld rows); the row kernels "
                           "index with 32 bits",
                           node, what, (unsigned long long)span + 1, (long long)rows);
  for (int k = 0; k < 3; k++) out_view->lead[k] = (uint32_t)dims[k];
  out_view->len = (uint32_t)dims[3];
  for (int k = 0; k < 4; k++) out_view->s[k] = (uint32_t)strides[k];
  return VKF_OK;
}

/* True when every row of the view starts at a multiple of 4 elements (given the bound element
 * offset) and is contiguous with a length that is a multiple of 4: the kernels may then move four
 * elements per access (vec4 / f16vec4, 16- or 8-byte aligned). */
static inline int vkf_rows_view_vec4(const vkf_rows_view *v, uint32_t element_offset) {
  return v->s[3] == 1 && v->len % 4 == 0 && element_offset % 4 == 0 && v->s[0] % 4 == 0 &&
         v->s[1] % 4 == 0 && v->s[2] % 4 == 0;
}

/* True when both views have contiguous rows and every row of `a` starts at the same offset modulo
 * 4 elements as the same row of `b`: a kernel can then walk both in whole 4-element vectors
 * between scalar ends. */
static inline int vkf_rows_views_same_phase(const vkf_rows_view *a, uint32_t a_offset,
                                            const vkf_rows_view *b, uint32_t b_offset) {
  if (a->s[3] != 1 || b->s[3] != 1 || (a_offset - b_offset) % 4 != 0) return 0;
  for (int k = 0; k < 3; k++)
    if ((a->s[k] - b->s[k]) % 4 != 0) return 0;
  return 1;
}

/* Pushes off, s0..s3 (the layout both row kernels use for each tensor). */
static inline void vkf_rows_push_view(vkf_plan_dispatch *d, uint32_t element_offset,
                                      const vkf_rows_view *v) {
  vkf_plan_dispatch_push_u32(d, element_offset);
  for (int k = 0; k < 4; k++) vkf_plan_dispatch_push_u32(d, v->s[k]);
}

/* One workgroup per row on a 2-D grid (row = wg.y * groups[0] + wg.x), since rows may exceed the
 * x limit (65535 on many devices). */
static inline vkf_status vkf_rows_grid(const vkf_device_caps *caps, uint64_t rows, const char *node,
                                       uint32_t out_groups[3]) {
  uint64_t max_x = caps->max_workgroup_count[0] ? caps->max_workgroup_count[0] : 65535;
  uint64_t max_y = caps->max_workgroup_count[1] ? caps->max_workgroup_count[1] : 65535;
  uint64_t gx = rows < max_x ? rows : max_x;
  if (gx == 0) gx = 1;
  uint64_t gy = (rows + gx - 1) / gx;
  if (gy == 0) gy = 1;
  if (gy > max_y)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "node \"%s\": %llu rows exceed the grid limit",
                           node, (unsigned long long)rows);
  out_groups[0] = (uint32_t)gx;
  out_groups[1] = (uint32_t)gy;
  out_groups[2] = 1;
  return VKF_OK;
}

/* Workgroup size for one row of `len` elements: a power of two giving each invocation about
 * `per_invocation` elements, at least 32 (one warp on NVIDIA, whole SIMD groups everywhere) and at
 * most `cap` and the device's limits. On a CPU device (lavapipe) one workgroup runs on one core as
 * a loop over its subgroups, switching between them at every barrier, and rows already spread over
 * the cores: one subgroup per workgroup makes the barriers free. */
static inline uint32_t vkf_rows_workgroup_size(const vkf_device_caps *caps, uint64_t len,
                                               uint32_t per_invocation, uint32_t cap) {
  uint32_t limit = cap;
  if (caps->kind == VKF_DEVICE_KIND_CPU && caps->subgroup_size && caps->subgroup_size < limit)
    limit = caps->subgroup_size;
  if (caps->max_workgroup_invocations && caps->max_workgroup_invocations < limit)
    limit = caps->max_workgroup_invocations;
  if (caps->max_workgroup_size[0] && caps->max_workgroup_size[0] < limit)
    limit = caps->max_workgroup_size[0];
  uint32_t wg = 32;
  while (wg < limit && (uint64_t)wg * per_invocation < len) wg *= 2;
  while (wg > limit) wg /= 2; /* limits below 32: still a power of two */
  return wg ? wg : 1;
}

/* Rows per workgroup: a workgroup that owns one short row does a few elements of work and pays
 * the per-workgroup cost (launch, reductions; on a CPU device a scheduled task, microseconds) for
 * them, so short rows are batched until a workgroup covers about 1024 elements, at most 64 rows,
 * while keeping enough workgroups to occupy the device (64 on a CPU device for its cores, 1024 on
 * a GPU for its compute units). */
static inline uint32_t vkf_rows_per_workgroup(const vkf_device_caps *caps, uint64_t rows,
                                              uint64_t len) {
  uint64_t per = len >= 1024 ? 1 : 1024 / (len ? len : 1);
  if (per > 64) per = 64;
  uint64_t min_groups = caps->kind == VKF_DEVICE_KIND_CPU ? 64 : 1024;
  uint64_t fit = rows / min_groups; /* most rows per workgroup that still leaves min_groups */
  if (per > fit) per = fit;
  return per ? (uint32_t)per : 1;
}

/* True when a workgroup of `workgroup_size` invocations is a single subgroup, so reductions need
 * no shared memory and no barrier: on CPU devices (barriers switch coroutines there), where the
 * size is guaranteed (vkf_caps_subgroup_fixed: Mesa 22.3's lavapipe at 1024-bit vectors reports
 * 32 and runs 16, and a one-subgroup sum of a 32-wide workgroup then added half the row). */
static inline int vkf_rows_one_subgroup(const vkf_device_caps *caps, uint32_t workgroup_size,
                                        int subgroup_reduce) {
  uint32_t sg = vkf_caps_subgroup_fixed(caps);
  return subgroup_reduce && caps->kind == VKF_DEVICE_KIND_CPU && sg && workgroup_size <= sg;
}

/* Subgroup reductions need arithmetic (subgroupAdd/Max) and basic (elect, subgroup id) ops. */
static inline int vkf_rows_use_subgroup_reduce(const vkf_device_caps *caps) {
  uint32_t need = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_ARITHMETIC;
  return (caps->subgroup_ops & need) == need;
}

#endif
