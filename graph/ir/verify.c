/* Owns the IR verifier (invariants listed in graph/ir/verify.h). */
#include "graph/ir/verify.h"

#include <stdlib.h>
#include <string.h>

#include "graph/ir/graph_internal.h"

#define BAD(...) vkf_status_make(VKF_STATUS_INVALID_GRAPH, __VA_ARGS__)

static vkf_status verify_node(const vkf_graph *g, uint32_t i) {
  const vkf_node *n = &g->nodes[i];
  const char *op = vkf_op_name(n->op);
  if ((unsigned)n->op >= VKF_OP_COUNT) return BAD("node %u: bad op %d", i, (int)n->op);
  if (!n->name) return BAD("node %u (%s) has no name", i, op);
  if (n->dead) return BAD("%s \"%s\": dead node left in the graph", op, n->name);
  if (n->input_count > VKF_MAX_NODE_INPUTS)
    return BAD("%s \"%s\": %u inputs", op, n->name, n->input_count);
  for (uint32_t s = 0; s < n->input_count; s++) {
    vkf_value v = n->inputs[s];
    if (v.id == 0) {
      if (s < vkf_op_min_inputs(n->op))
        return BAD("%s \"%s\": input %u is missing", op, n->name, s);
      continue;
    }
    if (v.id >= g->tensor_count)
      return BAD("%s \"%s\": input %u is dangling (id %u)", op, n->name, s, v.id);
    const vkf_tensor *t = &g->tensors[v.id];
    if (t->removed)
      return BAD("%s \"%s\": input %u \"%s\" was produced by a removed node", op, n->name, s,
                 t->name);
    if (t->producer == VKF_NO_NODE) {
      if (t->role != VKF_ROLE_INPUT && t->role != VKF_ROLE_CONSTANT)
        return BAD("%s \"%s\": input %u \"%s\" has no producer", op, n->name, s, t->name);
    } else if (t->producer >= i) {
      return BAD(
          "%s \"%s\": input %u \"%s\" is produced by node %u, not before node %u "
          "(cycle or bad order)",
          op, n->name, s, t->name, t->producer, i);
    }
    /* bf16 is a weight storage format: only the matmul kernels' B loads widen it (and views
     * only restride it on the way there). */
    if (t->dtype == VKF_BF16 && !(n->op == VKF_OP_MATMUL && s == VKF_IN_MATMUL_B) &&
        !(vkf_op_flags(n->op) & VKF_OPF_VIEW))
      return BAD("%s \"%s\": input %u \"%s\" is bf16, which only a matmul's B operand reads", op,
                 n->name, s, t->name);
    /* quantised blocks: read in place by the matmul kernels' B loads and the gather, never viewed */
    if (vkf_dtype_is_quant(t->dtype) && !(n->op == VKF_OP_MATMUL && s == VKF_IN_MATMUL_B) &&
        !(n->op == VKF_OP_GATHER && s == VKF_IN_GATHER_TABLE))
      return BAD("%s \"%s\": input %u \"%s\" is %s, which only a matmul's B operand and a "
                 "gather's table read",
                 op, n->name, s, t->name, vkf_dtype_name(t->dtype));
  }
  if (n->output.id == 0 || n->output.id >= g->tensor_count)
    return BAD("%s \"%s\": output is dangling (id %u)", op, n->name, n->output.id);
  const vkf_tensor *out = &g->tensors[n->output.id];
  if (out->producer != i)
    return BAD("%s \"%s\": output \"%s\" names producer %u, not %u", op, n->name, out->name,
               out->producer, i);
  if (out->role == VKF_ROLE_INPUT || out->role == VKF_ROLE_CONSTANT)
    return BAD("%s \"%s\": writes %s \"%s\"", op, n->name, vkf_role_name(out->role), out->name);
  vkf_tensor want;
  VKF_RETURN_IF_ERROR(vkf_graph_infer_node(g, n, &want));
  char a[96], b[96];
  if (want.dtype != out->dtype || want.rank != out->rank ||
      memcmp(want.shape, out->shape, out->rank * sizeof out->shape[0]) != 0)
    return BAD("%s \"%s\": output recorded as %s %s, inferred %s %s", op, n->name,
               vkf_dtype_name(out->dtype), vkf_shape_format(out->rank, out->shape, a, sizeof a),
               vkf_dtype_name(want.dtype), vkf_shape_format(want.rank, want.shape, b, sizeof b));
  int view = (vkf_op_flags(n->op) & (VKF_OPF_VIEW | VKF_OPF_IN_PLACE)) != 0;
  if (view) {
    const vkf_tensor *in = &g->tensors[n->inputs[0].id];
    if (out->base.id != in->base.id || out->offset != want.offset ||
        memcmp(out->strides, want.strides, out->rank * sizeof out->strides[0]) != 0)
      return BAD("%s \"%s\": %s layout (base, strides, offset) disagrees with its input", op,
                 n->name, (vkf_op_flags(n->op) & VKF_OPF_VIEW) ? "view" : "in-place");
  } else if (out->base.id != n->output.id || !vkf_tensor_is_contiguous(out) || out->offset != 0) {
    return BAD("%s \"%s\": output \"%s\" must own contiguous storage", op, n->name, out->name);
  }
  return VKF_OK;
}

/* The in-place write (or 0: the original storage) whose result `v` reads: views pass through to
 * their input, an in-place node's output is that node's version. */
static uint32_t version_of(const vkf_graph *g, vkf_value v) {
  for (;;) {
    const vkf_tensor *t = &g->tensors[v.id];
    if (t->producer == VKF_NO_NODE || t->producer >= g->node_count) return 0;
    const vkf_node *p = &g->nodes[t->producer];
    uint32_t flags = vkf_op_flags(p->op);
    if (flags & VKF_OPF_IN_PLACE) return t->producer + 1;
    if (!(flags & VKF_OPF_VIEW) || !p->inputs[0].id) return 0;
    v = p->inputs[0];
  }
}

/* After an in-place write, its storage may only be read through the write's output (or a view of
 * it): a read of the old value would see the new one, since nothing copies. */
static vkf_status verify_in_place_order(const vkf_graph *g) {
  uint32_t *last = calloc(g->tensor_count, sizeof *last); /* base id -> writer index + 1 */
  if (!last) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "verify: out of host memory");
  vkf_status st = VKF_OK;
  for (uint32_t i = 0; i < g->node_count && !st; i++) {
    const vkf_node *n = &g->nodes[i];
    for (uint32_t s = 0; s < n->input_count && !st; s++) {
      vkf_value v = n->inputs[s];
      if (!v.id || v.id >= g->tensor_count) continue;
      uint32_t base = g->tensors[v.id].base.id, w = last[base];
      if (w && version_of(g, v) != w)
        st = BAD("%s \"%s\": input %u \"%s\" reads storage that %s \"%s\" overwrote in place; "
                 "read that node's output instead",
                 vkf_op_name(n->op), n->name, s, g->tensors[v.id].name,
                 vkf_op_name(g->nodes[w - 1].op), g->nodes[w - 1].name);
    }
    if (vkf_op_flags(n->op) & VKF_OPF_IN_PLACE) last[g->tensors[n->output.id].base.id] = i + 1;
  }
  free(last);
  return st;
}

vkf_status vkf_graph_verify(const vkf_graph *g) {
  for (uint32_t id = 1; id < g->tensor_count; id++) {
    const vkf_tensor *t = &g->tensors[id];
    if (t->removed) continue;
    if ((unsigned)t->dtype >= VKF_DTYPE_COUNT || t->rank > VKF_MAX_DIMS)
      return BAD("tensor \"%s\": bad dtype or rank", t->name);
    int leaf = t->role == VKF_ROLE_INPUT || t->role == VKF_ROLE_CONSTANT;
    if (leaf && t->producer != VKF_NO_NODE)
      return BAD("%s \"%s\" has a producer", vkf_role_name(t->role), t->name);
    if (!leaf && t->producer == VKF_NO_NODE)
      return BAD("%s \"%s\" has no producer", vkf_role_name(t->role), t->name);
    if (!leaf && t->producer >= g->node_count)
      return BAD("tensor \"%s\": producer %u is out of range", t->name, t->producer);
    if (t->base.id == 0 || t->base.id >= g->tensor_count ||
        g->tensors[t->base.id].base.id != t->base.id)
      return BAD("tensor \"%s\": base is not a storage-owning tensor", t->name);
  }
  for (uint32_t i = 0; i < g->node_count; i++) VKF_RETURN_IF_ERROR(verify_node(g, i));
  VKF_RETURN_IF_ERROR(verify_in_place_order(g));
  for (uint32_t i = 0; i < g->output_count; i++) {
    vkf_value v = g->outputs[i];
    if (v.id == 0 || v.id >= g->tensor_count) return BAD("output %u is dangling", i);
    const vkf_tensor *t = &g->tensors[v.id];
    if (t->removed || t->producer == VKF_NO_NODE || t->role != VKF_ROLE_OUTPUT ||
        t->base.id != v.id)
      return BAD("output \"%s\" must be a live node's own (non-view) output", t->name);
  }
  return VKF_OK;
}
