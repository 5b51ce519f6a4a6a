/* Owns plan execution: kernel lookup per dispatch, device buffers per plan buffer, the single
 * recorded command list, and optional timestamp profiling. */
#include "host/session.h"

#include <stdlib.h>
#include <string.h>

#include "graph/base/env.h"
#include "host/buffer.h"
#include "host/cmd.h"
#include "host/kernel.h"
#include "host/kernel_batch.h"

/* A run's small inputs (a decode step's ids, positions, lengths) live in host-visible memory and
 * its outputs up to a few MiB (a step's logits or next ids) in host-readable memory: on a discrete
 * GPU, writing them and reading them back are memcpys around the run's one submission and one
 * wait, not a staged copy each with a submission and a wait of its own. Larger ones stay
 * device-local, where the kernels read and write them fastest. */
enum { SMALL_INPUT_BYTES = 64u << 10, READBACK_OUTPUT_BYTES = 4u << 20 };

struct vkf_session {
  vkf_device *device;
  const vkf_plan *plan;
  vkf_buffer **buffers;
  uint8_t *owned;       /* per plan buffer: 1 when the session allocated it */
  vkf_kernel **kernels; /* per dispatch */
  vkf_cmd *cmd;
  int profile;
  vkf_kernel_batch *building; /* kernels still building on worker threads */
  int recorded;               /* kernels looked up and the command list recorded */
  double *times_ns; /* per dispatch, last run */
  double total_ns;
  uint64_t device_bytes;
};

/* The kernel descriptor of dispatch `d`; `defines` and `storage` hold its parsed "NAME=VALUE"s. */
typedef struct dispatch_desc {
  vkf_kernel_desc desc;
  vkf_shader_define defines[VKF_PLAN_MAX_DEFINES];
  char storage[VKF_PLAN_MAX_DEFINES][128];
} dispatch_desc;

static void desc_of(const vkf_plan_dispatch *d, dispatch_desc *out) {
  for (uint32_t i = 0; i < d->define_count; i++) {
    snprintf(out->storage[i], sizeof out->storage[i], "%s", d->defines[i]);
    char *eq = strchr(out->storage[i], '=');
    if (eq) *eq = 0;
    out->defines[i] = (vkf_shader_define){out->storage[i], eq ? eq + 1 : NULL};
  }
  out->desc = (vkf_kernel_desc){.shader = d->shader,
                                .source = d->source,
                                .defines = out->defines,
                                .define_count = d->define_count,
                                .spec_constants = d->spec,
                                .spec_constant_count = d->spec_count,
                                .binding_count = d->binding_count,
                                .push_constant_size = d->push_size,
                                .subgroup_size = d->subgroup_size};
  for (uint32_t i = 0; i < d->binding_count; i++) out->desc.texel[i] = (uint8_t)d->bindings[i].texel;
}

/* Starts building every kernel of the plan on worker threads (kernel_batch.h). */
static vkf_status start_kernels(vkf_session *s) {
  uint32_t n = vkf_plan_dispatch_count(s->plan);
  dispatch_desc *dd = malloc((n ? n : 1) * sizeof *dd);
  vkf_kernel_desc *descs = malloc((n ? n : 1) * sizeof *descs);
  vkf_status st = dd && descs ? VKF_OK
                              : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  for (uint32_t i = 0; i < n && !st; i++) {
    desc_of(vkf_plan_dispatch_get(s->plan, i), &dd[i]);
    descs[i] = dd[i].desc;
  }
  if (!st) st = vkf_kernel_batch_start(s->device, descs, n, &s->building);
  free(dd);
  free(descs);
  return st;
}

static vkf_status kernel_for(vkf_device *device, const vkf_plan_dispatch *d, vkf_kernel **out) {
  dispatch_desc dd;
  desc_of(d, &dd);
  vkf_status s = vkf_kernel_get(device, &dd.desc, out);
  return s ? vkf_status_annotate(s, "node \"%s\": ", d->node ? d->node : "?") : VKF_OK;
}

static vkf_status record(vkf_session *s) {
  uint32_t n = vkf_plan_dispatch_count(s->plan);
  VKF_RETURN_IF_ERROR(vkf_cmd_begin(s->cmd));
  if (s->profile) vkf_cmd_timestamp(s->cmd, 0);
  for (uint32_t i = 0; i < n; i++) {
    const vkf_plan_dispatch *d = vkf_plan_dispatch_get(s->plan, i);
    if (d->barrier_before) vkf_cmd_barrier(s->cmd, NULL, 0);
    vkf_binding bindings[VKF_PLAN_MAX_BINDINGS];
    for (uint32_t j = 0; j < d->binding_count; j++)
      bindings[j] = (vkf_binding){s->buffers[d->bindings[j].buffer], d->bindings[j].offset,
                                  d->bindings[j].size};
    vkf_status st = vkf_cmd_dispatch(s->cmd, s->kernels[i], bindings, d->push, d->groups[0],
                                     d->groups[1], d->groups[2]);
    if (st) return vkf_status_annotate(st, "node \"%s\": ", d->node ? d->node : "?");
    if (s->profile) vkf_cmd_timestamp(s->cmd, i + 1);
  }
  return vkf_cmd_end(s->cmd);
}

vkf_status vkf_session_create(vkf_device *device, const vkf_plan *plan,
                              const vkf_session_options *options, vkf_session **out_session) {
  *out_session = NULL;
  vkf_session *s = calloc(1, sizeof *s);
  if (!s) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  s->device = device;
  s->plan = plan;
  s->profile = (options && options->profile) || vkf_env_get()->profile;
  uint32_t nb = vkf_plan_buffer_count(plan), nd = vkf_plan_dispatch_count(plan);
  s->buffers = calloc(nb ? nb : 1, sizeof *s->buffers);
  s->owned = calloc(nb ? nb : 1, 1);
  s->kernels = calloc(nd ? nd : 1, sizeof *s->kernels);
  s->times_ns = calloc(nd + 1, sizeof *s->times_ns);
  vkf_status st = (s->buffers && s->owned && s->kernels && s->times_ns)
                      ? VKF_OK
                      : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  /* The driver compiles while the buffers are allocated (and, with finish_later, while the
   * caller uploads weights). */
  if (!st) st = start_kernels(s);
  for (uint32_t i = 0; i < nb && !st; i++) {
    const vkf_plan_buffer *b = vkf_plan_buffer_get(plan, i);
    vkf_buffer *ext = options && options->external && i < options->external_count
                          ? options->external[i]
                          : NULL;
    if (ext && vkf_buffer_size(ext) < b->size)
      st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "buffer \"%s\": the caller's buffer has %llu bytes, the plan needs %llu",
                           b->name, (unsigned long long)vkf_buffer_size(ext),
                           (unsigned long long)b->size);
    else if (ext)
      s->buffers[i] = ext;
    else if (b->kind == VKF_PLAN_BUFFER_INPUT && b->size <= SMALL_INPUT_BYTES)
      st = vkf_buffer_create_input(device, b->size, b->name, &s->buffers[i]);
    else if (b->kind == VKF_PLAN_BUFFER_OUTPUT && b->size <= READBACK_OUTPUT_BYTES)
      st = vkf_buffer_create_readback(device, b->size, b->name, &s->buffers[i]);
    else
      st = vkf_buffer_create(device, b->size, b->name, &s->buffers[i]);
    if (!st && !ext) s->owned[i] = 1, s->device_bytes += b->size;
  }
  if (!st && !(options && options->finish_later)) st = vkf_session_finish(s);
  if (st) {
    vkf_session_destroy(s);
    return st;
  }
  *out_session = s;
  return VKF_OK;
}

vkf_status vkf_session_finish(vkf_session *s) {
  if (s->recorded) return VKF_OK;
  vkf_status st = vkf_kernel_batch_wait(s->building);
  s->building = NULL;
  uint32_t nd = vkf_plan_dispatch_count(s->plan);
  for (uint32_t i = 0; i < nd && !st; i++)
    st = kernel_for(s->device, vkf_plan_dispatch_get(s->plan, i), &s->kernels[i]);
  if (!st) {
    if (s->profile && !vkf_device_caps_get(s->device)->timestamps) s->profile = 0;
    vkf_cmd_destroy(s->cmd); /* a failed earlier attempt's, when finish is called again */
    s->cmd = NULL;
    st = vkf_cmd_create(s->device, s->profile ? nd + 1 : 0, &s->cmd);
  }
  if (!st) st = record(s);
  s->recorded = !st;
  return st;
}

void vkf_session_destroy(vkf_session *s) {
  if (!s) return;
  /* Workers may still be building: they must be done before the device can go. */
  vkf_status_free(vkf_kernel_batch_wait(s->building));
  vkf_cmd_destroy(s->cmd);
  if (s->buffers && s->owned)
    for (uint32_t i = 0; i < vkf_plan_buffer_count(s->plan); i++)
      if (s->owned[i]) vkf_buffer_destroy(s->buffers[i]);
  free(s->buffers);
  free(s->owned);
  free(s->kernels);
  free(s->times_ns);
  free(s);
}

static vkf_status check_buffer(const vkf_session *s, uint32_t buffer) {
  if (buffer >= vkf_plan_buffer_count(s->plan))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "no plan buffer %u", buffer);
  return VKF_OK;
}

vkf_status vkf_session_write_regrouped(vkf_session *s, uint32_t copy, const void *data) {
  VKF_RETURN_IF_ERROR(check_buffer(s, copy));
  const vkf_plan_buffer *b = vkf_plan_buffer_get(s->plan, copy);
  if (!b->interleave.rows || !s->owned[copy]) return VKF_OK;
  void *tmp = malloc(b->size);
  if (!tmp)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "\"%s\": %llu bytes of host memory", b->name,
                           (unsigned long long)b->size);
  vkf_plan_interleave_fill(b, data, tmp);
  vkf_status st = vkf_buffer_upload(s->device, s->buffers[copy], 0, tmp, b->size);
  free(tmp);
  return st ? vkf_status_annotate(st, "writing \"%s\": ", b->name) : VKF_OK;
}

vkf_status vkf_session_write(vkf_session *s, uint32_t buffer, uint64_t offset, const void *data,
                             uint64_t size) {
  VKF_RETURN_IF_ERROR(check_buffer(s, buffer));
  vkf_status st = vkf_buffer_upload(s->device, s->buffers[buffer], offset, data, size);
  if (st)
    return vkf_status_annotate(st, "writing \"%s\": ", vkf_plan_buffer_get(s->plan, buffer)->name);
  /* a weight's regrouped copies follow a write of all its rows (what they are made from); inputs,
   * written every run, skip the search */
  if (offset || vkf_plan_buffer_get(s->plan, buffer)->kind != VKF_PLAN_BUFFER_WEIGHT) return VKF_OK;
  for (uint32_t i = 0; i < vkf_plan_buffer_count(s->plan); i++) {
    const vkf_plan_buffer *b = vkf_plan_buffer_get(s->plan, i);
    if (b->interleave.rows && b->interleave.source == buffer && size >= b->size)
      VKF_RETURN_IF_ERROR(vkf_session_write_regrouped(s, i, data));
  }
  return VKF_OK;
}

vkf_status vkf_session_read(vkf_session *s, uint32_t buffer, uint64_t offset, void *out_data,
                            uint64_t size) {
  VKF_RETURN_IF_ERROR(check_buffer(s, buffer));
  vkf_status st = vkf_buffer_download(s->device, s->buffers[buffer], offset, out_data, size);
  return st ? vkf_status_annotate(st, "reading \"%s\": ", vkf_plan_buffer_get(s->plan, buffer)->name)
            : VKF_OK;
}

vkf_buffer *vkf_session_buffer(const vkf_session *s, uint32_t buffer) {
  return buffer < vkf_plan_buffer_count(s->plan) ? s->buffers[buffer] : NULL;
}

vkf_status vkf_session_run(vkf_session *s) {
  VKF_RETURN_IF_ERROR(vkf_session_finish(s));
  VKF_RETURN_IF_ERROR(vkf_cmd_submit_wait(s->cmd));
  if (s->profile) {
    uint32_t n = vkf_plan_dispatch_count(s->plan);
    VKF_RETURN_IF_ERROR(vkf_cmd_timestamps_ns(s->cmd, n + 1, s->times_ns));
    s->total_ns = s->times_ns[n];
    /* Turn cumulative stamps into per-dispatch durations, last first. */
    for (uint32_t i = n; i > 0; i--) s->times_ns[i] -= s->times_ns[i - 1];
  }
  return VKF_OK;
}

vkf_status vkf_session_dispatch_times(vkf_session *s, double *out_ns) {
  if (!s->profile)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "the session was created without profiling");
  memcpy(out_ns, s->times_ns + 1, vkf_plan_dispatch_count(s->plan) * sizeof(double));
  return VKF_OK;
}

double vkf_session_total_ns(const vkf_session *s) { return s->total_ns; }
uint64_t vkf_session_device_bytes(const vkf_session *s) { return s->device_bytes; }

vkf_status vkf_session_print_profile(vkf_session *s, FILE *out) {
  if (!s->profile)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "the session was created without profiling");
  uint32_t n = vkf_plan_dispatch_count(s->plan);
  fprintf(out, "| # | node | kernel | time (ms) | share |\n|---|---|---|---|---|\n");
  for (uint32_t i = 0; i < n; i++) {
    const vkf_plan_dispatch *d = vkf_plan_dispatch_get(s->plan, i);
    double t = s->times_ns[i + 1];
    fprintf(out, "| %u | %s | %s | %.3f | %.1f%% |\n", i, d->node ? d->node : "", d->shader,
            t / 1e6, s->total_ns > 0 ? 100.0 * t / s->total_ns : 0.0);
  }
  fprintf(out, "| | total | | %.3f | 100%% |\n", s->total_ns / 1e6);
  return VKF_OK;
}
