/* Embedding and pooling kernels on the device against the interpreter: GATHER (f32/f16/i32
 * tables, ids of rank 1-3 and strided ids, out-of-range ids never read out of bounds),
 * PATCH_EMBED (exact small-integer tiling checks, odd sizes, non-square patches, strided image,
 * f16, ViT-B/16 at 224) and MEAN_POOL (masks with padding, an all-padding row, strided input,
 * f16, a larger case). */
#include "graph/passes/memory_plan.h"
#include "tests/op_case.h"

/* Tolerances, |gpu - ref| <= atol + rtol * |ref|:
 * - gather moves bits: exact.
 * - patch_embed on small integers: every product and partial sum is an integer below 2^24, so the
 *   fp32 tiled GEMM must equal the fp64 reference exactly.
 * - patch_embed on uniform [-1, 1) data: fp32 accumulation over K = C*P*Q terms against fp64;
 *   K = 768 terms of magnitude <= 1 give rounding error well under 1e-4 absolute.
 * - f16 outputs: one f16 rounding of the fp32 result, ties may land either side after fp32
 *   accumulation differences: 2^-10 relative plus the accumulation allowance.
 * - mean_pool: fp32 sums of <= 256 terms in [-1, 1) against fp64, divided by the count. */
static const op_tol TOL_EXACT = {0.0, 0.0};
static const op_tol TOL_PATCH = {1e-4, 1e-5};
static const op_tol TOL_PATCH_F16 = {1e-4, 1e-3};
static const op_tol TOL_POOL = {2e-6, 1e-5};
static const op_tol TOL_POOL_F16 = {2e-6, 1e-3};

static void gathers(gpu_test *t) {
  static const int32_t ids_a[] = {3, 0, 49, 17, 17, 5, 48, 1, 22, 9, 31};
  {
    op_case c = op_case_begin("gather");
    int64_t st[2] = {50, 33}, si[2] = {2, 7};
    vkf_value table = op_case_input(&c, "table", VKF_F32, 2, st, -5, 5);
    vkf_value ids = op_case_input_i32(&c, "ids", 2, si, ids_a, 11);
    op_case_run(t, &c, vkf_gather(c.g, "op", table, ids), TOL_EXACT,
                "gather f32 [50,33] ids [2,7]");
  }
  {
    op_case c = op_case_begin("gather_f16");
    int64_t st[2] = {50, 20}, si[3] = {2, 3, 5};
    vkf_value table = op_case_input(&c, "table", VKF_F16, 2, st, -5, 5);
    vkf_value ids = op_case_input_i32(&c, "ids", 3, si, ids_a, 11);
    op_case_run(t, &c, vkf_gather(c.g, "op", table, ids), TOL_EXACT, "gather f16 ids [2,3,5]");
  }
  {
    op_case c = op_case_begin("gather_i32");
    int64_t st[2] = {50, 3}, si[1] = {11};
    static const int32_t rows[] = {7, -8, 2147483647, -2147483647 - 1, 0, 99, 1234567};
    vkf_value table = op_case_input_i32(&c, "table", 2, st, rows, 7);
    vkf_value ids = op_case_input_i32(&c, "ids", 1, si, ids_a, 11);
    op_case_run(t, &c, vkf_gather(c.g, "op", table, ids), TOL_EXACT, "gather i32 table");
  }
  {
    /* ids as a strided view: a transposed slice. */
    op_case c = op_case_begin("gather_strided");
    int64_t st[2] = {50, 9}, si[2] = {6, 8};
    vkf_value table = op_case_input(&c, "table", VKF_F32, 2, st, -5, 5);
    vkf_value ids = op_case_input_i32(&c, "ids", 2, si, ids_a, 11);
    uint32_t ax[2] = {1, 0};
    vkf_value view = vkf_permute(c.g, "idt", vkf_slice(c.g, "ids_s", ids, 1, 2, 7), ax);
    op_case_run(t, &c, vkf_gather(c.g, "op", table, view), TOL_EXACT, "gather with strided ids");
  }
  {
    /* Larger: a BERT-like lookup of 4 x 128 tokens in a [4096, 384] table. */
    op_case c = op_case_begin("gather_large");
    int64_t st[2] = {4096, 384}, si[2] = {4, 128};
    int32_t many[512];
    for (int i = 0; i < 512; i++) many[i] = (i * 2654435761u) % 4096;
    vkf_value table = op_case_input(&c, "table", VKF_F32, 2, st, -1, 1);
    vkf_value ids = op_case_input_i32(&c, "ids", 2, si, many, 512);
    op_case_run(t, &c, vkf_gather(c.g, "op", table, ids), TOL_EXACT, "gather [4096,384] x [4,128]");
  }
  {
    /* Out-of-range ids: the interpreter rejects them; the device must neither crash nor read out
     * of bounds (the validation layer would not see that, so rows are checked: zeros). */
    op_case c = op_case_begin("gather_oob");
    int64_t st[2] = {10, 4}, si[1] = {6};
    static const int32_t bad[] = {-1, 3, 10, 2147483647, -2147483647 - 1, 9};
    vkf_value table = op_case_input(&c, "table", VKF_F32, 2, st, 1, 2);
    vkf_value ids = op_case_input_i32(&c, "ids", 1, si, bad, 6);
    vkf_graph_output(c.g, vkf_gather(c.g, "op", table, ids), NULL);
    float *out = NULL;
    size_t count = 0;
    CHECK_OK(op_run_device(t, c.g, c.in, c.n, 0, &out, &count));
    const float *tv = c.data[0];
    CHECK(count == 24);
    for (size_t k = 0; out && k < 6; k++)
      for (size_t j = 0; j < 4; j++) {
        float want = (bad[k] >= 0 && bad[k] < 10) ? tv[bad[k] * 4 + j] : 0.0f;
        CHECK_MSG(out[k * 4 + j] == want, "id %d col %zu: %g, want %g", bad[k], j, out[k * 4 + j],
                  want);
      }
    free(out);
    for (size_t i = 0; i < c.n; i++) free(c.data[i]);
    vkf_graph_destroy(c.g);
  }
}

/* As op_check, but lowered with `caps` instead of the device's own: lavapipe reports a CPU, whose
 * chooser takes im2col + GEMM, so the GPU-shaped tiled kernel is reached by lowering for a GPU
 * (the kernels still run on the real device and must fit its limits). */
static void check_with_caps(gpu_test *t, vkf_graph *g, const vkf_input_binding *in, size_t n,
                            const vkf_device_caps *caps, op_tol tol, const char *label) {
  vkf_value out = vkf_graph_output_at(g, 0);
  size_t count = (size_t)vkf_tensor_element_count(vkf_graph_tensor(g, out));
  size_t size = vkf_tensor_size(vkf_graph_tensor(g, out));
  vkf_dtype dtype = vkf_graph_tensor(g, out)->dtype;
  float *ref = malloc(count * sizeof(float) + 16), *gpu = malloc(count * sizeof(float) + 16);
  void *raw = malloc(size + 16);
  vkf_lowered low = {0};
  vkf_session *s = NULL;
  vkf_status st = vkf_memory_plan_build(g, NULL);
  if (!st) st = vkf_lower_graph(g, caps, NULL, &low);
  if (!st) st = vkf_session_create(t->device, low.plan, NULL, &s);
  for (uint32_t id = 1; !st && id < low.tensor_bound; id++) {
    const vkf_tensor *x = vkf_graph_tensor(g, (vkf_value){id});
    if (!x->removed && x->role == VKF_ROLE_CONSTANT && x->data && x->base.id == id)
      st = vkf_session_write(s, low.tensors[id].buffer, 0, x->data, vkf_tensor_size(x));
  }
  for (size_t i = 0; i < n && !st; i++)
    st = vkf_session_write(s, low.tensors[in[i].value.id].buffer, 0, in[i].data, in[i].size);
  if (!st) st = vkf_session_run(s);
  if (!st) st = vkf_session_read(s, low.tensors[out.id].buffer, 0, raw, size);
  CHECK_MSG(st == VKF_OK, "%s: device run failed: %s", label, vkf_status_message(st));
  vkf_status_free(st);
  vkf_interp *it = NULL;
  st = vkf_interp_create(g, &it);
  for (size_t i = 0; i < n && !st; i++)
    st = vkf_interp_set(it, in[i].value, in[i].data, in[i].size);
  if (!st) st = vkf_interp_run(it);
  if (!st) st = vkf_interp_get_f32(it, out, ref, count);
  CHECK_MSG(st == VKF_OK, "%s: interpreter failed: %s", label, vkf_status_message(st));
  vkf_status_free(st);
  int bad = 0;
  for (size_t i = 0; i < count; i++) {
    gpu[i] = op_load(raw, dtype, i);
    bad += !(fabs((double)gpu[i] - ref[i]) <= tol.atol + tol.rtol * fabs(ref[i]));
  }
  CHECK_MSG(bad == 0, "%s: %d of %zu elements out of tolerance", label, bad, count);
  vkf_interp_destroy(it);
  vkf_session_destroy(s);
  vkf_lowered_free(&low);
  free(ref), free(gpu), free(raw);
}

typedef struct patch_shape {
  int64_t b, ch, h, w, e, p, q;
} patch_shape;

static void patch_case(gpu_test *t, const char *label, patch_shape s, vkf_dtype dt, int bias,
                       int ints, int nhwc, op_tol tol) {
  op_case c = op_case_begin("patch");
  int64_t si[4] = {s.b, s.ch, s.h, s.w}, sn[4] = {s.b, s.h, s.w, s.ch};
  int64_t sw[4] = {s.e, s.ch, s.p, s.q}, sb[1] = {s.e};
  vkf_value img;
  if (nhwc) { /* a channels-last image permuted to [B, C, H, W]: a strided view */
    uint32_t ax[4] = {0, 3, 1, 2};
    img = vkf_permute(c.g, "nchw", op_case_input_ex(&c, "img", dt, 4, sn, -3, 3, ints), ax);
  } else {
    img = op_case_input_ex(&c, "img", dt, 4, si, ints ? -3 : -1, ints ? 3 : 1, ints);
  }
  vkf_value w = op_case_input_ex(&c, "w", dt, 4, sw, ints ? -2 : -0.1f, ints ? 2 : 0.1f, ints);
  vkf_value b = bias ? op_case_input_ex(&c, "bias", dt, 1, sb, -5, 5, ints) : VKF_NO_VALUE;
  vkf_value y = vkf_patch_embed(c.g, "op", img, w, b);
  if (dt == VKF_F16 && !vkf_device_caps_get(t->device)->storage_16bit) {
    op_case_run(t, &c, y, tol, label); /* expects a clean UNSUPPORTED */
    return;
  }
  vkf_graph_output(c.g, y, NULL);
  CHECK_OK(vkf_graph_status(c.g));
  /* Both variants: the device's choice (im2col + GEMM on a CPU device, else the tiled kernel)
   * and, lowered as for a discrete GPU, the tiled kernel. */
  op_check(t, c.g, c.in, c.n, tol, label);
  vkf_device_caps gpu_caps = *vkf_device_caps_get(t->device);
  if (gpu_caps.kind == VKF_DEVICE_KIND_CPU) {
    gpu_caps.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
    char tiled[160];
    snprintf(tiled, sizeof tiled, "%s (tiled)", label);
    check_with_caps(t, c.g, c.in, c.n, &gpu_caps, tol, tiled);
  }
  for (size_t i = 0; i < c.n; i++) free(c.data[i]);
  vkf_graph_destroy(c.g);
}

static void patch_embeds(gpu_test *t) {
  /* Tiling checks with exact integers: sizes off every tile multiple (M = 2*16 = 32 rows, E = 70,
   * K = 3*4*4 = 48), a K that is not a multiple of BK (C*P*Q = 2*3*5 = 30), M > 64. */
  patch_case(t, "patch exact [2,3,16,16] P4 E70 +bias", (patch_shape){2, 3, 16, 16, 70, 4, 4},
             VKF_F32, 1, 1, 0, TOL_EXACT);
  patch_case(t, "patch exact [3,2,12,25] P3xQ5 E9", (patch_shape){3, 2, 12, 25, 9, 3, 5}, VKF_F32,
             0, 1, 0, TOL_EXACT);
  patch_case(t, "patch exact [1,3,40,36] P4 E130 nhwc", (patch_shape){1, 3, 40, 36, 130, 4, 4},
             VKF_F32, 1, 1, 1, TOL_EXACT);
  patch_case(t, "patch one patch one channel", (patch_shape){1, 1, 2, 2, 1, 2, 2}, VKF_F32, 1, 1, 0,
             TOL_EXACT);
  patch_case(t, "patch f16 [2,3,32,32] P8 E48", (patch_shape){2, 3, 32, 32, 48, 8, 8}, VKF_F16, 1,
             0, 0, TOL_PATCH_F16);
  /* ViT-B/16 at 224: [1, 3, 224, 224] x [768, 3, 16, 16] -> [1, 196, 768]. */
  patch_case(t, "patch ViT-B/16 224", (patch_shape){1, 3, 224, 224, 768, 16, 16}, VKF_F32, 1, 0, 0,
             TOL_PATCH);
}

static vkf_value pool_input(op_case *c, vkf_dtype dt, int64_t b, int64_t n, int64_t d) {
  int64_t s[3] = {b, n, d};
  return op_case_input(c, "x", dt, 3, s, -1, 1);
}

static void mean_pools(gpu_test *t) {
  {
    /* Right padding of different lengths, a mask weight of 2, and a fully padded row (zeros). */
    op_case c = op_case_begin("pool");
    vkf_value x = pool_input(&c, VKF_F32, 3, 9, 37);
    int64_t sm[2] = {3, 9};
    static const int32_t m[27] = {1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 1, 1,
                                  1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    vkf_value mask = op_case_input_i32(&c, "mask", 2, sm, m, 27);
    op_case_run(t, &c, vkf_mean_pool(c.g, "op", x, mask), TOL_POOL, "mean_pool masked");
  }
  {
    op_case c = op_case_begin("pool_nomask");
    vkf_value x = pool_input(&c, VKF_F32, 2, 13, 5);
    op_case_run(t, &c, vkf_mean_pool(c.g, "op", x, VKF_NO_VALUE), TOL_POOL, "mean_pool no mask");
  }
  {
    op_case c = op_case_begin("pool_one");
    vkf_value x = pool_input(&c, VKF_F32, 1, 1, 1);
    op_case_run(t, &c, vkf_mean_pool(c.g, "op", x, VKF_NO_VALUE), TOL_POOL, "mean_pool 1x1x1");
  }
  {
    /* Strided input: [N, B, D] permuted to [B, N, D]; the mask a slice of a wider one. */
    op_case c = op_case_begin("pool_strided");
    int64_t s[3] = {11, 2, 19}, sm[2] = {2, 15};
    vkf_value x = op_case_input(&c, "x", VKF_F32, 3, s, -1, 1);
    static const int32_t m[] = {1, 1, 0, 1, 1, 1, 1};
    vkf_value mask = op_case_input_i32(&c, "mask", 2, sm, m, 7);
    uint32_t ax[3] = {1, 0, 2};
    op_case_run(t, &c,
                vkf_mean_pool(c.g, "op", vkf_permute(c.g, "xp", x, ax),
                              vkf_slice(c.g, "ms", mask, 1, 3, 14)),
                TOL_POOL, "mean_pool strided x and mask");
  }
  {
    op_case c = op_case_begin("pool_f16");
    vkf_value x = pool_input(&c, VKF_F16, 2, 17, 40);
    int64_t sm[2] = {2, 17};
    static const int32_t m[] = {1, 1, 1, 0};
    vkf_value mask = op_case_input_i32(&c, "mask", 2, sm, m, 4);
    op_case_run(t, &c, vkf_mean_pool(c.g, "op", x, mask), TOL_POOL_F16, "mean_pool f16");
  }
  {
    op_case c = op_case_begin("pool_large");
    vkf_value x = pool_input(&c, VKF_F32, 4, 256, 768);
    int64_t sm[2] = {4, 256};
    int32_t m[1024];
    for (int i = 0; i < 1024; i++) m[i] = (i % 256) < 40 + 50 * (i / 256); /* lengths 40..190 */
    vkf_value mask = op_case_input_i32(&c, "mask", 2, sm, m, 1024);
    op_case_run(t, &c, vkf_mean_pool(c.g, "op", x, mask), TOL_POOL, "mean_pool [4,256,768]");
  }
}

int main(void) {
  gpu_test t = gpu_test_start();
  gathers(&t);
  patch_embeds(&t);
  mean_pools(&t);
  return gpu_test_finish(&t);
}
