/* The fused attention lowering's variant chooser (graph/lower/lower_attention.c), exposed so that tests
 * and `vkf bench attention` can see and force the choice: layout, tile sizes, K/V staging and the
 * split-K factor of shaders/attention.comp (+ attention_merge.comp). */
#ifndef VKF_GRAPH_LOWER_ATTENTION_H
#define VKF_GRAPH_LOWER_ATTENTION_H

#include <stdint.h>

#include "graph/base/caps.h"
#include "graph/ir/graph.h"

typedef enum vkf_attention_layout {
  VKF_ATTENTION_LAYOUT_AUTO = 0,
  VKF_ATTENTION_LAYOUT_ROW,   /* one invocation per query row (CPU class: SIMD across rows) */
  VKF_ATTENTION_LAYOUT_LANES, /* `lanes` invocations per row (GPU class) */
  VKF_ATTENTION_LAYOUT_COOPMAT, /* f16 on cooperative matrices: 4 subgroups of `coopmat_tile` rows */
  VKF_ATTENTION_LAYOUT_TILED,   /* register tiles: 128 invocations, br rows x bc keys (GPU class) */
} vkf_attention_layout;

/* What the chooser reads about one attention node. */
typedef struct vkf_attention_shape {
  uint32_t batch, heads;  /* B, H (query heads) */
  uint32_t nq, nk, d, dv; /* query rows, keys, q/k head dim, v head dim */
  vkf_dtype dtype;        /* storage of q, k, v and the output */
  uint32_t group;         /* query heads per kv head (grouped-query attention); 0 or 1: none */
  int ramp;               /* an adaptive span (its mask is per query head) */
} vkf_attention_shape;

/* One kernel variant. */
typedef struct vkf_attention_config {
  vkf_attention_layout layout;
  uint32_t br;          /* query rows per workgroup */
  uint32_t bc;          /* keys per tile */
  uint32_t lanes;       /* invocations per row (1 for the ROW layout) */
  uint32_t rows;        /* broadcast body: query rows per 8-lane subgroup (1..8) */
  uint32_t local_size;  /* invocations per workgroup */
  int stage_kv;         /* K/V tiles through shared memory */
  int subgroup_reduce;  /* LANES layout: row reductions with subgroup arithmetic */
  int cpu_bcast;        /* ROW layout: 8-key blocks shared by subgroupBroadcast (CPU class) */
  uint32_t splits;      /* split-K chunks (1: one pass, no merge) */
  uint32_t chunk;       /* keys per split (a multiple of bc) */
  uint32_t shared_size; /* bytes of shared memory the variant declares */
  uint32_t coopmat_tile; /* COOPMAT: the matrix tile (caps->coopmat_gemm_tile), 8 or 16 */
  uint32_t kv_stages;    /* COOPMAT: K/V tile buffers, 2 (the next tile loads while this one
                            computes) where shared memory allows, else 1 */
  uint32_t gqa_group;   /* LANES: the query heads of one kv head share a workgroup (its rows are
                           br / gqa_group queries of each); 0: a workgroup is one head's rows */
} vkf_attention_config;

/* Choices a caller may force; zero fields leave the chooser's rule in charge. */
typedef struct vkf_attention_force {
  vkf_attention_layout layout;
  int stage_kv;    /* 0: chooser, 1: stage, -1: read in place */
  uint32_t splits; /* 0: chooser; otherwise the split count (capped so each split has a tile) */
  int no_texel;    /* 1: the CPU body reads storage buffers even where texel views would do */
  int gqa;         /* 0: chooser, -1: one head per workgroup even for grouped-query decoding */
} vkf_attention_force;

/* Picks the variant for `shape` on `caps` (one comment per rule in the .c file). `force` may be
 * NULL. Never fails: every shape has a variant (head dims up to 256; the lowering rejects more). */
void vkf_attention_choose(const vkf_device_caps *caps, const vkf_attention_shape *shape,
                          const vkf_attention_force *force, vkf_attention_config *out_config);

/* Test and benchmark hook: every later vkf_lower_attention applies `force` (copied; NULL restores
 * the chooser). Process-global and not thread-safe: for test programs and `vkf bench` only. */
void vkf_lower_attention_set_force(const vkf_attention_force *force);

/* The CPU_DMAX define of the CPU-class bodies of attention.comp and sparse_attention.comp: the
 * smallest of 32, 64, 128 and 256 bounding both head dims, so the register blocks past it are
 * not in the SPIR-V (attention_cpu_macros.glsl). */
const char *vkf_attention_cpu_dmax_define(uint32_t d, uint32_t dv);

#endif
