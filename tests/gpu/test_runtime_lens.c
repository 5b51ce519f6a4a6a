/* Run-time lengths outside their range. Attention's kv_len and softmax's valid lengths are data:
 * any int32 a tensor holds can reach the kernels (a caller's buffer, a computed length), so by
 * design they are clamped to [0, keys] (graph/ir/builder.h, ops.def): a negative length masks
 * every key, one past the keys masks none, and no kernel reads outside the keys. Checked here
 * with INT32_MIN, -1, Nk + 1, 1000 and INT32_MAX under every attention layout, split-K, softmax
 * per-batch and per-row lengths (device's caps and a discrete GPU's), and the softmax + matmul
 * chain that the attention fusion turns into kv_len: the device equals the interpreter, and the
 * interpreter's result for the wild lengths equals its result for the clamped ones exactly. */
#include <stdint.h>

#include "graph/ir/builder.h"
#include "graph/lower/lower_attention.h"
#include "graph/passes/passes.h"
#include "tests/gpu/op_check_caps.h"

static const op_tol TOL = {2e-5, 1e-4};

enum { B = 2, H = 2, NQ = 19, NK = 33, D = 32, R = 4 };

static int32_t clamp_len(int32_t v, int32_t hi) {
  return v < 0 ? 0 : v > hi ? hi : v;
}

typedef struct data {
  float q[B * H * NQ * D], k[B * H * NK * D], v[B * H * NK * D], x[B * R * NK];
} data;

static void fill(data *d) {
  op_fill_uniform(d->q, sizeof d->q / sizeof(float), 11, -1.0f, 1.0f);
  op_fill_uniform(d->k, sizeof d->k / sizeof(float), 23, -1.0f, 1.0f);
  op_fill_uniform(d->v, sizeof d->v / sizeof(float), 37, -1.0f, 1.0f);
  op_fill_uniform(d->x, sizeof d->x / sizeof(float), 41, -4.0f, 4.0f);
}

/* One attention node (fused = 0) or the q·kᵀ -> softmax(valid_lens) -> ·v chain (fused = 1)
 * with lengths `lens` [B]; bindings in `in` (4 entries). */
static vkf_graph *attention_graph(const data *d, const int32_t *lens, int causal, int chain,
                                  vkf_input_binding *in) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("runtime lens", &g));
  vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, (const int64_t[]){B, H, NQ, D});
  vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, (const int64_t[]){B, H, NK, D});
  vkf_value v = vkf_graph_input(g, "v", VKF_F32, 4, (const int64_t[]){B, H, NK, D});
  vkf_value len = vkf_graph_input(g, "len", VKF_I32, 1, (const int64_t[]){B});
  vkf_value y;
  if (chain) {
    vkf_matmul_options mo = {.transpose_b = 1};
    vkf_value s = vkf_matmul(g, "qk", q, k, &mo);
    vkf_softmax_options so = {.scale = 0.17f, .valid_lens = len, .causal = causal};
    y = vkf_matmul(g, "pv", vkf_softmax(g, "p", s, &so), v, &(vkf_matmul_options){0});
  } else {
    vkf_attention_options o = {.kv_len = len, .causal = causal};
    y = vkf_attention(g, "attn", q, k, v, &o);
  }
  vkf_graph_output(g, y, "y");
  in[0] = (vkf_input_binding){q, d->q, sizeof d->q};
  in[1] = (vkf_input_binding){k, d->k, sizeof d->k};
  in[2] = (vkf_input_binding){v, d->v, sizeof d->v};
  in[3] = (vkf_input_binding){len, lens, B * sizeof(int32_t)};
  return g;
}

/* The interpreter's output for the wild lengths equals its output for the clamped ones. */
static void check_reference_clamps(vkf_graph *wild_g, const vkf_input_binding *wild,
                                   vkf_graph *clamped_g, const vkf_input_binding *clamped,
                                   size_t in_count, size_t count, const char *label) {
  float *a = malloc(count * sizeof(float)), *b = malloc(count * sizeof(float));
  CHECK_OK(op_run_interp(wild_g, wild, in_count, 0, a, count));
  CHECK_OK(op_run_interp(clamped_g, clamped, in_count, 0, b, count));
  size_t differ = 0;
  for (size_t i = 0; i < count; i++) differ += a[i] != b[i];
  CHECK_MSG(differ == 0, "%s: interpreter differs from the clamped lengths in %zu elements", label,
            differ);
  free(a);
  free(b);
}

static void check_attention(gpu_test *t, const data *d, const int32_t *lens, int causal) {
  int32_t clamped[B];
  for (int i = 0; i < B; i++) clamped[i] = clamp_len(lens[i], NK);
  const struct {
    const char *name;
    vkf_attention_force force;
  } variants[] = {
      {"chooser", {.layout = VKF_ATTENTION_LAYOUT_AUTO}},
      {"row staged", {.layout = VKF_ATTENTION_LAYOUT_ROW, .stage_kv = 1}},
      {"row in place", {.layout = VKF_ATTENTION_LAYOUT_ROW, .stage_kv = -1}},
      {"lanes staged", {.layout = VKF_ATTENTION_LAYOUT_LANES, .stage_kv = 1}},
      {"lanes in place", {.layout = VKF_ATTENTION_LAYOUT_LANES, .stage_kv = -1}},
      {"tiled", {.layout = VKF_ATTENTION_LAYOUT_TILED}},
      {"storage buffers", {.layout = VKF_ATTENTION_LAYOUT_AUTO, .no_texel = 1}},
      {"split-K 7", {.splits = 7}},
  };
  vkf_input_binding in[4], cin[4];
  vkf_graph *g = attention_graph(d, lens, causal, 0, in);
  vkf_graph *cg = attention_graph(d, clamped, causal, 0, cin);
  char label[160];
  snprintf(label, sizeof label, "attention kv_len {%d, %d}%s", lens[0], lens[1],
           causal ? " causal" : "");
  check_reference_clamps(g, in, cg, cin, 4, B * H * NQ * D, label);
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
    char vlabel[200];
    snprintf(vlabel, sizeof vlabel, "%s [%s]", label, variants[i].name);
    vkf_lower_attention_set_force(&variants[i].force);
    op_check(t, g, in, 4, TOL, vlabel);
    vkf_lower_attention_set_force(NULL);
  }
  vkf_graph_destroy(g);
  vkf_graph_destroy(cg);

  /* The unfused chain: the interpreter runs softmax(valid_lens) as built; the device runs the
   * attention node the fusion pass makes of it, valid_lens becoming kv_len. */
  g = attention_graph(d, lens, causal, 1, in);
  cg = attention_graph(d, clamped, causal, 1, cin);
  snprintf(label, sizeof label, "softmax chain valid_lens {%d, %d}%s", lens[0], lens[1],
           causal ? " causal" : "");
  check_reference_clamps(g, in, cg, cin, 4, B * H * NQ * D, label);
  size_t count = B * H * NQ * D;
  float *ref = malloc(count * sizeof(float));
  CHECK_OK(op_run_interp(g, in, 4, 0, ref, count));
  uint32_t rewrites = 0;
  CHECK_OK(vkf_pass_fuse_attention(g, NULL, &rewrites));
  CHECK_MSG(rewrites == 1, "%s: %u fusions", label, rewrites);
  float *out = NULL;
  size_t n = 0;
  CHECK_OK(op_run_device(t, g, in, 4, 0, &out, &n));
  int bad = 0;
  for (size_t i = 0; out && i < count; i++)
    bad += !(fabs(out[i] - ref[i]) <= TOL.atol + TOL.rtol * fabs(ref[i]));
  CHECK_MSG(out && n == count && bad == 0, "%s [fused]: %d elements differ", label, bad);
  free(out);
  free(ref);
  vkf_graph_destroy(g);
  vkf_graph_destroy(cg);
}

/* softmax over x [B, R, NK] with lengths [B] (per_row 0) or [B, R]. */
static vkf_graph *softmax_graph(const data *d, const int32_t *lens, int per_row, int causal,
                                vkf_input_binding *in) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("runtime lens softmax", &g));
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, (const int64_t[]){B, R, NK});
  vkf_value len = vkf_graph_input(g, "len", VKF_I32, per_row ? 2 : 1, (const int64_t[]){B, R});
  vkf_softmax_options o = {.valid_lens = len, .causal = causal};
  vkf_graph_output(g, vkf_softmax(g, "p", x, &o), "y");
  in[0] = (vkf_input_binding){x, d->x, sizeof d->x};
  in[1] = (vkf_input_binding){len, lens, (per_row ? B * R : B) * sizeof(int32_t)};
  return g;
}

static void check_softmax(gpu_test *t, const data *d, const int32_t *lens, int per_row,
                          int causal) {
  int32_t clamped[B * R];
  for (int i = 0; i < (per_row ? B * R : B); i++) clamped[i] = clamp_len(lens[i], NK);
  vkf_input_binding in[2], cin[2];
  vkf_graph *g = softmax_graph(d, lens, per_row, causal, in);
  vkf_graph *cg = softmax_graph(d, clamped, per_row, causal, cin);
  char label[160];
  snprintf(label, sizeof label, "softmax valid_lens %s {%d, %d, ...}%s", per_row ? "[B, R]" : "[B]",
           lens[0], lens[1], causal ? " causal" : "");
  check_reference_clamps(g, in, cg, cin, 2, B * R * NK, label);
  op_check(t, g, in, 2, TOL, label);
  vkf_device_caps gpu_like = op_caps_gpu_like(t);
  char glabel[200];
  snprintf(glabel, sizeof glabel, "%s [discrete-GPU variants]", label);
  op_check_caps(t, g, in, 2, &gpu_like, TOL, glabel);
  vkf_graph_destroy(g);
  vkf_graph_destroy(cg);
}

int main(void) {
  gpu_test t = gpu_test_start();
  static data d;
  fill(&d);
  static const int32_t att_lens[][B] = {
      {-7, 1000}, {INT32_MIN, INT32_MAX}, {NK + 1, -1}, {0, NK}, {5, 2147483000}};
  for (size_t i = 0; i < sizeof att_lens / sizeof att_lens[0]; i++)
    check_attention(&t, &d, att_lens[i], (int)(i % 2));
  static const int32_t row_lens[B * R] = {INT32_MIN, -1, 0, NK + 1, 1000, INT32_MAX, NK, 5};
  check_softmax(&t, &d, row_lens, 1, 0);
  check_softmax(&t, &d, row_lens, 1, 1);
  check_softmax(&t, &d, (const int32_t[B]){-3, 1000}, 0, 0);
  check_softmax(&t, &d, (const int32_t[B]){INT32_MAX, INT32_MIN}, 0, 1);
  return gpu_test_finish(&t);
}
