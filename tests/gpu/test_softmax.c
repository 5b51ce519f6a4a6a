/* Masked softmax on the device vs the CPU interpreter (one-node graphs through the whole path):
 * row lengths 1..32768 (few long rows: split over several workgroups on lavapipe), many rows,
 * scale, causal (square, R < N, R > N), valid lengths per batch and per row (0, negative, > N),
 * additive biases of every broadcast kind, f16 storage with logits of ±1e4, strided input;
 * masked positions are exactly 0 and never NaN. */
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/passes/memory_plan.h"
#include "tests/gpu/op_check_caps.h"

/* Tolerance table: |gpu - ref| <= atol + rtol * |ref|. The reference is fp64; the kernel keeps
 * fp32 state (scores, max, sum) and rounds the probability once on store for f16 (2^-10
 * relative, and 2^-24 absolute in the f16 subnormal range). */
static const op_tol TOL_F32 = {.atol = 1e-7, .rtol = 1e-4};
static const op_tol TOL_F16 = {.atol = 1e-6, .rtol = 1.5e-3};

enum { VL_NONE = 0, VL_BATCH, VL_ROW };
enum { FILL_UNIFORM = 0, FILL_BIG };

typedef struct softmax_case {
  const char *label;
  vkf_dtype dtype;
  uint32_t rank;
  int64_t shape[4]; /* x as the node sees it */
  float scale;      /* 0: 1 */
  int causal;
  int vl_kind;
  const int32_t *vl; /* NULL with a vl_kind: a pattern covering 0, negatives and > N */
  uint32_t bias_rank;
  int64_t bias_shape[4];
  vkf_dtype bias_dtype;
  int fill;     /* FILL_BIG: multiples of 8 in [-1e4, 1e4] (exact in f16) */
  int permuted; /* x is a view with the last two axes swapped in memory */
} softmax_case;

static void *pack(const float *v, size_t n, vkf_dtype dtype, size_t *out_size) {
  *out_size = n * vkf_dtype_size(dtype);
  void *p = malloc(*out_size + 16);
  if (dtype == VKF_F16)
    op_to_half(v, p, n);
  else
    memcpy(p, v, n * sizeof(float));
  return p;
}

static int64_t product(uint32_t rank, const int64_t *shape) {
  int64_t n = 1;
  for (uint32_t k = 0; k < rank; k++) n *= shape[k];
  return n;
}

/* Every element the masks exclude must be exactly 0 (the reference comparison alone allows
 * atol): recomputes the masks from the case and reads the device output directly. */
static void check_exact_zeros(gpu_test *t, vkf_graph *g, const vkf_input_binding *in,
                              size_t in_count, const vkf_device_caps *caps, const softmax_case *c,
                              const int32_t *vl) {
  float *y = NULL;
  size_t count = (size_t)product(c->rank, c->shape);
  vkf_status st = op_run_device_caps(t, g, in, in_count, caps, &y);
  CHECK_MSG(st == VKF_OK, "%s: %s", c->label, vkf_status_message(st));
  vkf_status_free(st);
  if (!y) return;
  int64_t n = c->shape[c->rank - 1], r_dim = c->shape[c->rank - 2];
  int64_t rows = (int64_t)count / n, per_batch = rows / c->shape[0];
  int wrong = 0;
  for (int64_t r = 0; r < rows; r++) {
    int64_t i = r % r_dim, b = r / per_batch, lim = n;
    if (c->vl_kind == VL_BATCH && vl[b] < lim) lim = vl[b];
    if (c->vl_kind == VL_ROW && vl[b * r_dim + i] < lim) lim = vl[b * r_dim + i];
    if (c->causal && i + (n - r_dim) + 1 < lim) lim = i + (n - r_dim) + 1;
    for (int64_t j = 0; j < n; j++) {
      float v = y[r * n + j];
      wrong += isnan(v) || (j >= lim && v != 0.0f);
    }
  }
  CHECK_MSG(wrong == 0, "%s: %d masked elements not exactly 0 (or NaN)", c->label, wrong);
  free(y);
}

/* caps NULL: the device's own caps (op_check); otherwise lowered with `caps`. */
static void run_case(gpu_test *t, const softmax_case *c, const vkf_device_caps *caps) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create(c->label, &g));
  int64_t count = product(c->rank, c->shape), n = c->shape[c->rank - 1];
  int64_t in_shape[4];
  memcpy(in_shape, c->shape, sizeof in_shape);
  uint32_t axes[4] = {0, 1, 2, 3};
  if (c->permuted) {
    in_shape[c->rank - 1] = c->shape[c->rank - 2];
    in_shape[c->rank - 2] = c->shape[c->rank - 1];
    axes[c->rank - 1] = c->rank - 2;
    axes[c->rank - 2] = c->rank - 1;
  }
  vkf_value x_in = vkf_graph_input(g, "x", c->dtype, c->rank, in_shape);
  vkf_value x = c->permuted ? vkf_permute(g, "xt", x_in, axes) : x_in;
  float *xv = malloc((size_t)count * sizeof(float));
  if (c->fill == FILL_BIG) {
    op_fill_ints(xv, (size_t)count, 31u + (uint32_t)count, -1250, 1250);
    for (int64_t k = 0; k < count; k++) xv[k] *= 8.0f;
  } else {
    op_fill_uniform(xv, (size_t)count, 29u + (uint32_t)count, -4.0f, 4.0f);
  }
  size_t x_size, b_size = 0;
  void *xd = pack(xv, (size_t)count, c->dtype, &x_size);
  vkf_input_binding in[3] = {{.value = x_in, .data = xd, .size = x_size}};
  size_t in_count = 1;

  vkf_softmax_options o = {.scale = c->scale, .causal = c->causal};
  int32_t *vl = NULL;
  if (c->vl_kind) {
    int64_t vl_shape[2] = {c->shape[0], c->shape[c->rank - 2]};
    uint32_t vl_rank = c->vl_kind == VL_BATCH ? 1 : 2;
    int64_t vl_count = product(vl_rank, vl_shape);
    vl = malloc((size_t)vl_count * sizeof(int32_t));
    for (int64_t k = 0; k < vl_count; k++)
      vl[k] = c->vl ? c->vl[k] : (int32_t)((k * 7 + 3) % (n + 3)) - 1; /* -1 .. n+1 */
    o.valid_lens = vkf_graph_input(g, "valid_lens", VKF_I32, vl_rank, vl_shape);
    in[in_count++] = (vkf_input_binding){
        .value = o.valid_lens, .data = vl, .size = (size_t)vl_count * sizeof(int32_t)};
  }
  float *bv = NULL;
  void *bd = NULL;
  if (c->bias_rank) {
    int64_t bias_count = product(c->bias_rank, c->bias_shape);
    bv = malloc((size_t)bias_count * sizeof(float));
    op_fill_uniform(bv, (size_t)bias_count, 3, -2.0f, 2.0f);
    bd = pack(bv, (size_t)bias_count, c->bias_dtype, &b_size);
    o.bias = vkf_graph_input(g, "bias", c->bias_dtype, c->bias_rank, c->bias_shape);
    in[in_count++] = (vkf_input_binding){.value = o.bias, .data = bd, .size = b_size};
  }
  vkf_value y = vkf_softmax(g, "softmax", x, &o);
  vkf_graph_output(g, y, "y");
  op_tol tol = c->dtype == VKF_F16 ? TOL_F16 : TOL_F32;
  if (caps)
    op_check_caps(t, g, in, in_count, caps, tol, c->label);
  else
    op_check(t, g, in, in_count, tol, c->label);
  if (c->vl_kind || c->causal)
    check_exact_zeros(t, g, in, in_count, caps ? caps : vkf_device_caps_get(t->device), c, vl);
  vkf_graph_destroy(g);
  free(xv), free(xd), free(vl), free(bv), free(bd);
}

/* A status naming the node for what the device cannot take. */
static void check_errors(gpu_test *t) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("errors_f16", &g));
  int64_t shape[2] = {2, 8};
  vkf_value x = vkf_graph_input(g, "x", VKF_F16, 2, shape);
  vkf_graph_output(g, vkf_softmax(g, "softmax_half", x, NULL), "y");
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  vkf_device_caps caps = *vkf_device_caps_get(t->device);
  caps.storage_16bit = 0;
  vkf_lowered low;
  CHECK_STATUS(vkf_lower_graph(g, &caps, NULL, &low), VKF_STATUS_UNSUPPORTED, "softmax_half");
  vkf_graph_destroy(g);
}

int main(void) {
  gpu_test t = gpu_test_start();
  /* The D2L masked_softmax example: X [2, 2, 4], valid_lens [2, 3] and [[1, 3], [2, 4]]. */
  static const int32_t d2l_batch[] = {2, 3}, d2l_row[] = {1, 3, 2, 4};
  /* Long rows cut past N, mid-row (inside a split chunk), and at 0. */
  static const int32_t long_vl[] = {40000, 20001, 0};
  const vkf_dtype F32 = VKF_F32, F16 = VKF_F16;
  /* clang-format off */
  const softmax_case cases[] = {
      /* label, dtype, rank, shape, scale, causal, vl_kind, vl, bias_rank, bias_shape,
         bias_dtype, fill, permuted */
      {"d2l_per_batch", F32, 3, {2,2,4}, 0, 0, VL_BATCH, d2l_batch, 0, {0}, F32, 0, 0},
      {"d2l_per_row", F32, 3, {2,2,4}, 0, 0, VL_ROW, d2l_row, 0, {0}, F32, 0, 0},
      {"n1", F32, 2, {5,1}, 0, 0, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"n3_scaled", F32, 2, {4,3}, 0.5f, 0, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"n31", F32, 3, {2,3,31}, 0, 0, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"n197_many_rows", F32, 4, {2,12,197,197}, 0.125f, 0, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"n769", F32, 2, {7,769}, 0, 0, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"rank1_33", F32, 1, {33}, 0, 0, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"long_4100_causal", F32, 3, {1,3,4100}, 0, 1, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"long_32768", F32, 2, {2,32768}, 0, 0, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"long_32768_f16_vl", F16, 2, {3,32768}, 0, 0, VL_BATCH, long_vl, 0, {0}, F32, 0, 0},
      {"rows20_n5000_bias", F32, 3, {20,1,5000}, 0.3f, 0, VL_NONE, NULL, 3, {20,1,5000}, F32, 0, 0},
      {"causal_square", F32, 4, {2,3,6,6}, 0, 1, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"causal_r_lt_n", F32, 4, {1,2,4,9}, 0, 1, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"causal_r_gt_n", F32, 3, {2,6,4}, 0, 1, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"vl_batch_edges", F32, 4, {6,2,3,5}, 0, 0, VL_BATCH, NULL, 0, {0}, F32, 0, 0},
      {"vl_row_edges", F32, 3, {4,5,7}, 0, 0, VL_ROW, NULL, 0, {0}, F32, 0, 0},
      {"bias_heads", F32, 4, {2,3,5,7}, 0, 0, VL_NONE, NULL, 4, {1,3,5,7}, F32, 0, 0},
      {"bias_keys", F32, 4, {2,3,5,7}, 0, 0, VL_NONE, NULL, 4, {2,1,1,7}, F32, 0, 0},
      {"vl_row_vec4", F32, 3, {3,6,12}, 0, 0, VL_ROW, NULL, 0, {0}, F32, 0, 0},
      {"bias_keys_vec4", F32, 4, {2,3,5,8}, 0, 1, VL_NONE, NULL, 4, {2,1,1,8}, F32, 0, 0},
      {"bias_rank1", F32, 3, {2,4,31}, 0, 0, VL_NONE, NULL, 1, {31}, F32, 0, 0},
      {"bias_f16_x_f32", F32, 4, {2,2,8,40}, 0.25f, 0, VL_NONE, NULL, 4, {1,2,8,40}, F16, 0, 0},
      {"all_masks", F32, 4, {3,2,5,11}, 0.7f, 1, VL_ROW, NULL, 4, {3,1,5,11}, F32, 0, 0},
      {"f16", F16, 4, {2,4,50,197}, 0, 0, VL_NONE, NULL, 0, {0}, F32, 0, 0},
      {"f16_bias_causal", F16, 4, {1,2,16,16}, 0, 1, VL_NONE, NULL, 4, {1,2,16,16}, F16, 0, 0},
      {"f16_x_f32_bias", F16, 4, {2,3,7,33}, 0.5f, 1, VL_NONE, NULL, 4, {2,1,7,33}, F32, 0, 0},
      {"f16_big_logits", F16, 3, {2,16,300}, 0, 0, VL_NONE, NULL, 0, {0}, F32, FILL_BIG, 0},
      {"f16_big_logits_vl", F16, 3, {3,4,64}, 0, 0, VL_ROW, NULL, 0, {0}, F32, FILL_BIG, 0},
      {"f32_big_logits", F32, 2, {8,1000}, 0.125f, 0, VL_NONE, NULL, 0, {0}, F32, FILL_BIG, 0},
      {"many_short_rows", F32, 3, {2,33000,5}, 0, 1, VL_ROW, NULL, 0, {0}, F32, 0, 0},
      {"permuted_f16_bias", F16, 4, {2,3,6,10}, 0.5f, 0, VL_ROW, NULL, 4, {1,3,6,10}, F16, 0, 1},
      {"bias_col_broadcast", F32, 4, {2,3,5,8}, 0, 0, VL_NONE, NULL, 4, {2,3,5,1}, F32, 0, 0},
      {"permuted", F32, 3, {2,5,9}, 0, 1, VL_BATCH, NULL, 0, {0}, F32, 0, 1},
  };
  /* clang-format on */

  /* Once with the device's caps (lavapipe: one subgroup per row, splits for fewer than 16 long
   * rows), once as a discrete GPU would lower them (up to 256 invocations: multi-subgroup or,
   * under the mobile profile, 128-wide shared-memory reductions; splits for fewer than 512). */
  vkf_device_caps gpu_like = op_caps_gpu_like(&t);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&t, &cases[i], NULL);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&t, &cases[i], &gpu_like);
  check_errors(&t);
  return gpu_test_finish(&t);
}
