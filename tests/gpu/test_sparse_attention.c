/* Block-sparse attention (shaders/sparse_attention.comp) against the CPU interpreter, on layouts
 * the kernel was not tuned for: seeded random layouts shared by the heads or one per head, token
 * masks, block sizes 1, 3, 16, 64 and uneven ones, odd head dims, ragged kv_len (fully masked
 * rows), causal, f32 and f16 key biases, f16 storage, strided (fused-QKV) inputs, grouped-query
 * heads, the merged-heads output, tables bound at run time, masks + kv_len + key bias together
 * (packed into one binding); every case under the chooser's body
 * and each forced body (CPU subgroup body, GPU body staged and in place). */
#include <stdint.h>

#include "graph/ir/builder.h"
#include "graph/lower/lower_sparse_attention.h"
#include "tests/op_harness.h"
#include "tests/sparse_random_layout.h"

static const op_tol TOL[] = {[VKF_F32] = {2e-5, 1e-4}, [VKF_F16] = {1e-3, 2e-3}};

typedef struct sp_case {
  const char *label;
  vkf_dtype dtype;
  int64_t b, h, hkv, nq, nk, d, dv;
  uint32_t bq, bk;
  uint32_t layout_heads; /* 1 or H */
  uint32_t keep;         /* key blocks listed, out of 3 */
  uint32_t masks;        /* token masks in the table (0: none) */
  const int32_t *lens;   /* kv_len per batch, NULL: none */
  int bias;              /* 0: none, 1: f32 [B, Nk], 2: f16 [B, Nk] */
  int causal, qkv_view, merge_heads, runtime_tables;
} sp_case;

typedef struct sp_inputs {
  vkf_input_binding bind[8];
  size_t count;
  void *data[8];
  vkf_sparse_layout layout;
} sp_inputs;

static void *make_data(vkf_dtype dtype, size_t n, uint32_t seed, float range) {
  float *f = malloc(n * sizeof(float) + 16);
  op_fill_uniform(f, n, seed, -range, range);
  if (dtype == VKF_F32) return f;
  uint16_t *h = malloc(n * sizeof(uint16_t) + 16);
  op_to_half(f, h, n);
  free(f);
  return h;
}

static vkf_value add_input(vkf_graph *g, sp_inputs *in, const char *name, vkf_dtype dtype,
                           uint32_t rank, const int64_t *shape, uint32_t seed, float range,
                           const int32_t *ints) {
  vkf_value v = vkf_graph_input(g, name, dtype, rank, shape);
  size_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= (size_t)shape[i];
  void *data;
  if (ints) {
    data = malloc(n * sizeof(int32_t) + 4);
    memcpy(data, ints, n * sizeof(int32_t));
  } else {
    data = make_data(dtype, n, seed, range);
  }
  in->data[in->count] = data;
  in->bind[in->count++] = (vkf_input_binding){v, data, n * vkf_dtype_size(dtype)};
  return v;
}

static vkf_value table(vkf_graph *g, sp_inputs *in, const sp_case *c, const char *name,
                       uint32_t rank, const int64_t *shape, const int32_t *data) {
  if (c->runtime_tables) return add_input(g, in, name, VKF_I32, rank, shape, 0, 0, data);
  return vkf_graph_constant(g, name, VKF_I32, rank, shape, data);
}

static vkf_graph *build(const sp_case *c, sp_inputs *in) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create(c->label, &g));
  memset(in, 0, sizeof *in);
  CHECK_OK(sparse_random_layout(&in->layout, c->layout_heads, (uint32_t)c->nq, (uint32_t)c->nk,
                                c->bq, c->bk, c->keep, c->masks, (uint32_t)(c->nq * 31 + c->bq)));
  vkf_value q, k, v;
  if (c->qkv_view) { /* [N, 3, H, D] -> slice -> permute to [1, H, N, D] */
    vkf_value qkv =
        add_input(g, in, "qkv", c->dtype, 4, (int64_t[]){c->nq, 3, c->h, c->d}, 7, 1.0f, NULL);
    vkf_value *dst[3] = {&q, &k, &v};
    for (int s = 0; s < 3; s++)
      *dst[s] = vkf_permute(g, NULL, vkf_slice(g, NULL, qkv, 1, s, s + 1),
                            (const uint32_t[]){1, 2, 0, 3});
  } else {
    q = add_input(g, in, "q", c->dtype, 4, (int64_t[]){c->b, c->h, c->nq, c->d}, 11, 1.0f, NULL);
    k = add_input(g, in, "k", c->dtype, 4, (int64_t[]){c->b, c->hkv, c->nk, c->d}, 23, 1.0f, NULL);
    v = add_input(g, in, "v", c->dtype, 4, (int64_t[]){c->b, c->hkv, c->nk, c->dv}, 37, 1.0f, NULL);
  }
  const vkf_sparse_layout *l = &in->layout;
  vkf_sparse_attention_options o = {
      .block_q = c->bq, .block_k = c->bk, .causal = c->causal, .merge_heads = c->merge_heads};
  vkf_value rows = table(g, in, c, "rows", 2, (int64_t[]){l->heads, l->q_blocks + 1}, l->rows);
  vkf_value cols = table(g, in, c, "cols", 3, (int64_t[]){l->heads, l->entries, 2}, l->cols);
  if (c->masks)
    o.masks = table(g, in, c, "masks", 3,
                    (int64_t[]){l->mask_count, c->bq, vkf_sparse_mask_words(c->bk)}, l->masks);
  if (c->lens) o.kv_len = add_input(g, in, "kv_len", VKF_I32, 1, (int64_t[]){c->b}, 0, 0, c->lens);
  if (c->bias)
    o.key_bias = add_input(g, in, "key_bias", c->bias == 2 ? VKF_F16 : VKF_F32, 2,
                           (int64_t[]){c->b, c->nk}, 41, 3.0f, NULL);
  vkf_graph_output(g, vkf_sparse_attention(g, "sparse", q, k, v, rows, cols, &o), "y");
  CHECK_OK(vkf_graph_status(g));
  return g;
}

static void free_inputs(sp_inputs *in) {
  for (size_t i = 0; i < in->count; i++) free(in->data[i]);
  vkf_sparse_layout_free(&in->layout);
}

static const char *g_filter;

static void run_case(gpu_test *t, const sp_case *c) {
  static const struct {
    const char *name;
    vkf_sparse_force force;
  } bodies[] = {
      {"chooser", {0, 0}},
      {"cpu body", {VKF_SPARSE_BODY_CPU, 0}},
      {"gpu staged", {VKF_SPARSE_BODY_GPU, 1}},
      {"gpu in place", {VKF_SPARSE_BODY_GPU, -1}},
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
    char label[200];
    snprintf(label, sizeof label, "%s [%s]", c->label, bodies[i].name);
    if (g_filter && !strstr(label, g_filter)) continue;
    sp_inputs in;
    vkf_graph *g = build(c, &in);
    vkf_lower_sparse_attention_set_force(&bodies[i].force);
    op_check(t, g, in.bind, in.count, TOL[c->dtype], label);
    vkf_lower_sparse_attention_set_force(NULL);
    free_inputs(&in);
    vkf_graph_destroy(g);
  }
}

int main(int argc, char **argv) {
  g_filter = argc > 1 ? argv[1] : NULL;
  gpu_test t = gpu_test_start();
  static const int32_t lens2[] = {37, -3}; /* batch 1 sees no key: zeros */
  static const int32_t lens3[] = {1, 70, 41};
  /* label, dtype, B, H, Hkv, Nq, Nk, D, Dv, block_q, block_k, layout heads, blocks kept of 3,
   * masks, kv_len, bias, causal, qkv view, merge heads, run-time tables */
  /* clang-format off */
  const sp_case cases[] = {
      {"random shared, blocks 4x4", VKF_F32, 1, 2, 2, 40, 40, 32, 32, 4, 4, 1, 2, 0, NULL, 0, 0, 0, 0, 0},
      {"random per head, masks, blocks 3x5", VKF_F32, 2, 3, 3, 31, 29, 16, 16, 3, 5, 3, 2, 4, NULL, 0, 0, 0, 0, 0},
      {"block 1, odd head dims 7/9", VKF_F32, 1, 2, 1, 13, 17, 7, 9, 1, 1, 2, 2, 0, NULL, 0, 0, 0, 0, 0},
      {"block 16, kv_len, f32 bias", VKF_F32, 2, 2, 2, 50, 50, 12, 20, 16, 16, 2, 2, 0, lens2, 1, 0, 0, 0, 0},
      {"kv_len with masks", VKF_F32, 3, 2, 2, 70, 70, 16, 16, 8, 8, 1, 2, 3, lens3, 0, 0, 0, 0, 0},
      {"block 64, causal, masks, f32 bias", VKF_F32, 1, 2, 2, 130, 130, 32, 32, 64, 64, 1, 3, 2, NULL, 1, 1, 0, 0, 0},
      {"causal Nq<Nk, grouped heads, f16", VKF_F16, 3, 4, 2, 9, 70, 24, 24, 4, 8, 4, 2, 0, lens3, 2, 1, 0, 0, 0},
      {"f16, d 10, blocks 8x33", VKF_F16, 1, 2, 2, 40, 70, 10, 10, 8, 33, 1, 2, 3, NULL, 2, 0, 0, 0, 0},
      {"fused qkv view", VKF_F32, 1, 2, 2, 36, 36, 16, 16, 6, 6, 2, 2, 1, NULL, 0, 0, 1, 0, 0},
      {"merged heads", VKF_F32, 2, 3, 3, 21, 21, 8, 8, 4, 4, 3, 2, 2, NULL, 1, 0, 0, 1, 0},
      {"run-time tables", VKF_F32, 1, 2, 2, 33, 33, 16, 16, 5, 7, 2, 2, 2, NULL, 0, 1, 0, 0, 1},
      {"masks + kv_len + f16 bias (packed)", VKF_F32, 3, 2, 2, 37, 37, 16, 16, 4, 6, 2, 2, 3, lens3, 2, 1, 0, 0, 0},
      {"masks + kv_len + f32 bias, f16, merged", VKF_F16, 2, 2, 2, 33, 33, 8, 8, 5, 5, 1, 2, 2, lens2, 1, 0, 0, 1, 0},
      {"dense layout, 12 rows per block", VKF_F32, 1, 1, 1, 60, 60, 64, 64, 12, 16, 1, 3, 0, NULL, 0, 0, 0, 0, 0},
  };
  /* clang-format on */

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&t, &cases[i]);
  return gpu_test_finish(&t);
}
