/* Owns compute pipelines: the variant key, the in-memory kernel cache, descriptor-set and
 * pipeline layouts, and specialization constants. */
#include "host/kernel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/device_internal.h"
#include "host/kernel_internal.h"

static uint64_t variant_key(const vkf_kernel_desc *d) {
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

static void kernel_free(vkf_device *device, vkf_kernel *k) {
  VkDevice h = device->handle;
  if (k->pipeline) device->vk.vkDestroyPipeline(h, k->pipeline, NULL);
  if (k->pipeline_layout) device->vk.vkDestroyPipelineLayout(h, k->pipeline_layout, NULL);
  if (k->set_layout) device->vk.vkDestroyDescriptorSetLayout(h, k->set_layout, NULL);
  free(k);
}

/* A kernel between its layouts and its pipeline: what vkCreateComputePipelines needs, kept alive
 * until the pipeline exists (several are created at once by vkf_kernels_prepare). */
typedef struct pending_pipeline {
  vkf_kernel *kernel;
  VkShaderModule module;
  VkSpecializationMapEntry entries[VKF_KERNEL_MAX_SPEC_CONSTANTS];
  uint32_t spec_values[VKF_KERNEL_MAX_SPEC_CONSTANTS];
  VkSpecializationInfo spec;
  VkComputePipelineCreateInfo info;
  VkResult result;
} pending_pipeline;

/* SPIR-V (build-time table, disk cache or shaderc), layouts and shader module of `d`. */
static vkf_status prepare(vkf_device *device, const vkf_kernel_desc *d, vkf_kernel *k,
                          pending_pipeline *p) {
  uint32_t *words = NULL;
  size_t size = 0;
  VKF_RETURN_IF_ERROR(vkf_shader_compile(device->compiler, d->shader, d->source, d->defines,
                                         d->define_count, &words, &size));
  VkDescriptorSetLayoutBinding bindings[VKF_KERNEL_MAX_BINDINGS];
  for (uint32_t i = 0; i < d->binding_count; i++)
    bindings[i] = (VkDescriptorSetLayoutBinding){
        .binding = i,
        .descriptorType = d->texel[i] ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                      : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo set_info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = d->binding_count,
      .pBindings = bindings};
  VkResult r =
      device->vk.vkCreateDescriptorSetLayout(device->handle, &set_info, NULL, &k->set_layout);
  VkPushConstantRange push = {
      .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = d->push_constant_size};
  VkPipelineLayoutCreateInfo layout_info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                            .setLayoutCount = 1,
                                            .pSetLayouts = &k->set_layout,
                                            .pushConstantRangeCount = d->push_constant_size ? 1 : 0,
                                            .pPushConstantRanges = &push};
  if (r == VK_SUCCESS)
    r = device->vk.vkCreatePipelineLayout(device->handle, &layout_info, NULL, &k->pipeline_layout);
  VkShaderModuleCreateInfo module_info = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size, .pCode = words};
  p->kernel = k;
  if (r == VK_SUCCESS)
    r = device->vk.vkCreateShaderModule(device->handle, &module_info, NULL, &p->module);
  free(words);
  if (r != VK_SUCCESS)
    return vkf_status_annotate(vkf_vk_status(r, "creating layouts"), "kernel %s: ", d->shader);
  for (uint32_t i = 0; i < d->spec_constant_count; i++) {
    p->entries[i] = (VkSpecializationMapEntry){
        .constantID = i, .offset = i * sizeof(uint32_t), .size = sizeof(uint32_t)};
    p->spec_values[i] = d->spec_constants[i];
  }
  p->spec = (VkSpecializationInfo){.mapEntryCount = d->spec_constant_count,
                                   .pMapEntries = p->entries,
                                   .dataSize = d->spec_constant_count * sizeof(uint32_t),
                                   .pData = p->spec_values};
  p->info = (VkComputePipelineCreateInfo){
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = p->module,
                .pName = "main",
                .pSpecializationInfo = d->spec_constant_count ? &p->spec : NULL},
      .layout = k->pipeline_layout};
  return VKF_OK;
}

typedef struct pipeline_batch {
  vkf_device *device;
  pending_pipeline *items;
  uint32_t count;
  atomic_uint next;
} pipeline_batch;

/* Worker: creates pipelines until the batch is exhausted. vkCreateComputePipelines may be called
 * from several threads at once, the pipeline cache included (it is internally synchronized). */
static void *create_pipelines(void *arg) {
  pipeline_batch *b = arg;
  for (uint32_t i; (i = atomic_fetch_add(&b->next, 1)) < b->count;) {
    pending_pipeline *p = &b->items[i];
    double t0 = now_ms();
    p->result = b->device->vk.vkCreateComputePipelines(b->device->handle, b->device->pipeline_cache,
                                                       1, &p->info, NULL, &p->kernel->pipeline);
    p->kernel->create_ms = now_ms() - t0;
  }
  return NULL;
}

/* On a CPU device (lavapipe) creating a pipeline translates and optimises the whole shader on the
 * host, most of a warm start: spread the batch over the cores. */
static void run_batch(pipeline_batch *b) {
  enum { MAX_THREADS = 16 };
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  uint32_t threads = cpus > 1 ? (uint32_t)(cpus < MAX_THREADS ? cpus : MAX_THREADS) : 1;
  if (threads > b->count) threads = b->count;
  pthread_t helpers[MAX_THREADS];
  uint32_t started = 0;
  for (uint32_t t = 1; t < threads; t++)
    if (pthread_create(&helpers[started], NULL, create_pipelines, b) == 0) started++;
  create_pipelines(b); /* the calling thread works too; alone when no helper started */
  for (uint32_t t = 0; t < started; t++) pthread_join(helpers[t], NULL);
}

static vkf_status check_desc(const vkf_device *device, const vkf_kernel_desc *d) {
  if (d->binding_count > VKF_KERNEL_MAX_BINDINGS ||
      d->spec_constant_count > VKF_KERNEL_MAX_SPEC_CONSTANTS || d->push_constant_size % 4)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "kernel %s: bad descriptor", d->shader);
  for (uint32_t i = 0; i < d->binding_count; i++)
    if (d->texel[i] > VKF_TEXEL_RGBA16F)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "kernel %s: binding %u: bad texel format",
                             d->shader, i);
  if (d->push_constant_size > device->caps.max_push_constants_size)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "kernel %s needs %u bytes of push constants; the device allows %u",
                           d->shader, d->push_constant_size, device->caps.max_push_constants_size);
  return VKF_OK;
}

static vkf_kernel *cached(vkf_device *device, uint64_t key) {
  for (vkf_kernel *k = device->kernels; k; k = k->next)
    if (k->key == key) return k;
  return NULL;
}

/* Builds the kernels of descs[] that are not cached yet (pipelines in parallel) and caches them.
 * A kernel that fails is left out: the caller's vkf_kernel_get reports it. */
static vkf_status build_many(vkf_device *device, const vkf_kernel_desc *descs, uint32_t count) {
  pending_pipeline *items = calloc(count ? count : 1, sizeof *items);
  if (!items) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  vkf_status first_error = VKF_OK;
  uint32_t n = 0;
  for (uint32_t i = 0; i < count; i++) {
    const vkf_kernel_desc *d = &descs[i];
    vkf_status s = check_desc(device, d);
    uint64_t key = variant_key(d);
    int seen = cached(device, key) != NULL;
    for (uint32_t j = 0; j < n && !seen; j++) seen = items[j].kernel->key == key;
    if (s || seen) {
      if (s && !first_error)
        first_error = s;
      else if (s)
        vkf_status_free(s);
      continue;
    }
    vkf_kernel *k = calloc(1, sizeof *k);
    if (!k) {
      if (!first_error)
        first_error = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
      break;
    }
    k->key = key;
    k->binding_count = d->binding_count;
    k->push_constant_size = d->push_constant_size;
    memcpy(k->texel, d->texel, sizeof k->texel);
    snprintf(k->name, sizeof k->name, "%s", d->shader);
    s = prepare(device, d, k, &items[n]);
    if (s) {
      if (items[n].module) device->vk.vkDestroyShaderModule(device->handle, items[n].module, NULL);
      kernel_free(device, k);
      memset(&items[n], 0, sizeof items[n]);
      if (!first_error)
        first_error = s;
      else
        vkf_status_free(s);
      continue;
    }
    n++;
  }
  pipeline_batch batch = {.device = device, .items = items, .count = n};
  atomic_init(&batch.next, 0);
  if (n) run_batch(&batch);
  for (uint32_t i = 0; i < n; i++) {
    pending_pipeline *p = &items[i];
    device->vk.vkDestroyShaderModule(device->handle, p->module, NULL);
    if (p->result != VK_SUCCESS) {
      if (!first_error)
        first_error = vkf_status_annotate(vkf_vk_status(p->result, "creating pipeline"),
                                          "kernel %s: ", p->kernel->name);
      p->kernel->pipeline = VK_NULL_HANDLE;
      kernel_free(device, p->kernel);
      continue;
    }
    device->stats.pipeline_create_ms += p->kernel->create_ms;
    device->stats.kernels_created++;
    p->kernel->next = device->kernels;
    device->kernels = p->kernel;
  }
  free(items);
  return first_error;
}

void vkf_kernels_prepare(vkf_device *device, const vkf_kernel_desc *descs, uint32_t count) {
  vkf_status s = build_many(device, descs, count);
  if (s) vkf_status_free(s); /* vkf_kernel_get builds the failing kernel again and reports it */
}

vkf_status vkf_kernel_get(vkf_device *device, const vkf_kernel_desc *d, vkf_kernel **out_kernel) {
  *out_kernel = NULL;
  VKF_RETURN_IF_ERROR(check_desc(device, d));
  vkf_kernel *k = cached(device, variant_key(d));
  if (k) {
    device->stats.kernel_cache_hits++;
    *out_kernel = k;
    return VKF_OK;
  }
  VKF_RETURN_IF_ERROR(build_many(device, d, 1));
  *out_kernel = cached(device, variant_key(d));
  return *out_kernel ? VKF_OK
                     : vkf_status_make(VKF_STATUS_INTERNAL, "kernel %s: not built", d->shader);
}

void vkf_kernels_destroy_all(vkf_device *device) {
  for (vkf_kernel *k = device->kernels; k;) {
    vkf_kernel *next = k->next;
    kernel_free(device, k);
    k = next;
  }
  device->kernels = NULL;
}

const char *vkf_kernel_name(const vkf_kernel *kernel) {
  return kernel->name;
}
uint32_t vkf_kernel_binding_count(const vkf_kernel *kernel) {
  return kernel->binding_count;
}
uint32_t vkf_kernel_push_constant_size(const vkf_kernel *kernel) {
  return kernel->push_constant_size;
}
