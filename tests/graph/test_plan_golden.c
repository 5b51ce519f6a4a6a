/* The plan of a small attention block, lowered for three device classes without any GPU: a
 * CPU device like lavapipe, a desktop GPU, and the mobile profile. The stable text dump (counts of
 * dispatches and barriers, kernels with their defines and specialization constants, bindings)
 * must match tests/graph/golden/plan_*.txt; VKF_UPDATE_GOLDEN=1 rewrites them. */
#include <stdlib.h>
#include <string.h>

#include "graph/base/caps.h"
#include "graph/base/env.h"
#include "graph/lower/lower.h"
#include "graph/passes/passes.h"
#include "tests/graph/small_block.h"

/* Limits as lavapipe (Mesa 22.3, AVX2) reports them. */
static vkf_device_caps cpu_caps(void) {
  vkf_device_caps c = {.kind = VKF_DEVICE_KIND_CPU,
                       .max_shared_memory_size = 32768,
                       .subgroup_size = 8,
                       .min_subgroup_size = 8,
                       .max_subgroup_size = 8,
                       .subgroup_size_control = 1,
                       .subgroup_ops = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_VOTE |
                                       VKF_SUBGROUP_ARITHMETIC | VKF_SUBGROUP_BALLOT |
                                       VKF_SUBGROUP_SHUFFLE | VKF_SUBGROUP_SHUFFLE_RELATIVE |
                                       VKF_SUBGROUP_QUAD,
                       .max_workgroup_size = {1024, 1024, 1024},
                       .max_workgroup_invocations = 1024,
                       .max_workgroup_count = {65535, 65535, 65535},
                       .max_push_constants_size = 256,
                       .min_storage_buffer_offset_alignment = 16,
                       .max_storage_buffer_range = 128u << 20,
                       .max_memory_allocation_size = 2ull << 30,
                       .texel_rgba32f = 1,
                       .texel_rgba16f = 1,
                       .texel_rgba16ui = 1,
                       .max_texel_buffer_elements = 134217728,
                       .min_texel_buffer_offset_alignment = 16,
                       .fp16_arithmetic = 1,
                       .storage_16bit = 1,
                       .storage_8bit = 1,
                       .timestamps = 1,
                       .timestamp_period = 1};
  strcpy(c.name, "lavapipe-like");
  return c;
}

/* A desktop discrete GPU (NVIDIA-class limits). */
static vkf_device_caps gpu_caps(void) {
  vkf_device_caps c = cpu_caps();
  strcpy(c.name, "discrete-gpu-like");
  c.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
  c.max_shared_memory_size = 49152;
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = 32;
  c.subgroup_ops |= VKF_SUBGROUP_CLUSTERED;
  c.max_workgroup_size[2] = 64;
  c.max_workgroup_count[0] = 0x7fffffff;
  c.max_storage_buffer_range = 0xffffffffu;
  return c;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) == (size_t)n) s[n] = 0;
  fclose(f);
  return s;
}

static void check_plan(const char *label, vkf_device_caps caps, const char *skip) {
  vkf_graph *g = small_block();
  vkf_pass_options po = {.skip = skip ? skip : ""};
  CHECK_OK(vkf_passes_run(g, &po, NULL));
  vkf_lowered low;
  vkf_status st = vkf_lower_graph(g, &caps, NULL, &low);
  CHECK_MSG(st == VKF_OK, "%s: %s", label, vkf_status_message(st));
  if (st) {
    vkf_status_free(st);
    vkf_graph_destroy(g);
    return;
  }
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  vkf_plan_dump_text(low.plan, f);
  fclose(f);
  /* The header line states the counts the plan really has. */
  char header[128];
  snprintf(header, sizeof header, "plan: %u buffers, %u dispatches, %u barriers\n",
           vkf_plan_buffer_count(low.plan), vkf_plan_dispatch_count(low.plan),
           vkf_plan_barrier_count(low.plan));
  CHECK(strncmp(text, header, strlen(header)) == 0);
  char path[256];
  snprintf(path, sizeof path, "tests/graph/golden/plan_%s.txt", label);
  if (vkf_env_get()->update_golden) {
    FILE *out = fopen(path, "wb");
    CHECK(out && fwrite(text, 1, size, out) == size);
    if (out) fclose(out);
  } else {
    char *golden = read_file(path);
    CHECK_MSG(golden && strcmp(golden, text) == 0,
              "%s differs from this plan (VKF_UPDATE_GOLDEN=1 regenerates):\n%s", path, text);
    free(golden);
  }
  free(text);
  vkf_lowered_free(&low);
  vkf_graph_destroy(g);
}

int main(void) {
  vkf_device_caps mobile = cpu_caps();
  CHECK_OK(vkf_caps_apply_profile(&mobile, "mobile"));
  check_plan("cpu", cpu_caps(), NULL);
  check_plan("gpu", gpu_caps(), NULL);
  check_plan("mobile", mobile, NULL);
  check_plan("cpu_unfused", cpu_caps(), "attention");
  return test_report();
}
