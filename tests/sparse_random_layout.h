/* Seeded random block-sparse layouts for the tests (graph/ and gpu/): each (head, query block)
 * lists a random ascending subset of key blocks, some through random token masks. Header-only so
 * each test stays one file. */
#ifndef VKF_TESTS_SPARSE_RANDOM_LAYOUT_H
#define VKF_TESTS_SPARSE_RANDOM_LAYOUT_H

#include "graph/ir/sparse_layout.h"

static inline uint32_t sparse_rnd(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

/* keep_in_3: how many of 3 key blocks are listed (1..3); masks: how many token masks (entries
 * use one with probability 1/3), 0 for none. */
static inline vkf_status sparse_random_layout(vkf_sparse_layout *l, uint32_t heads, uint32_t nq,
                                              uint32_t nk, uint32_t bq, uint32_t bk,
                                              uint32_t keep_in_3, uint32_t masks, uint32_t seed) {
  uint32_t nqb = (nq + bq - 1) / bq, nkb = (nk + bk - 1) / bk, st = seed * 2654435761u + 1u;
  vkf_status s = vkf_sparse_layout_alloc(l, heads, nq, nk, bq, bk, nqb * nkb, masks);
  if (s) return s;
  uint32_t words = vkf_sparse_mask_words(bk);
  for (uint32_t i = 0; i < masks * bq * words; i++)
    l->masks[i] = (int32_t)(sparse_rnd(&st) ^ sparse_rnd(&st) << 16);
  for (uint32_t h = 0; h < heads; h++) {
    int32_t *rows = l->rows + h * (nqb + 1), *cols = l->cols + (size_t)h * l->entries * 2;
    uint32_t e = 0;
    for (uint32_t qb = 0; qb < nqb; qb++) {
      rows[qb] = (int32_t)e;
      for (uint32_t kb = 0; kb < nkb; kb++) {
        if (sparse_rnd(&st) % 3 >= keep_in_3) continue;
        cols[2 * e] = (int32_t)kb;
        cols[2 * e + 1] =
            masks && sparse_rnd(&st) % 3 == 0 ? (int32_t)(sparse_rnd(&st) % masks) : -1;
        e++;
      }
    }
    rows[nqb] = (int32_t)e;
  }
  return VKF_OK;
}

#endif
