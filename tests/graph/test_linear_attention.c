/* The linear-attention family without a GPU: shape errors name the node and the tensor; the seeded
 * random features are deterministic, orthogonal within each block of d rows, with Gaussian-like
 * row norms; the interpreter's quadratic form equals a direct evaluation of the recurrence
 * (prefill then state write then one more token); dead-node elimination keeps the state write,
 * which lands in the state's storage with a barrier before later readers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "graph/ir/random_features.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "graph/passes/passes.h"
#include "tests/graph/desktop_caps.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static vkf_graph *new_graph(void) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("lin", &g));
  return g;
}

static void expect_error(vkf_graph *g, const char *want) {
  vkf_status s = vkf_graph_status(g);
  CHECK_MSG(vkf_status_code_of(s) == VKF_STATUS_SHAPE, "code %s: %s",
            vkf_status_code_name(vkf_status_code_of(s)), s ? vkf_status_message(s) : "ok");
  CHECK_MSG(s && strcmp(vkf_status_message(s), want) == 0, "got \"%s\"\n want \"%s\"",
            s ? vkf_status_message(s) : "ok", want);
  vkf_status_free(s);
  vkf_graph_destroy(g);
}

static void test_shape_errors(void) {
  vkf_graph *g = new_graph();
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 4, SHAPE(1, 2, 5, 4));
  vkf_linear_features(g, "phi", x, VKF_NO_VALUE, VKF_FEATURE_FAVOR, 0);
  expect_error(g, "linear_features \"phi\": favor needs omega [M, 4]");

  g = new_graph();
  x = vkf_graph_input(g, "x", VKF_F32, 4, SHAPE(1, 2, 5, 4));
  vkf_value w = vkf_graph_input(g, "omega", VKF_F32, 2, SHAPE(8, 3));
  vkf_linear_features(g, "phi", x, w, VKF_FEATURE_RFF, 0);
  expect_error(g,
               "linear_features \"phi\": omega [8,3] does not match x [1,2,5,4]: expected [M, 4]");

  g = new_graph();
  x = vkf_graph_input(g, "x", VKF_F16, 4, SHAPE(1, 2, 5, 4));
  vkf_linear_features(g, "phi", x, VKF_NO_VALUE, VKF_FEATURE_ELU1, 0);
  expect_error(g, "linear_features \"phi\": x \"x\" must be f32, got f16");

  g = new_graph();
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 2, 5, 4));
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(1, 2, 5, 4));
  vkf_value v = vkf_graph_input(g, "v", VKF_F32, 4, SHAPE(1, 2, 6, 3));
  vkf_linear_attention(g, "lin", q, k, v, NULL);
  expect_error(g,
               "linear_attention \"lin\": v [1,2,6,3] does not match phi_k [1,2,5,4] in B, H, N");

  g = new_graph();
  q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 2, 5, 4));
  k = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(1, 2, 5, 4));
  v = vkf_graph_input(g, "v", VKF_F32, 4, SHAPE(1, 2, 5, 3));
  vkf_value s = vkf_graph_input(g, "state", VKF_F32, 4, SHAPE(1, 2, 4, 3));
  vkf_linear_attention(g, "lin", q, k, v, &(vkf_linear_attention_options){.causal = 1, .state = s});
  expect_error(g,
               "linear_attention \"lin\": state [1,2,4,3], expected [1,2,4,4] for phi_k "
               "[1,2,5,4] (columns: Dv of S, then z)");

  g = new_graph();
  q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 2, 5, 4));
  k = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(1, 2, 5, 4));
  v = vkf_graph_input(g, "v", VKF_F32, 4, SHAPE(1, 2, 5, 3));
  vkf_value gate = vkf_graph_input(g, "gate", VKF_F32, 3, SHAPE(1, 2, 5));
  vkf_linear_attention(g, "lin", q, k, v, &(vkf_linear_attention_options){.gate = gate});
  expect_error(g, "linear_attention \"lin\": a gate or a state needs causal=1");

  g = new_graph();
  k = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(1, 2, 5, 4));
  v = vkf_graph_input(g, "v", VKF_F32, 4, SHAPE(1, 2, 5, 3));
  gate = vkf_graph_input(g, "gate", VKF_F32, 3, SHAPE(1, 2, 4));
  s = vkf_graph_input(g, "state", VKF_F32, 4, SHAPE(1, 2, 4, 4));
  vkf_linear_state_write(g, "write", s, k, v, gate);
  expect_error(
      g, "linear_state_write \"write\": gate [1,2,4] does not match phi_k [1,2,5,4] in B, H, N");
}

static void test_random_features(void) {
  enum { M = 20, D = 8 };
  float a[M * D], b[M * D], c[M * D];
  CHECK_OK(vkf_random_features(7, M, D, 1, a));
  CHECK_OK(vkf_random_features(7, M, D, 1, b));
  CHECK_OK(vkf_random_features(8, M, D, 1, c));
  CHECK(memcmp(a, b, sizeof a) == 0); /* the redraw rule: a seed gives the same omega */
  CHECK(memcmp(a, c, sizeof a) != 0);
  double norm_sum = 0;
  for (int i = 0; i < M; i++) {
    double ni = 0;
    for (int k = 0; k < D; k++) ni += (double)a[i * D + k] * a[i * D + k];
    norm_sum += ni;
    for (int j = 0; j < i; j++) {
      if (i / D != j / D) continue; /* orthogonal within a block of D rows */
      double dot = 0, nj = 0;
      for (int k = 0; k < D; k++)
        dot += (double)a[i * D + k] * a[j * D + k], nj += (double)a[j * D + k] * a[j * D + k];
      CHECK_MSG(fabs(dot) < 1e-5 * sqrt(ni * nj), "rows %d, %d: cosine %g", i, j,
                dot / sqrt(ni * nj));
    }
  }
  /* Row norms are chi-distributed with D degrees of freedom: mean square D. */
  CHECK_MSG(norm_sum / M > 0.5 * D && norm_sum / M < 1.5 * D, "mean square norm %g", norm_sum / M);
  CHECK_STATUS(vkf_random_features(1, 0, D, 1, a), VKF_STATUS_INVALID_ARGUMENT, "0 x 8");
}

/* One token more after a prefill, by hand: state after N tokens from the interpreter's
 * LINEAR_STATE_WRITE, then out = phi(q)^T S / (phi(q) . z + eps); the quadratic form over N + 1
 * tokens must give the same last row. Gated, so the gate products are checked too. */
static void test_recurrence_vs_quadratic(void) {
  enum { N = 6, F = 3, DV = 2 };
  float q[(N + 1) * F], k[(N + 1) * F], v[(N + 1) * DV], gate[N + 1], state[F * (DV + 1)] = {0};
  for (int i = 0; i < (N + 1) * F; i++)
    q[i] = 0.1f + 0.05f * (float)(i % 7), k[i] = 0.2f + 0.03f * (float)(i % 5);
  for (int i = 0; i < (N + 1) * DV; i++) v[i] = -1.0f + 0.3f * (float)(i % 8);
  for (int i = 0; i <= N; i++) gate[i] = -2.0f + 0.7f * (float)i;

  vkf_graph *g = new_graph();
  vkf_value tq = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 1, N + 1, F));
  vkf_value tk = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(1, 1, N + 1, F));
  vkf_value tv = vkf_graph_input(g, "v", VKF_F32, 4, SHAPE(1, 1, N + 1, DV));
  vkf_value tg = vkf_graph_input(g, "gate", VKF_F32, 3, SHAPE(1, 1, N + 1));
  vkf_value ts = vkf_graph_input(g, "state", VKF_F32, 4, SHAPE(1, 1, F, DV + 1));
  vkf_value out = vkf_linear_attention(g, "lin", tq, tk, tv,
                                       &(vkf_linear_attention_options){.causal = 1, .gate = tg});
  vkf_graph_output(g, out, "out");
  vkf_value kp = vkf_slice(g, "k_pre", tk, 2, 0, N), vp = vkf_slice(g, "v_pre", tv, 2, 0, N);
  vkf_value gp = vkf_slice(g, "g_pre", tg, 2, 0, N);
  vkf_value written = vkf_linear_state_write(g, "write", ts, kp, vp, gp);
  vkf_graph_output(g, written, "state_after");
  CHECK_OK(vkf_graph_status(g));
  vkf_interp *in = NULL;
  CHECK_OK(vkf_interp_create(g, &in));
  CHECK_OK(vkf_interp_set(in, tq, q, sizeof q));
  CHECK_OK(vkf_interp_set(in, tk, k, sizeof k));
  CHECK_OK(vkf_interp_set(in, tv, v, sizeof v));
  CHECK_OK(vkf_interp_set(in, tg, gate, sizeof gate));
  CHECK_OK(vkf_interp_set(in, ts, state, sizeof state));
  CHECK_OK(vkf_interp_run(in));
  float quad[(N + 1) * DV], s[F * (DV + 1)];
  CHECK_OK(vkf_interp_get_f32(in, vkf_graph_output_at(g, 0), quad, (N + 1) * DV));
  CHECK_OK(vkf_interp_get_f32(in, vkf_graph_output_at(g, 1), s, F * (DV + 1)));
  vkf_interp_destroy(in);
  /* Token N by the recurrence from S_{N-1}. */
  double gn = 1.0 / (1.0 + exp(-(double)gate[N])), num[DV + 1];
  for (int j = 0; j <= DV; j++) {
    num[j] = 0;
    for (int i = 0; i < F; i++) {
      double kv = (double)k[N * F + i] * (j < DV ? v[N * DV + j] : 1.0);
      num[j] += (double)q[N * F + i] * (gn * s[i * (DV + 1) + j] + (1 - gn) * kv);
    }
  }
  for (int j = 0; j < DV; j++) CHECK_NEAR(quad[N * DV + j], num[j] / (num[DV] + 1e-6), 1e-5);
  vkf_graph_destroy(g);
}

/* The state write survives dead-code elimination, lowers into the state's own buffer, and a later
 * reader of the state waits for it. */
static void test_plan(void) {
  vkf_graph *g = new_graph();
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(1, 2, 1, 4));
  vkf_value v = vkf_graph_input(g, "v", VKF_F32, 4, SHAPE(1, 2, 1, 3));
  vkf_value s = vkf_graph_input(g, "state", VKF_F32, 4, SHAPE(1, 2, 4, 4));
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 2, 1, 4));
  vkf_value out = vkf_linear_attention(g, "lin", q, k, v,
                                       &(vkf_linear_attention_options){.causal = 1, .state = s});
  vkf_graph_output(g, out, "out");
  vkf_linear_state_write(g, "write", s, k, v, VKF_NO_VALUE);
  CHECK_OK(vkf_graph_status(g));
  CHECK_OK(vkf_passes_run(g, &(vkf_pass_options){0}, NULL));
  CHECK(vkf_graph_node_count(g) == 2);
  vkf_lowered low;
  vkf_device_caps caps = desktop_caps();
  CHECK_OK(vkf_lower_graph(g, &caps, NULL, &low));
  /* Decode: intra-chunk weights, output (one chunk: straight from the state), the write. */
  CHECK(vkf_plan_dispatch_count(low.plan) == 3);
  const vkf_plan_dispatch *w = vkf_plan_dispatch_get(low.plan, 2);
  CHECK(strcmp(w->node, "write") == 0 && w->barrier_before);
  CHECK(w->bindings[3].buffer == low.tensors[s.id].buffer);
  vkf_lowered_free(&low);
  vkf_graph_destroy(g);
}

int main(void) {
  test_shape_errors();
  test_random_features();
  test_recurrence_vs_quadratic();
  test_plan();
  return test_report();
}
