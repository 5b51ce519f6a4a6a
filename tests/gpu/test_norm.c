/* Layernorm, RMSNorm and L2 normalisation on the device vs the CPU interpreter (one-node graphs
 * through the whole path): odd and one-element rows, many rows, long rows, f16 storage, strided
 * (permuted) inputs, absent/present gamma and beta, large means, all-zero rows (eps clamps). */
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/passes/memory_plan.h"
#include "tests/gpu/op_check_caps.h"

/* Tolerance table: |gpu - ref| <= atol + rtol * |ref|. The reference accumulates in fp64, the
 * kernel in fp32 (two-pass statistics); f16 outputs may differ by one rounding of the result
 * (2^-10 relative), plus fp32 noise. */
static const op_tol TOL_F32 = {.atol = 2e-6, .rtol = 1e-4};
static const op_tol TOL_F16 = {.atol = 1e-5, .rtol = 1.5e-3};

enum { ZERO_ROW = 1, OUTLIER = 2 };

typedef struct norm_case {
  const char *label;
  vkf_op op;
  vkf_dtype dtype;       /* x and y */
  vkf_dtype param_dtype; /* gamma and beta */
  uint32_t rank;
  int64_t shape[4]; /* of the node's input x (after the permute, when permuted) */
  int gamma, beta;
  float eps;          /* 0: builder default */
  float mean, spread; /* x ~ mean + U(-spread, spread) */
  int permuted;       /* x is a permuted view: last axis has stride != 1 */
  int special;        /* ZERO_ROW: row 0 is all zeros; OUTLIER: column 0 of every row is
                         mean + 1000 (the kernel's shift lands on an outlier) */
} norm_case;

static void *pack(const float *v, size_t n, vkf_dtype dtype, size_t *out_size) {
  *out_size = n * vkf_dtype_size(dtype);
  void *p = malloc(*out_size + 16);
  if (dtype == VKF_F16)
    op_to_half(v, p, n);
  else
    memcpy(p, v, n * sizeof(float));
  return p;
}

/* caps NULL: the device's own caps (op_check); otherwise lowered with `caps`. */
static void run_case(gpu_test *t, const norm_case *c, const vkf_device_caps *caps) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create(c->label, &g));
  int64_t count = 1;
  for (uint32_t k = 0; k < c->rank; k++) count *= c->shape[k];
  int64_t d = c->shape[c->rank - 1];
  /* The stored input: for a permuted case the last two dims are swapped in memory. */
  int64_t in_shape[4];
  memcpy(in_shape, c->shape, sizeof in_shape);
  uint32_t axes[4] = {0, 1, 2, 3};
  if (c->permuted) {
    in_shape[c->rank - 1] = c->shape[c->rank - 2];
    in_shape[c->rank - 2] = c->shape[c->rank - 1];
    axes[c->rank - 1] = c->rank - 2;
    axes[c->rank - 2] = c->rank - 1;
  }
  vkf_value x_in = vkf_graph_input(g, "x", c->dtype, c->rank, in_shape);
  vkf_value x = c->permuted ? vkf_permute(g, "xt", x_in, axes) : x_in;

  float *xv = malloc((size_t)count * sizeof(float));
  op_fill_uniform(xv, (size_t)count, 17u + (uint32_t)count, c->mean - c->spread,
                  c->mean + c->spread);
  int64_t rows = count / d;
  if (c->special == ZERO_ROW) /* row 0: x_in[0, ..., j, 0] when permuted */
    for (int64_t j = 0; j < d; j++) xv[c->permuted ? j * c->shape[c->rank - 2] : j] = 0.0f;
  if (c->special == OUTLIER && !c->permuted)
    for (int64_t r = 0; r < rows; r++) xv[r * d] = c->mean + 1000.0f;
  float *gv = malloc((size_t)d * sizeof(float)), *bv = malloc((size_t)d * sizeof(float));
  op_fill_uniform(gv, (size_t)d, 5, 0.5f, 2.0f);
  op_fill_uniform(bv, (size_t)d, 7, -1.0f, 1.0f);
  size_t x_size, g_size, b_size;
  void *xd = pack(xv, (size_t)count, c->dtype, &x_size);
  void *gd = pack(gv, (size_t)d, c->param_dtype, &g_size);
  void *bd = pack(bv, (size_t)d, c->param_dtype, &b_size);

  vkf_norm_options o = {.eps = c->eps};
  if (c->gamma) o.gamma = vkf_graph_constant(g, "gamma", c->param_dtype, 1, &d, gd);
  if (c->beta) o.beta = vkf_graph_constant(g, "beta", c->param_dtype, 1, &d, bd);
  vkf_value y = c->op == VKF_OP_LAYERNORM ? vkf_layernorm(g, "norm", x, &o)
                : c->op == VKF_OP_RMSNORM ? vkf_rmsnorm(g, "norm", x, &o)
                                          : vkf_l2_normalize(g, "norm", x, c->eps);
  vkf_graph_output(g, y, "y");
  vkf_input_binding in = {.value = x_in, .data = xd, .size = x_size};
  op_tol tol = c->dtype == VKF_F16 ? TOL_F16 : TOL_F32;
  if (caps)
    op_check_caps(t, g, &in, 1, caps, tol, c->label);
  else
    op_check(t, g, &in, 1, tol, c->label);
  vkf_graph_destroy(g);
  free(xv), free(gv), free(bv), free(xd), free(gd), free(bd);
}

/* A status, not a crash, for what the kernel cannot take; the message names the node. */
static void check_errors(gpu_test *t) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("errors", &g));
  int64_t shape[2] = {2, 8};
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, shape);
  vkf_graph_output(g, vkf_layernorm(g, "ln_ok", x, NULL), "y");
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  vkf_device_caps caps = *vkf_device_caps_get(t->device);
  caps.max_workgroup_count[1] = 1;
  caps.max_workgroup_count[0] = 1; /* 2 rows cannot fit a 1x1 grid */
  vkf_lowered low;
  CHECK_STATUS(vkf_lower_graph(g, &caps, NULL, &low), VKF_STATUS_UNSUPPORTED, "ln_ok");
  vkf_graph_destroy(g);

  CHECK_OK(vkf_graph_create("errors_f16", &g));
  x = vkf_graph_input(g, "x", VKF_F16, 2, shape);
  vkf_graph_output(g, vkf_rmsnorm(g, "rms_half", x, NULL), "y");
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  caps = *vkf_device_caps_get(t->device);
  caps.storage_16bit = 0;
  CHECK_STATUS(vkf_lower_graph(g, &caps, NULL, &low), VKF_STATUS_UNSUPPORTED, "rms_half");
  vkf_graph_destroy(g);
}

int main(void) {
  gpu_test t = gpu_test_start();
  const vkf_op LN = VKF_OP_LAYERNORM, RMS = VKF_OP_RMSNORM, L2 = VKF_OP_L2_NORMALIZE;
  /* clang-format off */
  const norm_case cases[] = {
      /* label op dtype params rank shape | gamma beta eps mean spread | permuted special */
      {"ln_d1",              LN,  VKF_F32, VKF_F32, 2, {4, 1}, 1, 1, 0, 0, 1, 0, 0},
      {"ln_d3",              LN,  VKF_F32, VKF_F32, 2, {5, 3}, 1, 1, 0, 0, 1, 0, 0},
      {"ln_d31_nogb",        LN,  VKF_F32, VKF_F32, 2, {7, 31}, 0, 0, 0, 0, 1, 0, 0},
      {"ln_d197_gamma",      LN,  VKF_F32, VKF_F32, 3, {2, 3, 197}, 1, 0, 1e-6f, 0, 3, 0, 0},
      {"ln_d769_mean100",    LN,  VKF_F32, VKF_F32, 2, {9, 769}, 1, 1, 0, 100, 1, 0, 0},
      {"ln_many_rows",       LN,  VKF_F32, VKF_F32, 3, {2, 197, 768}, 1, 1, 1e-12f, 0, 2, 0, 0},
      {"ln_long_5000",       LN,  VKF_F32, VKF_F32, 2, {3, 5000}, 1, 1, 0, 1, 1, 0, 0},
      {"ln_rank4",           LN,  VKF_F32, VKF_F32, 4, {2, 3, 4, 33}, 1, 1, 0, 0, 1, 0, 0},
      {"ln_permuted",        LN,  VKF_F32, VKF_F32, 3, {2, 12, 31}, 1, 1, 0, 0, 1, 1, 0},
      {"ln_permuted_d32",        LN,  VKF_F32, VKF_F32, 3, {3, 5, 32}, 1, 1, 0, 0, 1, 1, 0},
      {"ln_outlier_vec4",    LN,  VKF_F32, VKF_F32, 2, {6, 768}, 1, 1, 0, 0, 1, 0, OUTLIER},
      {"ln_outlier_odd",     LN,  VKF_F32, VKF_F32, 2, {6, 197}, 1, 1, 0, 50, 1, 0, OUTLIER},
      {"ln_f16",             LN,  VKF_F16, VKF_F16, 3, {2, 197, 768}, 1, 1, 0, 0, 2, 0, 0},
      {"ln_f16_f32params",   LN,  VKF_F16, VKF_F32, 2, {6, 769}, 1, 1, 0, 0.5f, 2, 0, 0},
      {"ln_f32_f16params",   LN,  VKF_F32, VKF_F16, 2, {6, 31}, 1, 1, 0, 0, 1, 0, 0},
      {"ln_zero_row",        LN,  VKF_F32, VKF_F32, 2, {3, 64}, 1, 1, 0, 0, 1, 0, ZERO_ROW},
      {"rms_d1",             RMS, VKF_F32, VKF_F32, 2, {4, 1}, 1, 0, 0, 0, 1, 0, 0},
      {"rms_d197",           RMS, VKF_F32, VKF_F32, 2, {11, 197}, 1, 0, 0, 0, 2, 0, 0},
      {"rms_nogamma_769",    RMS, VKF_F32, VKF_F32, 2, {5, 769}, 0, 0, 1e-5f, 0, 1, 0, 0},
      {"rms_long_4096",      RMS, VKF_F32, VKF_F32, 2, {4, 4096}, 1, 0, 0, 0, 1, 0, 0},
      {"rms_f16",            RMS, VKF_F16, VKF_F16, 3, {3, 50, 384}, 1, 0, 0, 0, 4, 0, 0},
      {"rms_zero_row",       RMS, VKF_F32, VKF_F32, 2, {2, 31}, 0, 0, 0, 0, 1, 0, ZERO_ROW},
      {"l2_d1",              L2,  VKF_F32, VKF_F32, 2, {6, 1}, 0, 0, 0, 0, 1, 0, 0},
      {"l2_d3_zero_row",     L2,  VKF_F32, VKF_F32, 2, {5, 3}, 0, 0, 0, 0, 1, 0, ZERO_ROW},
      {"l2_d384_eps",        L2,  VKF_F32, VKF_F32, 2, {8, 384}, 0, 0, 30.0f, 0, 1, 0, 0},
      {"l2_long_8192",       L2,  VKF_F32, VKF_F32, 1, {8192}, 0, 0, 0, 0.2f, 1, 0, 0},
      {"l2_many_short_rows", L2, VKF_F32, VKF_F32, 2, {66000, 3}, 0, 0, 0, 0, 1, 0, 0},
      {"l2_f16_permuted",    L2,  VKF_F16, VKF_F16, 3, {3, 10, 197}, 0, 0, 0, 0, 1, 1, ZERO_ROW},
  };
  /* clang-format on */

  /* Once with the device's caps (lavapipe: one subgroup per row), once as a discrete GPU would
   * lower them (up to 256 invocations: multi-subgroup or, under the mobile profile, 128-wide
   * shared-memory reductions). */
  vkf_device_caps gpu_like = op_caps_gpu_like(&t);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&t, &cases[i], NULL);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&t, &cases[i], &gpu_like);
  check_errors(&t);
  return gpu_test_finish(&t);
}
