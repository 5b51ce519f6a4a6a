/* Block-sparse attention layouts: which key blocks each query block visits (a CSR table per
 * layout head), exact token masks inside partly covered blocks, the checks every layout passes
 * before a graph uses it, and the builders from patterns (local windows, the Sparse
 * Transformer's strided and fixed patterns, global tokens, seeded random blocks). The op that
 * reads them is VKF_OP_SPARSE_ATTENTION (graph/ir/builder.h: vkf_sparse_attention). */
#ifndef VKF_GRAPH_SPARSE_LAYOUT_H
#define VKF_GRAPH_SPARSE_LAYOUT_H

#include <stdint.h>

#include "graph/base/status.h"

typedef struct vkf_sparse_layout {
  uint32_t heads;              /* L: 1 (shared by every head) or H */
  uint32_t q_blocks, k_blocks; /* Nqb = ceil(Nq / block_q), Nkb = ceil(Nk / block_k) */
  uint32_t block_q, block_k;   /* tokens per block, >= 1 */
  uint32_t entries;            /* E: row stride of cols, in entries */
  uint32_t mask_count;         /* M */
  int32_t *rows;               /* [L][Nqb + 1]: row q of head l is entries rows[q]..rows[q+1]-1 */
  int32_t *cols;               /* [L][E][2]: (key block, mask id); mask id -1 = whole block */
  int32_t *masks; /* [M][block_q][ceil(block_k / 32)]: bit j%32 of word j/32 of row r set = key j
                     of the block visible to query r of the block; NULL when M == 0 */
} vkf_sparse_layout;

/* Words per mask row: ceil(block_k / 32). */
static inline uint32_t vkf_sparse_mask_words(uint32_t block_k) {
  return (block_k + 31) / 32;
}

/* One-line error naming the head, query block and entry for: a block index out of range,
 * unsorted or repeated entries, bad offsets, a mask id out of range; also a block count that does
 * not match nq / nk and sizes whose products overflow. */
vkf_status vkf_sparse_layout_check(const vkf_sparse_layout *layout, uint32_t nq, uint32_t nk);

/* Frees rows, cols and masks (malloc'd by the builders below) and zeroes the struct. */
void vkf_sparse_layout_free(vkf_sparse_layout *layout);

/* Allocates a layout with room for `entries` entries per head and `mask_count` masks (zeroed;
 * rows all 0, i.e. every row empty). */
vkf_status vkf_sparse_layout_alloc(vkf_sparse_layout *out, uint32_t heads, uint32_t nq, uint32_t nk,
                                   uint32_t block_q, uint32_t block_k, uint32_t entries,
                                   uint32_t mask_count);

#endif
