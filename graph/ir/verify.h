/* The IR verifier: checks invariants that every pass must preserve. */
#ifndef VKF_GRAPH_VERIFY_H
#define VKF_GRAPH_VERIFY_H

#include "graph/ir/graph.h"

/* Returns VKF_STATUS_INVALID_GRAPH (or the shape error of a node whose recorded output no longer
 * matches inference) naming the first offending node or tensor. Checks: every input slot refers
 * to an existing, non-removed tensor produced by an earlier live node or a graph input/constant
 * (so the graph is acyclic and in execution order); each node's arity; each output tensor's
 * producer, shape, dtype and (for views and in-place writes) base, strides and offset re-inferred
 * from its inputs; roles (inputs/constants have no producer); graph outputs are produced, non-view
 * tensors; after an in-place write (VKF_OPF_IN_PLACE) no node reads that storage except through
 * the write's output (or views of it). */
vkf_status vkf_graph_verify(const vkf_graph *graph);

#endif
