/* Layout builders (graph/ir/sparse_patterns.c): the token visibility a built layout gives (blocks
 * listed, mask bits) equals the patterns' definitions written out here pair by pair (window,
 * dilated window, the Sparse Transformer's strided and fixed patterns with the op's causal cut as
 * in Child et al. 2019, global tokens), random blocks are distinct, seeded and per head, dense
 * block tables, pattern text, and the one-line errors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/sparse_layout.h"
#include "tests/test_util.h"

static int layout_visible(const vkf_sparse_layout *l, uint32_t h, int64_t i, int64_t j) {
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

typedef int (*pair_fn)(int64_t i, int64_t j, int64_t n);
static int64_t W_L, W_R, DIL, L, C, G;
static int window(int64_t i, int64_t j, int64_t n) {
  (void)n;
  return j >= i - W_L && j <= i + W_R;
}
static int dilated(int64_t i, int64_t j, int64_t n) {
  return window(i, j, n) && llabs(i - j) % DIL == 0;
}
/* Child et al.: A1 = {max(0, i - l) .. i}, A2 = {j : (i - j) mod l = 0}, both j <= i. */
static int strided_causal(int64_t i, int64_t j, int64_t n) {
  (void)n;
  return j <= i && (j >= i - L + 1 || (i - j) % L == 0);
}
/* A1 = {j : floor(j / l) = floor(i / l)}, A2 = {j : j mod l in {l - c, ..., l - 1}}, j <= i. */
static int fixed_causal(int64_t i, int64_t j, int64_t n) {
  (void)n;
  return j <= i && (j / L == i / L || j % L >= L - C);
}
static int global_window(int64_t i, int64_t j, int64_t n) {
  return window(i, j, n) || i < G || j < G;
}

/* Every pair of an n x n square: the layout (with a causal cut when `causal`) against `want`. */
static void check_pattern(const char *label, const vkf_sparse_pattern *p, uint32_t n, int causal,
                          pair_fn want) {
  vkf_sparse_layout l;
  vkf_status st = vkf_sparse_layout_from_pattern(p, 1, n, n, &l);
  CHECK_MSG(st == VKF_OK, "%s: %s", label, vkf_status_message(st));
  if (st) {
    vkf_status_free(st);
    return;
  }
  int bad = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++)
      bad += (layout_visible(&l, 0, i, j) && (!causal || j <= i)) != want(i, j, n);
  CHECK_MSG(bad == 0, "%s: %d pairs differ", label, bad);
  vkf_sparse_layout_free(&l);
}

static void test_patterns(void) {
  static const uint32_t blocks[][2] = {{1, 1}, {3, 5}, {4, 4}, {16, 16}, {8, 33}, {64, 64}};
  for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
    vkf_sparse_pattern p = {.block_q = blocks[b][0], .block_k = blocks[b][1]};
    char label[96];
    W_L = 5, W_R = 2;
    p.window_left = 5, p.window_right = 2;
    snprintf(label, sizeof label, "window 5/2, blocks %ux%u", p.block_q, p.block_k);
    check_pattern(label, &p, 77, 0, window);
    W_L = W_R = 6, DIL = 3, p.window_left = p.window_right = 6, p.dilation = 3;
    snprintf(label, sizeof label, "dilated 6/3, blocks %ux%u", p.block_q, p.block_k);
    check_pattern(label, &p, 70, 0, dilated);
    p = (vkf_sparse_pattern){.block_q = blocks[b][0], .block_k = blocks[b][1], .stride = 7};
    L = 7;
    snprintf(label, sizeof label, "strided 7, blocks %ux%u", p.block_q, p.block_k);
    check_pattern(label, &p, 90, 1, strided_causal);
    p = (vkf_sparse_pattern){
        .block_q = blocks[b][0], .block_k = blocks[b][1], .fixed_block = 8, .fixed_summary = 2};
    L = 8, C = 2;
    snprintf(label, sizeof label, "fixed 8/2, blocks %ux%u", p.block_q, p.block_k);
    check_pattern(label, &p, 90, 1, fixed_causal);
    p = (vkf_sparse_pattern){.block_q = blocks[b][0],
                             .block_k = blocks[b][1],
                             .window_left = 3,
                             .window_right = 3,
                             .global_tokens = 2};
    W_L = W_R = 3, G = 2;
    snprintf(label, sizeof label, "window 3 + global 2, blocks %ux%u", p.block_q, p.block_k);
    check_pattern(label, &p, 83, 0, global_window);
  }
  /* A window as wide as the sequence lists every block whole: no masks at all. */
  vkf_sparse_pattern p = {.block_q = 8, .block_k = 8, .window_left = 100, .window_right = 100};
  vkf_sparse_layout l;
  CHECK_OK(vkf_sparse_layout_from_pattern(&p, 1, 50, 50, &l));
  CHECK(l.mask_count == 0 && l.rows[l.q_blocks] == 7 * 7);
  vkf_sparse_layout_free(&l);
}

static void test_random(void) {
  vkf_sparse_pattern p = {.block_q = 4,
                          .block_k = 4,
                          .window_left = 1,
                          .window_right = 1,
                          .random_blocks = 3,
                          .seed = 7};
  vkf_sparse_layout a, b, c;
  CHECK_OK(vkf_sparse_layout_from_pattern(&p, 2, 64, 64, &a));
  CHECK_OK(vkf_sparse_layout_from_pattern(&p, 2, 64, 64, &b));
  p.seed = 8;
  CHECK_OK(vkf_sparse_layout_from_pattern(&p, 2, 64, 64, &c));
  CHECK(a.entries == b.entries && !memcmp(a.cols, b.cols, (size_t)a.heads * a.entries * 8));
  CHECK(a.entries != c.entries || memcmp(a.cols, c.cols, (size_t)a.heads * a.entries * 8));
  /* heads differ; each query block lists its window blocks plus exactly 3 more */
  CHECK(memcmp(a.cols, a.cols + a.entries * 2, (size_t)a.entries * 8) != 0);
  int bad = 0;
  for (uint32_t h = 0; h < 2; h++)
    for (uint32_t qb = 0; qb < a.q_blocks; qb++) {
      int32_t n = a.rows[h * (a.q_blocks + 1) + qb + 1] - a.rows[h * (a.q_blocks + 1) + qb];
      int32_t window_blocks = 1 + (qb > 0) + (qb + 1 < a.q_blocks);
      bad += n != window_blocks + 3;
    }
  CHECK_MSG(bad == 0, "%d query blocks without exactly 3 random blocks", bad);
  vkf_sparse_layout_free(&a);
  vkf_sparse_layout_free(&b);
  vkf_sparse_layout_free(&c);
}

static void test_blocks_and_text(void) {
  static const int32_t dense[2 * 2 * 3] = {1, 0, 1, 0, 0, 1, /* head 1: */ 0, 1, 0, 1, 1, 1};
  vkf_sparse_layout l;
  CHECK_OK(vkf_sparse_layout_from_blocks(dense, 2, 8, 10, 4, 4, &l));
  CHECK(l.entries == 4 && l.rows[2] == 3 && l.rows[5] == 4 && l.cols[2] == 2 && l.cols[4] == 2);
  CHECK(layout_visible(&l, 1, 5, 9) && !layout_visible(&l, 1, 0, 0));
  vkf_sparse_layout_free(&l);

  vkf_sparse_pattern p = {0};
  CHECK_OK(vkf_sparse_pattern_parse("window:256,global:2,random:1,seed:7", &p));
  CHECK(p.window_left == 128 && p.window_right == 128 && p.global_tokens == 2 &&
        p.random_blocks == 1 && p.seed == 7);
  CHECK_OK(vkf_sparse_pattern_parse("window:5:0,strided:16,fixed:16:4,dilated:8:2", &p));
  CHECK(p.window_left == 4 && p.stride == 16 && p.fixed_block == 16 && p.fixed_summary == 4 &&
        p.dilation == 2);
  CHECK_STATUS(vkf_sparse_pattern_parse("window:256,globl:2", &p), VKF_STATUS_INVALID_ARGUMENT,
               "bad item \"globl:2\"");
  CHECK_STATUS(vkf_sparse_pattern_parse("window:-3", &p), VKF_STATUS_INVALID_ARGUMENT,
               "bad item \"window:-3\"");
  CHECK_STATUS(vkf_sparse_pattern_parse("fixed:4:5", &p), VKF_STATUS_INVALID_ARGUMENT,
               "bad item \"fixed:4:5\"");
  CHECK_STATUS(vkf_sparse_pattern_parse("window:4,", &p), VKF_STATUS_INVALID_ARGUMENT,
               "ends with a comma");
}

static void test_errors(void) {
  vkf_sparse_layout l;
  vkf_sparse_pattern p = {.block_q = 4, .block_k = 4, .window_left = 2, .window_right = 2};
  p.forbid_wide_window = 1;
  p.window_left = 40;
  CHECK_STATUS(vkf_sparse_layout_from_pattern(&p, 1, 32, 32, &l), VKF_STATUS_INVALID_ARGUMENT,
               "window 40/2 tokens is wider than the sequence (32 keys)");
  /* 40 queries against 8 keys with a band around the aligned diagonal: the first query blocks
   * see nothing. */
  p = (vkf_sparse_pattern){
      .block_q = 4, .block_k = 4, .window_left = 1, .window_right = 1, .require_rows = 1};
  CHECK_STATUS(vkf_sparse_layout_from_pattern(&p, 1, 40, 8, &l), VKF_STATUS_INVALID_ARGUMENT,
               "head 0, query block 0 lists no key block");
  p.require_rows = 0;
  CHECK_OK(vkf_sparse_layout_from_pattern(&p, 1, 40, 8, &l));
  vkf_sparse_layout_free(&l);
  p.block_q = 0;
  CHECK_STATUS(vkf_sparse_layout_from_pattern(&p, 1, 40, 8, &l), VKF_STATUS_INVALID_ARGUMENT,
               "blocks 0x4");
}

int main(void) {
  test_patterns();
  test_random();
  test_blocks_and_text();
  test_errors();
  return test_report();
}
