/* Owns the layout checks and the allocation of block-sparse attention layouts (the contract is
 * in graph/ir/sparse_layout.h); pattern builders live in sparse_patterns.c. */
#include "graph/ir/sparse_layout.h"

#include <stdlib.h>
#include <string.h>

/* Every table is indexed with 32-bit ints on the device; bound each one well inside that. */
#define MAX_TABLE_INTS ((uint64_t)1 << 28)

static vkf_status bad(const char *what, uint32_t a, uint32_t b) {
  return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "sparse layout: %s (%u, %u)", what, a, b);
}

vkf_status vkf_sparse_layout_check(const vkf_sparse_layout *l, uint32_t nq, uint32_t nk) {
  if (!l || !l->rows || !l->cols)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "sparse layout: no rows or cols table");
  if (l->block_q < 1 || l->block_k < 1)
    return bad("block sizes must be >= 1, got block_q, block_k", l->block_q, l->block_k);
  if (l->heads < 1) return bad("needs at least one head, got heads, entries", 0, l->entries);
  uint32_t nqb = (uint32_t)(((uint64_t)nq + l->block_q - 1) / l->block_q);
  uint32_t nkb = (uint32_t)(((uint64_t)nk + l->block_k - 1) / l->block_k);
  if (l->q_blocks != nqb)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse layout: %u query blocks, but %u queries in blocks of %u need %u",
                           l->q_blocks, nq, l->block_q, nqb);
  if (l->k_blocks != nkb)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse layout: %u key blocks, but %u keys in blocks of %u need %u",
                           l->k_blocks, nk, l->block_k, nkb);
  uint64_t words = vkf_sparse_mask_words(l->block_k);
  if ((uint64_t)l->heads * (nqb + 1ull) > MAX_TABLE_INTS ||
      (uint64_t)l->heads * l->entries * 2 > MAX_TABLE_INTS ||
      (uint64_t)l->mask_count * l->block_q * words > MAX_TABLE_INTS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse layout: tables too large (heads %u, query blocks %u, entries "
                           "%u, masks %u of %u x %u)",
                           l->heads, nqb, l->entries, l->mask_count, l->block_q, l->block_k);
  if (l->mask_count && !l->masks)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse layout: %u masks declared but no mask table", l->mask_count);
  for (uint32_t h = 0; h < l->heads; h++) {
    const int32_t *rows = l->rows + (uint64_t)h * (nqb + 1);
    const int32_t *cols = l->cols + (uint64_t)h * l->entries * 2;
    if (rows[0] != 0)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "sparse layout: head %u: row offsets start at %d, not 0", h, rows[0]);
    for (uint32_t qb = 0; qb < nqb; qb++) {
      int32_t start = rows[qb], end = rows[qb + 1];
      if (end < start || (uint32_t)end > l->entries)
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                               "sparse layout: head %u, query block %u: bad row offsets %d..%d "
                               "(non-decreasing, at most %u entries)",
                               h, qb, start, end, l->entries);
      for (int32_t e = start; e < end; e++) {
        int32_t kb = cols[2 * e], mask = cols[2 * e + 1];
        if (kb < 0 || (uint32_t)kb >= nkb)
          return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                 "sparse layout: head %u, query block %u, entry %d: key block %d "
                                 "out of range [0, %u)",
                                 h, qb, e, kb, nkb);
        if (e > start && kb <= cols[2 * (e - 1)])
          return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                 "sparse layout: head %u, query block %u, entry %d: key block %d "
                                 "%s (after %d; each row lists ascending, distinct blocks)",
                                 h, qb, e, kb, kb == cols[2 * (e - 1)] ? "repeated" : "unsorted",
                                 cols[2 * (e - 1)]);
        if (mask < -1 || (mask >= 0 && (uint32_t)mask >= l->mask_count))
          return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                 "sparse layout: head %u, query block %u, entry %d: mask id %d out "
                                 "of range (-1 or [0, %u))",
                                 h, qb, e, mask, l->mask_count);
      }
    }
  }
  return VKF_OK;
}

void vkf_sparse_layout_free(vkf_sparse_layout *l) {
  if (!l) return;
  free(l->rows);
  free(l->cols);
  free(l->masks);
  memset(l, 0, sizeof *l);
}

vkf_status vkf_sparse_layout_alloc(vkf_sparse_layout *out, uint32_t heads, uint32_t nq, uint32_t nk,
                                   uint32_t block_q, uint32_t block_k, uint32_t entries,
                                   uint32_t mask_count) {
  memset(out, 0, sizeof *out);
  if (block_q < 1 || block_k < 1 || heads < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse layout: heads %u, block sizes %u, %u must all be >= 1", heads,
                           block_q, block_k);
  uint32_t nqb = (uint32_t)(((uint64_t)nq + block_q - 1) / block_q);
  uint32_t nkb = (uint32_t)(((uint64_t)nk + block_k - 1) / block_k);
  uint64_t words = vkf_sparse_mask_words(block_k);
  uint64_t n_rows = (uint64_t)heads * (nqb + 1ull), n_cols = (uint64_t)heads * entries * 2;
  uint64_t n_masks = (uint64_t)mask_count * block_q * words;
  if (n_rows > MAX_TABLE_INTS || n_cols > MAX_TABLE_INTS || n_masks > MAX_TABLE_INTS ||
      entries > INT32_MAX)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse layout: tables too large (heads %u, query blocks %u, entries "
                           "%u, masks %u of %u x %u)",
                           heads, nqb, entries, mask_count, block_q, block_k);
  *out = (vkf_sparse_layout){.heads = heads,
                             .q_blocks = nqb,
                             .k_blocks = nkb,
                             .block_q = block_q,
                             .block_k = block_k,
                             .entries = entries,
                             .mask_count = mask_count};
  out->rows = calloc(n_rows, sizeof(int32_t));
  out->cols = calloc(n_cols ? n_cols : 1, sizeof(int32_t));
  out->masks = n_masks ? calloc(n_masks, sizeof(int32_t)) : NULL;
  if (!out->rows || !out->cols || (n_masks && !out->masks)) {
    vkf_sparse_layout_free(out);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "sparse layout: out of memory (%u entries)",
                           entries);
  }
  return VKF_OK;
}
