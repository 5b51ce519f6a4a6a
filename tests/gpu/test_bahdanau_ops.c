/* Bahdanau's ops on the device against the interpreter. GRU_SCAN: hidden sizes below, at and
 * above one workgroup, with and without h0, strided gates, one step and many; and recurrences
 * longer than lavapipe's loop-iteration limit lets one dispatch run (caps.h), which the lowering
 * cuts into dispatches: 245 units over 24 steps in a one-subgroup workgroup (31 units per
 * invocation; one dispatch ran out in its third step, and at 64 invocations in its 23rd), and 1024
 * units (the largest; 64 invocations ran out in the second step). ADDITIVE_ATTENTION:
 * the context and the weights, valid
 * lengths per batch row and per query row (0, negative and past the keys: clamped; a row with no
 * key is zeros), no lengths, key counts across several workgroup tiles, value dims wider than one
 * workgroup's columns (more workgroups along z), strided (permuted) inputs as a decoder's
 * projections give them, f16 storage. Also run under the mobile profile (shared-memory
 * reductions). Tolerances, |gpu - ref| <= atol + rtol * |ref|: fp32 tanh sums of <= 64 terms and a
 * softmax against fp64; f16 storage rounds inputs and outputs. */
#include <math.h>

#include "tests/op_case.h"

static const op_tol TOL = {2e-5, 2e-5};
static const op_tol TOL_F16 = {4e-3, 4e-3};
/* fp32 recurrences: the state's rounding compounds over the steps */
static const op_tol TOL_GRU = {5e-5, 5e-5};

typedef struct add_case {
  int64_t b, nq, nk, h, dv;
  int lens_rank; /* 0 none, 1 [B], 2 [B, Nq] */
} add_case;

static void run_case(gpu_test *t, const add_case *ac, vkf_dtype dt, int weights, int strided) {
  static const int32_t lens[] = {3, 0, 70, -4, 1, 129, 2, 5, 64, 65};
  op_case c = op_case_begin("additive");
  int64_t sq[3] = {ac->b, ac->nq, ac->h}, sk[3] = {ac->b, ac->nk, ac->h}, sw[1] = {ac->h};
  int64_t sv[3] = {ac->b, ac->nk, ac->dv}, sl[2] = {ac->b, ac->nq};
  vkf_value q, k, v;
  if (strided) { /* [B, H, N] inputs permuted to [B, N, H] */
    static const uint32_t ax[3] = {0, 2, 1};
    int64_t tq[3] = {ac->b, ac->h, ac->nq}, tk[3] = {ac->b, ac->h, ac->nk};
    int64_t tv[3] = {ac->b, ac->dv, ac->nk};
    q = vkf_permute(c.g, "qp", op_case_input(&c, "qt", dt, 3, tq, -2, 2), ax);
    k = vkf_permute(c.g, "kp", op_case_input(&c, "kt", dt, 3, tk, -2, 2), ax);
    v = vkf_permute(c.g, "vp", op_case_input(&c, "vt", dt, 3, tv, -1, 1), ax);
  } else {
    q = op_case_input(&c, "q", dt, 3, sq, -2, 2);
    k = op_case_input(&c, "k", dt, 3, sk, -2, 2);
    v = op_case_input(&c, "v", dt, 3, sv, -1, 1);
  }
  vkf_value w = op_case_input(&c, "w", dt, 1, sw, -1, 1);
  vkf_value l = ac->lens_rank ? op_case_input_i32(&c, "lens", (uint32_t)ac->lens_rank, sl, lens,
                                                  sizeof lens / sizeof *lens)
                              : VKF_NO_VALUE;
  char label[160];
  snprintf(label, sizeof label, "additive b %lld nq %lld nk %lld h %lld dv %lld lens %d %s%s%s",
           (long long)ac->b, (long long)ac->nq, (long long)ac->nk, (long long)ac->h,
           (long long)ac->dv, ac->lens_rank, weights ? "weights" : "context",
           dt == VKF_F16 ? " f16" : "", strided ? " strided" : "");
  op_case_run(t, &c, vkf_additive_attention(c.g, "op", q, k, w, v, l, weights),
              dt == VKF_F16 ? TOL_F16 : TOL, label);
}

static void gru_case(gpu_test *t, int64_t b, int64_t steps, int64_t h, int with_h0, int strided) {
  op_case c = op_case_begin("gru");
  int64_t sg[3] = {b, steps, 3 * h}, sw[2] = {3 * h, h}, sb[1] = {3 * h}, sh[2] = {b, h};
  vkf_value gates;
  if (strided) { /* [B, 3H, T] permuted to [B, T, 3H] */
    static const uint32_t ax[3] = {0, 2, 1};
    int64_t tg[3] = {b, 3 * h, steps};
    gates = vkf_permute(c.g, "gp", op_case_input(&c, "gt", VKF_F32, 3, tg, -2, 2), ax);
  } else {
    gates = op_case_input(&c, "gates", VKF_F32, 3, sg, -2, 2);
  }
  /* torch's init range 1/sqrt(H): wider weights make the recurrence chaotic at large H, where
   * fp32 rounding then grows past any tolerance within a few steps */
  float k = 1.0f / sqrtf((float)h);
  vkf_value w = op_case_input(&c, "w", VKF_F32, 2, sw, -k, k);
  vkf_value bias = op_case_input(&c, "b", VKF_F32, 1, sb, -1, 1);
  vkf_value h0 = with_h0 ? op_case_input(&c, "h0", VKF_F32, 2, sh, -1, 1) : VKF_NO_VALUE;
  char label[128];
  snprintf(label, sizeof label, "gru_scan b %lld steps %lld h %lld%s%s", (long long)b,
           (long long)steps, (long long)h, with_h0 ? " h0" : "", strided ? " strided" : "");
  op_case_run(t, &c, vkf_gru_scan(c.g, "op", gates, w, bias, h0), TOL_GRU, label);
}

int main(void) {
  gpu_test t = gpu_test_start();
  gru_case(&t, 2, 7, 5, 1, 0);
  gru_case(&t, 3, 1, 32, 0, 0);
  gru_case(&t, 1, 25, 70, 1, 1);
  gru_case(&t, 2, 9, 257, 0, 0);
  gru_case(&t, 2, 24, 245, 1, 0);
  gru_case(&t, 1, 10, 1024, 0, 0);
  static const add_case cases[] = {
      {2, 1, 10, 8, 4, 1},   {2, 5, 9, 6, 7, 2},   {1, 3, 130, 16, 12, 1},
      {2, 2, 40, 10, 300, 2}, {3, 4, 17, 5, 6, 0},  {1, 1, 1, 1, 1, 0},
      {2, 7, 65, 33, 129, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (int weights = 0; weights < 2; weights++) {
      run_case(&t, &cases[i], VKF_F32, weights, 0);
      run_case(&t, &cases[i], VKF_F32, weights, 1);
      run_case(&t, &cases[i], VKF_F16, weights, 0);
    }
  return gpu_test_finish(&t);
}
