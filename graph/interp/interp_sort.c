/* Owns the reference of ARGSORT: each row's indices in ascending key order, ties in index order
 * (a stable sort), by insertion into a merge sort's runs. */
#include <stdlib.h>

#include "graph/interp/interp_internal.h"

/* Sorts idx[0..n) by (key, index) with scratch tmp (a bottom-up merge sort: stable). */
static void merge_sort(const float *key, int32_t *idx, int32_t *tmp, int64_t n) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) tmp[o++] = key[idx[b]] < key[idx[a]] ? idx[b++] : idx[a++];
      while (a < mid) tmp[o++] = idx[a++];
      while (b < hi) tmp[o++] = idx[b++];
    }
    for (int64_t i = 0; i < n; i++) idx[i] = tmp[i];
  }
}

vkf_status vkf_ref_argsort(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tk = vkf_interp_in_tensor(it, n, 0);
  VKF_IN_F32(k, it, n, 0);
  int32_t *y = vkf_interp_out_i32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t len = tk->shape[tk->rank - 1], rows = 1;
  for (uint32_t d = 0; d + 1 < tk->rank; d++) rows *= tk->shape[d];
  int32_t *tmp = vkf_interp_temp(it, (size_t)len * sizeof *tmp);
  if (!tmp) return vkf_interp_oom(n);
  for (int64_t r = 0; r < rows; r++) {
    int32_t *idx = y + r * len;
    for (int64_t i = 0; i < len; i++) idx[i] = (int32_t)i;
    merge_sort(k + r * len, idx, tmp, len);
  }
  return VKF_OK;
}
