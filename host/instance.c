/* Owns the VkInstance: loader bring-up through volk, the validation layer and its message
 * counter, physical-device enumeration and device choice. */
#ifdef VKF_SANITIZE
#define _GNU_SOURCE /* dl_iterate_phdr, RTLD_NODELETE */
#endif
#include <ctype.h>
#include <errno.h>
#ifdef VKF_SANITIZE
#include <dlfcn.h>
#include <link.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "graph/base/env.h"
#include "graph/base/log.h"
#include "host/instance_internal.h"

static const char *const validation_layer = "VK_LAYER_KHRONOS_validation";

#ifdef VKF_SANITIZE
/* Sanitizer builds only: the loader dlclose()s the driver and layers at vkDestroyInstance, after
 * which LeakSanitizer cannot name the module that leaked. Pinning every loaded object keeps the
 * names, so tests/lsan.supp can suppress leaks inside the driver stack while ours still fail. */
static int pin_object(struct dl_phdr_info *info, size_t size, void *user) {
  (void)size, (void)user;
  if (info->dlpi_name && info->dlpi_name[0]) dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  return 0;
}
#endif

static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)type;
  vkf_instance *instance = user;
  if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                  VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) {
    instance->validation_messages++;
    vkf_log(VKF_LOG_ERROR, "validation: %s", data->pMessage ? data->pMessage : "(no message)");
  }
  return VK_FALSE;
}

static int layer_available(const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
  VkLayerProperties *layers = calloc(n, sizeof *layers);
  int found = 0;
  if (layers && vkEnumerateInstanceLayerProperties(&n, layers) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(layers[i].layerName, name) == 0;
  free(layers);
  return found;
}

static vkf_status create_handle(vkf_instance *instance) {
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_1)
    return vkf_status_make(VKF_STATUS_NO_DEVICE, "the Vulkan loader supports only Vulkan 1.0; "
                                                 "vkformer needs 1.1 or newer");
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "vkformer",
                           .pEngineName = "vkformer",
                           .apiVersion = loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3
                                                                              : loader_version};
  const char *layers[1] = {validation_layer};
  const char *extensions[1] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  /* Synchronization validation catches missing barriers between dispatches, which the core
   * checks do not: exactly the bug class a scheduler that elides barriers can have. */
  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  /* GPU-assisted validation instruments each shader to check every storage-buffer access against
   * its descriptor's range (the layer's gpuav_buffer_oob, on by default): an out-of-bounds read or
   * write becomes a message, and so a failed test, instead of a silent wrong answer. It runs
   * instead of synchronization validation (each is slow; the main lane keeps the latter). */
  if (instance->validate == 2) enables[0] = VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT;
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .enabledValidationFeatureCount = 1,
                                      .pEnabledValidationFeatures = enables};
  VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_debug_message,
      .pUserData = instance};
  if (instance->validate) {
    if (!layer_available(validation_layer))
      return vkf_status_make(VKF_STATUS_NOT_FOUND,
                             "VKF_VALIDATE=1 but %s is not installed (Debian: "
                             "vulkan-validationlayers)",
                             validation_layer);
    features.pNext = &messenger_info;
  }
  VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pNext = instance->validate ? &features : NULL,
                               .pApplicationInfo = &app,
                               .enabledLayerCount = instance->validate ? 1 : 0,
                               .ppEnabledLayerNames = layers,
                               .enabledExtensionCount = instance->validate ? 1 : 0,
                               .ppEnabledExtensionNames = extensions};
  VkResult r = vkCreateInstance(&info, NULL, &instance->handle);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
    return vkf_status_make(VKF_STATUS_NO_DEVICE, "no Vulkan driver found (vkCreateInstance: %s)",
                           vkf_vk_result_name(r));
  VKF_VK_RETURN_IF_ERROR(r);
  volkLoadInstanceOnly(instance->handle);
#ifdef VKF_SANITIZE
  dl_iterate_phdr(pin_object, NULL);
#endif
  if (instance->validate) {
    instance->destroy_messenger = vkDestroyDebugUtilsMessengerEXT;
    VKF_VK_RETURN_IF_ERROR(vkCreateDebugUtilsMessengerEXT(instance->handle, &messenger_info, NULL,
                                                          &instance->messenger));
  }
  return VKF_OK;
}


static vkf_status enumerate(vkf_instance *instance, const char *profile) {
  uint32_t n = 0;
  VKF_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance->handle, &n, NULL));
  if (n == 0) return vkf_status_make(VKF_STATUS_NO_DEVICE, "no Vulkan device found");
  instance->physical_devices = calloc(n, sizeof(VkPhysicalDevice));
  instance->caps = calloc(n, sizeof(vkf_device_caps));
  if (!instance->physical_devices || !instance->caps)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory listing devices");
  VKF_VK_RETURN_IF_ERROR(
      vkEnumeratePhysicalDevices(instance->handle, &n, instance->physical_devices));
  instance->device_count = n;
  for (uint32_t i = 0; i < n; i++) {
    vkf_caps_query(instance->physical_devices[i], &instance->caps[i]);
    vkf_caps_query_coopmat(instance->physical_devices[i], &instance->caps[i]);
    VKF_RETURN_IF_ERROR(vkf_caps_apply_profile(&instance->caps[i], profile));
  }
  return VKF_OK;
}

vkf_status vkf_instance_create(const vkf_instance_options *options,
                               vkf_instance **out_instance) {
  *out_instance = NULL;
  const vkf_env *env = vkf_env_get();
  vkf_instance_options defaults = {0};
  if (!options) options = &defaults;
  if (volkInitialize() != VK_SUCCESS)
    return vkf_status_make(VKF_STATUS_NO_DEVICE,
                           "no Vulkan loader found (libvulkan.so.1; Debian: libvulkan1)");
  vkf_instance *instance = calloc(1, sizeof *instance);
  if (!instance) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  instance->validate = options->validate > 0    ? options->validate
                       : options->validate == 0 ? env->validate
                                                : 0;
  const char *profile = options->device_profile ? options->device_profile : env->device_profile;
  vkf_status status = create_handle(instance);
  if (status == VKF_OK) status = enumerate(instance, profile);
  if (status != VKF_OK) {
    vkf_instance_destroy(instance);
    return status;
  }
  *out_instance = instance;
  return VKF_OK;
}

void vkf_instance_destroy(vkf_instance *instance) {
  if (!instance) return;
  if (instance->messenger)
    instance->destroy_messenger(instance->handle, instance->messenger, NULL);
  if (instance->handle) vkDestroyInstance(instance->handle, NULL);
  free(instance->physical_devices);
  free(instance->caps);
  free(instance);
}

uint32_t vkf_instance_device_count(const vkf_instance *instance) { return instance->device_count; }

const vkf_device_caps *vkf_instance_device_caps(const vkf_instance *instance, uint32_t index) {
  VKF_ASSERT(index < instance->device_count);
  return &instance->caps[index];
}

uint32_t vkf_instance_validation_message_count(const vkf_instance *instance) {
  return instance->validation_messages;
}

int vkf_instance_validation_enabled(const vkf_instance *instance) { return instance->validate; }

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n) return 1;
  }
  return n == 0;
}

static int preference(vkf_device_kind kind) {
  switch (kind) {
    case VKF_DEVICE_KIND_DISCRETE_GPU: return 4;
    case VKF_DEVICE_KIND_INTEGRATED_GPU: return 3;
    case VKF_DEVICE_KIND_VIRTUAL_GPU: return 2;
    case VKF_DEVICE_KIND_CPU: return 1;
    default: return 0;
  }
}

vkf_status vkf_instance_choose_device(const vkf_instance *instance, const char *selector,
                                      uint32_t *out_index) {
  *out_index = 0;
  if (!selector) selector = vkf_env_get()->device;
  if (!selector) {
    uint32_t best = 0;
    for (uint32_t i = 1; i < instance->device_count; i++)
      if (preference(instance->caps[i].kind) > preference(instance->caps[best].kind)) best = i;
    *out_index = best;
    return VKF_OK;
  }
  char names[1024] = "";
  for (uint32_t i = 0; i < instance->device_count; i++) {
    size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s%u: %s", i ? ", " : "", i,
             instance->caps[i].name);
  }
  /* An empty selector ("--device ''", VKF_DEVICE= is unset) would match every name. */
  if (!*selector)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "empty device selector: give an index or a name (devices: %s)", names);
  /* Only plain decimal digits are an index (strtoul alone takes "-1" as ULONG_MAX, and " 1"). */
  if (strspn(selector, "0123456789") == strlen(selector)) {
    errno = 0;
    unsigned long index = strtoul(selector, NULL, 10);
    if (errno || index >= instance->device_count)
      return vkf_status_make(VKF_STATUS_NOT_FOUND, "device index %s out of range (devices: %s)",
                             selector, names);
    *out_index = (uint32_t)index;
    return VKF_OK;
  }
  for (uint32_t i = 0; i < instance->device_count; i++)
    if (contains_nocase(instance->caps[i].name, selector)) {
      *out_index = i;
      return VKF_OK;
    }
  const char *digits = selector + 1;
  if (selector[0] == '-' && *digits && strspn(digits, "0123456789") == strlen(digits))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "device index %s is negative: give an index from 0 or a name "
                           "(devices: %s)",
                           selector, names);
  return vkf_status_make(VKF_STATUS_NOT_FOUND, "no device matches \"%s\" (devices: %s)", selector,
                         names);
}
