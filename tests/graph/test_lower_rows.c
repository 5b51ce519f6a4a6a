/* The row kernels' choosers without a GPU: which variant (defines, workgroup size, vector path),
 * grid and push-constant layout layernorm/RMSNorm/L2 and softmax lower to for desktop, mobile-
 * profile and CPU caps, and the statuses for what they cannot take. */
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "tests/graph/desktop_caps.h"
#include "tests/test_util.h"

static int has_define(const vkf_plan_dispatch *d, const char *name) {
  for (uint32_t i = 0; i < d->define_count; i++)
    if (strcmp(d->defines[i], name) == 0) return 1;
  return 0;
}

/* What the checks read of a lowered row-kernel dispatch (the plan's strings die with the plan). */
typedef struct row_dispatch {
  vkf_plan_dispatch d;      /* the first dispatch; strings cleared */
  uint32_t count;           /* dispatches of the node */
  uint32_t partials_buffer; /* split softmax: the scratch buffer the first writes, second reads */
  int subgroup_reduce, x_f16, p_f16, bias_f16;
} row_dispatch;

/* Lowers `g` (one row-kernel node) with `caps`; its first dispatch goes to *out. */
static vkf_status lower_one(vkf_graph *g, const vkf_device_caps *caps, row_dispatch *out) {
  memset(out, 0, sizeof *out);
  VKF_RETURN_IF_ERROR(vkf_graph_status(g));
  VKF_RETURN_IF_ERROR(vkf_memory_plan_build(g, NULL));
  vkf_lowered low;
  VKF_RETURN_IF_ERROR(vkf_lower_graph(g, caps, NULL, &low));
  out->count = vkf_plan_dispatch_count(low.plan);
  const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, 0);
  out->d = *d;
  out->partials_buffer = UINT32_MAX;
  if (out->count == 2) {
    /* The partials pass writes binding 4, the merge reads it; a barrier separates them. */
    const vkf_plan_dispatch *m = vkf_plan_dispatch_get(low.plan, 1);
    CHECK(d->binding_count == 5 && m->binding_count == 5 &&
          d->bindings[4].access == VKF_ACCESS_WRITE && m->bindings[4].access == VKF_ACCESS_READ &&
          d->bindings[4].buffer == m->bindings[4].buffer && m->barrier_before && d->spec[7] == 1 &&
          m->spec[7] == 2 && m->bindings[1].access == VKF_ACCESS_WRITE);
    const vkf_plan_buffer *pb = vkf_plan_buffer_get(low.plan, d->bindings[4].buffer);
    CHECK(pb->kind == VKF_PLAN_BUFFER_SCRATCH);
    out->partials_buffer = d->bindings[4].buffer;
  }
  out->subgroup_reduce = has_define(d, "SUBGROUP_REDUCE");
  out->x_f16 = has_define(d, "X_F16");
  out->p_f16 = has_define(d, "P_F16");
  out->bias_f16 = has_define(d, "BIAS_F16");
  out->d.node = out->d.shader = out->d.source = NULL;
  out->d.define_count = 0;
  vkf_lowered_free(&low);
  return VKF_OK;
}

static vkf_graph *layernorm_graph(vkf_dtype dtype, uint32_t rank, const int64_t *shape,
                                  int permuted) {
  vkf_graph *g = NULL;
  vkf_graph_create("ln", &g);
  vkf_value x = vkf_graph_input(g, "x", dtype, rank, shape);
  if (permuted) {
    uint32_t axes[2] = {1, 0};
    x = vkf_permute(g, "xt", x, axes);
  }
  int64_t d = vkf_graph_tensor(g, x)->shape[rank - 1];
  vkf_norm_options o = {.gamma = vkf_graph_constant(g, "gamma", VKF_F32, 1, &d, NULL)};
  vkf_graph_output(g, vkf_layernorm(g, "ln_node", x, &o), "y");
  return g;
}

static void check_norm(void) {
  vkf_device_caps desk = desktop_caps(), mobile = desktop_caps(), cpu = desktop_caps();
  CHECK_OK(vkf_caps_apply_profile(&mobile, "mobile"));
  cpu.kind = VKF_DEVICE_KIND_CPU;
  cpu.subgroup_size = 8;
  row_dispatch r;

  int64_t vit[2] = {197, 768};
  vkf_graph *g = layernorm_graph(VKF_F32, 2, vit, 0);
  CHECK_OK(lower_one(g, &desk, &r));
  /* 768 / 4 per invocation -> 256; subgroup reduction; vec4 rows; one row per workgroup. */
  CHECK(r.d.spec_count == 7 && r.d.spec[0] == 256 && r.d.spec[1] == 0 && r.d.spec[2] == 1 &&
        r.d.spec[3] == 0 && r.d.spec[4] == 1 && r.d.spec[5] == 1 && r.d.spec[6] == 0);
  CHECK(r.subgroup_reduce && !r.x_f16);
  CHECK(r.d.groups[0] == 197 && r.d.groups[1] == 1 && r.d.groups[2] == 1);
  CHECK(r.count == 1 && r.d.binding_count == 4 && r.d.push_size == 80);
  CHECK_OK(lower_one(g, &mobile, &r));
  CHECK(r.d.spec[0] == 128 && !r.subgroup_reduce);
  CHECK_OK(lower_one(g, &cpu, &r));
  /* A CPU device: one subgroup per workgroup, reductions without barriers. */
  CHECK(r.d.spec[0] == 8 && r.subgroup_reduce && r.d.spec[5] == 1 && r.d.spec[6] == 1);
  vkf_graph_destroy(g);

  /* Short rows are batched: ~1024 elements per workgroup, while leaving 1024 workgroups on a GPU
   * (5000 / 1024 -> 4 rows each) or 64 on a CPU device (1024 / 31 -> 33 rows each). */
  int64_t short_rows[2] = {5000, 31};
  g = layernorm_graph(VKF_F32, 2, short_rows, 0);
  CHECK_OK(lower_one(g, &desk, &r));
  CHECK(r.d.spec[5] == 4 && r.d.groups[0] == 1250);
  CHECK_OK(lower_one(g, &cpu, &r));
  CHECK(r.d.spec[5] == 33 && r.d.groups[0] == 152);
  vkf_graph_destroy(g);

  /* Odd rows and strided rows take the scalar path; short rows a small workgroup. */
  int64_t odd[2] = {5, 31};
  g = layernorm_graph(VKF_F16, 2, odd, 0);
  CHECK_OK(lower_one(g, &desk, &r));
  CHECK(r.d.spec[0] == 32 && r.d.spec[4] == 0 && r.x_f16 && !r.p_f16);
  vkf_graph_destroy(g);
  int64_t wide[2] = {64, 8};
  g = layernorm_graph(VKF_F32, 2, wide, 1); /* x [8, 64] with row stride 1, column stride 8 */
  CHECK_OK(lower_one(g, &desk, &r));
  CHECK(r.d.spec[4] == 0);
  vkf_graph_destroy(g);

  /* More workgroups than grid x holds: a 2-D grid. */
  int64_t many[2] = {70000, 2048};
  g = layernorm_graph(VKF_F32, 2, many, 0);
  CHECK_OK(lower_one(g, &desk, &r));
  CHECK(r.d.groups[0] == 65535 && r.d.groups[1] == 2);
  vkf_device_caps tiny = desk;
  tiny.max_workgroup_count[1] = 1;
  CHECK_STATUS(lower_one(g, &tiny, &r), VKF_STATUS_UNSUPPORTED, "ln_node");
  vkf_graph_destroy(g);

  /* f16 without 16-bit storage: a status naming the node. */
  g = layernorm_graph(VKF_F16, 2, odd, 0);
  vkf_device_caps no16 = desk;
  no16.storage_16bit = 0;
  CHECK_STATUS(lower_one(g, &no16, &r), VKF_STATUS_UNSUPPORTED, "ln_node");
  vkf_graph_destroy(g);
}

static void check_softmax(void) {
  vkf_device_caps desk = desktop_caps(), mobile = desktop_caps();
  CHECK_OK(vkf_caps_apply_profile(&mobile, "mobile"));
  row_dispatch r;
  vkf_graph *g = NULL;

  /* ViT scores [1, 12, 197, 197] with a [1, 12, 197, 197] bias and per-batch valid lengths. */
  int64_t s[4] = {1, 12, 197, 197}, b1[1] = {1};
  vkf_graph_create("sm", &g);
  vkf_softmax_options o = {.scale = 0.125f, .causal = 1};
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 4, s);
  o.bias = vkf_graph_input(g, "bias", VKF_F16, 4, s);
  o.valid_lens = vkf_graph_input(g, "vl", VKF_I32, 1, b1);
  vkf_graph_output(g, vkf_softmax(g, "sm_node", x, &o), "y");
  CHECK_OK(lower_one(g, &desk, &r));
  /* 197 / 8 per invocation -> 32; bias, per-batch lengths, causal; vec4 with an in-phase bias. */
  CHECK(r.d.spec_count == 10 && r.d.spec[0] == 32 && r.d.spec[1] == 1 && r.d.spec[2] == 1 &&
        r.d.spec[3] == 0 && r.d.spec[4] == 1 && r.d.spec[5] == 1 && r.d.spec[6] == 1 &&
        r.d.spec[7] == 0 && r.d.spec[8] == 2 && r.d.spec[9] == 0);
  CHECK(r.bias_f16 && r.subgroup_reduce && r.d.push_size == 108);
  /* 2364 rows of 197: 2 per workgroup keeps 1182 workgroups. */
  CHECK(r.count == 1 && r.d.groups[0] == 1182 && r.d.groups[2] == 1 && r.d.binding_count == 5);
  CHECK_OK(lower_one(g, &mobile, &r));
  CHECK(!r.subgroup_reduce);
  vkf_graph_destroy(g);

  /* 24 long rows cannot fill a GPU: 16 chunks of 2052 columns (>= 2048, a multiple of 4) per
   * row, the largest workgroup the caps allow; a key-padding bias [B, 1, 1, N] is out of phase
   * with x's rows unless N % 4 == 0. */
  int64_t lx[4] = {2, 4, 3, 32769}, lb[4] = {2, 1, 1, 32769};
  vkf_graph_create("sm_long", &g);
  o = (vkf_softmax_options){.bias = vkf_graph_input(g, "bias", VKF_F32, 4, lb)};
  x = vkf_graph_input(g, "x", VKF_F32, 4, lx);
  vkf_graph_output(g, vkf_softmax(g, "sm_long", x, &o), "y");
  CHECK_OK(lower_one(g, &desk, &r));
  CHECK(r.d.spec[0] == 256 && r.d.spec[5] == 1 && r.d.spec[6] == 0);
  CHECK(r.count == 2 && r.d.groups[0] == 24 && r.d.groups[2] == 16);
  uint32_t chunk;
  memcpy(&chunk, r.d.push + 104, 4);
  CHECK(chunk == 2052);
  CHECK_OK(lower_one(g, &mobile, &r));
  CHECK(r.d.spec[0] == 128 && r.count == 2);
  vkf_graph_destroy(g);

  /* A CPU device splits only until its cores have work: 16 workgroups. */
  vkf_device_caps cpu = desktop_caps();
  cpu.kind = VKF_DEVICE_KIND_CPU;
  cpu.subgroup_size = 8;
  int64_t one[2] = {1, 32768}, sixteen[2] = {16, 32768};
  vkf_graph_create("sm_one", &g);
  vkf_graph_output(g, vkf_softmax(g, "sm_one", vkf_graph_input(g, "x", VKF_F32, 2, one), NULL),
                   "y");
  CHECK_OK(lower_one(g, &cpu, &r));
  CHECK(r.count == 2 && r.d.groups[2] == 16 && r.d.spec[0] == 8 && r.d.spec[9] == 1);
  vkf_graph_destroy(g);
  vkf_graph_create("sm_sixteen", &g);
  vkf_graph_output(
      g, vkf_softmax(g, "sm_sixteen", vkf_graph_input(g, "x", VKF_F32, 2, sixteen), NULL), "y");
  CHECK_OK(lower_one(g, &cpu, &r));
  CHECK(r.count == 1 && r.d.groups[2] == 1);
  vkf_graph_destroy(g);

  /* A transposed view has strided rows: scalar path. */
  int64_t t[2] = {16, 6};
  uint32_t axes[2] = {1, 0};
  vkf_graph_create("sm_t", &g);
  x = vkf_permute(g, "xt", vkf_graph_input(g, "x", VKF_F32, 2, t), axes);
  vkf_graph_output(g, vkf_softmax(g, "sm_t", x, NULL), "y");
  CHECK_OK(lower_one(g, &desk, &r));
  CHECK(r.d.spec[5] == 0 && r.d.spec[1] == 0 && r.d.spec[2] == 0 && r.d.spec[4] == 0);
  vkf_graph_destroy(g);
}

int main(void) {
  check_norm();
  check_softmax();
  return test_report();
}
