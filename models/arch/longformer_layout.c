/* The local attention's block layout: Longformer's band |i - j| <= w/2 over the window part of the
 * keys, after a prefix of global keys every query sees. Linear in the sequence: each query block
 * lists the prefix blocks and about (w + 2·block) / block window blocks. */
#include <stdlib.h>

#include "models/arch/longformer_internal.h"

struct vkf_longformer_layouts {
  vkf_longformer_layouts *next;
  int64_t one_sided, np, prefix;
  vkf_sparse_layout layout;
};

/* The band's mask for window blocks `delta` blocks right of the query block (negative: left):
 * row r sees key c iff |delta·BLOCK + c - r| <= one_sided. */
static void band_mask(int32_t *rows, int64_t delta, int64_t one_sided) {
  const int64_t b = VKF_LONGFORMER_BLOCK;
  for (int64_t r = 0; r < b; r++) {
    uint32_t word = 0;
    for (int64_t c = 0; c < b; c++) {
      int64_t d = delta * b + c - r;
      if (d <= one_sided && -d <= one_sided) word |= 1u << c;
    }
    rows[r] = (int32_t)word;
  }
}

static vkf_status build(int64_t one_sided, int64_t np, int64_t prefix, vkf_sparse_layout *out) {
  const int64_t b = VKF_LONGFORMER_BLOCK;
  int64_t qb = (np + b - 1) / b, pb = prefix / b;
  int64_t reach = (one_sided + b - 1) / b; /* window blocks on each side of the query block */
  int64_t per_row = pb + 2 * reach + 1;
  /* Sequence and prefix come from checked lengths (at most VKF_HF_MAX_POSITIONS each), so the
   * product fits int64; the tables must also fit the op's 32-bit indexing. */
  if (qb * per_row > ((int64_t)1 << 27))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "Longformer local attention: %lld query blocks x %lld key blocks each "
                           "(%lld global slots, window %lld) is too large a layout",
                           (long long)qb, (long long)per_row, (long long)prefix,
                           (long long)(2 * one_sided));
  VKF_RETURN_IF_ERROR(vkf_sparse_layout_alloc(out, 1, (uint32_t)np, (uint32_t)(prefix + np),
                                              (uint32_t)b, (uint32_t)b, (uint32_t)(qb * per_row),
                                              (uint32_t)(2 * reach + 1)));
  for (int64_t d = -reach; d <= reach; d++)
    band_mask(out->masks + (d + reach) * b * vkf_sparse_mask_words((uint32_t)b), d, one_sided);
  int32_t e = 0;
  for (int64_t q = 0; q < qb; q++) {
    out->rows[q] = e;
    for (int64_t p = 0; p < pb; p++) {
      out->cols[2 * e] = (int32_t)p;
      out->cols[2 * e++ + 1] = -1;
    }
    for (int64_t d = -reach; d <= reach; d++) {
      int64_t k = q + d;
      if (k < 0 || k >= qb) continue;
      /* A block wholly inside the band needs no mask: its farthest pair is |d|·b + b - 1 apart. */
      int whole = (d < 0 ? -d : d) * b + b - 1 <= one_sided;
      out->cols[2 * e] = (int32_t)(pb + k);
      out->cols[2 * e++ + 1] = whole ? -1 : (int32_t)(d + reach);
    }
  }
  out->rows[qb] = e;
  return vkf_sparse_layout_check(out, (uint32_t)np, (uint32_t)(prefix + np));
}

const vkf_sparse_layout *vkf_longformer_layout(vkf_longformer_layouts **cache, int64_t one_sided,
                                               int64_t np, int64_t prefix, vkf_status *status) {
  for (vkf_longformer_layouts *c = *cache; c; c = c->next)
    if (c->one_sided == one_sided && c->np == np && c->prefix == prefix) return &c->layout;
  vkf_longformer_layouts *c = calloc(1, sizeof *c);
  if (!c) {
    *status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "Longformer layout");
    return NULL;
  }
  *status = build(one_sided, np, prefix, &c->layout);
  if (*status) {
    vkf_sparse_layout_free(&c->layout);
    free(c);
    return NULL;
  }
  c->one_sided = one_sided, c->np = np, c->prefix = prefix;
  c->next = *cache;
  *cache = c;
  return &c->layout;
}

void vkf_longformer_layouts_free(vkf_longformer_layouts **cache) {
  while (*cache) {
    vkf_longformer_layouts *c = *cache;
    *cache = c->next;
    vkf_sparse_layout_free(&c->layout);
    free(c);
  }
}
