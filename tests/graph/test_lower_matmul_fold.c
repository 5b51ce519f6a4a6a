/* Batches of one weight matrix lowered as rows of one GEMM (graph/lower/lower_matmul.c,
 * fold_batches), without a GPU: a batched decode step's [B, 1, K] x W and a prompt batch's
 * [B, S, K] x W are one grid of B * S rows (grid z 1), so the weights are read once, not once a
 * batch; a B with batches of its own, a transposed A and a device whose narrow workgroups fit no
 * tile for the folded rows keep the batches as grid z. The results of folded matmuls are checked
 * against the interpreter by gpu/test_gemm and gpu/test_gemm_quant (their batched cases). */
#include <string.h>

#include "graph/ir/builder.h"
#include "tests/graph/desktop_caps.h"
#include "tests/graph/lower_checked.h"

/* Lowers `g` with `caps` and returns its matmul dispatch's grid z (0 on failure). */
static uint32_t lower_z(vkf_graph *g, const vkf_device_caps *caps) {
  vkf_lowered low;
  if (!lower_checked(g, caps, &low)) return 0;
  uint32_t z = 0;
  for (uint32_t i = 0; i < vkf_plan_dispatch_count(low.plan); i++) {
    const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, i);
    if (strcmp(d->shader, "gemm.comp") == 0) z = d->groups[2];
  }
  vkf_lowered_free(&low);
  return z;
}

/* a [B, M, K] (or its [B, K, M] transposed view) x w [N, K] (or per-batch [B, N, K]) */
static vkf_graph *batched(vkf_dtype wdtype, int64_t b, int64_t m, int64_t k, int64_t n,
                          int w_batched, int a_transposed) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("fold", &g));
  int64_t as[3] = {b, m, k}, at[3] = {b, k, m};
  static const uint32_t swap[3] = {0, 2, 1};
  vkf_value a = a_transposed ? vkf_permute(g, "at", vkf_graph_input(g, "a", VKF_F32, 3, at), swap)
                             : vkf_graph_input(g, "a", VKF_F32, 3, as);
  vkf_value w;
  if (w_batched) {
    int64_t ws[3] = {b, n, k};
    w = vkf_graph_input(g, "w", VKF_F32, 3, ws);
  } else {
    int64_t ws[2] = {n, k};
    static uint8_t zeros[34 * 64 * 64]; /* Q8_0: [64, 64] is 128 blocks of 34 bytes */
    static float fzeros[64 * 64];
    w = vkf_graph_constant(g, "w", wdtype, 2, ws, wdtype == VKF_F32 ? (void *)fzeros : zeros);
  }
  vkf_matmul_options o = {.transpose_b = 1};
  vkf_graph_output(g, vkf_matmul(g, "mm", a, w, &o), "y");
  return g;
}

int main(void) {
  vkf_device_caps desk = desktop_caps();
  vkf_device_caps cpu = desk;
  cpu.kind = VKF_DEVICE_KIND_CPU;
  cpu.subgroup_size = cpu.min_subgroup_size = cpu.max_subgroup_size = 8;
  cpu.texel_r32ui = cpu.texel_rgba32f = 1;
  const vkf_device_caps *devices[2] = {&desk, &cpu};
  for (int dv = 0; dv < 2; dv++) {
    const vkf_device_caps *caps = devices[dv];
    for (int q = 0; q < 2; q++) {
      vkf_dtype wd = q ? VKF_Q8_0 : VKF_F32;
      /* a batched decode step: 4 sequences of one token against one weight */
      vkf_graph *g = batched(wd, 4, 1, 64, 64, 0, 0);
      CHECK(lower_z(g, caps) == 1);
      vkf_graph_destroy(g);
      /* a prompt batch: 3 x 5 rows */
      g = batched(wd, 3, 5, 64, 64, 0, 0);
      CHECK(lower_z(g, caps) == 1);
      vkf_graph_destroy(g);
    }
    /* B with a matrix a batch: the batches stay a grid axis */
    vkf_graph *g = batched(VKF_F32, 4, 1, 64, 64, 1, 0);
    CHECK(lower_z(g, caps) == 4);
    vkf_graph_destroy(g);
  }
  /* A's rows transposed ([B, K, M] viewed as [B, M, K]): rows are not one run of a stride */
  vkf_graph *g = batched(VKF_F32, 3, 5, 64, 64, 0, 1);
  CHECK(lower_z(g, &desk) == 3);
  vkf_graph_destroy(g);
  /* workgroups of at most 32 invocations: a GEMV takes 5 rows, no tile fits 10, so the two
   * batches of 5 stay batches rather than failing to lower */
  vkf_device_caps narrow = desk;
  narrow.max_workgroup_invocations = 32;
  g = batched(VKF_Q8_0, 2, 5, 64, 64, 0, 0);
  CHECK(lower_z(g, &narrow) == 2);
  vkf_graph_destroy(g);
  return test_report();
}
