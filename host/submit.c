/* One-shot submissions on the device's queue (uploads, downloads, fills): record, submit, wait.
 * Apart from device.c so that buffers, which the device owns, call it without calling back into
 * the device's lifetime code. */
#include "host/device_internal.h"

vkf_status vkf_device_run_once(vkf_device *device,
                               void (*record)(vkf_device *, VkCommandBuffer, void *), void *user) {
  VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = device->command_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
  VkCommandBuffer cb;
  VKF_VK_RETURN_IF_ERROR(device->vk.vkAllocateCommandBuffers(device->handle, &alloc, &cb));
  VkFence fence = VK_NULL_HANDLE;
  VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkResult r = device->vk.vkCreateFence(device->handle, &fence_info, NULL, &fence);
  if (r == VK_SUCCESS) {
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    r = device->vk.vkBeginCommandBuffer(cb, &begin);
  }
  if (r == VK_SUCCESS) {
    record(device, cb, user);
    r = device->vk.vkEndCommandBuffer(cb);
  }
  if (r == VK_SUCCESS) {
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    r = device->vk.vkQueueSubmit(device->queue, 1, &submit, fence);
    device->stats.submits++;
    if (r == VK_SUCCESS) device->in_flight++;
  }
  if (r == VK_SUCCESS) {
    r = device->vk.vkWaitForFences(device->handle, 1, &fence, VK_TRUE, UINT64_MAX);
    device->stats.host_waits++;
    if (r == VK_SUCCESS) device->in_flight--;
  }
  if (fence) device->vk.vkDestroyFence(device->handle, fence, NULL);
  device->vk.vkFreeCommandBuffers(device->handle, device->command_pool, 1, &cb);
  if (r != VK_SUCCESS) return vkf_vk_status(r, "one-shot submission");
  return VKF_OK;
}
