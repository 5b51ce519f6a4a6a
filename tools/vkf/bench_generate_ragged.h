/* vkf bench generate --ragged (tools/vkf/bench_generate_ragged.c): the speed of vkf serve's
 * ragged steps, B decoding rows a step. */
#ifndef VKF_TOOLS_BENCH_GENERATE_RAGGED_H
#define VKF_TOOLS_BENCH_GENERATE_RAGGED_H

#include <stdint.h>

#include "graph/base/status.h"
#include "graph/ir/graph.h"
#include "host/device.h"
#include "models/arch/decoder.h"

typedef struct vkf_bench_ragged_args {
  const char *model;
  int64_t rows, prompt_len, gen, runs, warmup;
  vkf_dtype dtype, cache_dtype;
  int json;
} vkf_bench_ragged_args;

/* Times `runs` rounds (after `warmup` untimed ones) of prompts then gen - 1 ragged steps of `rows`
 * rows on `model`, printing markdown or one JSON line to stdout. */
vkf_status vkf_bench_generate_ragged(vkf_device *dev, vkf_decoder_model *model,
                                     const vkf_bench_ragged_args *args);

#endif
