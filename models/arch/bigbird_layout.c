/* BigBird's eval-mode block layout (see bigbird_layout.h for which rows see which blocks). */
#include "models/arch/bigbird_layout.h"

#include <string.h>

static void put(vkf_sparse_layout *l, uint32_t *e, uint32_t block) {
  l->cols[2 * *e] = (int32_t)block;
  l->cols[2 * *e + 1] = -1; /* every key of the block: padding is the key bias */
  (*e)++;
}

vkf_status vkf_bigbird_layout(uint32_t nb, uint32_t r, uint32_t bs, vkf_sparse_layout *out) {
  memset(out, 0, sizeof *out);
  if (nb < 5 || bs < 1 || (uint64_t)(nb + r) * bs > INT32_MAX)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "BigBird block-sparse layout: %u blocks of %u tokens with %u random "
                           "blocks (needs at least 5 blocks)",
                           nb, bs, r);
  /* Two global rows of nb entries; the others 4 (second and second-to-last) or 5 plus r each. */
  uint64_t entries = 2 * (uint64_t)nb + 2 * (4 + (uint64_t)r) + (nb - 4) * (5 + (uint64_t)r);
  if (entries > INT32_MAX)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "BigBird block-sparse layout: %llu entries are too many",
                           (unsigned long long)entries);
  VKF_RETURN_IF_ERROR(
      vkf_sparse_layout_alloc(out, 1, nb * bs, (nb + r) * bs, bs, bs, (uint32_t)entries, 0));
  uint32_t e = 0;
  for (uint32_t i = 0; i < nb; i++) {
    out->rows[i] = (int32_t)e;
    if (i == 0 || i == nb - 1) {
      for (uint32_t j = 0; j < nb; j++) put(out, &e, j);
      continue;
    }
    put(out, &e, 0);
    if (i == 1) {
      put(out, &e, 1);
      put(out, &e, 2);
    } else if (i == nb - 2) {
      put(out, &e, nb - 3);
      put(out, &e, nb - 2);
    } else {
      put(out, &e, i - 1);
      put(out, &e, i);
      put(out, &e, i + 1);
    }
    put(out, &e, nb - 1);
    for (uint32_t j = 0; j < r; j++) put(out, &e, nb + j); /* the copies of block 0 */
  }
  out->rows[nb] = (int32_t)e;
  vkf_status s = vkf_sparse_layout_check(out, nb * bs, (nb + r) * bs);
  if (s) vkf_sparse_layout_free(out);
  return s;
}
