/* Owns the logical device: queue choice, enabled features, command pool, the persisted pipeline
 * cache, and one-shot submissions used by uploads and downloads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/log.h"
#include "host/buffer_internal.h"
#include "host/cache_file.h"
#include "host/device_internal.h"
#include "host/subgroup_probe.h"
#include "host/kernel.h"
#include "host/vk_coopmat.h"

static vkf_status find_compute_queue(VkPhysicalDevice pd, uint32_t *out_family) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  VkQueueFamilyProperties props[16];
  if (n > 16) n = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, props);
  /* Prefer a compute queue that also does graphics: it is the "main" queue on every vendor and
   * the one with timestamp support; dedicated async-compute queues gain nothing here. */
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) {
    if (!(props[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (props[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) {
      *out_family = i;
      return VKF_OK;
    }
    if (fallback == UINT32_MAX) fallback = i;
  }
  if (fallback == UINT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "device has no compute queue");
  *out_family = fallback;
  return VKF_OK;
}

/* The pipeline cache file is a self-checking entry (host/cache_file.h) keyed by the device it
 * came from; the driver would only check its own header, and a corrupt body can crash a driver. */
#define MAX_PIPELINE_CACHE_BYTES ((size_t)256 << 20)

static void pipeline_cache_key(const vkf_device *device, uint64_t *key1, uint64_t *key2) {
  uint32_t ids[3] = {device->caps.vendor_id, device->caps.device_id, device->caps.driver_version};
  *key1 = vkf_hash64(vkf_hash64(0, "vkf pipeline cache", 18), ids, sizeof ids);
  *key2 = vkf_hash64(*key1 ^ 0x9e3779b97f4a7c15ull, ids, sizeof ids);
}

static void load_pipeline_cache(vkf_device *device) {
  const char *dir = vkf_shader_compiler_cache_dir(device->compiler);
  void *data = NULL;
  size_t size = 0;
  if (dir) {
    snprintf(device->pipeline_cache_path, sizeof device->pipeline_cache_path,
             "%s/pipelines-%04x-%04x-%08x.bin.vkfc", dir, device->caps.vendor_id,
             device->caps.device_id, device->caps.driver_version);
    uint64_t key1, key2;
    pipeline_cache_key(device, &key1, &key2);
    if (!vkf_cache_file_load("pipeline", device->pipeline_cache_path, key1, key2,
                             MAX_PIPELINE_CACHE_BYTES, &data, &size))
      data = NULL, size = 0;
  }
  /* The driver validates the header (vendor, device, UUID) and ignores a foreign blob. */
  VkPipelineCacheCreateInfo info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                    .initialDataSize = size,
                                    .pInitialData = data};
  if (device->vk.vkCreatePipelineCache(device->handle, &info, NULL, &device->pipeline_cache) !=
      VK_SUCCESS) {
    info.initialDataSize = 0;
    info.pInitialData = NULL;
    if (device->vk.vkCreatePipelineCache(device->handle, &info, NULL, &device->pipeline_cache) !=
        VK_SUCCESS)
      device->pipeline_cache = VK_NULL_HANDLE;
  }
  free(data);
}

static void save_pipeline_cache(vkf_device *device) {
  if (!device->pipeline_cache || !device->pipeline_cache_path[0]) return;
  size_t size = 0;
  if (device->vk.vkGetPipelineCacheData(device->handle, device->pipeline_cache, &size, NULL) !=
          VK_SUCCESS ||
      size == 0 || size > MAX_PIPELINE_CACHE_BYTES)
    return;
  void *data = malloc(size);
  if (!data) return;
  if (device->vk.vkGetPipelineCacheData(device->handle, device->pipeline_cache, &size, data) ==
      VK_SUCCESS) {
    uint64_t key1, key2;
    pipeline_cache_key(device, &key1, &key2);
    vkf_cache_file_write(device->pipeline_cache_path, key1, key2, data, size);
  }
  free(data);
}

/* minImportedHostPointerAlignment when the device can import host allocations as storage and
 * texel buffers, else 0. Only UMA devices: elsewhere the device would read the host's memory
 * over the bus on every dispatch, and a copy into its own memory is the faster choice. */
static uint64_t host_import_alignment(const vkf_device *device, const VkPhysicalDeviceProperties *p) {
  if (!device->caps.uma || p->apiVersion < VK_API_VERSION_1_1 ||
      !vkf_device_has_extension(device->physical, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME))
    return 0;
  VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                       .pNext = &host};
  vkGetPhysicalDeviceProperties2(device->physical, &props);
  VkPhysicalDeviceExternalBufferInfo info = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
      .usage = VKF_BUFFER_USAGE,
      .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT};
  VkExternalBufferProperties ext = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
  vkGetPhysicalDeviceExternalBufferProperties(device->physical, &info, &ext);
  uint64_t a = host.minImportedHostPointerAlignment;
  int importable = (ext.externalMemoryProperties.externalMemoryFeatures &
                    VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) != 0;
  /* A power of two no larger than a huge page, or the driver's answer is not one to trust. */
  return importable && a && !(a & (a - 1)) && a <= ((uint64_t)2 << 20) ? a : 0;
}

static vkf_status create_logical(vkf_device *device) {
  VKF_RETURN_IF_ERROR(find_compute_queue(device->physical, &device->queue_family));
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = device->queue_family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &priority};
  /* Enable what the real device has (caps may be clamped by a profile; choosers read caps, so
   * enabling more is harmless). */
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(device->physical, &props);
  VkPhysicalDevice16BitStorageFeatures s16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceVulkan12Features v12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 supported = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                         .pNext = &s16};
  int v12ok = props.apiVersion >= VK_API_VERSION_1_2;
  if (v12ok) s16.pNext = &v12;
  vkGetPhysicalDeviceFeatures2(device->physical, &supported);
  VkPhysicalDeviceVulkan12Features en12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .shaderFloat16 = v12.shaderFloat16,
      .shaderInt8 = v12.shaderInt8,
      .storageBuffer8BitAccess = v12.storageBuffer8BitAccess};
  VkPhysicalDevice16BitStorageFeatures en16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
      .pNext = v12ok ? &en12 : NULL,
      .storageBuffer16BitAccess = s16.storageBuffer16BitAccess};
  VkPhysicalDeviceFeatures2 enabled = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                       .pNext = &en16};
  /* Subgroup size control (host/kernel.c requires the planned size of subgroup kernels). */
  VkPhysicalDeviceSubgroupSizeControlFeatures ensg = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
      .pNext = enabled.pNext,
      .subgroupSizeControl = device->caps.subgroup_size_control ? VK_TRUE : VK_FALSE,
      .computeFullSubgroups = device->caps.full_subgroups ? VK_TRUE : VK_FALSE};
  enabled.features.shaderInt64 = supported.features.shaderInt64;
  enabled.features.shaderInt16 = supported.features.shaderInt16;
  device->host_import_alignment = host_import_alignment(device, &props);
  const char *extensions[4];
  uint32_t extension_count = 0;
  if (device->caps.subgroup_size_control || device->caps.full_subgroups) {
    enabled.pNext = &ensg;
    if (props.apiVersion < VK_API_VERSION_1_3)
      extensions[extension_count++] = VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME;
  }
  if (device->host_import_alignment)
    extensions[extension_count++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
  /* Tensor cores: the extension, its feature and the Vulkan memory model its kernels declare. */
  int memory_model = 0, flexible = 0;
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV encm2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV,
      .cooperativeMatrixFlexibleDimensions = VK_TRUE};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR encm = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
      .cooperativeMatrix = VK_TRUE};
  if (v12ok && vkf_coopmat_features(device->physical, &memory_model, &flexible) && memory_model) {
    extensions[extension_count++] = VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME;
    en12.vulkanMemoryModel = VK_TRUE;
    en12.pNext = &encm;
    /* Flexible dimensions: tiles the KHR list lacks (16x16x16 on lavapipe) become valid. */
    if (flexible) {
      extensions[extension_count++] = VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME;
      encm.pNext = &encm2;
    }
  }
  VkDeviceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = &enabled,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &queue,
                             .enabledExtensionCount = extension_count,
                             .ppEnabledExtensionNames = extensions};
  VKF_VK_RETURN_IF_ERROR(vkCreateDevice(device->physical, &info, NULL, &device->handle));
  volkLoadDeviceTable(&device->vk, device->handle);
  device->vk.vkGetDeviceQueue(device->handle, device->queue_family, 0, &device->queue);
  VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = device->queue_family};
  VKF_VK_RETURN_IF_ERROR(
      device->vk.vkCreateCommandPool(device->handle, &pool, NULL, &device->command_pool));
  vkGetPhysicalDeviceMemoryProperties(device->physical, &device->memory);
  return VKF_OK;
}

vkf_status vkf_device_create(vkf_instance *instance, uint32_t index, vkf_device **out_device) {
  *out_device = NULL;
  if (index >= instance->device_count)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "device index %u out of range (%u devices)", index,
                           instance->device_count);
  vkf_device *device = calloc(1, sizeof *device);
  if (!device) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  device->instance = instance;
  device->physical = instance->physical_devices[index];
  device->caps = instance->caps[index];
  vkf_status status = create_logical(device);
  if (status == VKF_OK) status = vkf_shader_compiler_create(&device->compiler);
  if (status == VKF_OK) load_pipeline_cache(device);
  if (status == VKF_OK) status = vkf_subgroup_probe(device);
  if (status != VKF_OK) {
    vkf_device_destroy(device);
    return vkf_status_annotate(status, "creating device \"%s\": ", device->caps.name);
  }
  *out_device = device;
  return VKF_OK;
}

void vkf_device_destroy(vkf_device *device) {
  if (!device) return;
  if (device->handle) {
    /* Where start-up time went (VKF_LOG=2): a fixed variant should never need shaderc. */
    vkf_device_stats s = vkf_device_stats_get(device);
    if (s.kernels_created)
      vkf_log(VKF_LOG_INFO,
              "kernels: %u built (SPIR-V: %u build-time, %u disk cache, %u shaderc), "
              "%.0f ms creating pipelines",
              s.kernels_created, s.spirv_embedded, s.spirv_disk_hits, s.spirv_compiles,
              s.pipeline_create_ms);
    device->vk.vkDeviceWaitIdle(device->handle);
    vkf_kernels_destroy_all(device);
    vkf_buffer_destroy(device->staging);
    save_pipeline_cache(device);
    if (device->pipeline_cache)
      device->vk.vkDestroyPipelineCache(device->handle, device->pipeline_cache, NULL);
    if (device->command_pool)
      device->vk.vkDestroyCommandPool(device->handle, device->command_pool, NULL);
    device->vk.vkDestroyDevice(device->handle, NULL);
  }
  vkf_shader_compiler_destroy(device->compiler);
  free(device);
}

const vkf_device_caps *vkf_device_caps_get(const vkf_device *device) {
  return &device->caps;
}
vkf_instance *vkf_device_instance(const vkf_device *device) {
  return device->instance;
}

void vkf_device_set_progress(vkf_device *device, vkf_progress_fn fn, void *user) {
  device->progress = fn;
  device->progress_user = user;
}

void vkf_device_report_progress(vkf_device *device, const vkf_progress *progress) {
  if (device->progress) device->progress(device->progress_user, progress);
}

vkf_device_stats vkf_device_stats_get(const vkf_device *device) {
  vkf_device_stats s = device->stats;
  vkf_shader_compiler_counts(device->compiler, &s.spirv_embedded, &s.spirv_disk_hits,
                             &s.spirv_compiles);
  return s;
}
