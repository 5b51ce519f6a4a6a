/* The forward pass on host arrays: resolve the caller's dims, fill the defaults, derive, run. */
#include "runtime/model_forward.h"

#include <stdlib.h>
#include <string.h>

/* Where an I/O's batch sits in the caller's array (time-major outputs: dim 1). */
static uint32_t batch_dim_of(const vkf_model_io *io) {
  return io->batch_dim ? io->batch_dim : io->time_major ? 1 : 0;
}

/* A declared input's or output's shape as the caller sees it, with the caller's dims resolved
 * (the batch at batch_dim, dim 1 of target I/O the target sequence, of memory I/O the memory
 * rows: `memory`, any other -1 the sequence); returns its element count. */
static size_t resolved_shape(const vkf_rt_forward *f, const vkf_model_io *io, int64_t memory,
                             int64_t *shape) {
  size_t count = 1;
  for (uint32_t d = 0; d < io->rank; d++) {
    shape[d] = io->shape[d] >= 0           ? io->shape[d]
               : d == batch_dim_of(io)     ? f->batch
               : io->memory && d == 1      ? memory
               : io->target && d == 1      ? f->target
                                           : f->seq;
    count *= (size_t)shape[d];
  }
  return count;
}

/* Moves dim `dim` of data [shape] to the front (to_front) or back from the front to `dim`
 * (shape is then the caller's, with `dim` where the data does not have it yet). */
static vkf_status move_dim(float *data, const int64_t *shape, uint32_t rank, uint32_t dim,
                           int to_front) {
  size_t outer = 1, inner = 1, n = (size_t)shape[dim];
  for (uint32_t d = 0; d < dim; d++) outer *= (size_t)shape[d];
  for (uint32_t d = dim + 1; d < rank; d++) inner *= (size_t)shape[d];
  size_t bytes = outer * n * inner * sizeof *data;
  if (!bytes) return VKF_OK;
  float *copy = malloc(bytes);
  if (!copy) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "moving the batch dim");
  memcpy(copy, data, bytes);
  /* Caller layout [outer, n, inner]; batch-first layout [n, outer, inner]. */
  for (size_t o = 0; o < outer; o++)
    for (size_t j = 0; j < n; j++) {
      float *caller = (to_front ? copy : data) + (o * n + j) * inner;
      float *front = (to_front ? data : copy) + (j * outer + o) * inner;
      memcpy(to_front ? front : caller, to_front ? caller : front, inner * sizeof *data);
    }
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
    if (io->memory && !f->memory) continue; /* no memory rows: the graph has no such input */
    int64_t shape[VKF_MAX_DIMS];
    size_t count = resolved_shape(f, io, f->memory, shape);
    const vkf_model_array *a = NULL;
    for (uint32_t k = 0; k < given_count; k++)
      if (!strcmp(given[k].name, io->name)) a = &given[k];
    f->inputs[i].size = count * 4; /* i32 or f32 */
    uint32_t bd = batch_dim_of(io);
    if (a && !a->int64 && !bd) {
      f->inputs[i].data = a->data;
      continue;
    }
    int32_t *v = malloc(count * sizeof *v + 1);
    if (!v) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "input %s", io->name);
    if (a && !a->int64)
      memcpy(v, a->data, count * sizeof *v);
    else
      for (size_t j = 0; j < count; j++)
        v[j] = a ? (int32_t)((const int64_t *)a->data)[j] : io->fill;
    f->owned[i] = v;
    f->inputs[i].data = v;
    /* Memory inputs are f32; the fill (0) is the same bits either way. */
    if (bd) VKF_RETURN_IF_ERROR(move_dim((float *)v, shape, io->rank, bd, 1));
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
    f->outputs[i].size =
        resolved_shape(f, vkf_model_output(f->model, (uint32_t)i), f->memory_out[i], shape) * 4;
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
  f->memory = vkf_model_memory_len(model, given, given_count);
  f->build = (vkf_rt_model_build){.model = model,
                                  .seq_len = f->seq,
                                  .target_len = f->target,
                                  .memory_len = f->memory,
                                  .dtype = dtype,
                                  .outputs = f->names,
                                  .output_count = output_count};
  /* An unknown output name is the builder's error (it lists the declared ones): build once. */
  vkf_batch_graph probe = {0};
  vkf_status st = vkf_rt_model_build_fn(&f->build, 1, &probe);
  /* A memory output's rows are what the build gives: the probe's [1, ..., M', ...] (batch
   * first, so the caller's dim 1 is the graph's dim 2 when the batch is not dim 0). */
  for (uint32_t i = 0; !st && i < vkf_model_output_count(model); i++) {
    const vkf_model_io *io = vkf_model_output(model, i);
    if (!io->memory || !probe.outputs[i].id) continue;
    const vkf_tensor *t = vkf_graph_tensor(probe.graph, probe.outputs[i]);
    f->memory_out[i] = t->shape[batch_dim_of(io) > 1 ? 2 : 1];
  }
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
    resolved_shape(f, io, f->memory_out[i], shape);
    uint32_t bd = batch_dim_of(io);
    if (bd) VKF_RETURN_IF_ERROR(move_dim(f->outputs[i].data, shape, io->rank, bd, 0));
  }
  return VKF_OK;
}

float *vkf_rt_forward_output(const vkf_rt_forward *f, uint32_t k, uint32_t *rank, int64_t *shape) {
  int i = vkf_model_find_output(f->model, f->names[k]);
  const vkf_model_io *io = vkf_model_output(f->model, (uint32_t)i);
  resolved_shape(f, io, f->memory_out[i], shape);
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
