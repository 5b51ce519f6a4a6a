/* Lowering a node in slices of its batch dims when a binding would exceed the device's
 * maxStorageBufferRange (lower_slice.c). */
#ifndef VKF_GRAPH_LOWER_SLICE_H
#define VKF_GRAPH_LOWER_SLICE_H

#include "graph/lower/lower_node.h"

/* Calls `fn` for `node`, or, when a binding of the node would exceed the device's
 * maxStorageBufferRange, once per slice of its leading (batch) dims so that every binding fits
 * (graph/lower/lower_slice.c says which ops can be sliced; others go to `fn` unchanged). */
vkf_status vkf_lower_sliced(const vkf_lower_ctx *ctx, vkf_lower_fn fn, const vkf_lower_node *node);

#endif
