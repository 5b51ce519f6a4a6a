/* Checks a lowered plan against the device limits that no lowering may exceed: every storage
 * binding within maxStorageBufferRange, every texel view within maxTexelBufferElements, every
 * dispatch within maxComputeWorkGroupCount, every plan buffer within maxMemoryAllocationSize and
 * the largest heap, and all of them together within the largest heap. A plan that passes can be
 * recorded on the device; one that does not is an error naming the node (or buffer) and the limit,
 * before anything is allocated. The batch splitter (batch_split.c) reads these errors as "too
 * many rows". A zero limit means "unknown": it is not checked. */
#include <inttypes.h>

#include "graph/lower/plan_limits.h"

static const char *node_of(const vkf_plan_dispatch *d) {
  return d->node ? d->node : "?";
}

static vkf_status check_dispatch(const vkf_plan_dispatch *d, const vkf_device_caps *caps) {
  static const char axis[3] = {'x', 'y', 'z'};
  for (uint32_t i = 0; i < d->binding_count; i++) {
    const vkf_plan_binding *b = &d->bindings[i];
    if (b->texel) {
      uint64_t texel_size = vkf_plan_texel_size((vkf_plan_texel)b->texel);
      uint64_t texels = (b->size + texel_size - 1) / texel_size;
      if (caps->max_texel_buffer_elements && texels > caps->max_texel_buffer_elements)
        return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                               "node \"%s\" (%s): binding %u spans %" PRIu64
                               " texels, over the device's maxTexelBufferElements (%" PRIu32 ")",
                               node_of(d), d->shader, i, texels, caps->max_texel_buffer_elements);
    } else if (caps->max_storage_buffer_range && b->size > caps->max_storage_buffer_range) {
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                             "node \"%s\" (%s): binding %u spans %" PRIu64
                             " bytes, over the device's maxStorageBufferRange (%" PRIu64 " bytes)",
                             node_of(d), d->shader, i, b->size, caps->max_storage_buffer_range);
    }
  }
  for (int a = 0; a < 3; a++)
    if (caps->max_workgroup_count[a] && d->groups[a] > caps->max_workgroup_count[a])
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                             "node \"%s\" (%s): %" PRIu32
                             " workgroups along %c, over the device's "
                             "maxComputeWorkGroupCount[%d] (%" PRIu32 ")",
                             node_of(d), d->shader, d->groups[a], axis[a], a,
                             caps->max_workgroup_count[a]);
  return VKF_OK;
}

vkf_status vkf_plan_check_limits(const vkf_plan *plan, const vkf_device_caps *caps) {
  for (uint32_t i = 0; i < vkf_plan_dispatch_count(plan); i++)
    VKF_RETURN_IF_ERROR(check_dispatch(vkf_plan_dispatch_get(plan, i), caps));
  uint64_t heap = 0, total = 0;
  for (uint32_t h = 0; h < caps->heap_count && h < VKF_CAPS_MAX_HEAPS; h++)
    if (caps->heap_size[h] > heap) heap = caps->heap_size[h];
  for (uint32_t i = 0; i < vkf_plan_buffer_count(plan); i++) {
    const vkf_plan_buffer *b = vkf_plan_buffer_get(plan, i);
    if (caps->max_memory_allocation_size && b->size > caps->max_memory_allocation_size)
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                             "plan buffer \"%s\": %" PRIu64
                             " bytes, over the device's "
                             "maxMemoryAllocationSize (%" PRIu64 " bytes)",
                             b->name ? b->name : "?", b->size, caps->max_memory_allocation_size);
    total += b->size; /* no overflow: each is below 2^63 (bounded by the checks on shapes) */
  }
  if (heap && total > heap)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                           "the plan's %" PRIu32 " buffers need %" PRIu64
                           " bytes, over the device's largest memory heap (%" PRIu64 " bytes)",
                           vkf_plan_buffer_count(plan), total, heap);
  return VKF_OK;
}
