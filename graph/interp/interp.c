/* Owns the interpreter's storage (one slot per base tensor), value binding and read-back, the
 * node loop, and the helpers reference functions share. The ops live in graph/interp/interp_*.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/quant.h"

#include "graph/base/half.h"
#include "graph/interp/interp_internal.h"

/* The op table's reference column, indexed by op. */
static const vkf_ref_fn k_ref[VKF_OP_COUNT] = {
#define VKF_OP(id, name, min_in, max_in, flags, shape_fn, ref_fn) [VKF_OP_##id] = ref_fn,
#include "graph/ir/ops.def"
#undef VKF_OP
};

vkf_status vkf_interp_create(const vkf_graph *g, vkf_interp **out_interp) {
  *out_interp = NULL;
  vkf_interp *it = calloc(1, sizeof *it);
  if (!it) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "creating interpreter");
  it->g = g;
  it->bound = vkf_graph_tensor_bound(g);
  it->slots = calloc(it->bound, sizeof *it->slots);
  if (!it->slots) {
    free(it);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "creating interpreter");
  }
  *out_interp = it;
  return VKF_OK;
}

static void free_temps(vkf_interp *it) {
  for (uint32_t i = 0; i < it->temp_count; i++) free(it->temps[i]);
  it->temp_count = 0;
}

void vkf_interp_destroy(vkf_interp *it) {
  if (!it) return;
  for (uint32_t i = 0; i < it->bound; i++) {
    if (!it->slots[i].borrowed) free(it->slots[i].f);
    free(it->slots[i].i);
  }
  free_temps(it);
  free(it->temps);
  free(it->slots);
  free(it);
}

vkf_status vkf_interp_oom(const vkf_node *n) {
  return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                         "%s \"%s\": out of host memory in the "
                         "interpreter",
                         vkf_op_name(n->op), n->name);
}

void *vkf_interp_temp(vkf_interp *it, size_t size) {
  if (it->temp_count == it->temp_cap) {
    uint32_t cap = it->temp_cap ? it->temp_cap * 2 : 16;
    void **p = realloc(it->temps, cap * sizeof *p);
    if (!p) {
      it->oom = 1;
      return NULL;
    }
    it->temps = p;
    it->temp_cap = cap;
  }
  void *m = calloc(1, size ? size : 1);
  if (!m) {
    it->oom = 1;
    return NULL;
  }
  it->temps[it->temp_count++] = m;
  return m;
}

/* Allocates (or reuses) the storage of base tensor `id`; the value is zeroed. */
static int slot_alloc(vkf_interp *it, uint32_t id) {
  const vkf_tensor *t = &it->g->tensors[id];
  vkf_interp_slot *s = &it->slots[id];
  size_t count = (size_t)vkf_tensor_element_count(t);
  if (s->borrowed) {
    s->f = NULL;
    s->borrowed = 0;
  }
  if (t->dtype == VKF_I32) {
    if (!s->i) s->i = malloc(count * sizeof(int32_t));
    if (!s->i) return 0;
    memset(s->i, 0, count * sizeof(int32_t));
  } else {
    if (!s->f) s->f = malloc(count * sizeof(float));
    if (!s->f) return 0;
    memset(s->f, 0, count * sizeof(float));
  }
  return 1;
}

static void fill_from_host(float *f, int32_t *i, vkf_dtype dtype, const void *data, size_t count) {
  if (dtype == VKF_I32) {
    memcpy(i, data, count * sizeof(int32_t));
  } else if (dtype == VKF_F32) {
    memcpy(f, data, count * sizeof(float));
  } else if (vkf_dtype_is_quant(dtype)) {
    /* ggml's dequantisation: the kernels' values exactly */
    vkf_quant_dequantize((vkf_quant_format)(dtype - VKF_Q8_0), data, count, f);
  } else {
    /* f16 or bf16, read bytewise: a bf16 weight may sit at an odd offset of a mapped file */
    float (*widen)(uint16_t) = dtype == VKF_BF16 ? vkf_bf16_to_float : vkf_half_to_float;
    const unsigned char *b = data;
    for (size_t k = 0; k < count; k++) {
      uint16_t h;
      memcpy(&h, b + 2 * k, 2);
      f[k] = widen(h);
    }
  }
}

vkf_status vkf_interp_set(vkf_interp *it, vkf_value v, const void *data, size_t size) {
  VKF_ASSERT(v.id > 0 && v.id < it->bound);
  const vkf_tensor *t = &it->g->tensors[v.id];
  if (t->base.id != v.id)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "tensor \"%s\" is a view; set its base",
                           t->name);
  if (size != vkf_tensor_size(t))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "tensor \"%s\": %zu bytes given, %zu expected", t->name, size,
                           vkf_tensor_size(t));
  if (!slot_alloc(it, v.id))
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "binding \"%s\"", t->name);
  vkf_interp_slot *s = &it->slots[v.id];
  fill_from_host(s->f, s->i, t->dtype, data, (size_t)vkf_tensor_element_count(t));
  s->set = 1;
  return VKF_OK;
}

/* Makes sure a base tensor has a value: constants with data are bound on first use (f32 in place,
 * others converted). */
static vkf_status ensure_value(vkf_interp *it, uint32_t base_id, const char *reader) {
  vkf_interp_slot *s = &it->slots[base_id];
  if (s->set) return VKF_OK;
  const vkf_tensor *t = &it->g->tensors[base_id];
  if (t->role == VKF_ROLE_CONSTANT && t->data) {
    if (t->dtype == VKF_F32) {
      free(s->f);
      s->f = (float *)t->data; /* read-only: constants are never outputs */
      s->borrowed = 1;
      s->set = 1;
      return VKF_OK;
    }
    if (!slot_alloc(it, base_id))
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "binding \"%s\"", t->name);
    fill_from_host(s->f, s->i, t->dtype, t->data, (size_t)vkf_tensor_element_count(t));
    s->set = 1;
    return VKF_OK;
  }
  return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: %s \"%s\" has no value%s", reader,
                         vkf_role_name(t->role), t->name,
                         t->producer == VKF_NO_NODE ? " (bind it)" : " (run its producer first)");
}

int64_t vkf_strided_offset(int64_t flat, uint32_t rank, const int64_t *shape,
                           const int64_t *strides) {
  int64_t off = 0;
  for (uint32_t d = rank; d-- > 0;) {
    off += (flat % shape[d]) * strides[d];
    flat /= shape[d];
  }
  return off;
}

void vkf_broadcast_strides(uint32_t in_rank, const int64_t *in_shape, uint32_t out_rank,
                           const int64_t *out_shape, int64_t *out_strides) {
  int64_t s = 1;
  for (uint32_t d = out_rank; d-- > 0;) {
    int64_t k = (int64_t)d - (int64_t)(out_rank - in_rank);
    if (k < 0 || in_shape[k] == 1) {
      out_strides[d] = 0;
    } else {
      out_strides[d] = s;
    }
    if (k >= 0) s *= in_shape[k];
  }
  (void)out_shape;
}

const vkf_tensor *vkf_interp_in_tensor(const vkf_interp *it, const vkf_node *n, uint32_t slot) {
  if (slot >= n->input_count || n->inputs[slot].id == 0) return NULL;
  return &it->g->tensors[n->inputs[slot].id];
}

/* Strided read of tensor `t` (which may be a view) into contiguous float / int32 arrays. */
static void gather_value(const vkf_interp *it, const vkf_tensor *t, float *f, int32_t *i) {
  const vkf_interp_slot *s = &it->slots[t->base.id];
  int64_t count = vkf_tensor_element_count(t);
  for (int64_t k = 0; k < count; k++) {
    int64_t off = t->offset + vkf_strided_offset(k, t->rank, t->shape, t->strides);
    if (t->dtype == VKF_I32) {
      if (i) i[k] = s->i[off];
      if (f) f[k] = (float)s->i[off];
    } else {
      if (f) f[k] = s->f[off];
      if (i) i[k] = (int32_t)s->f[off];
    }
  }
}

static int is_plain(const vkf_tensor *t) {
  return t->offset == 0 && vkf_tensor_is_contiguous(t);
}

const float *vkf_interp_in_f32(vkf_interp *it, const vkf_node *n, uint32_t slot) {
  const vkf_tensor *t = vkf_interp_in_tensor(it, n, slot);
  if (!t) return NULL;
  if (t->dtype != VKF_I32 && is_plain(t)) return it->slots[t->base.id].f;
  float *f = vkf_interp_temp(it, (size_t)vkf_tensor_element_count(t) * sizeof(float));
  if (f) gather_value(it, t, f, NULL);
  return f;
}

const int32_t *vkf_interp_in_i32(vkf_interp *it, const vkf_node *n, uint32_t slot) {
  const vkf_tensor *t = vkf_interp_in_tensor(it, n, slot);
  if (!t) return NULL;
  if (t->dtype == VKF_I32 && is_plain(t)) return it->slots[t->base.id].i;
  int32_t *i = vkf_interp_temp(it, (size_t)vkf_tensor_element_count(t) * sizeof(int32_t));
  if (i) gather_value(it, t, NULL, i);
  return i;
}

float *vkf_interp_out_f32(vkf_interp *it, const vkf_node *n) {
  if (!slot_alloc(it, n->output.id)) {
    it->oom = 1;
    return NULL;
  }
  return it->slots[n->output.id].f;
}

int32_t *vkf_interp_out_i32(vkf_interp *it, const vkf_node *n) {
  if (!slot_alloc(it, n->output.id)) {
    it->oom = 1;
    return NULL;
  }
  return it->slots[n->output.id].i;
}

vkf_status vkf_interp_run_node(vkf_interp *it, uint32_t index) {
  const vkf_graph *g = it->g;
  VKF_ASSERT(vkf_graph_tensor_bound(g) == it->bound);
  VKF_ASSERT(index < vkf_graph_node_count(g));
  const vkf_node *n = vkf_graph_node(g, index);
  char reader[256];
  snprintf(reader, sizeof reader, "%s \"%s\"", vkf_op_name(n->op), n->name);
  for (uint32_t s = 0; s < n->input_count; s++) {
    if (n->inputs[s].id == 0) continue;
    VKF_RETURN_IF_ERROR(ensure_value(it, g->tensors[n->inputs[s].id].base.id, reader));
  }
  it->oom = 0;
  vkf_status st = k_ref[n->op](it, n);
  free_temps(it);
  if (st) return st;
  if (it->oom) return vkf_interp_oom(n);
  const vkf_tensor *out = &g->tensors[n->output.id];
  if (out->base.id == n->output.id) {
    vkf_interp_slot *s = &it->slots[n->output.id];
    if (!s->set && !s->f && !s->i)
      return vkf_status_make(VKF_STATUS_INTERNAL, "%s: produced no value", reader);
    if (out->dtype == VKF_F16) {
      int64_t count = vkf_tensor_element_count(out);
      for (int64_t k = 0; k < count; k++) s->f[k] = vkf_half_to_float(vkf_float_to_half(s->f[k]));
    }
    s->set = 1;
  }
  return VKF_OK;
}

vkf_status vkf_interp_run(vkf_interp *it) {
  uint32_t count = vkf_graph_node_count(it->g);
  for (uint32_t i = 0; i < count; i++) VKF_RETURN_IF_ERROR(vkf_interp_run_node(it, i));
  return VKF_OK;
}

vkf_status vkf_interp_get(const vkf_interp *it, vkf_value v, void *dst, size_t dst_size) {
  VKF_ASSERT(v.id > 0 && v.id < it->bound);
  const vkf_tensor *t = &it->g->tensors[v.id];
  if (dst_size != vkf_tensor_size(t))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "reading \"%s\": %zu bytes given, %zu "
                           "expected",
                           t->name, dst_size, vkf_tensor_size(t));
  if (!it->slots[t->base.id].set)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "reading \"%s\": it has no value", t->name);
  size_t count = (size_t)vkf_tensor_element_count(t);
  if (t->dtype == VKF_I32) {
    gather_value(it, t, NULL, dst);
    return VKF_OK;
  }
  float *f = t->dtype == VKF_F32 ? dst : malloc(count * sizeof(float));
  if (!f) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "reading \"%s\"", t->name);
  gather_value(it, t, f, NULL);
  if (t->dtype == VKF_F16 || t->dtype == VKF_BF16) {
    uint16_t (*narrow)(float) = t->dtype == VKF_BF16 ? vkf_float_to_bf16 : vkf_float_to_half;
    uint16_t *h = dst;
    for (size_t k = 0; k < count; k++) h[k] = narrow(f[k]);
    free(f);
  }
  return VKF_OK;
}

vkf_status vkf_interp_get_f32(const vkf_interp *it, vkf_value v, float *dst, size_t count) {
  VKF_ASSERT(v.id > 0 && v.id < it->bound);
  const vkf_tensor *t = &it->g->tensors[v.id];
  if (count != (size_t)vkf_tensor_element_count(t))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "reading \"%s\": %zu elements asked, %" PRId64 " present", t->name,
                           count, vkf_tensor_element_count(t));
  if (!it->slots[t->base.id].set)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "reading \"%s\": it has no value", t->name);
  gather_value(it, t, dst, NULL);
  return VKF_OK;
}

vkf_status vkf_interp_evaluate(const vkf_graph *g, const vkf_input_binding *inputs,
                               size_t input_count, const vkf_output_binding *outputs,
                               size_t output_count) {
  vkf_interp *it;
  VKF_RETURN_IF_ERROR(vkf_interp_create(g, &it));
  vkf_status s = VKF_OK;
  for (size_t i = 0; i < input_count && !s; i++)
    s = vkf_interp_set(it, inputs[i].value, inputs[i].data, inputs[i].size);
  if (!s) s = vkf_interp_run(it);
  for (size_t i = 0; i < output_count && !s; i++)
    s = vkf_interp_get(it, outputs[i].value, outputs[i].data, outputs[i].size);
  vkf_interp_destroy(it);
  return s;
}
