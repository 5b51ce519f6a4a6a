/* LongformerSelfAttention in eval mode, as one block-sparse attention for the local rows and one
 * dense attention for the global rows:
 *  - local rows: keys [global tokens' keys (a prefix gathered from the layer's K and V) | every
 *    position], one softmax; the band |i - j| <= w/2 comes from the layout, and the key bias masks
 *    padding and global positions in the window part (Hugging Face masks them there, so a global
 *    key counts once) and the prefix slots a row does not use;
 *  - global rows: query_global of the global tokens against key_global / value_global of every
 *    position, padding masked;
 *  - each output row is then picked from [local | global | a zero row] (padding rows get zeros,
 *    as HF zeroes their probabilities), and the output projection adds the residual. */
#include <math.h>

#include "models/arch/longformer_internal.h"
#include "models/arch/nn_helpers.h"

/* Rows `ids` (i32 [B, K], rows of the flattened x) of x [B, N, C] -> [B, K, C]. */
static vkf_value rows_of(vkf_graph *g, const char *name, vkf_value x, int64_t rows, int64_t c,
                         vkf_value ids) {
  char nm[VKF_ARCH_NAME_MAX + 64];
  int64_t flat[2] = {rows, c};
  vkf_value t = vkf_reshape(g, VKF_NAME(nm, "%s.table", name), x, 2, flat);
  return vkf_gather(g, name, t, ids);
}

vkf_value vkf_longformer_attention(vkf_graph *g, const char *np_, const vkf_block_config *c,
                                   const vkf_block_weights *w,
                                   const vkf_longformer_global_weights *gw,
                                   const vkf_longformer_attn_io *io, vkf_value x) {
  int64_t b = io->batch, n = io->np, p = io->prefix, h = c->heads, dh = c->head_dim, d = c->hidden;
  float scale = 1.0f / sqrtf((float)dh);
  char at[VKF_ARCH_NAME_MAX], nm[VKF_ARCH_NAME_MAX + 32];
  VKF_NAME(at, "%sattention.self", np_);

  vkf_value y =
      vkf_nn_project(g, VKF_NAME(nm, "%s.qkv", at), x, &w->qkv, VKF_ACT_NONE, VKF_NO_VALUE);
  int64_t split[4] = {b, n, 3 * h, dh};
  vkf_value ys = vkf_reshape(g, VKF_NAME(nm, "%s.qkv_heads", at), y, 4, split);
  vkf_value q = vkf_nn_heads(g, VKF_NAME(nm, "%s.q", at), ys, 0, h);
  vkf_value k = vkf_nn_heads(g, VKF_NAME(nm, "%s.k", at), ys, h, h);
  vkf_value v = vkf_nn_heads(g, VKF_NAME(nm, "%s.v", at), ys, 2 * h, h);
  if (p > 0) {
    /* The global tokens' keys and values (the layer's own K, V rows) before every position's. */
    vkf_value yg = rows_of(g, VKF_NAME(nm, "%s.global_kv", at), y, b * n, 3 * d, io->global_rows);
    int64_t gsplit[4] = {b, p, 3 * h, dh};
    yg = vkf_reshape(g, VKF_NAME(nm, "%s.global_kv_heads", at), yg, 4, gsplit);
    vkf_value kg = vkf_nn_heads(g, VKF_NAME(nm, "%s.k_global_keys", at), yg, h, h);
    vkf_value vg = vkf_nn_heads(g, VKF_NAME(nm, "%s.v_global_keys", at), yg, 2 * h, h);
    vkf_value ks[2] = {kg, k}, vs[2] = {vg, v};
    k = vkf_concat(g, VKF_NAME(nm, "%s.k_with_global", at), ks, 2, 2);
    v = vkf_concat(g, VKF_NAME(nm, "%s.v_with_global", at), vs, 2, 2);
  }
  const vkf_sparse_layout *l = io->layout;
  int64_t rs[2] = {1, (int64_t)l->q_blocks + 1}, cs[3] = {1, l->entries, 2},
          ms[3] = {l->mask_count, l->block_q, vkf_sparse_mask_words(l->block_k)};
  vkf_sparse_attention_options so = {
      .scale = scale,
      .block_q = l->block_q,
      .block_k = l->block_k,
      .merge_heads = 1,
      .masks = vkf_graph_constant(g, VKF_NAME(nm, "%s.layout.masks", at), VKF_I32, 3, ms, l->masks),
      .key_bias = io->key_bias,
  };
  vkf_value rows =
      vkf_graph_constant(g, VKF_NAME(nm, "%s.layout.rows", at), VKF_I32, 2, rs, l->rows);
  vkf_value cols =
      vkf_graph_constant(g, VKF_NAME(nm, "%s.layout.cols", at), VKF_I32, 3, cs, l->cols);
  vkf_value local = vkf_sparse_attention(g, VKF_NAME(nm, "%s.local", at), q, k, v, rows, cols, &so);
  int64_t bnd[3] = {b, n, d};
  local = vkf_reshape(g, VKF_NAME(nm, "%s.local_context", at), local, 3, bnd); /* [B, N, D] */

  vkf_value parts[3];
  uint32_t count = 0;
  parts[count++] = local;
  if (p > 0) {
    vkf_value xg = rows_of(g, VKF_NAME(nm, "%s.global_rows", at), x, b * n, d, io->global_rows);
    vkf_value qg = vkf_nn_project(g, VKF_NAME(nm, "%s.query_global", at), xg, &gw->q, VKF_ACT_NONE,
                                  VKF_NO_VALUE);
    int64_t qsplit[4] = {b, p, h, dh};
    qg = vkf_reshape(g, VKF_NAME(nm, "%s.query_global_split", at), qg, 4, qsplit);
    qg = vkf_nn_heads(g, VKF_NAME(nm, "%s.qg", at), qg, 0, h);
    vkf_value kvg =
        vkf_nn_project(g, VKF_NAME(nm, "%s.kv_global", at), x, &gw->kv, VKF_ACT_NONE, VKF_NO_VALUE);
    int64_t kvsplit[4] = {b, n, 2 * h, dh};
    kvg = vkf_reshape(g, VKF_NAME(nm, "%s.kv_global_split", at), kvg, 4, kvsplit);
    vkf_value kgl = vkf_nn_heads(g, VKF_NAME(nm, "%s.kg", at), kvg, 0, h);
    vkf_value vgl = vkf_nn_heads(g, VKF_NAME(nm, "%s.vg", at), kvg, h, h);
    vkf_attention_options ao = {.scale = scale, .bias = io->global_bias};
    vkf_value ga = vkf_attention(g, VKF_NAME(nm, "%s.global", at), qg, kgl, vgl, &ao);
    static const uint32_t to_bnhd[4] = {0, 2, 1, 3};
    ga = vkf_permute(g, VKF_NAME(nm, "%s.global_merge", at), ga, to_bnhd);
    int64_t bpd[3] = {b, p, d};
    parts[count++] = vkf_reshape(g, VKF_NAME(nm, "%s.global_context", at), ga, 3, bpd);
  }
  parts[count++] = io->zero_rows;
  vkf_value all = vkf_concat(g, VKF_NAME(nm, "%s.outputs", at), parts, count, 1);
  vkf_value ctx = rows_of(g, VKF_NAME(nm, "%s.context", at), all, b * (n + p + 1), d, io->scatter);
  return vkf_nn_project(g, VKF_NAME(nm, "%sattention.output.dense", np_), ctx, &w->out,
                        VKF_ACT_NONE, x);
}
