/* `vkf op attention_pooling`: D2L's first attention, Nadaraya-Watson kernel regression with
 * a Gaussian kernel of width sigma, f(q) = sum_i softmax_i(-|q - k_i|^2 / (2 sigma^2)) v_i, run
 * through the fused attention kernel. The kernel's exponent expands to q·k_i/sigma^2 -
 * |k_i|^2/(2 sigma^2) - |q|^2/(2 sigma^2); the last term is the same for every key of a query,
 * so the softmax drops it, and the rest is a dot product of [q, 1] with [k_i, -|k_i|^2 / 2] at
 * scale 1/sigma^2. Keys and queries are first centred on the keys' mean (the kernel is
 * translation invariant; it keeps the expanded scores small, so fp32 loses less). */
#ifndef VKF_TOOLS_VKF_OP_POOLING_H
#define VKF_TOOLS_VKF_OP_POOLING_H

#include "graph/ir/graph.h"
#include "tools/vkf/op_attrs.h"

/* queries [Nq] or [Nq, d], keys [Nk] or [Nk, d], values [Nk] or [Nk, dv] (f32) -> the pooled
 * values [Nq] or [Nq, dv]; with --attr weights=1 the attention weights [Nq, Nk] (row q sums to
 * 1), computed by pooling the columns of the identity. VKF_NO_VALUE with *out_err naming what is
 * wrong. */
vkf_value vkf_op_build_pooling(vkf_graph *g, const vkf_op_attrs *attrs, vkf_value queries,
                               vkf_value keys, vkf_value values, vkf_status *out_err);

#endif
