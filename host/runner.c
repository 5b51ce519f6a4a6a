/* Owns graph execution on a device: planning, lowering, session set-up, weight upload, and
 * reading strided tensors back as contiguous data. */
#include "host/runner.h"

#include <stdlib.h>
#include <string.h>

#include "graph/base/env.h"
#include "graph/base/log.h"
#include "graph/passes/memory_plan.h"

struct vkf_runner {
  vkf_graph *graph;
  vkf_lowered lowered;
  vkf_session *session;
  vkf_buffer **in_place; /* per plan buffer: a constant bound in place from its host data */
  uint64_t in_place_bytes;
};

/* Tensor `id` when it is a constant with host data and its own storage (what the runner
 * uploads, binds in place or shares), else NULL. */
static const vkf_tensor *host_constant(const vkf_graph *g, uint32_t id) {
  const vkf_tensor *t = vkf_graph_tensor(g, (vkf_value){id});
  return t->removed || t->role != VKF_ROLE_CONSTANT || !t->data || t->base.id != id ? NULL : t;
}

/* Constants smaller than this are copied: an import costs a memory object and a buffer, and
 * small copies cost nothing worth saving. */
enum { IN_PLACE_MIN_BYTES = 64 << 10 };

/* Binds the large constants the device can read where they are (host/buffer.h,
 * vkf_buffer_import_host) instead of copying them: on a CPU device a copy is a first-touch page
 * fault per 4 KiB of weights, the largest cost of a warm start. A constant whose size is not a
 * multiple of 16 is copied: its plan buffer is padded, and the padding must not be whatever
 * follows the data in host memory. Any import the driver refuses is copied too. */
static void bind_in_place(vkf_runner *r, vkf_device *device, vkf_buffer **external) {
  for (uint32_t id = 1; id < r->lowered.tensor_bound; id++) {
    const vkf_tensor *t = host_constant(r->graph, id);
    if (!t) continue;
    uint32_t b = r->lowered.tensors[id].buffer;
    size_t size = vkf_tensor_size(t);
    if (b == VKF_PLAN_NO_BUFFER || external[b] || size < IN_PLACE_MIN_BYTES || size % 16) continue;
    vkf_buffer *buf = NULL;
    vkf_status st = vkf_buffer_import_host(device, t->data, size, t->name, &buf);
    if (st) {
      vkf_status_free(st);
      continue;
    }
    r->in_place[b] = external[b] = buf;
    r->in_place_bytes += size;
  }
}

/* The plan buffer of the constant in `other` holding `data` of `size` bytes, or UINT32_MAX. */
static uint32_t constant_buffer(const vkf_runner *other, const void *data, size_t size) {
  for (uint32_t id = 1; id < other->lowered.tensor_bound; id++) {
    const vkf_tensor *t = host_constant(other->graph, id);
    if (t && t->data == data && vkf_tensor_size(t) == size &&
        other->lowered.tensors[id].buffer != VKF_PLAN_NO_BUFFER)
      return other->lowered.tensors[id].buffer;
  }
  return UINT32_MAX;
}

/* The host data of the constant that plan buffer `b` holds, or NULL. */
static const void *buffer_data(const vkf_runner *r, uint32_t b) {
  for (uint32_t id = 1; id < r->lowered.tensor_bound; id++) {
    const vkf_tensor *t = host_constant(r->graph, id);
    if (t && r->lowered.tensors[id].buffer == b) return t->data;
  }
  return NULL;
}

/* The plan buffer of `other` that holds what `r`'s interleaved buffer `b` holds (the same layout
 * of the same data), or UINT32_MAX. */
static uint32_t interleaved_buffer(const vkf_runner *other, const vkf_runner *r, uint32_t b) {
  const vkf_plan_buffer *mine = vkf_plan_buffer_get(r->lowered.plan, b);
  const void *data = buffer_data(r, mine->interleave.source);
  for (uint32_t i = 0; data && i < vkf_plan_buffer_count(other->lowered.plan); i++) {
    const vkf_plan_buffer *theirs = vkf_plan_buffer_get(other->lowered.plan, i);
    if (theirs->interleave.rows && theirs->size == mine->size &&
        theirs->interleave.rows == mine->interleave.rows &&
        theirs->interleave.row_bytes == mine->interleave.row_bytes &&
        theirs->interleave.chunk == mine->interleave.chunk &&
        buffer_data(other, theirs->interleave.source) == data)
      return i;
  }
  return UINT32_MAX;
}

/* Writes the regrouped copies (vkf_plan_add_interleaved) of the weights this runner did not
 * write itself (bound in place or another runner's), which vkf_session_write filled for the
 * rest. */
static vkf_status fill_regrouped(vkf_runner *r, const uint8_t *shared) {
  for (uint32_t b = 0; b < vkf_plan_buffer_count(r->lowered.plan); b++) {
    const vkf_plan_buffer *pb = vkf_plan_buffer_get(r->lowered.plan, b);
    uint32_t src = pb->interleave.source;
    if (!pb->interleave.rows || shared[b] || !(shared[src] || r->in_place[src])) continue;
    const void *data = buffer_data(r, src);
    if (!data)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "weight buffer \"%s\": its kernels read it regrouped, and its "
                             "constant has no host data to regroup",
                             pb->name);
    VKF_RETURN_IF_ERROR(vkf_session_write_regrouped(r->session, b, data));
  }
  return VKF_OK;
}

/* Fills external[plan buffer] from the options: caller-owned input buffers, and the buffers of
 * constants another runner already holds (marked in shared[]). */
static vkf_status bind_external(vkf_runner *r, const vkf_runner_options *o, vkf_buffer **external,
                                uint8_t *shared) {
  if (!o) return VKF_OK;
  for (uint32_t i = 0; i < o->binding_count; i++) {
    vkf_value v = o->bindings[i].value;
    const vkf_tensor *t = v.id && v.id < r->lowered.tensor_bound
                              ? vkf_graph_tensor(r->graph, v)
                              : NULL;
    if (!t || t->role != VKF_ROLE_INPUT || t->base.id != v.id ||
        r->lowered.tensors[v.id].buffer == VKF_PLAN_NO_BUFFER)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "binding %u: tensor %u is not a graph input with its own buffer", i,
                             v.id);
    if (vkf_buffer_size(o->bindings[i].buffer) < vkf_tensor_size(t))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "input \"%s\": the bound buffer has %llu bytes, %zu needed", t->name,
                             (unsigned long long)vkf_buffer_size(o->bindings[i].buffer),
                             vkf_tensor_size(t));
    external[r->lowered.tensors[v.id].buffer] = o->bindings[i].buffer;
  }
  const vkf_runner *other = o->share_constants_with;
  if (!other) return VKF_OK;
  /* Pointer equality is the identity: both graphs were built from one model, whose weight cache
   * and file mapping hand out the same data for the same tensor. */
  for (uint32_t id = 1; id < r->lowered.tensor_bound; id++) {
    const vkf_tensor *t = host_constant(r->graph, id);
    if (!t) continue;
    uint32_t mine = r->lowered.tensors[id].buffer;
    uint32_t theirs = constant_buffer(other, t->data, vkf_tensor_size(t));
    if (mine == VKF_PLAN_NO_BUFFER || theirs == UINT32_MAX) continue;
    external[mine] = vkf_session_buffer(other->session, theirs);
    shared[mine] = 1;
  }
  for (uint32_t b = 0; b < vkf_plan_buffer_count(r->lowered.plan); b++) {
    if (!vkf_plan_buffer_get(r->lowered.plan, b)->interleave.rows) continue;
    uint32_t theirs = interleaved_buffer(other, r, b);
    if (theirs == UINT32_MAX) continue;
    external[b] = vkf_session_buffer(other->session, theirs);
    shared[b] = 1;
  }
  return VKF_OK;
}

vkf_status vkf_runner_create(vkf_device *device, vkf_graph *graph,
                             const vkf_runner_options *options, vkf_runner **out_runner) {
  *out_runner = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_status(graph));
  vkf_runner *r = calloc(1, sizeof *r);
  if (!r) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  r->graph = graph;
  vkf_status st = vkf_memory_plan_build(graph, NULL);
  if (!st) st = vkf_lower_graph(graph, vkf_device_caps_get(device), NULL, &r->lowered);
  vkf_buffer **external = NULL;
  uint32_t nb = st ? 0 : vkf_plan_buffer_count(r->lowered.plan);
  uint8_t *shared = NULL; /* per plan buffer: bound to another runner's weights */
  if (!st) {
    external = calloc(nb ? nb : 1, sizeof *external);
    shared = calloc(nb ? nb : 1, 1);
    if (!external || !shared) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "runner buffers");
  }
  if (!st) st = bind_external(r, options, external, shared);
  if (!st) {
    r->in_place = calloc(nb ? nb : 1, sizeof *r->in_place);
    if (!r->in_place) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "runner buffers");
  }
  if (!st && !vkf_env_get()->copy_weights) bind_in_place(r, device, external);
  vkf_session_options so = {.profile = options ? options->profile : 0,
                            .external = external,
                            .external_count = nb,
                            .finish_later = 1};
  if (!st) st = vkf_session_create(device, r->lowered.plan, &so, &r->session);
  /* Two passes over the weights: the first sums what the second uploads, for the progress. */
  vkf_progress p = {.task = "uploading weights", .unit = "bytes"};
  for (int pass = 0; pass < 2 && !st; pass++) {
    for (uint32_t id = 1; id < r->lowered.tensor_bound && !st; id++) {
      const vkf_tensor *t = host_constant(graph, id);
      if (!t) continue;
      uint32_t b = r->lowered.tensors[id].buffer;
      if (shared[b] || r->in_place[b]) continue;
      if (pass == 0) {
        p.total += vkf_tensor_size(t);
        continue;
      }
      p.item = t->name;
      vkf_device_report_progress(device, &p);
      st = vkf_session_write(r->session, r->lowered.tensors[id].buffer, 0, t->data,
                             vkf_tensor_size(t));
      p.done += vkf_tensor_size(t);
    }
  }
  if (!st) st = fill_regrouped(r, shared);
  if (p.total) {
    p.done = p.total, p.item = NULL;
    vkf_device_report_progress(device, &p);
  }
  if (!st && (p.total || r->in_place_bytes))
    vkf_log(VKF_LOG_DEBUG, "weights: %.1f MB bound in place, %.1f MB copied",
            r->in_place_bytes / 1e6, p.total / 1e6);
  /* The kernels built on worker threads during the uploads. */
  if (!st) st = vkf_session_finish(r->session);
  free(external);
  free(shared);
  if (st) {
    vkf_runner_destroy(r);
    return st;
  }
  *out_runner = r;
  return VKF_OK;
}

void vkf_runner_destroy(vkf_runner *r) {
  if (!r) return;
  vkf_session_destroy(r->session);
  /* in_place exists only once the plan does (it is sized by the plan's buffers). */
  for (uint32_t i = 0; r->in_place && i < vkf_plan_buffer_count(r->lowered.plan); i++)
    vkf_buffer_destroy(r->in_place[i]);
  free(r->in_place);
  vkf_lowered_free(&r->lowered);
  free(r);
}

static vkf_status locate(const vkf_runner *r, vkf_value v, const vkf_plan_tensor **out) {
  if (v.id == 0 || v.id >= r->lowered.tensor_bound ||
      r->lowered.tensors[v.id].buffer == VKF_PLAN_NO_BUFFER)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "tensor %u has no device storage", v.id);
  *out = &r->lowered.tensors[v.id];
  return VKF_OK;
}

vkf_status vkf_runner_set(vkf_runner *r, vkf_value v, const void *data, size_t size) {
  const vkf_plan_tensor *pt = NULL;
  VKF_RETURN_IF_ERROR(locate(r, v, &pt));
  const vkf_tensor *t = vkf_graph_tensor(r->graph, v);
  if (size != vkf_tensor_size(t) || t->base.id != v.id)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "tensor \"%s\": %zu bytes given, %zu expected (contiguous)", t->name,
                           size, vkf_tensor_size(t));
  return vkf_session_write(r->session, pt->buffer, pt->offset, data, size);
}

vkf_status vkf_runner_run(vkf_runner *r) {
  VKF_RETURN_IF_ERROR(vkf_session_run(r->session));
  /* VKF_PROFILE=1: the per-dispatch table goes to stderr after every run (never stdout). */
  if (vkf_env_get()->profile) return vkf_session_print_profile(r->session, stderr);
  return VKF_OK;
}

vkf_status vkf_runner_get(vkf_runner *r, vkf_value v, void *dst, size_t size) {
  const vkf_plan_tensor *pt = NULL;
  VKF_RETURN_IF_ERROR(locate(r, v, &pt));
  const vkf_tensor *t = vkf_graph_tensor(r->graph, v);
  if (size != vkf_tensor_size(t))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "tensor \"%s\": %zu bytes asked, %zu held",
                           t->name, size, vkf_tensor_size(t));
  size_t elem = vkf_dtype_size(t->dtype);
  if (vkf_plan_tensor_is_contiguous(pt))
    return vkf_session_read(r->session, pt->buffer, pt->offset, dst, size);
  /* A strided view: read the span it covers, then gather row-major. */
  int64_t last = 0;
  for (uint32_t i = 0; i < pt->rank; i++) last += (pt->shape[i] - 1) * pt->strides[i];
  size_t span = (size_t)(last + 1) * elem;
  unsigned char *tmp = malloc(span);
  if (!tmp) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  vkf_status st = vkf_session_read(r->session, pt->buffer, pt->offset, tmp, span);
  if (!st) {
    int64_t count = vkf_plan_tensor_count(pt), idx[VKF_MAX_DIMS] = {0};
    for (int64_t e = 0; e < count; e++) {
      int64_t off = 0;
      for (uint32_t i = 0; i < pt->rank; i++) off += idx[i] * pt->strides[i];
      memcpy((unsigned char *)dst + e * elem, tmp + off * elem, elem);
      for (uint32_t i = pt->rank; i-- > 0;)
        if (++idx[i] < pt->shape[i]) break;
        else idx[i] = 0;
    }
  }
  free(tmp);
  return st;
}

vkf_session *vkf_runner_session(vkf_runner *r) { return r->session; }
uint64_t vkf_runner_device_bytes(const vkf_runner *r) {
  return vkf_session_device_bytes(r->session) + r->in_place_bytes;
}
const vkf_lowered *vkf_runner_lowered(const vkf_runner *r) { return &r->lowered; }
uint64_t vkf_runner_in_place_bytes(const vkf_runner *r) { return r->in_place_bytes; }
