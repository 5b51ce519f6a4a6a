/* Shared set-up for GPU tests: an instance with the validation layer forced on and a device;
 * gpu_test_finish() fails the test on any validation message. Header-only. */
#ifndef VKF_TESTS_GPU_UTIL_H
#define VKF_TESTS_GPU_UTIL_H

#include "host/buffer.h"
#include "host/cmd.h"
#include "host/device.h"
#include "host/instance.h"
#include "host/kernel.h"
#include "tests/test_util.h"

typedef struct gpu_test {
  vkf_instance *instance;
  vkf_device *device;
} gpu_test;

/* Exits with a message when no device exists: GPU tests must not pass vacuously. */
static inline gpu_test gpu_test_start(void) {
  gpu_test t = {0};
  vkf_instance_options options = {.validate = 1};
  vkf_status s = vkf_instance_create(&options, &t.instance);
  if (s) {
    fprintf(stderr, "cannot create a Vulkan instance: %s\n", vkf_status_message(s));
    exit(1);
  }
  uint32_t index = 0;
  s = vkf_instance_choose_device(t.instance, NULL, &index);
  if (!s) s = vkf_device_create(t.instance, index, &t.device);
  if (s) {
    fprintf(stderr, "cannot create a device: %s\n", vkf_status_message(s));
    exit(1);
  }
  return t;
}

/* Destroys the device and instance, checks that validation saw nothing, prints the summary. */
static inline int gpu_test_finish(gpu_test *t) {
  vkf_device_destroy(t->device);
  uint32_t messages = vkf_instance_validation_message_count(t->instance);
  CHECK_MSG(messages == 0, "%u validation messages", messages);
  vkf_instance_destroy(t->instance);
  return test_report();
}

#endif
