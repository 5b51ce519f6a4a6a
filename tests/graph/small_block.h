/* A small pre-norm attention block written unfused (shared by the dump and plan golden tests), with
 * a dead node and an elementwise tail so every pass has something to do. Header-only. */
#ifndef VKF_TESTS_GRAPH_SMALL_BLOCK_H
#define VKF_TESTS_GRAPH_SMALL_BLOCK_H

#include "graph/ir/builder.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

/* Weights have no data: dumps and plans only. */
static vkf_graph *small_block(void) {
  enum { B = 1, N = 4, C = 8, H = 2, D = 4 };
  vkf_graph *g;
  CHECK_OK(vkf_graph_create("small \"block\"", &g)); /* quotes exercise escaping */
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(B, N, C));
  vkf_value lens = vkf_graph_input(g, "lens", VKF_I32, 1, SHAPE(B));
  vkf_value wqkv = vkf_graph_constant(g, "qkv.w", VKF_F32, 2, SHAPE(C, 3 * C), NULL);
  vkf_value bqkv = vkf_graph_constant(g, "qkv.b", VKF_F32, 1, SHAPE(3 * C), NULL);
  vkf_value wo = vkf_graph_constant(g, "proj.w", VKF_F32, 2, SHAPE(C, C), NULL);
  vkf_value bo = vkf_graph_constant(g, "proj.b", VKF_F32, 1, SHAPE(C), NULL);
  vkf_value h = vkf_layernorm(g, "ln", x, NULL);
  vkf_value qkv = vkf_add(g, "qkv.bias", vkf_matmul(g, "qkv", h, wqkv, NULL), bqkv);
  qkv = vkf_reshape(g, "split", qkv, 4, SHAPE(B, N, 3 * H, D));
  vkf_value qkvs[3];
  const char *names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; i++) {
    vkf_value s = vkf_slice(g, NULL, qkv, 2, i * H, (i + 1) * H);
    qkvs[i] = vkf_permute(g, names[i], s, (const uint32_t[]){0, 2, 1, 3});
  }
  vkf_value s = vkf_matmul(g, "scores", qkvs[0], qkvs[1], &(vkf_matmul_options){.transpose_b = 1});
  s = vkf_scale(g, "scale", s, 0.5f);
  vkf_value p =
      vkf_softmax(g, "softmax", s, &(vkf_softmax_options){.valid_lens = lens, .causal = 1});
  vkf_value o = vkf_matmul(g, "context", p, qkvs[2], NULL);
  o = vkf_permute(g, "merge", o, (const uint32_t[]){0, 2, 1, 3});
  o = vkf_reshape(g, "flat", o, 3, SHAPE(B, N, C));
  o = vkf_add(g, "proj.bias", vkf_matmul(g, "proj", o, wo, NULL), bo);
  o = vkf_add(g, "residual", o, x);
  vkf_relu(g, "unused", o);
  vkf_value t = vkf_scale(g, "tail.scale", vkf_tanh(g, "tail.tanh", o), 3.0f);
  vkf_graph_output(g, vkf_mul(g, "tail.mul", t, o), "y");
  CHECK_OK(vkf_graph_status(g));
  return g;
}

#endif
