/* The linear-attention family on the device (shaders/linear_features.comp,
 * shaders/linear_attention.comp) against the interpreter, whose LINEAR_ATTENTION is the quadratic
 * masked form (no state recurrence, no chunks): held-out odd shapes (D = 7, F = 9 / 11 / 22,
 * Dv = 5, N not a multiple of the chunk), strided views, every feature map, non-causal and causal,
 * with and without the RFA gate and an initial state; then the recurrent decode on one session
 * whose state stays on the device (token by token from an empty state, and continuing after a
 * prefill whose final state LINEAR_STATE_WRITE wrote), checked token by token against the quadratic
 * form of the whole sequence. All within 1e-4 (fp32). */
#include "tests/op_case.h"

static const op_tol TOL = {2e-5, 1e-4};

enum { B = 2, H = 3, N = 37, D = 7, F = 9, DV = 5, CHUNK = 8 };

/* x as the permute of [B, N, H, D] (heads split out of a projection), so views are read right. */
static vkf_value heads_view(op_case *c, const char *name, int64_t len, int64_t dim, float lo,
                            float hi) {
  int64_t s[4] = {B, len, H, dim};
  vkf_value x = op_case_input(c, name, VKF_F32, 4, s, lo, hi);
  char nm[64];
  snprintf(nm, sizeof nm, "%s.heads", name);
  return vkf_permute(c->g, nm, x, (const uint32_t[]){0, 2, 1, 3});
}

static void features(gpu_test *t) {
  static const char *const labels[] = {"elu1", "favor (M = 11)",
                                       "rff (M = 11, F = 22, omega a transposed view)"};
  for (int kind = 0; kind < 3; kind++) {
    op_case c = op_case_begin("features");
    vkf_value x = heads_view(&c, "x", N, D, -2, 2);
    vkf_value w = VKF_NO_VALUE;
    if (kind == VKF_FEATURE_FAVOR)
      w = op_case_input(&c, "omega", VKF_F32, 2, (const int64_t[]){11, D}, -1.5f, 1.5f);
    if (kind == VKF_FEATURE_RFF) /* omega as a transposed view of a [D, M] weight */
      w = vkf_permute(c.g, "omega_t",
                      op_case_input(&c, "omega", VKF_F32, 2, (const int64_t[]){D, 11}, -1.5f, 1.5f),
                      (const uint32_t[]){1, 0});
    op_case_run(t, &c, vkf_linear_features(c.g, "phi", x, w, (vkf_feature_map)kind, 0), TOL,
                labels[kind]);
  }
}

typedef struct core_case {
  const char *label;
  int causal, gated, state;
  int64_t len;
  uint32_t chunk;
} core_case;

static void core(gpu_test *t, const core_case *k) {
  op_case c = op_case_begin(k->label);
  vkf_value q = heads_view(&c, "q", k->len, F, 0.05f, 1);
  vkf_value kk = heads_view(&c, "k", k->len, F, 0.05f, 1);
  vkf_value v = heads_view(&c, "v", k->len, DV, -1, 1);
  vkf_linear_attention_options o = {.causal = k->causal, .chunk = k->chunk};
  if (k->gated)
    o.gate = op_case_input(&c, "gate", VKF_F32, 3, (const int64_t[]){B, H, k->len}, -3, 3);
  if (k->state)
    o.state = op_case_input(&c, "state", VKF_F32, 4, (const int64_t[]){B, H, F, DV + 1}, 0.1f, 2);
  op_case_run(t, &c, vkf_linear_attention(c.g, "lin", q, kk, v, &o), TOL, k->label);
}

static void cores(gpu_test *t) {
  static const core_case cases[] = {
      {"non-causal N=37", 0, 0, 0, N, 0},
      {"causal N=37 chunk 8 (5 chunks, last of 5)", 1, 0, 0, N, CHUNK},
      {"causal N=37 chunk 8 from a state", 1, 0, 1, N, CHUNK},
      {"causal gated N=37 chunk 8", 1, 1, 0, N, CHUNK},
      {"causal gated N=37 chunk 8 from a state", 1, 1, 1, N, CHUNK},
      {"causal N=37 one chunk (64) from a state", 1, 0, 1, N, 0},
      {"causal gated N=150 chunk 64", 1, 1, 0, 150, 0},
      {"causal N=1 from a state (decode shape)", 1, 0, 1, 1, 0},
      {"causal gated N=150 chunk 5 (run as 8) from a state", 1, 1, 1, 150, 5},
      {"causal N=150 chunk 200 (run as 128, 2 chunks)", 1, 0, 0, 150, 200},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) core(t, &cases[i]);
  {
    /* maxStorageBufferRange 40000 bytes: at chunk 4 the 38 chunk states (49248 bytes) do not fit
     * one binding, so the lowering runs chunk 8 (24624 bytes of states, 28800 of weights). */
    op_case c = op_case_begin("range");
    vkf_value q = heads_view(&c, "q", 150, F, 0.05f, 1), kk = heads_view(&c, "k", 150, F, 0.05f, 1);
    vkf_value v = heads_view(&c, "v", 150, DV, -1, 1);
    vkf_value g = op_case_input(&c, "gate", VKF_F32, 3, (const int64_t[]){B, H, 150}, -3, 3);
    vkf_linear_attention_options o = {.causal = 1, .chunk = 4, .gate = g};
    vkf_graph_output(c.g, vkf_linear_attention(c.g, "lin", q, kk, v, &o), NULL);
    vkf_device_caps caps = *vkf_device_caps_get(t->device);
    caps.max_storage_buffer_range = 40000;
    CHECK_OK(vkf_graph_status(c.g));
    op_check_with(t, c.g, c.in, c.n, &caps, TOL, "chunk lengthened to fit maxStorageBufferRange");
    for (size_t i = 0; i < c.n; i++) free(c.data[i]);
    vkf_graph_destroy(c.g);
  }
  /* LINEAR_STATE_WRITE alone: the state after 37 tokens, ungated and gated, vs the recurrence. */
  for (int gated = 0; gated < 2; gated++) {
    op_case c = op_case_begin("state_write");
    vkf_value s = op_case_input(&c, "state", VKF_F32, 4, (const int64_t[]){B, H, F, DV + 1}, 0, 1);
    vkf_value kk = heads_view(&c, "k", N, F, 0.05f, 1);
    vkf_value v = heads_view(&c, "v", N, DV, -1, 1);
    vkf_value g = gated ? op_case_input(&c, "gate", VKF_F32, 3, (const int64_t[]){B, H, N}, -3, 3)
                        : VKF_NO_VALUE;
    op_case_run(t, &c, vkf_linear_state_write(c.g, "write", s, kk, v, g), TOL,
                gated ? "state write, gated" : "state write");
  }
}

/* ---- decoding with the state on the device ---- */

typedef struct seq_data {
  float q[B * H * N * F], k[B * H * N * F], v[B * H * N * DV], gate[B * H * N];
} seq_data;

/* Rows [t0, t0 + len) of [B, H, N, W] into [B, H, len, W]. */
static void take(const float *src, int64_t w, int64_t t0, int64_t len, float *dst) {
  for (int64_t p = 0; p < B * H; p++)
    memcpy(dst + p * len * w, src + (p * N + t0) * w, (size_t)(len * w) * sizeof(float));
}

/* The quadratic masked form of the whole sequence in the interpreter: [B, H, N, DV]. */
static void reference(const seq_data *s, int gated, float *out) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("ref", &g));
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, (const int64_t[]){B, H, N, F});
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, (const int64_t[]){B, H, N, F});
  vkf_value v = vkf_graph_input(g, "v", VKF_F32, 4, (const int64_t[]){B, H, N, DV});
  vkf_value gt = vkf_graph_input(g, "gate", VKF_F32, 3, (const int64_t[]){B, H, N});
  vkf_linear_attention_options o = {.causal = 1, .gate = gated ? gt : VKF_NO_VALUE};
  vkf_graph_output(g, vkf_linear_attention(g, "lin", q, k, v, &o), "out");
  vkf_input_binding in[] = {{q, s->q, sizeof s->q},
                            {k, s->k, sizeof s->k},
                            {v, s->v, sizeof s->v},
                            {gt, s->gate, sizeof s->gate}};
  CHECK_OK(op_run_interp(g, in, gated ? 4 : 3, 0, out, B * H * N * DV));
  vkf_graph_destroy(g);
}

/* One plan for `len` tokens: out = linear_attention(causal, state = S) then S <- write(S, k, v). */
typedef struct step_plan {
  vkf_graph *g;
  vkf_lowered low;
  vkf_session *s;
  vkf_value q, k, v, gate, state, out;
} step_plan;

static void step_open(gpu_test *t, step_plan *p, int64_t len, int gated) {
  memset(p, 0, sizeof *p);
  CHECK_OK(vkf_graph_create("step", &p->g));
  vkf_graph *g = p->g;
  p->q = vkf_graph_input(g, "q", VKF_F32, 4, (const int64_t[]){B, H, len, F});
  p->k = vkf_graph_input(g, "k", VKF_F32, 4, (const int64_t[]){B, H, len, F});
  p->v = vkf_graph_input(g, "v", VKF_F32, 4, (const int64_t[]){B, H, len, DV});
  p->gate =
      gated ? vkf_graph_input(g, "gate", VKF_F32, 3, (const int64_t[]){B, H, len}) : VKF_NO_VALUE;
  p->state = vkf_graph_input(g, "state", VKF_F32, 4, (const int64_t[]){B, H, F, DV + 1});
  vkf_linear_attention_options o = {
      .causal = 1, .chunk = CHUNK, .gate = p->gate, .state = p->state};
  p->out = vkf_graph_output(g, vkf_linear_attention(g, "lin", p->q, p->k, p->v, &o), "out");
  vkf_linear_state_write(g, "write", p->state, p->k, p->v, p->gate);
  CHECK_OK(vkf_graph_status(g));
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  CHECK_OK(vkf_lower_graph(g, vkf_device_caps_get(t->device), NULL, &p->low));
  CHECK_OK(vkf_session_create(t->device, p->low.plan, NULL, &p->s));
}

static void step_close(step_plan *p) {
  vkf_session_destroy(p->s);
  vkf_lowered_free(&p->low);
  vkf_graph_destroy(p->g);
}

static uint32_t buf(const step_plan *p, vkf_value v) {
  return p->low.tensors[v.id].buffer;
}

/* Runs tokens [t0, t0 + len) through the plan (the state stays in its buffer) into out_all. */
static void step_run(step_plan *p, const seq_data *s, int64_t t0, int64_t len, float *out_all) {
  static float tq[B * H * N * F], tk[B * H * N * F], tv[B * H * N * DV], tg[B * H * N],
      to[B * H * N * DV];
  take(s->q, F, t0, len, tq);
  take(s->k, F, t0, len, tk);
  take(s->v, DV, t0, len, tv);
  take(s->gate, 1, t0, len, tg);
  size_t fsz = (size_t)(B * H * len * F) * 4, vsz = (size_t)(B * H * len * DV) * 4;
  CHECK_OK(vkf_session_write(p->s, buf(p, p->q), 0, tq, fsz));
  CHECK_OK(vkf_session_write(p->s, buf(p, p->k), 0, tk, fsz));
  CHECK_OK(vkf_session_write(p->s, buf(p, p->v), 0, tv, vsz));
  if (p->gate.id)
    CHECK_OK(vkf_session_write(p->s, buf(p, p->gate), 0, tg, (size_t)(B * H * len) * 4));
  CHECK_OK(vkf_session_run(p->s));
  CHECK_OK(vkf_session_read(p->s, buf(p, p->out), 0, to, vsz));
  for (int64_t q = 0; q < B * H; q++)
    memcpy(out_all + (q * N + t0) * DV, to + q * len * DV, (size_t)(len * DV) * 4);
}

static void compare(const float *got, const float *ref, const char *label) {
  int bad = 0;
  double worst = 0;
  for (int i = 0; i < B * H * N * DV; i++) {
    double e = fabs((double)got[i] - ref[i]);
    if (!(e <= TOL.atol + TOL.rtol * fabs(ref[i]))) bad++;
    if (e > worst) worst = e;
  }
  CHECK_MSG(bad == 0, "%s: %d elements out of tolerance (max err %.3g)", label, bad, worst);
  printf("  %s: max |err| %.3g\n", label, worst);
}

static void decode(gpu_test *t, int gated) {
  static seq_data s;
  op_fill_uniform(s.q, B * H * N * F, 11 + gated, 0.05f, 1);
  op_fill_uniform(s.k, B * H * N * F, 23 + gated, 0.05f, 1);
  op_fill_uniform(s.v, B * H * N * DV, 37 + gated, -1, 1);
  op_fill_uniform(s.gate, B * H * N, 41 + gated, -3, 3);
  static float ref[B * H * N * DV], got[B * H * N * DV], state[B * H * F * (DV + 1)];
  reference(&s, gated, ref);

  /* Token by token from an empty state: one plan, the state never leaves the device. */
  step_plan one;
  step_open(t, &one, 1, gated);
  memset(state, 0, sizeof state);
  CHECK_OK(vkf_session_write(one.s, buf(&one, one.state), 0, state, sizeof state));
  for (int64_t i = 0; i < N; i++) step_run(&one, &s, i, 1, got);
  compare(got, ref,
          gated ? "gated decode from empty vs quadratic" : "decode from empty vs quadratic");

  /* A 21-token prefill (chunked scan, 3 chunks of 8) writes the state, then decode continues. */
  enum { P = 21 };
  step_plan pre;
  step_open(t, &pre, P, gated);
  memset(state, 0, sizeof state);
  CHECK_OK(vkf_session_write(pre.s, buf(&pre, pre.state), 0, state, sizeof state));
  step_run(&pre, &s, 0, P, got);
  CHECK_OK(vkf_session_read(pre.s, buf(&pre, pre.state), 0, state, sizeof state));
  CHECK_OK(vkf_session_write(one.s, buf(&one, one.state), 0, state, sizeof state));
  for (int64_t i = P; i < N; i++) step_run(&one, &s, i, 1, got);
  compare(got, ref,
          gated ? "gated prefill 21 + decode vs quadratic" : "prefill 21 + decode vs quadratic");
  step_close(&pre);
  step_close(&one);
}

int main(void) {
  gpu_test t = gpu_test_start();
  features(&t);
  cores(&t);
  decode(&t, 0);
  decode(&t, 1);
  return gpu_test_finish(&t);
}
