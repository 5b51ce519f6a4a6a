/* The block layout of Hugging Face BigBird's block-sparse attention in eval mode (transformers
 * 4.38.2, BigBirdBlockSparseAttention.bigbird_block_sparse_attention), for the sparse attention op.
 *
 * Query block 0 and the last one are global: they see every key block. Every other query block i
 * sees key block 0 (global), its window i-1, i, i+1 and the last block (global); blocks 1 and
 * nb-2 see 0, 1, 2, nb-1 and 0, nb-3, nb-2, nb-1. Each of those also sees r "random" blocks,
 * which in eval mode are all key block 0 (_bigbird_block_rand_mask* return zeros when not
 * training, whatever the sequence length, the 1024/3072/4096 "old plan" lengths included), so
 * block 0 counts 1 + r times in their softmax. The op lists each key block once, so the caller
 * appends r copies of key block 0 to K and V (and to the key bias): key blocks nb .. nb + r - 1.
 * One layout serves every head (rand_attn is the same zeros for each). */
#ifndef VKF_MODELS_ARCH_BIGBIRD_LAYOUT_H
#define VKF_MODELS_ARCH_BIGBIRD_LAYOUT_H

#include <stdint.h>

#include "graph/ir/sparse_layout.h"

/* Fills *out (one layout head, nb query blocks, nb + r key blocks of `block_size` tokens, no
 * masks) and checks it with vkf_sparse_layout_check. nb must be at least 5 (BigBirdModel only runs
 * block-sparse past (5 + 2r) blocks); fewer is INVALID_ARGUMENT. Free with
 * vkf_sparse_layout_free. */
vkf_status vkf_bigbird_layout(uint32_t blocks, uint32_t random_blocks, uint32_t block_size,
                              vkf_sparse_layout *out);

#endif
