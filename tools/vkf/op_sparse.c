/* Owns the sparse_attention case of `vkf op`: attributes, the layout's three sources, tables
 * copied into the graph's arena (they must outlive the run). */
#include "tools/vkf/op_sparse.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/ir/sparse_layout.h"

enum { MAX_LENS = 64 };

/* An arena copy of `n` int32 values as a constant [rank, shape]. */
static vkf_value constant(vkf_graph *g, const char *name, const int32_t *data, uint32_t rank,
                          const int64_t *shape) {
  size_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= (size_t)shape[i];
  int32_t *copy = vkf_arena_alloc(vkf_graph_arena(g), n * sizeof(int32_t) + 4);
  if (!copy) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory"));
    return VKF_NO_VALUE;
  }
  memcpy(copy, data, n * sizeof(int32_t));
  return vkf_graph_constant(g, name, VKF_I32, rank, shape, copy);
}

/* The dense block table of `path` (int32 or int64 0/1, [L, Nqb, Nkb] or [Nqb, Nkb]) -> layout. */
static vkf_status layout_from_file(const char *path, uint32_t heads, uint32_t nq, uint32_t nk,
                                   uint32_t bq, uint32_t bk, vkf_sparse_layout *out) {
  vkf_npy_array arr;
  VKF_RETURN_IF_ERROR(vkf_npy_load(path, &arr));
  vkf_status st = VKF_OK;
  int64_t nqb = ((int64_t)nq + bq - 1) / bq, nkb = ((int64_t)nk + bk - 1) / bk;
  int64_t l = arr.rank == 3 ? arr.shape[0] : 1;
  if ((arr.dtype != VKF_NPY_I32 && arr.dtype != VKF_NPY_I64) || (arr.rank != 2 && arr.rank != 3) ||
      arr.shape[arr.rank - 2] != nqb || arr.shape[arr.rank - 1] != nkb || (l != 1 && l != heads))
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                         "%s: a block layout must be int32 or int64 [L, %" PRId64 ", %" PRId64
                         "] with L = 1 or %u (query and key blocks of %u and %u tokens)",
                         path, nqb, nkb, heads, bq, bk);
  int32_t *blocks = NULL;
  if (!st) {
    blocks = malloc(arr.element_count * sizeof(int32_t) + 4);
    if (!blocks) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: out of host memory", path);
  }
  for (size_t i = 0; !st && i < arr.element_count; i++) {
    int64_t x =
        arr.dtype == VKF_NPY_I32 ? ((const int32_t *)arr.data)[i] : ((const int64_t *)arr.data)[i];
    if (x != 0 && x != 1)
      st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: entry %zu is %" PRId64 "; a block layout holds 0 or 1", path, i, x);
    else
      blocks[i] = (int32_t)x;
  }
  if (!st) st = vkf_sparse_layout_from_blocks(blocks, (uint32_t)l, nq, nk, bq, bk, out);
  free(blocks);
  vkf_npy_array_release(&arr);
  return st ? vkf_status_annotate(st, "%s: ", path) : VKF_OK;
}

#define TRY(expr)                        \
  do {                                   \
    if ((*out_err = (expr)) != VKF_OK) { \
      vkf_sparse_layout_free(&layout);   \
      return VKF_NO_VALUE;               \
    }                                    \
  } while (0)

vkf_value vkf_op_build_sparse(vkf_graph *g, const vkf_op_attrs *at, const vkf_op_sparse_inputs *in,
                              vkf_status *out_err) {
  vkf_sparse_layout layout = {0};
  const vkf_tensor *tq = in->q.id ? vkf_graph_tensor(g, in->q) : NULL;
  const vkf_tensor *tk = in->k.id ? vkf_graph_tensor(g, in->k) : NULL;
  if (!tq || !tk || tq->rank != 4 || tk->rank != 4)
    TRY(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                        "sparse_attention needs q, k, v inputs of rank 4 [B, H, N, D]"));
  uint32_t heads = (uint32_t)tq->shape[1], nq = (uint32_t)tq->shape[2], nk = (uint32_t)tk->shape[2];
  vkf_sparse_attention_options o = {.key_bias = in->key_bias};
  int64_t blocks[2], i64;
  int n = 0;
  TRY(vkf_op_attr_float(at, "scale", -INFINITY, INFINITY, 0.0f, &o.scale));
  TRY(vkf_op_attr_int(at, "causal", 0, 1, 0, &i64));
  o.causal = (int)i64;
  TRY(vkf_op_attr_ints(at, "block", 1, 4096, 2, blocks, &n));
  if (n == 0)
    TRY(vkf_status_make(
        VKF_STATUS_INVALID_ARGUMENT,
        "sparse_attention needs --attr block=N (or block=BQ,BK): tokens per block"));
  o.block_q = (uint32_t)blocks[0];
  o.block_k = (uint32_t)blocks[n - 1];
  int64_t per_head, strict;
  TRY(vkf_op_attr_int(at, "per_head", 0, 1, 0, &per_head));
  TRY(vkf_op_attr_int(at, "strict_window", 0, 1, 0, &strict));
  int64_t lens[MAX_LENS];
  TRY(vkf_op_attr_ints(at, "kv_len", 0, nk, MAX_LENS, lens, &n));
  if (n) {
    int32_t l32[MAX_LENS];
    for (int i = 0; i < n; i++) l32[i] = (int32_t)lens[i];
    o.kv_len = constant(g, "kv_len", l32, 1, (int64_t[]){n});
  }
  const char *pattern = vkf_op_attr(at, "pattern"), *file = vkf_op_attr(at, "layout");
  int sources = (pattern != NULL) + (file != NULL) + (in->rows || in->cols || in->masks);
  if (sources != 1)
    TRY(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                        "sparse_attention needs exactly one layout: --attr pattern=..., --attr "
                        "layout=FILE.npy, or --in rows=R.npy --in cols=C.npy [--in masks=M.npy]"));
  vkf_value rows, cols;
  if (pattern || file) {
    if (pattern) {
      vkf_sparse_pattern p = {.block_q = o.block_q,
                              .block_k = o.block_k,
                              .window_left = -1,
                              .window_right = -1,
                              .require_rows = 1,
                              .forbid_wide_window = (int)strict};
      TRY(vkf_sparse_pattern_parse(pattern, &p));
      TRY(vkf_sparse_layout_from_pattern(&p, per_head ? heads : 1, nq, nk, &layout));
    } else {
      TRY(layout_from_file(file, heads, nq, nk, o.block_q, o.block_k, &layout));
    }
    rows = constant(g, "rows", layout.rows, 2, (int64_t[]){layout.heads, layout.q_blocks + 1});
    cols = constant(g, "cols", layout.cols, 3, (int64_t[]){layout.heads, layout.entries, 2});
    if (layout.mask_count)
      o.masks = constant(
          g, "masks", layout.masks, 3,
          (int64_t[]){layout.mask_count, layout.block_q, vkf_sparse_mask_words(layout.block_k)});
  } else {
    const vkf_npy_array *t[3] = {in->rows, in->cols, in->masks};
    const char *path[3] = {in->rows_path, in->cols_path, in->masks_path};
    vkf_value v[3] = {VKF_NO_VALUE, VKF_NO_VALUE, VKF_NO_VALUE};
    static const char *names[3] = {"rows", "cols", "masks"};
    for (int i = 0; i < 3; i++) {
      if (!t[i]) {
        if (i < 2)
          TRY(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                              "sparse_attention: --in rows=... and --in cols=... go together"));
        continue;
      }
      if (t[i]->dtype != VKF_NPY_I32 || t[i]->rank < 1)
        TRY(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: the %s table must be int32", path[i],
                            names[i]));
      v[i] = constant(g, names[i], t[i]->data, (uint32_t)t[i]->rank, t[i]->shape);
    }
    rows = v[0], cols = v[1], o.masks = v[2];
  }
  vkf_value y = vkf_sparse_attention(g, "op", in->q, in->k, in->v, rows, cols, &o);
  vkf_sparse_layout_free(&layout);
  return y;
}
