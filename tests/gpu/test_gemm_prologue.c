/* The matmul's A prologues against the CPU interpreter: RMSNorm (graph/passes/fuse_norm.c,
 * shaders/gemm.comp A_RMSNORM), rmsnorm(x, gamma) -> matmul, and the gated MLP's
 * (graph/passes/fuse_glu.c, A_GLU), act(gu[..., :K]) * gu[..., K:] -> matmul, after the passes:
 * decode row counts (1..8) and batched A, f32 and quantised weights, K with and without vec4
 * loads, bias and residual epilogues, on each kernel shape the choosers give (the device's CPU
 * kernels with and without texel views, GPU tiles, the GEMV with subgroupAdd or a shared tree,
 * narrow workgroups, the mobile profile: the norm's sums with and without subgroup
 * arithmetic). With the engines' quant_norm_rows on a device that runs quantised weights in the
 * quantised CPU kernel (8-wide subgroups: lavapipe's default), the norm folds at any rows there
 * (the kernel sums the squares in its own loop), every format's body: 16 and 21 rows, two row
 * blocks of 8 and a partial one. The GLU epilogue likewise (quant_glu_epilogue: a gate+up matmul
 * of quantised weights computes act(gate) * up itself, gemm_qcpu.glsl's C_GLU), with and without
 * the norm folded before it, at 1 to 21 rows. */
#include <stdint.h>
#include <string.h>

#include "graph/base/half.h"
#include "graph/base/quant.h"
#include "graph/ir/builder.h"
#include "graph/lower/lower_matmul.h"
#include "graph/passes/passes.h"
#include "tests/op_harness.h"

/* x is U(-1, 1), so rows are scaled up by ~1.7 before the weights: fp32 sums over K in another
 * order than the interpreter's fp64. */
static const op_tol TOL = {.atol = 5e-4, .rtol = 2e-4};

static uint32_t rng_state = 7;
static uint32_t rng(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}

/* `rows` rows of `k` elements of format f: random bytes with finite f16 scales. */
static uint8_t *random_blocks(vkf_quant_format f, int64_t rows, int64_t k) {
  vkf_quant_layout l = vkf_quant_layout_of(f);
  size_t blocks = (size_t)(rows * k / l.block), size = blocks * l.bytes;
  uint8_t *b = malloc(size + 4);
  for (size_t i = 0; i < size; i++) b[i] = (uint8_t)rng();
  for (size_t i = 0; i < blocks; i++) {
    uint8_t *blk = b + i * l.bytes;
    uint16_t d = vkf_float_to_half(0.002f + (float)(rng() % 1000) * 0.00005f);
    uint16_t m = vkf_float_to_half(((float)(rng() % 1000) - 500) * 0.001f);
    int at = f == VKF_QUANT_Q6_K ? 208 : 0;
    blk[at] = (uint8_t)(d & 0xFF), blk[at + 1] = (uint8_t)(d >> 8);
    if (f == VKF_QUANT_Q4_1 || f == VKF_QUANT_Q5_1 || f == VKF_QUANT_Q4_K)
      blk[2] = (uint8_t)(m & 0xFF), blk[3] = (uint8_t)(m >> 8);
  }
  return b;
}

enum { STEERS = 7 };
static vkf_device_caps steer(const vkf_device_caps *dev, int which, const char **name) {
  static const char *const names[STEERS] = {"device",       "device no texel", "tiled discrete",
                                            "gemv subgroup", "gemv tree",      "gemv wg32",
                                            "mobile"};
  vkf_device_caps c = *dev;
  *name = names[which];
  if (which == 1) c.texel_rgba32f = c.texel_rgba16f = c.texel_rgba16ui = c.texel_r32ui = 0;
  if (which >= 2 && which <= 5) c.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
  if (which == 4) c.subgroup_ops &= ~(uint32_t)VKF_SUBGROUP_ARITHMETIC;
  if (which == 5) c.max_workgroup_invocations = 32;
  if (which == 6) VKF_ASSERT(vkf_caps_apply_profile(&c, "mobile") == VKF_OK);
  return c;
}

typedef struct ncase {
  int64_t m, n, k;
  int weights; /* -1: f32, else a vkf_quant_format */
  int bias, residual, batched;
  vkf_op glu; /* 0: the RMSNorm prologue; SILU or GELU_ERF: the GLU prologue of that act */
  int any_rows; /* the passes with the engines' quant_norm_rows for this device */
} ncase;

static void run_case(gpu_test *t, const ncase *c) {
  char label[128];
  snprintf(label, sizeof label, "%s %s m%lld n%lld k%lld%s%s%s", c->glu ? "glu" : "rmsnorm",
           c->weights < 0 ? "f32" : vkf_quant_layout_of((vkf_quant_format)c->weights).name,
           (long long)c->m, (long long)c->n, (long long)c->k, c->bias ? " bias" : "",
           c->residual ? " res" : "", c->batched ? " batched" : "");
  int64_t rows = (c->batched ? 2 : 1) * c->m, xk = c->glu ? 2 * c->k : c->k;
  float *x = malloc((size_t)(rows * xk) * sizeof(float));
  float *gamma = malloc((size_t)c->k * sizeof(float));
  float *bias = malloc((size_t)c->n * sizeof(float));
  float *res = malloc((size_t)(rows * c->n) * sizeof(float));
  float *wf = NULL;
  uint8_t *wq = NULL;
  op_fill_uniform(x, (size_t)(rows * xk), 3u + (uint32_t)c->k, c->glu ? -4.0f : -1.0f,
                  c->glu ? 4.0f : 1.0f);
  op_fill_uniform(gamma, (size_t)c->k, 5u, 0.5f, 1.5f);
  op_fill_uniform(bias, (size_t)c->n, 9u, -0.5f, 0.5f);
  op_fill_uniform(res, (size_t)(rows * c->n), 13u, -1.0f, 1.0f);
  int64_t ws[2] = {c->n, c->k}, xs[3] = {2, c->m, xk}, os[3] = {2, c->m, c->n};
  uint32_t rank = c->batched ? 3 : 2;
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("norm_gemm", &g));
  vkf_value xv = vkf_graph_input(g, "x", VKF_F32, rank, c->batched ? xs : xs + 1);
  vkf_value gv = vkf_graph_constant(g, "gamma", VKF_F32, 1, &c->k, gamma);
  vkf_value w;
  if (c->weights < 0) {
    wf = malloc((size_t)(c->n * c->k) * sizeof(float));
    op_fill_uniform(wf, (size_t)(c->n * c->k), 17u, -0.5f, 0.5f);
    w = vkf_graph_constant(g, "w", VKF_F32, 2, ws, wf);
  } else {
    wq = random_blocks((vkf_quant_format)c->weights, c->n, c->k);
    w = vkf_graph_constant(g, "w", (vkf_dtype)(VKF_Q8_0 + c->weights), 2, ws, wq);
  }
  vkf_value h;
  if (c->glu) {
    vkf_value gate = vkf_slice(g, "gate", xv, rank - 1, 0, c->k);
    vkf_value up = vkf_slice(g, "up", xv, rank - 1, c->k, 2 * c->k);
    gate = c->glu == VKF_OP_SILU ? vkf_silu(g, "act", gate) : vkf_gelu(g, "act", gate);
    h = vkf_mul(g, "gated", gate, up);
  } else {
    h = vkf_rmsnorm(g, "norm", xv, &(vkf_norm_options){.gamma = gv, .eps = 1e-5f});
  }
  vkf_matmul_options o = {.transpose_b = 1};
  if (c->bias) o.bias = vkf_graph_constant(g, "bias", VKF_F32, 1, &c->n, bias);
  if (c->residual) o.residual = vkf_graph_input(g, "res", VKF_F32, rank, c->batched ? os : os + 1);
  vkf_graph_output(g, vkf_matmul(g, "mm", h, w, &o), "y");
  const vkf_device_caps *dev = vkf_device_caps_get(t->device);
  int qcpu = vkf_gemm_qcpu_norm_any_rows(dev);
  vkf_pass_report report;
  CHECK_OK(vkf_passes_run(
      g,
      &(vkf_pass_options){
          .skip = "", .dump = "", .quant_norm_rows = c->any_rows && qcpu ? INT64_MAX : 0},
      &report));
  int folded = 0;
  for (uint32_t i = 0; i < vkf_graph_node_count(g); i++) {
    const vkf_node *n = vkf_graph_node(g, i);
    folded += n->op == VKF_OP_MATMUL &&
              (c->glu ? n->attrs.matmul.a_glu != VKF_ACT_NONE : n->attrs.matmul.a_rmsnorm);
  }
  /* past 8 rows only the quantised CPU kernel takes the fold */
  int big = c->m > 8;
  CHECK_MSG(folded == (!big || qcpu), "%s: folded %d", label, folded);

  vkf_input_binding in[2] = {{xv, x, (size_t)(rows * xk) * sizeof(float)},
                             {o.residual, res, (size_t)(rows * c->n) * sizeof(float)}};
  /* past 8 rows: the device as it is and without texel views (where the fold is, both the
   * quantised CPU kernel; the other steers' kernels refuse it, and their caps were made for
   * decode rows) */
  for (int s = 0; s < (big ? 2 : STEERS); s++) {
    const char *sname;
    vkf_device_caps caps = steer(dev, s, &sname);
    char full[192];
    snprintf(full, sizeof full, "%s [%s]", label, sname);
    op_check_with(t, g, in, c->residual ? 2 : 1, &caps, TOL, full);
  }
  vkf_graph_destroy(g);
  free(x), free(gamma), free(bias), free(res), free(wf), free(wq);
}

/* x [m, k] (rmsnorm'd first where `norm`) -> gu = x . W^T (W [2f, k] of format `fmt`) ->
 * silu(gu[:f]) * gu[f:] as the output: on a device that runs the quantised CPU kernel the passes
 * fold it all into one matmul, checked on the device as it is and without texel views. */
static void run_epilogue(gpu_test *t, int fmt, int64_t m, int64_t f, int64_t k, int norm) {
  char label[128];
  snprintf(label, sizeof label, "glu epilogue %s m%lld f%lld k%lld%s",
           vkf_quant_layout_of((vkf_quant_format)fmt).name, (long long)m, (long long)f,
           (long long)k, norm ? " norm" : "");
  float *x = malloc((size_t)(m * k) * sizeof(float)), *gamma = malloc((size_t)k * sizeof(float));
  /* small inputs: the random K-quant blocks make gate and up sums of hundreds, and a gate of -12
   * carries its rounding into silu's exponent */
  op_fill_uniform(x, (size_t)(m * k), 21u + (uint32_t)m, -0.05f, 0.05f);
  op_fill_uniform(gamma, (size_t)k, 5u, 0.01f, 0.03f);
  uint8_t *wq = random_blocks((vkf_quant_format)fmt, 2 * f, k);
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("gu_glu", &g));
  vkf_value xv = vkf_graph_input(g, "x", VKF_F32, 2, (int64_t[]){m, k});
  vkf_value h = xv;
  if (norm)
    h = vkf_rmsnorm(
        g, "norm", xv,
        &(vkf_norm_options){.gamma = vkf_graph_constant(g, "gamma", VKF_F32, 1, &k, gamma),
                            .eps = 1e-5f});
  vkf_value w =
      vkf_graph_constant(g, "w", (vkf_dtype)(VKF_Q8_0 + fmt), 2, (int64_t[]){2 * f, k}, wq);
  vkf_value gu = vkf_matmul(g, "gate_up", h, w, &(vkf_matmul_options){.transpose_b = 1});
  vkf_value gate = vkf_silu(g, "act", vkf_slice(g, "gate", gu, 1, 0, f));
  vkf_graph_output(g, vkf_mul(g, "gated", gate, vkf_slice(g, "up", gu, 1, f, 2 * f)), "y");
  const vkf_device_caps *dev = vkf_device_caps_get(t->device);
  int qcpu = vkf_gemm_qcpu_norm_any_rows(dev);
  vkf_pass_report report;
  CHECK_OK(vkf_passes_run(g,
                          &(vkf_pass_options){.skip = "",
                                              .dump = "",
                                              .quant_norm_rows = qcpu ? INT64_MAX : 0,
                                              .quant_glu_epilogue = qcpu},
                          &report));
  uint32_t nodes = vkf_graph_node_count(g);
  int folded = nodes == 1 && vkf_graph_node(g, 0)->attrs.matmul.c_glu == VKF_ACT_SILU &&
               vkf_graph_node(g, 0)->attrs.matmul.a_rmsnorm == norm;
  CHECK_MSG(folded == qcpu, "%s: %u nodes, folded %d", label, nodes, folded);
  vkf_input_binding in = {xv, x, (size_t)(m * k) * sizeof(float)};
  for (int s = 0; s < (folded || m > 8 ? 2 : STEERS); s++) {
    const char *sname;
    vkf_device_caps caps = steer(dev, s, &sname);
    char full[192];
    snprintf(full, sizeof full, "%s [%s]", label, sname);
    op_check_with(t, g, &in, 1, &caps, TOL, full);
  }
  vkf_graph_destroy(g);
  free(x), free(gamma), free(wq);
}

int main(void) {
  gpu_test t = gpu_test_start();
  static const int64_t ms[] = {1, 3, 8};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
    run_case(&t, &(ncase){.m = ms[i], .n = 40, .k = 64, .weights = -1});
    run_case(&t, &(ncase){.m = ms[i], .n = 36, .k = 64, .weights = VKF_QUANT_Q4_1});
  }
  run_case(&t, &(ncase){.m = 2, .n = 20, .k = 30, .weights = -1});         /* no vec4 loads */
  run_case(&t, &(ncase){.m = 1, .n = 33, .k = 96, .weights = VKF_QUANT_Q8_0, .bias = 1});
  run_case(&t, &(ncase){.m = 2, .n = 24, .k = 256, .weights = VKF_QUANT_Q4_K, .residual = 1});
  run_case(&t, &(ncase){.m = 2, .n = 24, .k = 64, .weights = VKF_QUANT_Q4_1, .batched = 1,
                        .residual = 1});
  run_case(&t, &(ncase){.m = 4, .n = 17, .k = 64, .weights = -1, .batched = 1, .bias = 1});
  /* the norm at any rows in the quantised CPU kernel: each format's body (Q8_0 at K % 64 == 0,
   * Q4_1, Q5_1 and Q4_K through word pairs, Q6_K and Q4_0 by words) at 3 (one block of 4), 5, 16
   * and 21 rows (blocks of 8, the last partial), with the epilogues */
  static const int64_t big_ms[] = {3, 5, 16, 21};
  static const struct {
    int f;
    int64_t k;
  } fmts[] = {{VKF_QUANT_Q8_0, 128}, {VKF_QUANT_Q4_1, 128}, {VKF_QUANT_Q5_1, 64},
              {VKF_QUANT_Q4_K, 256}, {VKF_QUANT_Q6_K, 256}, {VKF_QUANT_Q4_0, 96}};
  for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++)
    for (size_t i = 0; i < sizeof big_ms / sizeof big_ms[0]; i++)
      run_case(&t, &(ncase){.m = big_ms[i],
                            .n = 20 + (int64_t)f,
                            .k = fmts[f].k,
                            .weights = fmts[f].f,
                            .bias = i == 1,
                            .residual = i == 3,
                            .batched = i == 2 && f == 1,
                            .any_rows = 1});
  /* the GLU epilogue: each format's body, one to three row blocks, f not a multiple of 8 */
  static const int64_t epi_ms[] = {1, 2, 3, 8, 21};
  for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++)
    for (size_t i = 0; i < sizeof epi_ms / sizeof epi_ms[0]; i++)
      run_epilogue(&t, fmts[f].f, epi_ms[i], 12 + 5 * (int64_t)f, fmts[f].k, (i + f) % 2);
  /* Q8_0 weights of a multiple of 16 rows (the CPU kernel's interleaved copy, QCPU_X16) under
   * the norm and the GLU epilogue (2F rows: gate's and up's columns in different groups) */
  for (size_t i = 0; i < sizeof big_ms / sizeof big_ms[0]; i++) {
    run_case(&t, &(ncase){.m = big_ms[i],
                          .n = 32,
                          .k = 128,
                          .weights = VKF_QUANT_Q8_0,
                          .residual = i == 1,
                          .any_rows = 1});
    run_epilogue(&t, VKF_QUANT_Q8_0, big_ms[i], i % 2 ? 8 : 24, 64 * (1 + (int64_t)i % 2), 0);
  }
  /* the GLU prologue: a down projection's shapes (f32 and quantised, with the residual) */
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
    run_case(&t, &(ncase){.m = ms[i], .n = 24, .k = 64, .weights = -1, .glu = VKF_OP_SILU});
    run_case(&t, &(ncase){.m = ms[i], .n = 20, .k = 64, .weights = VKF_QUANT_Q4_1,
                          .residual = 1, .glu = VKF_OP_SILU});
  }
  run_case(&t, &(ncase){.m = 2, .n = 12, .k = 30, .weights = -1, .glu = VKF_OP_SILU}); /* scalar */
  run_case(&t, &(ncase){.m = 3, .n = 12, .k = 32, .weights = -1, .batched = 1,
                        .glu = VKF_OP_GELU_ERF});
  return gpu_test_finish(&t);
}
