/* The ops low-rank attention adds, on the device against the interpreter: REDUCE (sum and max
 * along every axis position of rank 1 to 4, strided input, f16) and DEPTHWISE_CONV (odd kernels
 * shorter and longer than the sequence, kernel 1, a strided input as Nystromformer's permuted V,
 * f16). Tolerances, |gpu - ref| <= atol + rtol * |ref|: fp32 sums of <= 64 terms in [-1, 1)
 * against fp64; max is exact; f16 storage rounds the output (rtol 1e-3). */
#include "tests/op_case.h"

static const op_tol TOL_SUM = {2e-6, 1e-5};
static const op_tol TOL_EXACT = {0.0, 0.0};
static const op_tol TOL_F16 = {2e-3, 1e-3};

static const char *const kind_name[VKF_REDUCE_COUNT] = {"sum", "max", "argmax"};

static void reduces(gpu_test *t) {
  static const int64_t shapes[4][4] = {{37}, {5, 17}, {3, 4, 9}, {2, 3, 11, 7}};
  for (uint32_t rank = 1; rank <= 4; rank++)
    for (uint32_t axis = 0; axis < rank; axis++)
      for (int kind = 0; kind < VKF_REDUCE_COUNT; kind++) {
        op_case c = op_case_begin("reduce");
        vkf_value x = op_case_input(&c, "x", VKF_F32, rank, shapes[rank - 1], -1, 1);
        char label[64];
        snprintf(label, sizeof label, "reduce %s rank %u axis %u", kind_name[kind], rank, axis);
        op_case_run(t, &c, vkf_reduce(c.g, "op", x, (vkf_reduce_kind)kind, axis),
                    kind ? TOL_EXACT : TOL_SUM, label);
      }
  {
    /* A column sum of a transposed (strided) view, as the pseudo-inverse's init reads it. */
    op_case c = op_case_begin("reduce_strided");
    int64_t s[4] = {2, 3, 16, 16};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 4, s, -1, 1);
    static const uint32_t ax[4] = {0, 1, 3, 2};
    op_case_run(t, &c, vkf_reduce(c.g, "op", vkf_permute(c.g, "xt", x, ax), VKF_REDUCE_SUM, 2),
                TOL_SUM, "reduce sum strided");
  }
  for (int kind = 0; kind < VKF_REDUCE_COUNT; kind++) {
    op_case c = op_case_begin("reduce_f16");
    int64_t s[3] = {4, 33, 6};
    vkf_value x = op_case_input(&c, "x", VKF_F16, 3, s, -1, 1);
    char label[64];
    snprintf(label, sizeof label, "reduce %s f16", kind_name[kind]);
    op_case_run(t, &c, vkf_reduce(c.g, "op", x, (vkf_reduce_kind)kind, 1),
                kind == VKF_REDUCE_ARGMAX ? TOL_EXACT : TOL_F16, label);
  }
  /* Argmax over rows of logits' length (lanes stride over thousands of values, then combine), and
   * small integers, whose many ties must give the first maximum whatever the workgroup size. */
  for (int ints = 0; ints < 2; ints++) {
    op_case c = op_case_begin("argmax_rows");
    int64_t s[2] = {3, ints ? 777 : 49157};
    vkf_value x = op_case_input_ex(&c, "x", VKF_F32, 2, s, ints ? -3 : -1, ints ? 3 : 1, ints);
    op_case_run(t, &c, vkf_reduce(c.g, "op", x, VKF_REDUCE_ARGMAX, 1), TOL_EXACT,
                ints ? "reduce argmax of ties" : "reduce argmax of long rows");
  }
}

static void convs(gpu_test *t) {
  static const struct {
    int64_t b, h, n, d, k;
  } cases[] = {{2, 3, 17, 5, 3}, {1, 2, 9, 4, 13}, {2, 2, 8, 3, 1}, {1, 4, 64, 8, 65}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    op_case c = op_case_begin("conv");
    int64_t sx[4] = {cases[i].b, cases[i].h, cases[i].n, cases[i].d};
    int64_t sw[2] = {cases[i].h, cases[i].k};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 4, sx, -1, 1);
    vkf_value w = op_case_input(&c, "w", VKF_F32, 2, sw, -1, 1);
    char label[64];
    snprintf(label, sizeof label, "depthwise_conv n %lld k %lld", (long long)cases[i].n,
             (long long)cases[i].k);
    op_case_run(t, &c, vkf_depthwise_conv(c.g, "op", x, w), TOL_SUM, label);
  }
  {
    /* V as [B, N, H, D] from the projection, permuted to [B, H, N, D]. */
    op_case c = op_case_begin("conv_strided");
    int64_t sx[4] = {2, 19, 3, 6}, sw[2] = {3, 5};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 4, sx, -1, 1);
    vkf_value w = op_case_input(&c, "w", VKF_F32, 2, sw, -1, 1);
    static const uint32_t ax[4] = {0, 2, 1, 3};
    op_case_run(t, &c, vkf_depthwise_conv(c.g, "op", vkf_permute(c.g, "xp", x, ax), w), TOL_SUM,
                "depthwise_conv strided");
  }
  {
    op_case c = op_case_begin("conv_f16");
    int64_t sx[4] = {2, 2, 21, 4}, sw[2] = {2, 7};
    vkf_value x = op_case_input(&c, "x", VKF_F16, 4, sx, -1, 1);
    vkf_value w = op_case_input(&c, "w", VKF_F16, 2, sw, -1, 1);
    op_case_run(t, &c, vkf_depthwise_conv(c.g, "op", x, w), TOL_F16, "depthwise_conv f16");
  }
}

int main(void) {
  gpu_test t = gpu_test_start();
  reduces(&t);
  convs(&t);
  return gpu_test_finish(&t);
}
