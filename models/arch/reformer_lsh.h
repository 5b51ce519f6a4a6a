/* Reformer's LSH self-attention (LSHSelfAttention of transformers 4.38.2, eval mode, no cache) as
 * graph ops, and the chunk-neighbourhood gather both Reformer attentions share. Private to
 * models/arch/reformer*.c. */
#ifndef VKF_MODELS_ARCH_REFORMER_LSH_H
#define VKF_MODELS_ARCH_REFORMER_LSH_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/arch/arch_weights.h"

/* _look_adjacent: x [B', nc, L, ...] (chunk axis 1) -> [B', nc, W·L, ...] with chunk c seeing
 * chunks (c + i) mod nc for i = -before..after, in that order along axis 2 (a chunk may repeat
 * when W > nc, as in Hugging Face). before = after = 0 returns x. */
vkf_value vkf_reformer_look_adjacent(vkf_graph *g, const char *name, vkf_value x, int64_t nc,
                                     int64_t before, int64_t after);

typedef struct vkf_reformer_lsh {
  int64_t heads, head_dim;
  int64_t chunk, before, after; /* lsh_attn_chunk_length, lsh_num_chunks_before / after */
  int64_t hashes;               /* num_hashes */
  int factor_count;             /* num_buckets: 1 for an int, else its factors */
  const int64_t *factors;
  uint64_t seed;                /* hash_seed */
  int causal;                   /* is_decoder */
} vkf_reformer_lsh;

/* The attended values, before the output projection: qk and v f32 [B, N, H·dh] (the shared
 * query-key and the value projections of the layer-normed X2), maskf f32 [B, N] of 0/1 ->
 * f32 [B, N, H·dh]. N <= chunk: plain attention over the sequence (queries q, keys
 * q / rms(q) / sqrt(dh), a token scored -1e5 against itself, masked keys -1e9). Else N % chunk
 * == 0: each hash round rotates q by torch.randn(H, dh, rounds, rotation / 2) drawn after
 * torch.manual_seed(seed) (models/arch/torch_rng.h), buckets are the argmax over [r, -r] per
 * factor combined (padding tokens, maskf 0, in one extra bucket), the rounds' tokens are sorted
 * stably by (round, bucket) on the device (vkf_argsort), attend within chunks of `chunk` sorted
 * tokens and their neighbours, go back to their order, and the rounds merge by their softmax
 * normalisers (Hugging Face's logsumexp weights). No [N, N] tensor: scores are
 * [B·H, rounds·N / chunk, chunk, W·chunk]. */
vkf_value vkf_reformer_lsh_attention(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                     vkf_value qk, vkf_value v, vkf_value maskf, int64_t batch,
                                     int64_t n, const vkf_reformer_lsh *p);

#endif
