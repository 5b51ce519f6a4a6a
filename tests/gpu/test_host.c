/* Host layer on lavapipe with validation: device, buffers, kernels, command lists, the shader
 * compiler's errors and caches, timestamps. */
#include <time.h>
#include <unistd.h>

#include "host/device_internal.h"
#include "host/shader_compiler.h"
#include "tests/gpu_util.h"

static void test_axpy(gpu_test *t) {
  enum { N = 1000000 };
  float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
  float *out = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 1000) * 0.5f;
    y[i] = (float)(i % 7) - 3.0f;
  }
  vkf_buffer *bx = NULL, *by = NULL;
  CHECK_OK(vkf_buffer_create(t->device, N * sizeof(float), "x", &bx));
  CHECK_OK(vkf_buffer_create(t->device, N * sizeof(float), "y", &by));
  CHECK_OK(vkf_buffer_upload(t->device, bx, 0, x, N * sizeof(float)));
  CHECK_OK(vkf_buffer_upload(t->device, by, 0, y, N * sizeof(float)));
  uint32_t wg = 256;
  vkf_kernel_desc desc = {.shader = "axpy.comp", .spec_constants = &wg, .spec_constant_count = 1,
                          .binding_count = 2, .push_constant_size = 8};
  vkf_kernel *k = NULL;
  CHECK_OK(vkf_kernel_get(t->device, &desc, &k));
  vkf_kernel *again = NULL;
  CHECK_OK(vkf_kernel_get(t->device, &desc, &again));
  CHECK(k == again); /* the in-memory kernel cache serves the same variant */
  struct { uint32_t n; float a; } push = {N, 2.0f};
  vkf_cmd *cmd = NULL;
  CHECK_OK(vkf_cmd_create(t->device, 2, &cmd));
  vkf_binding b[2] = {{bx, 0, 0}, {by, 0, 0}};
  CHECK_OK(vkf_cmd_begin(cmd));
  vkf_cmd_timestamp(cmd, 0);
  CHECK_OK(vkf_cmd_dispatch(cmd, k, b, &push, (N + wg - 1) / wg, 1, 1));
  vkf_cmd_timestamp(cmd, 1);
  CHECK_OK(vkf_cmd_end(cmd));
  CHECK_OK(vkf_cmd_submit_wait(cmd));
  CHECK_OK(vkf_buffer_download(t->device, by, 0, out, N * sizeof(float)));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != 2.0f * x[i] + y[i];
  CHECK_MSG(bad == 0, "%d of %d axpy results differ", bad, N);
  /* Submitting the same recording again applies it again: y = 2x + (2x + y). */
  CHECK_OK(vkf_cmd_submit_wait(cmd));
  CHECK_OK(vkf_buffer_download(t->device, by, 0, out, N * sizeof(float)));
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != 2.0f * x[i] + (2.0f * x[i] + y[i]);
  CHECK_MSG(bad == 0, "%d of %d results differ after re-submit", bad, N);
  double ns[2];
  CHECK_OK(vkf_cmd_timestamps_ns(cmd, 2, ns));
  CHECK(ns[1] > 0);
  vkf_cmd_destroy(cmd);
  vkf_buffer_destroy(bx);
  vkf_buffer_destroy(by);
  free(x), free(y), free(out);
}

static void test_reduction(gpu_test *t) {
  enum { N = 300007, GROUPS = 64 };
  float *x = malloc(N * sizeof(float));
  double expect = 0;
  for (int i = 0; i < N; i++) {
    x[i] = (float)((i * 37) % 101) - 50.0f; /* small integers: every partial sum is exact */
    expect += x[i];
  }
  vkf_buffer *bx = NULL, *bp = NULL;
  CHECK_OK(vkf_buffer_create(t->device, N * sizeof(float), "x", &bx));
  CHECK_OK(vkf_buffer_create(t->device, GROUPS * sizeof(float), "partials", &bp));
  CHECK_OK(vkf_buffer_upload(t->device, bx, 0, x, N * sizeof(float)));
  uint32_t wg = 128;
  vkf_kernel_desc desc = {.shader = "reduce_sum.comp", .spec_constants = &wg,
                          .spec_constant_count = 1, .binding_count = 2, .push_constant_size = 4};
  vkf_kernel *k = NULL;
  CHECK_OK(vkf_kernel_get(t->device, &desc, &k));
  vkf_cmd *cmd = NULL;
  CHECK_OK(vkf_cmd_create(t->device, 0, &cmd));
  uint32_t n = N;
  vkf_binding b[2] = {{bx, 0, 0}, {bp, 0, 0}};
  CHECK_OK(vkf_cmd_begin(cmd));
  CHECK_OK(vkf_cmd_dispatch(cmd, k, b, &n, GROUPS, 1, 1));
  CHECK_OK(vkf_cmd_end(cmd));
  CHECK_OK(vkf_cmd_submit_wait(cmd));
  float partial[GROUPS];
  CHECK_OK(vkf_buffer_download(t->device, bp, 0, partial, sizeof partial));
  double sum = 0;
  for (int i = 0; i < GROUPS; i++) sum += partial[i];
  CHECK_NEAR(sum, expect, 0.0);
  vkf_cmd_destroy(cmd);
  vkf_buffer_destroy(bx);
  vkf_buffer_destroy(bp);
  free(x);
}

static void test_compile_errors(gpu_test *t) {
  (void)t;
  vkf_shader_compiler *c = NULL;
  CHECK_OK(vkf_shader_compiler_create(&c));
  const char *broken =
      "#version 450\n"
      "layout(local_size_x = 1) in;\n"
      "void main() {\n"
      "  float x = undefined_name;\n"
      "}\n";
  uint32_t *words = NULL;
  size_t size = 0;
  vkf_status s = vkf_shader_compile(c, "broken.comp", broken, NULL, 0, &words, &size);
  CHECK(vkf_status_code_of(s) == VKF_STATUS_COMPILE);
  CHECK_MSG(strstr(vkf_status_message(s), "broken.comp:4:") != NULL, "message: %s",
            vkf_status_message(s));
  CHECK(strstr(vkf_status_message(s), "undefined_name") != NULL);
  vkf_status_free(s);
  const char *bad_include = "#version 450\n#extension GL_GOOGLE_include_directive : require\n"
                            "#include \"nope.glsl\"\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
  CHECK_STATUS(vkf_shader_compile(c, "inc.comp", bad_include, NULL, 0, &words, &size),
               VKF_STATUS_COMPILE, "nope.glsl");
  CHECK_STATUS(vkf_shader_compile(c, "missing.comp", NULL, NULL, 0, &words, &size),
               VKF_STATUS_NOT_FOUND, "missing.comp");
  vkf_shader_compiler_destroy(c);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A variant compiled by one device is served from the SPIR-V disk cache for the next. */
static void test_disk_cache(gpu_test *t) {
  char define_value[32];
  snprintf(define_value, sizeof define_value, "%ld", (long)time(NULL) ^ (long)getpid());
  vkf_shader_define unique = {"VKF_TEST_NONCE", define_value}; /* a key never seen before */
  uint32_t wg = 64;
  vkf_kernel_desc desc = {.shader = "axpy.comp", .defines = &unique, .define_count = 1,
                          .spec_constants = &wg, .spec_constant_count = 1, .binding_count = 2,
                          .push_constant_size = 8};
  vkf_device_stats before = vkf_device_stats_get(t->device);
  vkf_kernel *k = NULL;
  double t0 = now_ms();
  CHECK_OK(vkf_kernel_get(t->device, &desc, &k));
  double cold = now_ms() - t0;
  vkf_device_stats after = vkf_device_stats_get(t->device);
  CHECK(after.spirv_compiles == before.spirv_compiles + 1);

  uint32_t index = 0;
  vkf_device *second = NULL;
  CHECK_OK(vkf_instance_choose_device(t->instance, NULL, &index));
  CHECK_OK(vkf_device_create(t->instance, index, &second));
  t0 = now_ms();
  CHECK_OK(vkf_kernel_get(second, &desc, &k));
  double warm = now_ms() - t0;
  vkf_device_stats s2 = vkf_device_stats_get(second);
  CHECK_MSG(s2.spirv_disk_hits == 1 && s2.spirv_compiles == 0,
            "disk hits %u, compiles %u (cache dir %s)", s2.spirv_disk_hits, s2.spirv_compiles,
            "VKF_CACHE_DIR");
  fprintf(stderr, "kernel creation: cold %.2f ms (compile + pipeline), warm %.2f ms (disk cache)\n",
          cold, warm);
  vkf_device_destroy(second);
}

static void test_limits(gpu_test *t) {
  const vkf_device_caps *caps = vkf_device_caps_get(t->device);
  vkf_buffer *b = NULL;
  CHECK_STATUS(vkf_buffer_create(t->device, caps->max_memory_allocation_size + 1, "huge", &b),
               VKF_STATUS_OUT_OF_MEMORY, "maxMemoryAllocationSize");
  CHECK(b == NULL);
  CHECK_STATUS(vkf_buffer_create(t->device, 0, "empty", &b), VKF_STATUS_INVALID_ARGUMENT, "zero");
  CHECK_OK(vkf_buffer_create(t->device, 64, "small", &b));
  float data[16] = {0};
  CHECK_STATUS(vkf_buffer_upload(t->device, b, 32, data, 64), VKF_STATUS_INVALID_ARGUMENT,
               "outside");
  vkf_buffer_destroy(b);
}

/* The message counter really counts: a deliberately invalid call on a second instance is seen. */
static void test_validation_counts(void) {
  vkf_instance_options options = {.validate = 1};
  vkf_instance *instance = NULL;
  vkf_device *device = NULL;
  CHECK_OK(vkf_instance_create(&options, &instance));
  CHECK_OK(vkf_device_create(instance, 0, &device));
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = 0, /* VUID-VkBufferCreateInfo-size-00912 */
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
  VkBuffer buffer = VK_NULL_HANDLE;
  fprintf(stderr, "expect one validation error below:\n");
  if (device->vk.vkCreateBuffer(device->handle, &info, NULL, &buffer) == VK_SUCCESS && buffer)
    device->vk.vkDestroyBuffer(device->handle, buffer, NULL);
  CHECK(vkf_instance_validation_message_count(instance) > 0);
  vkf_device_destroy(device);
  vkf_instance_destroy(instance);
}

int main(void) {
  test_validation_counts();
  gpu_test t = gpu_test_start();
  test_axpy(&t);
  test_reduction(&t);
  test_compile_errors(&t);
  test_disk_cache(&t);
  test_limits(&t);
  return gpu_test_finish(&t);
}
