/* Owns the IR core: the op table rows, graph lifetime, the tensor and node tables, the sticky
 * builder error, output marking and compaction. */
#include "graph/ir/graph_internal.h"

#include "graph/base/quant.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_row {
  const char *name;
  uint32_t min_inputs, max_inputs, flags;
  vkf_shape_fn shape;
} op_row;

static const op_row k_ops[VKF_OP_COUNT] = {
#define VKF_OP(id, name, min_in, max_in, flags, shape_fn, ref_fn) \
  [VKF_OP_##id] = {name, min_in, max_in, flags, shape_fn},
#include "graph/ir/ops.def"
#undef VKF_OP
};

_Static_assert(VKF_OP_COUNT == 39, "update tests and dumps when adding an op");

const char *vkf_op_name(vkf_op op) {
  return (op >= 0 && op < VKF_OP_COUNT) ? k_ops[op].name : "?";
}
uint32_t vkf_op_flags(vkf_op op) {
  return k_ops[op].flags;
}
uint32_t vkf_op_min_inputs(vkf_op op) {
  return k_ops[op].min_inputs;
}
uint32_t vkf_op_max_inputs(vkf_op op) {
  return k_ops[op].max_inputs;
}
vkf_shape_fn vkf_op_shape_fn(vkf_op op) {
  return k_ops[op].shape;
}
const vkf_memory_plan *vkf_graph_memory_plan(const vkf_graph *g) {
  return &g->plan;
}

const char *vkf_dtype_name(vkf_dtype dtype) {
  static const char *const names[VKF_DTYPE_COUNT] = {
      "f32", "f16", "i32", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k"};
  return (dtype >= 0 && dtype < VKF_DTYPE_COUNT) ? names[dtype] : "?";
}

int vkf_dtype_is_quant(vkf_dtype dtype) {
  return dtype >= VKF_Q8_0 && dtype < VKF_DTYPE_COUNT;
}

size_t vkf_dtype_size(vkf_dtype dtype) {
  if (vkf_dtype_is_quant(dtype)) return vkf_quant_layout_of((vkf_quant_format)(dtype - VKF_Q8_0)).bytes;
  return dtype == VKF_F16 || dtype == VKF_BF16 ? 2 : 4;
}

uint32_t vkf_dtype_block(vkf_dtype dtype) {
  if (vkf_dtype_is_quant(dtype)) return vkf_quant_layout_of((vkf_quant_format)(dtype - VKF_Q8_0)).block;
  return 1;
}

const char *vkf_activation_name(vkf_activation act) {
  static const char *const names[VKF_ACT_COUNT] = {"none", "gelu", "gelu_tanh", "relu", "silu"};
  return (act >= 0 && act < VKF_ACT_COUNT) ? names[act] : "?";
}

const char *vkf_role_name(vkf_tensor_role role) {
  static const char *const names[] = {"intermediate", "input", "constant", "output"};
  return (role >= 0 && role <= VKF_ROLE_OUTPUT) ? names[role] : "?";
}

const char *vkf_feature_map_name(vkf_feature_map kind) {
  static const char *const names[VKF_FEATURE_COUNT] = {"elu1", "favor", "rff"};
  return (kind >= 0 && kind < VKF_FEATURE_COUNT) ? names[kind] : "?";
}

vkf_status vkf_graph_create(const char *name, vkf_graph **out_graph) {
  *out_graph = NULL;
  vkf_graph *g = calloc(1, sizeof *g);
  if (!g) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "creating graph");
  g->arena = vkf_arena_create();
  g->tensor_cap = 64;
  g->tensors = calloc(g->tensor_cap, sizeof *g->tensors);
  g->tensor_count = 1; /* id 0 is "no value" */
  if (!g->arena || !g->tensors) {
    vkf_graph_destroy(g);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "creating graph");
  }
  g->name = vkf_arena_strdup(g->arena, name ? name : "graph");
  *out_graph = g;
  return VKF_OK;
}

void vkf_graph_destroy(vkf_graph *g) {
  if (!g) return;
  vkf_arena_destroy(g->arena);
  free(g->tensors);
  free(g->nodes);
  free(g->outputs);
  free(g->plan.placements);
  vkf_status_free(g->error);
  free(g);
}

const char *vkf_graph_name(const vkf_graph *g) {
  return g->name;
}
vkf_arena *vkf_graph_arena(vkf_graph *g) {
  return g->arena;
}

vkf_status vkf_graph_status(const vkf_graph *g) {
  if (!g->error) return VKF_OK;
  return vkf_status_make(vkf_status_code_of(g->error), "%s", vkf_status_message(g->error));
}

void vkf_graph_set_error(vkf_graph *g, vkf_status status) {
  if (status == VKF_OK) return;
  if (g->error) {
    vkf_status_free(status);
    return;
  }
  g->error = status;
}

static int grow(void **array, uint32_t *cap, uint32_t need, size_t elem_size) {
  if (need <= *cap) return 1;
  uint32_t cap2 = *cap ? *cap * 2 : 16;
  while (cap2 < need) cap2 *= 2;
  void *p = realloc(*array, (size_t)cap2 * elem_size);
  if (!p) return 0;
  memset((char *)p + (size_t)*cap * elem_size, 0, (size_t)(cap2 - *cap) * elem_size);
  *array = p;
  *cap = cap2;
  return 1;
}

void vkf_contiguous_strides(uint32_t rank, const int64_t *shape, int64_t *out_strides) {
  int64_t s = 1;
  for (uint32_t i = rank; i-- > 0;) {
    out_strides[i] = s;
    s *= shape[i];
  }
}

vkf_value vkf_graph_new_tensor(vkf_graph *g, const char *name, vkf_dtype dtype, uint32_t rank,
                               const int64_t *shape, vkf_tensor_role role) {
  VKF_ASSERT(rank <= VKF_MAX_DIMS);
  if (!grow((void **)&g->tensors, &g->tensor_cap, g->tensor_count + 1, sizeof(vkf_tensor))) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "adding tensor"));
    return VKF_NO_VALUE;
  }
  vkf_value v = {g->tensor_count++};
  vkf_tensor *t = &g->tensors[v.id];
  memset(t, 0, sizeof *t);
  t->name = vkf_arena_strdup(g->arena, name ? name : "");
  t->dtype = dtype;
  t->role = role;
  t->rank = rank;
  for (uint32_t i = 0; i < rank; i++) t->shape[i] = shape[i];
  vkf_contiguous_strides(rank, t->shape, t->strides);
  t->base = v;
  t->producer = VKF_NO_NODE;
  g->plan.valid = 0;
  return v;
}

static vkf_status check_leaf(const char *what, const char *name, vkf_dtype dtype, uint32_t rank,
                             const int64_t *shape) {
  if (rank > VKF_MAX_DIMS)
    return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\": rank %u exceeds %d", what, name, rank,
                           VKF_MAX_DIMS);
  if ((unsigned)dtype >= VKF_DTYPE_COUNT)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s \"%s\": bad dtype %d", what, name,
                           (int)dtype);
  for (uint32_t i = 0; i < rank; i++)
    if (shape[i] <= 0)
      return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\": dimension %u is %" PRId64, what, name, i,
                             shape[i]);
  if (vkf_dtype_is_quant(dtype) && (rank == 0 || shape[rank - 1] % vkf_dtype_block(dtype)))
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "%s \"%s\": a %s tensor's last dimension must be a multiple of its "
                           "block of %u, not %" PRId64,
                           what, name, vkf_dtype_name(dtype), vkf_dtype_block(dtype),
                           rank ? shape[rank - 1] : 0);
  return VKF_OK;
}

vkf_value vkf_graph_input(vkf_graph *g, const char *name, vkf_dtype dtype, uint32_t rank,
                          const int64_t *shape) {
  if (g->error) return VKF_NO_VALUE;
  vkf_status s = check_leaf("input", name, dtype, rank, shape);
  if (!s && vkf_dtype_is_quant(dtype))
    s = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                        "input \"%s\": %s is a weight format; inputs are f32, f16 or i32", name,
                        vkf_dtype_name(dtype));
  if (s) {
    vkf_graph_set_error(g, s);
    return VKF_NO_VALUE;
  }
  return vkf_graph_new_tensor(g, name, dtype, rank, shape, VKF_ROLE_INPUT);
}

vkf_value vkf_graph_constant(vkf_graph *g, const char *name, vkf_dtype dtype, uint32_t rank,
                             const int64_t *shape, const void *data) {
  if (g->error) return VKF_NO_VALUE;
  vkf_status s = check_leaf("constant", name, dtype, rank, shape);
  if (s) {
    vkf_graph_set_error(g, s);
    return VKF_NO_VALUE;
  }
  vkf_value v = vkf_graph_new_tensor(g, name, dtype, rank, shape, VKF_ROLE_CONSTANT);
  if (v.id) g->tensors[v.id].data = data;
  return v;
}

vkf_value vkf_graph_output(vkf_graph *g, vkf_value value, const char *name) {
  if (g->error) return VKF_NO_VALUE;
  if (value.id == 0 || value.id >= g->tensor_count) {
    vkf_graph_set_error(
        g, vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "output \"%s\": invalid value %u",
                           name ? name : "", value.id));
    return VKF_NO_VALUE;
  }
  const vkf_tensor *t = &g->tensors[value.id];
  vkf_value out = value;
  if (t->producer == VKF_NO_NODE || t->base.id != value.id || t->role == VKF_ROLE_OUTPUT) {
    char *copy_name = name ? (char *)name : vkf_arena_printf(g->arena, "%s.out", t->name);
    out = vkf_graph_add_node(g, VKF_OP_COPY, copy_name, &value, 1, NULL);
    if (!out.id) return out;
  }
  if (!grow((void **)&g->outputs, &g->output_cap, g->output_count + 1, sizeof(vkf_value))) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "marking output"));
    return VKF_NO_VALUE;
  }
  g->outputs[g->output_count++] = out;
  g->tensors[out.id].role = VKF_ROLE_OUTPUT;
  if (name && out.id == value.id) g->tensors[out.id].name = vkf_arena_strdup(g->arena, name);
  g->plan.valid = 0;
  return out;
}

uint32_t vkf_graph_output_count(const vkf_graph *g) {
  return g->output_count;
}
vkf_value vkf_graph_output_at(const vkf_graph *g, uint32_t i) {
  VKF_ASSERT(i < g->output_count);
  return g->outputs[i];
}

uint32_t vkf_graph_tensor_bound(const vkf_graph *g) {
  return g->tensor_count;
}

const vkf_tensor *vkf_graph_tensor(const vkf_graph *g, vkf_value v) {
  VKF_ASSERT(v.id > 0 && v.id < g->tensor_count);
  return &g->tensors[v.id];
}

vkf_tensor *vkf_graph_tensor_mut(vkf_graph *g, vkf_value v) {
  VKF_ASSERT(v.id > 0 && v.id < g->tensor_count);
  g->plan.valid = 0;
  return &g->tensors[v.id];
}

int64_t vkf_tensor_element_count(const vkf_tensor *t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= t->shape[i];
  return n;
}

size_t vkf_tensor_size(const vkf_tensor *t) {
  return (size_t)vkf_tensor_element_count(t) / vkf_dtype_block(t->dtype) * vkf_dtype_size(t->dtype);
}

int vkf_tensor_is_view(const vkf_tensor *t, vkf_value self) {
  return t->base.id != self.id;
}

int vkf_tensor_is_contiguous(const vkf_tensor *t) {
  int64_t s = 1;
  for (uint32_t i = t->rank; i-- > 0;) {
    if (t->shape[i] != 1 && t->strides[i] != s) return 0;
    s *= t->shape[i];
  }
  return 1;
}

char *vkf_shape_format(uint32_t rank, const int64_t *shape, char *buf, size_t buf_size) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, buf_size > n ? buf_size - n : 0, "[");
  for (uint32_t i = 0; i < rank; i++)
    n += (size_t)snprintf(buf + n, buf_size > n ? buf_size - n : 0, "%s%" PRId64, i ? "," : "",
                          shape[i]);
  snprintf(buf + n, buf_size > n ? buf_size - n : 0, "]");
  return buf;
}

uint32_t vkf_graph_node_count(const vkf_graph *g) {
  return g->node_count;
}

const vkf_node *vkf_graph_node(const vkf_graph *g, uint32_t i) {
  VKF_ASSERT(i < g->node_count);
  return &g->nodes[i];
}

vkf_node *vkf_graph_node_mut(vkf_graph *g, uint32_t i) {
  VKF_ASSERT(i < g->node_count);
  g->plan.valid = 0;
  return &g->nodes[i];
}

vkf_status vkf_graph_infer_node(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const char *opname = vkf_op_name(n->op);
  if ((unsigned)n->op >= VKF_OP_COUNT)
    return vkf_status_make(VKF_STATUS_INVALID_GRAPH, "node \"%s\": bad op %d", n->name, (int)n->op);
  if (n->input_count < k_ops[n->op].min_inputs || n->input_count > k_ops[n->op].max_inputs)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s \"%s\": %u inputs, expected %u..%u",
                           opname, n->name, n->input_count, k_ops[n->op].min_inputs,
                           k_ops[n->op].max_inputs);
  for (uint32_t i = 0; i < n->input_count; i++) {
    if (n->inputs[i].id >= g->tensor_count)
      return vkf_status_make(VKF_STATUS_INVALID_GRAPH, "%s \"%s\": input %u is dangling (id %u)",
                             opname, n->name, i, n->inputs[i].id);
    if (n->inputs[i].id == 0 && i < k_ops[n->op].min_inputs)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s \"%s\": input %u is missing", opname,
                             n->name, i);
  }
  memset(out, 0, sizeof *out);
  vkf_status s = k_ops[n->op].shape(g, n, out);
  if (s) return vkf_status_annotate(s, "%s \"%s\": ", opname, n->name);
  for (uint32_t i = 0; i < out->rank; i++)
    if (out->shape[i] <= 0) {
      char buf[96];
      return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\": empty output shape %s", opname, n->name,
                             vkf_shape_format(out->rank, out->shape, buf, sizeof buf));
    }
  return VKF_OK;
}

vkf_value vkf_graph_add_node(vkf_graph *g, vkf_op op, const char *name, const vkf_value *inputs,
                             uint32_t input_count, const vkf_node_attrs *attrs) {
  if (g->error) return VKF_NO_VALUE;
  VKF_ASSERT((unsigned)op < VKF_OP_COUNT && input_count <= VKF_MAX_NODE_INPUTS);
  vkf_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  n.name = name ? vkf_arena_strdup(g->arena, name)
                : vkf_arena_printf(g->arena, "%s_%u", k_ops[op].name, g->node_count);
  n.input_count = input_count;
  for (uint32_t i = 0; i < input_count; i++) n.inputs[i] = inputs[i];
  if (attrs) n.attrs = *attrs;
  if (!n.name) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "adding node"));
    return VKF_NO_VALUE;
  }
  vkf_tensor desc;
  vkf_status s = vkf_graph_infer_node(g, &n, &desc);
  if (s) {
    vkf_graph_set_error(g, s);
    return VKF_NO_VALUE;
  }
  if (!grow((void **)&g->nodes, &g->node_cap, g->node_count + 1, sizeof(vkf_node))) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "adding node"));
    return VKF_NO_VALUE;
  }
  vkf_value out =
      vkf_graph_new_tensor(g, n.name, desc.dtype, desc.rank, desc.shape, VKF_ROLE_INTERMEDIATE);
  if (!out.id) return out;
  vkf_tensor *t = &g->tensors[out.id];
  if (k_ops[op].flags & (VKF_OPF_VIEW | VKF_OPF_IN_PLACE)) {
    /* A view (or an in-place write) shares input 0's storage: the base is the input's base,
     * strides and offset from the shape fn */
    const vkf_tensor *in = &g->tensors[inputs[0].id];
    t->base = in->base;
    t->offset = desc.offset;
    for (uint32_t i = 0; i < desc.rank; i++) t->strides[i] = desc.strides[i];
  }
  t->producer = g->node_count;
  n.output = out;
  g->nodes[g->node_count++] = n;
  return out;
}

void vkf_graph_compact(vkf_graph *g) {
  uint32_t w = 0;
  for (uint32_t r = 0; r < g->node_count; r++) {
    vkf_node *n = &g->nodes[r];
    if (n->dead) {
      vkf_tensor *t = &g->tensors[n->output.id];
      if (t->producer == r) {
        t->removed = 1;
        t->producer = VKF_NO_NODE;
      }
      continue;
    }
    if (w != r) g->nodes[w] = *n;
    g->tensors[g->nodes[w].output.id].producer = w;
    w++;
  }
  g->node_count = w;
  g->plan.valid = 0;
}

int vkf_graph_in_place_between(const vkf_graph *g, vkf_value v, uint32_t after, uint32_t before) {
  if (!v.id || v.id >= g->tensor_count) return 0;
  uint32_t base = g->tensors[v.id].base.id;
  for (uint32_t i = after + 1; i < before && i < g->node_count; i++) {
    const vkf_node *n = &g->nodes[i];
    if (!n->dead && (k_ops[n->op].flags & VKF_OPF_IN_PLACE) &&
        g->tensors[n->output.id].base.id == base)
      return 1;
  }
  return 0;
}

uint32_t *vkf_graph_use_counts(const vkf_graph *g) {
  uint32_t *uses = calloc(g->tensor_count, sizeof *uses);
  if (!uses) return NULL;
  for (uint32_t i = 0; i < g->node_count; i++) {
    const vkf_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (uint32_t j = 0; j < n->input_count; j++)
      if (n->inputs[j].id) uses[n->inputs[j].id]++;
  }
  for (uint32_t i = 0; i < g->output_count; i++) uses[g->outputs[i].id]++;
  return uses;
}

int64_t vkf_tensor_rows(const vkf_tensor *t) {
  int64_t rows = 1;
  for (uint32_t i = 0; i + 1 < t->rank; i++) rows *= t->shape[i];
  return rows;
}

int32_t vkf_graph_sole_consumer(const vkf_graph *g, const uint32_t *uses, vkf_value v,
                                uint32_t after) {
  if (uses[v.id] != 1 || g->tensors[v.id].role != VKF_ROLE_INTERMEDIATE) return -1;
  for (uint32_t i = after + 1; i < g->node_count; i++) {
    const vkf_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (uint32_t s = 0; s < n->input_count; s++)
      if (n->inputs[s].id == v.id) return (int32_t)i;
  }
  return -1;
}

vkf_activation vkf_graph_activation_of(vkf_op op) {
  switch (op) {
    case VKF_OP_GELU_ERF: return VKF_ACT_GELU_ERF;
    case VKF_OP_GELU_TANH: return VKF_ACT_GELU_TANH;
    case VKF_OP_RELU: return VKF_ACT_RELU;
    case VKF_OP_SILU: return VKF_ACT_SILU;
    default: return VKF_ACT_NONE;
  }
}
