/* Owns the Graphviz DOT dump: leaves (inputs, constants) as ellipses, nodes as boxes labelled
 * with name, op, attributes and output shape; edges carry the tensor id and, with a memory plan,
 * its arena offset. */
#include <inttypes.h>
#include <string.h>

#include "graph/ir/dump.h"
#include "graph/ir/graph_internal.h"

/* DOT string body: quotes and backslashes escaped, newlines as \n. */
static int put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    int r = (*s == '"' || *s == '\\') ? fprintf(f, "\\%c", *s)
            : *s == '\n'              ? fprintf(f, "\\n")
                                      : fputc(*s, f);
    if (r < 0) return -1;
  }
  return 0;
}

#define W(...)                                                                              \
  do {                                                                                      \
    if (fprintf(f, __VA_ARGS__) < 0) return vkf_status_make(VKF_STATUS_IO, "writing dump"); \
  } while (0)
#define E(s)                                                                          \
  do {                                                                                \
    if (put_escaped(f, s) < 0) return vkf_status_make(VKF_STATUS_IO, "writing dump"); \
  } while (0)

vkf_status vkf_dump_dot(const vkf_graph *g, FILE *f) {
  char sb[96], attrs[1024];
  W("digraph \"");
  E(g->name);
  W("\" {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n");
  W("  edge [fontname=\"monospace\", fontsize=9];\n");
  for (uint32_t id = 1; id < g->tensor_count; id++) {
    const vkf_tensor *t = &g->tensors[id];
    if (t->role != VKF_ROLE_INPUT && t->role != VKF_ROLE_CONSTANT) continue;
    W("  t%u [shape=ellipse, style=filled, fillcolor=\"%s\", label=\"", id,
      t->role == VKF_ROLE_INPUT ? "#cfe8ff" : "#eeeeee");
    E(t->name);
    W("\\n%s %s %s\"];\n", vkf_role_name(t->role), vkf_dtype_name(t->dtype),
      vkf_shape_format(t->rank, t->shape, sb, sizeof sb));
  }
  for (uint32_t i = 0; i < g->node_count; i++) {
    const vkf_node *n = &g->nodes[i];
    const vkf_tensor *t = &g->tensors[n->output.id];
    /* Dashed: a view (no dispatch). An in-place write shares storage but dispatches. */
    int view = t->base.id != n->output.id && !(vkf_op_flags(n->op) & VKF_OPF_IN_PLACE);
    int out = t->role == VKF_ROLE_OUTPUT;
    W("  n%u [shape=box, style=\"%s\", fillcolor=\"%s\", label=\"", i, view ? "dashed" : "filled",
      out ? "#d6f5d6" : "#fff4d6");
    E(n->name);
    W("\\n%s", vkf_op_name(n->op));
    vkf_dump_format_attrs(g, n, attrs, sizeof attrs);
    if (attrs[0]) {
      W(" ");
      E(attrs);
    }
    W("\\n%s %s", vkf_dtype_name(t->dtype), vkf_shape_format(t->rank, t->shape, sb, sizeof sb));
    if (g->plan.valid && n->output.id < g->plan.tensor_bound &&
        g->plan.placements[n->output.id].in_arena && t->base.id == n->output.id)
      W("\\narena @%zu +%zu", g->plan.placements[n->output.id].offset,
        g->plan.placements[n->output.id].size);
    W("\"];\n");
  }
  for (uint32_t i = 0; i < g->node_count; i++) {
    const vkf_node *n = &g->nodes[i];
    for (uint32_t s = 0; s < n->input_count; s++) {
      vkf_value v = n->inputs[s];
      if (!v.id) continue;
      const vkf_tensor *t = &g->tensors[v.id];
      if (t->producer == VKF_NO_NODE)
        W("  t%u -> n%u [label=\"%%%u\"];\n", v.id, i, v.id);
      else
        W("  n%u -> n%u [label=\"%%%u\"];\n", t->producer, i, v.id);
    }
  }
  for (uint32_t i = 0; i < g->output_count; i++) {
    const vkf_tensor *t = &g->tensors[g->outputs[i].id];
    W("  out%u [shape=plaintext, label=\"output ", i);
    E(t->name);
    W("\"];\n");
    if (t->producer != VKF_NO_NODE) W("  n%u -> out%u;\n", t->producer, i);
  }
  W("}\n");
  return VKF_OK;
}
