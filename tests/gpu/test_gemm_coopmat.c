/* The cooperative-matrix GEMM (VKF_GEMM_COOPMAT) against the CPU interpreter, and its chooser rule.
 * The chooser part runs on synthetic caps everywhere. The kernel part needs a device with
 * VK_KHR_cooperative_matrix and a build with the kernels (lavapipe 26 in the cooperative-matrix CI
 * lane, tools/coopmat/lavapipe26.sh); elsewhere it is skipped (exit 77) unless
 * VKF_REQUIRE_COOPMAT=1, which the lane sets so that a device or build without them fails.
 * Cases: odd sizes in every dimension (partial workgroup tiles, K not a multiple of the k-step),
 * every workgroup tile the chooser picks (medium, large, huge) and split-K with both reductions,
 * quantised B of every format (dequantised into the f16 tiles; split-K too) with and without a
 * bias,
 * each epilogue, B as [K, N] and [N, K] (the vec4 and scalar staging paths), strided (permuted)
 * operands, broadcast batches, several workgroups and k-steps, and small-integer inputs whose
 * f16 results are exact, compared bit for bit. Every case runs with caps of a discrete GPU, where
 * the chooser must pick the kernel; tolerances are the f16 ones of test_gemm.c.
 * PATCH_EMBED under f16 (ViT --fp16): the f16 patch matrix (patch_embed.comp IM2COL COLS_F16) and
 * the kernel with the bias in its epilogue, against the interpreter: odd image and patch sizes,
 * non-square patches, 1..4 channels, batches above 1, a strided (channels-last) image, with and
 * without bias, exact small integers; the SIMT patch_embed.comp without the kernels. */
#include <stdlib.h>
#include <string.h>

#include "graph/base/half.h"
#include "graph/base/quant.h"
#include "graph/ir/builder.h"
#include "graph/lower/lower_matmul.h"
#include "tests/op_case.h"

typedef struct cm_case {
  const char *label;
  int64_t m, k, n, batch0, batch1; /* batches: A [b0, b1, M, K]; B broadcast over b0 */
  int transpose_b, bias, residual, a_permuted, b_permuted, exact;
  vkf_activation act;
  int emulated; /* also at a tile the device only emulates (16 on lavapipe: slow to compile) */
} cm_case;

static const cm_case cases[] = {
    {.label = "k1_n1_9x1x1", .m = 9, .k = 1, .n = 1},
    {.label = "odd_33x65x17_bias_gelu", .m = 33, .k = 65, .n = 17, .bias = 1,
     .act = VKF_ACT_GELU_ERF, .emulated = 1},
    {.label = "nk_odd_k_45x30x29_relu", .m = 45, .k = 30, .n = 29, .transpose_b = 1, .bias = 1,
     .act = VKF_ACT_RELU},
    {.label = "kn_odd_n_197x64x129", .m = 197, .k = 64, .n = 129},
    {.label = "kn_vec4_40x64x128_silu_res", .m = 40, .k = 64, .n = 128, .bias = 1,
     .residual = 1, .act = VKF_ACT_SILU},
    {.label = "nk_vec4_k23_tail_50x23x36", .m = 50, .k = 23, .n = 36, .transpose_b = 1},
    {.label = "batched_nk_broadcast_2x3x19x36x28", .m = 19, .k = 36, .n = 28, .batch0 = 2,
     .batch1 = 3, .transpose_b = 1, .residual = 1},
    {.label = "permuted_a_20x33x12", .m = 20, .k = 33, .n = 12, .a_permuted = 1},
    {.label = "permuted_b_21x16x44_tanh", .m = 21, .k = 16, .n = 44, .b_permuted = 1,
     .act = VKF_ACT_GELU_TANH, .emulated = 1},
    {.label = "large_nk_256x768x512_bias_res", .m = 256, .k = 768, .n = 512, .transpose_b = 1,
     .bias = 1, .residual = 1},
    {.label = "exact_67x96x72_bias_relu_res", .m = 67, .k = 96, .n = 72, .transpose_b = 1,
     .bias = 1, .residual = 1, .act = VKF_ACT_RELU, .exact = 1, .emulated = 1},
    {.label = "exact_kn_130x200x65", .m = 130, .k = 200, .n = 65, .exact = 1, .emulated = 1},
    /* 128 workgroups of the huge tile (16 x 8 matrix tiles: 128x64 at tile 8, 256x128 at 16) */
    {.label = "exact_huge_tile_1024x8x1024", .m = 1024, .k = 8, .n = 1024, .transpose_b = 1,
     .exact = 1, .emulated = 1},
    /* the large tile (8 x 8 matrix tiles) at tile 8: 64 huge workgroups, 128 large ones; B as
     * [K, N] with 16-byte loads, the vec4 epilogue */
    {.label = "large_tile_kn_512x40x1024_bias_res", .m = 512, .k = 40, .n = 1024, .bias = 1,
     .residual = 1, .act = VKF_ACT_SILU},
    /* M below 8 matrix tiles and a small grid: split-K, the reduction's vec4 epilogue (N % 4 == 0)
     * and its scalar one (odd N, strided B) */
    {.label = "splitk_45x300x100_bias_gelu_res", .m = 45, .k = 300, .n = 100, .transpose_b = 1,
     .bias = 1, .residual = 1, .act = VKF_ACT_GELU_ERF},
    {.label = "exact_splitk_odd_9x257x33_relu", .m = 9, .k = 257, .n = 33, .b_permuted = 1,
     .bias = 1, .act = VKF_ACT_RELU, .exact = 1, .emulated = 1},
};

/* The caps a GPU of the class would have: the device's with the kind a discrete GPU. */
static vkf_device_caps gpu_caps(const vkf_device_caps *device) {
  vkf_device_caps c = *device;
  c.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
  return c;
}

static vkf_value operand(vkf_graph *g, const char *name, uint32_t rank, const int64_t *shape,
                         int permuted, vkf_value *stored_out) {
  int64_t stored[4];
  uint32_t axes[4] = {0, 1, 2, 3};
  memcpy(stored, shape, sizeof stored);
  if (permuted) {
    stored[rank - 1] = shape[rank - 2], stored[rank - 2] = shape[rank - 1];
    axes[rank - 1] = rank - 2, axes[rank - 2] = rank - 1;
  }
  *stored_out = vkf_graph_input(g, name, VKF_F16, rank, stored);
  return permuted ? vkf_permute(g, NULL, *stored_out, axes) : *stored_out;
}

static int64_t count_of(uint32_t rank, const int64_t *shape) {
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= shape[i];
  return n;
}

static void run_case(gpu_test *t, const cm_case *c, const vkf_device_caps *caps) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create(c->label, &g));
  int batched = c->batch0 > 0;
  uint32_t a_rank = batched ? 4 : 2, b_rank = batched ? 3 : 2, out_rank = a_rank;
  int64_t a_shape[4], b_shape[4], out_shape[4];
  uint32_t i = 0;
  if (batched) a_shape[i++] = c->batch0, a_shape[i++] = c->batch1;
  a_shape[i] = c->m, a_shape[i + 1] = c->k;
  i = 0;
  if (batched) b_shape[i++] = c->batch1;
  b_shape[i] = c->transpose_b ? c->n : c->k, b_shape[i + 1] = c->transpose_b ? c->k : c->n;
  memcpy(out_shape, a_shape, sizeof out_shape);
  out_shape[out_rank - 1] = c->n;
  vkf_value a_stored, b_stored;
  vkf_value a = operand(g, "a", a_rank, a_shape, c->a_permuted, &a_stored);
  vkf_value b = operand(g, "b", b_rank, b_shape, c->b_permuted, &b_stored);
  vkf_matmul_options opts = {.transpose_b = c->transpose_b, .activation = c->act};
  if (c->bias) opts.bias = vkf_graph_input(g, "bias", VKF_F16, 1, &c->n);
  if (c->residual) opts.residual = vkf_graph_input(g, "res", VKF_F16, out_rank, out_shape);
  vkf_graph_output(g, vkf_matmul(g, "mm", a, b, &opts), "y");

  vkf_value values[4] = {a_stored, b_stored, opts.bias, opts.residual};
  int64_t counts[4] = {count_of(a_rank, a_shape), count_of(b_rank, b_shape), c->n,
                       count_of(out_rank, out_shape)};
  vkf_input_binding in[4];
  uint16_t *packed[4] = {0};
  size_t in_count = 0;
  for (int j = 0; j < 4; j++) {
    if (!vkf_value_valid(values[j])) continue;
    float *v = malloc((size_t)counts[j] * sizeof(float));
    /* integers in [-3, 3]: every partial sum (|s| <= 9K < 2048) is exact in f32 and in f16 */
    if (c->exact)
      op_fill_ints(v, (size_t)counts[j], 5u + 11u * (uint32_t)j, -3, 3);
    else
      op_fill_uniform(v, (size_t)counts[j], 5u + 11u * (uint32_t)j, -1.0f, 1.0f);
    packed[j] = malloc((size_t)counts[j] * 2 + 16);
    op_to_half(v, packed[j], (size_t)counts[j]);
    free(v);
    in[in_count++] = (vkf_input_binding){
        .value = values[j], .data = packed[j], .size = (size_t)counts[j] * 2};
  }
  /* f16 output: one rounding of the f32 result, plus f32 accumulation over K in another order */
  op_tol tol = c->exact ? (op_tol){0, 0} : (op_tol){.atol = 2e-3, .rtol = 2e-3};
  char label[128];
  snprintf(label, sizeof label, "%s [coopmat %u]", c->label, caps->coopmat_gemm_tile);
  op_check_with(t, g, in, in_count, caps, tol, label);
  for (int j = 0; j < 4; j++) free(packed[j]);
  vkf_graph_destroy(g);
}

/* Whether lowering `g` for `caps` gives a dispatch with `define` (a prefix of one of its defines).
 */
static int plan_has(vkf_graph *g, const vkf_device_caps *caps, const char *define) {
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  vkf_lowered low;
  CHECK_OK(vkf_lower_graph(g, caps, NULL, &low));
  int found = 0;
  for (uint32_t d = 0; d < vkf_plan_dispatch_count(low.plan); d++) {
    const vkf_plan_dispatch *pd = vkf_plan_dispatch_get(low.plan, d);
    for (uint32_t i = 0; i < pd->define_count; i++)
      found |= !strncmp(pd->defines[i], define, strlen(define));
  }
  vkf_lowered_free(&low);
  return found;
}

/* `rows` x `k` of format f as random blocks with finite f16 scales, as test_gemm_quant.c makes
 * them (d, and the min of the _1 / K formats; smaller for the formats with 6-bit sub-scales or
 * 8-bit values): weights of magnitude up to ~1, so that the f16 tiles' rounding of each weight
 * (2^-11 relative) stays within the f16 tolerance over K = 512. */
static void put_half(uint8_t *p, float v) {
  uint16_t h = vkf_float_to_half(v);
  memcpy(p, &h, 2);
}

static uint8_t *random_blocks(vkf_quant_format f, int64_t rows, int64_t k, size_t *out_size) {
  vkf_quant_layout l = vkf_quant_layout_of(f);
  size_t blocks = (size_t)(rows * k / l.block), size = blocks * l.bytes;
  uint8_t *b = malloc(size + 4);
  uint32_t s = 12345u + (uint32_t)f;
  for (size_t i = 0; i < size; i++) b[i] = (uint8_t)((s = s * 1664525u + 1013904223u) >> 24);
  for (size_t i = 0; i < blocks; i++) {
    uint8_t *blk = b + i * l.bytes;
    float d = 0.002f + 0.0005f * (float)(i % 13), m = 0.01f * (float)(i % 5) - 0.02f;
    switch (f) {
      case VKF_QUANT_Q4_1:
      case VKF_QUANT_Q5_1:
        put_half(blk, d), put_half(blk + 2, m);
        break;
      case VKF_QUANT_Q4_K:
      case VKF_QUANT_Q5_K:
        put_half(blk, d * 0.1f), put_half(blk + 2, d * 0.05f);
        break;
      case VKF_QUANT_Q6_K:
        put_half(blk + 208, d * 0.05f);
        break;
      default:
        put_half(blk, f == VKF_QUANT_Q8_0 ? d * 0.1f : d);
        break;
    }
  }
  *out_size = size;
  return b;
}

/* Quantised B ([N, K] blocks, dequantised into the kernel's f16 tiles) against the interpreter's
 * reference dequantisation: f16 A, an optional f16 bias and residual, M past the GEMV's 8 rows.
 * `split`: a short M whose small grid splits K (the reduction adds bias and residual). */
static void run_quant(gpu_test *t, vkf_quant_format f, int64_t m, int64_t n, int64_t k, int bias,
                      int residual, const vkf_device_caps *caps, int split) {
  vkf_gemm_shape s = {.m = (uint64_t)m,
                      .n = (uint64_t)n,
                      .k = (uint64_t)k,
                      .batches = 1,
                      .b_along_k = 1,
                      .b_quant = 1,
                      .coopmat_ok = 1};
  vkf_gemm_variant v = vkf_gemm_choose(caps, &s);
  CHECK_MSG(v.kind == VKF_GEMM_COOPMAT && (v.coopmat_splits > 1) == split,
            "%s %lldx%lldx%lld: chose kind %d split %u", vkf_quant_layout_of(f).name, (long long)m,
            (long long)k, (long long)n, v.kind, v.coopmat_splits);
  size_t wsize = 0;
  uint8_t *w = random_blocks(f, n, k, &wsize);
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("quant", &g));
  int64_t as[2] = {m, k}, ws[2] = {n, k}, os[2] = {m, n};
  vkf_value a = vkf_graph_input(g, "a", VKF_F16, 2, as);
  vkf_value b = vkf_graph_constant(g, "w", (vkf_dtype)(VKF_Q8_0 + f), 2, ws, w);
  vkf_matmul_options o = {.transpose_b = 1, .activation = VKF_ACT_GELU_TANH};
  if (residual) o.residual = vkf_graph_input(g, "res", VKF_F16, 2, os);
  if (bias) o.bias = vkf_graph_input(g, "bias", VKF_F16, 1, &n);
  vkf_graph_output(g, vkf_matmul(g, "mm", a, b, &o), "y");
  CHECK_MSG(plan_has(g, caps, "GEMM_COOPMAT") && plan_has(g, caps, "B_QUANT"),
            "%s%s: not lowered to the cooperative-matrix kernel", vkf_quant_layout_of(f).name,
            bias ? " +bias" : "");
  vkf_input_binding in[3];
  uint16_t *data[3] = {0};
  int64_t counts[3] = {m * k, m * n, n};
  vkf_value vals[3] = {a, o.residual, o.bias};
  size_t nin = 0;
  for (int i = 0; i < 3; i++) {
    if (!vkf_value_valid(vals[i])) continue;
    float *x = malloc((size_t)counts[i] * sizeof(float));
    op_fill_uniform(x, (size_t)counts[i], 3u + 7u * (uint32_t)i, -1.0f, 1.0f);
    data[i] = malloc((size_t)counts[i] * 2);
    op_to_half(x, data[i], (size_t)counts[i]);
    free(x);
    in[nin++] =
        (vkf_input_binding){.value = vals[i], .data = data[i], .size = (size_t)counts[i] * 2};
  }
  char label[128];
  snprintf(label, sizeof label, "%s %lldx%lldx%lld%s%s [coopmat %u%s]", vkf_quant_layout_of(f).name,
           (long long)m, (long long)k, (long long)n, bias ? " bias" : "", residual ? " res" : "",
           caps->coopmat_gemm_tile, split ? " split-K" : "");
  /* f16 tiles of the dequantised weights (the reference keeps them f32) and one f16 output */
  op_check_with(t, g, in, nin, caps, (op_tol){.atol = 1e-2, .rtol = 4e-3}, label);
  for (int i = 0; i < 3; i++) free(data[i]);
  vkf_graph_destroy(g);
  free(w);
}

typedef struct patch_cm_case {
  const char *label;
  int64_t b, ch, h, w, e, p, q;
  int bias, ints, nhwc;
} patch_cm_case;

static const patch_cm_case patch_cases[] = {
    /* M 32, K 48, E 70 (partial tiles along N), exact */
    {"patch exact [2,3,16,16] P4 E70 +bias", 2, 3, 16, 16, 70, 4, 4, 1, 1, 0},
    /* K = 2*3*5 = 30, not a multiple of 8 (no 16-byte A loads, a k tail), non-square patches */
    {"patch exact [3,2,12,25] P3xQ5 E9", 3, 2, 12, 25, 9, 3, 5, 0, 1, 0},
    /* a channels-last image permuted to [B, C, H, W] (strided gather), M 90 over two tiles */
    {"patch exact [1,3,40,36] P4 E130 nhwc +bias", 1, 3, 40, 36, 130, 4, 4, 1, 1, 1},
    {"patch one patch one channel", 1, 1, 2, 2, 1, 2, 2, 1, 1, 0},
    /* odd everything: 7x5 patches of a 21x35 image, 4 channels (K 140), batch 3 (M 63), E 33 */
    {"patch [3,4,21,35] P7xQ5 E33 +bias", 3, 4, 21, 35, 33, 7, 5, 1, 0, 0},
    /* ViT-B/16's patch (K 768) on a 64x48 image, batch 2: M 24 (split-K), E 96 */
    {"patch [2,3,64,48] P16 E96 +bias", 2, 3, 64, 48, 96, 16, 16, 1, 0, 0},
    /* ViT-Ti/16 at 224 batch 2: M 392, K 768, E 192 */
    {"patch ViT-Ti/16 [2,3,224,224] E192 +bias", 2, 3, 224, 224, 192, 16, 16, 1, 0, 0},
};

static void run_patch(gpu_test *t, const patch_cm_case *pc, const vkf_device_caps *caps) {
  op_case c = op_case_begin("patch");
  int64_t si[4] = {pc->b, pc->ch, pc->h, pc->w}, sn[4] = {pc->b, pc->h, pc->w, pc->ch};
  int64_t sw[4] = {pc->e, pc->ch, pc->p, pc->q}, sb[1] = {pc->e};
  int ints = pc->ints;
  vkf_value img;
  if (pc->nhwc) {
    uint32_t ax[4] = {0, 3, 1, 2};
    img = vkf_permute(c.g, "nchw", op_case_input_ex(&c, "img", VKF_F16, 4, sn, -3, 3, ints), ax);
  } else {
    img = op_case_input_ex(&c, "img", VKF_F16, 4, si, ints ? -3 : -1, ints ? 3 : 1, ints);
  }
  vkf_value w = op_case_input_ex(&c, "w", VKF_F16, 4, sw, ints ? -2 : -0.1f, ints ? 2 : 0.1f, ints);
  vkf_value b = pc->bias ? op_case_input_ex(&c, "bias", VKF_F16, 1, sb, -5, 5, ints) : VKF_NO_VALUE;
  vkf_graph_output(c.g, vkf_patch_embed(c.g, "op", img, w, b), "y");
  CHECK_OK(vkf_graph_status(c.g));
  /* M up to 8 rows: the GEMM chooser's GEMV, still on the f16 patch matrix */
  int gemv = pc->b * (pc->h / pc->p) * (pc->w / pc->q) <= 8;
  CHECK_MSG((gemv || plan_has(c.g, caps, "GEMM_COOPMAT")) && plan_has(c.g, caps, "COLS_F16"),
            "%s: not lowered to the f16 patch matrix and the cooperative-matrix kernel", pc->label);
  vkf_device_caps off = *caps;
  off.coopmat_gemm_tile = 0; /* VKF_COOPMAT=0 or no kernels: the SIMT tiles */
  CHECK_MSG(!plan_has(c.g, &off, "GEMM_COOPMAT") && !plan_has(c.g, &off, "IM2COL"),
            "%s: without the kernels, not the SIMT patch_embed.comp", pc->label);
  /* exact integers: every partial sum an integer below 2048; else f16 inputs and output with f32
   * accumulation (test_embed_pool.c's f16 bound, plus the output's rounding at |y| <= 6) */
  op_tol tol = ints ? (op_tol){0, 0} : (op_tol){.atol = 2e-3, .rtol = 2e-3};
  char label[160];
  snprintf(label, sizeof label, "%s [coopmat %u]", pc->label, caps->coopmat_gemm_tile);
  op_check_with(t, c.g, c.in, c.n, caps, tol, label);
  for (size_t i = 0; i < c.n; i++) free(c.data[i]);
  vkf_graph_destroy(c.g);
}

/* What the chooser picks with cooperative matrices in the caps, on caps made up for it. */
static void check_chooser(void) {
  vkf_device_caps c = {.kind = VKF_DEVICE_KIND_DISCRETE_GPU, .subgroup_size = 32,
                       .min_subgroup_size = 8, .max_subgroup_size = 64, .subgroup_size_control = 1,
                       .max_workgroup_invocations = 1024, .max_workgroup_size = {1024, 1024, 64},
                       .max_shared_memory_size = 49152, .coopmat_gemm_tile = 16,
                       .subgroup_ops = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_ARITHMETIC,
                       .max_workgroup_count = {65535, 65535, 65535}};
  vkf_gemm_shape s = {.m = 197, .n = 768, .k = 768, .batches = 1, .b_along_k = 1,
                      .coopmat_ok = 1};
  vkf_gemm_variant v = vkf_gemm_choose(&c, &s);
  CHECK_MSG(v.kind == VKF_GEMM_COOPMAT && v.coopmat_tile == 16 && v.workgroup_size == 128 &&
                v.bm == 64 && v.bn == 64,
            "f16 197x768x768 on a tile-16 GPU (24 workgroups of 128x64): chose kind %d tile %u "
            "wg %u %ux%u", v.kind, v.coopmat_tile, v.workgroup_size, v.bm, v.bn);
  vkf_gemm_shape big = s;
  big.m = big.n = big.k = 4096;
  v = vkf_gemm_choose(&c, &big);
  CHECK_MSG(v.kind == VKF_GEMM_COOPMAT && v.bm == 256 && v.bn == 128 && v.bk == 16 &&
                v.workgroup_size == 256,
            "f16 4096^3 in 48 KiB: the 256x128 tile a step of 16 (8 subgroups), chose %ux%ux%u "
            "wg %u", v.bm, v.bn, v.bk, v.workgroup_size);
  vkf_device_caps roomy = c;
  roomy.max_shared_memory_size = 65536;
  v = vkf_gemm_choose(&roomy, &big);
  CHECK_MSG(v.bm == 256 && v.bk == 16, "64 KiB: still a step of 16 (32 needs 70 KiB), got %u",
            v.bk);
  roomy.max_shared_memory_size = 98304;
  v = vkf_gemm_choose(&roomy, &big);
  CHECK_MSG(v.bm == 256 && v.bk == 32, "96 KiB: the 256x128 tile a step of 32, got %ux%u", v.bm,
            v.bk);
  vkf_device_caps four = c;
  four.max_workgroup_subgroups = 4;
  v = vkf_gemm_choose(&four, &big);
  CHECK_MSG(v.bm == 128 && v.bn == 128 && v.workgroup_size == 128,
            "at most 4 subgroups a workgroup: the 128x128 tile, chose %ux%u", v.bm, v.bn);
  vkf_gemm_shape mid = big;
  mid.m = 1024, mid.n = 1024; /* 32 huge workgroups, 64 large ones, 256 medium */
  v = vkf_gemm_choose(&c, &mid);
  CHECK_MSG(v.bm == 64 && v.bn == 64 && v.coopmat_splits <= 1, "1024^2: the medium tile, %ux%u",
            v.bm, v.bn);
  mid.m = 2048; /* 64 huge, 128 large */
  v = vkf_gemm_choose(&c, &mid);
  CHECK_MSG(v.bm == 128 && v.bn == 128, "2048x1024: the 128x128 tile, %ux%u", v.bm, v.bn);
  vkf_gemm_shape prompt = big;
  prompt.m = 64, prompt.n = 2048; /* 32 medium workgroups */
  v = vkf_gemm_choose(&c, &prompt);
  CHECK_MSG(v.bm == 64 && v.coopmat_splits == 4,
            "64x4096x2048: the medium tile split 4 ways along K, got %ux%u split %u", v.bm, v.bn,
            v.coopmat_splits);
  prompt.k = 192; /* 6 steps of 32: too shallow to split */
  CHECK_MSG(vkf_gemm_choose(&c, &prompt).coopmat_splits <= 1, "K = 192 is not split");
  prompt.k = 4096, prompt.batches = 2;
  CHECK_MSG(vkf_gemm_choose(&c, &prompt).coopmat_splits <= 1, "batched products are not split");
  vkf_gemm_shape f32 = s;
  f32.coopmat_ok = 0;
  CHECK_MSG(vkf_gemm_choose(&c, &f32).kind == VKF_GEMM_TILED,
            "f32 operands keep the exact f32 tiles");
  vkf_gemm_shape decode = s;
  decode.m = 4;
  CHECK_MSG(vkf_gemm_choose(&c, &decode).kind == VKF_GEMM_GEMV, "4 rows stay on the GEMV");
  vkf_device_caps off = c;
  off.coopmat_gemm_tile = 0; /* VKF_COOPMAT=0, or no kernels */
  CHECK_MSG(vkf_gemm_choose(&off, &s).kind == VKF_GEMM_TILED, "no tile: the SIMT tiles");
  vkf_device_caps cpu = c;
  cpu.kind = VKF_DEVICE_KIND_CPU, cpu.subgroup_size = 8, cpu.coopmat_gemm_tile = 8;
  cpu.subgroup_ops |= VKF_SUBGROUP_SHUFFLE;
  CHECK_MSG(vkf_gemm_choose(&cpu, &s).kind == VKF_GEMM_CPU,
            "CPU devices keep their kernel (lavapipe 26 reports 8x8x8)");
  vkf_device_caps mobile = c;
  CHECK_OK(vkf_caps_apply_profile(&mobile, "mobile"));
  CHECK_MSG(mobile.coopmat_gemm_tile == 0, "the mobile profile drops cooperative matrices");
  vkf_device_caps nvidia = c;
  CHECK_OK(vkf_caps_apply_profile(&nvidia, "nvidia"));
  CHECK_MSG(nvidia.coopmat_gemm_tile == 16, "the nvidia profile keeps them");
  vkf_gemm_variant cm16 = vkf_gemm_coopmat_variant(&c);
  CHECK_MSG(cm16.coopmat_tile == 16 && cm16.bk == 32, "the tile-16 variant steps k by 32");
}

/* The lowering refuses the kernel for operands it does not take, with the reason. */
static void check_refusals(const vkf_device_caps *caps) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("f32_refused", &g));
  int64_t as[2] = {16, 16};
  vkf_value a = vkf_graph_input(g, "a", VKF_F32, 2, as), b = vkf_graph_input(g, "b", VKF_F32, 2, as);
  vkf_graph_output(g, vkf_matmul(g, "mm", a, b, NULL), "y");
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  vkf_lowered low;
  CHECK_OK(vkf_lower_graph(g, caps, NULL, &low)); /* chosen: not the coopmat kernel */
  for (uint32_t d = 0; d < vkf_plan_dispatch_count(low.plan); d++) {
    const vkf_plan_dispatch *pd = vkf_plan_dispatch_get(low.plan, d);
    for (uint32_t i = 0; i < pd->define_count; i++)
      CHECK_MSG(strcmp(pd->defines[i], "GEMM_COOPMAT") != 0,
                "f32 matmul lowered to the cooperative-matrix kernel");
  }
  vkf_lowered_free(&low);
  vkf_graph_destroy(g);
}

int main(void) {
  check_chooser();
  gpu_test t = gpu_test_start();
  const vkf_device_caps *dev = vkf_device_caps_get(t.device);
  vkf_device_caps caps = gpu_caps(dev);
  const char *require = getenv("VKF_REQUIRE_COOPMAT");
  if (!dev->coopmat_gemm_tile) {
    int required = require && !strcmp(require, "1");
    CHECK_MSG(!required, "VKF_REQUIRE_COOPMAT=1 but device \"%s\" has no cooperative-matrix GEMM "
              "kernels (vkf devices says why)", dev->name);
    int failed = gpu_test_finish(&t);
    if (failed || required) return failed ? failed : 1;
    fprintf(stderr, "skipped: no cooperative-matrix kernels on \"%s\"\n", dev->name);
    return 77;
  }
  check_refusals(&caps);
  /* Each tile the device allows: 8 from lavapipe 26's KHR list, 16 (NVIDIA's) through
   * VK_NV_cooperative_matrix2's flexible dimensions. */
  int tiles = 0;
  for (uint32_t tile = 8; tile <= 16; tile *= 2) {
    if (!(dev->coopmat_tiles & tile)) continue;
    tiles++;
    caps.coopmat_gemm_tile = tile;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      /* a tile the device only emulates (16 on lavapipe, where each pipeline takes LLVM long and
       * a large product ~40 s) runs the cases marked for it: odd edges, both B layouts, a
       * strided operand, every epilogue dtype path, exact results */
      if (tile != dev->coopmat_gemm_tile && !cases[i].emulated) continue;
      vkf_gemm_shape s = {.m = (uint64_t)cases[i].m, .n = (uint64_t)cases[i].n,
                          .k = (uint64_t)cases[i].k, .batches = 1, .coopmat_ok = 1};
      vkf_gemm_variant v = vkf_gemm_choose(&caps, &s);
      CHECK_MSG(v.kind == VKF_GEMM_COOPMAT && v.coopmat_tile == tile,
                "%s: the chooser did not pick the cooperative-matrix kernel of tile %u",
                cases[i].label, tile);
      run_case(&t, &cases[i], &caps);
    }
    if (tile == dev->coopmat_gemm_tile) {
      /* shared memory for the huge tile only with one matrix tile of k a stage (at tile 8: 15
       * KiB of the 21 that two take): its CM_KS=1 body, over 5 steps */
      vkf_device_caps small = caps;
      small.max_shared_memory_size = 16384;
      const cm_case k1 = {.label = "exact_huge_ks1_1024x40x1024_res",
                          .m = 1024,
                          .k = 40,
                          .n = 1024,
                          .transpose_b = 1,
                          .residual = 1,
                          .exact = 1};
      vkf_gemm_shape s = {.m = 1024, .n = 1024, .k = 40, .batches = 1, .coopmat_ok = 1};
      vkf_gemm_variant v = vkf_gemm_choose(&small, &s);
      CHECK_MSG(v.kind == VKF_GEMM_COOPMAT && v.bm == 16 * tile && v.bk == tile,
                "16 KiB at tile %u: the huge tile a step of one matrix tile, chose %ux%ux%u", tile,
                v.bm, v.bn, v.bk);
      run_case(&t, &k1, &small);
    }
    /* the patch embedding, at the native tile; at the emulated one its first, odd-K and
     * channels-last cases */
    for (size_t i = 0; i < sizeof patch_cases / sizeof patch_cases[0]; i++)
      if (tile == dev->coopmat_gemm_tile || i < 3) run_patch(&t, &patch_cases[i], &caps);
    /* every format at the native tile, odd N, M past 8 matrix tiles (no split) without a bias and
     * with one (the residual each way), and a split-K prefill of 21 rows (a bias every other
     * format); at the emulated tile two formats (32- and 256-blocks) */
    for (int f = 0; f < VKF_QUANT_COUNT; f++) {
      if (tile != dev->coopmat_gemm_tile && f != VKF_QUANT_Q4_0 && f != VKF_QUANT_Q6_K) continue;
      int64_t blk = vkf_quant_layout_of((vkf_quant_format)f).block;
      run_quant(&t, (vkf_quant_format)f, 8 * tile + 3, 45, blk * 2, 0, f % 2, &caps, 0);
      run_quant(&t, (vkf_quant_format)f, 8 * tile + 3, 45, blk * 2, 1, !(f % 2), &caps, 0);
      run_quant(&t, (vkf_quant_format)f, 21, 40, blk * (blk == 32 ? 16 : 2) * (tile / 8),
                f % 2 == 0, 1, &caps, 1);
    }
  }
  CHECK_MSG(tiles > 0, "coopmat_gemm_tile %u but no tile in coopmat_tiles", dev->coopmat_gemm_tile);
  return gpu_test_finish(&t);
}
