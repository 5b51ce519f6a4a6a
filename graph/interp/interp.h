/* The CPU reference interpreter: every op the slow, obvious way in fp32 (fp64 accumulation in
 * reductions). It is the oracle for GPU op tests and for VKF_CHECK, so it favours clarity. */
#ifndef VKF_GRAPH_INTERP_H
#define VKF_GRAPH_INTERP_H

#include <stddef.h>

#include "graph/ir/graph.h"

/* Holds one value per tensor for one graph. f32 and f16 tensors are stored as fp32 (an f16 result
 * is rounded to binary16 when stored, so it carries exactly the f16 value); i32 as int32.
 * Views alias their base's storage. Constants with f32 data are read in place, never copied.
 * Not thread-safe; the graph must not change while an interpreter exists. */
typedef struct vkf_interp vkf_interp;

vkf_status vkf_interp_create(const vkf_graph *graph, vkf_interp **out_interp);
void vkf_interp_destroy(vkf_interp *interp);

/* Sets the value of a non-view tensor from contiguous host data in the tensor's dtype (f16 as
 * uint16 bit patterns); `size` must equal the tensor's byte size. Used for inputs, for constants
 * created with NULL data, and (VKF_CHECK) to feed a node the device's values for its inputs. */
vkf_status vkf_interp_set(vkf_interp *interp, vkf_value value, const void *data, size_t size);

/* Evaluates node `index` (in the graph's current order). Its inputs must have values: graph
 * inputs set, constants with data, producers already run. Errors name the node. */
vkf_status vkf_interp_run_node(vkf_interp *interp, uint32_t index);
/* Evaluates every node in order. */
vkf_status vkf_interp_run(vkf_interp *interp);

/* Copies a tensor's value (any tensor that has one, views included) into `dst` as contiguous
 * row-major data in the tensor's dtype; `dst_size` must equal its byte size. */
vkf_status vkf_interp_get(const vkf_interp *interp, vkf_value value, void *dst, size_t dst_size);
/* As vkf_interp_get, converted to fp32 (i32 values converted too); `count` = element count. */
vkf_status vkf_interp_get_f32(const vkf_interp *interp, vkf_value value, float *dst, size_t count);

typedef struct vkf_input_binding {
  vkf_value value;
  const void *data; /* contiguous, in the tensor's dtype */
  size_t size;      /* bytes */
} vkf_input_binding;

typedef struct vkf_output_binding {
  vkf_value value;
  void *data;
  size_t size;
} vkf_output_binding;

/* One-shot: binds inputs, runs the graph and copies the requested values out. */
vkf_status vkf_interp_evaluate(const vkf_graph *graph, const vkf_input_binding *inputs,
                               size_t input_count, const vkf_output_binding *outputs,
                               size_t output_count);

/* The scalar function behind each elementwise op (also what a fused elementwise program
 * evaluates): `b` is the second operand of binary ops, `scale` the SCALE attribute. */
float vkf_elementwise_apply(vkf_op op, float a, float b, float scale);
float vkf_activation_eval(vkf_activation act, float x);

#endif
