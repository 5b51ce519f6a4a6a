/* Arithmetic intensity of the shared-memory GEMM bodies from their tiles: what the workgroups move
 * per k-step, as the shaders are written (shaders/gemm_tiled.glsl, gemm_coopmat.glsl,
 * gemm_splitk.glsl); the count ignores caches, so global bytes are the loads and stores the kernel
 * issues. Partial tiles at the edges count whole (their staging runs whole, zero-filled). */
#include "tools/vkf/bench_gemm_intensity.h"

static double div_up(uint64_t a, uint64_t b) {
  return (double)((a + b - 1) / b);
}

vkf_gemm_intensity vkf_bench_gemm_intensity(const vkf_gemm_variant *v, uint64_t m, uint64_t n,
                                            uint64_t k, uint32_t es, double b_es) {
  vkf_gemm_intensity r = {0, 0};
  if ((v->kind != VKF_GEMM_TILED && v->kind != VKF_GEMM_COOPMAT) || !v->bm || !v->bn || !v->bk)
    return r;
  double bm = v->bm, bn = v->bn, bk = v->bk, flop = 2.0 * (double)m * (double)n * (double)k;
  /* workgroup tiles of the output, and the k-steps over all of K (split-K spreads them over its
   * splits' workgroups: the same steps in all) */
  double tiles_mn = div_up(m, v->bm) * div_up(n, v->bn), steps = div_up(k, v->bk);
  double per_step = (bm + bn) * bk; /* A and B elements read from memory, staged in shared */
  double global = tiles_mn * steps * (bm * es + bn * b_es) * bk + (double)m * (double)n * es,
         shared;
  if (v->kind == VKF_GEMM_COOPMAT) {
    /* f16 tiles stored once; each subgroup loads its tm A and tn B fragments of t x t halves per
     * t of k; each workgroup's accumulators leave through an f32 scratch (stored, read) */
    double t = v->coopmat_tile, subgroups = 2 * bm / (v->tm * t);
    double splits = v->coopmat_splits > 1 ? v->coopmat_splits : 1;
    shared =
        tiles_mn * steps * (per_step * 2 + subgroups * (v->tm + v->tn) * t * t * 2 * (bk / t)) +
        tiles_mn * splits * bm * bn * 4 * 2;
    /* split-K: the partial sums written and read back as f32, padded to whole tiles */
    if (splits > 1) global += 2 * splits * tiles_mn * bm * bn * 4;
  } else {
    /* f32 tiles stored once; every invocation reads tm values of A and tn of B per k */
    shared =
        tiles_mn * steps * (per_step * 4 + v->workgroup_size * (double)(v->tm + v->tn) * bk * 4);
  }
  r.flop_per_shared_byte = flop / shared;
  r.flop_per_global_byte = flop / global;
  return r;
}
