/* Owns a lowering rule over a group of nodes: a decode step's
 *   q_rot = rotary(q, cos, sin); k_rot = rotary(k, cos, sin);
 *   kv_write(k_cache, k_rot, start); kv_write(v_cache, v, start)
 * (in this order, views between them aside) becomes one shaders/rotary_kv.comp dispatch where
 * four dispatches and two barriers were: k_rot, read by that cache write only, is never stored.
 * Any layout the kernel cannot take (f16 activations, a dimension that is not contiguous, cos and
 * sin or k and v or the two caches strided differently, a cache past one binding, ranges that
 * overlap) leaves the nodes to their own lowerings, which give the same values. Rotary variants
 * built from other ops around ROTARY (partial rotary's slices and concats) do not match. */
#include <string.h>

#include "graph/ir/graph.h"
#include "graph/lower/lower_layout.h"
#include "graph/lower/lower_node.h"
#include "graph/lower/lower_rows.h"

/* The index of the next node at or after `i` that dispatches (live, not a view), or `count`. */
static uint32_t next_dispatching(const vkf_graph *g, uint32_t i) {
  uint32_t count = vkf_graph_node_count(g);
  while (i < count) {
    const vkf_node *n = vkf_graph_node(g, i);
    if (!n->dead && !(vkf_op_flags(n->op) & VKF_OPF_VIEW)) break;
    i++;
  }
  return i;
}

/* True when the live nodes read `v` only once, and it is no graph output. */
static int read_once(const vkf_graph *g, vkf_value v) {
  if (vkf_graph_tensor(g, v)->role != VKF_ROLE_INTERMEDIATE) return 0;
  uint32_t reads = 0;
  for (uint32_t i = 0; i < vkf_graph_node_count(g); i++) {
    const vkf_node *n = vkf_graph_node(g, i);
    if (n->dead) continue;
    for (uint32_t s = 0; s < n->input_count; s++) reads += n->inputs[s].id == v.id;
  }
  return reads == 1;
}

static int overlap(const vkf_lower_ctx *ctx, const vkf_plan_tensor *a, const vkf_plan_tensor *b) {
  if (a->buffer != b->buffer) return 0;
  uint64_t ab, ae, bb, be;
  vkf_lower_binding_range(ctx, a, &ab, &ae);
  vkf_lower_binding_range(ctx, b, &bb, &be);
  return ab < be && bb < ae;
}

static int fits_range(const vkf_lower_ctx *ctx, const vkf_plan_tensor *t) {
  uint64_t b, e, range = ctx->caps->max_storage_buffer_range;
  vkf_lower_binding_range(ctx, t, &b, &e);
  return !range || e - b <= range;
}

typedef struct group {
  const vkf_node *nodes[4]; /* q rotary, k rotary, k cache write, v cache write */
  vkf_plan_tensor q, k, v, y, cs, sn, start, kc, vc;
  /* the cache writes take k and v through [1, H, R, D] <-> [R, H, 1, D] views (ragged rows,
   * models/arch/decoder.c's swap_rows): the kernel's t is then the writes' row */
  int rows_swapped;
} group;

/* The node whose output is `v` when it is a live view swapping dims 0 and 2 of a rank-4 tensor,
 * else NULL. */
static const vkf_node *swap_view(const vkf_graph *g, vkf_value v) {
  uint32_t at = vkf_graph_tensor(g, v)->producer;
  if (at == VKF_NO_NODE) return NULL;
  const vkf_node *n = vkf_graph_node(g, at);
  const uint32_t *ax = n->attrs.permute.axes;
  if (n->dead || n->op != VKF_OP_PERMUTE || vkf_graph_tensor(g, v)->rank != 4 || ax[0] != 2 ||
      ax[1] != 1 || ax[2] != 0 || ax[3] != 3)
    return NULL;
  return n;
}

/* Strides (b, h, t) of a rank-4 tensor contiguous along its last dim, or 0 when it is not. */
static int bht(const vkf_plan_tensor *t, int64_t out[3]) {
  if (t->rank != 4 || t->strides[3] != 1) return 0;
  for (int i = 0; i < 3; i++) {
    if (t->strides[i] < 0 || t->strides[i] > INT32_MAX) return 0;
    out[i] = t->shape[i] == 1 ? 0 : t->strides[i];
  }
  return 1;
}

/* The group's layout checks; the plan tensors are the nodes' as vkf_lower_graph placed them. */
static int layout_ok(const vkf_lower_ctx *ctx, const group *gr) {
  const vkf_plan_tensor *f32s[6] = {&gr->q, &gr->k, &gr->v, &gr->y, &gr->cs, &gr->sn};
  for (int i = 0; i < 6; i++)
    if (f32s[i]->dtype != VKF_F32) return 0;
  if (gr->kc.dtype != gr->vc.dtype || (gr->kc.dtype != VKF_F32 && gr->kc.dtype != VKF_F16) ||
      (gr->kc.dtype == VKF_F16 && !ctx->caps->storage_16bit))
    return 0;
  if (gr->q.rank != 4 || gr->k.rank != 4 || gr->v.rank != 4 || gr->kc.rank != 4) return 0;
  int64_t bq = gr->q.shape[0], t = gr->q.shape[2], d = gr->q.shape[3];
  if (d % 2 || memcmp(gr->y.shape, gr->q.shape, sizeof gr->q.shape) ||
      memcmp(gr->k.shape, gr->v.shape, sizeof gr->k.shape) || gr->k.shape[0] != bq ||
      gr->k.shape[2] != t || gr->k.shape[3] != d ||
      memcmp(gr->kc.shape, gr->vc.shape, sizeof gr->kc.shape) ||
      (gr->start.rank != 2 && gr->kc.shape[0] != bq) ||
      gr->kc.shape[1] != gr->k.shape[1] || gr->kc.shape[3] != d)
    return 0;
  int64_t sq[3], sy[3], sk[3], sv[3], skc[3], svc[3];
  if (!bht(&gr->q, sq) || !bht(&gr->y, sy) || !bht(&gr->k, sk) || !bht(&gr->v, sv) ||
      !bht(&gr->kc, skc) || !bht(&gr->vc, svc) || memcmp(sk, sv, sizeof sk) ||
      memcmp(gr->kc.strides, gr->vc.strides, sizeof gr->kc.strides))
    return 0;
  /* swapped rows are the ragged build's: one sequence of R tokens, each row's cache batch and
   * position in start [2, R] */
  if (gr->rows_swapped && (gr->start.rank != 2 || gr->q.shape[0] != 1 || gr->start.shape[1] != t))
    return 0;
  /* q, k, v through one binding; nothing written overlaps what is read or written elsewhere. */
  if (gr->q.buffer != gr->k.buffer || gr->q.buffer != gr->v.buffer) return 0;
  const vkf_plan_tensor *reads[5] = {&gr->q, &gr->k, &gr->v, &gr->cs, &gr->sn};
  const vkf_plan_tensor *writes[3] = {&gr->y, &gr->kc, &gr->vc};
  for (int w = 0; w < 3; w++) {
    if (!fits_range(ctx, writes[w])) return 0;
    for (int r = 0; r < 5; r++)
      if (overlap(ctx, writes[w], reads[r])) return 0;
    for (int o = w + 1; o < 3; o++)
      if (overlap(ctx, writes[w], writes[o])) return 0;
  }
  return fits_range(ctx, &gr->cs) && fits_range(ctx, &gr->sn);
}

/* Matches the four nodes from `at`; fills `gr` and *out_last (the v cache write's index). */
static int match(const vkf_graph *g, const vkf_plan_tensor *tensors, uint32_t at, group *gr,
                 uint32_t *out_last) {
  uint32_t idx[4], i = at;
  for (int j = 0; j < 4; j++) {
    i = next_dispatching(g, i);
    if (i >= vkf_graph_node_count(g)) return 0;
    idx[j] = i++;
    gr->nodes[j] = vkf_graph_node(g, idx[j]);
  }
  const vkf_node *qr = gr->nodes[0], *kr = gr->nodes[1], *kw = gr->nodes[2], *vw = gr->nodes[3];
  if (qr->op != VKF_OP_ROTARY || kr->op != VKF_OP_ROTARY || kw->op != VKF_OP_KV_WRITE ||
      vw->op != VKF_OP_KV_WRITE)
    return 0;
  vkf_value k_rows = kw->inputs[VKF_IN_KV_WRITE_ROWS], v_rows = vw->inputs[VKF_IN_KV_WRITE_ROWS];
  gr->rows_swapped = 0;
  if (k_rows.id != kr->output.id) {
    /* ragged rows: both writes through a swap of their rows, k's of the k rotary's output */
    const vkf_node *ks = swap_view(g, k_rows), *vs = swap_view(g, v_rows);
    if (!ks || !vs || ks->inputs[0].id != kr->output.id || !read_once(g, k_rows)) return 0;
    gr->rows_swapped = 1;
    v_rows = vs->inputs[0];
  }
  if (qr->inputs[VKF_IN_ROTARY_COS].id != kr->inputs[VKF_IN_ROTARY_COS].id ||
      qr->inputs[VKF_IN_ROTARY_SIN].id != kr->inputs[VKF_IN_ROTARY_SIN].id ||
      kw->inputs[VKF_IN_KV_WRITE_START].id != vw->inputs[VKF_IN_KV_WRITE_START].id ||
      !read_once(g, kr->output))
    return 0;
  /* v is not made by this group (it is read before the rotations would have run). */
  uint32_t v_id = vkf_graph_tensor(g, v_rows)->base.id;
  if (v_id == qr->output.id || v_id == kr->output.id) return 0;
  gr->q = tensors[qr->inputs[VKF_IN_ROTARY_X].id];
  gr->k = tensors[kr->inputs[VKF_IN_ROTARY_X].id];
  gr->v = tensors[v_rows.id];
  gr->y = tensors[qr->output.id];
  gr->cs = tensors[qr->inputs[VKF_IN_ROTARY_COS].id];
  gr->sn = tensors[qr->inputs[VKF_IN_ROTARY_SIN].id];
  gr->start = tensors[kw->inputs[VKF_IN_KV_WRITE_START].id];
  gr->kc = tensors[kw->inputs[VKF_IN_KV_WRITE_CACHE].id];
  gr->vc = tensors[vw->inputs[VKF_IN_KV_WRITE_CACHE].id];
  *out_last = idx[3];
  return 1;
}

vkf_status vkf_lower_rotary_kv_group(const vkf_lower_ctx *ctx, const vkf_graph *g,
                                     const vkf_plan_tensor *tensors, uint32_t at,
                                     uint32_t *out_last) {
  *out_last = at;
  group gr;
  uint32_t last;
  if (!match(g, tensors, at, &gr, &last) || !layout_ok(ctx, &gr)) return VKF_OK;
  const vkf_node *qr = gr.nodes[0];
  /* cos and sin as rotary.comp reads them: broadcast to q's shape, one stride set for both. */
  vkf_rows_view cv, sv;
  VKF_RETURN_IF_ERROR(vkf_rows_view_make(&gr.cs, 4, gr.q.shape, qr->name, "cos", &cv));
  VKF_RETURN_IF_ERROR(vkf_rows_view_make(&gr.sn, 4, gr.q.shape, qr->name, "sin", &sv));
  if (memcmp(cv.s, sv.s, sizeof cv.s) || cv.s[1] != 0 || cv.s[3] != 1) return VKF_OK;

  vkf_plan_dispatch d = {.node = qr->name, .shader = "rotary_kv.comp"};
  if (gr.kc.dtype == VKF_F16) vkf_plan_dispatch_define(&d, "CACHE_F16");
  /* q, k and v share binding 0, the lowest first (vkf_lower_bind_shared starts there). */
  const vkf_plan_tensor *src[3] = {&gr.q, &gr.k, &gr.v};
  for (int a = 0; a < 3; a++)
    for (int b = a + 1; b < 3; b++)
      if (src[b]->offset < src[a]->offset) {
        const vkf_plan_tensor *t = src[a];
        src[a] = src[b], src[b] = t;
      }
  uint32_t src_off[3], q_off = 0, k_off = 0, v_off = 0;
  uint64_t src_size = vkf_lower_bind_shared(ctx, &d, src, 3, VKF_ACCESS_READ, src_off);
  for (int i = 0; i < 3; i++) {
    if (src[i] == &gr.q) q_off = src_off[i];
    if (src[i] == &gr.k) k_off = src_off[i];
    if (src[i] == &gr.v) v_off = src_off[i];
  }
  uint32_t c_off = vkf_lower_bind(ctx, &d, &gr.cs, VKF_ACCESS_READ);
  uint32_t s_off = vkf_lower_bind(ctx, &d, &gr.sn, VKF_ACCESS_READ);
  uint32_t start_off = vkf_lower_bind(ctx, &d, &gr.start, VKF_ACCESS_READ);
  uint32_t y_off = vkf_lower_bind(ctx, &d, &gr.y, VKF_ACCESS_WRITE);
  uint32_t kc_off = vkf_lower_bind(ctx, &d, &gr.kc, VKF_ACCESS_WRITE);
  uint32_t vc_off = vkf_lower_bind(ctx, &d, &gr.vc, VKF_ACCESS_WRITE);
  /* Every index the kernel forms stays within its binding, which holds at most 2^32 elements. */
  uint64_t range = ctx->caps->max_storage_buffer_range;
  if ((range && src_size > range) || src_size / 4 >= UINT32_MAX) return VKF_OK;
  int64_t bsz = gr.q.shape[0], hq = gr.q.shape[1], hkv = gr.k.shape[1], t = gr.q.shape[2];
  uint64_t rows = (uint64_t)(bsz * (hq + 2 * hkv) * t), half = (uint64_t)gr.q.shape[3] / 2;
  if (rows * half >= UINT32_MAX || gr.kc.shape[2] > INT32_MAX) return VKF_OK;

  uint32_t words[] = {
      (uint32_t)rows, (uint32_t)t, (uint32_t)half, (uint32_t)hq, (uint32_t)hkv,
      c_off, s_off, cv.s[0], cv.s[2],
      q_off, (uint32_t)gr.q.strides[0], (uint32_t)gr.q.strides[1], (uint32_t)gr.q.strides[2],
      y_off, (uint32_t)gr.y.strides[0], (uint32_t)gr.y.strides[1], (uint32_t)gr.y.strides[2],
      k_off, v_off, (uint32_t)gr.k.strides[0], (uint32_t)gr.k.strides[1],
      (uint32_t)gr.k.strides[2],
      kc_off, vc_off, (uint32_t)gr.kc.strides[0], (uint32_t)gr.kc.strides[1],
      (uint32_t)gr.kc.strides[2],
      start_off, (uint32_t)gr.kc.shape[2],
      /* start [2, R] (ragged rows): each row's cache batch follows the R positions */
      gr.start.rank == 2 ? (uint32_t)gr.start.shape[1] : 0u, (uint32_t)gr.rows_swapped};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    vkf_plan_dispatch_push_u32(&d, words[i]);
  /* A workgroup per row at a time (rotary_kv.comp), its invocations over the row's D/2 pairs,
   * sized as the row kernels size theirs (a CPU device's one subgroup: no barriers either way). */
  uint32_t wg = vkf_rows_workgroup_size(ctx->caps, half, 1, 256);
  d.spec[0] = wg;
  d.spec_count = 1;
  d.groups[0] = vkf_lower_groups_1d(ctx, rows, 1);
  d.groups[1] = d.groups[2] = 1;
  VKF_RETURN_IF_ERROR(vkf_plan_add_dispatch(ctx->plan, &d));
  *out_last = last;
  return VKF_OK;
}
