/* The small graph pieces several architectures build alike, from checkpoint tensors with
 * Hugging Face's module names (MODULE.weight, MODULE.bias): one copy here instead of a private one
 * in each builder. Node names are w->prefix + MODULE, as each builder named them. */
#ifndef VKF_MODELS_ARCH_NN_HELPERS_H
#define VKF_MODELS_ARCH_NN_HELPERS_H

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/transformer_block.h"

/* A constant [rank, shape] whose every element is `value`, cached under `key`. */
vkf_value vkf_nn_filled(const vkf_arch_weights *w, vkf_graph *g, const char *key, vkf_dtype dtype,
                        uint32_t rank, const int64_t *shape, float value);
/* nn.Linear MODULE (torch weight [out, in], read as vkf_arch_weight) with `act` in the GEMM's
 * epilogue. */
vkf_value vkf_nn_linear(const vkf_arch_weights *w, vkf_graph *g, const char *module, vkf_value x,
                        vkf_activation act);
/* nn.LayerNorm MODULE over the last dim. */
vkf_value vkf_nn_layernorm(const vkf_arch_weights *w, vkf_graph *g, const char *module, vkf_value x,
                           float eps);
/* BERT's extended attention mask: (mask - 1) · big added to every score of a row's keys.
 * mask_f f32 [B, N] of 0 / 1 -> f32 [B, 1, 1, N]. */
vkf_value vkf_nn_mask_bias(const vkf_arch_weights *w, vkf_graph *g, vkf_value mask_f, int64_t batch,
                           int64_t n);
/* Token 0 of every row, x [B, N, D] -> [B, D] (nodes NAME.first_token and NAME.first_token_flat).
 */
vkf_value vkf_nn_first_token(vkf_graph *g, const char *name, vkf_value x, int64_t batch, int64_t d);
/* BertPooler (also Longformer's): tanh(pooler.dense(first token)), x [B, N, D] -> [B, D]. */
vkf_value vkf_nn_pooler(const vkf_arch_weights *w, vkf_graph *g, vkf_value x, int64_t batch,
                        int64_t d);
/* xs[0..count) joined along `axis`, at most 8 per concat node (a tree of them); xs is scratch. */
vkf_value vkf_nn_concat_many(vkf_graph *g, const char *name, vkf_value *xs, int64_t count,
                             uint32_t axis);
/* The block's norm (vkf_block_config.norm: LayerNorm or RMSNorm, norm_eps) of x. */
vkf_value vkf_nn_block_norm(vkf_graph *g, const char *name, const vkf_block_config *c, vkf_value x,
                            vkf_value gamma, vkf_value beta);
/* Dim `axis` of v, or 1 when v is absent or has fewer dims (a sticky error is already recorded
 * and is what the caller will report). */
int64_t vkf_nn_dim_of(vkf_graph *g, vkf_value v, uint32_t axis);
/* A block linear layer (transformer_block.h) with an epilogue activation and residual. */
vkf_value vkf_nn_project(vkf_graph *g, const char *name, vkf_value x, const vkf_block_linear *l,
                         vkf_activation act, vkf_value residual);
/* Heads [first, first + count) of a [B, N, heads, Dh] projection as a [B, count, N, Dh] view (a
 * strided view of the GEMM output: no copy). */
vkf_value vkf_nn_heads(vkf_graph *g, const char *name, vkf_value split, int64_t first,
                       int64_t count);

#endif
