/* CPU reference interpreter against hand-computed values: elementwise, matmul + epilogue, the
 * D2L masked_softmax examples, attention masks, multi-head reshape/permute semantics, norms,
 * embeddings, patch embedding, pooling, f16 storage. */
#include <math.h>
#include <stdint.h>

#include "graph/base/half.h"
#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static vkf_graph *new_graph(void) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("test", &g));
  return g;
}

/* Runs the graph with inputs bound, reads `out` as fp32 into dst (count elements). */
static void eval(vkf_graph *g, const vkf_input_binding *in, size_t in_count, vkf_value out,
                 float *dst, size_t count) {
  CHECK_OK(vkf_graph_status(g));
  vkf_interp *it = NULL;
  CHECK_OK(vkf_interp_create(g, &it));
  for (size_t i = 0; i < in_count; i++)
    CHECK_OK(vkf_interp_set(it, in[i].value, in[i].data, in[i].size));
  CHECK_OK(vkf_interp_run(it));
  CHECK_OK(vkf_interp_get_f32(it, out, dst, count));
  vkf_interp_destroy(it);
}

static void check_all_near(const float *got, const float *want, size_t n, double tol) {
  for (size_t i = 0; i < n; i++)
    CHECK_MSG(fabs(got[i] - want[i]) <= tol, "[%zu] got %.7g want %.7g", i, got[i], want[i]);
}

static void test_elementwise(void) {
  vkf_graph *g = new_graph();
  static const float a[6] = {1, 2, 3, 4, 5, 6}; /* [2,3] */
  static const float b[3] = {10, 20, 30};       /* [3] broadcast over rows */
  vkf_value va = vkf_graph_constant(g, "a", VKF_F32, 2, SHAPE(2, 3), a);
  vkf_value vb = vkf_graph_constant(g, "b", VKF_F32, 1, SHAPE(3), b);
  vkf_value col = vkf_graph_constant(g, "col", VKF_F32, 2, SHAPE(2, 1), (const float[]){2, 4});
  vkf_value sum = vkf_add(g, "sum", va, vb);
  vkf_value diff = vkf_sub(g, "diff", vb, va);
  vkf_value prod = vkf_mul(g, "prod", va, col);
  vkf_value quot = vkf_div(g, "quot", va, col);
  vkf_value sc = vkf_scale(g, "sc", va, -0.5f);
  float y[6];
  eval(g, NULL, 0, sum, y, 6);
  check_all_near(y, (const float[]){11, 22, 33, 14, 25, 36}, 6, 0);
  eval(g, NULL, 0, diff, y, 6);
  check_all_near(y, (const float[]){9, 18, 27, 6, 15, 24}, 6, 0);
  eval(g, NULL, 0, prod, y, 6);
  check_all_near(y, (const float[]){2, 4, 6, 16, 20, 24}, 6, 0);
  eval(g, NULL, 0, quot, y, 6);
  check_all_near(y, (const float[]){0.5f, 1, 1.5f, 1, 1.25f, 1.5f}, 6, 0);
  eval(g, NULL, 0, sc, y, 6);
  check_all_near(y, (const float[]){-0.5f, -1, -1.5f, -2, -2.5f, -3}, 6, 0);
  vkf_graph_destroy(g);

  /* Activations at hand-computed points. */
  g = new_graph();
  static const float x[4] = {-1, 0, 1, 2};
  vkf_value vx = vkf_graph_constant(g, "x", VKF_F32, 1, SHAPE(4), x);
  vkf_value acts[6] = {vkf_gelu(g, "gelu", vx), vkf_gelu_tanh(g, "gelu_tanh", vx),
                       vkf_relu(g, "relu", vx), vkf_silu(g, "silu", vx),
                       vkf_exp(g, "exp", vx),   vkf_tanh(g, "tanh", vx)};
  static const float want[6][4] = {
      {-0.15865525f, 0, 0.84134475f, 1.95449974f}, /* x * Phi(x) */
      {-0.15880801f, 0, 0.84119199f, 1.95459769f}, {0, 0, 1, 2},
      {-0.26894142f, 0, 0.73105858f, 1.76159416f}, {0.36787944f, 1, 2.71828183f, 7.3890561f},
      {-0.76159416f, 0, 0.76159416f, 0.96402758f}};
  for (int i = 0; i < 6; i++) {
    eval(g, NULL, 0, acts[i], y, 4);
    check_all_near(y, want[i], 4, 1e-6);
  }
  vkf_graph_destroy(g);
}

static void test_matmul(void) {
  vkf_graph *g = new_graph();
  /* a [2,2,3] (batch 2) x w [3,2] broadcast over the batch. */
  vkf_value a = vkf_graph_input(g, "a", VKF_F32, 3, SHAPE(2, 2, 3));
  static const float w[6] = {1, 0, 0, 1, 1, 1};  /* [3,2] */
  static const float wt[6] = {1, 0, 1, 0, 1, 1}; /* the same as [2,3] for transpose_b */
  vkf_value vw = vkf_graph_constant(g, "w", VKF_F32, 2, SHAPE(3, 2), w);
  vkf_value vwt = vkf_graph_constant(g, "wt", VKF_F32, 2, SHAPE(2, 3), wt);
  vkf_value bias = vkf_graph_constant(g, "bias", VKF_F32, 1, SHAPE(2), (const float[]){-10, 1});
  vkf_value res = vkf_graph_input(g, "res", VKF_F32, 3, SHAPE(2, 2, 2));
  vkf_value y0 = vkf_matmul(g, "plain", a, vw, NULL);
  vkf_value y1 = vkf_matmul(g, "t", a, vwt, &(vkf_matmul_options){.transpose_b = 1});
  vkf_value y2 =
      vkf_matmul(g, "epi", a, vw,
                 &(vkf_matmul_options){.bias = bias, .activation = VKF_ACT_RELU, .residual = res});
  static const float av[12] = {1, 2, 3, 4, 5, 6, -1, -2, -3, 0, 1, 2};
  static const float rv[8] = {100, 200, 300, 400, 500, 600, 700, 800};
  vkf_input_binding in[2] = {{a, av, sizeof av}, {res, rv, sizeof rv}};
  /* rows: [1,2,3]->[4,5]; [4,5,6]->[10,11]; [-1,-2,-3]->[-4,-5]; [0,1,2]->[2,3] */
  static const float plain[8] = {4, 5, 10, 11, -4, -5, 2, 3};
  float y[8];
  eval(g, in, 2, y0, y, 8);
  check_all_near(y, plain, 8, 0);
  eval(g, in, 2, y1, y, 8);
  check_all_near(y, plain, 8, 0);
  eval(g, in, 2, y2, y, 8); /* relu(x + [-10, 1]) + res */
  check_all_near(y, (const float[]){100, 206, 300, 412, 500, 600, 700, 804}, 8, 0);
  vkf_graph_destroy(g);

  /* Batched x batched with transpose_b: D2L's bmm(Q, K^T) shape. */
  g = new_graph();
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 3, SHAPE(2, 3, 4));
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 3, SHAPE(2, 6, 4));
  vkf_value s = vkf_matmul(g, "scores", q, k, &(vkf_matmul_options){.transpose_b = 1});
  const vkf_tensor *ts = vkf_graph_tensor(g, s);
  CHECK(ts->rank == 3 && ts->shape[0] == 2 && ts->shape[1] == 3 && ts->shape[2] == 6);
  float ones_q[24], ones_k[48], sy[36];
  for (int i = 0; i < 24; i++) ones_q[i] = 1;
  for (int i = 0; i < 48; i++) ones_k[i] = 1;
  vkf_input_binding in2[2] = {{q, ones_q, sizeof ones_q}, {k, ones_k, sizeof ones_k}};
  eval(g, in2, 2, s, sy, 36);
  for (int i = 0; i < 36; i++) CHECK(sy[i] == 4);
  vkf_graph_destroy(g);
}

/* D2L's masked_softmax: X [2,2,4] with valid_lens [2,3] (per batch) and [[1,3],[2,4]]
 * (per row). Rows are chosen so the results are hand-computable. */
static void test_masked_softmax(void) {
  static const float x[16] = {1, 2, 3, 4, 0, 0, 0, 0,  /* batch 0 */
                              0, 0, 0, 0, 1, 2, 3, 4}; /* batch 1 */
  const double e1 = exp(1.0), e2 = exp(2.0), e3 = exp(3.0), e4 = exp(4.0);
  vkf_graph *g = new_graph();
  vkf_value vx = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(2, 2, 4));
  vkf_value vl1 = vkf_graph_constant(g, "vl1", VKF_I32, 1, SHAPE(2), (const int32_t[]){2, 3});
  vkf_value vl2 =
      vkf_graph_constant(g, "vl2", VKF_I32, 2, SHAPE(2, 2), (const int32_t[]){1, 3, 2, 4});
  vkf_value vl0 = vkf_graph_constant(g, "vl0", VKF_I32, 1, SHAPE(2), (const int32_t[]){0, 4});
  vkf_value p1 = vkf_softmax(g, "p1", vx, &(vkf_softmax_options){.valid_lens = vl1});
  vkf_value p2 = vkf_softmax(g, "p2", vx, &(vkf_softmax_options){.valid_lens = vl2});
  vkf_value p0 = vkf_softmax(g, "p0", vx, &(vkf_softmax_options){.valid_lens = vl0});
  vkf_value pc = vkf_softmax(g, "pc", vx, &(vkf_softmax_options){.causal = 1, .scale = 2});
  vkf_input_binding in = {vx, x, sizeof x};
  float y[16];
  eval(g, &in, 1, p1, y, 16);
  float w1[16] = {(float)(e1 / (e1 + e2)),
                  (float)(e2 / (e1 + e2)),
                  0,
                  0,
                  0.5f,
                  0.5f,
                  0,
                  0,
                  1 / 3.f,
                  1 / 3.f,
                  1 / 3.f,
                  0,
                  (float)(e1 / (e1 + e2 + e3)),
                  (float)(e2 / (e1 + e2 + e3)),
                  (float)(e3 / (e1 + e2 + e3)),
                  0};
  check_all_near(y, w1, 16, 1e-6);
  eval(g, &in, 1, p2, y, 16);
  double s4 = e1 + e2 + e3 + e4;
  float w2[16] = {
      1,    0,    0, 0, 1 / 3.f,          1 / 3.f,          1 / 3.f,          0,
      0.5f, 0.5f, 0, 0, (float)(e1 / s4), (float)(e2 / s4), (float)(e3 / s4), (float)(e4 / s4)};
  check_all_near(y, w2, 16, 1e-6);
  /* valid length 0: the whole row is masked -> zeros, not NaN (and not D2L's uniform 0.25). */
  eval(g, &in, 1, p0, y, 16);
  for (int i = 0; i < 8; i++) CHECK(y[i] == 0);
  check_all_near(y + 8, (const float[]){0.25f, 0.25f, 0.25f, 0.25f}, 4, 1e-7);
  /* causal, R=2, N=4: row 0 sees j <= 2, row 1 sees all; scale 2 doubles the logits. */
  eval(g, &in, 1, pc, y, 16);
  double c3 = exp(2.0) + exp(4.0) + exp(6.0);
  check_all_near(
      y, (const float[]){(float)(exp(2.0) / c3), (float)(exp(4.0) / c3), (float)(exp(6.0) / c3), 0},
      4, 1e-6);
  check_all_near(y + 8, (const float[]){1 / 3.f, 1 / 3.f, 1 / 3.f, 0}, 4, 1e-6);
  vkf_graph_destroy(g);

  /* Additive bias broadcast over rows: -inf-like bias masks, +ln2 doubles a weight. */
  g = new_graph();
  vkf_value z = vkf_graph_input(g, "z", VKF_F32, 2, SHAPE(1, 3));
  vkf_value bias = vkf_graph_constant(g, "bias", VKF_F32, 1, SHAPE(3),
                                      (const float[]){0, (float)log(2.0), -1e30f});
  vkf_value pb = vkf_softmax(g, "pb", z, &(vkf_softmax_options){.bias = bias});
  vkf_input_binding inz = {z, (const float[]){0, 0, 0}, 3 * sizeof(float)};
  eval(g, &inz, 1, pb, y, 3);
  check_all_near(y, (const float[]){1 / 3.f, 2 / 3.f, 0}, 3, 1e-6);
  vkf_graph_destroy(g);
}

/* q = 0 makes every allowed key equally likely, so the output is the mean of the allowed values
 * (v_j = j): masks can be checked by hand. */
static void attention_mean_case(int causal, int windowed, int32_t wl, int32_t wr, int kv0,
                                const float *want /* [2 batches][Nq=3] */) {
  vkf_graph *g = new_graph();
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(2, 1, 3, 2));
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(2, 1, 5, 2));
  vkf_value v = vkf_graph_input(g, "v", VKF_F32, 4, SHAPE(2, 1, 5, 1));
  vkf_value kvl = vkf_graph_constant(g, "kv_len", VKF_I32, 1, SHAPE(2), (const int32_t[]){kv0, 5});
  vkf_value o = vkf_attention(g, "attn", q, k, v,
                              &(vkf_attention_options){.kv_len = kvl,
                                                       .causal = causal,
                                                       .windowed = windowed,
                                                       .window_left = wl,
                                                       .window_right = wr});
  float qv[12] = {0}, kv[20], vv[10];
  for (int i = 0; i < 20; i++) kv[i] = (float)(i * 7 % 5) - 2;
  for (int i = 0; i < 10; i++) vv[i] = (float)(i % 5);
  vkf_input_binding in[3] = {{q, qv, sizeof qv}, {k, kv, sizeof kv}, {v, vv, sizeof vv}};
  float y[6];
  eval(g, in, 3, o, y, 6);
  check_all_near(y, want, 6, 1e-6);
  vkf_graph_destroy(g);
}

static void test_attention_masks(void) {
  /* Nq=3, Nk=5: aligned diagonal for query i is i+2. */
  attention_mean_case(0, 0, 0, 0, 3, (const float[]){1, 1, 1, 2, 2, 2});
  /* causal: query i sees keys 0..i+2 -> means 1, 1.5, 2 (batch 1); batch 0 also kv_len 3. */
  attention_mean_case(1, 0, 0, 0, 3, (const float[]){1, 1, 1, 1, 1.5f, 2});
  /* sliding window left 1 (causal): keys i+1..i+2 -> 1.5, 2.5, 3.5 (kv_len 4 clips batch 0) */
  attention_mean_case(1, 1, 1, 0, 4, (const float[]){1.5f, 2.5f, 3, 1.5f, 2.5f, 3.5f});
  /* window both sides 0: only the diagonal key; kv_len 0 -> fully masked rows give zeros. */
  attention_mean_case(0, 1, 0, 0, 0, (const float[]){0, 0, 0, 2, 3, 4});

  /* Non-uniform weights: q=1, k=[0, ln 3], scale 1 -> weights 1/4, 3/4; v=[0,4] -> 3. */
  vkf_graph *g = new_graph();
  vkf_value q = vkf_graph_constant(g, "q", VKF_F32, 3, SHAPE(1, 1, 1), (const float[]){1});
  vkf_value k =
      vkf_graph_constant(g, "k", VKF_F32, 3, SHAPE(1, 2, 1), (const float[]){0, (float)log(3.0)});
  vkf_value v = vkf_graph_constant(g, "v", VKF_F32, 3, SHAPE(1, 2, 1), (const float[]){0, 4});
  vkf_value bias =
      vkf_graph_constant(g, "bias", VKF_F32, 2, SHAPE(1, 2), (const float[]){(float)log(3.0), 0});
  vkf_value o = vkf_attention(g, "attn", q, k, v, &(vkf_attention_options){.scale = 1});
  vkf_value ob =
      vkf_attention(g, "attn_bias", q, k, v, &(vkf_attention_options){.scale = 1, .bias = bias});
  float y[1];
  eval(g, NULL, 0, o, y, 1);
  CHECK_NEAR(y[0], 3.0, 1e-6);
  eval(g, NULL, 0, ob, y, 1); /* bias ln3 on key 0 evens the weights -> 2 */
  CHECK_NEAR(y[0], 2.0, 1e-6);
  vkf_graph_destroy(g);
}

/* Fused attention reads q/k/v as permute views of a [B, N, 3, H, D] QKV tensor; compare with the
 * same attention on contiguous copies, and GQA (Hkv=1) against repeated heads. */
static void test_attention_strided(void) {
  enum { B = 2, N = 3, H = 2, D = 4 };
  vkf_graph *g = new_graph();
  vkf_value qkv = vkf_graph_input(g, "qkv", VKF_F32, 4, SHAPE(B, N, 3 * H, D));
  vkf_value r = vkf_reshape(g, "qkv5", qkv, 4, SHAPE(B * N, 3, H, D)); /* no copy */
  CHECK(vkf_tensor_is_view(vkf_graph_tensor(g, r), r));
  vkf_value views[3], copies[3];
  for (int i = 0; i < 3; i++) {
    vkf_value s = vkf_slice(g, NULL, qkv, 2, i * H, (i + 1) * H);       /* [B, N, H, D] */
    views[i] = vkf_permute(g, NULL, s, (const uint32_t[]){0, 2, 1, 3}); /* [B, H, N, D] */
    CHECK(!vkf_tensor_is_contiguous(vkf_graph_tensor(g, views[i])));
    copies[i] = vkf_copy(g, NULL, views[i]);
  }
  vkf_value o1 = vkf_attention(g, "strided", views[0], views[1], views[2], NULL);
  vkf_value o2 = vkf_attention(g, "contiguous", copies[0], copies[1], copies[2], NULL);
  float x[B * N * 3 * H * D], y1[B * H * N * D], y2[B * H * N * D];
  for (size_t i = 0; i < NELEM(x); i++) x[i] = (float)sin(0.37 * (double)i);
  vkf_input_binding in = {qkv, x, sizeof x};
  eval(g, &in, 1, o1, y1, NELEM(y1));
  eval(g, &in, 1, o2, y2, NELEM(y2));
  check_all_near(y1, y2, NELEM(y1), 0);
  /* Spot-check one element of the permuted view: q[b=1,h=1,n=2,d=3] = x[1,2,0*H+1,3]. */
  float qv[B * H * N * D];
  vkf_interp *it;
  CHECK_OK(vkf_interp_create(g, &it));
  CHECK_OK(vkf_interp_set(it, qkv, x, sizeof x));
  CHECK_OK(vkf_interp_run(it));
  CHECK_OK(vkf_interp_get_f32(it, views[0], qv, NELEM(qv)));
  CHECK(qv[((1 * H + 1) * N + 2) * D + 3] == x[((1 * N + 2) * 3 * H + 1) * D + 3]);
  vkf_interp_destroy(it);
  vkf_graph_destroy(g);

  /* GQA: one K/V head shared by two query heads equals repeating it. */
  g = new_graph();
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 2, 2, 2));
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(1, 1, 3, 2));
  vkf_value k2 = vkf_concat(g, "k2", (const vkf_value[]){k, k}, 2, 1);
  vkf_value og = vkf_attention(g, "gqa", q, k, k, NULL);
  vkf_value orep = vkf_attention(g, "rep", q, k2, k2, NULL);
  float qd[8], kd[6], ya[8], yb[8];
  for (int i = 0; i < 8; i++) qd[i] = (float)i * 0.25f - 1;
  for (int i = 0; i < 6; i++) kd[i] = (float)(i % 4) * 0.5f;
  vkf_input_binding in2[2] = {{q, qd, sizeof qd}, {k, kd, sizeof kd}};
  eval(g, in2, 2, og, ya, 8);
  eval(g, in2, 2, orep, yb, 8);
  check_all_near(ya, yb, 8, 0);
  vkf_graph_destroy(g);
}

/* D2L MultiHeadAttention.transpose_qkv / transpose_output on X [2,4,100] with 5 heads. */
static void test_multihead_layout(void) {
  enum { B = 2, N = 4, HID = 100, H = 5, DH = 20 };
  vkf_graph *g = new_graph();
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(B, N, HID));
  vkf_value t = vkf_reshape(g, "split_heads", x, 4, SHAPE(B, N, H, -1));
  t = vkf_permute(g, "heads_first", t, (const uint32_t[]){0, 2, 1, 3});
  vkf_value qkv = vkf_reshape(g, "merge_batch", t, 3, SHAPE(-1, N, DH)); /* copies: strided */
  vkf_value o = vkf_reshape(g, "unmerge", qkv, 4, SHAPE(-1, H, N, DH));
  o = vkf_permute(g, "tokens_first", o, (const uint32_t[]){0, 2, 1, 3});
  o = vkf_reshape(g, "concat_heads", o, 3, SHAPE(B, N, -1));
  const vkf_tensor *tq = vkf_graph_tensor(g, qkv);
  CHECK(tq->shape[0] == B * H && tq->shape[1] == N && tq->shape[2] == DH);
  static float xv[B * N * HID], yq[B * H * N * DH], yo[B * N * HID];
  for (int i = 0; i < B * N * HID; i++) xv[i] = (float)i;
  vkf_input_binding in = {x, xv, sizeof xv};
  eval(g, &in, 1, qkv, yq, NELEM(yq));
  int bad = 0;
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++)
      for (int n = 0; n < N; n++)
        for (int d = 0; d < DH; d++)
          bad += yq[((b * H + h) * N + n) * DH + d] != xv[(b * N + n) * HID + h * DH + d];
  CHECK(bad == 0);
  eval(g, &in, 1, o, yo, NELEM(yo));
  check_all_near(yo, xv, NELEM(xv), 0); /* transpose_output inverts transpose_qkv */
  vkf_graph_destroy(g);

  /* D2L's multi-head attention with valid_lens [3,2] repeated per head equals the fused
   * [B,H,N,D] attention with kv_len [3,2]. */
  enum { NQ = 4, NK = 6, HD = 2, HEADS = 2 };
  g = new_graph();
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 3, SHAPE(B * HEADS, NQ, HD));
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 3, SHAPE(B * HEADS, NK, HD));
  vkf_value rep = vkf_graph_constant(g, "valid_rep", VKF_I32, 1, SHAPE(B * HEADS),
                                     (const int32_t[]){3, 3, 2, 2});
  vkf_value kvl = vkf_graph_constant(g, "kv_len", VKF_I32, 1, SHAPE(B), (const int32_t[]){3, 2});
  vkf_value s = vkf_matmul(g, "scores", q, k, &(vkf_matmul_options){.transpose_b = 1});
  s = vkf_scale(g, "scaled", s, (float)(1.0 / sqrt((double)HD)));
  vkf_value p = vkf_softmax(g, "weights", s, &(vkf_softmax_options){.valid_lens = rep});
  vkf_value unfused = vkf_matmul(g, "context", p, k, NULL);
  vkf_value q4 = vkf_reshape(g, "q4", q, 4, SHAPE(B, HEADS, NQ, HD));
  vkf_value k4 = vkf_reshape(g, "k4", k, 4, SHAPE(B, HEADS, NK, HD));
  vkf_value fused = vkf_attention(g, "fused", q4, k4, k4, &(vkf_attention_options){.kv_len = kvl});
  float qd[B * HEADS * NQ * HD], kd[B * HEADS * NK * HD], y1[B * HEADS * NQ * HD],
      y2[B * HEADS * NQ * HD];
  for (size_t i = 0; i < NELEM(qd); i++) qd[i] = (float)cos(0.3 * (double)i);
  for (size_t i = 0; i < NELEM(kd); i++) kd[i] = (float)sin(0.7 * (double)i);
  vkf_input_binding in2[2] = {{q, qd, sizeof qd}, {k, kd, sizeof kd}};
  eval(g, in2, 2, unfused, y1, NELEM(y1));
  eval(g, in2, 2, fused, y2, NELEM(y2));
  check_all_near(y1, y2, NELEM(y1), 1e-6);
  vkf_graph_destroy(g);
}

static void test_norms_and_data(void) {
  vkf_graph *g = new_graph();
  vkf_value x =
      vkf_graph_constant(g, "x", VKF_F32, 2, SHAPE(2, 4), (const float[]){1, 2, 3, 4, -2, 0, 2, 0});
  vkf_value gamma = vkf_graph_constant(g, "g", VKF_F32, 1, SHAPE(4), (const float[]){1, 2, 1, 1});
  vkf_value beta = vkf_graph_constant(g, "b", VKF_F32, 1, SHAPE(4), (const float[]){0, 0, 0, 10});
  vkf_value ln =
      vkf_layernorm(g, "ln", x, &(vkf_norm_options){.eps = 1e-12f, .gamma = gamma, .beta = beta});
  vkf_value rms = vkf_rmsnorm(g, "rms", x, &(vkf_norm_options){.eps = 1e-12f});
  vkf_value l2 = vkf_l2_normalize(g, "l2", x, 0);
  float y[8];
  eval(g, NULL, 0, ln, y, 8);
  double s1 = 1 / sqrt(1.25); /* row 0: mean 2.5, var 1.25 */
  double s2 = 1 / sqrt(2.0);  /* row 1: mean 0, var 2 */
  check_all_near(y,
                 (const float[]){(float)(-1.5 * s1), (float)(2 * -0.5 * s1), (float)(0.5 * s1),
                                 (float)(1.5 * s1 + 10), (float)(-2 * s2), 0, (float)(2 * s2), 10},
                 8, 1e-6);
  eval(g, NULL, 0, rms, y, 8); /* row 0 rms sqrt(7.5), row 1 sqrt(2) */
  double r0 = 1 / sqrt(7.5);
  check_all_near(y,
                 (const float[]){(float)r0, (float)(2 * r0), (float)(3 * r0), (float)(4 * r0),
                                 (float)(-2 * s2), 0, (float)(2 * s2), 0},
                 8, 1e-6);
  eval(g, NULL, 0, l2, y, 8); /* norms sqrt(30), sqrt(8) */
  double n0 = 1 / sqrt(30.0), n1 = 1 / sqrt(8.0);
  check_all_near(y,
                 (const float[]){(float)n0, (float)(2 * n0), (float)(3 * n0), (float)(4 * n0),
                                 (float)(-2 * n1), 0, (float)(2 * n1), 0},
                 8, 1e-6);
  vkf_graph_destroy(g);

  /* gather, concat, slice, mean pooling */
  g = new_graph();
  vkf_value table =
      vkf_graph_constant(g, "emb", VKF_F32, 2, SHAPE(3, 2), (const float[]){0, 1, 10, 11, 20, 21});
  vkf_value ids = vkf_graph_input(g, "ids", VKF_I32, 2, SHAPE(2, 3));
  vkf_value mask = vkf_graph_input(g, "mask", VKF_I32, 2, SHAPE(2, 3));
  vkf_value e = vkf_gather(g, "embed", table, ids); /* [2,3,2] */
  vkf_value pooled = vkf_mean_pool(g, "pool", e, mask);
  vkf_value cat = vkf_concat(g, "cat", (const vkf_value[]){e, e}, 2, 2); /* [2,3,4] */
  vkf_value sl = vkf_slice(g, "sl", cat, 1, 1, 3);                       /* [2,2,4] view */
  static const int32_t idv[6] = {2, 0, 1, 1, 1, 2}, mv[6] = {1, 1, 0, 0, 0, 0};
  vkf_input_binding in[2] = {{ids, idv, sizeof idv}, {mask, mv, sizeof mv}};
  float ye[12], yp[4], ys[16];
  eval(g, in, 2, e, ye, 12);
  check_all_near(ye, (const float[]){20, 21, 0, 1, 10, 11, 10, 11, 10, 11, 20, 21}, 12, 0);
  eval(g, in, 2, pooled, yp, 4); /* batch 0 mean of ids 2,0; batch 1 all masked -> 0 */
  check_all_near(yp, (const float[]){10, 11, 0, 0}, 4, 0);
  eval(g, in, 2, sl, ys, 16);
  check_all_near(ys, (const float[]){0, 1, 0, 1, 10, 11, 10, 11, 10, 11, 10, 11, 20, 21, 20, 21},
                 16, 0);
  /* An id outside the table is a run-time error naming the node. */
  static const int32_t badv[6] = {0, 3, 0, 0, 0, 0};
  vkf_input_binding inb[2] = {{ids, badv, sizeof badv}, {mask, mv, sizeof mv}};
  vkf_output_binding ob = {e, ye, sizeof ye};
  CHECK_STATUS(vkf_interp_evaluate(g, inb, 2, &ob, 1), VKF_STATUS_INVALID_ARGUMENT,
               "gather \"embed\": id 3 at position 1");
  vkf_graph_destroy(g);

  /* patch embedding: image [1,1,4,4], 2x2 patches, two output channels (sum, top-left). */
  g = new_graph();
  float img[16];
  for (int i = 0; i < 16; i++) img[i] = (float)i;
  vkf_value im = vkf_graph_constant(g, "img", VKF_F32, 4, SHAPE(1, 1, 4, 4), img);
  vkf_value w = vkf_graph_constant(g, "w", VKF_F32, 4, SHAPE(2, 1, 2, 2),
                                   (const float[]){1, 1, 1, 1, 1, 0, 0, 0});
  vkf_value pb = vkf_graph_constant(g, "pb", VKF_F32, 1, SHAPE(2), (const float[]){0, 100});
  vkf_value pe = vkf_patch_embed(g, "patch", im, w, pb); /* [1, 4, 2] */
  float yp2[8];
  eval(g, NULL, 0, pe, yp2, 8);
  /* patches (row-major): {0,1,4,5} {2,3,6,7} {8,9,12,13} {10,11,14,15} */
  check_all_near(yp2, (const float[]){10, 100, 18, 102, 42, 108, 50, 110}, 8, 0);
  vkf_graph_destroy(g);
}

static void test_f16(void) {
  vkf_graph *g = new_graph();
  vkf_value x = vkf_graph_input(g, "x", VKF_F16, 1, SHAPE(3));
  vkf_value y = vkf_scale(g, "third", x, 1.0f / 3.0f); /* f16 result is rounded to half */
  vkf_value y32 = vkf_cast(g, "to_f32", y, VKF_F32);
  vkf_value i32 = vkf_cast(g, "to_i32", x, VKF_I32);
  uint16_t xh[3] = {vkf_float_to_half(1.0f), vkf_float_to_half(2.5f), vkf_float_to_half(-7.75f)};
  vkf_input_binding in = {x, xh, sizeof xh};
  uint16_t yh[3];
  float yf[3];
  int32_t yi[3];
  vkf_output_binding out[3] = {{y, yh, sizeof yh}, {y32, yf, sizeof yf}, {i32, yi, sizeof yi}};
  CHECK_OK(vkf_interp_evaluate(g, &in, 1, out, 3));
  for (int i = 0; i < 3; i++) {
    float want = vkf_half_to_float(vkf_float_to_half(vkf_half_to_float(xh[i]) / 3.0f));
    CHECK(yh[i] == vkf_float_to_half(want));
    CHECK(yf[i] == want);
  }
  CHECK(yi[0] == 1 && yi[1] == 2 && yi[2] == -7);
  /* Unbound input: the error names the reader and the input. */
  vkf_output_binding o1 = {y, yh, sizeof yh};
  CHECK_STATUS(vkf_interp_evaluate(g, NULL, 0, &o1, 1), VKF_STATUS_INVALID_ARGUMENT,
               "scale \"third\": input \"x\" has no value");
  vkf_graph_destroy(g);
}

int main(void) {
  test_elementwise();
  test_matmul();
  test_masked_softmax();
  test_attention_masks();
  test_attention_strided();
  test_multihead_layout();
  test_norms_and_data();
  test_f16();
  return test_report();
}
