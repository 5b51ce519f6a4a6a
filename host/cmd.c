/* Owns command recording: descriptor pools (grown in blocks), dispatches, barriers, timestamps,
 * and repeated submission of one recording. */
#include "host/cmd.h"

#include <string.h>

#include "host/buffer_internal.h"
#include "host/device_internal.h"
#include "host/kernel_internal.h"

enum { SETS_PER_POOL = 256, MAX_POOLS = 64 };

struct vkf_cmd {
  vkf_device *device;
  VkCommandBuffer cb;
  VkFence fence;
  VkQueryPool queries;
  uint32_t query_count;
  VkDescriptorPool pools[MAX_POOLS];
  uint32_t pools_created;          /* pools[0..pools_created) exist */
  uint32_t pool_count, sets_in_last_pool; /* pools in use by the current recording */
  uint32_t dispatches, barriers;
  int recording, recorded;
  VkBufferView *views; /* texel views of the current recording, destroyed when it is dropped */
  uint32_t view_count, view_capacity;
  /* Bounds lane (VKF_VALIDATE=2) only: one buffer per storage binding, aliasing exactly its range
   * of the arena's memory, destroyed with the recording (see bounds_alias). */
  VkBuffer *aliases;
  uint32_t alias_count, alias_capacity;
};

static void destroy_views(vkf_cmd *cmd) {
  for (uint32_t i = 0; i < cmd->view_count; i++)
    cmd->device->vk.vkDestroyBufferView(cmd->device->handle, cmd->views[i], NULL);
  cmd->view_count = 0;
  for (uint32_t i = 0; i < cmd->alias_count; i++)
    cmd->device->vk.vkDestroyBuffer(cmd->device->handle, cmd->aliases[i], NULL);
  cmd->alias_count = 0;
}

/* The bounds lane's binding: the validation layer's GPU-assisted checks compare each access with
 * the size of the VkBuffer a descriptor names, not with the descriptor's range, and tensors are
 * ranges of one arena buffer, so an access past a tensor into its neighbour would pass unseen.
 * Each binding therefore gets a buffer of its own over the same memory, ending where the binding
 * ends (starting at the memory alignment below it; the descriptor offset covers the rest). */
static vkf_status bounds_alias(vkf_cmd *cmd, const vkf_buffer *b, uint64_t offset, uint64_t size,
                               VkDescriptorBufferInfo *out_info) {
  vkf_device *d = cmd->device;
  uint64_t at = b->base + offset;
  VkExternalMemoryBufferCreateInfo external = {
      .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
      .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT};
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .pNext = b->imported ? &external : NULL,
                             .size = size,
                             .usage = VKF_BUFFER_USAGE,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkBuffer alias = VK_NULL_HANDLE;
  VKF_VK_RETURN_IF_ERROR(d->vk.vkCreateBuffer(d->handle, &info, NULL, &alias));
  VkMemoryRequirements req;
  d->vk.vkGetBufferMemoryRequirements(d->handle, alias, &req);
  uint64_t lead = req.alignment ? at % req.alignment : 0;
  if (lead) { /* recreate it `lead` bytes longer, from the aligned address below */
    d->vk.vkDestroyBuffer(d->handle, alias, NULL);
    info.size = size + lead;
    VKF_VK_RETURN_IF_ERROR(d->vk.vkCreateBuffer(d->handle, &info, NULL, &alias));
  }
  if (cmd->alias_count == cmd->alias_capacity) {
    uint32_t cap = cmd->alias_capacity ? 2 * cmd->alias_capacity : 64;
    VkBuffer *grown = realloc(cmd->aliases, cap * sizeof *grown);
    if (!grown) {
      d->vk.vkDestroyBuffer(d->handle, alias, NULL);
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
    }
    cmd->aliases = grown;
    cmd->alias_capacity = cap;
  }
  cmd->aliases[cmd->alias_count++] = alias;
  VKF_VK_RETURN_IF_ERROR(d->vk.vkBindBufferMemory(d->handle, alias, b->memory, at - lead));
  *out_info = (VkDescriptorBufferInfo){.buffer = alias, .offset = lead, .range = size};
  return VKF_OK;
}

vkf_status vkf_cmd_create(vkf_device *device, uint32_t timestamp_count, vkf_cmd **out_cmd) {
  *out_cmd = NULL;
  vkf_cmd *cmd = calloc(1, sizeof *cmd);
  if (!cmd) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  cmd->device = device;
  VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = device->command_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
  VkResult r = device->vk.vkAllocateCommandBuffers(device->handle, &alloc, &cmd->cb);
  VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (r == VK_SUCCESS) r = device->vk.vkCreateFence(device->handle, &fence_info, NULL, &cmd->fence);
  if (r == VK_SUCCESS && timestamp_count) {
    if (!device->caps.timestamps) {
      vkf_cmd_destroy(cmd);
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "the device has no timestamp queries");
    }
    VkQueryPoolCreateInfo q = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                               .queryType = VK_QUERY_TYPE_TIMESTAMP,
                               .queryCount = timestamp_count};
    r = device->vk.vkCreateQueryPool(device->handle, &q, NULL, &cmd->queries);
    cmd->query_count = timestamp_count;
  }
  if (r != VK_SUCCESS) {
    vkf_cmd_destroy(cmd);
    return vkf_vk_status(r, "creating command list");
  }
  *out_cmd = cmd;
  return VKF_OK;
}

void vkf_cmd_destroy(vkf_cmd *cmd) {
  if (!cmd) return;
  vkf_device *d = cmd->device;
  if (cmd->recorded || cmd->recording) d->vk.vkQueueWaitIdle(d->queue);
  destroy_views(cmd);
  free(cmd->views);
  free(cmd->aliases);
  for (uint32_t i = 0; i < cmd->pools_created; i++)
    d->vk.vkDestroyDescriptorPool(d->handle, cmd->pools[i], NULL);
  if (cmd->queries) d->vk.vkDestroyQueryPool(d->handle, cmd->queries, NULL);
  if (cmd->fence) d->vk.vkDestroyFence(d->handle, cmd->fence, NULL);
  if (cmd->cb) d->vk.vkFreeCommandBuffers(d->handle, d->command_pool, 1, &cmd->cb);
  free(cmd);
}

static void full_barrier(vkf_cmd *cmd, VkPipelineStageFlags src, VkPipelineStageFlags dst,
                         VkAccessFlags dst_access) {
  VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                       .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                       .dstAccessMask = dst_access};
  cmd->device->vk.vkCmdPipelineBarrier(cmd->cb, src, dst, 0, 1, &b, 0, NULL, 0, NULL);
}

vkf_status vkf_cmd_begin(vkf_cmd *cmd) {
  vkf_device *d = cmd->device;
  if (cmd->recorded) {
    VKF_VK_RETURN_IF_ERROR(d->vk.vkQueueWaitIdle(d->queue));
    d->stats.host_waits++;
    d->in_flight = 0;
  }
  for (uint32_t i = 0; i < cmd->pools_created; i++)
    VKF_VK_RETURN_IF_ERROR(d->vk.vkResetDescriptorPool(d->handle, cmd->pools[i], 0));
  cmd->sets_in_last_pool = 0;
  cmd->pool_count = 0;
  cmd->dispatches = cmd->barriers = 0;
  destroy_views(cmd);
  VKF_VK_RETURN_IF_ERROR(d->vk.vkResetCommandBuffer(cmd->cb, 0));
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKF_VK_RETURN_IF_ERROR(d->vk.vkBeginCommandBuffer(cmd->cb, &begin));
  if (cmd->queries) d->vk.vkCmdResetQueryPool(cmd->cb, cmd->queries, 0, cmd->query_count);
  full_barrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  cmd->recording = 1;
  cmd->recorded = 0;
  return VKF_OK;
}

static vkf_status allocate_set(vkf_cmd *cmd, const vkf_kernel *k, VkDescriptorSet *out_set) {
  vkf_device *d = cmd->device;
  if (cmd->pool_count == 0 || cmd->sets_in_last_pool == SETS_PER_POOL) {
    if (cmd->pool_count == MAX_POOLS)
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "too many dispatches in one command list");
    if (cmd->pool_count == cmd->pools_created) {
      VkDescriptorPoolSize sizes[2] = {
          {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
           .descriptorCount = SETS_PER_POOL * VKF_KERNEL_MAX_BINDINGS},
          {.type = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
           .descriptorCount = SETS_PER_POOL * VKF_KERNEL_MAX_BINDINGS}};
      VkDescriptorPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                         .maxSets = SETS_PER_POOL,
                                         .poolSizeCount = 2,
                                         .pPoolSizes = sizes};
      VKF_VK_RETURN_IF_ERROR(
          d->vk.vkCreateDescriptorPool(d->handle, &info, NULL, &cmd->pools[cmd->pools_created]));
      cmd->pools_created++;
    }
    cmd->pool_count++;
    cmd->sets_in_last_pool = 0;
  }
  VkDescriptorSetAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = cmd->pools[cmd->pool_count - 1],
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &k->set_layout};
  VKF_VK_RETURN_IF_ERROR(d->vk.vkAllocateDescriptorSets(d->handle, &info, out_set));
  cmd->sets_in_last_pool++;
  return VKF_OK;
}

/* A uniform texel buffer view of binding `i` in the kernel's texel format. The range is rounded
 * down to whole texels: kernels only read whole vec4s inside the binding. */
static vkf_status texel_view(vkf_cmd *cmd, const vkf_kernel *k, uint32_t i, const vkf_binding *b,
                             uint64_t size, VkBufferView *out_view) {
  vkf_device *d = cmd->device;
  const vkf_device_caps *caps = &d->caps;
  static const struct {
    const char *name;
    VkFormat format;
    uint64_t size;
  } formats[] = {[VKF_TEXEL_RGBA32F] = {"RGBA32F", VK_FORMAT_R32G32B32A32_SFLOAT, 16},
                 [VKF_TEXEL_RGBA16F] = {"RGBA16F", VK_FORMAT_R16G16B16A16_SFLOAT, 8},
                 [VKF_TEXEL_RGBA16UI] = {"RGBA16UI", VK_FORMAT_R16G16B16A16_UINT, 8},
                 [VKF_TEXEL_R32UI] = {"R32UI", VK_FORMAT_R32_UINT, 4},
                 [VKF_TEXEL_RG32UI] = {"RG32UI", VK_FORMAT_R32G32_UINT, 8}};
  vkf_plan_texel t = k->texel[i];
  int have = vkf_plan_texel_supported(caps, t);
  uint64_t texel_size = formats[t].size, texels = size / texel_size;
  if (!have)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "kernel %s binding %u: the device has no %s uniform texel buffers",
                           k->name, i, formats[t].name);
  if (caps->min_texel_buffer_offset_alignment &&
      b->offset % caps->min_texel_buffer_offset_alignment)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "kernel %s binding %u: texel view offset %llu is not a multiple of %u",
                           k->name, i, (unsigned long long)b->offset,
                           caps->min_texel_buffer_offset_alignment);
  if (texels == 0 || texels > caps->max_texel_buffer_elements)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "kernel %s binding %u: %llu texels; the device's maxTexelBufferElements "
                           "is %u",
                           k->name, i, (unsigned long long)texels, caps->max_texel_buffer_elements);
  if (cmd->view_count == cmd->view_capacity) {
    uint32_t cap = cmd->view_capacity ? 2 * cmd->view_capacity : 64;
    VkBufferView *n = realloc(cmd->views, cap * sizeof *n);
    if (!n) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
    cmd->views = n;
    cmd->view_capacity = cap;
  }
  VkBufferViewCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
      .buffer = b->buffer->handle,
      .format = formats[t].format,
      .offset = b->buffer->base + b->offset,
      .range = texels * texel_size};
  VKF_VK_RETURN_IF_ERROR(d->vk.vkCreateBufferView(d->handle, &info, NULL, out_view));
  cmd->views[cmd->view_count++] = *out_view;
  return VKF_OK;
}

vkf_status vkf_cmd_dispatch(vkf_cmd *cmd, const vkf_kernel *k, const vkf_binding *bindings,
                            const void *push_constants, uint32_t gx, uint32_t gy, uint32_t gz) {
  VKF_ASSERT(cmd->recording);
  vkf_device *d = cmd->device;
  const vkf_device_caps *caps = &d->caps;
  if (gx > caps->max_workgroup_count[0] || gy > caps->max_workgroup_count[1] ||
      gz > caps->max_workgroup_count[2])
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "kernel %s: %u x %u x %u workgroups exceed the device limit", k->name,
                           gx, gy, gz);
  VkDescriptorBufferInfo infos[VKF_KERNEL_MAX_BINDINGS];
  VkBufferView views[VKF_KERNEL_MAX_BINDINGS];
  VkWriteDescriptorSet writes[VKF_KERNEL_MAX_BINDINGS];
  VkDescriptorSet set;
  VKF_RETURN_IF_ERROR(allocate_set(cmd, k, &set));
  for (uint32_t i = 0; i < k->binding_count; i++) {
    const vkf_binding *b = &bindings[i];
    uint64_t size = b->size ? b->size : b->buffer->size - b->offset;
    if (b->offset % caps->min_storage_buffer_offset_alignment)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "kernel %s binding %u: offset %llu is not a multiple of %u", k->name,
                             i, (unsigned long long)b->offset,
                             caps->min_storage_buffer_offset_alignment);
    if (b->offset + size > b->buffer->size)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "kernel %s binding %u: range past the end of its buffer", k->name, i);
    writes[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                       .dstSet = set,
                                       .dstBinding = i,
                                       .descriptorCount = 1};
    if (k->texel[i]) {
      VKF_RETURN_IF_ERROR(texel_view(cmd, k, i, b, size, &views[i]));
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
      writes[i].pTexelBufferView = &views[i];
      continue;
    }
    if (size > caps->max_storage_buffer_range)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "kernel %s binding %u spans %llu bytes; the device's "
                             "maxStorageBufferRange is %llu",
                             k->name, i, (unsigned long long)size,
                             (unsigned long long)caps->max_storage_buffer_range);
    if (d->instance->validate == 2)
      VKF_RETURN_IF_ERROR(bounds_alias(cmd, b->buffer, b->offset, size, &infos[i]));
    else
      infos[i] = (VkDescriptorBufferInfo){.buffer = b->buffer->handle,
                                          .offset = b->buffer->base + b->offset,
                                          .range = size};
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  d->vk.vkUpdateDescriptorSets(d->handle, k->binding_count, writes, 0, NULL);
  d->vk.vkCmdBindPipeline(cmd->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  d->vk.vkCmdBindDescriptorSets(cmd->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline_layout, 0, 1,
                                &set, 0, NULL);
  if (k->push_constant_size)
    d->vk.vkCmdPushConstants(cmd->cb, k->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                             k->push_constant_size, push_constants);
  d->vk.vkCmdDispatch(cmd->cb, gx, gy, gz);
  cmd->dispatches++;
  return VKF_OK;
}

void vkf_cmd_barrier(vkf_cmd *cmd, const vkf_binding *ranges, uint32_t count) {
  VKF_ASSERT(cmd->recording);
  vkf_device *d = cmd->device;
  cmd->barriers++;
  if (count == 0) {
    full_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    return;
  }
  VkBufferMemoryBarrier barriers[32];
  for (uint32_t done = 0; done < count;) {
    uint32_t n = count - done < 32 ? count - done : 32;
    for (uint32_t i = 0; i < n; i++) {
      const vkf_binding *r = &ranges[done + i];
      barriers[i] = (VkBufferMemoryBarrier){
          .sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
          .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
          .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
          .buffer = r->buffer->handle,
          .offset = r->buffer->base + r->offset,
          .size = r->size ? r->size : VK_WHOLE_SIZE};
    }
    d->vk.vkCmdPipelineBarrier(cmd->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL, n, barriers, 0,
                               NULL);
    done += n;
  }
}

void vkf_cmd_copy(vkf_cmd *cmd, const vkf_buffer *src, const vkf_buffer *dst, uint64_t size) {
  VKF_ASSERT(cmd->recording && !dst->imported);
  full_barrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
               VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  VkBufferCopy region = {.srcOffset = src->base, .dstOffset = dst->base, .size = size};
  cmd->device->vk.vkCmdCopyBuffer(cmd->cb, src->handle, dst->handle, 1, &region);
  full_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
               VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
}

void vkf_cmd_timestamp(vkf_cmd *cmd, uint32_t index) {
  VKF_ASSERT(cmd->recording && index < cmd->query_count);
  cmd->device->vk.vkCmdWriteTimestamp(cmd->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, cmd->queries,
                                      index);
}

vkf_status vkf_cmd_end(vkf_cmd *cmd) {
  VKF_ASSERT(cmd->recording);
  full_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
               VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT |
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
               VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT |
                   VK_ACCESS_SHADER_WRITE_BIT);
  cmd->recording = 0;
  VKF_VK_RETURN_IF_ERROR(cmd->device->vk.vkEndCommandBuffer(cmd->cb));
  cmd->recorded = 1;
  return VKF_OK;
}

vkf_status vkf_cmd_submit_wait(vkf_cmd *cmd) {
  VKF_ASSERT(cmd->recorded);
  vkf_device *d = cmd->device;
  VKF_VK_RETURN_IF_ERROR(d->vk.vkResetFences(d->handle, 1, &cmd->fence));
  VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                         .commandBufferCount = 1,
                         .pCommandBuffers = &cmd->cb};
  VKF_VK_RETURN_IF_ERROR(d->vk.vkQueueSubmit(d->queue, 1, &submit, cmd->fence));
  d->stats.submits++;
  d->stats.host_waits++;
  d->in_flight++;
  VKF_VK_RETURN_IF_ERROR(d->vk.vkWaitForFences(d->handle, 1, &cmd->fence, VK_TRUE, UINT64_MAX));
  d->in_flight--;
  return VKF_OK;
}

vkf_status vkf_cmd_timestamps_ns(vkf_cmd *cmd, uint32_t count, double *out_ns) {
  if (count > cmd->query_count)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "asked for %u timestamps of %u", count,
                           cmd->query_count);
  if (count == 0) return VKF_OK;
  uint64_t ticks[count];
  VKF_VK_RETURN_IF_ERROR(cmd->device->vk.vkGetQueryPoolResults(
      cmd->device->handle, cmd->queries, 0, count, sizeof ticks, ticks, sizeof(uint64_t),
      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  for (uint32_t i = 0; i < count; i++)
    out_ns[i] = (double)(ticks[i] - ticks[0]) * cmd->device->caps.timestamp_period;
  return VKF_OK;
}

uint32_t vkf_cmd_dispatch_count(const vkf_cmd *cmd) { return cmd->dispatches; }
uint32_t vkf_cmd_barrier_count(const vkf_cmd *cmd) { return cmd->barriers; }
