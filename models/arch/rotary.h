/* Rotary position embeddings (Llama, Mistral, Qwen2) as transformers 4.38 computes them: the
 * inverse frequencies (with linear, dynamic-NTK or Llama-3 scaling), cos/sin tables per position,
 * and the rotation q·cos + rotate_half(q)·sin built from existing graph ops. */
#ifndef VKF_MODELS_ARCH_ROTARY_H
#define VKF_MODELS_ARCH_ROTARY_H

#include <stddef.h>

#include "graph/ir/graph.h"
#include "models/formats/hf_config.h"

/* cos and sin of angle position · inv_freq[i], laid out [count, head_dim] with the half-width
 * frequencies repeated (torch.cat((freqs, freqs), -1)), for positions first .. first + count - 1,
 * in fp32 as transformers computes them. `seq_len` is the sequence length dynamic scaling sees. */
void vkf_rotary_tables(const vkf_hf_config *config, int64_t first, int64_t count, int64_t seq_len,
                       float *out_cos, float *out_sin);

/* The rotation of x [B, H, N, Dh] (any strided view) with cos, sin [N, Dh] of x's dtype:
 * x·cos + rotate_half(x)·sin, rotate_half(x) = concat(-x[..., Dh/2:], x[..., :Dh/2]). */
vkf_value vkf_rotary_apply(vkf_graph *g, const char *name, vkf_value x, vkf_value cos,
                           vkf_value sin);

#endif
