/* Owns the text dump (one line per tensor leaf, node, output and plan entry), the shared
 * attribute formatter, and writing the three dump files. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "graph/ir/dump.h"
#include "graph/ir/graph_internal.h"

static size_t append(char *buf, size_t size, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static size_t append(char *buf, size_t size, size_t at, const char *fmt, ...) {
  if (at >= size) return at;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + at, size - at, fmt, ap);
  va_end(ap);
  return n > 0 ? at + (size_t)n : at;
}

void vkf_dump_format_attrs(const vkf_graph *g, const vkf_node *n, char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  const vkf_node_attrs *a = &n->attrs;
  uint32_t rank = g->tensors[n->output.id].rank;
  switch (n->op) {
    case VKF_OP_MATMUL:
      at = append(buf, size, at, "transpose_b=%d act=%s", a->matmul.transpose_b,
                  vkf_activation_name(a->matmul.activation));
      if (a->matmul.a_rmsnorm)
        at = append(buf, size, at, " a_rmsnorm eps=%.9g", a->matmul.a_norm_eps);
      if (a->matmul.a_glu != VKF_ACT_NONE)
        at = append(buf, size, at, " a_glu=%s", vkf_activation_name(a->matmul.a_glu));
      if (a->matmul.c_glu != VKF_ACT_NONE)
        at = append(buf, size, at, " c_glu=%s", vkf_activation_name(a->matmul.c_glu));
      break;
    case VKF_OP_SCALE:
      at = append(buf, size, at, "scale=%.9g", a->scale.value);
      break;
    case VKF_OP_LAYERNORM:
    case VKF_OP_RMSNORM:
    case VKF_OP_L2_NORMALIZE:
      at = append(buf, size, at, "eps=%.9g", a->norm.eps);
      break;
    case VKF_OP_SOFTMAX:
      at = append(buf, size, at, "scale=%.9g causal=%d", a->softmax.scale, a->softmax.causal);
      break;
    case VKF_OP_ATTENTION:
      at = append(buf, size, at, "scale=%.9g causal=%d window=[%d,%d]%s", a->attention.scale,
                  a->attention.causal, a->attention.window_left, a->attention.window_right,
                  a->attention.merge_heads ? " merge_heads=1" : "");
      break;
    case VKF_OP_SPARSE_ATTENTION:
      at = append(buf, size, at, "scale=%.9g block=[%u,%u] causal=%d%s", a->sparse_attention.scale,
                  a->sparse_attention.block_q, a->sparse_attention.block_k,
                  a->sparse_attention.causal,
                  a->sparse_attention.merge_heads ? " merge_heads=1" : "");
      break;
    case VKF_OP_LINEAR_FEATURES:
      at = append(buf, size, at, "kind=%s scale=%.9g", vkf_feature_map_name(a->linear_features.kind),
                  a->linear_features.scale);
      break;
    case VKF_OP_LINEAR_ATTENTION:
      at = append(buf, size, at, "causal=%d eps=%.9g chunk=%u", a->linear_attention.causal,
                  a->linear_attention.eps, a->linear_attention.chunk);
      break;
    case VKF_OP_ADDITIVE_ATTENTION:
      at = append(buf, size, at, "weights=%d", a->additive_attention.weights);
      break;
    case VKF_OP_PERMUTE:
      at = append(buf, size, at, "axes=[");
      for (uint32_t i = 0; i < rank; i++)
        at = append(buf, size, at, "%s%u", i ? "," : "", a->permute.axes[i]);
      at = append(buf, size, at, "]");
      break;
    case VKF_OP_SLICE:
      at = append(buf, size, at, "axis=%u range=[%" PRId64 ",%" PRId64 ")", a->slice.axis,
                  a->slice.start, a->slice.end);
      break;
    case VKF_OP_CONCAT:
      at = append(buf, size, at, "axis=%u", a->concat.axis);
      break;
    case VKF_OP_CAST:
      at = append(buf, size, at, "dtype=%s", vkf_dtype_name(a->cast.dtype));
      break;
    case VKF_OP_FUSED_ELEMENTWISE:
      at = append(buf, size, at, "program=[");
      for (uint32_t i = 0; i < a->fused.count; i++) {
        const vkf_ew_instr *ins = &a->fused.instrs[i];
        at = append(buf, size, at, "%sr%u=%s(r%u", i ? "; " : "", n->input_count + i,
                    vkf_op_name(ins->op), ins->a);
        if (ins->op == VKF_OP_ADD || ins->op == VKF_OP_SUB || ins->op == VKF_OP_MUL ||
            ins->op == VKF_OP_DIV)
          at = append(buf, size, at, ",r%u", ins->b);
        if (ins->op == VKF_OP_SCALE) at = append(buf, size, at, ",%.9g", ins->scale);
        at = append(buf, size, at, ")");
      }
      at = append(buf, size, at, "]");
      break;
    default:
      break;
  }
  (void)at;
}

static const char *shape_str(const vkf_tensor *t, char *buf, size_t size) {
  return vkf_shape_format(t->rank, t->shape, buf, size);
}

/* Names are printed in double quotes with " and \ escaped, so a line always parses back. */
static const char *quoted(const char *s, char *buf, size_t size) {
  size_t at = 0;
  if (size < 3) return "\"\"";
  buf[at++] = '"';
  for (; *s && at + 3 < size; s++) {
    if (*s == '"' || *s == '\\') buf[at++] = '\\';
    buf[at++] = *s;
  }
  buf[at++] = '"';
  buf[at] = '\0';
  return buf;
}

#define W(...)                                                                              \
  do {                                                                                      \
    if (fprintf(f, __VA_ARGS__) < 0) return vkf_status_make(VKF_STATUS_IO, "writing dump"); \
  } while (0)

vkf_status vkf_dump_text(const vkf_graph *g, FILE *f) {
  uint32_t inputs = 0, constants = 0;
  for (uint32_t id = 1; id < g->tensor_count; id++) {
    inputs += g->tensors[id].role == VKF_ROLE_INPUT;
    constants += g->tensors[id].role == VKF_ROLE_CONSTANT;
  }
  char sb[96], attrs[1024], qb[512];
  W("graph %s: %u inputs, %u constants, %u nodes, %u outputs\n", quoted(g->name, qb, sizeof qb),
    inputs, constants, g->node_count, g->output_count);
  for (uint32_t id = 1; id < g->tensor_count; id++) {
    const vkf_tensor *t = &g->tensors[id];
    if (t->role != VKF_ROLE_INPUT && t->role != VKF_ROLE_CONSTANT) continue;
    W("%-8s %%%u %s %s %s\n", vkf_role_name(t->role), id, quoted(t->name, qb, sizeof qb),
      vkf_dtype_name(t->dtype), shape_str(t, sb, sizeof sb));
  }
  for (uint32_t i = 0; i < g->node_count; i++) {
    const vkf_node *n = &g->nodes[i];
    const vkf_tensor *t = &g->tensors[n->output.id];
    W("#%u %%%u = %s %s(", i, n->output.id, vkf_op_name(n->op), quoted(n->name, qb, sizeof qb));
    for (uint32_t s = 0; s < n->input_count; s++) {
      if (n->inputs[s].id)
        W("%s%%%u", s ? ", " : "", n->inputs[s].id);
      else
        W("%s_", s ? ", " : "");
    }
    vkf_dump_format_attrs(g, n, attrs, sizeof attrs);
    W(")%s%s -> %s %s", attrs[0] ? " " : "", attrs, vkf_dtype_name(t->dtype),
      shape_str(t, sb, sizeof sb));
    if (t->base.id != n->output.id) {
      /* An in-place op (kv_write) shares storage like a view but is a real dispatch. */
      W(" %s %%%u strides=", (vkf_op_flags(n->op) & VKF_OPF_IN_PLACE) ? "in place in" : "view of",
        t->base.id);
      W("%s offset=%" PRId64, vkf_shape_format(t->rank, t->strides, sb, sizeof sb), t->offset);
    }
    W("\n");
  }
  for (uint32_t i = 0; i < g->output_count; i++)
    W("output %%%u %s\n", g->outputs[i].id,
      quoted(g->tensors[g->outputs[i].id].name, qb, sizeof qb));
  const vkf_memory_plan *mp = &g->plan;
  if (mp->valid) {
    W("memory plan: alignment %zu, peak %zu bytes, naive %zu bytes\n", mp->alignment, mp->peak_size,
      mp->naive_size);
    for (uint32_t id = 1; id < mp->tensor_bound && id < g->tensor_count; id++) {
      const vkf_tensor_placement *p = &mp->placements[id];
      if (!p->in_arena || g->tensors[id].base.id != id) continue;
      W("  %%%u %s offset %zu size %zu live #%u..#%u\n", id,
        quoted(g->tensors[id].name, qb, sizeof qb), p->offset, p->size, p->first_node,
        p->last_node);
    }
  }
  return VKF_OK;
}

static vkf_status write_one(const vkf_graph *g, const char *dir, const char *stem, const char *ext,
                            vkf_status (*fn)(const vkf_graph *, FILE *)) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s", dir, stem, ext);
  FILE *f = fopen(path, "w");
  if (!f) return vkf_status_make(VKF_STATUS_IO, "cannot write dump %s", path);
  vkf_status st = fn(g, f);
  if (fclose(f) != 0 && !st) st = vkf_status_make(VKF_STATUS_IO, "writing dump %s", path);
  return st;
}

vkf_status vkf_dump_files(const vkf_graph *g, const char *dir, const char *stem) {
  VKF_RETURN_IF_ERROR(write_one(g, dir, stem, "txt", vkf_dump_text));
  VKF_RETURN_IF_ERROR(write_one(g, dir, stem, "dot", vkf_dump_dot));
  return write_one(g, dir, stem, "json", vkf_dump_json);
}
