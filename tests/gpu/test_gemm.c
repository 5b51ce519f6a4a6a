/* GEMM (VKF_OP_MATMUL) on the device vs the CPU interpreter, one-node graphs through the whole
 * path: 1-element, odd sizes that are no multiple of any tile, a large one; batched with a
 * broadcast weight; transposed B; permuted (strided) A and B; every epilogue; fp16 storage; and
 * small-integer inputs whose results are exact, compared bit for bit to catch tiling bugs. Cases
 * marked gpu_tiles also run with caps that steer the chooser to each GPU-shaped tile size, so
 * those variants stay tested on lavapipe, where the CPU variant is the default; cases marked gemv
 * (at most 8 rows) run with caps that steer it to each GEMV variant (rows 1, 2, 4, 8; B as [N, K],
 * [K, N] or strided; subgroup or shared-memory reduction; 2 or 4 columns per workgroup;
 * workgroups of 128 down to 16; the mobile profile). The chooser itself is checked on desktop,
 * mobile and CPU caps. */
#include <string.h>

#include "graph/base/half.h"
#include "graph/ir/builder.h"
#include "graph/lower/lower_matmul.h"
#include "graph/passes/memory_plan.h"
#include "tests/op_harness.h"

/* Tolerance table: |gpu - ref| <= atol + rtol * |ref| + acc * sqrt(K) * 2^-24 * max|ref|.
 * Inputs are U(-1, 1). The reference accumulates in fp64, the kernels in fp32 in another order:
 * each of the K roundings is at most half an ulp of a partial sum (bounded by ~max|ref|), and
 * they add up like a random walk, hence the sqrt(K) term (acc = 8 covers its tail over ~10^5
 * outputs); erf/tanh/exp in the epilogues add ~1e-7. f16 outputs are one rounding of the fp32
 * result (2^-11 relative) away, sometimes on the other side of a tie: 2 ulp. Exact cases (small
 * integers, every partial sum representable) must match bit for bit. */
typedef struct gemm_tol {
  double atol, rtol, acc;
} gemm_tol;
static const gemm_tol TOL_F32 = {.atol = 1e-5, .rtol = 1e-5, .acc = 8};
static const gemm_tol TOL_F16 = {.atol = 1e-3, .rtol = 2e-3, .acc = 8};
static const gemm_tol TOL_EXACT = {.atol = 0, .rtol = 0, .acc = 0};

typedef struct gemm_case {
  const char *label;
  vkf_dtype dtype;   /* A, B, bias, residual and output */
  vkf_dtype b_dtype; /* B's storage when not `dtype` (VKF_BF16); 0 (f32) means `dtype` */
  uint32_t a_rank;
  int64_t a_shape[4]; /* as the node sees A: [..., M, K] */
  uint32_t b_rank;
  int64_t b_shape[4]; /* [..., K, N], or [..., N, K] with transpose_b */
  int transpose_b;
  int bias, residual;
  vkf_activation act;
  int a_permuted, b_permuted; /* stored with the last two axes swapped, read through a permute */
  int exact;                  /* small-integer inputs, compared exactly */
  int gpu_tiles;              /* also run with the GPU-shaped tile variants */
  int gemv;                   /* also run with the GEMV variants (M <= 8) */
} gemm_case;

static const gemm_case cases[] = {
    {.label = "one",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {1, 1},
     .b_rank = 2,
     .b_shape = {1, 1}},
    {.label = "odd_7x13x5",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {7, 13},
     .b_rank = 2,
     .b_shape = {13, 5},
     .gpu_tiles = 1},
    {.label = "odd_33x65x17_bias_gelu",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {33, 65},
     .b_rank = 2,
     .b_shape = {65, 17},
     .bias = 1,
     .act = VKF_ACT_GELU_ERF},
    {.label = "odd_197x64x129",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {197, 64},
     .b_rank = 2,
     .b_shape = {64, 129}},
    {.label = "batched_weight_bias_relu",
     .dtype = VKF_F32,
     .a_rank = 3,
     .a_shape = {3, 37, 40},
     .b_rank = 2,
     .b_shape = {40, 24},
     .bias = 1,
     .act = VKF_ACT_RELU},
    {.label = "batched4_transpose_b",
     .dtype = VKF_F32,
     .a_rank = 4,
     .a_shape = {2, 3, 19, 36},
     .b_rank = 3,
     .b_shape = {3, 28, 36},
     .transpose_b = 1,
     .gpu_tiles = 1},
    {.label = "transpose_b_odd_k",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {45, 30},
     .b_rank = 2,
     .b_shape = {29, 30},
     .transpose_b = 1},
    {.label = "permuted_a",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {20, 33},
     .b_rank = 2,
     .b_shape = {33, 12},
     .a_permuted = 1,
     .gpu_tiles = 1},
    {.label = "permuted_b_batched",
     .dtype = VKF_F32,
     .a_rank = 3,
     .a_shape = {2, 21, 16},
     .b_rank = 3,
     .b_shape = {2, 16, 44},
     .b_permuted = 1},
    {.label = "act_gelu_tanh",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {33, 65},
     .b_rank = 2,
     .b_shape = {65, 17},
     .act = VKF_ACT_GELU_TANH},
    {.label = "act_silu",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {33, 65},
     .b_rank = 2,
     .b_shape = {65, 17},
     .act = VKF_ACT_SILU},
    {.label = "residual",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {33, 65},
     .b_rank = 2,
     .b_shape = {65, 17},
     .residual = 1},
    {.label = "bias_gelu_residual_vit",
     .dtype = VKF_F32,
     .a_rank = 3,
     .a_shape = {2, 50, 64},
     .b_rank = 2,
     .b_shape = {96, 64},
     .transpose_b = 1,
     .bias = 1,
     .act = VKF_ACT_GELU_ERF,
     .residual = 1,
     .gpu_tiles = 1},
    {.label = "f16_bias_residual",
     .dtype = VKF_F16,
     .a_rank = 2,
     .a_shape = {64, 96},
     .b_rank = 2,
     .b_shape = {96, 80},
     .bias = 1,
     .residual = 1,
     .gpu_tiles = 1},
    {.label = "f16_transpose_b_odd",
     .dtype = VKF_F16,
     .a_rank = 3,
     .a_shape = {2, 31, 18},
     .b_rank = 2,
     .b_shape = {27, 18},
     .transpose_b = 1,
     .act = VKF_ACT_GELU_ERF},
    {.label = "large_256x768x512",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {256, 768},
     .b_rank = 2,
     .b_shape = {768, 512}},
    {.label = "exact_67x96x72",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {67, 96},
     .b_rank = 2,
     .b_shape = {96, 72},
     .exact = 1,
     .gpu_tiles = 1},
    {.label = "exact_transpose_bias_relu_residual",
     .dtype = VKF_F32,
     .a_rank = 3,
     .a_shape = {2, 37, 30},
     .b_rank = 2,
     .b_shape = {45, 30},
     .transpose_b = 1,
     .bias = 1,
     .act = VKF_ACT_RELU,
     .residual = 1,
     .exact = 1,
     .gpu_tiles = 1},
    {.label = "exact_520x36x1030",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {520, 36},
     .b_rank = 2,
     .b_shape = {36, 1030},
     .exact = 1,
     .gpu_tiles = 1},
    /* [N, K] problems big enough for the big CPU block: K = 48 runs 4 steps of 4 per loop
     * iteration, K = 40 two (4 would not divide K) */
    {.label = "exact_transpose_k48_bias",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {130, 48},
     .b_rank = 2,
     .b_shape = {70, 48},
     .transpose_b = 1,
     .bias = 1,
     .exact = 1},
    {.label = "exact_transpose_k40_residual",
     .dtype = VKF_F32,
     .a_rank = 2,
     .a_shape = {100, 40},
     .b_rank = 2,
     .b_shape = {68, 40},
     .transpose_b = 1,
     .residual = 1,
     .exact = 1},
    {.label = "exact_decode_row_1x64x520",  /* the row block of decode steps (rule 1a) */
     .dtype = VKF_F32,
     .a_rank = 3,
     .a_shape = {1, 1, 64},
     .b_rank = 2,
     .b_shape = {520, 64},
     .transpose_b = 1,
     .bias = 1,
     .exact = 1},
    {.label = "exact_f16",
     .dtype = VKF_F16,
     .a_rank = 2,
     .a_shape = {40, 64},
     .b_rank = 2,
     .b_shape = {64, 36},
     .exact = 1},
    /* GEMV: odd K and N (no vec4 loads, partial column blocks), every epilogue, each layout */
    {.label = "gemv_nk_3x257x67_bias_gelu_res", .dtype = VKF_F32, .a_rank = 2, .a_shape = {3, 257},
     .b_rank = 2, .b_shape = {67, 257}, .transpose_b = 1, .bias = 1, .residual = 1,
     .act = VKF_ACT_GELU_ERF, .gemv = 1},
    {.label = "gemv_kn_5x37x131_bias_silu", .dtype = VKF_F32, .a_rank = 2, .a_shape = {5, 37},
     .b_rank = 2, .b_shape = {37, 131}, .bias = 1, .act = VKF_ACT_SILU, .gemv = 1},
    {.label = "gemv_strided_2x33x9_tanh", .dtype = VKF_F32, .a_rank = 2, .a_shape = {2, 33},
     .b_rank = 2, .b_shape = {33, 9}, .b_permuted = 1, .act = VKF_ACT_GELU_TANH, .residual = 1,
     .gemv = 1},
    /* vec4 loads (K, N multiples of 4), batched with a broadcast weight, exact */
    {.label = "gemv_exact_nk_batched_2x1x256x130", .dtype = VKF_F32, .a_rank = 3,
     .a_shape = {2, 1, 256}, .b_rank = 2, .b_shape = {130, 256}, .transpose_b = 1, .bias = 1,
     .exact = 1, .gemv = 1},
    {.label = "gemv_exact_kn_8x64x128_relu_res", .dtype = VKF_F32, .a_rank = 2,
     .a_shape = {8, 64}, .b_rank = 2, .b_shape = {64, 128}, .act = VKF_ACT_RELU, .residual = 1,
     .exact = 1, .gemv = 1},
    /* f16 storage: A, B, bias, residual and output */
    {.label = "gemv_f16_nk_1x96x50", .dtype = VKF_F16, .a_rank = 2, .a_shape = {1, 96},
     .b_rank = 2, .b_shape = {50, 96}, .transpose_b = 1, .bias = 1, .residual = 1, .gemv = 1},
    /* K % 8 == 4: vec4 loads but not GEMV_K8's 16-byte ones; K = 96 above takes those */
    {.label = "gemv_f16_nk_2x100x33", .dtype = VKF_F16, .a_rank = 2, .a_shape = {2, 100},
     .b_rank = 2, .b_shape = {33, 100}, .transpose_b = 1, .act = VKF_ACT_SILU, .gemv = 1},
    {.label = "gemv_f16_kn_6x20x12", .dtype = VKF_F16, .a_rank = 2, .a_shape = {6, 20},
     .b_rank = 2, .b_shape = {20, 12}, .bias = 1, .gemv = 1},
    {.label = "gemv_f16_kn_7x19x13_odd", .dtype = VKF_F16, .a_rank = 2, .a_shape = {7, 19},
     .b_rank = 2, .b_shape = {19, 13}, .residual = 1, .act = VKF_ACT_GELU_ERF, .gemv = 1},
    /* bf16 weights (B only) under f32 and f16 activations: every kernel shape, both layouts,
     * odd sizes (scalar word loads, the odd element in a word's high half), vec4 sizes (uvec2
     * loads), a permuted view, exact small integers */
    {.label = "bf16_nk_3x257x67_bias_gelu_res", .dtype = VKF_F32, .b_dtype = VKF_BF16,
     .a_rank = 2, .a_shape = {3, 257}, .b_rank = 2, .b_shape = {67, 257}, .transpose_b = 1,
     .bias = 1, .residual = 1, .act = VKF_ACT_GELU_ERF, .gemv = 1, .gpu_tiles = 1},
    {.label = "bf16_kn_5x37x131_bias_silu", .dtype = VKF_F32, .b_dtype = VKF_BF16, .a_rank = 2,
     .a_shape = {5, 37}, .b_rank = 2, .b_shape = {37, 131}, .bias = 1, .act = VKF_ACT_SILU,
     .gemv = 1, .gpu_tiles = 1},
    {.label = "bf16_exact_nk_batched_2x1x256x132", .dtype = VKF_F32, .b_dtype = VKF_BF16,
     .a_rank = 3, .a_shape = {2, 1, 256}, .b_rank = 2, .b_shape = {132, 256}, .transpose_b = 1,
     .bias = 1, .exact = 1, .gemv = 1},
    {.label = "bf16_exact_kn_8x64x128_relu_res", .dtype = VKF_F32, .b_dtype = VKF_BF16,
     .a_rank = 2, .a_shape = {8, 64}, .b_rank = 2, .b_shape = {64, 128}, .act = VKF_ACT_RELU,
     .residual = 1, .exact = 1, .gemv = 1, .gpu_tiles = 1},
    {.label = "bf16_prefill_67x96x44", .dtype = VKF_F32, .b_dtype = VKF_BF16, .a_rank = 2,
     .a_shape = {67, 96}, .b_rank = 2, .b_shape = {44, 96}, .transpose_b = 1, .bias = 1,
     .gpu_tiles = 1},
    {.label = "bf16_strided_2x33x9_tanh", .dtype = VKF_F32, .b_dtype = VKF_BF16, .a_rank = 2,
     .a_shape = {2, 33}, .b_rank = 2, .b_shape = {33, 9}, .b_permuted = 1,
     .act = VKF_ACT_GELU_TANH, .gemv = 1},
    {.label = "bf16_f16_nk_1x96x50", .dtype = VKF_F16, .b_dtype = VKF_BF16, .a_rank = 2,
     .a_shape = {1, 96}, .b_rank = 2, .b_shape = {50, 96}, .transpose_b = 1, .bias = 1,
     .residual = 1, .gemv = 1},
    {.label = "bf16_f16_kn_7x19x13_odd", .dtype = VKF_F16, .b_dtype = VKF_BF16, .a_rank = 2,
     .a_shape = {7, 19}, .b_rank = 2, .b_shape = {19, 13}, .residual = 1, .gemv = 1,
     .gpu_tiles = 1},
};

/* Caps that steer the chooser to each GPU-shaped tile size (given a large enough problem):
 * discrete -> 128x128, integrated -> 64x64, 16 KiB / 128 invocations -> 32x32, 3 KiB -> 16x16. */
enum { STEER_COUNT = 5 };
static vkf_device_caps steered_caps(const vkf_device_caps *device, int which) {
  vkf_device_caps c = *device;
  if (which == 4) {
    /* the device's own kind without texel views: on lavapipe, the CPU kernel's storage-buffer
     * loads (texel_format falls back per operand; this takes them all away) */
    c.texel_rgba32f = c.texel_rgba16f = c.texel_rgba16ui = c.texel_r32ui = 0;
    return c;
  }
  c.kind = which == 0 ? VKF_DEVICE_KIND_DISCRETE_GPU : VKF_DEVICE_KIND_INTEGRATED_GPU;
  if (which == 2) c.max_shared_memory_size = 16384, c.max_workgroup_invocations = 128;
  if (which == 3) c.max_shared_memory_size = 3072;
  return c;
}

/* Caps that steer the chooser to each GEMV variant of a problem of at most 8 rows: a discrete GPU
 * with subgroup arithmetic (subgroupAdd), without it (the shared-memory tree), with workgroups of
 * at most 32 and 16 invocations, with a grid limit that needs 4 columns per workgroup, and the
 * mobile profile on the device's own caps. */
enum { GEMV_STEER_COUNT = 6 };
static vkf_device_caps gemv_caps(const vkf_device_caps *device, int which, int64_t n) {
  vkf_device_caps c = *device;
  c.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
  if (which == 1) c.subgroup_ops &= ~(uint32_t)VKF_SUBGROUP_ARITHMETIC;
  if (which == 2) c.max_workgroup_invocations = 32;
  if (which == 3) c.max_workgroup_invocations = 16, c.subgroup_ops = VKF_SUBGROUP_BASIC;
  if (which == 4) c.max_workgroup_count[0] = (uint32_t)((n + 3) / 4); /* 2 columns would pass it */
  if (which == 5) {
    c = *device;
    VKF_ASSERT(vkf_caps_apply_profile(&c, "mobile") == VKF_OK);
  }
  return c;
}

static void *pack(const float *v, size_t n, vkf_dtype dtype, size_t *out_size) {
  *out_size = n * vkf_dtype_size(dtype);
  void *p = malloc(*out_size + 16);
  if (dtype == VKF_F16)
    op_to_half(v, p, n);
  else if (dtype == VKF_BF16)
    for (size_t i = 0; i < n; i++) ((uint16_t *)p)[i] = vkf_float_to_bf16(v[i]);
  else
    memcpy(p, v, n * sizeof(float));
  return p;
}

static int64_t count_of(uint32_t rank, const int64_t *shape) {
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= shape[i];
  return n;
}

/* The stored input for a (possibly permuted) operand, and the value the matmul reads. */
static vkf_value operand(vkf_graph *g, const char *name, vkf_dtype dtype, uint32_t rank,
                         const int64_t *shape, int permuted, vkf_value *out_stored) {
  int64_t stored[4];
  uint32_t axes[4] = {0, 1, 2, 3};
  memcpy(stored, shape, sizeof stored);
  if (permuted) {
    stored[rank - 1] = shape[rank - 2], stored[rank - 2] = shape[rank - 1];
    axes[rank - 1] = rank - 2, axes[rank - 2] = rank - 1;
  }
  *out_stored = vkf_graph_input(g, name, dtype, rank, stored);
  return permuted ? vkf_permute(g, NULL, *out_stored, axes) : *out_stored;
}

/* Runs the lowered graph on the device with `caps` steering the chooser; *out_values are fp32. */
static vkf_status run_device(gpu_test *t, vkf_graph *g, const vkf_device_caps *caps,
                             const vkf_input_binding *inputs, size_t input_count,
                             float **out_values, size_t *out_count) {
  *out_values = NULL;
  vkf_lowered low;
  VKF_RETURN_IF_ERROR(vkf_lower_graph(g, caps, NULL, &low));
  vkf_session *s = NULL;
  vkf_status st = vkf_session_create(t->device, low.plan, NULL, &s);
  for (size_t i = 0; i < input_count && !st; i++)
    st = vkf_session_write(s, low.tensors[inputs[i].value.id].buffer, 0, inputs[i].data,
                           inputs[i].size);
  if (!st) st = vkf_session_run(s);
  vkf_value out = vkf_graph_output_at(g, 0);
  const vkf_tensor *ot = vkf_graph_tensor(g, out);
  size_t count = (size_t)vkf_tensor_element_count(ot);
  void *raw = malloc(vkf_tensor_size(ot) + 16);
  float *values = malloc(count * sizeof(float) + 16);
  if (!st) st = vkf_session_read(s, low.tensors[out.id].buffer, 0, raw, vkf_tensor_size(ot));
  for (size_t i = 0; i < count && !st; i++) values[i] = op_load(raw, ot->dtype, i);
  free(raw);
  vkf_session_destroy(s);
  vkf_lowered_free(&low);
  if (st) {
    free(values);
    return st;
  }
  *out_values = values;
  *out_count = count;
  return VKF_OK;
}

static void compare(const char *label, const char *variant, const float *gpu, const float *ref,
                    size_t count, int64_t k, gemm_tol tol) {
  double max_ref = 0;
  for (size_t i = 0; i < count; i++)
    if (fabs(ref[i]) > max_ref) max_ref = fabs(ref[i]);
  double acc = tol.acc * sqrt((double)k) * ldexp(1.0, -24) * max_ref;
  int bad = 0;
  size_t worst = 0;
  double max_err = 0;
  for (size_t i = 0; i < count; i++) {
    double err = fabs((double)gpu[i] - (double)ref[i]);
    if (!(isfinite(gpu[i]) && err <= tol.atol + tol.rtol * fabs(ref[i]) + acc)) bad++;
    if (!(err <= max_err)) max_err = err, worst = i;
  }
  CHECK_MSG(bad == 0,
            "%s [%s]: %d of %zu out of tolerance (max err %.3g at %zu: gpu %.9g ref "
            "%.9g; atol %g rtol %g acc %g)",
            label, variant, bad, count, max_err, worst, (double)gpu[worst], (double)ref[worst],
            tol.atol, tol.rtol, acc);
}

static void run_case(gpu_test *t, const gemm_case *c) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create(c->label, &g));
  vkf_value a_stored, b_stored;
  vkf_value a = operand(g, "a", c->dtype, c->a_rank, c->a_shape, c->a_permuted, &a_stored);
  vkf_dtype b_dtype = c->b_dtype ? c->b_dtype : c->dtype;
  vkf_value b = operand(g, "b", b_dtype, c->b_rank, c->b_shape, c->b_permuted, &b_stored);
  int64_t n = c->b_shape[c->b_rank - (c->transpose_b ? 2 : 1)];
  /* output shape: broadcast batch dims, then [M, N] */
  uint32_t out_rank = c->a_rank > c->b_rank ? c->a_rank : c->b_rank;
  int64_t out_shape[4];
  for (uint32_t i = 0; i + 2 < out_rank; i++) {
    int64_t ai = (int64_t)i - (out_rank - c->a_rank), bi = (int64_t)i - (out_rank - c->b_rank);
    int64_t da = ai >= 0 ? c->a_shape[ai] : 1, db = bi >= 0 ? c->b_shape[bi] : 1;
    out_shape[i] = da > db ? da : db;
  }
  out_shape[out_rank - 2] = c->a_shape[c->a_rank - 2];
  out_shape[out_rank - 1] = n;
  vkf_matmul_options opts = {.transpose_b = c->transpose_b, .activation = c->act};
  if (c->bias) opts.bias = vkf_graph_input(g, "bias", c->dtype, 1, &n);
  if (c->residual) opts.residual = vkf_graph_input(g, "res", c->dtype, out_rank, out_shape);
  vkf_value y = vkf_matmul(g, "mm", a, b, &opts);
  vkf_graph_output(g, y, "y");
  vkf_status st = vkf_graph_status(g);
  CHECK_MSG(st == VKF_OK, "%s: build: %s", c->label, vkf_status_message(st));
  vkf_status_free(st);
  if (!st) CHECK_OK(vkf_memory_plan_build(g, NULL));

  /* Inputs: U(-1, 1), or integers in [-3, 3] (exact: |sum| <= 9K, far below 2^24 / 2^11). */
  vkf_value values[4] = {a_stored, b_stored, opts.bias, opts.residual};
  int64_t counts[4] = {count_of(c->a_rank, c->a_shape), count_of(c->b_rank, c->b_shape), n,
                       count_of(out_rank, out_shape)};
  vkf_input_binding in[4];
  void *packed[4] = {0};
  size_t in_count = 0;
  for (int i = 0; i < 4; i++) {
    if (!vkf_value_valid(values[i])) continue;
    float *v = malloc((size_t)counts[i] * sizeof(float));
    if (c->exact)
      op_fill_ints(v, (size_t)counts[i], 7u + 13u * (uint32_t)i, -3, 3);
    else
      op_fill_uniform(v, (size_t)counts[i], 7u + 13u * (uint32_t)i, -1.0f, 1.0f);
    size_t size;
    packed[i] = pack(v, (size_t)counts[i], i == 1 ? b_dtype : c->dtype, &size);
    in[in_count++] = (vkf_input_binding){.value = values[i], .data = packed[i], .size = size};
    free(v);
  }

  size_t count = (size_t)count_of(out_rank, out_shape);
  float *ref = malloc(count * sizeof(float) + 16);
  vkf_interp *it = NULL;
  st = vkf_interp_create(g, &it);
  for (size_t i = 0; i < in_count && !st; i++)
    st = vkf_interp_set(it, in[i].value, in[i].data, in[i].size);
  if (!st) st = vkf_interp_run(it);
  if (!st) st = vkf_interp_get_f32(it, y, ref, count);
  CHECK_MSG(st == VKF_OK, "%s: interpreter: %s", c->label, vkf_status_message(st));
  vkf_status_free(st);
  vkf_interp_destroy(it);

  gemm_tol tol = c->exact ? TOL_EXACT : c->dtype == VKF_F16 ? TOL_F16 : TOL_F32;
  const vkf_device_caps *dev = vkf_device_caps_get(t->device);
  int tiles = c->gpu_tiles ? STEER_COUNT : 0, gemvs = c->gemv ? GEMV_STEER_COUNT : 0;
  for (int v = -1; v < tiles + gemvs; v++) {
    vkf_device_caps caps = v < 0 ? *dev : v < tiles ? steered_caps(dev, v) : gemv_caps(dev, v - tiles, n);
    vkf_gemm_shape shape = {.m = (uint64_t)out_shape[out_rank - 2],
                            .n = (uint64_t)n,
                            .k = (uint64_t)c->a_shape[c->a_rank - 1],
                            .batches = 1,
                            .b_along_k = c->transpose_b && !c->b_permuted,
                            .b_along_n = !c->transpose_b && !c->b_permuted};
    for (uint32_t i = 0; i + 2 < out_rank; i++) shape.batches *= (uint64_t)out_shape[i];
    vkf_gemm_variant chosen = vkf_gemm_choose(&caps, &shape);
    char name[64];
    vkf_gemm_variant_name(&chosen, name, sizeof name);
    if (v >= tiles && v < tiles + gemvs - 1)  /* the steers meant for GEMV must reach it */
      CHECK_MSG(chosen.kind == VKF_GEMM_GEMV, "%s: GEMV steer %d chose %s", c->label, v - tiles,
                name);
    float *gpu = NULL;
    size_t got = 0;
    st = run_device(t, g, &caps, in, in_count, &gpu, &got);
    CHECK_MSG(st == VKF_OK, "%s [%s]: device: %s", c->label, name, vkf_status_message(st));
    vkf_status_free(st);
    if (gpu && got == count)
      compare(c->label, name, gpu, ref, count, c->a_shape[c->a_rank - 1], tol);
    free(gpu);
  }
  free(ref);
  for (int i = 0; i < 4; i++) free(packed[i]);
  vkf_graph_destroy(g);
}

/* The chooser on representative caps, without running anything. */
static void check_chooser(const vkf_device_caps *device) {
  vkf_gemm_shape vit = {.m = 197, .n = 768, .k = 768, .batches = 1};
  /* lavapipe-like caps built from zero, so VKF_DEVICE_PROFILE on the real device changes nothing */
  vkf_device_caps cpu = {.kind = VKF_DEVICE_KIND_CPU, .subgroup_size = 8, .min_subgroup_size = 8,
                         .max_subgroup_size = 8, .storage_16bit = 1};
  for (int i = 0; i < 3; i++) cpu.max_workgroup_size[i] = 1024, cpu.max_workgroup_count[i] = 65535;
  cpu.subgroup_ops = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_BALLOT | VKF_SUBGROUP_SHUFFLE;
  cpu.max_workgroup_invocations = 1024, cpu.max_shared_memory_size = 32768;
  CHECK(vkf_gemm_choose(&cpu, &vit).kind == VKF_GEMM_CPU);
  /* no shuffle (the mobile profile's subgroups): the CPU kind falls back to tiles */
  vkf_device_caps cpu_basic = cpu;
  cpu_basic.subgroup_ops = VKF_SUBGROUP_BASIC;
  vkf_gemm_variant v = vkf_gemm_choose(&cpu_basic, &vit);
  CHECK(v.kind == VKF_GEMM_TILED && v.bm == 64);
  vkf_device_caps mobile = cpu_basic;
  CHECK_OK(vkf_caps_apply_profile(&mobile, "mobile"));
  v = vkf_gemm_choose(&mobile, &vit);
  CHECK(v.kind == VKF_GEMM_TILED && v.bm == 32 && v.workgroup_size <= 128);
  CHECK((v.bm + v.bn) * v.bk * 4 <= mobile.max_shared_memory_size);
  vkf_device_caps desk = cpu;
  desk.kind = VKF_DEVICE_KIND_DISCRETE_GPU, desk.max_shared_memory_size = 49152;
  vkf_gemm_shape big = {.m = 1024, .n = 1024, .k = 1024, .batches = 1};
  v = vkf_gemm_choose(&desk, &big);
  CHECK(v.kind == VKF_GEMM_TILED && v.bm == 128 && v.tm == 8);
  /* the ViT shape has 12 128x128 tiles: too few to fill a GPU, so 64x64 */
  CHECK(vkf_gemm_choose(&desk, &vit).bm == 64);
  /* decode steps on a GPU: the GEMV body, rows rounded up to a power of two, by B's layout */
  vkf_gemm_shape decode = {.m = 1, .n = 64, .k = 768, .batches = 1, .b_along_k = 1};
  desk.subgroup_ops |= VKF_SUBGROUP_ARITHMETIC;
  v = vkf_gemm_choose(&desk, &decode);
  CHECK(v.kind == VKF_GEMM_GEMV && v.gemv_rows == 1 && !v.gemv_kn && v.gemv_cols == 2 &&
        v.gemv_subgroup && v.workgroup_size == 128);
  decode.m = 5, decode.b_along_k = 0, decode.b_along_n = 1;
  v = vkf_gemm_choose(&desk, &decode);
  CHECK(v.kind == VKF_GEMM_GEMV && v.gemv_rows == 8 && v.gemv_kn);
  /* nine rows are a GEMM again; an LM head of 151936 columns takes 4 columns per workgroup */
  decode.m = 9;
  CHECK(vkf_gemm_choose(&desk, &decode).kind == VKF_GEMM_TILED);
  vkf_gemm_shape head = {.m = 1, .n = 151936, .k = 896, .batches = 1, .b_along_k = 1};
  v = vkf_gemm_choose(&desk, &head);
  CHECK(v.kind == VKF_GEMM_GEMV && v.gemv_cols == 4);
  /* lavapipe keeps its CPU row block for decode steps */
  decode.m = 1, decode.n = 768;
  CHECK(vkf_gemm_choose(&cpu, &decode).kind == VKF_GEMM_CPU);
  /* a forced variant the device cannot run is a status naming the node */
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("chooser", &g));
  int64_t sa[2] = {12, 8}, sb[2] = {8, 4}; /* 12 rows: no GEMV, and no tile fits 16 invocations */
  vkf_value a = vkf_graph_input(g, "a", VKF_F32, 2, sa),
            b = vkf_graph_input(g, "b", VKF_F32, 2, sb);
  vkf_graph_output(g, vkf_matmul(g, "mm_small", a, b, NULL), "y");
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  vkf_device_caps tiny = *device;
  tiny.max_workgroup_invocations = 16, tiny.kind = VKF_DEVICE_KIND_INTEGRATED_GPU;
  vkf_lowered low;
  CHECK_STATUS(vkf_lower_graph(g, &tiny, NULL, &low), VKF_STATUS_UNSUPPORTED, "mm_small");
  vkf_device_caps no16 = *device;
  no16.storage_16bit = 0;
  vkf_graph_destroy(g);
  CHECK_OK(vkf_graph_create("chooser16", &g));
  a = vkf_graph_input(g, "a", VKF_F16, 2, sa), b = vkf_graph_input(g, "b", VKF_F16, 2, sb);
  vkf_graph_output(g, vkf_matmul(g, "mm_half", a, b, NULL), "y");
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  CHECK_STATUS(vkf_lower_graph(g, &no16, NULL, &low), VKF_STATUS_UNSUPPORTED, "mm_half");
  vkf_graph_destroy(g);
}

/* K % 4 != 0 with B as [K, N]: the CPU kernel's last step of 4 along k reads past K. Its
 * out-of-range rows must contribute nothing, not 0 * B[K-1] (NaN where B[K-1] holds an Inf): with
 * B[K-1, n] = +Inf for even n and A > 0, those columns are +Inf and the others finite. */
static void check_k_tail_inf(gpu_test *t) {
  enum { M = 20, K = 5, N = 64 };
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("k_tail_inf", &g));
  int64_t sa[2] = {M, K}, sb[2] = {K, N};
  vkf_value a = vkf_graph_input(g, "a", VKF_F32, 2, sa),
            b = vkf_graph_input(g, "b", VKF_F32, 2, sb);
  vkf_graph_output(g, vkf_matmul(g, "mm_k_tail", a, b, NULL), "y");
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  float av[M * K], bv[K * N];
  for (int i = 0; i < M * K; i++) av[i] = 0.25f + (float)(i % 7) * 0.125f;
  for (int i = 0; i < K * N; i++)
    bv[i] = i / N == K - 1 && i % 2 == 0 ? INFINITY : (float)(i % 5) - 2.0f;
  vkf_input_binding in[2] = {{.value = a, .data = av, .size = sizeof av},
                             {.value = b, .data = bv, .size = sizeof bv}};
  float *y = NULL;
  size_t got = 0;
  vkf_status st = run_device(t, g, vkf_device_caps_get(t->device), in, 2, &y, &got);
  CHECK_MSG(st == VKF_OK, "k_tail_inf: %s", vkf_status_message(st));
  vkf_status_free(st);
  int bad = 0;
  for (size_t i = 0; y && i < got; i++)
    if (i % 2 == 0 ? !(isinf(y[i]) && y[i] > 0) : !isfinite(y[i])) bad++;
  CHECK_MSG(y && got == M * N && bad == 0,
            "k_tail_inf: %d of %zu outputs wrong (NaN from the k tail?)", bad, got);
  free(y);
  vkf_graph_destroy(g);
}

int main(void) {
  gpu_test t = gpu_test_start();
  check_chooser(vkf_device_caps_get(t.device));
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&t, &cases[i]);
  /* Every M of the GEMV family, 1..8, on an odd K and N with B as [N, K] and as [K, N]. */
  for (int64_t m = 1; m <= 8; m++)
    for (int tb = 0; tb < 2; tb++) {
      char label[64];
      for (int bf = 0; bf < 2; bf++) {
        snprintf(label, sizeof label, "gemv_sweep_%s%s_m%d_k45_n23", bf ? "bf16_" : "",
                 tb ? "nk" : "kn", (int)m);
        gemm_case c = {.label = label, .dtype = VKF_F32, .b_dtype = bf ? VKF_BF16 : VKF_F32,
                       .a_rank = 2, .a_shape = {m, 45}, .b_rank = 2, .transpose_b = tb,
                       .bias = 1, .gemv = 1};
        c.b_shape[0] = tb ? 23 : 45, c.b_shape[1] = tb ? 45 : 23;
        run_case(&t, &c);
      }
    }
  check_k_tail_inf(&t);
  return gpu_test_finish(&t);
}
