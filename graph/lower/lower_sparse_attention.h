/* The block-sparse attention lowering's variant chooser (graph/lower/lower_sparse_attention.c),
 * exposed so that tests and `vkf bench attention` can see and force the body of
 * shaders/sparse_attention.comp. */
#ifndef VKF_GRAPH_LOWER_SPARSE_ATTENTION_H
#define VKF_GRAPH_LOWER_SPARSE_ATTENTION_H

#include <stdint.h>

#include "graph/base/caps.h"
#include "graph/lower/lower_node.h"

typedef enum vkf_sparse_body {
  VKF_SPARSE_BODY_AUTO = 0,
  VKF_SPARSE_BODY_CPU, /* a subgroup of 8 lanes owns up to 8 rows of one query block */
  VKF_SPARSE_BODY_GPU, /* `lanes` invocations per row, `br` rows of one query block per group */
} vkf_sparse_body;

typedef struct vkf_sparse_shape {
  uint32_t d, dv;            /* head dims */
  uint32_t block_q, block_k; /* tokens per block */
} vkf_sparse_shape;

typedef struct vkf_sparse_config {
  vkf_sparse_body body;
  uint32_t rows;       /* CPU: rows per subgroup (1..8); GPU: rows per workgroup (br) */
  uint32_t parts;      /* subgroups (CPU) or workgroups (GPU) per query block */
  uint32_t lanes;      /* GPU: invocations per row */
  uint32_t bc;         /* GPU: keys per tile (a multiple of lanes) */
  uint32_t local_size; /* invocations per workgroup */
  int stage_kv;        /* GPU: K/V tiles through shared memory */
  int subgroup_reduce; /* GPU: row reductions with subgroup arithmetic */
} vkf_sparse_config;

/* Choices a caller may force; zero fields leave the chooser in charge. */
typedef struct vkf_sparse_force {
  vkf_sparse_body body;
  int stage_kv; /* 0: chooser, 1: stage, -1: read in place */
} vkf_sparse_force;

/* Picks the variant (one comment per rule in the .c file). Never fails. */
void vkf_sparse_attention_choose(const vkf_device_caps *caps, const vkf_sparse_shape *shape,
                                 const vkf_sparse_force *force, vkf_sparse_config *out_config);

/* Test and benchmark hook, as vkf_lower_attention_set_force: process-global, not thread-safe. */
void vkf_lower_sparse_attention_set_force(const vkf_sparse_force *force);

#endif
