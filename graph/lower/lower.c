/* Owns the lowering walk: tensors -> plan buffers and byte ranges, nodes -> per-op lowering
 * functions, then barrier placement. Views produce no dispatch: consumers read them in place.
 * In-place ops (VKF_OPF_IN_PLACE: kv_write) do dispatch; their output lives where input 0 does. */
#include "graph/lower/lower.h"

#include <stdlib.h>
#include <string.h>

#include "graph/lower/lower_node.h"
#include "graph/lower/lower_slice.h"
#include "graph/passes/memory_plan.h"

static vkf_lower_fn lower_fn_for(vkf_op op) {
  switch (op) {
    case VKF_OP_MATMUL: return vkf_lower_matmul;
    case VKF_OP_ADD: case VKF_OP_SUB: case VKF_OP_MUL: case VKF_OP_DIV: case VKF_OP_SCALE:
    case VKF_OP_GELU_ERF: case VKF_OP_GELU_TANH: case VKF_OP_RELU: case VKF_OP_SILU:
    case VKF_OP_EXP: case VKF_OP_TANH: case VKF_OP_LOG: case VKF_OP_FUSED_ELEMENTWISE:
      return vkf_lower_elementwise;
    case VKF_OP_LAYERNORM: case VKF_OP_RMSNORM: case VKF_OP_L2_NORMALIZE: return vkf_lower_norm;
    case VKF_OP_SOFTMAX: return vkf_lower_softmax;
    case VKF_OP_ATTENTION: return vkf_lower_attention;
    case VKF_OP_COPY: case VKF_OP_CAST: case VKF_OP_CONCAT: return vkf_lower_copy;
    case VKF_OP_GATHER: return vkf_lower_gather;
    case VKF_OP_PATCH_EMBED: return vkf_lower_patch_embed;
    case VKF_OP_MEAN_POOL: return vkf_lower_mean_pool;
    case VKF_OP_KV_WRITE: return vkf_lower_kv_write;
    case VKF_OP_LINEAR_FEATURES: case VKF_OP_LINEAR_ATTENTION: case VKF_OP_LINEAR_STATE_WRITE:
      return vkf_lower_linear;
    case VKF_OP_REDUCE: return vkf_lower_reduce;
    case VKF_OP_DEPTHWISE_CONV: return vkf_lower_depthwise_conv;
    case VKF_OP_ADDITIVE_ATTENTION: return vkf_lower_additive_attention;
    case VKF_OP_GRU_SCAN: return vkf_lower_gru_scan;
    case VKF_OP_SPARSE_ATTENTION: return vkf_lower_sparse_attention;
    case VKF_OP_ROTARY: return vkf_lower_rotary;
    case VKF_OP_ARGSORT: return vkf_lower_argsort;
    default: return NULL;
  }
}

static uint64_t round16(uint64_t n) { return (n + 15) & ~(uint64_t)15; }

/* Gives every base tensor (non-view) its buffer and offset; views follow their base. */
static vkf_status place_tensors(const vkf_graph *g, const vkf_memory_plan *mp, vkf_lowered *l) {
  uint32_t arena = VKF_PLAN_NO_BUFFER;
  if (mp->peak_size) arena = vkf_plan_add_buffer(l->plan, VKF_PLAN_BUFFER_ARENA, "arena",
                                                 round16(mp->peak_size));
  for (uint32_t id = 1; id < l->tensor_bound; id++) {
    const vkf_tensor *t = vkf_graph_tensor(g, (vkf_value){id});
    vkf_plan_tensor *pt = &l->tensors[id];
    pt->buffer = VKF_PLAN_NO_BUFFER;
    if (t->removed || t->base.id != id) continue;
    uint64_t size = round16(vkf_tensor_size(t));
    switch (t->role) {
      case VKF_ROLE_INPUT:
        pt->buffer = vkf_plan_add_buffer(l->plan, VKF_PLAN_BUFFER_INPUT, t->name, size);
        break;
      case VKF_ROLE_CONSTANT:
        pt->buffer = vkf_plan_add_buffer(l->plan, VKF_PLAN_BUFFER_WEIGHT, t->name, size);
        break;
      case VKF_ROLE_OUTPUT:
        pt->buffer = vkf_plan_add_buffer(l->plan, VKF_PLAN_BUFFER_OUTPUT, t->name, size);
        break;
      case VKF_ROLE_INTERMEDIATE:
        if (id >= mp->tensor_bound || !mp->placements[id].in_arena) {
          if (t->producer == VKF_NO_NODE) continue; /* never produced: nothing reads it */
          return vkf_status_make(VKF_STATUS_INTERNAL, "tensor \"%s\" has no arena placement",
                                 t->name);
        }
        pt->buffer = arena;
        pt->offset = mp->placements[id].offset;
        break;
    }
  }
  for (uint32_t id = 1; id < l->tensor_bound; id++) {
    const vkf_tensor *t = vkf_graph_tensor(g, (vkf_value){id});
    vkf_plan_tensor *pt = &l->tensors[id];
    if (t->removed) continue;
    const vkf_plan_tensor *base = &l->tensors[t->base.id];
    pt->buffer = base->buffer;
    pt->offset = base->offset + (uint64_t)t->offset * vkf_dtype_size(t->dtype);
    pt->dtype = t->dtype;
    pt->rank = t->rank;
    memcpy(pt->shape, t->shape, sizeof pt->shape);
    memcpy(pt->strides, t->strides, sizeof pt->strides);
  }
  return VKF_OK;
}

vkf_status vkf_lower_graph(const vkf_graph *g, const vkf_device_caps *caps,
                           const vkf_lower_options *options, vkf_lowered *out) {
  memset(out, 0, sizeof *out);
  const vkf_memory_plan *mp = vkf_graph_memory_plan(g);
  if (!mp || !mp->valid)
    return vkf_status_make(VKF_STATUS_INTERNAL, "graph \"%s\" has no memory plan to lower",
                           vkf_graph_name(g));
  vkf_lower_ctx ctx = {.caps = caps};
  ctx.alignment = options && options->alignment ? options->alignment
                                                 : caps->min_storage_buffer_offset_alignment;
  if (ctx.alignment < 16) ctx.alignment = 16;
  out->plan = vkf_plan_create();
  out->tensor_bound = vkf_graph_tensor_bound(g);
  out->tensors = calloc(out->tensor_bound, sizeof *out->tensors);
  if (!out->plan || !out->tensors) {
    vkf_lowered_free(out);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  }
  ctx.plan = out->plan;
  vkf_status st = place_tensors(g, mp, out);
  for (uint32_t i = 0; i < vkf_graph_node_count(g) && !st; i++) {
    const vkf_node *n = vkf_graph_node(g, i);
    if (n->dead || (vkf_op_flags(n->op) & VKF_OPF_VIEW)) continue;
    if (n->op == VKF_OP_ROTARY) {
      uint32_t last;
      st = vkf_lower_rotary_kv_group(&ctx, g, out->tensors, i, &last);
      if (!st && last != i) {
        i = last; /* the nodes up to `last` are lowered: one dispatch for all */
        continue;
      }
      if (st) break;
    }
    vkf_lower_fn fn = lower_fn_for(n->op);
    if (!fn) {
      st = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s \"%s\": no GPU lowering for this op",
                           vkf_op_name(n->op), n->name);
      break;
    }
    vkf_lower_node ln = {.name = n->name, .op = n->op, .attrs = &n->attrs,
                         .input_count = n->input_count};
    for (uint32_t j = 0; j < VKF_MAX_NODE_INPUTS; j++) {
      ln.inputs[j].buffer = VKF_PLAN_NO_BUFFER;
      if (j < n->input_count && vkf_value_valid(n->inputs[j]))
        ln.inputs[j] = out->tensors[n->inputs[j].id];
    }
    ln.output = out->tensors[n->output.id];
    st = vkf_lower_sliced(&ctx, fn, &ln);
  }
  if (st) {
    vkf_lowered_free(out);
    return st;
  }
  vkf_plan_finalize(out->plan);
  st = vkf_plan_check_limits(out->plan, caps);
  if (st) vkf_lowered_free(out);
  return st;
}

void vkf_lowered_free(vkf_lowered *l) {
  vkf_plan_destroy(l->plan);
  free(l->tensors);
  memset(l, 0, sizeof *l);
}
