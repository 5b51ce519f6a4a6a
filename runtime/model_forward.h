/* One forward pass of a registry model on whole-batch host arrays, as `vkf forward` and
 * vkformer_model_forward run it: the inputs checked against the declaration, absent optional
 * inputs filled with their defaults, int64 ids narrowed, the derived inputs computed, the
 * requested outputs allocated, then the batched run (model_batch.h) split to fit the device. */
#ifndef VKF_RUNTIME_MODEL_FORWARD_H
#define VKF_RUNTIME_MODEL_FORWARD_H

#include <stdint.h>

#include "host/device.h"
#include "models/registry/model.h"
#include "runtime/model_batch.h"

typedef struct vkf_rt_forward {
  vkf_model *model;
  int64_t batch, seq, target; /* the caller's dims (vkf_model_check_inputs) */
  int64_t memory;             /* rows of the memory inputs (vkf_model_memory_len) */
  int64_t memory_out[VKF_MODEL_MAX_IO]; /* by declared output index: its memory rows (the build's) */
  const char *names[VKF_MODEL_MAX_IO];
  uint32_t name_count;
  vkf_rt_model_build build;
  vkf_batch_input inputs[VKF_MODEL_MAX_IO];
  vkf_batch_output outputs[VKF_MODEL_MAX_IO]; /* by declared output index */
  void *owned[VKF_MODEL_MAX_IO];
  vkf_model_derived derived;
} vkf_rt_forward;

/* Checks `given` and the output names (an unknown one is the builder's NOT_FOUND listing the
 * declared outputs; a name given twice is INVALID_ARGUMENT) and prepares every array; nothing
 * runs yet. `given` must stay valid until vkf_rt_forward_run returns. Zero *f first. */
vkf_status vkf_rt_forward_prepare(vkf_rt_forward *f, vkf_model *model, vkf_dtype dtype,
                                  const vkf_model_array *given, uint32_t given_count,
                                  const char *const *outputs, uint32_t output_count);
/* Runs on `device`; `tool` prefixes VKF_CHECK's line and the split's log line. */
vkf_status vkf_rt_forward_run(vkf_rt_forward *f, const char *tool, vkf_device *device);
/* Requested output k (in the order of `outputs`): its f32 data, rank and resolved shape (a
 * time-major output sequence first, as its data is once the run is over). */
float *vkf_rt_forward_output(const vkf_rt_forward *f, uint32_t k, uint32_t *rank, int64_t *shape);
/* Hands output k's data over to the caller (who frees it); the state forgets it. */
float *vkf_rt_forward_take_output(vkf_rt_forward *f, uint32_t k);
void vkf_rt_forward_release(vkf_rt_forward *f);

#endif
