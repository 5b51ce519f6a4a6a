/* Owns compute pipelines: the variant key, the in-memory kernel cache, descriptor-set and
 * pipeline layouts, and specialization constants. */
#include "host/kernel.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "graph/base/log.h"
#include "host/device_internal.h"
#include "host/kernel_internal.h"
#include "host/spirv_info.h"

uint64_t vkf_kernel_variant_key(const vkf_kernel_desc *d) {
  uint64_t h = vkf_hash64(1, d->shader, strlen(d->shader) + 1);
  if (d->source) h = vkf_hash64(h, d->source, strlen(d->source));
  for (uint32_t i = 0; i < d->define_count; i++) {
    h = vkf_hash64(h, d->defines[i].name, strlen(d->defines[i].name) + 1);
    const char *v = d->defines[i].value ? d->defines[i].value : "";
    h = vkf_hash64(h, v, strlen(v) + 1);
  }
  h = vkf_hash64(h, d->spec_constants, d->spec_constant_count * sizeof(uint32_t));
  uint32_t shape[3] = {d->spec_constant_count, d->binding_count, d->push_constant_size};
  h = vkf_hash64(h, d->texel, d->binding_count);
  return vkf_hash64(h, shape, sizeof shape);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void vkf_kernel_free(vkf_device *device, vkf_kernel *k) {
  if (!k) return;
  VkDevice h = device->handle;
  if (k->pipeline) device->vk.vkDestroyPipeline(h, k->pipeline, NULL);
  if (k->pipeline_layout) device->vk.vkDestroyPipelineLayout(h, k->pipeline_layout, NULL);
  if (k->set_layout) device->vk.vkDestroyDescriptorSetLayout(h, k->set_layout, NULL);
  free(k);
}

vkf_status vkf_kernel_check_desc(const vkf_device *device, const vkf_kernel_desc *d) {
  if (d->binding_count > VKF_KERNEL_MAX_BINDINGS ||
      d->spec_constant_count > VKF_KERNEL_MAX_SPEC_CONSTANTS || d->push_constant_size % 4)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "kernel %s: bad descriptor", d->shader);
  for (uint32_t i = 0; i < d->binding_count; i++)
    if (d->texel[i] > VKF_TEXEL_RG32UI)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "kernel %s: binding %u: bad texel format",
                             d->shader, i);
  uint32_t fixed = vkf_caps_subgroup_fixed(&device->caps);
  if (d->subgroup_size && d->subgroup_size != fixed)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "kernel %s was planned for subgroups of %u; device \"%s\" %s%u", d->shader,
                           d->subgroup_size, device->caps.name,
                           fixed ? "runs subgroups of " : "guarantees no subgroup size (reports ",
                           fixed ? fixed : device->caps.subgroup_size);
  if (d->push_constant_size > device->caps.max_push_constants_size)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "kernel %s needs %u bytes of push constants; the device allows %u",
                           d->shader, d->push_constant_size, device->caps.max_push_constants_size);
  return VKF_OK;
}

vkf_kernel *vkf_kernel_new(const vkf_kernel_desc *d, uint64_t key) {
  vkf_kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->key = key;
  k->binding_count = d->binding_count;
  k->push_constant_size = d->push_constant_size;
  memcpy(k->texel, d->texel, sizeof k->texel);
  snprintf(k->name, sizeof k->name, "%s", d->shader);
  return k;
}

/* k's layouts and pipeline from SPIR-V: only `k` and Vulkan create calls (safe on a worker). */
static VkResult create_objects(const vkf_device *device, vkf_kernel *k, const uint32_t *words,
                               size_t size, const uint32_t *spec_constants,
                               uint32_t spec_constant_count) {
  VkDescriptorSetLayoutBinding bindings[VKF_KERNEL_MAX_BINDINGS];
  for (uint32_t i = 0; i < k->binding_count; i++)
    bindings[i] = (VkDescriptorSetLayoutBinding){
        .binding = i,
        .descriptorType = k->texel[i] ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                      : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo set_info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = k->binding_count,
      .pBindings = bindings};
  VkResult r = device->vk.vkCreateDescriptorSetLayout(device->handle, &set_info, NULL,
                                                      &k->set_layout);
  VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
                              .offset = 0,
                              .size = k->push_constant_size};
  VkPipelineLayoutCreateInfo layout_info = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &k->set_layout,
      .pushConstantRangeCount = k->push_constant_size ? 1 : 0,
      .pPushConstantRanges = &push};
  if (r == VK_SUCCESS)
    r = device->vk.vkCreatePipelineLayout(device->handle, &layout_info, NULL, &k->pipeline_layout);
  VkShaderModule module = VK_NULL_HANDLE;
  VkShaderModuleCreateInfo module_info = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                          .codeSize = size,
                                          .pCode = words};
  if (r == VK_SUCCESS) r = device->vk.vkCreateShaderModule(device->handle, &module_info, NULL, &module);
  VkSpecializationMapEntry entries[VKF_KERNEL_MAX_SPEC_CONSTANTS];
  for (uint32_t i = 0; i < spec_constant_count; i++)
    entries[i] = (VkSpecializationMapEntry){.constantID = i,
                                            .offset = i * sizeof(uint32_t),
                                            .size = sizeof(uint32_t)};
  VkSpecializationInfo spec = {.mapEntryCount = spec_constant_count,
                               .pMapEntries = entries,
                               .dataSize = spec_constant_count * sizeof(uint32_t),
                               .pData = spec_constants};
  /* A kernel that uses subgroup operations runs at the size the choosers planned it for, with
   * full subgroups where its width is a multiple of it (and within maxComputeWorkgroupSubgroups
   * of that size: wider ones are the bodies that read the layout at run time): without this, AMD (wave 32 or 64) and
   * Intel (SIMD 8 to 32) pick a width per pipeline, and a body planned on another width sums
   * rows together or leaves lanes of a tile unwritten. */
  vkf_spirv_info info;
  vkf_spirv_info_read(words, size, spec_constants, spec_constant_count, &info);
  const vkf_device_caps *caps = &device->caps;
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo required = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
      .requiredSubgroupSize = caps->subgroup_size};
  int require = info.uses_subgroups && vkf_caps_subgroup_fixed(caps) &&
                caps->subgroup_size_control &&
                (!caps->max_workgroup_subgroups ||
                 info.local_size_x <= caps->max_workgroup_subgroups * caps->subgroup_size);
  VkPipelineShaderStageCreateFlags stage_flags = 0;
  if (require && caps->full_subgroups && info.local_size_x &&
      info.local_size_x % caps->subgroup_size == 0)
    stage_flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  VkComputePipelineCreateInfo pipe_info = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .pNext = require ? &required : NULL,
                .flags = stage_flags,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module,
                .pName = "main",
                .pSpecializationInfo = spec_constant_count ? &spec : NULL},
      .layout = k->pipeline_layout};
  double t0 = now_ms();
  if (r == VK_SUCCESS)
    r = device->vk.vkCreateComputePipelines(device->handle, device->pipeline_cache, 1, &pipe_info,
                                            NULL, &k->pipeline);
  k->create_ms = now_ms() - t0;
  k->spirv_size = size;
  if (module) device->vk.vkDestroyShaderModule(device->handle, module, NULL);
  return r;
}

vkf_status vkf_kernel_build(const vkf_device *device, vkf_kernel *k, const vkf_kernel_desc *d) {
  uint32_t *words = NULL;
  size_t size = 0;
  VKF_RETURN_IF_ERROR(vkf_shader_compile(device->compiler, d->shader, d->source, d->defines,
                                         d->define_count, &words, &size));
  VkResult r = create_objects(device, k, words, size, d->spec_constants, d->spec_constant_count);
  free(words);
  if (r != VK_SUCCESS)
    return vkf_status_annotate(vkf_vk_status(r, "creating pipeline"), "kernel %s: ", d->shader);
  return VKF_OK;
}

vkf_kernel *vkf_kernel_find(vkf_device *device, uint64_t key) {
  for (vkf_kernel *k = device->kernels; k; k = k->next)
    if (k->key == key) return k;
  return NULL;
}

void vkf_kernel_insert(vkf_device *device, vkf_kernel *k) {
  device->stats.kernels_created++;
  device->stats.pipeline_create_ms += k->create_ms;
  /* VKF_LOG=3: which variants a warm start pays the driver's compile for. */
  vkf_log(VKF_LOG_DEBUG, "kernel %s: %.1f ms creating its pipeline (%zu bytes of SPIR-V)", k->name,
          k->create_ms, k->spirv_size);
  k->next = device->kernels;
  device->kernels = k;
}

vkf_status vkf_kernel_get(vkf_device *device, const vkf_kernel_desc *d, vkf_kernel **out_kernel) {
  *out_kernel = NULL;
  VKF_RETURN_IF_ERROR(vkf_kernel_check_desc(device, d));
  uint64_t key = vkf_kernel_variant_key(d);
  vkf_kernel *k = vkf_kernel_find(device, key);
  if (k) {
    device->stats.kernel_cache_hits++;
    *out_kernel = k;
    return VKF_OK;
  }
  k = vkf_kernel_new(d, key);
  if (!k) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  vkf_status status = vkf_kernel_build(device, k, d);
  if (status != VKF_OK) {
    vkf_kernel_free(device, k);
    return status;
  }
  vkf_kernel_insert(device, k);
  *out_kernel = k;
  return VKF_OK;
}

void vkf_kernels_destroy_all(vkf_device *device) {
  for (vkf_kernel *k = device->kernels; k;) {
    vkf_kernel *next = k->next;
    vkf_kernel_free(device, k);
    k = next;
  }
  device->kernels = NULL;
}

const char *vkf_kernel_name(const vkf_kernel *kernel) { return kernel->name; }
uint32_t vkf_kernel_binding_count(const vkf_kernel *kernel) { return kernel->binding_count; }
uint32_t vkf_kernel_push_constant_size(const vkf_kernel *kernel) {
  return kernel->push_constant_size;
}
