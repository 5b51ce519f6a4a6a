/* Shared by the Longformer files of models/arch/: the local attention's sparse layouts (cached in
 * the model, as graph constants point at them) and the self-attention sublayer. */
#ifndef VKF_MODELS_ARCH_LONGFORMER_INTERNAL_H
#define VKF_MODELS_ARCH_LONGFORMER_INTERNAL_H

#include "graph/ir/sparse_layout.h"
#include "models/arch/transformer_block.h"

/* Tokens per block of the local layout (queries and keys): one 32-bit mask word per row. */
enum { VKF_LONGFORMER_BLOCK = 32 };

typedef struct vkf_longformer_layouts vkf_longformer_layouts; /* a list; NULL is empty */

/* The layout of one layer's local attention over keys [prefix | window part of np]: every query
 * block lists the prefix blocks (whole; the key bias masks unused slots) and the window blocks
 * holding keys at distance <= one_sided from one of its queries, the band's edges as masks.
 * Built once per (one_sided, np, prefix), checked, kept in *cache. NULL on error (*status set). */
const vkf_sparse_layout *vkf_longformer_layout(vkf_longformer_layouts **cache, int64_t one_sided,
                                               int64_t np, int64_t prefix, vkf_status *status);
void vkf_longformer_layouts_free(vkf_longformer_layouts **cache);

/* Run-time tensors every layer's attention reads, made once per build. */
typedef struct vkf_longformer_attn_io {
  int64_t batch, np, prefix, one_sided;
  const vkf_sparse_layout *layout;
  vkf_value key_bias;    /* f32 [B, prefix + np]: padding, global positions, unused slots */
  vkf_value global_bias; /* f32 [B, 1, 1, np]: padding (prefix > 0 only) */
  vkf_value global_rows; /* i32 [B, prefix]: rows of the flattened [B·np] sequence (prefix > 0) */
  vkf_value scatter;     /* i32 [B, np]: rows of the flattened [B·(np + prefix + 1)] outputs */
  vkf_value zero_rows;   /* [B, 1, D] zeros in the activations' dtype (padding rows' output) */
} vkf_longformer_attn_io;

/* The global projections of one layer (query_global, and key_global with value_global stacked). */
typedef struct vkf_longformer_global_weights {
  vkf_block_linear q, kv;
} vkf_longformer_global_weights;

/* LongformerSelfAttention + LongformerSelfOutput's dense (without its LayerNorm), residual
 * added: x [B, np, D] -> [B, np, D]. */
vkf_value vkf_longformer_attention(vkf_graph *g, const char *node_prefix,
                                   const vkf_block_config *config, const vkf_block_weights *w,
                                   const vkf_longformer_global_weights *gw,
                                   const vkf_longformer_attn_io *io, vkf_value x);

#endif
