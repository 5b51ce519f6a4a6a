/* Owns the shape function of VKF_OP_SPARSE_ATTENTION: operand shapes and dtypes, the layout
 * tables' shapes against the block sizes, and, when the tables are constants with data, the full
 * layout check (graph/ir/sparse_layout.h), so a bad layout fails when the node is built. */
#include <inttypes.h>
#include <string.h>

#include "graph/ir/graph_internal.h"
#include "graph/ir/sparse_layout.h"

static const vkf_tensor *slot(const vkf_graph *g, const vkf_node *n, uint32_t s) {
  if (s >= n->input_count || n->inputs[s].id == 0) return NULL;
  return vkf_graph_tensor(g, n->inputs[s]);
}

static const char *fmt(const vkf_tensor *t, char *buf) {
  return vkf_shape_format(t->rank, t->shape, buf, 96);
}

static int is_float(const vkf_tensor *t) {
  return t->dtype == VKF_F32 || t->dtype == VKF_F16;
}

static vkf_status table(const vkf_tensor *t, const char *what, uint32_t rank, const int64_t *want) {
  char a[96], b[96];
  vkf_tensor w = {.rank = rank};
  memcpy(w.shape, want, rank * sizeof want[0]);
  if (t->dtype != VKF_I32)
    return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\" must be i32, got %s", what, t->name,
                           vkf_dtype_name(t->dtype));
  int ok = t->rank == rank;
  for (uint32_t i = 0; ok && i < rank; i++) ok = want[i] < 0 || t->shape[i] == want[i];
  if (!ok)
    return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\" has shape %s, expected %s (-1: any)", what,
                           t->name, fmt(t, a), fmt(&w, b));
  return VKF_OK;
}

/* Constants with data are checked now; run-time tables are clamped by the kernels. */
static vkf_status check_constant_layout(const vkf_tensor *rows, const vkf_tensor *cols,
                                        const vkf_tensor *masks, const vkf_node *n, int64_t nq,
                                        int64_t nk) {
  if (rows->role != VKF_ROLE_CONSTANT || !rows->data || cols->role != VKF_ROLE_CONSTANT ||
      !cols->data)
    return VKF_OK;
  if (masks && (masks->role != VKF_ROLE_CONSTANT || !masks->data)) return VKF_OK;
  /* The check only reads the tables; the struct's pointers are non-const for the builders. */
  vkf_sparse_layout l = {
      .heads = (uint32_t)rows->shape[0],
      .q_blocks = (uint32_t)rows->shape[1] - 1,
      .k_blocks = (uint32_t)((nk + n->attrs.sparse_attention.block_k - 1) /
                             n->attrs.sparse_attention.block_k),
      .block_q = n->attrs.sparse_attention.block_q,
      .block_k = n->attrs.sparse_attention.block_k,
      .entries = (uint32_t)cols->shape[1],
      .mask_count = masks ? (uint32_t)masks->shape[0] : 0,
      .rows = (int32_t *)rows->data,
      .cols = (int32_t *)cols->data,
      .masks = masks ? (int32_t *)masks->data : NULL,
  };
  return vkf_sparse_layout_check(&l, (uint32_t)nq, (uint32_t)nk);
}

vkf_status vkf_shape_sparse_attention(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *q = slot(g, n, VKF_IN_SPARSE_Q), *k = slot(g, n, VKF_IN_SPARSE_K),
                   *v = slot(g, n, VKF_IN_SPARSE_V);
  const vkf_tensor *rows = slot(g, n, VKF_IN_SPARSE_ROWS), *cols = slot(g, n, VKF_IN_SPARSE_COLS);
  const vkf_tensor *masks = slot(g, n, VKF_IN_SPARSE_MASKS);
  const vkf_tensor *kv_len = slot(g, n, VKF_IN_SPARSE_KV_LEN);
  const vkf_tensor *bias = slot(g, n, VKF_IN_SPARSE_KEY_BIAS);
  const vkf_node_attrs *a = &n->attrs;
  char sq[96], sk[96], sv[96];
  if (!is_float(q) || !is_float(k) || !is_float(v))
    return vkf_status_make(VKF_STATUS_SHAPE, "q, k, v must be f32 or f16, got %s, %s, %s",
                           vkf_dtype_name(q->dtype), vkf_dtype_name(k->dtype),
                           vkf_dtype_name(v->dtype));
  if (q->rank != 4 || k->rank != 4 || v->rank != 4)
    return vkf_status_make(VKF_STATUS_SHAPE, "q, k, v must all be [B,H,N,D]: %s %s %s", fmt(q, sq),
                           fmt(k, sk), fmt(v, sv));
  int64_t bsz = q->shape[0], h = q->shape[1], nq = q->shape[2], hk = k->shape[1], nk = k->shape[2];
  int ok = k->shape[0] == bsz && v->shape[0] == bsz && k->shape[3] == q->shape[3] &&
           v->shape[2] == nk && v->shape[1] == hk && hk > 0 && h % hk == 0;
  if (!ok)
    return vkf_status_make(VKF_STATUS_SHAPE, "q %s, k %s, v %s do not agree", fmt(q, sq),
                           fmt(k, sk), fmt(v, sv));
  if (nq > INT32_MAX || nk > INT32_MAX)
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "sequence lengths %" PRId64 ", %" PRId64 " exceed 2^31", nq, nk);
  uint32_t bq = a->sparse_attention.block_q, bk = a->sparse_attention.block_k;
  if (bq < 1 || bk < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "block sizes must be >= 1, got %u, %u", bq,
                           bk);
  int64_t nqb = (nq + bq - 1) / bq;
  if (rows->rank != 2 || (rows->shape[0] != 1 && rows->shape[0] != h))
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "rows \"%s\" has shape %s, expected [1 or %" PRId64 ", %" PRId64 "]",
                           rows->name, fmt(rows, sq), h, nqb + 1);
  int64_t heads = rows->shape[0];
  VKF_RETURN_IF_ERROR(table(rows, "rows", 2, (int64_t[]){heads, nqb + 1}));
  VKF_RETURN_IF_ERROR(table(cols, "cols", 3, (int64_t[]){heads, -1, 2}));
  if (masks)
    VKF_RETURN_IF_ERROR(table(masks, "masks", 3, (int64_t[]){-1, bq, vkf_sparse_mask_words(bk)}));
  if (kv_len) VKF_RETURN_IF_ERROR(table(kv_len, "kv_len", 1, (int64_t[]){bsz}));
  if (bias) {
    if (!is_float(bias) || bias->rank != 2 || bias->shape[0] != bsz || bias->shape[1] != nk)
      return vkf_status_make(VKF_STATUS_SHAPE,
                             "key_bias \"%s\" is %s %s, expected f32 or f16 [%" PRId64 ", %" PRId64
                             "]",
                             bias->name, vkf_dtype_name(bias->dtype), fmt(bias, sq), bsz, nk);
  }
  int64_t shape[4] = {bsz, h, nq, v->shape[3]};
  if (a->sparse_attention.merge_heads) {
    shape[1] = nq;
    shape[2] = h;
  }
  out->dtype = q->dtype;
  out->rank = 4;
  memcpy(out->shape, shape, sizeof shape);
  vkf_contiguous_strides(4, out->shape, out->strides);
  return check_constant_layout(rows, cols, masks, n, nq, nk);
}
