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

/* A pattern of visible (query i, key j) pairs, i aligned to the keys as the op's causal rule
 * (i' = i + Nk - Nq). A pair is visible when any component says so:
 *  - window: window_left / window_right >= 0 (tokens; -1: that side unbounded):
 *    i' - window_left <= j <= i' + window_right, every `dilation`-th key only when dilation > 1
 *    ((i' - j) % dilation == 0: a dilated window);
 *  - strided (the Sparse Transformer's, Child et al. 2019, with stride l): |i' - j| < l or
 *    (i' - j) % l == 0;
 *  - fixed (theirs too, block l, c summary tokens): floor(j / l) == floor(i' / l) or
 *    j % l >= l - c;
 *  - global tokens: the first `global_tokens` positions, or those flagged in `global_flags`
 *    (length max(Nq, Nk), may be NULL): their rows see every key, every row sees their keys;
 *  - random: `random_blocks` distinct key blocks per query block (per layout head), drawn with
 *    `seed` among the blocks no other component lists.
 * The causal cut, kv_len and padding stay the op's business (the Sparse Transformer's patterns
 * are causal: give the op causal=1). */
typedef struct vkf_sparse_pattern {
  uint32_t block_q, block_k;
  int32_t window_left, window_right;   /* -1 and -1: no window */
  uint32_t dilation;                   /* 0 or 1: every key of the window */
  uint32_t stride;                     /* strided pattern's l; 0: none */
  uint32_t fixed_block, fixed_summary; /* fixed pattern's l and c; 0: none */
  uint32_t global_tokens;
  const uint8_t *global_flags; /* optional, one byte per position */
  uint32_t random_blocks;
  uint64_t seed;
  /* long-short attention (Zhu et al. 2021), alone (the other components are then ignored): the
   * first ls_prefix keys are compressed rows, key ls_prefix + p is position p, query i is position
   * i. Query i sees position p iff s·w - floor(w/2) <= p < s·w + w + floor(w/2), s = floor(i / w),
   * w = ls_window (its segment and half a segment on each side); and prefix row g iff ls_segment
   * is 0 (every row) or floor(g / ls_rows) < floor((i + 1) / ls_segment) (the rows of the
   * segments of ls_segment positions that end at or before i). */
  uint32_t ls_window, ls_prefix, ls_rows, ls_segment;
  int require_rows;       /* every query block must list at least one key block */
  int forbid_wide_window; /* a window side wider than the sequence is an error */
} vkf_sparse_pattern;

/* Builds the layout of `pattern` for nq queries and nk keys with `heads` layout heads (1, or H:
 * the heads differ by their random blocks only). Token masks are deduplicated. */
vkf_status vkf_sparse_layout_from_pattern(const vkf_sparse_pattern *pattern, uint32_t heads,
                                          uint32_t nq, uint32_t nk, vkf_sparse_layout *out);

/* Parses "window:W,dilated:W:D,strided:L,fixed:L:C,global:G,random:R,seed:S" (any subset, comma
 * separated; window:W is W/2 tokens on each side, window:L:R left and right) into `out`, leaving
 * its block sizes and flags alone. One-line error naming the bad item. */
vkf_status vkf_sparse_pattern_parse(const char *text, vkf_sparse_pattern *out);

/* Builds a layout from a dense 0/1 block table [heads, Nqb, Nkb] (any non-zero: listed); every
 * listed block is visible whole. */
vkf_status vkf_sparse_layout_from_blocks(const int32_t *blocks, uint32_t heads, uint32_t nq,
                                         uint32_t nk, uint32_t block_q, uint32_t block_k,
                                         vkf_sparse_layout *out);

#endif
