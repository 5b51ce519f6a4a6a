/* The subgroup size the choosers plan with is the one kernels run at (issue: AMD, Intel, Adreno
 * pick widths per pipeline; Mesa 22.3's lavapipe at 1024/2048-bit vectors reports 32/64 and runs
 * 16): a subgroup kernel's pipeline at its guaranteed size, the probe's correction where the
 * device misreports, a profile's size that the device cannot give left out, and a plan made for
 * another size refused with a reason instead of run wrong. Run at every LP_NATIVE_VECTOR_WIDTH. */
#include <string.h>

#include "graph/ir/builder.h"
#include "tests/gpu/op_check_caps.h"

/* Per invocation: (gl_NumSubgroups, subgroupAdd(1), gl_SubgroupID, gl_SubgroupInvocationID). */
static const char *LAYOUT =
    "#version 450\n"
    "#extension GL_KHR_shader_subgroup_basic : require\n"
    "#extension GL_KHR_shader_subgroup_arithmetic : require\n"
    "layout(local_size_x_id = 0) in;\n"
    "layout(std430, binding = 0) writeonly buffer O { uvec4 o[]; };\n"
    "void main() {\n"
    "  o[gl_LocalInvocationIndex] = uvec4(gl_NumSubgroups, subgroupAdd(1u), gl_SubgroupID,\n"
    "                                     gl_SubgroupInvocationID);\n"
    "}\n";

/* The width the device's subgroup kernels really run at, measured on a workgroup of `wg`. */
static uint32_t measured_width(gpu_test *t, uint32_t wg, int *consistent) {
  vkf_kernel_desc desc = {.shader = "subgroup_layout", .source = LAYOUT, .spec_constants = &wg,
                          .spec_constant_count = 1, .binding_count = 1};
  vkf_kernel *k = NULL;
  CHECK_OK(vkf_kernel_get(t->device, &desc, &k));
  size_t size = (size_t)wg * 16;
  vkf_buffer *b = NULL;
  CHECK_OK(vkf_buffer_create(t->device, size, "layout", &b));
  vkf_cmd *cmd = NULL;
  CHECK_OK(vkf_cmd_create(t->device, 0, &cmd));
  vkf_binding bind = {b, 0, 0};
  CHECK_OK(vkf_cmd_begin(cmd));
  CHECK_OK(vkf_cmd_dispatch(cmd, k, &bind, NULL, 1, 1, 1));
  CHECK_OK(vkf_cmd_end(cmd));
  CHECK_OK(vkf_cmd_submit_wait(cmd));
  uint32_t *o = malloc(size);
  CHECK_OK(vkf_buffer_download(t->device, b, 0, o, size));
  uint32_t width = o[1];
  *consistent = 1;
  for (uint32_t i = 0; i < wg; i++) /* one partition: subgroup i / width, lane i % width */
    *consistent &= o[4 * i] == (wg + width - 1) / width && o[4 * i + 2] == i / width &&
                   o[4 * i + 3] == i % width &&
                   o[4 * i + 1] == ((i / width + 1) * width <= wg ? width : wg % width);
  vkf_cmd_destroy(cmd);
  vkf_buffer_destroy(b);
  free(o);
  return width;
}

/* A layernorm of rows of `d` lowered with `caps`: checked against the interpreter, or refused. */
static vkf_graph *layernorm_graph(int64_t rows, int64_t d, vkf_value *x) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("sg_ln", &g));
  int64_t shape[2] = {rows, d};
  *x = vkf_graph_input(g, "x", VKF_F32, 2, shape);
  vkf_graph_output(g, vkf_layernorm(g, "ln", *x, NULL), "y");
  return g;
}

int main(void) {
  gpu_test t = gpu_test_start();
  const vkf_device_caps *caps = vkf_device_caps_get(t.device);
  uint32_t fixed = vkf_caps_subgroup_fixed(caps);
  fprintf(stderr, "device \"%s\": subgroup size %u (min %u, max %u, control %d, fixed %u, "
          "misreported %u)\n", caps->name, caps->subgroup_size, caps->min_subgroup_size,
          caps->max_subgroup_size, caps->subgroup_size_control, fixed, caps->subgroup_misreported);

  /* 1. Subgroup kernels run at the planned size (required of the pipeline), or the device was
   *    found to misreport and its measured width is what caps say. */
  for (uint32_t mult = 1; mult <= 4; mult *= 2) {
    uint32_t wg = caps->subgroup_size * mult;
    if (wg > caps->max_workgroup_invocations) break;
    int consistent = 0;
    uint32_t width = measured_width(&t, wg, &consistent);
    CHECK_MSG(width == caps->subgroup_size, "workgroup %u: subgroups of %u run, caps plan %u", wg,
              width, caps->subgroup_size);
    CHECK_MSG(consistent, "workgroup %u: the subgroup built-ins are not one partition", wg);
  }
  if (!fixed) CHECK_MSG(caps->subgroup_misreported || !caps->subgroup_size_control,
                        "a device with size control and no misreport must have a fixed size");

  float xv[6 * 197];
  op_fill_uniform(xv, 6 * 197, 3, -2.0f, 2.0f);
  /* 2. A profile that names another size (intel's 16, amd's 64) on a device that cannot give it
   *    keeps the device's: the row kernels still sum whole rows. */
  static const char *const profiles[] = {"intel", "amd", "nvidia", "adreno", "mali"};
  for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
    vkf_device_caps p = *caps;
    CHECK_OK(vkf_caps_apply_profile(&p, profiles[i]));
    CHECK_MSG(p.subgroup_size == caps->subgroup_size ||
                  (p.subgroup_size_control && p.subgroup_size >= p.min_subgroup_size &&
                   p.subgroup_size <= p.max_subgroup_size),
              "profile %s plans subgroups of %u the device cannot require", profiles[i],
              p.subgroup_size);
    vkf_value x;
    vkf_graph *g = layernorm_graph(6, 197, &x);
    vkf_input_binding in = {.value = x, .data = xv, .size = sizeof xv};
    op_check_caps(&t, g, &in, 1, &p, (op_tol){.atol = 2e-6, .rtol = 1e-4}, profiles[i]);
    vkf_graph_destroy(g);
  }

  /* 3. A plan made for twice the device's size (caps it does not have): refused, naming both. */
  uint32_t reduce = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_ARITHMETIC; /* one-subgroup rows need it */
  if (fixed && caps->kind == VKF_DEVICE_KIND_CPU && (caps->subgroup_ops & reduce) == reduce) {
    vkf_device_caps wide = *caps;
    wide.subgroup_size = wide.min_subgroup_size = wide.max_subgroup_size = 2 * fixed;
    vkf_value x;
    vkf_graph *g = layernorm_graph(6, 197, &x);
    vkf_input_binding in = {.value = x, .data = xv, .size = sizeof xv};
    float *out = NULL;
    CHECK_STATUS(op_run_device_caps(&t, g, &in, 1, &wide, &out), VKF_STATUS_UNSUPPORTED,
                 "planned for subgroups of");
    free(out);
    vkf_graph_destroy(g);
  }
  return gpu_test_finish(&t);
}
