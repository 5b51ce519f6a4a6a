/* Nodes lowered in slices because a binding would exceed maxStorageBufferRange, run on the device
 * vs the CPU interpreter. The device's own caps with the range clamped to 512 bytes make small
 * graphs take the path that an unfused attention's 768 MiB scores take on lavapipe: an unfused
 * attention block (batched matmul with transposed B, scale, causal softmax with a broadcast bias,
 * matmul) on odd sizes whose slices start at unaligned offsets, and a layernorm + broadcasting add. */
#include <string.h>

#include "graph/ir/builder.h"
#include "tests/op_harness.h"

static const op_tol TOL = {.atol = 1e-5, .rtol = 1e-4};

static void *filled(size_t n, uint32_t seed) {
  float *v = malloc(n * sizeof(float) + 16);
  op_fill_uniform(v, n, seed, -1.0f, 1.0f);
  return v;
}

int main(void) {
  gpu_test t = gpu_test_start();
  vkf_device_caps caps = *vkf_device_caps_get(t.device);
  caps.max_storage_buffer_range = 512;

  /* Unfused attention: q [2, 3, 7, 12], k and v [2, 3, 9, 12], bias [7, 9]. */
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("unfused", &g));
  int64_t qs[4] = {2, 3, 7, 12}, ks[4] = {2, 3, 9, 12}, bs[2] = {7, 9};
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, qs);
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, ks);
  vkf_value v = vkf_graph_input(g, "v", VKF_F32, 4, ks);
  vkf_value bias = vkf_graph_input(g, "bias", VKF_F32, 2, bs);
  vkf_value s = vkf_matmul(g, "scores", q, k, &(vkf_matmul_options){.transpose_b = 1});
  s = vkf_scale(g, "scale", s, 0.2886751f);
  vkf_value p = vkf_softmax(g, "probs", s, &(vkf_softmax_options){.causal = 1, .bias = bias});
  vkf_graph_output(g, vkf_matmul(g, "context", p, v, NULL), "y");
  void *data[4] = {filled(2 * 3 * 7 * 12, 1), filled(2 * 3 * 9 * 12, 2),
                   filled(2 * 3 * 9 * 12, 3), filled(7 * 9, 4)};
  vkf_input_binding in[4] = {{q, data[0], 2 * 3 * 7 * 12 * 4}, {k, data[1], 2 * 3 * 9 * 12 * 4},
                             {v, data[2], 2 * 3 * 9 * 12 * 4}, {bias, data[3], 7 * 9 * 4}};
  op_check_with(&t, g, in, 4, &caps, TOL, "unfused attention, 512-byte bindings");
  op_check_with(&t, g, in, 4, NULL, TOL, "unfused attention, device bindings");
  for (int i = 0; i < 4; i++) free(data[i]);
  vkf_graph_destroy(g);

  /* Fused attention sliced along its batch: q [3, 2, 7, 16] (896 bytes per batch row), k and v
   * [3, 2, 9, 16] (1152), a per-batch bias [3, 2, 7, 9] and kv_len [3], under 2 KiB bindings: one
   * batch row per dispatch, kv_len and the bias sliced with it. */
  CHECK_OK(vkf_graph_create("fused", &g));
  int64_t fq[4] = {3, 2, 7, 16}, fk[4] = {3, 2, 9, 16}, fb[4] = {3, 2, 7, 9}, fl[1] = {3};
  q = vkf_graph_input(g, "q", VKF_F32, 4, fq);
  k = vkf_graph_input(g, "k", VKF_F32, 4, fk);
  v = vkf_graph_input(g, "v", VKF_F32, 4, fk);
  bias = vkf_graph_input(g, "bias", VKF_F32, 4, fb);
  vkf_value lens = vkf_graph_input(g, "kv_len", VKF_I32, 1, fl);
  vkf_attention_options ao = {.kv_len = lens, .bias = bias};
  vkf_graph_output(g, vkf_attention(g, "attn", q, k, v, &ao), "y");
  int32_t lv[3] = {9, 4, 6};
  void *fd[4] = {filled(3 * 2 * 7 * 16, 11), filled(3 * 2 * 9 * 16, 12),
                 filled(3 * 2 * 9 * 16, 13), filled(3 * 2 * 7 * 9, 14)};
  vkf_input_binding fin[5] = {{q, fd[0], 3 * 2 * 7 * 16 * 4}, {k, fd[1], 3 * 2 * 9 * 16 * 4},
                              {v, fd[2], 3 * 2 * 9 * 16 * 4}, {bias, fd[3], 3 * 2 * 7 * 9 * 4},
                              {lens, lv, sizeof lv}};
  caps.max_storage_buffer_range = 2048;
  op_check_with(&t, g, fin, 5, &caps, TOL, "fused attention, 2 KiB bindings");
  caps.max_storage_buffer_range = 512;
  for (int i = 0; i < 4; i++) free(fd[i]);
  vkf_graph_destroy(g);

  /* layernorm([3, 5, 40]) + b[40] */
  CHECK_OK(vkf_graph_create("norm_add", &g));
  int64_t xs[3] = {3, 5, 40}, ds[1] = {40};
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, xs);
  vkf_value gamma = vkf_graph_input(g, "gamma", VKF_F32, 1, ds);
  vkf_value b = vkf_graph_input(g, "b", VKF_F32, 1, ds);
  vkf_value y = vkf_layernorm(g, "ln", x, &(vkf_norm_options){.gamma = gamma});
  vkf_graph_output(g, vkf_add(g, "sum", y, b), "y");
  void *xd = filled(3 * 5 * 40, 5), *gd = filled(40, 6), *bd = filled(40, 7);
  vkf_input_binding in2[3] = {{x, xd, 3 * 5 * 40 * 4}, {gamma, gd, 160}, {b, bd, 160}};
  op_check_with(&t, g, in2, 3, &caps, TOL, "layernorm + add, 512-byte bindings");
  free(xd), free(gd), free(bd);
  vkf_graph_destroy(g);

  /* A tied LM head: the table [300, 8] (9.6 KB) is gathered in row slices, and read as B [N, K]
   * by the head, which is sliced along N (64 columns each, the last 44); ids in every slice. */
  CHECK_OK(vkf_graph_create("tied_head", &g));
  int64_t ts[2] = {300, 8}, is[2] = {2, 3}, hb[1] = {300};
  vkf_value table = vkf_graph_input(g, "table", VKF_F32, 2, ts);
  vkf_value ids = vkf_graph_input(g, "ids", VKF_I32, 2, is);
  vkf_value hbias = vkf_graph_input(g, "head_bias", VKF_F32, 1, hb);
  vkf_value e = vkf_gather(g, "embed", table, ids); /* [2, 3, 8] */
  vkf_matmul_options ho = {.transpose_b = 1, .bias = hbias};
  vkf_graph_output(g, vkf_matmul(g, "head", e, table, &ho), "logits"); /* [2, 3, 300] */
  int32_t idv[6] = {0, 299, 63, 64, 150, 17};
  void *td = filled(300 * 8, 8), *hd = filled(300, 9);
  vkf_input_binding in3[3] = {{table, td, 300 * 8 * 4}, {ids, idv, sizeof idv}, {hbias, hd, 1200}};
  caps.max_storage_buffer_range = 2048; /* the [2, 3, 300] output (7.2 KB) fits after slicing */
  op_check_with(&t, g, in3, 3, &caps, TOL, "tied head, 2 KiB bindings");
  free(td), free(hd);
  vkf_graph_destroy(g);
  return gpu_test_finish(&t);
}
