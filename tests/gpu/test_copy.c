/* Data movement on the device (shaders/copy.comp) against the interpreter: COPY of permuted,
 * sliced and reshaped views, CAST between every dtype pair, CONCAT along every axis with up to 8
 * inputs (including strided inputs), in f32, f16 and i32. */
#include "tests/op_case.h"

/* Tolerances: data movement copies bits, and every conversion is exact or rounds exactly as the
 * reference does (f16 round-to-nearest-even on the bits, float -> i32 truncation, i32 -> float
 * correctly rounded), so everything must match exactly. */
static const op_tol TOL_EXACT = {0.0, 0.0};

static const vkf_dtype float_types[] = {VKF_F32, VKF_F16};

static void copies(gpu_test *t) {
  char label[96];
  for (size_t ti = 0; ti < 2; ti++) {
    vkf_dtype dt = float_types[ti];
    const char *dn = vkf_dtype_name(dt);
    {
      /* Attention's head split: [B, N, H, D] -> [B, H, N, D]. */
      op_case c = op_case_begin("permute");
      int64_t s[4] = {2, 197, 12, 64};
      vkf_value x = op_case_input(&c, "x", dt, 4, s, -100, 100);
      uint32_t ax[4] = {0, 2, 1, 3};
      snprintf(label, sizeof label, "%s copy of permute [2,197,12,64] (0,2,1,3)", dn);
      op_case_run(t, &c, vkf_copy(c.g, "op", vkf_permute(c.g, "p", x, ax)), TOL_EXACT, label);
    }
    {
      /* A full reversal of the axes: no two dims merge. */
      op_case c = op_case_begin("transpose");
      int64_t s[4] = {3, 5, 7, 11};
      vkf_value x = op_case_input(&c, "x", dt, 4, s, -9, 9);
      uint32_t ax[4] = {3, 2, 1, 0};
      snprintf(label, sizeof label, "%s copy of permute (3,2,1,0)", dn);
      op_case_run(t, &c, vkf_copy(c.g, "op", vkf_permute(c.g, "p", x, ax)), TOL_EXACT, label);
    }
    {
      /* A slice of the last axis (offset, row gaps) and of a middle one. */
      op_case c = op_case_begin("slice");
      int64_t s[3] = {4, 9, 13};
      vkf_value x = op_case_input(&c, "x", dt, 3, s, -9, 9);
      vkf_value a = vkf_slice(c.g, "a", x, 2, 3, 10);
      snprintf(label, sizeof label, "%s copy of slice of slice", dn);
      op_case_run(t, &c, vkf_copy(c.g, "op", vkf_slice(c.g, "b", a, 1, 1, 8)), TOL_EXACT, label);
    }
    {
      /* Reshape of a strided view: the builder inserts "<name>.contiguous" (a COPY). */
      op_case c = op_case_begin("reshape");
      int64_t s[3] = {6, 5, 4}, r[2] = {4, 30};
      vkf_value x = op_case_input(&c, "x", dt, 3, s, -9, 9);
      uint32_t ax[3] = {2, 0, 1};
      vkf_value p = vkf_permute(c.g, "p", x, ax);
      snprintf(label, sizeof label, "%s reshape of permute", dn);
      op_case_run(t, &c, vkf_scale(c.g, "op", vkf_reshape(c.g, "r", p, 2, r), 1.0f), TOL_EXACT,
                  label);
    }
  }
  {
    op_case c = op_case_begin("one");
    int64_t s[1] = {1};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 1, s, -9, 9);
    op_case_run(t, &c, vkf_copy(c.g, "op", x), TOL_EXACT, "copy of one element");
  }
  {
    op_case c = op_case_begin("i32");
    int64_t s[2] = {7, 9};
    static const int32_t v[] = {-2147483647 - 1, 2147483647, 0, -1, 16777217, 3, 12345678};
    vkf_value x = op_case_input_i32(&c, "x", 2, s, v, 7);
    uint32_t ax[2] = {1, 0};
    op_case_run(t, &c, vkf_copy(c.g, "op", vkf_permute(c.g, "p", x, ax)), TOL_EXACT,
                "i32 copy of transpose");
  }
}

static void casts(gpu_test *t) {
  char label[96];
  static const vkf_dtype all[] = {VKF_F32, VKF_F16, VKF_I32};
  /* Odd size; values beyond f16's range (inf on conversion), halfway cases, negatives with
   * fractions (truncation), integers above 2^24 (rounding to float). */
  int64_t s[2] = {3, 61};
  static const int32_t ints[] = {
      0,    1,        -1,       65519,     65520,      70000,           -70000, 2049,
      2051, 16777217, 16777219, -33554435, 2147483647, -2147483647 - 1, 777};
  for (size_t from = 0; from < 3; from++)
    for (size_t to = 0; to < 3; to++) {
      if (from == to) continue;
      op_case c = op_case_begin("cast");
      vkf_value x = all[from] == VKF_I32
                        ? op_case_input_i32(&c, "x", 2, s, ints, sizeof ints / sizeof ints[0])
                    : all[from] == VKF_F16 ? op_case_input(&c, "x", VKF_F16, 2, s, -3000, 3000)
                                           : op_case_input(&c, "x", VKF_F32, 2, s, -1e5f, 1e5f);
      snprintf(label, sizeof label, "cast %s -> %s", vkf_dtype_name(all[from]),
               vkf_dtype_name(all[to]));
      op_case_run(t, &c, vkf_cast(c.g, "op", x, all[to]), TOL_EXACT, label);
    }
  {
    /* f32 -> f16 on values that exercise every rounding path: subnormal halves, ties, overflow. */
    op_case c = op_case_begin("cast_f16_edges");
    int64_t n[1] = {4096};
    vkf_value x = vkf_graph_input(c.g, "x", VKF_F32, 1, n);
    float *v = op_case_bind(&c, x);
    for (int i = 0; i < 4096; i++) {
      /* Mantissa k/1024 plus: nothing, exactly half a half-ulp (a tie), just above, below. */
      static const float extra[4] = {0.0f, 0x1p-11f, 0x1p-11f + 0x1p-20f, 0x1p-12f};
      float m = 1.0f + (float)((i / 4) % 256) / 256.0f + extra[i % 4];
      float e = ldexpf(1.0f, (i / 1024) * 11 - 26); /* 2^-26, 2^-15, 2^-4, 2^7 */
      v[i] = (i % 3 ? 1.0f : -1.0f) * m * e * (i % 7 == 0 ? 70000.0f : 1.0f);
    }
    op_case_run(t, &c, vkf_cast(c.g, "op", x, VKF_F16), TOL_EXACT, "cast f32 -> f16 edges");
  }
  {
    /* A cast of a strided view converts and gathers at once. */
    op_case c = op_case_begin("cast_view");
    int64_t s3[3] = {5, 6, 7};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 3, s3, -50, 50);
    uint32_t ax[3] = {1, 2, 0};
    snprintf(label, sizeof label, "cast f32 permute -> f16");
    op_case_run(t, &c, vkf_cast(c.g, "op", vkf_permute(c.g, "p", x, ax), VKF_F16), TOL_EXACT,
                label);
  }
}

static void concats(gpu_test *t) {
  char label[96];
  /* Every axis of a rank-3 tensor, 3 inputs of different lengths along it. */
  for (uint32_t axis = 0; axis < 3; axis++) {
    op_case c = op_case_begin("concat");
    vkf_value xs[3];
    for (int i = 0; i < 3; i++) {
      int64_t s[3] = {2, 5, 7};
      s[axis] = 1 + 2 * i;
      char name[8];
      snprintf(name, sizeof name, "x%d", i);
      xs[i] = op_case_input(&c, name, VKF_F32, 3, s, -9, 9);
    }
    snprintf(label, sizeof label, "concat of 3 along axis %u", axis);
    op_case_run(t, &c, vkf_concat(c.g, "op", xs, 3, axis), TOL_EXACT, label);
  }
  {
    /* Eight inputs (the op's maximum), f16, along the last axis: ViT's [CLS] + patches pattern
     * generalised; one input is a strided view. */
    op_case c = op_case_begin("concat8");
    vkf_value xs[8];
    for (int i = 0; i < 8; i++) {
      char name[8];
      snprintf(name, sizeof name, "x%d", i);
      int64_t s[2] = {9, 1 + i};
      xs[i] = op_case_input(&c, name, VKF_F16, 2, s, -9, 9);
    }
    int64_t st[2] = {4, 9};
    uint32_t ax[2] = {1, 0};
    xs[3] = vkf_permute(c.g, "xt", op_case_input(&c, "x3t", VKF_F16, 2, st, -9, 9), ax);
    op_case_run(t, &c, vkf_concat(c.g, "op", xs, 8, 1), TOL_EXACT, "f16 concat of 8, one strided");
  }
  {
    /* [CLS] token + patch tokens: [B, 1, D] ++ [B, 196, D] along axis 1. */
    op_case c = op_case_begin("concat_cls");
    int64_t s1[3] = {2, 1, 768}, s2[3] = {2, 196, 768};
    vkf_value xs[2] = {op_case_input(&c, "cls", VKF_F32, 3, s1, -1, 1),
                       op_case_input(&c, "patches", VKF_F32, 3, s2, -1, 1)};
    op_case_run(t, &c, vkf_concat(c.g, "op", xs, 2, 1), TOL_EXACT, "concat cls + 196 patches");
  }
  {
    op_case c = op_case_begin("concat_i32");
    int64_t s[1] = {5};
    static const int32_t a[] = {1, -2, 3, 2147483647, -7}, b[] = {9, 8, 7, 6, 5};
    vkf_value xs[2] = {op_case_input_i32(&c, "a", 1, s, a, 5),
                       op_case_input_i32(&c, "b", 1, s, b, 5)};
    op_case_run(t, &c, vkf_concat(c.g, "op", xs, 2, 0), TOL_EXACT, "i32 concat");
  }
}

int main(void) {
  gpu_test t = gpu_test_start();
  copies(&t);
  casts(&t);
  concats(&t);
  return gpu_test_finish(&t);
}
