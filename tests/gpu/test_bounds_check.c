/* The bounds lane's detector (VKF_VALIDATE=2: the validation layer's GPU-assisted mode): a kernel
 * that writes one element past its binding is reported, the same kernel kept in range is not.
 * Without this, a bounds lane that silently checked nothing would pass. */
#include "tests/gpu_util.h"

/* Writes o[i] for i < n, plus o[n] when `past` is set: one element past an n-element binding. */
static const char *KERNEL =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, binding = 0) writeonly buffer O { uint o[]; };\n"
    "layout(push_constant) uniform P { uint n, past; } p;\n"
    "void main() {\n"
    "  uint i = gl_GlobalInvocationID.x;\n"
    "  if (i < p.n + p.past) o[i] = i;\n"
    "}\n";

static uint32_t messages_after(vkf_instance *instance, vkf_device *device, uint32_t past) {
  enum { N = 100 };
  vkf_kernel_desc desc = {.shader = "bounds_probe", .source = KERNEL, .binding_count = 1,
                          .push_constant_size = 8};
  vkf_kernel *k = NULL;
  CHECK_OK(vkf_kernel_get(device, &desc, &k));
  vkf_buffer *b = NULL;
  /* the binding is the first N elements of a larger buffer: the write past it stays inside the
   * allocation, as an arena neighbour's tensor would be */
  CHECK_OK(vkf_buffer_create(device, 2 * N * sizeof(uint32_t), "o", &b));
  vkf_cmd *cmd = NULL;
  CHECK_OK(vkf_cmd_create(device, 0, &cmd));
  vkf_binding bind[1] = {{b, 0, N * sizeof(uint32_t)}};
  uint32_t push[2] = {N, past};
  uint32_t before = vkf_instance_validation_message_count(instance);
  CHECK_OK(vkf_cmd_begin(cmd));
  CHECK_OK(vkf_cmd_dispatch(cmd, k, bind, push, 2, 1, 1));
  CHECK_OK(vkf_cmd_end(cmd));
  CHECK_OK(vkf_cmd_submit_wait(cmd));
  vkf_cmd_destroy(cmd);
  vkf_buffer_destroy(b);
  return vkf_instance_validation_message_count(instance) - before;
}

int main(void) {
  vkf_instance *instance = NULL;
  vkf_instance_options options = {.validate = 2};
  CHECK_OK(vkf_instance_create(&options, &instance));
  uint32_t index = 0;
  vkf_device *device = NULL;
  CHECK_OK(vkf_instance_choose_device(instance, NULL, &index));
  CHECK_OK(vkf_device_create(instance, index, &device));
  uint32_t in_range = messages_after(instance, device, 0);
  CHECK_MSG(in_range == 0, "an in-range kernel got %u messages", in_range);
  uint32_t past = messages_after(instance, device, 1);
  CHECK_MSG(past >= 1, "a write one element past the binding was not reported");
  vkf_device_destroy(device);
  vkf_instance_destroy(instance);
  return test_report();
}
