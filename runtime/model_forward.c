/* The forward pass on host arrays: resolve the caller's dims, fill the defaults, derive, run. */
#include "runtime/model_forward.h"

#include <stdlib.h>
#include <string.h>

/* A declared input's or output's shape with the caller's dims resolved (dim 0 the batch, dim 1
 * of target I/O the target sequence, any other -1 the sequence) as the graph computes it, batch
 * first; returns its element count. */
static size_t resolved_shape(const vkf_rt_forward *f, const vkf_model_io *io, int64_t *shape) {
  size_t count = 1;
  for (uint32_t d = 0; d < io->rank; d++) {
    shape[d] = io->shape[d] >= 0       ? io->shape[d]
               : d == 0                ? f->batch
               : io->target && d == 1 ? f->target
                                       : f->seq;
    count *= (size_t)shape[d];
  }
  return count;
}

/* A time-major output computed batch first [B, N, ...]: its rows swapped in place to [N, B, ...]. */
static vkf_status to_time_major(float *data, const int64_t *shape, uint32_t rank) {
  size_t inner = 1;
  for (uint32_t d = 2; d < rank; d++) inner *= (size_t)shape[d];
  size_t b = (size_t)shape[0], n = (size_t)shape[1], bytes = b * n * inner * sizeof *data;
  float *copy = malloc(bytes + 1);
  if (!copy) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "time-major output");
  memcpy(copy, data, bytes);
  for (size_t i = 0; i < b; i++)
    for (size_t j = 0; j < n; j++)
      memcpy(data + (j * b + i) * inner, copy + (i * n + j) * inner, inner * sizeof *data);
  free(copy);
  return VKF_OK;
}

/* The whole batch of every declared input: given 32-bit data as it is, int64 ids narrowed (the
 * values were range-checked), absent optional inputs filled with their default. Narrowed and
 * filled arrays are allocated into owned[i]. */
static vkf_status gather_inputs(vkf_rt_forward *f, const vkf_model_array *given,
                                uint32_t given_count) {
  const vkf_model *m = f->model;
  for (uint32_t i = 0; i < vkf_model_input_count(m); i++) {
    const vkf_model_io *io = vkf_model_input(m, i);
    if (io->target && !f->target) continue; /* absent decoder inputs: the encoder alone */
    int64_t shape[VKF_MAX_DIMS];
    size_t count = resolved_shape(f, io, shape);
    const vkf_model_array *a = NULL;
    for (uint32_t k = 0; k < given_count; k++)
      if (!strcmp(given[k].name, io->name)) a = &given[k];
    f->inputs[i].size = count * 4; /* i32 or f32 */
    if (a && !a->int64) {
      f->inputs[i].data = a->data;
      continue;
    }
    int32_t *v = malloc(count * sizeof *v + 1);
    if (!v) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "input %s", io->name);
    for (size_t j = 0; j < count; j++) v[j] = a ? (int32_t)((const int64_t *)a->data)[j] : io->fill;
    f->owned[i] = v;
    f->inputs[i].data = v;
  }
  return VKF_OK;
}

/* The inputs the model derives from the values of the declared ones (vkf_model_derive; NULL for
 * those not given) go into the slots after the declared inputs. */
static vkf_status derive_inputs(vkf_rt_forward *f, const vkf_model_array *given,
                                uint32_t given_count) {
  const vkf_model *m = f->model;
  uint32_t declared = vkf_model_input_count(m);
  const int32_t *data[VKF_MODEL_MAX_IO] = {0};
  for (uint32_t k = 0; k < given_count; k++) {
    int i = vkf_model_find_input(m, given[k].name);
    if (i >= 0) data[i] = f->inputs[i].data;
  }
  VKF_RETURN_IF_ERROR(vkf_model_derive(m, data, f->batch, f->seq, &f->derived));
  if (declared + f->derived.count > VKF_MODEL_MAX_IO)
    return vkf_status_make(VKF_STATUS_INTERNAL, "%u inputs, more than %d",
                           declared + f->derived.count, VKF_MODEL_MAX_IO);
  for (uint32_t k = 0; k < f->derived.count; k++)
    f->inputs[declared + k] = (vkf_batch_input){f->derived.data[k], f->derived.size[k]};
  return VKF_OK;
}

/* Host arrays for the requested outputs (others stay NULL: not read). */
static vkf_status alloc_outputs(vkf_rt_forward *f) {
  for (uint32_t k = 0; k < f->name_count; k++) {
    int i = vkf_model_find_output(f->model, f->names[k]);
    int64_t shape[VKF_MAX_DIMS];
    f->outputs[i].size = resolved_shape(f, vkf_model_output(f->model, (uint32_t)i), shape) * 4;
    f->outputs[i].data = malloc(f->outputs[i].size + 1);
    if (!f->outputs[i].data)
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "output %s", f->names[k]);
  }
  return VKF_OK;
}

vkf_status vkf_rt_forward_prepare(vkf_rt_forward *f, vkf_model *model, vkf_dtype dtype,
                                  const vkf_model_array *given, uint32_t given_count,
                                  const char *const *outputs, uint32_t output_count) {
  f->model = model;
  if (output_count == 0 || output_count > VKF_MODEL_MAX_IO)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%u outputs asked for: ask for 1 to %d",
                           output_count, VKF_MODEL_MAX_IO);
  for (uint32_t k = 0; k < output_count; k++) {
    if (!outputs[k])
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "output %u has no name", k);
    for (uint32_t j = 0; j < k; j++)
      if (!strcmp(outputs[j], outputs[k]))
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "output \"%s\" is asked for twice",
                               outputs[k]);
    f->names[k] = outputs[k];
  }
  f->name_count = output_count;
  VKF_RETURN_IF_ERROR(
      vkf_model_check_inputs(model, given, given_count, &f->batch, &f->seq, &f->target));
  f->build = (vkf_rt_model_build){.model = model,
                                  .seq_len = f->seq,
                                  .target_len = f->target,
                                  .dtype = dtype,
                                  .outputs = f->names,
                                  .output_count = output_count};
  /* An unknown output name is the builder's error (it lists the declared ones): build once. */
  vkf_batch_graph probe = {0};
  vkf_status st = vkf_rt_model_build_fn(&f->build, 1, &probe);
  if (probe.graph) vkf_graph_destroy(probe.graph);
  VKF_RETURN_IF_ERROR(st);
  VKF_RETURN_IF_ERROR(gather_inputs(f, given, given_count));
  VKF_RETURN_IF_ERROR(derive_inputs(f, given, given_count));
  f->build.derived = &f->derived;
  return alloc_outputs(f);
}

vkf_status vkf_rt_forward_run(vkf_rt_forward *f, const char *tool, vkf_device *device) {
  VKF_RETURN_IF_ERROR(vkf_rt_batch_run(tool, device, f->batch, vkf_rt_model_build_fn, &f->build,
                                       f->inputs, f->outputs));
  for (uint32_t k = 0; k < f->name_count; k++) {
    int i = vkf_model_find_output(f->model, f->names[k]);
    const vkf_model_io *io = vkf_model_output(f->model, (uint32_t)i);
    int64_t shape[VKF_MAX_DIMS];
    resolved_shape(f, io, shape);
    if (io->time_major) VKF_RETURN_IF_ERROR(to_time_major(f->outputs[i].data, shape, io->rank));
  }
  return VKF_OK;
}

float *vkf_rt_forward_output(const vkf_rt_forward *f, uint32_t k, uint32_t *rank, int64_t *shape) {
  int i = vkf_model_find_output(f->model, f->names[k]);
  const vkf_model_io *io = vkf_model_output(f->model, (uint32_t)i);
  resolved_shape(f, io, shape);
  if (io->time_major) {
    int64_t b = shape[0];
    shape[0] = shape[1], shape[1] = b;
  }
  *rank = io->rank;
  return f->outputs[i].data;
}

float *vkf_rt_forward_take_output(vkf_rt_forward *f, uint32_t k) {
  int i = vkf_model_find_output(f->model, f->names[k]);
  float *data = f->outputs[i].data;
  f->outputs[i].data = NULL;
  return data;
}

void vkf_rt_forward_release(vkf_rt_forward *f) {
  vkf_model_derived_release(&f->derived);
  for (int i = 0; i < VKF_MODEL_MAX_IO; i++) {
    free(f->owned[i]);
    free(f->outputs[i].data);
  }
  memset(f, 0, sizeof *f);
}
