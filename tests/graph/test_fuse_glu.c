/* fuse_glu: silu(gu[..., :F]) * gu[..., F:] (gate+up stacked) read only as one matmul's A, at
 * most 8 rows (every dim but the last counted; prologue_rows where set, 1 on CPU devices), f32,
 * becomes that matmul's prologue, and the interpreter gives the same values
 * before and after; more rows, a product read twice, halves that are not gate then up, and the
 * operands swapped are covered. With quant_glu_epilogue, a gate+up matmul of quantised weights
 * makes the product itself (matmul.c_glu) at any rows, with identical values; not with f32
 * weights, a bias, or gate+up read elsewhere. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "graph/passes/passes.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

enum { F = 12, N = 10, MAX_ROWS = 12 };

static float w[N * F], x_data[2 * MAX_ROWS * (2 * F + 2)];

static void fill(float *p, size_t n, double seed) {
  for (size_t i = 0; i < n; i++) p[i] = (float)sin(seed + 0.37 * (double)i) * 2.5f;
}

typedef struct net {
  vkf_graph *g;
  vkf_value x, out, side;
} net;

/* x [2, rows, off + 2F] -> act(x[..., off:off+F]) * x[..., off+F:] (operands `swap`ped) ->
 * matmul. */
static net build(int64_t rows, int64_t off, int swap, int twice, vkf_op act) {
  net t = {0};
  CHECK_OK(vkf_graph_create("glu_gemm", &t.g));
  vkf_graph *g = t.g;
  t.x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(2, rows, off + 2 * F));
  vkf_value wv = vkf_graph_constant(g, "w", VKF_F32, 2, SHAPE(N, F), w);
  vkf_value gate = vkf_slice(g, "gate", t.x, 2, off, off + F);
  vkf_value up = vkf_slice(g, "up", t.x, 2, off + F, off + 2 * F);
  gate = act == VKF_OP_SILU ? vkf_silu(g, "act", gate) : vkf_gelu(g, "act", gate);
  vkf_value h = swap ? vkf_mul(g, "gated", up, gate) : vkf_mul(g, "gated", gate, up);
  vkf_value y = vkf_matmul(g, "down", h, wv, &(vkf_matmul_options){.transpose_b = 1});
  t.out = vkf_graph_output(g, y, NULL);
  if (twice) t.side = vkf_graph_output(g, vkf_tanh(g, "other", h), NULL);
  CHECK_OK(vkf_graph_status(g));
  return t;
}

/* Evaluates t on x_data (x_floats of it) into out and, where t has it, side. */
static void evaluate(const net *t, int64_t x_floats, int64_t out_floats, int64_t side_floats,
                     float *out, float *side) {
  vkf_input_binding in = {t->x, x_data, (size_t)x_floats * sizeof(float)};
  vkf_output_binding ob[2] = {{t->out, out, (size_t)out_floats * sizeof(float)},
                              {t->side, side, (size_t)side_floats * sizeof(float)}};
  CHECK_OK(vkf_interp_evaluate(t->g, &in, 1, ob, vkf_value_valid(t->side) ? 2 : 1));
}

static void run(const net *t, int64_t rows, int64_t off, float *out, float *side) {
  evaluate(t, 2 * rows * (off + 2 * F), 2 * rows * N, 2 * rows * F, out, side);
}

static void check_at(int64_t rows, int64_t off, int swap, int twice, vkf_op act,
                     int64_t prologue_rows, int expect) {
  static float ref[2 * MAX_ROWS * N], got[2 * MAX_ROWS * N], side[2 * MAX_ROWS * F];
  net t = build(rows, off, swap, twice, act);
  vkf_pass_report report;
  CHECK_OK(vkf_passes_run(t.g, &(vkf_pass_options){.skip = "glu", .dump = ""}, &report));
  run(&t, rows, off, ref, side);
  vkf_graph_destroy(t.g);

  t = build(rows, off, swap, twice, act);
  CHECK_OK(vkf_passes_run(
      t.g, &(vkf_pass_options){.skip = "", .dump = "", .prologue_rows = prologue_rows}, &report));
  CHECK(strcmp(report.passes[5].name, "fuse_glu") == 0);
  CHECK_MSG(report.passes[5].rewrites == (uint32_t)expect,
            "rows 2 x %lld off %lld swap %d twice %d prologue rows %lld", (long long)rows,
            (long long)off, swap, twice, (long long)prologue_rows);
  for (uint32_t i = 0; i < vkf_graph_node_count(t.g); i++) {
    const vkf_node *n = vkf_graph_node(t.g, i);
    if (n->op != VKF_OP_MATMUL) continue;
    CHECK((n->attrs.matmul.a_glu != VKF_ACT_NONE) == expect);
    if (expect) CHECK(n->inputs[VKF_IN_MATMUL_A].id == t.x.id);
    CHECK(n->attrs.matmul.a_glu == (!expect ? VKF_ACT_NONE
                                    : act == VKF_OP_SILU ? VKF_ACT_SILU : VKF_ACT_GELU_ERF));
  }
  run(&t, rows, off, got, side);
  /* The prologue computes each product as the separate nodes did: identical values. */
  CHECK_MSG(memcmp(ref, got, (size_t)(2 * rows * N) * sizeof(float)) == 0, "rows %lld",
            (long long)rows);
  vkf_graph_destroy(t.g);
}

static void check(int64_t rows, int64_t off, int swap, int twice, vkf_op act, int expect) {
  check_at(rows, off, swap, twice, act, 0, expect);
}

/* x [rows, K] -> gu = x . Wgu^T (Q8_0 [2F, K], or f32; a bias) -> act(gu[:F]) * gu[F:] (or
 * swapped) -> down (f32 [N, F]); `leak` 1: gu is an output too, 2: the gate slice is. */
enum { K = 32 };
static uint8_t wq[2 * F * 34];
static float wgu[2 * F * K], bias_gu[2 * F];
static net build_ep(int64_t rows, int quant, int bias, int leak, int swap) {
  net t = {0};
  CHECK_OK(vkf_graph_create("gu_glu", &t.g));
  vkf_graph *g = t.g;
  t.x = vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(rows, K));
  vkf_value wv = quant ? vkf_graph_constant(g, "wgu", VKF_Q8_0, 2, SHAPE(2 * F, K), wq)
                       : vkf_graph_constant(g, "wgu", VKF_F32, 2, SHAPE(2 * F, K), wgu);
  vkf_matmul_options o = {.transpose_b = 1};
  if (bias) o.bias = vkf_graph_constant(g, "b", VKF_F32, 1, SHAPE(2 * F), bias_gu);
  vkf_value gu = vkf_matmul(g, "gate_up", t.x, wv, &o);
  vkf_value gs = vkf_slice(g, "gate", gu, 1, 0, F), gate = vkf_silu(g, "act", gs);
  vkf_value up = vkf_slice(g, "up", gu, 1, F, 2 * F);
  vkf_value h = swap ? vkf_mul(g, "gated", up, gate) : vkf_mul(g, "gated", gate, up);
  vkf_value dw = vkf_graph_constant(g, "w", VKF_F32, 2, SHAPE(N, F), w);
  t.out = vkf_graph_output(g, vkf_matmul(g, "down", h, dw, &(vkf_matmul_options){.transpose_b = 1}),
                           NULL);
  if (leak) t.side = vkf_graph_output(g, leak == 1 ? gu : gs, NULL);
  CHECK_OK(vkf_graph_status(g));
  return t;
}

static void run_ep(const net *t, int64_t rows, int leak, float *out, float *side) {
  evaluate(t, rows * K, rows * N, rows * (leak == 1 ? 2 : 1) * F, out, side);
}

static void check_epilogue(int64_t rows, int quant, int bias, int leak, int swap, int expect) {
  static float ref[MAX_ROWS * 2 * N], got[MAX_ROWS * 2 * N], side[MAX_ROWS * 2 * F];
  net t = build_ep(rows, quant, bias, leak, swap);
  vkf_pass_report report;
  CHECK_OK(vkf_passes_run(t.g, &(vkf_pass_options){.skip = "glu", .dump = ""}, &report));
  run_ep(&t, rows, leak, ref, side);
  vkf_graph_destroy(t.g);
  t = build_ep(rows, quant, bias, leak, swap);
  /* the prologue bound 1 (a CPU device's): a product the epilogue leaves goes to the prologue
   * only at one row */
  CHECK_OK(vkf_passes_run(
      t.g, &(vkf_pass_options){.skip = "", .dump = "", .prologue_rows = 1, .quant_glu_epilogue = 1},
      &report));
  int c_glu = 0, muls = 0;
  for (uint32_t i = 0; i < vkf_graph_node_count(t.g); i++) {
    const vkf_node *n = vkf_graph_node(t.g, i);
    c_glu += n->op == VKF_OP_MATMUL && n->attrs.matmul.c_glu == VKF_ACT_SILU;
    muls += n->op != VKF_OP_MATMUL && n->op != VKF_OP_SLICE;
  }
  CHECK_MSG(c_glu == expect && (!expect || muls == 0),
            "rows %lld quant %d bias %d leak %d swap %d: %d GLU epilogues, %d other nodes",
            (long long)rows, quant, bias, leak, swap, c_glu, muls);
  run_ep(&t, rows, leak, got, side);
  /* the epilogue computes each product as the separate nodes did: identical values */
  CHECK_MSG(memcmp(ref, got, (size_t)(rows * N) * sizeof(float)) == 0, "epilogue rows %lld",
            (long long)rows);
  vkf_graph_destroy(t.g);
}

int main(void) {
  fill(w, N * F, 0.1);
  fill(x_data, 2 * MAX_ROWS * (2 * F + 2), 2.7);
  /* x is [2, rows, 2F]: 2 x rows rows, at most 8 fold */
  for (int64_t rows = 1; rows <= 6; rows++) check(rows, 0, 0, 0, VKF_OP_SILU, rows <= 4);
  check(1, 0, 1, 0, VKF_OP_SILU, 1);     /* up * silu(gate) */
  check(2, 0, 0, 0, VKF_OP_GELU_ERF, 1); /* GeGLU */
  check(9, 0, 0, 0, VKF_OP_SILU, 0);     /* more rows than the prologue's bound */
  check(1, 0, 0, 1, VKF_OP_SILU, 0);     /* the product has a second reader */
  check(1, 2, 0, 0, VKF_OP_SILU, 0);     /* halves of a wider tensor, not its two halves */
  check_at(1, 0, 0, 0, VKF_OP_SILU, 1, 0); /* a CPU device's bound: [2, 1, 2F] is two rows */
  check_at(1, 0, 0, 0, VKF_OP_SILU, 2, 1);
  /* the epilogue: Q8_0 blocks of 32 with f16 scales 0.01 .. 0.04 */
  for (int i = 0; i < 2 * F * 34; i++) wq[i] = (uint8_t)(i * 37 + 11);
  for (int r = 0; r < 2 * F; r++) wq[r * 34] = 0x1f, wq[r * 34 + 1] = (uint8_t)(0x20 + r % 8);
  fill(wgu, 2 * F * K, 1.3);
  fill(bias_gu, 2 * F, 0.4);
  for (int64_t rows = 1; rows <= MAX_ROWS; rows += 5) check_epilogue(rows, 1, 0, 0, 0, 1);
  check_epilogue(3, 1, 0, 0, 1, 1); /* up * silu(gate) */
  check_epilogue(3, 0, 0, 0, 0, 0); /* f32 weights */
  check_epilogue(3, 1, 1, 0, 0, 0); /* a bias */
  check_epilogue(3, 1, 0, 1, 0, 0); /* gate+up read elsewhere too */
  check_epilogue(3, 1, 0, 2, 0, 0); /* the gate slice is an output too */
  return test_report();
}
