/* Passes: DCE, attention fusion (a hand-written unfused block becomes one attention node), GEMM
 * epilogue fusion, elementwise grouping, skip keys, and the interpreter's output unchanged after
 * every pass. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "graph/ir/verify.h"
#include "graph/passes/passes.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

enum { B = 2, N = 5, C = 8, H = 2, D = 4, MLP = 16 };

static float w_qkv[C * 3 * C], b_qkv[3 * C], w_proj[C * C], b_proj[C], w_fc1[C * MLP], b_fc1[MLP],
    w_fc2[MLP * C], b_fc2[C], ln_g[C], ln_b[C];
static float x_data[B * N * C];
static const int32_t valid[B] = {5, 3};

static void fill(float *p, size_t n, double seed) {
  for (size_t i = 0; i < n; i++) p[i] = (float)(0.5 * sin(seed + 1.7 * (double)i));
}

static void init_data(void) {
  fill(w_qkv, sizeof w_qkv / 4, 1);
  fill(b_qkv, sizeof b_qkv / 4, 2);
  fill(w_proj, sizeof w_proj / 4, 3);
  fill(b_proj, sizeof b_proj / 4, 4);
  fill(w_fc1, sizeof w_fc1 / 4, 5);
  fill(b_fc1, sizeof b_fc1 / 4, 6);
  fill(w_fc2, sizeof w_fc2 / 4, 7);
  fill(b_fc2, sizeof b_fc2 / 4, 8);
  fill(ln_g, C, 9);
  fill(ln_b, C, 10);
  fill(x_data, sizeof x_data / 4, 11);
}

typedef struct block {
  vkf_graph *g;
  vkf_value x, out, out2;
} block;

/* A pre-norm transformer block written the unfused way, with a dead branch and an elementwise
 * tail, using per-batch valid lengths as D2L's multi-head attention does. */
static block build_block(void) {
  block b = {0};
  CHECK_OK(vkf_graph_create("block", &b.g));
  vkf_graph *g = b.g;
  b.x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(B, N, C));
  vkf_value vl = vkf_graph_constant(g, "valid_lens", VKF_I32, 1, SHAPE(B), valid);
#define W(name, data, ...) vkf_graph_constant(g, name, VKF_F32, __VA_ARGS__, data)
  vkf_value wqkv = W("w_qkv", w_qkv, 2, SHAPE(C, 3 * C)), bqkv = W("b_qkv", b_qkv, 1, SHAPE(3 * C));
  vkf_value wproj = W("w_proj", w_proj, 2, SHAPE(C, C)), bproj = W("b_proj", b_proj, 1, SHAPE(C));
  vkf_value wfc1 = W("w_fc1", w_fc1, 2, SHAPE(C, MLP)), bfc1 = W("b_fc1", b_fc1, 1, SHAPE(MLP));
  vkf_value wfc2 = W("w_fc2", w_fc2, 2, SHAPE(MLP, C)), bfc2 = W("b_fc2", b_fc2, 1, SHAPE(C));
  vkf_value g1 = W("ln.g", ln_g, 1, SHAPE(C)), b1 = W("ln.b", ln_b, 1, SHAPE(C));
#undef W
  vkf_value h = vkf_layernorm(g, "ln1", b.x, &(vkf_norm_options){.gamma = g1, .beta = b1});
  vkf_value qkv = vkf_matmul(g, "attn.qkv", h, wqkv, NULL);
  qkv = vkf_add(g, "attn.qkv.bias", qkv, bqkv);
  qkv = vkf_reshape(g, "attn.qkv.split", qkv, 4, SHAPE(B, N, 3 * H, D));
  vkf_value q = vkf_permute(g, "attn.q", vkf_slice(g, "attn.q.s", qkv, 2, 0, H),
                            (const uint32_t[]){0, 2, 1, 3});
  vkf_value k = vkf_permute(g, "attn.k", vkf_slice(g, "attn.k.s", qkv, 2, H, 2 * H),
                            (const uint32_t[]){0, 2, 1, 3});
  vkf_value v = vkf_permute(g, "attn.v", vkf_slice(g, "attn.v.s", qkv, 2, 2 * H, 3 * H),
                            (const uint32_t[]){0, 2, 1, 3});
  vkf_value s = vkf_matmul(g, "attn.scores", q, k, &(vkf_matmul_options){.transpose_b = 1});
  s = vkf_scale(g, "attn.scale", s, 0.5f); /* 1/sqrt(D) */
  vkf_value p = vkf_softmax(g, "attn.softmax", s, &(vkf_softmax_options){.valid_lens = vl});
  vkf_value o = vkf_matmul(g, "attn.context", p, v, NULL); /* [B, H, N, D] */
  o = vkf_permute(g, "attn.merge", o, (const uint32_t[]){0, 2, 1, 3});
  o = vkf_reshape(g, "attn.merge.flat", o, 3, SHAPE(B, N, C));
  o = vkf_matmul(g, "attn.proj", o, wproj, NULL);
  o = vkf_add(g, "attn.proj.bias", o, bproj);
  vkf_value r1 = vkf_add(g, "residual1", o, b.x);
  vkf_value m = vkf_layernorm(g, "ln2", r1, &(vkf_norm_options){.gamma = g1, .beta = b1});
  m = vkf_matmul(g, "mlp.fc1", m, wfc1, NULL);
  m = vkf_add(g, "mlp.fc1.bias", m, bfc1);
  m = vkf_gelu(g, "mlp.act", m);
  m = vkf_matmul(g, "mlp.fc2", m, wfc2, NULL);
  m = vkf_add(g, "mlp.fc2.bias", m, bfc2);
  vkf_value r2 = vkf_add(g, "residual2", m, r1);
  vkf_value unused = vkf_tanh(g, "dead.tanh", r2); /* nothing reads it: DCE removes it */
  vkf_exp(g, "dead.exp", unused);
  b.out = vkf_graph_output(g, r2, NULL);
  /* elementwise tail: silu(x)·2 + x as one generated kernel */
  vkf_value e = vkf_silu(g, "tail.silu", b.x);
  e = vkf_scale(g, "tail.scale", e, 2.0f);
  e = vkf_add(g, "tail.add", e, b.x);
  b.out2 = vkf_graph_output(g, e, NULL);
  CHECK_OK(vkf_graph_status(g));
  return b;
}

static void evaluate(const block *b, float *out, float *out2) {
  vkf_input_binding in = {b->x, x_data, sizeof x_data};
  vkf_output_binding outs[2] = {{b->out, out, B * N * C * 4}, {b->out2, out2, B * N * C * 4}};
  CHECK_OK(vkf_interp_evaluate(b->g, &in, 1, outs, 2));
}

static uint32_t count_op(const vkf_graph *g, vkf_op op) {
  uint32_t c = 0;
  for (uint32_t i = 0; i < vkf_graph_node_count(g); i++) c += vkf_graph_node(g, i)->op == op;
  return c;
}

static const vkf_node *find_node(const vkf_graph *g, const char *name) {
  for (uint32_t i = 0; i < vkf_graph_node_count(g); i++)
    if (strcmp(vkf_graph_node(g, i)->name, name) == 0) return vkf_graph_node(g, i);
  return NULL;
}

static void test_each_pass_preserves_output(void) {
  block b = build_block();
  static float ref[B * N * C], ref2[B * N * C], got[B * N * C], got2[B * N * C];
  evaluate(&b, ref, ref2);
  uint32_t count;
  const vkf_pass *passes = vkf_passes_list(&count);
  CHECK(count == 8);
  CHECK(strcmp(passes[0].name, "verify") == 0 &&
        strcmp(passes[count - 1].name, "memory_plan") == 0);
  for (uint32_t i = 0; i < count; i++) {
    uint32_t rewrites = 0;
    CHECK_OK(passes[i].run(b.g, NULL, &rewrites));
    CHECK_OK(vkf_graph_verify(b.g));
    evaluate(&b, got, got2);
    double worst = 0;
    for (int j = 0; j < B * N * C; j++) {
      worst = fmax(worst, fabs(got[j] - ref[j]));
      worst = fmax(worst, fabs(got2[j] - ref2[j]));
    }
    CHECK_MSG(worst <= 2e-6, "after %s: max diff %g", passes[i].name, worst);
    if (strcmp(passes[i].name, "dce") == 0) {
      CHECK(rewrites == 2);
      CHECK(!find_node(b.g, "dead.tanh") && !find_node(b.g, "dead.exp"));
    }
    if (strcmp(passes[i].name, "fuse_attention") == 0) {
      CHECK(rewrites == 2); /* the fusion, then the heads merge into its output */
      CHECK(count_op(b.g, VKF_OP_ATTENTION) == 1);
      /* the output's permute + contiguous copy are gone: the kernel writes [B, N, H, Dv] */
      CHECK(count_op(b.g, VKF_OP_COPY) == 0 && count_op(b.g, VKF_OP_PERMUTE) == 3);
      CHECK(count_op(b.g, VKF_OP_SOFTMAX) == 0 && count_op(b.g, VKF_OP_SCALE) == 1); /* tail's */
      const vkf_node *a = find_node(b.g, "attn.context");
      CHECK(a && a->op == VKF_OP_ATTENTION && a->input_count == 4);
      CHECK(a && a->attrs.attention.scale == 0.5f && !a->attrs.attention.causal);
      CHECK(a && a->attrs.attention.merge_heads);
      CHECK(a && strcmp(vkf_graph_tensor(b.g, a->inputs[VKF_IN_ATTENTION_KV_LEN])->name,
                        "valid_lens") == 0);
      /* q/k/v stay strided permute views of the qkv projection: no copies were added */
      CHECK(a && !vkf_tensor_is_contiguous(vkf_graph_tensor(b.g, a->inputs[0])));
    }
    if (strcmp(passes[i].name, "fuse_gemm") == 0) {
      const vkf_node *fc1 = find_node(b.g, "mlp.fc1"), *fc2 = find_node(b.g, "mlp.fc2");
      const vkf_node *qkv = find_node(b.g, "attn.qkv"), *proj = find_node(b.g, "attn.proj");
      CHECK(fc1 && fc1->input_count == 3 && fc1->attrs.matmul.activation == VKF_ACT_GELU_ERF);
      CHECK(fc2 && fc2->input_count == 4 && fc2->attrs.matmul.activation == VKF_ACT_NONE);
      CHECK(qkv && qkv->input_count == 3);
      CHECK(proj && proj->input_count == 4); /* bias + residual x */
      CHECK(count_op(b.g, VKF_OP_ADD) == 1); /* only the tail's add is left */
      CHECK(count_op(b.g, VKF_OP_GELU_ERF) == 0);
    }
    if (strcmp(passes[i].name, "fuse_elementwise") == 0) {
      CHECK(rewrites == 1);
      const vkf_node *f = find_node(b.g, "tail.add");
      CHECK(f && f->op == VKF_OP_FUSED_ELEMENTWISE && f->input_count == 1 &&
            f->attrs.fused.count == 3);
      CHECK(f && f->attrs.fused.instrs[0].op == VKF_OP_SILU && f->attrs.fused.instrs[0].a == 0);
      CHECK(f && f->attrs.fused.instrs[2].op == VKF_OP_ADD && f->attrs.fused.instrs[2].a == 2 &&
            f->attrs.fused.instrs[2].b == 0);
    }
  }
  vkf_graph_destroy(b.g);
}

static void test_pipeline_and_skips(void) {
  block b = build_block();
  static float ref[B * N * C], ref2[B * N * C], got[B * N * C], got2[B * N * C];
  evaluate(&b, ref, ref2);
  vkf_pass_report report;
  CHECK_OK(vkf_passes_run(b.g, &(vkf_pass_options){.skip = "", .dump = ""}, &report));
  CHECK(report.count == 8 && report.peak_size > 0 && report.peak_size <= report.naive_size);
  CHECK(strcmp(report.passes[2].name, "fuse_attention") == 0 && !report.passes[2].skipped);
  evaluate(&b, got, got2);
  for (int j = 0; j < B * N * C; j++) CHECK(fabs(got[j] - ref[j]) <= 2e-6);
  vkf_graph_destroy(b.g);

  b = build_block();
  CHECK_OK(vkf_passes_run(b.g, &(vkf_pass_options){.skip = "attention,elementwise", .dump = ""},
                          &report));
  CHECK(report.passes[2].skipped && !report.passes[3].skipped && !report.passes[4].skipped &&
        !report.passes[5].skipped && report.passes[6].skipped);
  CHECK(count_op(b.g, VKF_OP_ATTENTION) == 0 && count_op(b.g, VKF_OP_SOFTMAX) == 1);
  CHECK(count_op(b.g, VKF_OP_FUSED_ELEMENTWISE) == 0);
  evaluate(&b, got, got2);
  for (int j = 0; j < B * N * C; j++) CHECK(fabs(got[j] - ref[j]) <= 2e-6);
  vkf_graph_destroy(b.g);
}

/* D2L style: bmm(q, kᵀ) with kᵀ a permute view, an additive mask, a scale inside the softmax. */
static void test_attention_variants(void) {
  vkf_graph *g;
  CHECK_OK(vkf_graph_create("d2l", &g));
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 3, SHAPE(2, 3, 4));
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 3, SHAPE(2, 6, 4));
  vkf_value v = vkf_graph_input(g, "v", VKF_F32, 3, SHAPE(2, 6, 5));
  static const float mask_data[18] = {0, 0,     0, -1e9f, 0, 0, 0, 0, 0,
                                      0, -1e9f, 0, 0,     0, 0, 0, 0, -1e9f};
  vkf_value mask = vkf_graph_constant(g, "mask", VKF_F32, 2, SHAPE(3, 6), mask_data);
  vkf_value kt = vkf_permute(g, "kT", k, (const uint32_t[]){0, 2, 1});
  vkf_value s = vkf_matmul(g, "scores", q, kt, NULL);
  s = vkf_scale(g, "scale", s, 0.5f);
  s = vkf_add(g, "masked", s, mask);
  vkf_value p = vkf_softmax(g, "softmax", s, &(vkf_softmax_options){.causal = 1});
  vkf_value o = vkf_matmul(g, "context", p, v, NULL);
  o = vkf_graph_output(g, o, NULL);
  float qd[24], kd[48], vd[60], ref[30], got[30];
  for (int i = 0; i < 24; i++) qd[i] = (float)cos(i * 0.9);
  for (int i = 0; i < 48; i++) kd[i] = (float)sin(i * 0.4);
  for (int i = 0; i < 60; i++) vd[i] = (float)(i % 7) - 3;
  vkf_input_binding in[3] = {{q, qd, sizeof qd}, {k, kd, sizeof kd}, {v, vd, sizeof vd}};
  vkf_output_binding out = {o, ref, sizeof ref};
  CHECK_OK(vkf_interp_evaluate(g, in, 3, &out, 1));
  uint32_t rewrites;
  CHECK_OK(vkf_pass_fuse_attention(g, NULL, &rewrites));
  CHECK_OK(vkf_graph_verify(g));
  CHECK(rewrites == 1 && vkf_graph_node_count(g) == 1); /* the permute went too */
  const vkf_node *a = vkf_graph_node(g, 0);
  CHECK(a->op == VKF_OP_ATTENTION && a->attrs.attention.causal && a->input_count == 5);
  CHECK(a->inputs[VKF_IN_ATTENTION_K].id == k.id && a->inputs[VKF_IN_ATTENTION_BIAS].id == mask.id);
  out.data = got;
  CHECK_OK(vkf_interp_evaluate(g, in, 3, &out, 1));
  for (int i = 0; i < 30; i++) CHECK_NEAR(got[i], ref[i], 2e-6);
  vkf_graph_destroy(g);

  /* Not fusable: per-row valid lengths; and probabilities that are also an output. */
  for (int variant = 0; variant < 2; variant++) {
    CHECK_OK(vkf_graph_create("nofuse", &g));
    q = vkf_graph_input(g, "q", VKF_F32, 3, SHAPE(2, 3, 4));
    k = vkf_graph_input(g, "k", VKF_F32, 3, SHAPE(2, 6, 4));
    vkf_value rows = vkf_graph_input(g, "rows", VKF_I32, 2, SHAPE(2, 3));
    s = vkf_matmul(g, "scores", q, k, &(vkf_matmul_options){.transpose_b = 1});
    p = vkf_softmax(g, "softmax", s,
                    &(vkf_softmax_options){.valid_lens = variant == 0 ? rows : VKF_NO_VALUE});
    vkf_graph_output(g, vkf_matmul(g, "context", p, k, NULL), NULL);
    if (variant == 1) vkf_graph_output(g, p, "weights");
    CHECK_OK(vkf_graph_status(g));
    CHECK_OK(vkf_pass_fuse_attention(g, NULL, &rewrites));
    CHECK(rewrites == 0 && count_op(g, VKF_OP_SOFTMAX) == 1);
    vkf_graph_destroy(g);
  }
}

int main(void) {
  init_data();
  test_each_pass_preserves_output();
  test_pipeline_and_skips();
  test_attention_variants();
  return test_report();
}
