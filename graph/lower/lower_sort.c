/* Owns the lowering of ARGSORT onto shaders/argsort.comp: one invocation per key, which counts
 * the keys of its row that sort before it (smaller, or equal at a smaller index) and writes its
 * index at that rank. O(K) per key, no shared memory: rows are at most VKF_ARGSORT_MAX_KEYS long
 * and in Reformer's LSH a row is one head's hashed sequence. */
#include "graph/lower/lower_layout.h"
#include "graph/lower/lower_node.h"

vkf_status vkf_lower_argsort(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *k = &node->inputs[0];
  const vkf_plan_tensor *y = &node->output;
  int64_t count = vkf_plan_tensor_count(y);
  if (count == 0) return VKF_OK;
  char sa[64];
  if ((uint64_t)count > UINT32_MAX || !vkf_plan_tensor_is_contiguous(k))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "argsort \"%s\": keys %s must be contiguous with fewer than 2^32 "
                           "elements",
                           node->name, vkf_shape_format(k->rank, k->shape, sa, sizeof sa));
  vkf_plan_dispatch d = {.node = node->name, .shader = "argsort.comp"};
  uint32_t k_off = vkf_lower_bind(ctx, &d, k, VKF_ACCESS_READ);
  uint32_t y_off = vkf_lower_bind(ctx, &d, y, VKF_ACCESS_WRITE);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)count);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)k->shape[k->rank - 1]);
  vkf_plan_dispatch_push_u32(&d, k_off);
  vkf_plan_dispatch_push_u32(&d, y_off);
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  d.spec[0] = wg;
  d.spec_count = 1;
  d.groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)count, wg);
  d.groups[1] = d.groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, &d);
}
