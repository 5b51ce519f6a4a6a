/* Private to the interpreter files: storage slots and helpers the reference functions use to get
 * contiguous inputs and to allocate their output. */
#ifndef VKF_GRAPH_INTERP_INTERNAL_H
#define VKF_GRAPH_INTERP_INTERNAL_H

#include "graph/interp/interp.h"
#include "graph/ir/graph_internal.h"

/* The reference column of graph/ir/ops.def: one function per op, the slow obvious way. */
typedef vkf_status (*vkf_ref_fn)(vkf_interp *it, const vkf_node *n);
#define VKF_OP(id, name, min_in, max_in, flags, shape_fn, ref_fn) \
  vkf_status ref_fn(vkf_interp *it, const vkf_node *n);
#include "graph/ir/ops.def"
#undef VKF_OP

typedef struct vkf_interp_slot {
  float *f;     /* f32/f16 storage (fp32 values) */
  int32_t *i;   /* i32 storage */
  int borrowed; /* f points at caller memory (constant data): never written or freed */
  int set;
} vkf_interp_slot;

struct vkf_interp {
  const vkf_graph *g;
  vkf_interp_slot *slots; /* by tensor id, only base tensors are used */
  uint32_t bound;
  void **temps; /* scratch freed after each node */
  uint32_t temp_count, temp_cap;
  int oom;
};

/* Scratch memory freed when the current node finishes; NULL (and it->oom) on failure. */
void *vkf_interp_temp(vkf_interp *it, size_t size);
/* The tensor in an input slot, NULL when absent. */
const vkf_tensor *vkf_interp_in_tensor(const vkf_interp *it, const vkf_node *n, uint32_t slot);
/* Contiguous row-major fp32 values of an input slot (i32 converted); borrowed or scratch. NULL
 * when the slot is absent or on OOM (it->oom set). */
const float *vkf_interp_in_f32(vkf_interp *it, const vkf_node *n, uint32_t slot);
/* Contiguous int32 values of an i32 input slot; NULL when absent or on OOM. */
const int32_t *vkf_interp_in_i32(vkf_interp *it, const vkf_node *n, uint32_t slot);
/* Zeroed storage for the node's output (f32/f16 -> float, i32 -> int32). NULL on OOM. */
float *vkf_interp_out_f32(vkf_interp *it, const vkf_node *n);
int32_t *vkf_interp_out_i32(vkf_interp *it, const vkf_node *n);

vkf_status vkf_interp_oom(const vkf_node *n);

/* RMSNorm of `rows` rows of d values (gamma optional), in double as vkf_ref_rmsnorm: shared by
 * RMSNORM and the matmul's RMSNorm prologue so the two agree bit for bit. */
void vkf_rmsnorm_rows(const float *x, const float *gamma, int64_t rows, int64_t d, double eps,
                      float *y);

/* Strides (in elements) to read a contiguous tensor of shape `in` broadcast to `out` (rank
 * out_rank, right-aligned; 0 on broadcast dims). */
void vkf_broadcast_strides(uint32_t in_rank, const int64_t *in_shape, uint32_t out_rank,
                           const int64_t *out_shape, int64_t *out_strides);
/* Offset of flat row-major index `flat` of `shape` under `strides`. */
int64_t vkf_strided_offset(int64_t flat, uint32_t rank, const int64_t *shape,
                           const int64_t *strides);

#define VKF_IN_F32(var, it, n, slot)                 \
  const float *var = vkf_interp_in_f32(it, n, slot); \
  if (!var && (it)->oom) return vkf_interp_oom(n)
#define VKF_IN_I32(var, it, n, slot)                   \
  const int32_t *var = vkf_interp_in_i32(it, n, slot); \
  if (!var && (it)->oom) return vkf_interp_oom(n)

#endif
