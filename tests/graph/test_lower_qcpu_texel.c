/* How the quantised CPU kernel (gemm_qcpu.glsl) is given its weights, without a GPU: Q4_1 with
 * K % 64 == 0, Q5_1 and Q4_K through an RG32UI view (QCPU_W2: two words a texel fetch), every other
 * case through the R32UI view of single words, and a storage buffer where the device has neither;
 * and its block of rows and columns by the rows of A: 1, 2, 4 or 8 rows a workgroup, two columns a
 * lane except Q8_0 up to 4 rows.
 * The values of every path are checked against the interpreter by gpu/test_gemm_quant. */
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "tests/graph/desktop_caps.h"
#include "tests/graph/lower_checked.h"

typedef struct {
  int qcpu;               /* the matmul ran the quantised CPU kernel */
  int w2;                 /* with QCPU_W2 */
  vkf_plan_texel b_texel; /* its weights' binding */
  int rows, cols;         /* its QCPU_ROWS and QCPU_COLS */
} lowered_matmul;

/* a [M, K] x w [N, K] of `wdtype` blocks (zeros), lowered with `caps` */
static lowered_matmul lower_one(const vkf_device_caps *caps, vkf_dtype wdtype, int64_t m, int64_t k,
                                int64_t n) {
  lowered_matmul r = {0};
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("qcpu", &g));
  int64_t as[2] = {m, k}, ws[2] = {n, k};
  static uint8_t zeros[64 * 24 * 16]; /* 40 rows of 4 Q5_1 blocks or one K-quant block at most */
  vkf_value a = vkf_graph_input(g, "a", VKF_F32, 2, as);
  vkf_value w = vkf_graph_constant(g, "w", wdtype, 2, ws, zeros);
  vkf_matmul_options o = {.transpose_b = 1};
  vkf_graph_output(g, vkf_matmul(g, "mm", a, w, &o), "y");
  vkf_lowered low;
  if (!lower_checked(g, caps, &low)) {
    vkf_graph_destroy(g);
    return r;
  }
  for (uint32_t i = 0; i < vkf_plan_dispatch_count(low.plan); i++) {
    const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, i);
    if (strcmp(d->shader, "gemm.comp") != 0) continue;
    for (uint32_t j = 0; j < d->define_count; j++) {
      r.qcpu |= strcmp(d->defines[j], "GEMM_QCPU") == 0;
      r.w2 |= strcmp(d->defines[j], "QCPU_W2") == 0;
      if (strncmp(d->defines[j], "QCPU_ROWS=", 10) == 0) r.rows = atoi(d->defines[j] + 10);
      if (strncmp(d->defines[j], "QCPU_COLS=", 10) == 0) r.cols = atoi(d->defines[j] + 10);
    }
    r.b_texel = (vkf_plan_texel)d->bindings[1].texel;
  }
  vkf_lowered_free(&low);
  vkf_graph_destroy(g);
  return r;
}

int main(void) {
  vkf_device_caps cpu = desktop_caps();
  cpu.kind = VKF_DEVICE_KIND_CPU;
  cpu.subgroup_size = cpu.min_subgroup_size = cpu.max_subgroup_size = 8;
  cpu.texel_rgba32f = cpu.texel_r32ui = cpu.texel_rg32ui = 1;
  cpu.max_texel_buffer_elements = 1u << 27; /* lavapipe's */
  cpu.min_texel_buffer_offset_alignment = 16;
  for (int64_t m = 1; m <= 5; m += 4) {
    /* Q4_1, K % 64 == 0: two blocks are five pairs */
    lowered_matmul r = lower_one(&cpu, VKF_Q4_1, m, 128, 40);
    CHECK(r.qcpu && r.w2 && r.b_texel == VKF_TEXEL_RG32UI);
    /* Q4_1, K % 64 == 32: a row ends inside a pair, so single words */
    r = lower_one(&cpu, VKF_Q4_1, m, 96, 40);
    CHECK(r.qcpu && !r.w2 && r.b_texel == VKF_TEXEL_R32UI);
    /* Q5_1: a block is three pairs, whatever K */
    r = lower_one(&cpu, VKF_Q5_1, m, 96, 40);
    CHECK(r.qcpu && r.w2 && r.b_texel == VKF_TEXEL_RG32UI);
    /* Q4_K: a block is 18 pairs */
    r = lower_one(&cpu, VKF_Q4_K, m, 256, 40);
    CHECK(r.qcpu && r.w2 && r.b_texel == VKF_TEXEL_RG32UI);
    /* the other formats: words */
    r = lower_one(&cpu, VKF_Q4_0, m, 128, 40);
    CHECK(r.qcpu && !r.w2 && r.b_texel == VKF_TEXEL_R32UI);
    r = lower_one(&cpu, VKF_Q8_0, m, 128, 40);
    CHECK(r.qcpu && !r.w2 && r.b_texel == VKF_TEXEL_R32UI);
  }
  /* rows a workgroup and columns a lane by the rows of A (M): past a row, two columns share each
   * shuffled A value, and eight rows share each decoded block */
  static const struct {
    vkf_dtype dtype;
    int64_t m, k;
    int rows, cols;
  } blocks[] = {
      {VKF_Q4_1, 1, 128, 1, 2},  {VKF_Q4_1, 2, 128, 2, 2}, {VKF_Q4_1, 3, 128, 4, 2},
      {VKF_Q4_1, 4, 96, 4, 2},   {VKF_Q4_1, 5, 128, 8, 2}, {VKF_Q4_1, 16, 96, 8, 2},
      {VKF_Q4_1, 21, 128, 8, 2}, {VKF_Q4_K, 4, 256, 4, 2}, {VKF_Q6_K, 9, 256, 8, 2},
      {VKF_Q8_0, 1, 128, 1, 1},  {VKF_Q8_0, 2, 128, 2, 1}, {VKF_Q8_0, 4, 96, 4, 1},
      {VKF_Q8_0, 5, 128, 8, 2},  {VKF_Q8_0, 16, 96, 8, 2},
  };
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
    lowered_matmul b = lower_one(&cpu, blocks[i].dtype, blocks[i].m, blocks[i].k, 40);
    CHECK_MSG(b.qcpu && b.rows == blocks[i].rows && b.cols == blocks[i].cols,
              "case %zu: M %lld: rows %d cols %d, want %d and %d", i, (long long)blocks[i].m,
              b.rows, b.cols, blocks[i].rows, blocks[i].cols);
  }
  /* no RG32UI texel buffers: words */
  vkf_device_caps no_rg = cpu;
  no_rg.texel_rg32ui = 0;
  lowered_matmul r = lower_one(&no_rg, VKF_Q4_1, 1, 128, 40);
  CHECK(r.qcpu && !r.w2 && r.b_texel == VKF_TEXEL_R32UI);
  /* no texel buffers at all: a storage buffer of words */
  vkf_device_caps none = cpu;
  none.texel_rgba32f = none.texel_r32ui = none.texel_rg32ui = 0;
  r = lower_one(&none, VKF_Q4_1, 1, 128, 40);
  CHECK(r.qcpu && !r.w2 && r.b_texel == VKF_TEXEL_NONE);
  return test_report();
}
