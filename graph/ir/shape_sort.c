/* Owns shape inference of ARGSORT: f32 keys [..., K] (any layout) -> i32 indices of the same
 * shape. vkf_graph_infer_node prefixes `<op> "<node>": `. */
#include "graph/ir/graph_internal.h"

enum { VKF_ARGSORT_MAX_KEYS = 1 << 16 }; /* builder.h: vkf_argsort */

vkf_status vkf_shape_argsort(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *k = vkf_graph_tensor(g, n->inputs[0]);
  char s[96];
  if (k->dtype != VKF_F32 || k->rank < 1 || k->shape[k->rank - 1] < 1 ||
      k->shape[k->rank - 1] > VKF_ARGSORT_MAX_KEYS)
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "keys %s %s: expected f32 [..., K] with 1 <= K <= %d",
                           vkf_dtype_name(k->dtype), vkf_shape_format(k->rank, k->shape, s, sizeof s),
                           VKF_ARGSORT_MAX_KEYS);
  out->dtype = VKF_I32;
  out->rank = k->rank;
  for (uint32_t i = 0; i < k->rank; i++) out->shape[i] = k->shape[i];
  vkf_contiguous_strides(k->rank, out->shape, out->strides);
  return VKF_OK;
}
