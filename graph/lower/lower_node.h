/* One node as a per-op lowering function sees it, and those functions (lower_<family>.c): each
 * runs its op's variant chooser on the device caps and appends its dispatches to the plan,
 * binding through bind.h. Calls run one way: the walker (lower.c) -> the slicer (lower_slice.c)
 * -> these functions -> bind.c. */
#ifndef VKF_GRAPH_LOWER_NODE_H
#define VKF_GRAPH_LOWER_NODE_H

#include "graph/lower/bind.h"

/* One node as its lowering function sees it: attributes plus where inputs and output live. */
typedef struct vkf_lower_node {
  const char *name;
  vkf_op op;
  const vkf_node_attrs *attrs;
  uint32_t input_count;
  vkf_plan_tensor inputs[VKF_MAX_NODE_INPUTS]; /* slots per VKF_IN_*; absent: VKF_PLAN_NO_BUFFER */
  vkf_plan_tensor output;
} vkf_lower_node;

/* Appends the node's dispatches to ctx->plan. Unsupported shapes/dtypes give a status that names
 * the node, the op and the shape. */
typedef vkf_status (*vkf_lower_fn)(const vkf_lower_ctx *ctx, const vkf_lower_node *node);

/* ---- per-op lowering functions (graph/lower/lower_<family>.c) ---- */
vkf_status vkf_lower_matmul(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_elementwise(const vkf_lower_ctx *ctx, const vkf_lower_node *node); /* single ops and FUSED_ELEMENTWISE: generated GLSL */
vkf_status vkf_lower_norm(const vkf_lower_ctx *ctx, const vkf_lower_node *node);        /* LAYERNORM, RMSNORM, L2_NORMALIZE */
vkf_status vkf_lower_softmax(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_attention(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_copy(const vkf_lower_ctx *ctx, const vkf_lower_node *node);        /* COPY, CAST, CONCAT */
vkf_status vkf_lower_gather(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_patch_embed(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_mean_pool(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_sparse_attention(const vkf_lower_ctx *ctx, const vkf_lower_node *node); /* slices its heads */
vkf_status vkf_lower_kv_write(const vkf_lower_ctx *ctx, const vkf_lower_node *node);    /* slices itself */
vkf_status vkf_lower_linear(const vkf_lower_ctx *ctx, const vkf_lower_node *node);      /* LINEAR_FEATURES, LINEAR_ATTENTION, LINEAR_STATE_WRITE */
vkf_status vkf_lower_reduce(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_depthwise_conv(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_additive_attention(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_gru_scan(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_argsort(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_rotary(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
/* A rule over nodes (graph/lower/lower_rotary_kv.c): when node `at` starts a decode step's q and k
 * rotary with both cache writes, lowers them as one dispatch and sets *out_last to the last
 * node it covered; else *out_last = at and nothing is added. */
vkf_status vkf_lower_rotary_kv_group(const vkf_lower_ctx *ctx, const vkf_graph *g,
                                     const vkf_plan_tensor *tensors, uint32_t at,
                                     uint32_t *out_last);

#endif
