/* Block-sparse attention in the IR and the interpreter: the reference equals the dense attention
 * reference given the same visibility as an additive bias (random layouts with per-head rows,
 * token masks, kv_len, causal, key bias, merge_heads), and every bad layout is a one-line error
 * when the node is built or, for tables bound at run time, when it runs. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "graph/ir/sparse_layout.h"
#include "tests/sparse_random_layout.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}
static float frand(void) {
  return (float)(rnd() % 20001) / 10000.0f - 1.0f;
}

static int visible(const vkf_sparse_layout *l, uint32_t h, int64_t i, int64_t j) {
  uint32_t lh = l->heads == 1 ? 0 : h, words = vkf_sparse_mask_words(l->block_k);
  const int32_t *rows = l->rows + lh * (l->q_blocks + 1);
  const int32_t *cols = l->cols + (size_t)lh * l->entries * 2;
  int64_t qb = i / l->block_q;
  for (int32_t e = rows[qb]; e < rows[qb + 1]; e++) {
    if (cols[2 * e] != j / l->block_k) continue;
    int32_t m = cols[2 * e + 1];
    if (m < 0) return 1;
    int64_t r = i % l->block_q, jj = j % l->block_k;
    return (l->masks[(m * l->block_q + r) * words + jj / 32] >> (jj % 32)) & 1;
  }
  return 0;
}

typedef struct sparse_case {
  uint32_t b, h, hk, nq, nk, d, dv, bq, bk, layout_heads;
  int causal, kv_len, key_bias, merge_heads;
} sparse_case;

static void run_case(const sparse_case *c) {
  vkf_sparse_layout l;
  CHECK_OK(sparse_random_layout(&l, c->layout_heads, c->nq, c->nk, c->bq, c->bk, 2, 3,
                                c->nq * 7 + c->bk));
  size_t nqv = (size_t)c->b * c->h * c->nq * c->d, nkv = (size_t)c->b * c->hk * c->nk * c->d;
  size_t nvv = (size_t)c->b * c->hk * c->nk * c->dv, ny = (size_t)c->b * c->h * c->nq * c->dv;
  size_t nbias = (size_t)c->b * c->h * c->nq * c->nk;
  float *q = malloc(nqv * 4), *k = malloc(nkv * 4), *v = malloc(nvv * 4),
        *kb = malloc(c->b * c->nk * 4);
  float *bias = malloc(nbias * 4), *ys = malloc(ny * 4), *yd = malloc(ny * 4);
  int32_t *lens = malloc(c->b * 4);
  for (size_t i = 0; i < nqv; i++) q[i] = frand();
  for (size_t i = 0; i < nkv; i++) k[i] = frand();
  for (size_t i = 0; i < nvv; i++) v[i] = frand();
  for (size_t i = 0; i < (size_t)c->b * c->nk; i++) kb[i] = c->key_bias ? frand() : 0;
  for (uint32_t b = 0; b < c->b; b++)
    lens[b] = c->kv_len ? (int32_t)(rnd() % (c->nk + 2)) - 1 : (int32_t)c->nk;

  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("sparse", &g));
  vkf_value vq = vkf_graph_constant(g, "q", VKF_F32, 4, SHAPE(c->b, c->h, c->nq, c->d), q);
  vkf_value vk = vkf_graph_constant(g, "k", VKF_F32, 4, SHAPE(c->b, c->hk, c->nk, c->d), k);
  vkf_value vv = vkf_graph_constant(g, "v", VKF_F32, 4, SHAPE(c->b, c->hk, c->nk, c->dv), v);
  vkf_value rows =
      vkf_graph_constant(g, "rows", VKF_I32, 2, SHAPE(l.heads, l.q_blocks + 1), l.rows);
  vkf_value cols = vkf_graph_constant(g, "cols", VKF_I32, 3, SHAPE(l.heads, l.entries, 2), l.cols);
  vkf_value masks = vkf_graph_constant(
      g, "masks", VKF_I32, 3, SHAPE(l.mask_count, c->bq, vkf_sparse_mask_words(c->bk)), l.masks);
  vkf_value vlen = vkf_graph_constant(g, "kv_len", VKF_I32, 1, SHAPE(c->b), lens);
  vkf_value vkb = vkf_graph_constant(g, "key_bias", VKF_F32, 2, SHAPE(c->b, c->nk), kb);
  vkf_sparse_attention_options so = {.block_q = c->bq,
                                     .block_k = c->bk,
                                     .causal = c->causal,
                                     .merge_heads = c->merge_heads,
                                     .masks = masks,
                                     .kv_len = c->kv_len ? vlen : VKF_NO_VALUE,
                                     .key_bias = c->key_bias ? vkb : VKF_NO_VALUE};
  vkf_value ys_v = vkf_sparse_attention(g, "sparse", vq, vk, vv, rows, cols, &so);
  /* The dense reference sees the layout as a bias of -1e30 on hidden keys (plus the key bias);
   * kv_len and causal go through the dense op's own masks. Rows with no visible key are zeros
   * in the sparse op, a uniform average in the dense one: compared with 0 below. */
  vkf_value bias_v =
      vkf_graph_constant(g, "bias", VKF_F32, 4, SHAPE(c->b, c->h, c->nq, c->nk), bias);
  vkf_attention_options ao = {
      .causal = c->causal, .kv_len = c->kv_len ? vlen : VKF_NO_VALUE, .bias = bias_v};
  vkf_value yd_v = vkf_attention(g, "dense", vq, vk, vv, &ao);
  unsigned char *empty = calloc((size_t)c->b * c->h * c->nq, 1);
  for (uint32_t b = 0; b < c->b; b++)
    for (uint32_t h = 0; h < c->h; h++)
      for (uint32_t i = 0; i < c->nq; i++) {
        int any = 0;
        int64_t limit = lens[b] < 0 ? 0 : lens[b] > (int32_t)c->nk ? (int64_t)c->nk : lens[b];
        for (uint32_t j = 0; j < c->nk; j++) {
          int vis = visible(&l, h, i, j);
          bias[(((size_t)b * c->h + h) * c->nq + i) * c->nk + j] =
              kb[b * c->nk + j] + (vis ? 0 : -1e30f);
          any |= vis && j < limit && (!c->causal || (int64_t)j <= (int64_t)i + c->nk - c->nq);
        }
        empty[((size_t)b * c->h + h) * c->nq + i] = !any;
      }
  CHECK_OK(vkf_graph_status(g));
  vkf_interp *it = NULL;
  CHECK_OK(vkf_interp_create(g, &it));
  CHECK_OK(vkf_interp_run(it));
  CHECK_OK(vkf_interp_get_f32(it, ys_v, ys, ny));
  CHECK_OK(vkf_interp_get_f32(it, yd_v, yd, ny));
  vkf_interp_destroy(it);
  double worst = 0;
  size_t empties = 0;
  for (uint32_t b = 0; b < c->b; b++)
    for (uint32_t h = 0; h < c->h; h++)
      for (uint32_t i = 0; i < c->nq; i++) {
        int e = empty[((size_t)b * c->h + h) * c->nq + i];
        empties += e;
        size_t at = c->merge_heads ? (((size_t)b * c->nq + i) * c->h + h) * c->dv
                                   : (((size_t)b * c->h + h) * c->nq + i) * c->dv;
        size_t dense_at = (((size_t)b * c->h + h) * c->nq + i) * c->dv;
        for (uint32_t x = 0; x < c->dv; x++) {
          double diff = fabs(ys[at + x] - (e ? 0.0f : yd[dense_at + x]));
          if (diff > worst) worst = diff;
        }
      }
  CHECK_MSG(worst <= 1e-6, "B%u H%u Nq%u Nk%u blocks %ux%u: max diff %g", c->b, c->h, c->nq, c->nk,
            c->bq, c->bk, worst);
  CHECK_MSG(empties > 0 || !c->kv_len, "no empty row exercised");
  vkf_graph_destroy(g);
  vkf_sparse_layout_free(&l);
  free(q), free(k), free(v), free(kb), free(bias), free(ys), free(yd), free(lens), free(empty);
}

static void test_matches_dense(void) {
  static const sparse_case cases[] = {
      {1, 2, 2, 13, 13, 7, 5, 3, 4, 2, 0, 0, 0, 0},  {2, 4, 2, 17, 21, 9, 9, 5, 2, 1, 1, 1, 1, 0},
      {2, 2, 1, 8, 40, 10, 3, 1, 33, 2, 1, 1, 0, 1}, {1, 3, 3, 33, 33, 4, 4, 16, 16, 3, 0, 1, 1, 1},
      {3, 1, 1, 5, 7, 2, 2, 8, 8, 1, 1, 0, 1, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
}

/* Builds a node over hand-written tables; returns the sticky status (or VKF_OK). */
static vkf_status build(const int32_t *rows, int64_t nrows, const int32_t *cols, int64_t entries,
                        const int32_t *masks, int64_t nmasks, int runtime) {
  static float q[1 * 1 * 8 * 4], kv[1 * 1 * 8 * 4];
  vkf_graph *g = NULL;
  vkf_status st = vkf_graph_create("bad", &g);
  if (st) return st;
  vkf_value vq = vkf_graph_constant(g, "q", VKF_F32, 4, SHAPE(1, 1, 8, 4), q);
  vkf_value vk = vkf_graph_constant(g, "k", VKF_F32, 4, SHAPE(1, 1, 8, 4), kv);
  vkf_value r = runtime ? vkf_graph_input(g, "rows", VKF_I32, 2, SHAPE(1, nrows))
                        : vkf_graph_constant(g, "rows", VKF_I32, 2, SHAPE(1, nrows), rows);
  vkf_value c = runtime ? vkf_graph_input(g, "cols", VKF_I32, 3, SHAPE(1, entries, 2))
                        : vkf_graph_constant(g, "cols", VKF_I32, 3, SHAPE(1, entries, 2), cols);
  vkf_sparse_attention_options o = {.block_q = 4, .block_k = 4};
  if (masks) o.masks = vkf_graph_constant(g, "m", VKF_I32, 3, SHAPE(nmasks, 4, 1), masks);
  vkf_value y = vkf_sparse_attention(g, "sa", vq, vk, vk, r, c, &o);
  st = vkf_graph_status(g);
  if (!st && runtime) {
    vkf_interp *it = NULL;
    st = vkf_interp_create(g, &it);
    if (!st) st = vkf_interp_set(it, r, rows, (size_t)nrows * 4);
    if (!st) st = vkf_interp_set(it, c, cols, (size_t)entries * 8);
    if (!st) st = vkf_interp_run(it);
    vkf_interp_destroy(it);
  }
  (void)y;
  vkf_graph_destroy(g);
  return st;
}

static void test_bad_layouts(void) {
  static const int32_t m1[4] = {1, 3, 7, 15};
  for (int runtime = 0; runtime < 2; runtime++) {
    CHECK_OK(build((int32_t[]){0, 1, 2}, 3, (int32_t[]){0, -1, 1, -1}, 2, NULL, 0, runtime));
    CHECK_STATUS(build((int32_t[]){0, 1, 2}, 3, (int32_t[]){0, -1, 2, -1}, 2, NULL, 0, runtime),
                 VKF_STATUS_INVALID_ARGUMENT, "query block 1, entry 1: key block 2 out of range");
    CHECK_STATUS(build((int32_t[]){0, 2, 2}, 3, (int32_t[]){1, -1, 0, -1}, 2, NULL, 0, runtime),
                 VKF_STATUS_INVALID_ARGUMENT, "key block 0 unsorted");
    CHECK_STATUS(build((int32_t[]){0, 2, 2}, 3, (int32_t[]){1, -1, 1, -1}, 2, NULL, 0, runtime),
                 VKF_STATUS_INVALID_ARGUMENT, "key block 1 repeated");
    CHECK_STATUS(build((int32_t[]){0, 2, 1}, 3, (int32_t[]){0, -1, 1, -1}, 2, NULL, 0, runtime),
                 VKF_STATUS_INVALID_ARGUMENT, "bad row offsets 2..1");
    CHECK_STATUS(build((int32_t[]){0, 1, 3}, 3, (int32_t[]){0, -1, 1, -1}, 2, NULL, 0, runtime),
                 VKF_STATUS_INVALID_ARGUMENT, "bad row offsets 1..3");
    CHECK_STATUS(build((int32_t[]){1, 1, 2}, 3, (int32_t[]){0, -1, 1, -1}, 2, NULL, 0, runtime),
                 VKF_STATUS_INVALID_ARGUMENT, "row offsets start at 1");
    CHECK_STATUS(build((int32_t[]){0, 1, 2}, 3, (int32_t[]){0, 1, 1, -2}, 2, m1, 1, runtime),
                 VKF_STATUS_INVALID_ARGUMENT, "mask id 1 out of range");
  }
  CHECK_STATUS(build((int32_t[]){0, 1, 2, 2}, 4, (int32_t[]){0, -1, 1, -1}, 2, NULL, 0, 0),
               VKF_STATUS_SHAPE, "rows \"rows\" has shape [1,4], expected [1,3]");
}

int main(void) {
  test_matches_dense();
  test_bad_layouts();
  return test_report();
}
