/* Reformer's LSH self-attention (LSHSelfAttention of transformers 4.38.2, eval mode) as graph
 * ops: the whole sequence, and the cached generation step (reformer_lsh_step.c); the
 * chunk-neighbourhood gather both Reformer attentions share. Private to models/arch/reformer*.c. */
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
 * [B·H, rounds·N / chunk, chunk, W·chunk]. out_buckets, when not NULL, gets the buckets
 * f32 [B, H, N, R] without the rounds' offsets (VKF_NO_VALUE for plain attention, which hashes
 * nothing): what Hugging Face's generation caches after the prompt. */
vkf_value vkf_reformer_lsh_attention(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                     vkf_value qk, vkf_value v, vkf_value maskf, int64_t batch,
                                     int64_t n, const vkf_reformer_lsh *p, vkf_value *out_buckets);

/* LSHSelfAttention's cached step (use_cache with past states) for batch 1: qk and v f32
 * [1, n, H·dh] are the projections of the n - 1 cached states and the new one, last ->
 * the new token's attended values f32 [1, 1, H·dh].
 * past_buckets invalid (nothing hashed yet): plain attention of the new token over all n (itself
 * scored -1e5); when n >= chunk the n states are hashed, *out_buckets = f32 [1, H, n, R] without
 * offsets. Else past_buckets f32 [H, R, n - 1] are the cached buckets with their rounds' offsets,
 * and the new token's buckets (offsets r·offset_step) join them: each round sorts the n stably,
 * the new token's chunk of `chunk` sorted positions and its `before` / `after` neighbours (modulo
 * n, as _expand_to_indices_in_relevant_chunk wraps) are its keys, tokens equal to it scored -1e5,
 * the rounds merged by their logsumexp weights; *out_buckets = f32 [1, H, 1, R] (no offsets).
 * q_new f32 [1, 1, H·dh], when valid, is the new token's projection in place of qk's last row
 * (with past buckets only: Hugging Face's batched step takes keys from another row's states). */
vkf_value vkf_reformer_lsh_step(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                vkf_value qk, vkf_value v, vkf_value q_new,
                                vkf_value past_buckets, int64_t offset_step, int64_t n,
                                const vkf_reformer_lsh *p, vkf_value *out_buckets);

/* Shared by reformer_lsh.c and reformer_lsh_step.c. */
/* An f32 constant of `shape` cached under `key`, filled by fill(out, count, user). */
vkf_value vkf_reformer_lsh_const(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                                 uint32_t rank, const int64_t *shape,
                                 void (*fill)(float *, size_t, const void *), const void *user);
vkf_value vkf_reformer_lsh_scalar(const vkf_arch_weights *w, vkf_graph *g, float value);
/* [B, N, H·dh] -> contiguous [B, H, N, dh] */
vkf_value vkf_reformer_lsh_heads(vkf_graph *g, const char *name, vkf_value x, int64_t b, int64_t n,
                                 int64_t h, int64_t dh);
/* Buckets f32 [B, H, N, R] of qh [B, H, N, dh] (no offsets; maskf [B, N] 0 -> the extra bucket
 * nb); *out_nb = nb, the product of the factors. */
vkf_value vkf_reformer_lsh_buckets(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                   vkf_value qh, vkf_value maskf, int64_t b, int64_t n,
                                   const vkf_reformer_lsh *p, int64_t *out_nb);
/* |x| and, for integers in f32, x >= 0 as 0/1. */
vkf_value vkf_reformer_lsh_abs(vkf_graph *g, const char *name, vkf_value x);
vkf_value vkf_reformer_lsh_nonneg(const vkf_arch_weights *w, vkf_graph *g, const char *name,
                                  vkf_value x);

#endif
