/* Owns buffer allocation (with limit checks), persistent mapping on host-visible memory, and the
 * staged upload/download path for discrete GPUs. */
#include <string.h>

#include "host/buffer_internal.h"

enum { STAGING_CHUNK_SIZE = 32u << 20 };

/* Index of a memory type allowed by `type_bits` having all `required` flags, preferring one that
 * also has `preferred`; UINT32_MAX when none. */
static uint32_t memory_type(const vkf_device *device, uint32_t type_bits,
                            VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < device->memory.memoryTypeCount; i++) {
    if (!(type_bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = device->memory.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    if ((f & preferred) == preferred) return i;
    if (fallback == UINT32_MAX) fallback = i;
  }
  return fallback;
}

enum { PLACE_DEVICE, PLACE_STAGING, PLACE_INPUT, PLACE_READBACK };

static vkf_status allocate(vkf_device *device, uint64_t size, const char *label, int place,
                           vkf_buffer **out_buffer) {
  int staging = place == PLACE_STAGING;
  *out_buffer = NULL;
  const char *what = label ? label : "buffer";
  if (size == 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: buffer size is zero", what);
  const vkf_device_caps *caps = &device->caps;
  if (caps->max_memory_allocation_size && size > caps->max_memory_allocation_size)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                           "%s: %llu bytes exceed the device's maxMemoryAllocationSize (%llu bytes)",
                           what, (unsigned long long)size,
                           (unsigned long long)caps->max_memory_allocation_size);
  uint64_t largest_heap = 0;
  for (uint32_t i = 0; i < caps->heap_count; i++)
    if (caps->heap_size[i] > largest_heap) largest_heap = caps->heap_size[i];
  if (largest_heap && size > largest_heap)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                           "%s: %llu bytes exceed the device's largest memory heap (%llu bytes)",
                           what, (unsigned long long)size, (unsigned long long)largest_heap);

  vkf_buffer *b = calloc(1, sizeof *b);
  if (!b) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  b->device = device;
  b->size = size;
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = size,
                             .usage = staging ? (VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT)
                                              : VKF_BUFFER_USAGE,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = device->vk.vkCreateBuffer(device->handle, &info, NULL, &b->handle);
  VkMemoryRequirements req = {0};
  uint32_t type = UINT32_MAX;
  if (r == VK_SUCCESS) {
    device->vk.vkGetBufferMemoryRequirements(device->handle, b->handle, &req);
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    if (staging || place == PLACE_READBACK)
      type = memory_type(device, req.memoryTypeBits, host,
                                    host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    else if (place == PLACE_INPUT)
      /* Device-local where the host can write it (resizable BAR, UMA); else host memory the
       * device reads across the bus: a few bytes a run either way, and never a copy of its own. */
      type = memory_type(device, req.memoryTypeBits, host,
                         host | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    else if (caps->uma)
      /* UMA: device-local memory the CPU can map, so uploads are a memcpy. */
      type = memory_type(device, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
    else
      type = memory_type(device, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type == UINT32_MAX) type = memory_type(device, req.memoryTypeBits, 0, 0);
  }
  vkf_status status = VKF_OK;
  if (r != VK_SUCCESS) {
    status = vkf_vk_status(r, "vkCreateBuffer");
  } else if (type == UINT32_MAX) {
    status = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: no memory type fits the buffer", what);
  } else {
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .allocationSize = req.size,
                                  .memoryTypeIndex = type};
    r = device->vk.vkAllocateMemory(device->handle, &alloc, NULL, &b->memory);
    if (r == VK_SUCCESS) r = device->vk.vkBindBufferMemory(device->handle, b->handle, b->memory, 0);
    VkMemoryPropertyFlags flags = device->memory.memoryTypes[type].propertyFlags;
    if (r == VK_SUCCESS && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
      r = device->vk.vkMapMemory(device->handle, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
      b->coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    }
    if (r != VK_SUCCESS)
      status = vkf_status_annotate(vkf_vk_status(r, "vkAllocateMemory"), "%s (%llu bytes): ", what,
                                   (unsigned long long)size);
  }
  if (status != VKF_OK) {
    vkf_buffer_destroy(b);
    return status;
  }
  *out_buffer = b;
  return VKF_OK;
}

vkf_status vkf_buffer_create(vkf_device *device, uint64_t size, const char *label,
                             vkf_buffer **out_buffer) {
  return allocate(device, size, label, PLACE_DEVICE, out_buffer);
}

vkf_status vkf_buffer_create_input(vkf_device *device, uint64_t size, const char *label,
                                   vkf_buffer **out_buffer) {
  return allocate(device, size, label, PLACE_INPUT, out_buffer);
}

vkf_status vkf_buffer_create_readback(vkf_device *device, uint64_t size, const char *label,
                                      vkf_buffer **out_buffer) {
  return allocate(device, size, label, PLACE_READBACK, out_buffer);
}

/* Mapped memory is only touched once the device is done with it: every submission here waits for
 * its fence before returning, so the queue is idle unless one failed on the way (in_flight). */
static vkf_status wait_if_busy(vkf_device *device) {
  if (!device->in_flight) return VKF_OK;
  device->stats.host_waits++;
  VKF_VK_RETURN_IF_ERROR(device->vk.vkQueueWaitIdle(device->queue));
  device->in_flight = 0;
  return VKF_OK;
}

vkf_status vkf_buffer_import_host(vkf_device *device, const void *data, uint64_t size,
                                  const char *label, vkf_buffer **out_buffer) {
  *out_buffer = NULL;
  const char *what = label ? label : "buffer";
  const vkf_device_caps *caps = &device->caps;
  uint64_t page = device->host_import_alignment;
  if (!page)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: the device cannot bind host memory in place", what);
  uintptr_t at = (uintptr_t)data, start = at & ~(uintptr_t)(page - 1);
  uint64_t base = at - start, align = caps->min_storage_buffer_offset_alignment;
  if (caps->min_texel_buffer_offset_alignment > align) align = caps->min_texel_buffer_offset_alignment;
  if (!data || size == 0 || (align && base % align))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: host data at page offset %llu is not aligned for binding", what,
                           (unsigned long long)base);
  if (size > UINT64_MAX - base - page)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: %llu bytes overflow", what,
                           (unsigned long long)size);
  uint64_t span = (base + size + page - 1) & ~(page - 1);
  if (caps->max_memory_allocation_size && span > caps->max_memory_allocation_size)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %llu bytes exceed maxMemoryAllocationSize",
                           what, (unsigned long long)span);
  VkMemoryHostPointerPropertiesEXT host = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  VKF_VK_RETURN_IF_ERROR(device->vk.vkGetMemoryHostPointerPropertiesEXT(
      device->handle, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, (void *)start, &host));
  vkf_buffer *b = calloc(1, sizeof *b);
  if (!b) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  b->device = device;
  b->size = size;
  b->base = base;
  b->imported = 1;
  VkExternalMemoryBufferCreateInfo external = {
      .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
      .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT};
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .pNext = &external,
                             .size = span,
                             .usage = VKF_BUFFER_USAGE,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = device->vk.vkCreateBuffer(device->handle, &info, NULL, &b->handle);
  vkf_status status = r ? vkf_vk_status(r, "vkCreateBuffer") : VKF_OK;
  VkMemoryRequirements req = {0};
  uint32_t type = UINT32_MAX;
  if (!status) {
    device->vk.vkGetBufferMemoryRequirements(device->handle, b->handle, &req);
    /* Device-local or not worth it: the device would read across the bus on every dispatch. */
    type = memory_type(device, req.memoryTypeBits & host.memoryTypeBits,
                       VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (type == UINT32_MAX || req.size > span)
      status = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                               "%s: no device-local memory type takes this host memory", what);
  }
  if (!status) {
    VkImportMemoryHostPointerInfoEXT import = {
        .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
        .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
        .pHostPointer = (void *)start};
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .pNext = &import,
                                  .allocationSize = span,
                                  .memoryTypeIndex = type};
    r = device->vk.vkAllocateMemory(device->handle, &alloc, NULL, &b->memory);
    if (r == VK_SUCCESS) r = device->vk.vkBindBufferMemory(device->handle, b->handle, b->memory, 0);
    if (r != VK_SUCCESS)
      status = vkf_status_annotate(vkf_vk_status(r, "importing host memory"), "%s: ", what);
  }
  if (status) {
    vkf_buffer_destroy(b);
    return status;
  }
  /* Reads (downloads) come straight from the host bytes; the memory is coherent or only read. */
  b->mapped = (void *)start;
  b->coherent = 1;
  *out_buffer = b;
  return VKF_OK;
}

int vkf_buffer_is_imported(const vkf_buffer *buffer) { return buffer->imported; }

void vkf_buffer_destroy(vkf_buffer *buffer) {
  if (!buffer) return;
  vkf_device *d = buffer->device;
  if (buffer->mapped && !buffer->imported) d->vk.vkUnmapMemory(d->handle, buffer->memory);
  if (buffer->handle) d->vk.vkDestroyBuffer(d->handle, buffer->handle, NULL);
  if (buffer->memory) d->vk.vkFreeMemory(d->handle, buffer->memory, NULL);
  free(buffer);
}

uint64_t vkf_buffer_size(const vkf_buffer *buffer) { return buffer->size; }

static vkf_status check_range(const vkf_buffer *buffer, uint64_t offset, uint64_t size) {
  if (offset > buffer->size || size > buffer->size - offset)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "range [%llu, +%llu) is outside a buffer of %llu bytes",
                           (unsigned long long)offset, (unsigned long long)size,
                           (unsigned long long)buffer->size);
  return VKF_OK;
}

/* Imported host memory is the caller's data (a checkpoint's read-only mapping, say): never
 * written through the buffer. */
static vkf_status check_writable(const vkf_buffer *buffer) {
  if (buffer->imported)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "the buffer is host memory bound in place: it is read-only");
  return VKF_OK;
}

typedef struct copy_job {
  VkBuffer src, dst;
  VkBufferCopy region;
  int fill;
} copy_job;

/* Full memory barriers around the copy order it against compute work of earlier and later
 * submissions (submission order alone gives no memory dependency) and make results host-visible. */
static void record_copy(vkf_device *device, VkCommandBuffer cb, void *user) {
  copy_job *job = user;
  VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT |
                                             VK_ACCESS_TRANSFER_WRITE_BIT};
  device->vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                  VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
  if (job->fill)
    device->vk.vkCmdFillBuffer(cb, job->dst, job->region.dstOffset, job->region.size, 0);
  else
    device->vk.vkCmdCopyBuffer(cb, job->src, job->dst, 1, &job->region);
  VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                           .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT |
                                            VK_ACCESS_HOST_READ_BIT};
  device->vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                  VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                                  0, 1, &after, 0, NULL, 0, NULL);
}

/* The staging buffer: STAGING_CHUNK_SIZE, or less where the caps allow less in one allocation (a
 * device profile can clamp them to 64 KiB); transfers go through it in chunks of its size. */
static vkf_status ensure_staging(vkf_device *device) {
  if (device->staging) return VKF_OK;
  uint64_t size = STAGING_CHUNK_SIZE, cap = device->caps.max_memory_allocation_size;
  if (cap && cap < size) size = cap & ~(uint64_t)255;
  if (size < 256) size = 256;
  return allocate(device, size, "staging buffer", PLACE_STAGING, &device->staging);
}

static void flush_range(const vkf_buffer *b, int invalidate) {
  if (b->coherent) return;
  VkMappedMemoryRange range = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
                               .memory = b->memory,
                               .offset = 0,
                               .size = VK_WHOLE_SIZE};
  if (invalidate)
    b->device->vk.vkInvalidateMappedMemoryRanges(b->device->handle, 1, &range);
  else
    b->device->vk.vkFlushMappedMemoryRanges(b->device->handle, 1, &range);
}

vkf_status vkf_buffer_upload(vkf_device *device, vkf_buffer *buffer, uint64_t offset,
                             const void *data, uint64_t size) {
  VKF_RETURN_IF_ERROR(check_range(buffer, offset, size));
  VKF_RETURN_IF_ERROR(check_writable(buffer));
  if (buffer->mapped) {
    VKF_RETURN_IF_ERROR(wait_if_busy(device));
    device->stats.bytes_written += size;
    memcpy((char *)buffer->mapped + buffer->base + offset, data, size);
    flush_range(buffer, 0);
    return VKF_OK;
  }
  VKF_RETURN_IF_ERROR(ensure_staging(device));
  device->stats.bytes_written += size;
  for (uint64_t done = 0; done < size;) {
    uint64_t chunk = device->staging->size;
    uint64_t n = size - done < chunk ? size - done : chunk;
    memcpy(device->staging->mapped, (const char *)data + done, n);
    flush_range(device->staging, 0);
    copy_job job = {.src = device->staging->handle,
                    .dst = buffer->handle,
                    .region = {.srcOffset = 0, .dstOffset = buffer->base + offset + done,
                               .size = n}};
    VKF_RETURN_IF_ERROR(vkf_device_run_once(device, record_copy, &job));
    done += n;
  }
  return VKF_OK;
}

vkf_status vkf_buffer_download(vkf_device *device, const vkf_buffer *buffer, uint64_t offset,
                               void *out_data, uint64_t size) {
  VKF_RETURN_IF_ERROR(check_range(buffer, offset, size));
  device->stats.bytes_read_back += size;
  if (buffer->mapped) {
    VKF_RETURN_IF_ERROR(wait_if_busy(device));
    flush_range(buffer, 1);
    memcpy(out_data, (const char *)buffer->mapped + buffer->base + offset, size);
    return VKF_OK;
  }
  VKF_RETURN_IF_ERROR(ensure_staging(device));
  for (uint64_t done = 0; done < size;) {
    uint64_t chunk = device->staging->size;
    uint64_t n = size - done < chunk ? size - done : chunk;
    copy_job job = {.src = buffer->handle,
                    .dst = device->staging->handle,
                    .region = {.srcOffset = buffer->base + offset + done, .dstOffset = 0,
                               .size = n}};
    VKF_RETURN_IF_ERROR(vkf_device_run_once(device, record_copy, &job));
    flush_range(device->staging, 1);
    memcpy((char *)out_data + done, device->staging->mapped, n);
    done += n;
  }
  return VKF_OK;
}

vkf_status vkf_buffer_zero(vkf_device *device, vkf_buffer *buffer, uint64_t offset, uint64_t size) {
  VKF_RETURN_IF_ERROR(check_range(buffer, offset, size));
  VKF_RETURN_IF_ERROR(check_writable(buffer));
  if (size == 0) return VKF_OK;
  if ((offset | size) & 3)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "zero fill needs 4-byte aligned ranges");
  copy_job job = {.dst = buffer->handle,
                  .region = {.dstOffset = buffer->base + offset, .size = size},
                  .fill = 1};
  return vkf_device_run_once(device, record_copy, &job);
}
