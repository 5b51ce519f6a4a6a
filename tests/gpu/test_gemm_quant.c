/* Quantised weights (ggml's blocks, graph/base/quant.h) read in place by the matmul and gather
 * kernels, against the CPU interpreter on the same graph (which dequantises with ggml's reference
 * code, itself checked bit for bit against the gguf package in models/test_gguf). Every format;
 * blocks of random bits (every nibble, high bit, sign and 6-bit scale pattern occurs) with finite
 * f16 scales; odd N and the smallest and odd block counts along K; every M of the decode family
 * (1..8) and prefill sizes; f32 and f16 activations; bias, activation and residual epilogues; and
 * each kernel shape: the device's own (lavapipe: the CPU kernels), the GPU tiles (blocks decoded
 * into shared memory) and the GEMV variants (subgroup or shared-memory reduction, 2 or 4 columns,
 * narrow workgroups, the mobile profile). The gather decodes embedding rows from the same blocks. */
#include <string.h>

#include "graph/base/half.h"
#include "graph/base/quant.h"
#include "graph/ir/builder.h"
#include "graph/lower/lower_matmul.h"
#include "tests/op_harness.h"

/* Inputs are U(-1, 1) and weights of magnitude up to ~2: fp32 sums over K <= 2304 in another
 * order than the interpreter's fp64, and one f16 rounding of outputs under f16. */
static const op_tol TOL_Q32 = {.atol = 2e-4, .rtol = 1e-4};
static const op_tol TOL_Q16 = {.atol = 1e-2, .rtol = 4e-3};

static uint32_t rng_state;
static uint32_t rng(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}

static void put_half(uint8_t *p, float v) {
  uint16_t h = vkf_float_to_half(v);
  p[0] = (uint8_t)(h & 0xFF), p[1] = (uint8_t)(h >> 8);
}

/* `rows` rows of `k` elements of format f as random blocks: random bytes, then each f16 field set
 * to a finite scale (d, and the min of the _1 / K formats) so every value is finite. */
static uint8_t *random_blocks(vkf_quant_format f, int64_t rows, int64_t k, size_t *out_size) {
  vkf_quant_layout l = vkf_quant_layout_of(f);
  size_t blocks = (size_t)(rows * k / l.block), size = blocks * l.bytes;
  uint8_t *b = malloc(size + 4);
  for (size_t i = 0; i < size; i++) b[i] = (uint8_t)rng();
  for (size_t i = 0; i < blocks; i++) {
    uint8_t *blk = b + i * l.bytes;
    float d = 0.002f + (float)(rng() % 1000) * 0.00005f, m = ((float)(rng() % 1000) - 500) * 0.001f;
    switch (f) {
      case VKF_QUANT_Q4_1: case VKF_QUANT_Q5_1: put_half(blk, d), put_half(blk + 2, m); break;
      case VKF_QUANT_Q4_K: case VKF_QUANT_Q5_K:
        put_half(blk, d * 0.1f), put_half(blk + 2, d * 0.05f); break;
      case VKF_QUANT_Q6_K: put_half(blk + 208, d * 0.05f); break;
      default: put_half(blk, f == VKF_QUANT_Q8_0 ? d * 0.1f : d); break;
    }
  }
  *out_size = size;
  return b;
}

/* Caps that steer the chooser: the device's own (lavapipe: the CPU kernels, with and without
 * texel views for A), GPU tiles (discrete 128x128, integrated 64x64, 32x32 in 16 KiB), and the
 * GEMV variants of a discrete GPU (subgroupAdd, the shared-memory tree, 32 and 16 invocations,
 * 4 columns per workgroup under a grid limit) and the mobile profile. */
enum { STEERS = 10 };
static vkf_device_caps steer(const vkf_device_caps *dev, int which, int64_t n, const char **name) {
  static const char *const names[STEERS] = {"device", "device no texel", "tiled discrete",
                                            "tiled integrated", "tiled 16 KiB", "gemv subgroup",
                                            "gemv tree", "gemv wg32", "gemv wg16 4 cols", "mobile"};
  vkf_device_caps c = *dev;
  *name = names[which];
  if (which == 1) c.texel_rgba32f = c.texel_rgba16f = c.texel_rgba16ui = c.texel_r32ui = 0;
  if (which >= 2 && which <= 4) c.kind = which == 2 ? VKF_DEVICE_KIND_DISCRETE_GPU
                                                    : VKF_DEVICE_KIND_INTEGRATED_GPU;
  if (which == 4) c.max_shared_memory_size = 16384, c.max_workgroup_invocations = 128;
  if (which >= 5 && which <= 8) c.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
  if (which == 6) c.subgroup_ops &= ~(uint32_t)VKF_SUBGROUP_ARITHMETIC;
  if (which == 7) c.max_workgroup_invocations = 32;
  if (which == 8) {
    c.max_workgroup_invocations = 16;
    c.max_workgroup_count[0] = (uint32_t)((n + 3) / 4);
  }
  if (which == 9) VKF_ASSERT(vkf_caps_apply_profile(&c, "mobile") == VKF_OK);
  return c;
}

typedef struct qcase {
  int64_t m, n, k;
  vkf_dtype act_dtype; /* A, bias, residual and output */
  int bias, residual;
  vkf_activation act;
  int batched; /* A as [2, M, K] against the one weight */
  int first_steer; /* steers from this one on (GEMV_STEER: the GPU-class decode bodies only) */
} qcase;

/* The first steer that sends M <= 8 to the GEMV body (a discrete GPU's caps). */
enum { GEMV_STEER = 5 };

static void run_matmul(gpu_test *t, vkf_quant_format f, const qcase *c) {
  vkf_dtype wq = (vkf_dtype)(VKF_Q8_0 + f);
  char label[128];
  snprintf(label, sizeof label, "%s %s m%lld n%lld k%lld%s%s%s", vkf_quant_layout_of(f).name,
           vkf_dtype_name(c->act_dtype), (long long)c->m, (long long)c->n, (long long)c->k,
           c->bias ? " bias" : "", c->residual ? " res" : "", c->batched ? " batched" : "");
  size_t wsize = 0;
  uint8_t *w = random_blocks(f, c->n, c->k, &wsize);
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("quant", &g));
  int64_t as[3] = {2, c->m, c->k}, ws[2] = {c->n, c->k}, os[3] = {2, c->m, c->n};
  uint32_t rank = c->batched ? 3 : 2;
  const int64_t *ashape = c->batched ? as : as + 1, *oshape = c->batched ? os : os + 1;
  vkf_value a = vkf_graph_input(g, "a", c->act_dtype, rank, ashape);
  vkf_value b = vkf_graph_constant(g, "w", wq, 2, ws, w);
  vkf_matmul_options o = {.transpose_b = 1, .activation = c->act};
  if (c->bias) o.bias = vkf_graph_input(g, "bias", c->act_dtype, 1, &c->n);
  if (c->residual) o.residual = vkf_graph_input(g, "res", c->act_dtype, rank, oshape);
  vkf_graph_output(g, vkf_matmul(g, "mm", a, b, &o), "y");

  vkf_value vals[3] = {a, o.bias, o.residual};
  int64_t counts[3] = {(c->batched ? 2 : 1) * c->m * c->k, c->n, (c->batched ? 2 : 1) * c->m * c->n};
  vkf_input_binding in[3];
  void *data[3] = {0};
  size_t nin = 0;
  for (int i = 0; i < 3; i++) {
    if (!vkf_value_valid(vals[i])) continue;
    float *v = malloc((size_t)counts[i] * sizeof(float));
    op_fill_uniform(v, (size_t)counts[i], 11u + 7u * (uint32_t)i + (uint32_t)c->k, -1.0f, 1.0f);
    size_t size = (size_t)counts[i] * vkf_dtype_size(c->act_dtype);
    data[i] = malloc(size);
    if (c->act_dtype == VKF_F16) op_to_half(v, data[i], (size_t)counts[i]);
    else memcpy(data[i], v, size);
    free(v);
    in[nin++] = (vkf_input_binding){.value = vals[i], .data = data[i], .size = size};
  }
  op_tol tol = c->act_dtype == VKF_F16 ? TOL_Q16 : TOL_Q32;
  const vkf_device_caps *dev = vkf_device_caps_get(t->device);
  for (int s = c->first_steer; s < STEERS; s++) {
    const char *sname;
    vkf_device_caps caps = steer(dev, s, c->n, &sname);
    if (c->act_dtype == VKF_F16 && !caps.storage_16bit) continue;
    if ((s == 7 || s == 8) && c->m > 8) continue; /* narrow workgroups fit no tile: GEMV only */
    char full[192];
    snprintf(full, sizeof full, "%s [%s]", label, sname);
    op_check_with(t, g, in, nin, &caps, tol, full);
  }
  for (int i = 0; i < 3; i++) free(data[i]);
  vkf_graph_destroy(g);
  free(w);
}

/* Embedding rows decoded from the blocks: ids in every block position, repeated ids, the last row,
 * and ids out of range (zeros, as for any table). */
static void run_gather(gpu_test *t, vkf_quant_format f, int64_t vocab, int64_t d) {
  vkf_dtype wq = (vkf_dtype)(VKF_Q8_0 + f);
  char label[96];
  snprintf(label, sizeof label, "gather %s %lldx%lld", vkf_quant_layout_of(f).name,
           (long long)vocab, (long long)d);
  size_t wsize = 0;
  uint8_t *w = random_blocks(f, vocab, d, &wsize);
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("quant_gather", &g));
  int64_t ts[2] = {vocab, d}, is[2] = {2, 5};
  vkf_value table = vkf_graph_constant(g, "table", wq, 2, ts, w);
  vkf_value ids = vkf_graph_input(g, "ids", VKF_I32, 2, is);
  vkf_value y = vkf_gather(g, "embed", table, ids);
  CHECK(vkf_graph_tensor(g, y)->dtype == VKF_F32);
  vkf_graph_output(g, y, "y");
  int32_t idv[10] = {0, 1, (int32_t)vocab - 1, 3, 3, 2, (int32_t)vocab / 2, 0, 1, 2};
  vkf_input_binding in = {.value = ids, .data = idv, .size = sizeof idv};
  const vkf_device_caps *dev = vkf_device_caps_get(t->device);
  const op_tol exact = {0, 0};
  op_check_with(t, g, &in, 1, dev, exact, label);
  vkf_graph_destroy(g);
  free(w);
}

/* What the kernels cannot take is a status naming the node, never a wrong answer: a quantised B
 * that is not transposed, a K that is not whole blocks, a quantised input. */
static void check_errors(void) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("errors", &g));
  int64_t as[2] = {1, 64}, ws[2] = {64, 8};
  static uint8_t blocks[34 * 16];
  vkf_value a = vkf_graph_input(g, "a", VKF_F32, 2, as);
  vkf_value w = vkf_graph_constant(g, "w", VKF_Q8_0, 2, ws, blocks); /* [K, N]: N = 8 no block */
  CHECK(!vkf_value_valid(w));
  vkf_status st = vkf_graph_status(g);
  CHECK(st && strstr(vkf_status_message(st), "multiple of its block of 32"));
  vkf_status_free(st);
  vkf_graph_destroy(g);

  CHECK_OK(vkf_graph_create("errors2", &g));
  int64_t ws2[2] = {8, 64};
  a = vkf_graph_input(g, "a", VKF_F32, 2, as);
  w = vkf_graph_constant(g, "w", VKF_Q8_0, 2, ws2, blocks);
  vkf_value y = vkf_matmul(g, "mm_plain", a, w, NULL); /* not transposed */
  CHECK(!vkf_value_valid(y));
  st = vkf_graph_status(g);
  CHECK(st && strstr(vkf_status_message(st), "transpose_b"));
  vkf_status_free(st);
  vkf_graph_destroy(g);

  CHECK_OK(vkf_graph_create("errors3", &g));
  vkf_value q = vkf_graph_input(g, "q", VKF_Q4_0, 2, ws2);
  CHECK(!vkf_value_valid(q));
  st = vkf_graph_status(g);
  CHECK(st && strstr(vkf_status_message(st), "weight format"));
  vkf_status_free(st);
  vkf_graph_destroy(g);
}

int main(void) {
  gpu_test t = gpu_test_start();
  rng_state = 12345u;
  check_errors();
  for (int f = 0; f < VKF_QUANT_COUNT; f++) {
    int64_t blk = vkf_quant_layout_of((vkf_quant_format)f).block;
    /* decode (1 row, bias + SiLU), a beam of 3 with a residual, 8 rows f16, prefill 21 rows
     * batched with GELU; K one block, and 3 or 5 blocks; N odd */
    const qcase cases[] = {
        {.m = 1, .n = 37, .k = blk * 3, .act_dtype = VKF_F32, .bias = 1, .act = VKF_ACT_SILU},
        {.m = 3, .n = 19, .k = blk, .act_dtype = VKF_F32, .residual = 1},
        {.m = 8, .n = 33, .k = blk * 3, .act_dtype = VKF_F16, .bias = 1},
        {.m = 21, .n = 45, .k = blk * (blk == 32 ? 5 : 2), .act_dtype = VKF_F32,
         .act = VKF_ACT_GELU_ERF, .batched = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
      run_matmul(&t, (vkf_quant_format)f, &cases[i]);
    run_gather(&t, (vkf_quant_format)f, 7, blk * 2);
  }
  /* Every M of the decode family in every format, through the GEMV bodies (quant_piece.glsl: 16
   * weights of a block per invocation and step); every kernel shape on one format of each kind
   * (32-blocks, K-quants). Odd N (a workgroup's last columns past N), odd block counts along K,
   * and at M = 1 more pieces than a 128-wide workgroup has invocations, so each strides K more
   * than once; bias, residual and f16 activations on some rows. */
  for (int f = 0; f < VKF_QUANT_COUNT; f++) {
    int64_t blk = vkf_quant_layout_of((vkf_quant_format)f).block;
    int all = f == VKF_QUANT_Q4_1 || f == VKF_QUANT_Q6_K;
    for (int64_t m = 1; m <= 8; m++) {
      int64_t blocks = m == 1 ? (blk == 32 ? 67 : 9) : m % 2 ? 3 : 5;
      qcase c = {.m = m, .n = 2 * m + 17, .k = blk * blocks,
                 .act_dtype = m == 6 ? VKF_F16 : VKF_F32, .bias = (int)(m % 2),
                 .residual = m == 4, .first_steer = all ? 0 : GEMV_STEER};
      run_matmul(&t, (vkf_quant_format)f, &c);
    }
  }
  /* K % 64 == 0: the CPU kernel's two-block paths (QCPU_K64: Q8_0's 17 whole words a pair of
   * 34-byte blocks; QCPU_W2: Q4_1's 5 RG32UI texels a pair of 20-byte ones), at one and three
   * pairs, rows 1, 2 and 5 (its 1-, 2- and 4-row shapes). Q5_1 (QCPU_W2 at every K: a block is
   * 3 texels) runs in the sweep above. */
  const qcase k64[] = {
      {.m = 1, .n = 37, .k = 192, .act_dtype = VKF_F32, .bias = 1, .act = VKF_ACT_SILU},
      {.m = 2, .n = 19, .k = 64, .act_dtype = VKF_F32, .residual = 1},
      {.m = 5, .n = 21, .k = 192, .act_dtype = VKF_F16, .batched = 1},
  };
  for (size_t i = 0; i < sizeof k64 / sizeof k64[0]; i++) {
    run_matmul(&t, VKF_QUANT_Q8_0, &k64[i]);
    run_matmul(&t, VKF_QUANT_Q4_1, &k64[i]);
  }
  /* Q8_0 weights of N % 16 == 0 rows: the CPU kernel reads them from the runner's copy with their
   * rows 16 to a group (QCPU_X16), at every row block (1, 4 and 8 rows; the last block partial)
   * and with one, two and three groups */
  const qcase x16[] = {
      {.m = 1, .n = 48, .k = 128, .act_dtype = VKF_F32, .bias = 1},
      {.m = 3, .n = 16, .k = 64, .act_dtype = VKF_F32, .residual = 1},
      {.m = 13, .n = 32, .k = 192, .act_dtype = VKF_F32, .act = VKF_ACT_GELU_TANH},
      {.m = 5, .n = 48, .k = 64, .act_dtype = VKF_F16, .batched = 1},
  };
  for (size_t i = 0; i < sizeof x16 / sizeof x16[0]; i++) run_matmul(&t, VKF_QUANT_Q8_0, &x16[i]);
  return gpu_test_finish(&t);
}
