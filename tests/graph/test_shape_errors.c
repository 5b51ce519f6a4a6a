/* Shape/dtype inference errors carry precise messages (node, op, both shapes), errors are
 * sticky, and the verifier rejects malformed graphs. */
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/ir/verify.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static vkf_graph *new_graph(void) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("errors", &g));
  return g;
}

/* Builds one failing node with `build` and checks the recorded message is exactly `want`. */
#define EXPECT_ERROR(code, want, ...)                                                \
  do {                                                                               \
    vkf_graph *g_ = new_graph();                                                     \
    vkf_graph *g = g_;                                                               \
    __VA_ARGS__;                                                                     \
    vkf_status s_ = vkf_graph_status(g_);                                            \
    CHECK_MSG(vkf_status_code_of(s_) == (code), "code %s: %s",                       \
              vkf_status_code_name(vkf_status_code_of(s_)), vkf_status_message(s_)); \
    CHECK_MSG(strcmp(vkf_status_message(s_), want) == 0, "got \"%s\"\n want \"%s\"", \
              vkf_status_message(s_), want);                                         \
    vkf_status_free(s_);                                                             \
    vkf_graph_destroy(g_);                                                           \
  } while (0)

static void test_messages(void) {
  EXPECT_ERROR(VKF_STATUS_SHAPE,
               "matmul \"blocks.3.attn.qkv\": inner dims differ: [197,768] x "
               "[512,2304]",
               vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(197, 768));
               vkf_value w = vkf_graph_constant(g, "w", VKF_F32, 2, SHAPE(512, 2304), NULL);
               vkf_matmul(g, "blocks.3.attn.qkv", x, w, NULL));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "matmul \"proj\": inner dims differ: [2,4,7] x [16,8]^T",
               vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(2, 4, 8));
               vkf_value w = vkf_graph_constant(g, "w", VKF_F32, 2, SHAPE(16, 8), NULL);
               vkf_value x2 = vkf_graph_input(g, "x2", VKF_F32, 3, SHAPE(2, 4, 7));
               vkf_matmul(g, "ok", x, w, &(vkf_matmul_options){.transpose_b = 1});
               vkf_matmul(g, "proj", x2, w, &(vkf_matmul_options){.transpose_b = 1}));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "matmul \"bmm\": batch dims do not broadcast: [2,3,4] x [3,4,5]",
               vkf_value a = vkf_graph_input(g, "a", VKF_F32, 3, SHAPE(2, 3, 4));
               vkf_value b = vkf_graph_input(g, "b", VKF_F32, 3, SHAPE(3, 4, 5));
               vkf_matmul(g, "bmm", a, b, NULL));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "matmul \"fc\": bias shape [8], expected [5]",
               vkf_value a = vkf_graph_input(g, "a", VKF_F32, 2, SHAPE(3, 4));
               vkf_value w = vkf_graph_input(g, "w", VKF_F32, 2, SHAPE(4, 5));
               vkf_value bias = vkf_graph_input(g, "bias", VKF_F32, 1, SHAPE(8));
               vkf_matmul(g, "fc", a, w, &(vkf_matmul_options){.bias = bias}));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "add \"residual\": shapes do not broadcast: [2,3] vs [4]",
               vkf_value a = vkf_graph_input(g, "a", VKF_F32, 2, SHAPE(2, 3));
               vkf_value b = vkf_graph_input(g, "b", VKF_F32, 1, SHAPE(4));
               vkf_add(g, "residual", a, b));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "mul \"gate\": dtypes differ: f32 [2] vs f16 [2]",
               vkf_value a = vkf_graph_input(g, "a", VKF_F32, 1, SHAPE(2));
               vkf_value b = vkf_graph_input(g, "b", VKF_F16, 1, SHAPE(2));
               vkf_mul(g, "gate", a, b));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "gelu \"act\": input \"ids\" must be f32 or f16, got i32",
               vkf_value a = vkf_graph_input(g, "ids", VKF_I32, 1, SHAPE(2));
               vkf_gelu(g, "act", a));
  EXPECT_ERROR(VKF_STATUS_SHAPE,
               "layernorm \"ln\": gamma shape [4] does not match last dim of "
               "[2,8]",
               vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(2, 8));
               vkf_value gm = vkf_graph_input(g, "gamma", VKF_F32, 1, SHAPE(4));
               vkf_layernorm(g, "ln", x, &(vkf_norm_options){.gamma = gm}));
  EXPECT_ERROR(VKF_STATUS_SHAPE,
               "softmax \"p\": valid_lens shape [3] fits neither [B] nor "
               "[B,rows] of input [2,2,4]",
               vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(2, 2, 4));
               vkf_value vl = vkf_graph_input(g, "vl", VKF_I32, 1, SHAPE(3));
               vkf_softmax(g, "p", x, &(vkf_softmax_options){.valid_lens = vl}));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "softmax \"p\": valid_lens \"vl\" must be i32, got f32",
               vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(2, 2, 4));
               vkf_value vl = vkf_graph_input(g, "vl", VKF_F32, 1, SHAPE(2));
               vkf_softmax(g, "p", x, &(vkf_softmax_options){.valid_lens = vl}));
  EXPECT_ERROR(VKF_STATUS_SHAPE,
               "attention \"attn\": q [1,2,5,64], k [1,2,7,32], v [1,2,7,64] "
               "do not agree",
               vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 2, 5, 64));
               vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(1, 2, 7, 32));
               vkf_value v = vkf_graph_input(g, "v", VKF_F32, 4, SHAPE(1, 2, 7, 64));
               vkf_attention(g, "attn", q, k, v, NULL));
  EXPECT_ERROR(VKF_STATUS_SHAPE,
               "attention \"attn\": bias [2,5,8] does not broadcast to scores "
               "[1,2,5,7]",
               vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 2, 5, 8));
               vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, SHAPE(1, 2, 7, 8));
               vkf_value bias = vkf_graph_input(g, "bias", VKF_F32, 3, SHAPE(2, 5, 8));
               vkf_attention(g, "attn", q, k, k, &(vkf_attention_options){.bias = bias}));
  EXPECT_ERROR(VKF_STATUS_SHAPE,
               "attention \"attn\": ramp f32 [3,2], expected f32 [2, 2] contiguous (a row per "
               "head)",
               vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 2, 5, 8));
               vkf_value ramp = vkf_graph_input(g, "ramp", VKF_F32, 2, SHAPE(3, 2));
               vkf_attention(g, "attn", q, q, q, &(vkf_attention_options){.ramp = ramp}));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "reshape \"r\": element counts differ: [2,3] -> [4,2]",
               vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(2, 3));
               vkf_reshape(g, "r", x, 2, SHAPE(4, 2)));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "permute \"t\": axes are not a permutation of rank 3",
               vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(2, 3, 4));
               vkf_permute(g, "t", x, (const uint32_t[]){0, 2, 2}));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "slice \"cls\": range [0,5) out of bounds for axis 1 of [2,3]",
               vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(2, 3));
               vkf_slice(g, "cls", x, 1, 0, 5));
  EXPECT_ERROR(VKF_STATUS_SHAPE,
               "concat \"tokens\": f32 [2,1,8] and f32 [2,196,4] differ off "
               "axis 1",
               vkf_value a = vkf_graph_input(g, "cls", VKF_F32, 3, SHAPE(2, 1, 8));
               vkf_value b = vkf_graph_input(g, "patches", VKF_F32, 3, SHAPE(2, 196, 4));
               vkf_concat(g, "tokens", (const vkf_value[]){a, b}, 2, 1));
  EXPECT_ERROR(VKF_STATUS_SHAPE,
               "patch_embed \"embed\": image [1,3,225,224] is not a whole "
               "number of [768,3,16,16] patches",
               vkf_value im = vkf_graph_input(g, "img", VKF_F32, 4, SHAPE(1, 3, 225, 224));
               vkf_value w = vkf_graph_constant(g, "w", VKF_F32, 4, SHAPE(768, 3, 16, 16), NULL);
               vkf_patch_embed(g, "embed", im, w, VKF_NO_VALUE));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "gather \"wte\": ids \"ids\" must be i32, got f32",
               vkf_value t = vkf_graph_constant(g, "table", VKF_F32, 2, SHAPE(10, 4), NULL);
               vkf_value ids = vkf_graph_input(g, "ids", VKF_F32, 1, SHAPE(3));
               vkf_gather(g, "wte", t, ids));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "mean_pool \"pool\": mask [2,5] does not match input [2,4,8]",
               vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(2, 4, 8));
               vkf_value m = vkf_graph_input(g, "mask", VKF_I32, 2, SHAPE(2, 5));
               vkf_mean_pool(g, "pool", x, m));
  EXPECT_ERROR(VKF_STATUS_SHAPE, "input \"x\": dimension 1 is 0",
               vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(2, 0)));
  EXPECT_ERROR(VKF_STATUS_INVALID_ARGUMENT, "relu \"r\": input 0 is missing",
               vkf_relu(g, "r", VKF_NO_VALUE));
}

static void test_sticky(void) {
  vkf_graph *g = new_graph();
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(197, 768));
  vkf_value w = vkf_graph_input(g, "w", VKF_F32, 2, SHAPE(512, 2304));
  vkf_value y = vkf_matmul(g, "blocks.3.attn.qkv", x, w, NULL);
  CHECK(!vkf_value_valid(y));
  uint32_t nodes = vkf_graph_node_count(g);
  /* Later calls are no-ops returning no value, even well-formed ones. */
  vkf_value z = vkf_relu(g, "later", x);
  CHECK(!vkf_value_valid(z));
  CHECK(vkf_graph_node_count(g) == nodes);
  CHECK(!vkf_value_valid(vkf_graph_input(g, "x2", VKF_F32, 1, SHAPE(3))));
  CHECK_STATUS(vkf_graph_status(g), VKF_STATUS_SHAPE, "blocks.3.attn.qkv");
  vkf_graph_destroy(g);
}

/* A small valid graph: x -> matmul -> relu -> add(x') -> output. */
static vkf_graph *small_graph(void) {
  vkf_graph *g = new_graph();
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, SHAPE(4, 8));
  vkf_value w = vkf_graph_constant(g, "w", VKF_F32, 2, SHAPE(8, 8), NULL);
  vkf_value h = vkf_matmul(g, "fc", x, w, NULL);
  vkf_value a = vkf_relu(g, "act", h);
  vkf_value r = vkf_add(g, "res", a, x);
  vkf_graph_output(g, r, NULL);
  CHECK_OK(vkf_graph_status(g));
  CHECK_OK(vkf_graph_verify(g));
  return g;
}

static void test_verifier(void) {
  vkf_graph *g = small_graph();
  /* Cycle: fc reads res's output (produced later). */
  vkf_graph_node_mut(g, 0)->inputs[0] = vkf_graph_node(g, 2)->output;
  CHECK_STATUS(vkf_graph_verify(g), VKF_STATUS_INVALID_GRAPH,
               "matmul \"fc\": input 0 \"res\" is produced by node 2, not before node 0 (cycle");
  vkf_graph_destroy(g);

  g = small_graph();
  vkf_graph_node_mut(g, 1)->inputs[0] = vkf_graph_node(g, 1)->output; /* self loop */
  CHECK_STATUS(vkf_graph_verify(g), VKF_STATUS_INVALID_GRAPH, "cycle or bad order");
  vkf_graph_destroy(g);

  g = small_graph();
  vkf_graph_node_mut(g, 1)->inputs[0] = (vkf_value){999};
  CHECK_STATUS(vkf_graph_verify(g), VKF_STATUS_INVALID_GRAPH,
               "relu \"act\": input 0 is dangling (id 999)");
  vkf_graph_destroy(g);

  g = small_graph();
  vkf_graph_tensor_mut(g, vkf_graph_node(g, 1)->output)->dtype = VKF_F16;
  CHECK_STATUS(vkf_graph_verify(g), VKF_STATUS_INVALID_GRAPH,
               "relu \"act\": output recorded as f16 [4,8], inferred f32 [4,8]");
  vkf_graph_destroy(g);

  g = small_graph();
  vkf_graph_tensor_mut(g, vkf_graph_node(g, 0)->output)->shape[1] = 9;
  CHECK_STATUS(vkf_graph_verify(g), VKF_STATUS_INVALID_GRAPH,
               "matmul \"fc\": output recorded as f32 [4,9], inferred f32 [4,8]");
  vkf_graph_destroy(g);

  g = small_graph();
  vkf_graph_node_mut(g, 1)->dead = 1; /* relu removed: add now reads a removed value */
  vkf_graph_compact(g);
  CHECK_STATUS(vkf_graph_verify(g), VKF_STATUS_INVALID_GRAPH,
               "add \"res\": input 0 \"act\" was produced by a removed node");
  vkf_graph_destroy(g);

  g = small_graph();
  vkf_graph_node_mut(g, 0)->input_count = 1;
  CHECK_STATUS(vkf_graph_verify(g), VKF_STATUS_INVALID_ARGUMENT,
               "matmul \"fc\": 1 inputs, expected 2..5");
  vkf_graph_destroy(g);

  g = small_graph();
  vkf_graph_node_mut(g, 2)->output = vkf_graph_node(g, 1)->output; /* two writers */
  CHECK_STATUS(vkf_graph_verify(g), VKF_STATUS_INVALID_GRAPH, "names producer 1, not 2");
  vkf_graph_destroy(g);
}

/* The op table is well formed: unique names, sane arities, elementwise ops are unary/binary. */
static void test_op_table(void) {
  for (int i = 0; i < VKF_OP_COUNT; i++) {
    vkf_op op = (vkf_op)i;
    CHECK(vkf_op_name(op) && *vkf_op_name(op));
    CHECK(vkf_op_min_inputs(op) >= 1 && vkf_op_min_inputs(op) <= vkf_op_max_inputs(op));
    CHECK(vkf_op_max_inputs(op) <= VKF_MAX_NODE_INPUTS);
    if (vkf_op_flags(op) & VKF_OPF_ELEMENTWISE) CHECK(vkf_op_max_inputs(op) <= 2);
    if (vkf_op_flags(op) & VKF_OPF_VIEW) CHECK(vkf_op_max_inputs(op) == 1);
    for (int j = 0; j < i; j++) CHECK(strcmp(vkf_op_name(op), vkf_op_name((vkf_op)j)) != 0);
  }
  CHECK(strcmp(vkf_op_name(VKF_OP_GELU_ERF), "gelu") == 0);
}

int main(void) {
  test_op_table();
  test_messages();
  test_sticky();
  test_verifier();
  return test_report();
}
