/* How the quantised CPU kernel (gemm_qcpu.glsl) is given its weights, without a GPU: Q4_1 with
 * K % 64 == 0, Q5_1 and Q4_K through an RG32UI view (QCPU_W2: two words a texel fetch), every other
 * case through the R32UI view of single words, and a storage buffer where the device has neither;
 * and its block of rows and columns by the rows of A: 1, 2, 4 or 8 rows a workgroup, two columns a
 * lane except Q8_0 up to 4 rows; Q8_0 weights of K % 64 == 0 and a multiple of 16 rows read from
 * a copy with their rows 16 to a group (QCPU_X16), at two columns a lane at every row count, and
 * that copy's bytes (vkf_plan_interleave_fill).
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
  int x16;                /* with QCPU_X16, reading a copy of w interleaved by 16 rows */
} lowered_matmul;

/* a [M, K] x w [N, K] of `wdtype` blocks (zeros), lowered with `caps` */
static lowered_matmul lower_one(const vkf_device_caps *caps, vkf_dtype wdtype, int64_t m, int64_t k,
                                int64_t n) {
  lowered_matmul r = {0};
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("qcpu", &g));
  int64_t as[2] = {m, k}, ws[2] = {n, k};
  static uint8_t zeros[64 * 24 * 16]; /* 48 rows of 4 Q8_0 blocks or one K-quant block at most */
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
    int x16_define = 0;
    for (uint32_t j = 0; j < d->define_count; j++)
      x16_define |= strcmp(d->defines[j], "QCPU_X16") == 0;
    const vkf_plan_buffer *wb = vkf_plan_buffer_get(low.plan, d->bindings[1].buffer);
    int copy = wb->interleave.rows == 16 && wb->interleave.chunk == 68 &&
               wb->interleave.row_bytes == (uint64_t)(k / 32 * 34) &&
               wb->size == (uint64_t)(n * (k / 32) * 34) &&
               vkf_plan_buffer_get(low.plan, wb->interleave.source)->kind == VKF_PLAN_BUFFER_WEIGHT;
    CHECK_MSG(x16_define == copy, "QCPU_X16 %d, interleaved copy bound %d", x16_define, copy);
    r.x16 = x16_define && copy;
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
  /* Q8_0, K % 64 == 0, N % 16 == 0: the interleaved copy, two columns a lane at every M */
  static const struct {
    int64_t m, k, n;
    int x16, rows, cols;
  } x16[] = {
      {1, 128, 48, 1, 1, 2}, {4, 64, 16, 1, 4, 2}, {16, 128, 32, 1, 8, 2},
      {1, 128, 40, 0, 1, 1}, {1, 96, 48, 0, 1, 1}, {16, 96, 32, 0, 8, 2},
  };
  for (size_t i = 0; i < sizeof x16 / sizeof x16[0]; i++) {
    lowered_matmul b = lower_one(&cpu, VKF_Q8_0, x16[i].m, x16[i].k, x16[i].n);
    CHECK_MSG(b.qcpu && b.x16 == x16[i].x16 && b.rows == x16[i].rows && b.cols == x16[i].cols,
              "x16 case %zu: x16 %d rows %d cols %d", i, b.x16, b.rows, b.cols);
  }
  /* the copy's bytes: chunk j of row r of group g at ((g * chunks + j) * 16 + r % 16) * chunk;
   * a second request for the same layout gives the same buffer */
  {
    vkf_plan *plan = vkf_plan_create();
    uint32_t src = vkf_plan_add_buffer(plan, VKF_PLAN_BUFFER_WEIGHT, "w", 32 * 136);
    uint32_t il = vkf_plan_add_interleaved(plan, src, 32, 136, 16, 68);
    CHECK(il != src && vkf_plan_add_interleaved(plan, src, 32, 136, 16, 68) == il);
    CHECK(vkf_plan_add_interleaved(plan, src, 32, 136, 8, 68) != il);
    static uint8_t in[32 * 136], out[32 * 136];
    for (size_t i = 0; i < sizeof in; i++) in[i] = (uint8_t)(i * 7 + i / 136);
    vkf_plan_interleave_fill(vkf_plan_buffer_get(plan, il), in, out);
    int bad = 0;
    for (int r = 0; r < 32; r++)
      for (int j = 0; j < 2; j++)
        bad += memcmp(out + ((r / 16 * 2 + j) * 16 + r % 16) * 68, in + r * 136 + j * 68, 68) != 0;
    CHECK_MSG(bad == 0, "%d chunks misplaced", bad);
    vkf_plan_destroy(plan);
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
