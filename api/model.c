/* Models of vkformer.h: loading any registered architecture, its declared inputs and outputs,
 * and the forward pass on host arrays (runtime/model_forward.h, split into runs to fit). */
#include <stdlib.h>
#include <string.h>

#include "api/handles.h"
#include "runtime/model_forward.h"

vkformer_status vkformer_model_load(vkformer_device *device, const char *model_dir,
                                    const vkformer_model_options *options,
                                    vkformer_model **out_model) {
  VKF_API_REQUIRE(out_model, "vkformer_model_load: out_model is NULL");
  *out_model = NULL;
  VKF_API_REQUIRE(device, "vkformer_model_load: device is NULL");
  VKF_API_REQUIRE(model_dir, "vkformer_model_load: model_dir is NULL");
  vkformer_model_options o = options ? *options : (vkformer_model_options){0};
  vkformer_model *m = calloc(1, sizeof *m);
  if (!m) return vkf_api_status(vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "model"));
  vkf_status st = vkf_model_open(model_dir, &m->model);
  if (!st && o.quantize) st = vkf_model_quantize(m->model, o.quantize);
  if (st) {
    vkf_model_close(m->model);
    free(m);
    return vkf_api_status(st);
  }
  m->device = device;
  m->dtype = o.fp16 ? VKF_F16 : VKF_F32;
  m->cache_fp16 = o.fp16 || o.cache_fp16;
  *out_model = m;
  return NULL;
}

void vkformer_model_free(vkformer_model *model) {
  if (!model) return;
  vkf_text_tokenizer_destroy(model->tokenizer.tok);
  vkf_wordpiece_destroy(model->wordpiece);
  vkf_model_close(model->model);
  free(model);
}

const char *vkformer_model_architecture(const vkformer_model *model) {
  return model ? vkf_model_architecture(model->model) : "";
}

const char *vkformer_model_family(const vkformer_model *model) {
  return model ? vkf_model_family(model->model) : "";
}

/* The public bits are the registry's (vkf_model_task), checked at compile time. */
_Static_assert((int)VKFORMER_TASK_FORWARD == (int)VKF_TASK_FORWARD &&
                   (int)VKFORMER_TASK_TOKENIZE == (int)VKF_TASK_TOKENIZE &&
                   (int)VKFORMER_TASK_EMBED == (int)VKF_TASK_EMBED &&
                   (int)VKFORMER_TASK_CLASSIFY == (int)VKF_TASK_CLASSIFY &&
                   (int)VKFORMER_TASK_GENERATE == (int)VKF_TASK_GENERATE &&
                   (int)VKFORMER_TASK_CHAT == (int)VKF_TASK_CHAT &&
                   (int)VKFORMER_TASK_ATTENTIONS == (int)VKF_TASK_ATTENTIONS,
               "vkformer.h's task bits follow models/registry/model.h's");

uint32_t vkformer_model_tasks(const vkformer_model *model) {
  return model ? vkf_model_tasks(model->model) : 0;
}

uint32_t vkformer_model_input_count(const vkformer_model *model) {
  return model ? vkf_model_input_count(model->model) : 0;
}

uint32_t vkformer_model_output_count(const vkformer_model *model) {
  return model ? vkf_model_output_count(model->model) : 0;
}

static vkformer_status io_info(const vkf_model_io *io, const char *what, uint32_t index,
                               uint32_t count, vkformer_io_info *out) {
  VKF_API_REQUIRE(out, "io info: out is NULL");
  memset(out, 0, sizeof *out);
  if (!io)
    return vkf_api_status(
        vkf_status_make(VKF_STATUS_NOT_FOUND, "%s %u: the model has %u", what, index, count));
  out->name = io->name;
  out->dtype = io->dtype == VKF_F32 ? VKFORMER_F32 : VKFORMER_I32;
  out->rank = io->rank;
  for (uint32_t d = 0; d < io->rank; d++) out->shape[d] = io->shape[d];
  out->required = io->required;
  out->target = io->target;
  out->max_seq = io->max_seq;
  out->value_bound = io->value_bound;
  return NULL;
}

vkformer_status vkformer_model_input_info(const vkformer_model *model, uint32_t index,
                                          vkformer_io_info *out) {
  VKF_API_REQUIRE(model, "vkformer_model_input_info: model is NULL");
  uint32_t n = vkf_model_input_count(model->model);
  return io_info(index < n ? vkf_model_input(model->model, index) : NULL, "input", index, n, out);
}

vkformer_status vkformer_model_output_info(const vkformer_model *model, uint32_t index,
                                           vkformer_io_info *out) {
  VKF_API_REQUIRE(model, "vkformer_model_output_info: model is NULL");
  uint32_t n = vkf_model_output_count(model->model);
  return io_info(index < n ? vkf_model_output(model->model, index) : NULL, "output", index, n, out);
}

/* A caller's tensor as the model interface's array: dtype known, rank within the IR's, every
 * dim positive and the element count bounded, data present. */
static vkf_status to_array(const vkformer_tensor *t, size_t i, vkf_model_array *out) {
  if (!t->name) return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "input %zu has no name", i);
  if (t->dtype != VKFORMER_F32 && t->dtype != VKFORMER_I32 && t->dtype != VKFORMER_I64)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "input %s: dtype %d is not F32 (0), I32 (1) or I64 (2)", t->name,
                           (int)t->dtype);
  if (t->rank < 1 || t->rank > VKF_MAX_DIMS)
    return vkf_status_make(VKF_STATUS_SHAPE, "input %s: rank %u (1 to %d supported)", t->name,
                           t->rank, VKF_MAX_DIMS);
  uint64_t count = 1;
  for (uint32_t d = 0; d < t->rank; d++) {
    /* 2^40 elements is past any device; the bound keeps the products below from overflowing */
    if (t->shape[d] < 1 || (uint64_t)t->shape[d] > (UINT64_C(1) << 40) / count)
      return vkf_status_make(VKF_STATUS_SHAPE, "input %s: dim %u is %lld", t->name, d,
                             (long long)t->shape[d]);
    count *= (uint64_t)t->shape[d];
  }
  if (!t->data)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "input %s: data is NULL", t->name);
  *out = (vkf_model_array){.name = t->name,
                           .dtype = t->dtype == VKFORMER_F32 ? VKF_F32 : VKF_I32,
                           .int64 = t->dtype == VKFORMER_I64,
                           .rank = t->rank,
                           .data = t->data};
  for (uint32_t d = 0; d < t->rank; d++) out->shape[d] = t->shape[d];
  return VKF_OK;
}

static vkf_status forward(vkformer_model *model, const vkformer_tensor *inputs, size_t input_count,
                          vkformer_tensor *outputs, size_t output_count) {
  if (input_count > VKF_MODEL_MAX_IO)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%zu inputs: the model takes at most %u",
                           input_count, vkf_model_input_count(model->model));
  if (output_count == 0 || output_count > VKF_MODEL_MAX_IO)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%zu outputs asked for (1 to %u)",
                           output_count, vkf_model_output_count(model->model));
  vkf_model_array given[VKF_MODEL_MAX_IO];
  const char *names[VKF_MODEL_MAX_IO];
  for (size_t i = 0; i < input_count; i++) VKF_RETURN_IF_ERROR(to_array(&inputs[i], i, &given[i]));
  for (size_t k = 0; k < output_count; k++) {
    if (!outputs[k].name)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "output %zu has no name", k);
    names[k] = outputs[k].name;
  }
  vkf_rt_forward f = {0};
  vkf_status st = vkf_rt_forward_prepare(&f, model->model, model->dtype, given,
                                         (uint32_t)input_count, names, (uint32_t)output_count);
  if (!st) st = vkf_rt_forward_run(&f, "vkformer_model_forward", model->device->rt.device);
  for (size_t k = 0; !st && k < output_count; k++) {
    int64_t shape[VKF_MAX_DIMS];
    uint32_t rank = 0;
    vkf_rt_forward_output(&f, (uint32_t)k, &rank, shape);
    outputs[k].dtype = VKFORMER_F32;
    outputs[k].rank = rank;
    for (uint32_t d = 0; d < rank; d++) outputs[k].shape[d] = shape[d];
  }
  for (size_t k = 0; !st && k < output_count; k++)
    outputs[k].data = vkf_rt_forward_take_output(&f, (uint32_t)k);
  vkf_rt_forward_release(&f);
  return st;
}

vkformer_status vkformer_model_forward(vkformer_model *model, const vkformer_tensor *inputs,
                                       size_t input_count, vkformer_tensor *outputs,
                                       size_t output_count) {
  VKF_API_REQUIRE(model, "vkformer_model_forward: model is NULL");
  VKF_API_REQUIRE(inputs || !input_count, "vkformer_model_forward: inputs is NULL");
  VKF_API_REQUIRE(outputs || !output_count, "vkformer_model_forward: outputs is NULL");
  for (size_t k = 0; k < output_count; k++) {
    outputs[k].dtype = VKFORMER_F32;
    outputs[k].rank = 0;
    memset(outputs[k].shape, 0, sizeof outputs[k].shape);
    outputs[k].data = NULL;
  }
  return vkf_api_status(forward(model, inputs, input_count, outputs, output_count));
}

void vkformer_tensor_release(vkformer_tensor *tensor) {
  if (!tensor) return;
  free(tensor->data);
  tensor->data = NULL;
}
