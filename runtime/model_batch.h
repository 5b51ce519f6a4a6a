/* The batched run every model subcommand shares (classify, embed, forward; dump shows its split):
 * a subcommand supplies a builder of its model's graph for any row count and whole-batch host
 * arrays; this chooses the split for the device's caps (graph/lower/batch_split.h), runs it
 * (host/batch_run.h) and, with VKF_CHECK=1, checks every run against the interpreter. */
#ifndef VKF_RUNTIME_MODEL_BATCH_H
#define VKF_RUNTIME_MODEL_BATCH_H

#include "graph/lower/batch_split.h"
#include "host/batch_run.h"
#include "host/device.h"
#include "models/registry/model.h"

/* Builds the model's graph for `rows` rows, before any pass (this file runs them). */
typedef vkf_status (*vkf_rt_build_fn)(void *user, int64_t rows, vkf_batch_graph *out);

/* The split of `batch` rows for `caps` (builds of `build` with the passes run). */
vkf_status vkf_rt_batch_split(const vkf_device_caps *caps, int64_t batch, vkf_rt_build_fn build,
                              void *user, vkf_batch_split *out);

/* Runs `batch` rows on `device` as vkf_batch_run does (inputs / outputs per slot of the built
 * graph, whole batch, batch-first). `tool` ("vkf classify") prefixes the VKF_CHECK line; the split
 * is logged at info level (VKF_LOG=2) when it has more than one run. */
vkf_status vkf_rt_batch_run(const char *tool, vkf_device *device, int64_t batch,
                            vkf_rt_build_fn build, void *user, const vkf_batch_input *inputs,
                            const vkf_batch_output *outputs);

/* A vkf_rt_build_fn over the model registry (user: a vkf_rt_model_build *): slots follow the
 * model's declared inputs (then its derived ones, vkf_model_derive) and outputs. */
typedef struct vkf_rt_model_build {
  vkf_model *model;
  int64_t seq_len;    /* text models: tokens per row */
  int64_t target_len; /* encoder–decoders: decoder tokens per row (0: the encoder alone) */
  int64_t memory_len; /* rows of the memory inputs (Transformer-XL's mems; 0: none) */
  vkf_dtype dtype;
  const char *const *outputs; /* names to compute; NULL: all */
  uint32_t output_count;
  const vkf_model_derived *derived; /* the whole batch's derived inputs (NULL: none known) */
} vkf_rt_model_build;
vkf_status vkf_rt_model_build_fn(void *user, int64_t rows, vkf_batch_graph *out);

#endif
