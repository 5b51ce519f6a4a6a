/* torch.topk(x, k, largest=True, sorted=True) of one float32 row as torch 1.13 computes it on the
 * CPU, ties included. Beam search picks its candidates with it, and equal scores are common there
 * (the -1e9 start scores of the extra beams absorb any log-probability in float32; forced tokens
 * leave rows of -inf), so which of the tied candidates comes first decides which beam continues. */
#ifndef VKF_MODELS_TORCH_TOPK_H
#define VKF_MODELS_TORCH_TOPK_H

#include <stddef.h>
#include <stdint.h>

/* A candidate: its value (compared in double, torch's accumulate type) and its index in the row. */
typedef struct vkf_topk_item {
  double value;
  int64_t index;
} vkf_topk_item;

/* The k largest of `values` [n] (1 <= k <= n), largest first, into out_values / out_indices [k].
 * `scratch` [n] is caller memory. torch sorts (value, index) pairs comparing values only (NaN
 * largest) with libstdc++'s algorithms: std::partial_sort when k * 64 <= n, else std::nth_element
 * then std::sort of the first k - 1; both are reproduced step for step, so ties fall in the same
 * order. */
void vkf_torch_topk(const float *values, size_t n, size_t k, vkf_topk_item *scratch,
                    float *out_values, int64_t *out_indices);

#endif
