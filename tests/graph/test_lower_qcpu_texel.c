/* How the quantised CPU kernel (gemm_qcpu.glsl) is given its weights, without a GPU: Q4_1 with
 * K % 64 == 0, Q5_1 and Q4_K through an RG32UI view (QCPU_W2: two words a texel fetch), every other
 * case through the R32UI view of single words, and a storage buffer where the device has neither.
 * The values of both paths are checked against the interpreter by gpu/test_gemm_quant. */
#include <string.h>

#include "graph/ir/builder.h"
#include "tests/graph/desktop_caps.h"
#include "tests/graph/lower_checked.h"

typedef struct {
  int qcpu;               /* the matmul ran the quantised CPU kernel */
  int w2;                 /* with QCPU_W2 */
  vkf_plan_texel b_texel; /* its weights' binding */
} lowered_matmul;

/* a [M, K] x w [N, K] of `wdtype` blocks (zeros), lowered with `caps` */
static lowered_matmul lower_one(const vkf_device_caps *caps, vkf_dtype wdtype, int64_t m, int64_t k,
                                int64_t n) {
  lowered_matmul r = {0};
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("qcpu", &g));
  int64_t as[2] = {m, k}, ws[2] = {n, k};
  static uint8_t zeros[64 * 24 * 16]; /* 40 rows of 4 Q5_1 blocks or one Q4_K block at most */
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
