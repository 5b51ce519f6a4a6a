/* Lowering of a node whose bindings would exceed the device's maxStorageBufferRange (128 MiB on
 * lavapipe: an unfused attention's [1, 12, 4096, 4096] scores are 768 MiB): the node becomes
 * several dispatches over slices of its leading (batch) dims, each binding a range that fits.
 * (KV_WRITE slices itself in lower_kv_write.c: its `start` is indexed per batch.)
 * Only ops whose leading output dims map one to one onto the inputs' right-aligned leading dims
 * (or broadcast over them) are sliced: matmul, elementwise ops and generated chains, copies and
 * casts of one shape, concats (the dims before the axis), layernorm / RMSNorm and softmax without valid lengths (those index batches
 * by position). A matmul whose weight alone is too big (an LM head [vocab, D] read as B [N, K])
 * is sliced along N instead: rows of B, columns of the output, the bias and the residual; one
 * whose leading dims are down to a single index and still too big is sliced along M (rows of A,
 * the output and the residual). Attention, patch embedding, gather and mean pooling, whose
 * operands carry the batch as dim 0 (kv_len [B], ids [B, T], images [B, C, H, W]), are sliced
 * along that dim. (Gather slices its own table in lower_gather.c.) What still does not fit is
 * refused by vkf_plan_check_limits and split into runs by the caller (batch_split.c). */
#include "graph/lower/lower_slice.h"

/* Bytes vkf_lower_bind would bind for `t`. */
static uint64_t binding_span(const vkf_lower_ctx *ctx, const vkf_plan_tensor *t) {
  uint64_t begin, end;
  vkf_lower_binding_range(ctx, t, &begin, &end);
  return end - begin;
}

static int fits(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  uint64_t range = ctx->caps->max_storage_buffer_range;
  if (binding_span(ctx, &n->output) > range) return 0;
  for (uint32_t i = 0; i < n->input_count; i++)
    if (vkf_plan_tensor_present(&n->inputs[i]) && binding_span(ctx, &n->inputs[i]) > range)
      return 0;
  return 1;
}

static int same_shape(const vkf_plan_tensor *a, const vkf_plan_tensor *b) {
  if (a->rank != b->rank) return 0;
  for (uint32_t i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* Trailing dims the op computes across (never sliced); UINT32_MAX: the op is not sliceable. */
static uint32_t row_dims(const vkf_lower_node *n) {
  if (vkf_op_flags(n->op) & VKF_OPF_ELEMENTWISE) return 0;
  switch (n->op) {
    /* A copy or cast of the same shape (a strided view made dense, a cache copied out) maps
     * every output element to the input element at the same index. */
    case VKF_OP_COPY: case VKF_OP_CAST:
      return n->input_count == 1 && same_shape(&n->inputs[0], &n->output) ? 0 : UINT32_MAX;
    /* A concat is a copy per input: the dims before its axis are shared by all. */
    case VKF_OP_CONCAT: {
      for (uint32_t i = 0; i < n->input_count; i++)
        if (n->inputs[i].rank != n->output.rank) return UINT32_MAX;
      return n->attrs->concat.axis < n->output.rank ? n->output.rank - n->attrs->concat.axis
                                                     : UINT32_MAX;
    }
    case VKF_OP_FUSED_ELEMENTWISE: return 0;
    case VKF_OP_MATMUL: return 2;
    case VKF_OP_LAYERNORM: case VKF_OP_RMSNORM: return 1;
    case VKF_OP_SOFTMAX:
      return n->input_count > VKF_IN_SOFTMAX_VALID_LENS &&
                     vkf_plan_tensor_present(&n->inputs[VKF_IN_SOFTMAX_VALID_LENS])
                 ? UINT32_MAX
                 : 1;
    default: return UINT32_MAX;
  }
}

/* Restricts `t` to [start, start + len) of output dim `d` (of `out_rank` dims, `full` long);
 * inputs that broadcast along it (size 1 there, or no such dim) are left whole. */
static void slice_tensor(vkf_plan_tensor *t, uint32_t out_rank, uint32_t d, int64_t full,
                         int64_t start, int64_t len) {
  int64_t i = (int64_t)d - ((int64_t)out_rank - (int64_t)t->rank);
  if (i < 0 || t->shape[i] != full) return;
  t->offset += (uint64_t)(start * t->strides[i]) * vkf_dtype_size(t->dtype);
  t->shape[i] = len;
}

static vkf_lower_node slice_node(const vkf_lower_node *n, uint32_t d, int64_t start, int64_t len) {
  vkf_lower_node s = *n;
  int64_t full = n->output.shape[d];
  slice_tensor(&s.output, n->output.rank, d, full, start, len);
  for (uint32_t i = 0; i < n->input_count; i++)
    if (vkf_plan_tensor_present(&s.inputs[i]))
      slice_tensor(&s.inputs[i], n->output.rank, d, full, start, len);
  return s;
}

static int strides_non_negative(const vkf_lower_node *n) {
  for (uint32_t i = 0; i <= n->input_count; i++) {
    const vkf_plan_tensor *t = i < n->input_count ? &n->inputs[i] : &n->output;
    if (i < n->input_count && !vkf_plan_tensor_present(t)) continue;
    for (uint32_t j = 0; j < t->rank; j++)
      if (t->strides[j] < 0) return 0;
  }
  return 1;
}

/* Columns [n0, n0 + len) of a matmul: B's rows (B [..., N, K]), the output's, bias's and
 * residual's last dim. */
static vkf_lower_node slice_columns(const vkf_lower_node *n, int64_t n0, int64_t len) {
  vkf_lower_node s = *n;
  vkf_plan_tensor *b = &s.inputs[VKF_IN_MATMUL_B];
  b->offset += (uint64_t)(n0 * b->strides[b->rank - 2]) * vkf_dtype_size(b->dtype);
  b->shape[b->rank - 2] = len;
  vkf_plan_tensor *cols[3] = {&s.output, NULL, NULL};
  if (s.input_count > VKF_IN_MATMUL_BIAS) cols[1] = &s.inputs[VKF_IN_MATMUL_BIAS];
  if (s.input_count > VKF_IN_MATMUL_RESIDUAL) cols[2] = &s.inputs[VKF_IN_MATMUL_RESIDUAL];
  for (int i = 0; i < 3; i++) {
    vkf_plan_tensor *t = cols[i];
    if (!t || !vkf_plan_tensor_present(t)) continue;
    t->offset += (uint64_t)(n0 * t->strides[t->rank - 1]) * vkf_dtype_size(t->dtype);
    t->shape[t->rank - 1] = len;
  }
  return s;
}

/* A matmul with B as [N, K] whose B binding alone exceeds the range: slices of N, in multiples of
 * 64 columns (4 below that) so every slice keeps the vec4 layouts aligned. Returns 0 (nothing
 * done) when slicing cannot make B fit, leaving the op's own error to the caller. */
static int sliced_along_n(const vkf_lower_ctx *ctx, vkf_lower_fn fn, const vkf_lower_node *n,
                          vkf_status *out_status) {
  const vkf_plan_tensor *b = &n->inputs[VKF_IN_MATMUL_B];
  uint64_t range = ctx->caps->max_storage_buffer_range;
  if (n->op != VKF_OP_MATMUL || !n->attrs->matmul.transpose_b || b->rank < 2 ||
      binding_span(ctx, b) <= range)
    return 0;
  int64_t full = n->output.shape[n->output.rank - 1], len = full;
  for (;;) {
    vkf_lower_node s = slice_columns(n, 0, len);
    if (binding_span(ctx, &s.inputs[VKF_IN_MATMUL_B]) <= range || len <= 1) break;
    int64_t half = (len + 1) / 2;
    len = half > 64 ? (half + 63) / 64 * 64 : half > 4 ? (half + 3) / 4 * 4 : half;
  }
  vkf_lower_node first = slice_columns(n, 0, len);
  if (len >= full || binding_span(ctx, &first.inputs[VKF_IN_MATMUL_B]) > range) return 0;
  *out_status = VKF_OK;
  for (int64_t n0 = 0; n0 < full && !*out_status; n0 += len) {
    vkf_lower_node s = slice_columns(n, n0, n0 + len <= full ? len : full - n0);
    *out_status = vkf_lower_sliced(ctx, fn, &s);
  }
  return 1;
}

/* Rows [m0, m0 + len) of a matmul: A's and the output's (and the residual's, the output's shape)
 * second-to-last dim; B and the bias are read whole. */
static vkf_lower_node slice_rows(const vkf_lower_node *n, int64_t m0, int64_t len) {
  vkf_lower_node s = *n;
  vkf_plan_tensor *rows[3] = {&s.inputs[VKF_IN_MATMUL_A], &s.output, NULL};
  if (s.input_count > VKF_IN_MATMUL_RESIDUAL) rows[2] = &s.inputs[VKF_IN_MATMUL_RESIDUAL];
  int64_t full = n->output.shape[n->output.rank - 2];
  for (int i = 0; i < 3; i++) {
    vkf_plan_tensor *t = rows[i];
    if (!t || !vkf_plan_tensor_present(t) || t->rank < 2 || t->shape[t->rank - 2] != full) continue;
    t->offset += (uint64_t)(m0 * t->strides[t->rank - 2]) * vkf_dtype_size(t->dtype);
    t->shape[t->rank - 2] = len;
  }
  return s;
}

/* A matmul whose leading dims are down to one index and still does not fit (one sequence's
 * [M, N] output or [M, K] input past the range): slices of M, halved until they fit. Returns 0
 * when no row count fits, leaving the op's own lowering (and the limit check) to say so. */
static int sliced_along_m(const vkf_lower_ctx *ctx, vkf_lower_fn fn, const vkf_lower_node *n,
                          vkf_status *out_status) {
  if (n->op != VKF_OP_MATMUL || n->output.rank < 2) return 0;
  int64_t full = n->output.shape[n->output.rank - 2], len = full;
  for (;;) {
    vkf_lower_node s = slice_rows(n, 0, len);
    if (fits(ctx, &s) || len <= 1) break;
    len = (len + 1) / 2;
  }
  vkf_lower_node first = slice_rows(n, 0, len);
  if (len >= full || !fits(ctx, &first)) return 0;
  *out_status = VKF_OK;
  for (int64_t m0 = 0; m0 < full && !*out_status; m0 += len) {
    vkf_lower_node s = slice_rows(n, m0, m0 + len <= full ? len : full - m0);
    *out_status = fn(ctx, &s);
  }
  return 1;
}

/* Ops whose operands carry the batch as dim 0 without lining up right-aligned with the output
 * (attention's kv_len [B], patch_embed's image [B, C, H, W] -> [B, N, E], gather's ids [B, T] ->
 * [B, T, D], mean_pool's mask): a bit per input slot that carries dim 0; 0: not such an op. The
 * attention bias carries it when it has the output's rank (it broadcasts right-aligned). */
static uint32_t batch_first_slots(const vkf_lower_node *n) {
  switch (n->op) {
    case VKF_OP_ATTENTION: {
      const vkf_plan_tensor *q = &n->inputs[VKF_IN_ATTENTION_Q];
      const vkf_plan_tensor *bias = &n->inputs[VKF_IN_ATTENTION_BIAS];
      uint32_t slots = 1u << VKF_IN_ATTENTION_Q | 1u << VKF_IN_ATTENTION_K |
                       1u << VKF_IN_ATTENTION_V | 1u << VKF_IN_ATTENTION_KV_LEN;
      if (n->input_count > VKF_IN_ATTENTION_BIAS && vkf_plan_tensor_present(bias) &&
          bias->rank == q->rank)
        slots |= 1u << VKF_IN_ATTENTION_BIAS;
      return slots;
    }
    /* (the layout tables have no batch dim) */
    case VKF_OP_SPARSE_ATTENTION:
      return 1u << VKF_IN_SPARSE_Q | 1u << VKF_IN_SPARSE_K | 1u << VKF_IN_SPARSE_V |
             1u << VKF_IN_SPARSE_KV_LEN | 1u << VKF_IN_SPARSE_KEY_BIAS;
    case VKF_OP_PATCH_EMBED: return 1u << VKF_IN_PATCH_IMAGE;
    case VKF_OP_GATHER: return 1u << VKF_IN_GATHER_IDS;
    case VKF_OP_MEAN_POOL: return 1u << VKF_IN_POOL_X | 1u << VKF_IN_POOL_MASK;
    case VKF_OP_GRU_SCAN: return 1u << VKF_IN_GRU_GATES | 1u << VKF_IN_GRU_H0;
    case VKF_OP_ADDITIVE_ATTENTION:
      return 1u << VKF_IN_ADDITIVE_Q | 1u << VKF_IN_ADDITIVE_K | 1u << VKF_IN_ADDITIVE_V |
             1u << VKF_IN_ADDITIVE_VALID_LENS;
    default: return 0;
  }
}

/* Batch rows [start, start + len) of a batch-first op: dim 0 of the output and of every slot in
 * `slots` that has the whole batch there (a size-1 dim broadcasts and stays whole). */
static vkf_lower_node slice_batch_first(const vkf_lower_node *n, uint32_t slots, int64_t start,
                                        int64_t len) {
  vkf_lower_node s = *n;
  int64_t full = n->output.shape[0];
  for (uint32_t i = 0; i <= n->input_count; i++) {
    vkf_plan_tensor *t = i < n->input_count ? &s.inputs[i] : &s.output;
    if (i < n->input_count && (!(slots >> i & 1) || !vkf_plan_tensor_present(t))) continue;
    if (t->rank < 1 || t->shape[0] != full) continue;
    t->offset += (uint64_t)(start * t->strides[0]) * vkf_dtype_size(t->dtype);
    t->shape[0] = len;
  }
  return s;
}

/* Halves the batch of a batch-first op until its bindings fit, one dispatch group per slice (a
 * single row that still does not fit goes to the op and the limit check as it is). */
static vkf_status sliced_batch_first(const vkf_lower_ctx *ctx, vkf_lower_fn fn,
                                     const vkf_lower_node *n, uint32_t slots) {
  int64_t full = n->output.shape[0], len = full;
  for (;;) {
    vkf_lower_node s = slice_batch_first(n, slots, 0, len);
    if (fits(ctx, &s) || len <= 1) break;
    len = (len + 1) / 2;
  }
  for (int64_t start = 0; start < full; start += len) {
    vkf_lower_node s = slice_batch_first(n, slots, start, start + len <= full ? len : full - start);
    VKF_RETURN_IF_ERROR(fn(ctx, &s));
  }
  return VKF_OK;
}

vkf_status vkf_lower_sliced(const vkf_lower_ctx *ctx, vkf_lower_fn fn, const vkf_lower_node *n) {
  uint32_t rows = row_dims(n);
  uint32_t batch_slots = batch_first_slots(n);
  if (batch_slots && ctx->caps->max_storage_buffer_range && n->output.rank >= 1 &&
      n->output.shape[0] > 1 && strides_non_negative(n) && !fits(ctx, n))
    return sliced_batch_first(ctx, fn, n, batch_slots);
  const vkf_plan_tensor *out = &n->output;
  if (!ctx->caps->max_storage_buffer_range || rows == UINT32_MAX || !strides_non_negative(n) ||
      fits(ctx, n))
    return fn(ctx, n);
  vkf_status by_columns = VKF_OK;
  if (sliced_along_n(ctx, fn, n, &by_columns)) return by_columns;
  uint32_t d = 0;
  while (d + rows < out->rank && out->shape[d] <= 1) d++;
  if (d + rows >= out->rank) {
    vkf_status by_rows = VKF_OK;
    if (sliced_along_m(ctx, fn, n, &by_rows)) return by_rows;
    return fn(ctx, n); /* nothing left to slice: the op's own error, or the limit check's */
  }
  /* Halve the slice until its bindings fit; a single index that still does not fit is sliced
   * again along the next dim by the recursion. */
  int64_t full = out->shape[d], len = full;
  while (len > 1) {
    vkf_lower_node s = slice_node(n, d, 0, len);
    if (fits(ctx, &s)) break;
    len = (len + 1) / 2;
  }
  for (int64_t start = 0; start < full; start += len) {
    vkf_lower_node s = slice_node(n, d, start, start + len <= full ? len : full - start);
    VKF_RETURN_IF_ERROR(vkf_lower_sliced(ctx, fn, &s));
  }
  return VKF_OK;
}
