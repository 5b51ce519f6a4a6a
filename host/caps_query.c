/* Owns reading a physical device's properties, features and memory into vkf_device_caps. */
#include <stdio.h>
#include <string.h>

#include "host/instance_internal.h"

static const char *vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x106B: return "Apple";
    case 0x1010: return "ImgTec";
    case 0x10005: return "Mesa";
    default: return "unknown";
  }
}

int vkf_device_has_extension(VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) return 0;
  VkExtensionProperties *props = calloc(n, sizeof *props);
  if (!props) return 0;
  int found = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(props[i].extensionName, name) == 0;
  free(props);
  return found;
}

static uint32_t subgroup_bits(VkSubgroupFeatureFlags f) {
  uint32_t b = 0;
  if (f & VK_SUBGROUP_FEATURE_BASIC_BIT) b |= VKF_SUBGROUP_BASIC;
  if (f & VK_SUBGROUP_FEATURE_VOTE_BIT) b |= VKF_SUBGROUP_VOTE;
  if (f & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) b |= VKF_SUBGROUP_ARITHMETIC;
  if (f & VK_SUBGROUP_FEATURE_BALLOT_BIT) b |= VKF_SUBGROUP_BALLOT;
  if (f & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) b |= VKF_SUBGROUP_SHUFFLE;
  if (f & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT) b |= VKF_SUBGROUP_SHUFFLE_RELATIVE;
  if (f & VK_SUBGROUP_FEATURE_CLUSTERED_BIT) b |= VKF_SUBGROUP_CLUSTERED;
  if (f & VK_SUBGROUP_FEATURE_QUAD_BIT) b |= VKF_SUBGROUP_QUAD;
  return b;
}

/* VK_EXT_subgroup_size_control (core in 1.3): the sizes a compute pipeline may require, and
 * whether it may require them and full subgroups. */
static void query_subgroup_size_control(VkPhysicalDevice pd, uint32_t api,
                                        vkf_device_caps *caps) {
  if (api < VK_API_VERSION_1_3 &&
      !vkf_device_has_extension(pd, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME))
    return;
  VkPhysicalDeviceSubgroupSizeControlProperties sp = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                       .pNext = &sp};
  vkGetPhysicalDeviceProperties2(pd, &props);
  VkPhysicalDeviceSubgroupSizeControlFeatures sf = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                     .pNext = &sf};
  vkGetPhysicalDeviceFeatures2(pd, &feats);
  caps->min_subgroup_size = sp.minSubgroupSize;
  caps->max_subgroup_size = sp.maxSubgroupSize;
  caps->subgroup_size_control = sf.subgroupSizeControl == VK_TRUE &&
                                (sp.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                                sp.minSubgroupSize && sp.maxSubgroupSize >= sp.minSubgroupSize;
  caps->full_subgroups = sf.computeFullSubgroups == VK_TRUE;
  caps->max_workgroup_subgroups = sp.maxComputeWorkgroupSubgroups;
}

void vkf_caps_query(VkPhysicalDevice pd, vkf_device_caps *caps) {
  memset(caps, 0, sizeof *caps);
  VkPhysicalDeviceSubgroupProperties subgroup = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, .pNext = &subgroup};
  VkPhysicalDeviceProperties2 props2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceProperties basic;
  vkGetPhysicalDeviceProperties(pd, &basic);
  int has_driver_props = basic.apiVersion >= VK_API_VERSION_1_2 ||
                         vkf_device_has_extension(pd, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  props2.pNext = has_driver_props ? (void *)&driver : (void *)&subgroup;
  vkGetPhysicalDeviceProperties2(pd, &props2);
  const VkPhysicalDeviceProperties *p = &props2.properties;
  const VkPhysicalDeviceLimits *l = &p->limits;

  snprintf(caps->name, sizeof caps->name, "%s", p->deviceName);
  snprintf(caps->vendor, sizeof caps->vendor, "%s", vendor_name(p->vendorID));
  caps->vendor_id = p->vendorID;
  caps->device_id = p->deviceID;
  switch (p->deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: caps->kind = VKF_DEVICE_KIND_INTEGRATED_GPU; break;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: caps->kind = VKF_DEVICE_KIND_DISCRETE_GPU; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: caps->kind = VKF_DEVICE_KIND_VIRTUAL_GPU; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: caps->kind = VKF_DEVICE_KIND_CPU; break;
    default: caps->kind = VKF_DEVICE_KIND_OTHER; break;
  }
  if (has_driver_props) {
    snprintf(caps->driver_name, sizeof caps->driver_name, "%s", driver.driverName);
    snprintf(caps->driver_info, sizeof caps->driver_info, "%s", driver.driverInfo);
    caps->driver_id = (uint32_t)driver.driverID;
    /* gallivm's LP_MAX_TGSI_LOOP_ITERATIONS (caps.h: loop_iteration_limit) */
    if (driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) caps->loop_iteration_limit = 65535;
  }
  caps->api_version = p->apiVersion;
  caps->driver_version = p->driverVersion;
  caps->max_shared_memory_size = l->maxComputeSharedMemorySize;
  caps->subgroup_size = subgroup.subgroupSize;
  caps->subgroup_ops = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT)
                           ? subgroup_bits(subgroup.supportedOperations)
                           : 0;
  for (int i = 0; i < 3; i++) {
    caps->max_workgroup_size[i] = l->maxComputeWorkGroupSize[i];
    caps->max_workgroup_count[i] = l->maxComputeWorkGroupCount[i];
  }
  caps->max_workgroup_invocations = l->maxComputeWorkGroupInvocations;
  caps->max_push_constants_size = l->maxPushConstantsSize;
  caps->min_storage_buffer_offset_alignment = (uint32_t)l->minStorageBufferOffsetAlignment;
  caps->max_storage_buffer_range = l->maxStorageBufferRange;
  caps->timestamp_period = l->timestampPeriod;
  caps->max_texel_buffer_elements = l->maxTexelBufferElements;
  caps->min_texel_buffer_offset_alignment = (uint32_t)l->minTexelBufferOffsetAlignment;
  VkFormatProperties fp32 = {0}, fp16 = {0}, u16 = {0};
  vkGetPhysicalDeviceFormatProperties(pd, VK_FORMAT_R32G32B32A32_SFLOAT, &fp32);
  vkGetPhysicalDeviceFormatProperties(pd, VK_FORMAT_R16G16B16A16_SFLOAT, &fp16);
  caps->texel_rgba32f = (fp32.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
  caps->texel_rgba16f = (fp16.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
  vkGetPhysicalDeviceFormatProperties(pd, VK_FORMAT_R16G16B16A16_UINT, &u16);
  caps->texel_rgba16ui = (u16.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
  VkFormatProperties u32 = {0};
  vkGetPhysicalDeviceFormatProperties(pd, VK_FORMAT_R32_UINT, &u32);
  caps->texel_r32ui = (u32.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
  VkFormatProperties u32x2 = {0};
  vkGetPhysicalDeviceFormatProperties(pd, VK_FORMAT_R32G32_UINT, &u32x2);
  caps->texel_rg32ui = (u32x2.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;

  /* maxMemoryAllocationSize is Vulkan 1.1 core (VkPhysicalDeviceMaintenance3Properties). */
  VkPhysicalDeviceMaintenance3Properties m3 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceProperties2 props_m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                          .pNext = &m3};
  vkGetPhysicalDeviceProperties2(pd, &props_m3);
  caps->max_memory_allocation_size = m3.maxMemoryAllocationSize;

  VkPhysicalDevice16BitStorageFeatures s16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceVulkan12Features v12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                     .pNext = &s16};
  if (p->apiVersion >= VK_API_VERSION_1_2) s16.pNext = &v12;
  vkGetPhysicalDeviceFeatures2(pd, &feats);
  caps->storage_16bit = s16.storageBuffer16BitAccess == VK_TRUE;
  if (p->apiVersion >= VK_API_VERSION_1_2) {
    caps->fp16_arithmetic = v12.shaderFloat16 == VK_TRUE;
    caps->int8_arithmetic = v12.shaderInt8 == VK_TRUE;
    caps->storage_8bit = v12.storageBuffer8BitAccess == VK_TRUE;
  }
  query_subgroup_size_control(pd, p->apiVersion, caps);
  caps->cooperative_matrix = vkf_device_has_extension(pd, "VK_KHR_cooperative_matrix") ||
                             vkf_device_has_extension(pd, "VK_NV_cooperative_matrix");

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  caps->heap_count = mem.memoryHeapCount < VKF_CAPS_MAX_HEAPS ? mem.memoryHeapCount
                                                               : VKF_CAPS_MAX_HEAPS;
  for (uint32_t i = 0; i < caps->heap_count; i++) {
    caps->heap_size[i] = mem.memoryHeaps[i].size;
    caps->heap_device_local[i] = (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
  }
  /* UMA: the CPU and device share memory, so device-local memory is also host-visible and
   * uploads need no staging copy. A discrete GPU's small host-visible BAR window is not UMA. */
  int host_visible_local = 0;
  for (uint32_t i = 0; i < mem.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
    if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
      host_visible_local = 1;
  }
  caps->uma = host_visible_local && (caps->kind == VKF_DEVICE_KIND_INTEGRATED_GPU ||
                                     caps->kind == VKF_DEVICE_KIND_CPU);

  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, NULL);
  VkQueueFamilyProperties *qf = calloc(qn ? qn : 1, sizeof *qf);
  if (qf) {
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qf);
    for (uint32_t i = 0; i < qn; i++)
      if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qf[i].timestampValidBits > 0)
        caps->timestamps = 1;
    free(qf);
  }
}
