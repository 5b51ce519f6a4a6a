/* Owns shape and dtype inference: one function per op-table row. Messages name both shapes;
 * vkf_graph_infer_node prefixes them with `<op> "<node>": `. */
#include <inttypes.h>
#include <string.h>

#include "graph/ir/graph_internal.h"

typedef struct shape_buf {
  char s[96];
} shape_buf;

static const char *fmt_shape(const vkf_tensor *t, shape_buf *b) {
  return vkf_shape_format(t->rank, t->shape, b->s, sizeof b->s);
}

/* The tensor in input slot `slot`, or NULL when the slot is absent or empty. */
static const vkf_tensor *in_at(const vkf_graph *g, const vkf_node *n, uint32_t slot) {
  if (slot >= n->input_count || n->inputs[slot].id == 0) return NULL;
  return vkf_graph_tensor(g, n->inputs[slot]);
}

static int is_float(vkf_dtype d) {
  return d == VKF_F32 || d == VKF_F16;
}

static vkf_status need_float(const vkf_tensor *t, const char *what) {
  if (is_float(t->dtype)) return VKF_OK;
  return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\" must be f32 or f16, got %s", what, t->name,
                         vkf_dtype_name(t->dtype));
}

static vkf_status need_i32(const vkf_tensor *t, const char *what) {
  if (t->dtype == VKF_I32) return VKF_OK;
  return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\" must be i32, got %s", what, t->name,
                         vkf_dtype_name(t->dtype));
}

static void set_out(vkf_tensor *out, vkf_dtype dtype, uint32_t rank, const int64_t *shape) {
  out->dtype = dtype;
  out->rank = rank;
  for (uint32_t i = 0; i < rank; i++) out->shape[i] = shape[i];
  vkf_contiguous_strides(rank, out->shape, out->strides);
}

/* Numpy broadcasting (right-aligned, equal or 1). Returns 0 when the shapes do not broadcast. */
static int broadcast(uint32_t ra, const int64_t *a, uint32_t rb, const int64_t *b,
                     uint32_t *out_rank, int64_t *out) {
  uint32_t r = ra > rb ? ra : rb;
  for (uint32_t i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da != db && da != 1 && db != 1) return 0;
    out[i] = da == 1 ? db : da;
  }
  *out_rank = r;
  return 1;
}

/* True when `t` broadcasts to exactly `rank`/`shape`. */
static int broadcasts_to(const vkf_tensor *t, uint32_t rank, const int64_t *shape) {
  if (t->rank > rank) return 0;
  for (uint32_t i = 0; i < t->rank; i++) {
    int64_t d = t->shape[i], want = shape[rank - t->rank + i];
    if (d != want && d != 1) return 0;
  }
  return 1;
}

vkf_status vkf_shape_matmul(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *a = in_at(g, n, VKF_IN_MATMUL_A), *b = in_at(g, n, VKF_IN_MATMUL_B);
  shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_float(a, "A"));
  /* bf16 and quantised weights widen on load */
  if (b->dtype != VKF_BF16 && !vkf_dtype_is_quant(b->dtype)) VKF_RETURN_IF_ERROR(need_float(b, "B"));
  if (vkf_dtype_is_quant(b->dtype) && !n->attrs.matmul.transpose_b)
    return vkf_status_make(VKF_STATUS_SHAPE, "B %s is %s: quantised weights are read as [N, K] "
                           "(transpose_b), each row whole blocks along K",
                           fmt_shape(b, &sb), vkf_dtype_name(b->dtype));
  if (a->rank < 2 || b->rank < 2)
    return vkf_status_make(VKF_STATUS_SHAPE, "operands need rank >= 2: %s x %s", fmt_shape(a, &sa),
                           fmt_shape(b, &sb));
  int tb = n->attrs.matmul.transpose_b;
  int64_t m = a->shape[a->rank - 2], ka = a->shape[a->rank - 1];
  if ((unsigned)n->attrs.matmul.a_glu >= VKF_ACT_COUNT)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "bad GLU activation %d",
                           (int)n->attrs.matmul.a_glu);
  if (n->attrs.matmul.a_glu != VKF_ACT_NONE) {
    if (ka % 2 || n->attrs.matmul.a_rmsnorm)
      return vkf_status_make(VKF_STATUS_SHAPE, "GLU prologue: A %s needs an even last dim (gate "
                             "then up) and no RMSNorm prologue", fmt_shape(a, &sa));
    ka /= 2;
  }
  int64_t kb = b->shape[b->rank - (tb ? 1 : 2)], nn = b->shape[b->rank - (tb ? 2 : 1)];
  if (ka != kb)
    return vkf_status_make(VKF_STATUS_SHAPE, "inner dims differ: %s x %s%s", fmt_shape(a, &sa),
                           fmt_shape(b, &sb), tb ? "^T" : "");
  int64_t shape[VKF_MAX_DIMS];
  uint32_t rank;
  if (!broadcast(a->rank - 2, a->shape, b->rank - 2, b->shape, &rank, shape))
    return vkf_status_make(VKF_STATUS_SHAPE, "batch dims do not broadcast: %s x %s",
                           fmt_shape(a, &sa), fmt_shape(b, &sb));
  if ((unsigned)n->attrs.matmul.c_glu >= VKF_ACT_COUNT)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "bad GLU epilogue activation %d",
                           (int)n->attrs.matmul.c_glu);
  if (n->attrs.matmul.c_glu != VKF_ACT_NONE) {
    if (nn % 2 || n->attrs.matmul.activation != VKF_ACT_NONE || in_at(g, n, VKF_IN_MATMUL_BIAS) ||
        in_at(g, n, VKF_IN_MATMUL_RESIDUAL))
      return vkf_status_make(VKF_STATUS_SHAPE,
                             "GLU epilogue: B %s needs an even N (gate then "
                             "up) and no bias, residual or activation",
                             fmt_shape(b, &sb));
    nn /= 2;
  }
  shape[rank++] = m;
  shape[rank++] = nn;
  if ((unsigned)n->attrs.matmul.activation >= VKF_ACT_COUNT)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "bad activation %d",
                           (int)n->attrs.matmul.activation);
  set_out(out, a->dtype, rank, shape);
  const vkf_tensor *bias = in_at(g, n, VKF_IN_MATMUL_BIAS);
  if (bias) {
    VKF_RETURN_IF_ERROR(need_float(bias, "bias"));
    if (bias->rank != 1 || bias->shape[0] != nn)
      return vkf_status_make(VKF_STATUS_SHAPE, "bias shape %s, expected [%" PRId64 "]",
                             fmt_shape(bias, &sa), nn);
  }
  const vkf_tensor *res = in_at(g, n, VKF_IN_MATMUL_RESIDUAL);
  if (res) {
    VKF_RETURN_IF_ERROR(need_float(res, "residual"));
    if (res->rank != rank || memcmp(res->shape, shape, rank * sizeof shape[0]) != 0)
      return vkf_status_make(VKF_STATUS_SHAPE, "residual shape %s differs from output %s",
                             fmt_shape(res, &sa), fmt_shape(out, &sb));
  }
  const vkf_tensor *gamma = in_at(g, n, VKF_IN_MATMUL_NORM_GAMMA);
  if (gamma && !n->attrs.matmul.a_rmsnorm)
    return vkf_status_make(VKF_STATUS_SHAPE, "norm gamma without the RMSNorm prologue");
  if (gamma) {
    VKF_RETURN_IF_ERROR(need_float(gamma, "norm gamma"));
    if (gamma->rank != 1 || gamma->shape[0] != ka)
      return vkf_status_make(VKF_STATUS_SHAPE, "norm gamma shape %s, expected [%" PRId64 "]",
                             fmt_shape(gamma, &sa), ka);
  }
  return VKF_OK;
}

vkf_status vkf_shape_binary(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *a = in_at(g, n, 0), *b = in_at(g, n, 1);
  shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_float(a, "lhs"));
  VKF_RETURN_IF_ERROR(need_float(b, "rhs"));
  if (a->dtype != b->dtype)
    return vkf_status_make(VKF_STATUS_SHAPE, "dtypes differ: %s %s vs %s %s",
                           vkf_dtype_name(a->dtype), fmt_shape(a, &sa), vkf_dtype_name(b->dtype),
                           fmt_shape(b, &sb));
  int64_t shape[VKF_MAX_DIMS];
  uint32_t rank;
  if (!broadcast(a->rank, a->shape, b->rank, b->shape, &rank, shape))
    return vkf_status_make(VKF_STATUS_SHAPE, "shapes do not broadcast: %s vs %s", fmt_shape(a, &sa),
                           fmt_shape(b, &sb));
  set_out(out, a->dtype, rank, shape);
  return VKF_OK;
}

vkf_status vkf_shape_unary(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, 0);
  VKF_RETURN_IF_ERROR(need_float(x, "input"));
  set_out(out, x->dtype, x->rank, x->shape);
  return VKF_OK;
}

vkf_status vkf_shape_fused(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x0 = in_at(g, n, 0);
  int64_t shape[VKF_MAX_DIMS];
  uint32_t rank = x0->rank;
  memcpy(shape, x0->shape, sizeof shape);
  for (uint32_t i = 0; i < n->input_count; i++) {
    const vkf_tensor *x = in_at(g, n, i);
    shape_buf sa, sb;
    if (!x) return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "input %u is missing", i);
    VKF_RETURN_IF_ERROR(need_float(x, "input"));
    if (x->dtype != x0->dtype)
      return vkf_status_make(VKF_STATUS_SHAPE, "dtypes differ: %s vs %s", vkf_dtype_name(x0->dtype),
                             vkf_dtype_name(x->dtype));
    int64_t s2[VKF_MAX_DIMS];
    uint32_t r2;
    vkf_tensor cur = {.rank = rank};
    memcpy(cur.shape, shape, sizeof shape);
    if (!broadcast(rank, shape, x->rank, x->shape, &r2, s2))
      return vkf_status_make(VKF_STATUS_SHAPE, "shapes do not broadcast: %s vs %s",
                             fmt_shape(&cur, &sa), fmt_shape(x, &sb));
    rank = r2;
    memcpy(shape, s2, sizeof shape);
  }
  uint32_t count = n->attrs.fused.count;
  if (count == 0 || !n->attrs.fused.instrs)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "empty elementwise program");
  for (uint32_t i = 0; i < count; i++) {
    const vkf_ew_instr *ins = &n->attrs.fused.instrs[i];
    uint32_t regs = n->input_count + i;
    int binary = ins->op == VKF_OP_ADD || ins->op == VKF_OP_SUB || ins->op == VKF_OP_MUL ||
                 ins->op == VKF_OP_DIV;
    if ((unsigned)ins->op >= VKF_OP_COUNT || !(vkf_op_flags(ins->op) & VKF_OPF_ELEMENTWISE))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "instruction %u: %s is not elementwise",
                             i, vkf_op_name(ins->op));
    if (ins->a >= regs || (binary && ins->b >= regs))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "instruction %u reads a register not yet written", i);
  }
  set_out(out, x0->dtype, rank, shape);
  return VKF_OK;
}

vkf_status vkf_shape_norm(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, VKF_IN_NORM_X);
  VKF_RETURN_IF_ERROR(need_float(x, "input"));
  if (x->rank < 1) return vkf_status_make(VKF_STATUS_SHAPE, "input is a scalar");
  int64_t d = x->shape[x->rank - 1];
  for (uint32_t slot = 1; slot < n->input_count; slot++) {
    const vkf_tensor *p = in_at(g, n, slot);
    if (!p) continue;
    shape_buf sa, sb;
    VKF_RETURN_IF_ERROR(need_float(p, slot == 1 ? "gamma" : "beta"));
    if (p->rank != 1 || p->shape[0] != d)
      return vkf_status_make(VKF_STATUS_SHAPE, "%s shape %s does not match last dim of %s",
                             slot == 1 ? "gamma" : "beta", fmt_shape(p, &sa), fmt_shape(x, &sb));
  }
  set_out(out, x->dtype, x->rank, x->shape);
  return VKF_OK;
}

vkf_status vkf_shape_softmax(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, VKF_IN_SOFTMAX_X);
  shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_float(x, "input"));
  if (x->rank < 1) return vkf_status_make(VKF_STATUS_SHAPE, "input is a scalar");
  const vkf_tensor *vl = in_at(g, n, VKF_IN_SOFTMAX_VALID_LENS);
  if (vl) {
    VKF_RETURN_IF_ERROR(need_i32(vl, "valid_lens"));
    int ok = x->rank >= 2 && vl->shape[0] == x->shape[0] &&
             (vl->rank == 1 || (vl->rank == 2 && vl->shape[1] == x->shape[x->rank - 2]));
    if (!ok)
      return vkf_status_make(VKF_STATUS_SHAPE,
                             "valid_lens shape %s fits neither [B] nor [B,rows] of input %s",
                             fmt_shape(vl, &sa), fmt_shape(x, &sb));
  }
  const vkf_tensor *bias = in_at(g, n, VKF_IN_SOFTMAX_BIAS);
  if (bias) {
    VKF_RETURN_IF_ERROR(need_float(bias, "bias"));
    if (!broadcasts_to(bias, x->rank, x->shape))
      return vkf_status_make(VKF_STATUS_SHAPE, "bias %s does not broadcast to input %s",
                             fmt_shape(bias, &sa), fmt_shape(x, &sb));
  }
  set_out(out, x->dtype, x->rank, x->shape);
  return VKF_OK;
}

vkf_status vkf_shape_attention(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *q = in_at(g, n, VKF_IN_ATTENTION_Q), *k = in_at(g, n, VKF_IN_ATTENTION_K),
                   *v = in_at(g, n, VKF_IN_ATTENTION_V);
  shape_buf sq, sk, sv;
  VKF_RETURN_IF_ERROR(need_float(q, "q"));
  VKF_RETURN_IF_ERROR(need_float(k, "k"));
  VKF_RETURN_IF_ERROR(need_float(v, "v"));
  if ((q->rank != 3 && q->rank != 4) || k->rank != q->rank || v->rank != q->rank)
    return vkf_status_make(VKF_STATUS_SHAPE, "q, k, v must all be [B,H,N,D] or [B,N,D]: %s %s %s",
                           fmt_shape(q, &sq), fmt_shape(k, &sk), fmt_shape(v, &sv));
  uint32_t r = q->rank;
  int64_t h = r == 4 ? q->shape[1] : 1, hk = r == 4 ? k->shape[1] : 1;
  /* kv_len [2, B] (ragged rows): query batch b reads k/v batch kv_len[1][b], any batch count */
  const vkf_tensor *kv_rows = in_at(g, n, VKF_IN_ATTENTION_KV_LEN);
  int any_b = kv_rows && kv_rows->rank == 2;
  int ok = (any_b || (q->shape[0] == k->shape[0] && q->shape[0] == v->shape[0])) &&
           k->shape[0] == v->shape[0] &&
           q->shape[r - 1] == k->shape[r - 1] && k->shape[r - 2] == v->shape[r - 2] &&
           (r == 3 || (v->shape[1] == hk && h % hk == 0));
  if (!ok)
    return vkf_status_make(VKF_STATUS_SHAPE, "q %s, k %s, v %s do not agree", fmt_shape(q, &sq),
                           fmt_shape(k, &sk), fmt_shape(v, &sv));
  int64_t shape[VKF_MAX_DIMS];
  memcpy(shape, q->shape, sizeof shape);
  shape[r - 1] = v->shape[r - 1];
  if (n->attrs.attention.merge_heads) {
    if (r != 4)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "merge_heads needs [B,H,N,D] operands, got q %s", fmt_shape(q, &sq));
    shape[1] = q->shape[2]; /* [B, Nq, H, Dv] */
    shape[2] = q->shape[1];
  }
  set_out(out, q->dtype, r, shape);
  const vkf_tensor *kv_len = in_at(g, n, VKF_IN_ATTENTION_KV_LEN);
  if (kv_len) {
    VKF_RETURN_IF_ERROR(need_i32(kv_len, "kv_len"));
    int ragged = kv_len->rank == 2 && kv_len->shape[0] == 2 && kv_len->shape[1] == q->shape[0] &&
                 vkf_tensor_is_contiguous(kv_len);
    if (!ragged && (kv_len->rank != 1 || kv_len->shape[0] != q->shape[0]))
      return vkf_status_make(VKF_STATUS_SHAPE,
                             "kv_len shape %s, expected [%" PRId64 "] or [2, %" PRId64 "]",
                             fmt_shape(kv_len, &sk), q->shape[0], q->shape[0]);
  }
  const vkf_tensor *bias = in_at(g, n, VKF_IN_ATTENTION_BIAS);
  if (bias) {
    VKF_RETURN_IF_ERROR(need_float(bias, "bias"));
    int64_t scores[VKF_MAX_DIMS];
    memcpy(scores, q->shape, sizeof scores);
    scores[r - 1] = k->shape[r - 2];
    vkf_tensor st = {.rank = r};
    memcpy(st.shape, scores, sizeof scores);
    if (!broadcasts_to(bias, r, scores))
      return vkf_status_make(VKF_STATUS_SHAPE, "bias %s does not broadcast to scores %s",
                             fmt_shape(bias, &sk), fmt_shape(&st, &sv));
  }
  const vkf_tensor *ramp = in_at(g, n, VKF_IN_ATTENTION_RAMP);
  if (ramp) {
    int64_t heads = r == 4 ? q->shape[1] : 1;
    if (ramp->dtype != VKF_F32 || ramp->rank != 2 || ramp->shape[0] != heads ||
        ramp->shape[1] != 2 || !vkf_tensor_is_contiguous(ramp))
      return vkf_status_make(VKF_STATUS_SHAPE,
                             "ramp %s %s, expected f32 [%" PRId64 ", 2] contiguous (a row per head)",
                             vkf_dtype_name(ramp->dtype), fmt_shape(ramp, &sk), heads);
  }
  if (n->attrs.attention.window_left < -1 || n->attrs.attention.window_right < -1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "window sizes must be >= -1");
  return VKF_OK;
}

vkf_status vkf_shape_reshape(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, 0);
  shape_buf sa, sb;
  uint32_t rank = n->attrs.reshape.rank;
  if (rank > VKF_MAX_DIMS)
    return vkf_status_make(VKF_STATUS_SHAPE, "rank %u exceeds %d", rank, VKF_MAX_DIMS);
  set_out(out, x->dtype, rank, n->attrs.reshape.shape);
  if (vkf_tensor_element_count(out) != vkf_tensor_element_count(x))
    return vkf_status_make(VKF_STATUS_SHAPE, "element counts differ: %s -> %s", fmt_shape(x, &sa),
                           fmt_shape(out, &sb));
  if (!vkf_tensor_is_contiguous(x))
    return vkf_status_make(VKF_STATUS_SHAPE, "input %s is a strided view; copy it first",
                           fmt_shape(x, &sa));
  out->offset = x->offset;
  return VKF_OK;
}

vkf_status vkf_shape_permute(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, 0);
  uint32_t seen = 0;
  out->dtype = x->dtype;
  out->rank = x->rank;
  for (uint32_t i = 0; i < x->rank; i++) {
    uint32_t ax = n->attrs.permute.axes[i];
    if (ax >= x->rank || (seen & (1u << ax)))
      return vkf_status_make(VKF_STATUS_SHAPE, "axes are not a permutation of rank %u", x->rank);
    seen |= 1u << ax;
    out->shape[i] = x->shape[ax];
    out->strides[i] = x->strides[ax];
  }
  out->offset = x->offset;
  return VKF_OK;
}

vkf_status vkf_shape_slice(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, 0);
  shape_buf sa;
  uint32_t ax = n->attrs.slice.axis;
  int64_t start = n->attrs.slice.start, end = n->attrs.slice.end;
  if (ax >= x->rank)
    return vkf_status_make(VKF_STATUS_SHAPE, "axis %u out of range for %s", ax, fmt_shape(x, &sa));
  if (start < 0 || end > x->shape[ax] || start >= end)
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "range [%" PRId64 ",%" PRId64 ") out of bounds for axis %u of %s", start,
                           end, ax, fmt_shape(x, &sa));
  *out = *x;
  out->shape[ax] = end - start;
  out->offset = x->offset + start * x->strides[ax];
  return VKF_OK;
}

vkf_status vkf_shape_copy(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, 0);
  set_out(out, x->dtype, x->rank, x->shape);
  return VKF_OK;
}

vkf_status vkf_shape_cast(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, 0);
  if ((unsigned)n->attrs.cast.dtype >= VKF_DTYPE_COUNT)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "bad dtype %d", (int)n->attrs.cast.dtype);
  set_out(out, n->attrs.cast.dtype, x->rank, x->shape);
  return VKF_OK;
}

vkf_status vkf_shape_concat(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x0 = in_at(g, n, 0);
  uint32_t ax = n->attrs.concat.axis;
  shape_buf sa, sb;
  if (ax >= x0->rank)
    return vkf_status_make(VKF_STATUS_SHAPE, "axis %u out of range for %s", ax, fmt_shape(x0, &sa));
  set_out(out, x0->dtype, x0->rank, x0->shape);
  for (uint32_t i = 1; i < n->input_count; i++) {
    const vkf_tensor *x = in_at(g, n, i);
    if (!x) return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "input %u is missing", i);
    int ok = x->rank == x0->rank && x->dtype == x0->dtype;
    for (uint32_t d = 0; ok && d < x->rank; d++) ok = d == ax || x->shape[d] == x0->shape[d];
    if (!ok)
      return vkf_status_make(VKF_STATUS_SHAPE, "%s %s and %s %s differ off axis %u",
                             vkf_dtype_name(x0->dtype), fmt_shape(x0, &sa),
                             vkf_dtype_name(x->dtype), fmt_shape(x, &sb), ax);
    out->shape[ax] += x->shape[ax];
  }
  vkf_contiguous_strides(out->rank, out->shape, out->strides);
  return VKF_OK;
}

vkf_status vkf_shape_gather(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *table = in_at(g, n, VKF_IN_GATHER_TABLE), *ids = in_at(g, n, VKF_IN_GATHER_IDS);
  shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_i32(ids, "ids"));
  if (table->rank != 2 || ids->rank + 1 > VKF_MAX_DIMS)
    return vkf_status_make(VKF_STATUS_SHAPE, "table %s must be [V,D] and ids %s of rank <= %d",
                           fmt_shape(table, &sa), fmt_shape(ids, &sb), VKF_MAX_DIMS - 1);
  int64_t shape[VKF_MAX_DIMS];
  for (uint32_t i = 0; i < ids->rank; i++) shape[i] = ids->shape[i];
  shape[ids->rank] = table->shape[1];
  /* a quantised table's rows come out dequantised, in f32 */
  set_out(out, vkf_dtype_is_quant(table->dtype) ? VKF_F32 : table->dtype, ids->rank + 1, shape);
  return VKF_OK;
}

vkf_status vkf_shape_patch_embed(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *img = in_at(g, n, VKF_IN_PATCH_IMAGE), *w = in_at(g, n, VKF_IN_PATCH_WEIGHT);
  const vkf_tensor *bias = in_at(g, n, VKF_IN_PATCH_BIAS);
  shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_float(img, "image"));
  VKF_RETURN_IF_ERROR(need_float(w, "weight"));
  if (img->rank != 4 || w->rank != 4 || img->shape[1] != w->shape[1])
    return vkf_status_make(VKF_STATUS_SHAPE, "image %s must be [B,C,H,W], weight %s [E,C,P,P]",
                           fmt_shape(img, &sa), fmt_shape(w, &sb));
  if (img->shape[2] % w->shape[2] != 0 || img->shape[3] % w->shape[3] != 0)
    return vkf_status_make(VKF_STATUS_SHAPE, "image %s is not a whole number of %s patches",
                           fmt_shape(img, &sa), fmt_shape(w, &sb));
  if (bias && (bias->rank != 1 || bias->shape[0] != w->shape[0]))
    return vkf_status_make(VKF_STATUS_SHAPE, "bias %s does not match weight %s",
                           fmt_shape(bias, &sa), fmt_shape(w, &sb));
  int64_t shape[3] = {img->shape[0], (img->shape[2] / w->shape[2]) * (img->shape[3] / w->shape[3]),
                      w->shape[0]};
  set_out(out, img->dtype, 3, shape);
  return VKF_OK;
}

vkf_status vkf_shape_mean_pool(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, VKF_IN_POOL_X), *mask = in_at(g, n, VKF_IN_POOL_MASK);
  shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_float(x, "input"));
  if (x->rank != 3)
    return vkf_status_make(VKF_STATUS_SHAPE, "input %s must be [B,N,D]", fmt_shape(x, &sa));
  if (mask) {
    VKF_RETURN_IF_ERROR(need_i32(mask, "mask"));
    if (mask->rank != 2 || mask->shape[0] != x->shape[0] || mask->shape[1] != x->shape[1])
      return vkf_status_make(VKF_STATUS_SHAPE, "mask %s does not match input %s",
                             fmt_shape(mask, &sa), fmt_shape(x, &sb));
  }
  int64_t shape[2] = {x->shape[0], x->shape[2]};
  set_out(out, x->dtype, 2, shape);
  return VKF_OK;
}

vkf_status vkf_shape_l2(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  return vkf_shape_unary(g, n, out);
}

/* cache [B, H, C, D] (contiguous), rows [B, H, T <= C, D], start i32 [B] (or [2, Br] for rows
 * [Br, H, T, D]: row b to cache batch start[1][b]) -> the cache itself:
 * the output aliases the cache's storage (base, offset and strides copied by add_node). */
vkf_status vkf_shape_kv_write(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *cache = in_at(g, n, VKF_IN_KV_WRITE_CACHE);
  const vkf_tensor *rows = in_at(g, n, VKF_IN_KV_WRITE_ROWS);
  const vkf_tensor *start = in_at(g, n, VKF_IN_KV_WRITE_START);
  shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_float(cache, "cache"));
  VKF_RETURN_IF_ERROR(need_float(rows, "rows"));
  if (cache->rank != 4 || rows->rank != 4)
    return vkf_status_make(VKF_STATUS_SHAPE, "cache %s and rows %s must both be rank 4 [B, H, *, D]",
                           fmt_shape(cache, &sa), fmt_shape(rows, &sb));
  /* start [2, B] (ragged rows): row b of `rows` goes to cache batch start[1][b], any batch count */
  int ragged = start && start->rank == 2;
  if ((!ragged && cache->shape[0] != rows->shape[0]) || cache->shape[1] != rows->shape[1] ||
      cache->shape[3] != rows->shape[3])
    return vkf_status_make(VKF_STATUS_SHAPE, "rows %s do not match cache %s in B, H or D",
                           fmt_shape(rows, &sb), fmt_shape(cache, &sa));
  if (rows->shape[2] > cache->shape[2])
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "rows %s hold %" PRId64 " positions, more than the cache %s capacity",
                           fmt_shape(rows, &sb), rows->shape[2], fmt_shape(cache, &sa));
  if (!vkf_tensor_is_contiguous(cache))
    return vkf_status_make(VKF_STATUS_SHAPE, "cache %s must be contiguous", fmt_shape(cache, &sa));
  if (rows->base.id == cache->base.id)
    return vkf_status_make(VKF_STATUS_SHAPE, "rows \"%s\" alias the cache's storage", rows->name);
  if (!start) return vkf_status_make(VKF_STATUS_SHAPE, "start is missing");
  VKF_RETURN_IF_ERROR(need_i32(start, "start"));
  if (ragged ? start->shape[0] != 2 || start->shape[1] != rows->shape[0] ||
                   !vkf_tensor_is_contiguous(start)
             : start->rank != 1 || start->shape[0] != cache->shape[0])
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "start %s, expected i32 [%" PRId64 "] or contiguous [2, %" PRId64 "]",
                           fmt_shape(start, &sb), cache->shape[0], rows->shape[0]);
  *out = *cache;
  return VKF_OK;
}

/* x [...] -> the same shape with dim `axis` 1 (keepdim). */
vkf_status vkf_shape_reduce(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, 0);
  shape_buf sa;
  VKF_RETURN_IF_ERROR(need_float(x, "input"));
  uint32_t axis = n->attrs.reduce.axis;
  if ((unsigned)n->attrs.reduce.kind >= VKF_REDUCE_COUNT)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "bad reduction kind %d",
                           (int)n->attrs.reduce.kind);
  if (axis >= x->rank)
    return vkf_status_make(VKF_STATUS_SHAPE, "axis %u out of range for input %s", axis,
                           fmt_shape(x, &sa));
  if (x->shape[axis] < 1)
    return vkf_status_make(VKF_STATUS_SHAPE, "input %s is empty along axis %u", fmt_shape(x, &sa),
                           axis);
  int64_t shape[VKF_MAX_DIMS];
  memcpy(shape, x->shape, sizeof shape);
  shape[axis] = 1;
  set_out(out, n->attrs.reduce.kind == VKF_REDUCE_ARGMAX ? VKF_I32 : x->dtype, x->rank, shape);
  return VKF_OK;
}

/* x [B, H, N, D], weight [H, K] (K odd, the same dtype) -> [B, H, N, D]. */
vkf_status vkf_shape_depthwise_conv(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, VKF_IN_CONV_X), *w = in_at(g, n, VKF_IN_CONV_WEIGHT);
  shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_float(x, "input"));
  VKF_RETURN_IF_ERROR(need_float(w, "weight"));
  if (x->rank != 4 || w->rank != 2 || w->shape[0] != x->shape[1] || w->shape[1] % 2 == 0 ||
      w->dtype != x->dtype)
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "input %s %s and weight %s %s: expected [B,H,N,D] and [H,K] of the same "
                           "dtype with K odd",
                           vkf_dtype_name(x->dtype), fmt_shape(x, &sa), vkf_dtype_name(w->dtype),
                           fmt_shape(w, &sb));
  set_out(out, x->dtype, 4, x->shape);
  return VKF_OK;
}

vkf_status vkf_shape_rotary(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = in_at(g, n, VKF_IN_ROTARY_X), *c = in_at(g, n, VKF_IN_ROTARY_COS),
                   *s = in_at(g, n, VKF_IN_ROTARY_SIN);
  shape_buf sx, sc, ss;
  VKF_RETURN_IF_ERROR(need_float(x, "input"));
  VKF_RETURN_IF_ERROR(need_float(c, "cos"));
  VKF_RETURN_IF_ERROR(need_float(s, "sin"));
  if (x->rank < 1 || x->shape[x->rank - 1] % 2 || c->dtype != s->dtype ||
      !broadcasts_to(c, x->rank, x->shape) || !broadcasts_to(s, x->rank, x->shape) ||
      c->shape[c->rank - 1] != x->shape[x->rank - 1] ||
      s->shape[s->rank - 1] != x->shape[x->rank - 1])
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "input %s, cos %s %s, sin %s %s: expected x [..., D] with D even and "
                           "cos, sin of one dtype broadcasting to it with last dim D",
                           fmt_shape(x, &sx), vkf_dtype_name(c->dtype), fmt_shape(c, &sc),
                           vkf_dtype_name(s->dtype), fmt_shape(s, &ss));
  set_out(out, x->dtype, x->rank, x->shape);
  return VKF_OK;
}
