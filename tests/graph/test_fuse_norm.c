/* fuse_norm: rmsnorm read only as one matmul's A (at most 8 rows, every dim but the last counted,
 * f32) becomes that matmul's prologue, and the interpreter gives the same values before and
 * after; norms over more rows (or more than prologue_rows, which CPU devices set to 1), without a
 * gamma, read twice or feeding a matmul's B stay. */
#include <math.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "graph/ir/verify.h"
#include "graph/passes/passes.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

enum { K = 24, N = 20, MAX_ROWS = 12 };

static float w[K * N], gamma_[K], x_data[2 * MAX_ROWS * K], bias[N];

static void fill(float *p, size_t n, double seed) {
  for (size_t i = 0; i < n; i++) p[i] = (float)sin(seed + 0.37 * (double)i) * 1.5f;
}

static uint32_t count_op(const vkf_graph *g, vkf_op op) {
  uint32_t c = 0;
  for (uint32_t i = 0; i < vkf_graph_node_count(g); i++) c += vkf_graph_node(g, i)->op == op;
  return c;
}

typedef struct net {
  vkf_graph *g;
  vkf_value x, out, side;
} net;

/* rmsnorm(x) -> matmul + bias (and a second reader of the norm when `twice`), x [2, rows, K]. */
static net build(int64_t rows, int with_gamma, int twice) {
  net t = {0};
  CHECK_OK(vkf_graph_create("norm_gemm", &t.g));
  vkf_graph *g = t.g;
  t.x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(2, rows, K));
  vkf_value wv = vkf_graph_constant(g, "w", VKF_F32, 2, SHAPE(N, K), w);
  vkf_value bv = vkf_graph_constant(g, "b", VKF_F32, 1, SHAPE(N), bias);
  vkf_value gv = with_gamma ? vkf_graph_constant(g, "g", VKF_F32, 1, SHAPE(K), gamma_)
                            : (vkf_value){0};
  vkf_value h = vkf_rmsnorm(g, "norm", t.x, &(vkf_norm_options){.gamma = gv, .eps = 1e-5f});
  vkf_value y = vkf_matmul(g, "proj", h, wv, &(vkf_matmul_options){.transpose_b = 1});
  t.out = vkf_graph_output(g, vkf_add(g, "proj.bias", y, bv), NULL);
  if (twice) t.side = vkf_graph_output(g, vkf_tanh(g, "other", h), NULL);
  CHECK_OK(vkf_graph_status(g));
  return t;
}

static void run(const net *t, int64_t rows, float *out, float *side) {
  vkf_input_binding in = {t->x, x_data, (size_t)(2 * rows * K) * sizeof(float)};
  vkf_output_binding ob[2] = {{t->out, out, (size_t)(2 * rows * N) * sizeof(float)},
                              {t->side, side, (size_t)(2 * rows * K) * sizeof(float)}};
  CHECK_OK(vkf_interp_evaluate(t->g, &in, 1, ob, vkf_value_valid(t->side) ? 2 : 1));
}

static void check_at(int64_t rows, int with_gamma, int twice, int64_t prologue_rows,
                     int expect_fused) {
  static float ref[2 * MAX_ROWS * N], got[2 * MAX_ROWS * N], side[2 * MAX_ROWS * K];
  /* The reference: every pass but this one (fuse_gemm's epilogue rounds differently from a
   * separate add, so the unpassed graph is no bit-exact reference). */
  net t = build(rows, with_gamma, twice);
  vkf_pass_report report;
  CHECK_OK(vkf_passes_run(t.g, &(vkf_pass_options){.skip = "norm", .dump = ""}, &report));
  CHECK(report.passes[4].skipped && count_op(t.g, VKF_OP_RMSNORM) == 1);
  run(&t, rows, ref, side);
  vkf_graph_destroy(t.g);

  t = build(rows, with_gamma, twice);
  CHECK_OK(vkf_passes_run(
      t.g, &(vkf_pass_options){.skip = "", .dump = "", .prologue_rows = prologue_rows}, &report));
  CHECK(strcmp(report.passes[4].name, "fuse_norm") == 0);
  CHECK_MSG(report.passes[4].rewrites == (uint32_t)expect_fused,
            "rows 2 x %lld gamma %d twice %d prologue rows %lld", (long long)rows, with_gamma,
            twice, (long long)prologue_rows);
  CHECK(count_op(t.g, VKF_OP_RMSNORM) == (uint32_t)!expect_fused);
  for (uint32_t i = 0; i < vkf_graph_node_count(t.g); i++) {
    const vkf_node *n = vkf_graph_node(t.g, i);
    if (n->op != VKF_OP_MATMUL) continue;
    CHECK(n->attrs.matmul.a_rmsnorm == expect_fused);
    if (expect_fused) {
      CHECK(n->inputs[VKF_IN_MATMUL_A].id == t.x.id && n->attrs.matmul.a_norm_eps == 1e-5f);
      CHECK(vkf_value_valid(n->inputs[VKF_IN_MATMUL_NORM_GAMMA]) == with_gamma);
      CHECK(vkf_value_valid(n->inputs[VKF_IN_MATMUL_BIAS])); /* fuse_gemm's epilogue kept */
    }
  }
  run(&t, rows, got, side);
  /* The prologue normalises exactly as the rmsnorm node did: identical values. */
  CHECK_MSG(memcmp(ref, got, (size_t)(2 * rows * N) * sizeof(float)) == 0, "rows %lld",
            (long long)rows);
  vkf_graph_destroy(t.g);
}

static void check(int64_t rows, int with_gamma, int twice, int expect_fused) {
  check_at(rows, with_gamma, twice, 0, expect_fused);
}

/* A norm whose matmul reads it as B (attention-like use) is left alone. */
static void check_b_operand(void) {
  vkf_graph *g;
  CHECK_OK(vkf_graph_create("norm_b", &g));
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(4, K));
  vkf_value a = vkf_graph_input(g, "a", VKF_F32, 2, SHAPE(2, 4));
  vkf_value h = vkf_rmsnorm(g, "norm", x, NULL);
  vkf_graph_output(g, vkf_matmul(g, "mm", a, h, NULL), NULL);
  CHECK_OK(vkf_graph_status(g));
  vkf_pass_report report;
  CHECK_OK(vkf_passes_run(g, &(vkf_pass_options){.skip = "", .dump = ""}, &report));
  CHECK(report.passes[4].rewrites == 0 && count_op(g, VKF_OP_RMSNORM) == 1);
  vkf_graph_destroy(g);
}

/* A matmul wider than the fold's column bound (an LM head: every workgroup would recompute the
 * norm) keeps its norm a node of its own; one at the bound folds. */
static void check_wide(int64_t n, int expect_fused) {
  vkf_graph *g;
  CHECK_OK(vkf_graph_create("norm_wide", &g));
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(1, K));
  vkf_value gm = vkf_graph_input(g, "gamma", VKF_F32, 1, SHAPE(K));
  vkf_value wt = vkf_graph_input(g, "w", VKF_F32, 2, SHAPE(n, K));
  vkf_value h = vkf_rmsnorm(g, "norm", x, &(vkf_norm_options){.eps = 1e-5f, .gamma = gm});
  vkf_graph_output(g, vkf_matmul(g, "head", h, wt, &(vkf_matmul_options){.transpose_b = 1}), NULL);
  CHECK_OK(vkf_graph_status(g));
  vkf_pass_report report;
  CHECK_OK(vkf_passes_run(g, &(vkf_pass_options){.skip = "", .dump = ""}, &report));
  CHECK_MSG(report.passes[4].rewrites == (uint32_t)expect_fused &&
                count_op(g, VKF_OP_RMSNORM) == (uint32_t)!expect_fused,
            "n %lld", (long long)n);
  vkf_graph_destroy(g);
}

int main(void) {
  check_wide(16384, 1);
  check_wide(16385, 0);
  fill(w, K * N, 0.1);
  fill(gamma_, K, 1.3);
  fill(x_data, 2 * MAX_ROWS * K, 2.7);
  fill(bias, N, 0.5);
  /* x is [2, rows, K]: 2 x rows rows, at most 8 fold */
  for (int64_t rows = 1; rows <= 6; rows++) check(rows, 1, 0, rows <= 4);
  check(1, 0, 0, 0);  /* no gamma: the kernel's prologue always reads one */
  check(9, 1, 0, 0);  /* more rows than a workgroup rereads */
  check(12, 1, 0, 0);
  /* a CPU device's bound (vkf_pass_prologue_rows): [2, 1, K] is two rows, and stays */
  CHECK(vkf_pass_prologue_rows(1) == 1 && vkf_pass_prologue_rows(0) == 0);
  check_at(1, 1, 0, 1, 0);
  check_at(1, 1, 0, 2, 1);
  check(1, 1, 1, 0);  /* the norm has a second reader */
  check_b_operand();
  return test_report();
}
