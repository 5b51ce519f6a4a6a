/* Owns the JSON dump: tensors (with role, view layout and memory-plan placement), nodes (op,
 * inputs, output, attributes) and outputs, for tools that read graphs. */
#include <inttypes.h>
#include <string.h>

#include "graph/ir/dump.h"
#include "graph/ir/graph_internal.h"

static int put_json_string(FILE *f, const char *s) {
  if (fputc('"', f) < 0) return -1;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    int r = (c == '"' || c == '\\') ? fprintf(f, "\\%c", c)
            : c < 0x20              ? fprintf(f, "\\u%04x", c)
                                    : fputc(c, f);
    if (r < 0) return -1;
  }
  return fputc('"', f) < 0 ? -1 : 0;
}

#define W(...)                                                                              \
  do {                                                                                      \
    if (fprintf(f, __VA_ARGS__) < 0) return vkf_status_make(VKF_STATUS_IO, "writing dump"); \
  } while (0)
#define S(s)                                                                              \
  do {                                                                                    \
    if (put_json_string(f, s) < 0) return vkf_status_make(VKF_STATUS_IO, "writing dump"); \
  } while (0)

static vkf_status put_dims(FILE *f, uint32_t rank, const int64_t *d) {
  W("[");
  for (uint32_t i = 0; i < rank; i++) W("%s%" PRId64, i ? ", " : "", d[i]);
  W("]");
  return VKF_OK;
}

vkf_status vkf_dump_json(const vkf_graph *g, FILE *f) {
  char attrs[1024];
  W("{\n  \"name\": ");
  S(g->name);
  W(",\n  \"tensors\": [\n");
  int first = 1;
  for (uint32_t id = 1; id < g->tensor_count; id++) {
    const vkf_tensor *t = &g->tensors[id];
    if (t->removed) continue;
    W("%s    {\"id\": %u, \"name\": ", first ? "" : ",\n", id);
    first = 0;
    S(t->name);
    W(", \"role\": \"%s\", \"dtype\": \"%s\", \"shape\": ", vkf_role_name(t->role),
      vkf_dtype_name(t->dtype));
    VKF_RETURN_IF_ERROR(put_dims(f, t->rank, t->shape));
    W(", \"strides\": ");
    VKF_RETURN_IF_ERROR(put_dims(f, t->rank, t->strides));
    W(", \"offset\": %" PRId64 ", \"base\": %u, \"producer\": ", t->offset, t->base.id);
    if (t->producer == VKF_NO_NODE)
      W("null");
    else
      W("%u", t->producer);
    if (g->plan.valid && id < g->plan.tensor_bound && g->plan.placements[id].in_arena)
      W(", \"arena_offset\": %zu, \"arena_size\": %zu", g->plan.placements[id].offset,
        g->plan.placements[id].size);
    W("}");
  }
  W("\n  ],\n  \"nodes\": [\n");
  for (uint32_t i = 0; i < g->node_count; i++) {
    const vkf_node *n = &g->nodes[i];
    W("%s    {\"index\": %u, \"op\": \"%s\", \"name\": ", i ? ",\n" : "", i, vkf_op_name(n->op));
    S(n->name);
    W(", \"inputs\": [");
    for (uint32_t s = 0; s < n->input_count; s++) {
      if (n->inputs[s].id)
        W("%s%u", s ? ", " : "", n->inputs[s].id);
      else
        W("%snull", s ? ", " : "");
    }
    W("], \"output\": %u, \"attrs\": ", n->output.id);
    vkf_dump_format_attrs(g, n, attrs, sizeof attrs);
    S(attrs);
    W("}");
  }
  W("\n  ],\n  \"outputs\": [");
  for (uint32_t i = 0; i < g->output_count; i++) W("%s%u", i ? ", " : "", g->outputs[i].id);
  W("]");
  if (g->plan.valid)
    W(",\n  \"memory_plan\": {\"alignment\": %zu, \"peak_size\": %zu, \"naive_size\": %zu}",
      g->plan.alignment, g->plan.peak_size, g->plan.naive_size);
  W("\n}\n");
  return VKF_OK;
}
