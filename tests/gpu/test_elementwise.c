/* Elementwise ops on the device (generated GLSL kernels) against the interpreter: every single op,
 * numpy broadcasting, strided/permuted/sliced inputs, f16 storage, fused programs (repeated and
 * unused inputs, 8 inputs, baked strides), the row-wise kernel, a large grid-stride case, and the
 * kernel-text contract: identical
 * programs give identical text whatever the shapes. */
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "tests/op_case.h"

/* Tolerances, |gpu - ref| <= atol + rtol * |ref|. One IEEE operation (add, sub, mul, scale, relu)
 * is correctly rounded on every Vulkan device, so it must match exactly; f16 results are then
 * rounded identically too. Division may be 2.5 ulp in Vulkan. erf/tanh/GELU/SiLU use our own
 * fp32 approximations (erf 7e-8 abs, tanh 1.8e-7 rel); exp is (3 + 2|x|) ulp in Vulkan for the
 * |x| <= 4 we feed it. Fused chains may be contracted into FMAs by the driver. f16 storage of an
 * approximated value may round to the neighbouring half (2^-10 relative). */
static const op_tol TOL_EXACT = {0.0, 0.0};
static const op_tol TOL_DIV = {0.0, 3e-7};
static const op_tol TOL_TRANSC = {1e-6, 1e-6};
static const op_tol TOL_EXP = {0.0, 2e-6};
static const op_tol TOL_FUSED = {2e-6, 2e-6};
static const op_tol TOL_F16 = {1e-6, 1e-3};

typedef vkf_value (*binary_fn)(vkf_graph *, const char *, vkf_value, vkf_value);
typedef vkf_value (*unary_fn)(vkf_graph *, const char *, vkf_value);

static const struct {
  const char *name;
  binary_fn fn;
  const op_tol *tol;
} binaries[] = {{"add", vkf_add, &TOL_EXACT},
                {"sub", vkf_sub, &TOL_EXACT},
                {"mul", vkf_mul, &TOL_EXACT},
                {"div", vkf_div, &TOL_DIV}};

static vkf_value scale_neg(vkf_graph *g, const char *name, vkf_value x) {
  return vkf_scale(g, name, x, -0.37f);
}

static const struct {
  const char *name;
  unary_fn fn;
  float lo, hi;
  int exact; /* 1: TOL_EXACT; 2: TOL_EXP; 0: TOL_TRANSC */
} unaries[] = {{"scale", scale_neg, -4, 4, 1},
               {"gelu", vkf_gelu, -7, 7, 0},
               {"gelu_tanh", vkf_gelu_tanh, -7, 7, 0},
               {"relu", vkf_relu, -4, 4, 1},
               {"silu", vkf_silu, -9, 9, 0},
               {"exp", vkf_exp, -4, 4, 2},
               {"tanh", vkf_tanh, -6, 6, 0},
               {"log", vkf_ln, 0.01f, 50, 0}};

static op_tol unary_tol(int exact) {
  return exact == 1 ? TOL_EXACT : exact == 2 ? TOL_EXP : TOL_TRANSC;
}

/* Shapes: a single element, odd sizes that are multiples of no workgroup size, rank 4. */
static const struct {
  uint32_t rank;
  int64_t shape[4];
} shapes[] = {{1, {1}}, {2, {7, 33}}, {4, {2, 3, 5, 13}}};

static void single_ops(gpu_test *t) {
  char label[128];
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    for (size_t i = 0; i < sizeof binaries / sizeof binaries[0]; i++) {
      op_case c = op_case_begin("binary");
      vkf_value a = op_case_input(&c, "a", VKF_F32, shapes[s].rank, shapes[s].shape, -4, 4);
      vkf_value b = op_case_input(&c, "b", VKF_F32, shapes[s].rank, shapes[s].shape, 0.5f, 4);
      snprintf(label, sizeof label, "%s shape %zu", binaries[i].name, s);
      op_case_run(t, &c, binaries[i].fn(c.g, "op", a, b), *binaries[i].tol, label);
    }
    for (size_t i = 0; i < sizeof unaries / sizeof unaries[0]; i++) {
      op_case c = op_case_begin("unary");
      vkf_value x = op_case_input(&c, "x", VKF_F32, shapes[s].rank, shapes[s].shape, unaries[i].lo,
                                  unaries[i].hi);
      snprintf(label, sizeof label, "%s shape %zu", unaries[i].name, s);
      op_case_run(t, &c, unaries[i].fn(c.g, "op", x), unary_tol(unaries[i].exact), label);
    }
  }
}

/* Broadcast operand pairs: [B,N,D] + [D], [B,1,D] * [B,N,1], [N,1] - [1,D] (both sides
 * broadcast), scalar-like [1] / [B,N,D], and rank 4 against rank 2. */
static void broadcasting(gpu_test *t) {
  static const struct {
    const char *label;
    uint32_t ra;
    int64_t a[4];
    uint32_t rb;
    int64_t b[4];
    int op; /* index into binaries */
  } cases[] = {
      {"[B,N,D] + [D]", 3, {2, 9, 37}, 1, {37}, 0},
      {"[B,1,D] * [B,N,1]", 3, {3, 1, 19}, 3, {3, 11, 1}, 2},
      {"[N,1] - [1,D]", 2, {13, 1}, 2, {1, 7}, 1},
      {"[1] / [B,N,D]", 1, {1}, 3, {2, 5, 3}, 3},
      {"[A,B,N,D] + [N,D]", 4, {2, 3, 5, 7}, 2, {5, 7}, 0},
      {"[A,1,N,1] * [B,1,D]", 4, {2, 1, 5, 1}, 3, {3, 1, 6}, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    op_case c = op_case_begin("broadcast");
    vkf_value a = op_case_input(&c, "a", VKF_F32, cases[i].ra, cases[i].a, -3, 3);
    vkf_value b = op_case_input(&c, "b", VKF_F32, cases[i].rb, cases[i].b, 0.25f, 3);
    op_case_run(t, &c, binaries[cases[i].op].fn(c.g, "op", a, b), *binaries[cases[i].op].tol,
                cases[i].label);
  }
}

/* Inputs that are strided views: a permute, a slice of a middle axis, a permuted broadcast. */
static void strided(gpu_test *t) {
  {
    op_case c = op_case_begin("permuted");
    int64_t sx[3] = {4, 6, 5}, sy[3] = {5, 4, 6};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 3, sx, -2, 2);
    vkf_value y = op_case_input(&c, "y", VKF_F32, 3, sy, -2, 2);
    uint32_t axes[3] = {2, 0, 1};
    vkf_value xp = vkf_permute(c.g, "xp", x, axes); /* [5, 4, 6] */
    op_case_run(t, &c, vkf_add(c.g, "op", xp, y), TOL_EXACT, "permute + contiguous");
  }
  {
    op_case c = op_case_begin("sliced");
    int64_t sx[3] = {3, 10, 17};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 3, sx, -3, 3);
    vkf_value xs = vkf_slice(c.g, "xs", x, 1, 2, 9); /* [3, 7, 17] */
    op_case_run(t, &c, vkf_gelu(c.g, "op", xs), TOL_TRANSC, "gelu of a slice");
  }
  {
    op_case c = op_case_begin("sliced_last");
    int64_t sx[2] = {9, 40}, sb[1] = {11};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 2, sx, -3, 3);
    vkf_value b = op_case_input(&c, "b", VKF_F32, 1, sb, -3, 3);
    vkf_value xs = vkf_slice(c.g, "xs", x, 1, 29, 40); /* [9, 11], offset 29 elements */
    op_case_run(t, &c, vkf_mul(c.g, "op", xs, b), TOL_EXACT, "slice (offset) * [D]");
  }
  {
    op_case c = op_case_begin("permuted_both");
    int64_t sx[4] = {2, 5, 4, 3}, sb[3] = {5, 1, 3};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 4, sx, -3, 3);
    vkf_value b = op_case_input(&c, "b", VKF_F32, 3, sb, 0.5f, 3);
    uint32_t ax[4] = {0, 3, 2, 1}, bx[3] = {2, 1, 0};
    vkf_value xp = vkf_permute(c.g, "xp", x, ax); /* [2, 3, 4, 5], strided */
    vkf_value bp = vkf_permute(c.g, "bp", b, bx); /* [3, 1, 5], strided, broadcast over dim 2 */
    op_case_run(t, &c, vkf_div(c.g, "op", xp, bp), TOL_DIV, "permuted / permuted broadcast");
  }
}

static void half_storage(gpu_test *t) {
  {
    op_case c = op_case_begin("f16_add");
    int64_t sa[3] = {2, 7, 45}, sb[1] = {45};
    vkf_value a = op_case_input(&c, "a", VKF_F16, 3, sa, -8, 8);
    vkf_value b = op_case_input(&c, "b", VKF_F16, 1, sb, -8, 8);
    op_case_run(t, &c, vkf_add(c.g, "op", a, b), TOL_EXACT, "f16 [B,N,D] + [D]");
  }
  for (size_t i = 0; i < sizeof unaries / sizeof unaries[0]; i++) {
    op_case c = op_case_begin("f16_unary");
    int64_t s[2] = {5, 99};
    vkf_value x = op_case_input(&c, "x", VKF_F16, 2, s, unaries[i].lo, unaries[i].hi);
    char label[64];
    snprintf(label, sizeof label, "f16 %s", unaries[i].name);
    op_case_run(t, &c, unaries[i].fn(c.g, "op", x), unaries[i].exact == 1 ? TOL_EXACT : TOL_F16,
                label);
  }
  {
    /* Overflow to infinity on the f16 store must match the reference's rounding. */
    op_case c = op_case_begin("f16_overflow");
    int64_t s[1] = {64};
    vkf_value x = op_case_input(&c, "x", VKF_F16, 1, s, 30000, 65000);
    op_case_run(t, &c, vkf_scale(c.g, "op", x, 2.0f), TOL_EXACT, "f16 overflow to inf");
  }
}

/* Adds a fused_elementwise node directly (the fusion pass makes the same nodes); the program is
 * copied into the graph's arena, which owns it as the fusion pass's programs are owned. */
static vkf_value fused(vkf_graph *g, const char *name, const vkf_value *inputs, uint32_t count,
                       const vkf_ew_instr *prog, uint32_t prog_count) {
  vkf_ew_instr *copy = vkf_arena_alloc(vkf_graph_arena(g), prog_count * sizeof *copy);
  if (copy) memcpy(copy, prog, prog_count * sizeof *copy);
  vkf_node_attrs attrs = {.fused = {.count = prog_count, .instrs = copy}};
  return vkf_graph_add_node(g, VKF_OP_FUSED_ELEMENTWISE, name, inputs, count, &attrs);
}

static void fused_programs(gpu_test *t) {
  {
    /* The MLP tail: ((x + bias) -> gelu) + residual, then * 0.5. */
    static const vkf_ew_instr prog[] = {{VKF_OP_ADD, 0, 1, 0},
                                        {VKF_OP_GELU_ERF, 3, 0, 0},
                                        {VKF_OP_ADD, 4, 2, 0},
                                        {VKF_OP_SCALE, 5, 0, 0.5f}};
    op_case c = op_case_begin("fused_mlp");
    int64_t sx[3] = {2, 13, 24}, sb[1] = {24};
    vkf_value in[3] = {op_case_input(&c, "x", VKF_F32, 3, sx, -3, 3),
                       op_case_input(&c, "bias", VKF_F32, 1, sb, -1, 1),
                       op_case_input(&c, "res", VKF_F32, 3, sx, -3, 3)};
    op_case_run(t, &c, fused(c.g, "op", in, 3, prog, 4), TOL_FUSED, "fused add-gelu-add-scale");
  }
  {
    /* Every op once; register 0 read by several instructions; input 1 unused by the program; the
     * same tensor given twice (read once). */
    static const vkf_ew_instr prog[] = {
        {VKF_OP_MUL, 0, 2, 0},        /* r4 */
        {VKF_OP_TANH, 4, 0, 0},       /* r5 */
        {VKF_OP_SILU, 0, 0, 0},       /* r6 */
        {VKF_OP_SUB, 5, 6, 0},        /* r7 */
        {VKF_OP_EXP, 3, 0, 0},        /* r8 */
        {VKF_OP_DIV, 7, 8, 0},        /* r9 */
        {VKF_OP_GELU_TANH, 9, 0, 0},  /* r10 */
        {VKF_OP_RELU, 10, 0, 0},      /* r11 */
        {VKF_OP_SCALE, 11, 0, 3.25f}, /* r12 */
        {VKF_OP_ADD, 12, 0, 0},       /* r13 */
    };
    op_case c = op_case_begin("fused_all");
    int64_t sx[2] = {17, 29}, sy[2] = {1, 29};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 2, sx, -2, 2);
    vkf_value y = op_case_input(&c, "y", VKF_F32, 2, sy, -2, 2);
    vkf_value in[4] = {x, y, x, y};
    op_case_run(t, &c, fused(c.g, "op", in, 4, prog, 10), TOL_FUSED, "fused every op");
  }
  {
    /* Eight inputs, each its own graph input (eight buffers): more than fit beside the output in
     * the plan's binding limit, so the lowering stages some through scratch. Mixed broadcasts. */
    static const vkf_ew_instr prog[] = {{VKF_OP_ADD, 0, 1, 0},  {VKF_OP_MUL, 8, 2, 0},
                                        {VKF_OP_SUB, 9, 3, 0},  {VKF_OP_ADD, 10, 4, 0},
                                        {VKF_OP_MUL, 11, 5, 0}, {VKF_OP_ADD, 12, 6, 0},
                                        {VKF_OP_SUB, 13, 7, 0}};
    op_case c = op_case_begin("fused_8");
    int64_t s3[3] = {3, 5, 7}, s1[1] = {7}, s2[3] = {3, 1, 7};
    vkf_value in[8];
    for (int i = 0; i < 8; i++) {
      char name[8];
      snprintf(name, sizeof name, "x%d", i);
      in[i] = i % 3 == 0   ? op_case_input(&c, name, VKF_F32, 3, s3, -2, 2)
              : i % 3 == 1 ? op_case_input(&c, name, VKF_F32, 1, s1, -2, 2)
                           : op_case_input(&c, name, VKF_F32, 3, s2, -2, 2);
    }
    op_case_run(t, &c, fused(c.g, "op", in, 8, prog, 7), TOL_FUSED, "fused 8 inputs");
  }
  {
    /* Five rank-4 permuted views: more index words than fit in 128 bytes of push constants,
     * so the lowering bakes shapes and strides into the kernel text. */
    static const vkf_ew_instr prog[] = {
        {VKF_OP_ADD, 0, 1, 0}, {VKF_OP_MUL, 5, 2, 0}, {VKF_OP_SUB, 6, 3, 0}, {VKF_OP_DIV, 7, 4, 0}};
    op_case c = op_case_begin("fused_baked");
    int64_t s4[4] = {2, 3, 4, 5};
    uint32_t ax[4] = {3, 0, 2, 1}; /* [5, 2, 4, 3]: no two dims merge */
    vkf_value in[5];
    for (int i = 0; i < 5; i++) {
      char name[8];
      snprintf(name, sizeof name, "x%d", i);
      in[i] = vkf_permute(c.g, NULL, op_case_input(&c, name, VKF_F32, 4, s4, 0.5f, 2), ax);
    }
    op_case_run(t, &c, fused(c.g, "op", in, 5, prog, 4), TOL_FUSED, "fused baked strides");
  }
  {
    static const vkf_ew_instr prog[] = {{VKF_OP_MUL, 0, 1, 0}, {VKF_OP_GELU_ERF, 2, 0, 0}};
    op_case c = op_case_begin("fused_f16");
    int64_t sx[3] = {3, 11, 40}, sg[3] = {3, 1, 40};
    vkf_value in[2] = {op_case_input(&c, "x", VKF_F16, 3, sx, -3, 3),
                       op_case_input(&c, "g", VKF_F16, 3, sg, -2, 2)};
    op_case_run(t, &c, fused(c.g, "op", in, 2, prog, 2), TOL_F16, "fused f16 mul-gelu");
  }
}

/* Rows wide enough for the row-wise kernel (inner dim >= the workgroup): a transposed operand
 * (inner stride 3), f16, and more rows than one grid holds (65600 > 65535). */
static void rows(gpu_test *t) {
  {
    op_case c = op_case_begin("rows_strided");
    int64_t sx[2] = {3, 300}, sy[2] = {300, 3};
    uint32_t ax[2] = {1, 0};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 2, sx, -3, 3);
    vkf_value y = op_case_input(&c, "y", VKF_F32, 2, sy, -3, 3);
    op_case_run(t, &c, vkf_sub(c.g, "op", x, vkf_permute(c.g, "yt", y, ax)), TOL_EXACT,
                "rows: [3,300] - transpose");
  }
  {
    op_case c = op_case_begin("rows_f16");
    int64_t sx[3] = {2, 5, 640}, sb[3] = {2, 1, 640};
    vkf_value x = op_case_input(&c, "x", VKF_F16, 3, sx, -3, 3);
    vkf_value b = op_case_input(&c, "b", VKF_F16, 3, sb, -3, 3);
    op_case_run(t, &c, vkf_mul(c.g, "op", x, b), TOL_EXACT, "rows: f16 [2,5,640] * [2,1,640]");
  }
  {
    op_case c = op_case_begin("rows_many");
    int64_t sx[2] = {65600, 256}, sb[1] = {256};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 2, sx, -3, 3);
    vkf_value b = op_case_input(&c, "b", VKF_F32, 1, sb, -3, 3);
    op_case_run(t, &c, vkf_add(c.g, "op", x, b), TOL_EXACT, "rows: 65600 rows + [256]");
  }
}

/* More elements than 65535 workgroups cover at once (grid-stride loop), with a broadcast. */
static void large(gpu_test *t) {
  op_case c = op_case_begin("large");
  int64_t sx[3] = {8, 1031, 1031}, sb[2] = {1031, 1};
  vkf_value x = op_case_input(&c, "x", VKF_F32, 3, sx, -4, 4);
  vkf_value b = op_case_input(&c, "b", VKF_F32, 2, sb, -4, 4);
  op_case_run(t, &c, vkf_sub(c.g, "op", x, b), TOL_EXACT, "large [8,1031,1031] - [1031,1]");
}

/* Returns the single dispatch's shader name and source after lowering `g` (NULL on failure). */
static int lower_one(gpu_test *t, vkf_graph *g, char *name, size_t name_size, char **source) {
  *source = NULL;
  vkf_status s = vkf_memory_plan_build(g, NULL);
  vkf_lowered low = {0};
  if (!s) s = vkf_lower_graph(g, vkf_device_caps_get(t->device), NULL, &low);
  CHECK_OK(s);
  if (!low.plan) return 0;
  const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, 0);
  snprintf(name, name_size, "%s", d->shader);
  *source = d->source ? strdup(d->source) : NULL;
  vkf_lowered_free(&low);
  return 1;
}

static vkf_graph *gelu_add_graph(const int64_t *shape, uint32_t rank, float scale) {
  vkf_graph *g;
  vkf_graph_create("text", &g);
  vkf_value in[2] = {vkf_graph_input(g, "a", VKF_F32, rank, shape),
                     vkf_graph_input(g, "b", VKF_F32, rank, shape)};
  vkf_ew_instr prog[3] = {
      {VKF_OP_ADD, 0, 1, 0}, {VKF_OP_GELU_ERF, 2, 0, 0}, {VKF_OP_SCALE, 3, 0, scale}};
  vkf_graph_output(g, fused(g, "f", in, 2, prog, 3), NULL);
  return g;
}

/* The kernel cache keys on the text: the same program on other shapes must give the same text
 * and name; a different constant must not. */
static void kernel_text(gpu_test *t) {
  int64_t s1[2] = {7, 33}, s2[2] = {128, 3};
  vkf_graph *g1 = gelu_add_graph(s1, 2, 0.5f), *g2 = gelu_add_graph(s2, 2, 0.5f),
            *g3 = gelu_add_graph(s1, 2, 0.25f);
  char n1[128], n2[128], n3[128];
  char *src1, *src2, *src3;
  if (lower_one(t, g1, n1, sizeof n1, &src1) && lower_one(t, g2, n2, sizeof n2, &src2) &&
      lower_one(t, g3, n3, sizeof n3, &src3)) {
    CHECK(src1 && src2 && src3);
    CHECK_MSG(strcmp(n1, n2) == 0, "%s vs %s", n1, n2);
    CHECK(src1 && src2 && strcmp(src1, src2) == 0);
    CHECK_MSG(strcmp(n1, n3) != 0, "scale 0.5 and 0.25 share the name %s", n1);
    CHECK(strncmp(n1, "ew_", 3) == 0);
    CHECK(src1 && strstr(src1, "vkf_gelu_erf") != NULL);
  }
  free(src1), free(src2), free(src3);
  vkf_graph_destroy(g1), vkf_graph_destroy(g2), vkf_graph_destroy(g3);
}

int main(void) {
  gpu_test t = gpu_test_start();
  single_ops(&t);
  broadcasting(&t);
  strided(&t);
  half_storage(&t);
  fused_programs(&t);
  rows(&t);
  large(&t);
  kernel_text(&t);
  return gpu_test_finish(&t);
}
