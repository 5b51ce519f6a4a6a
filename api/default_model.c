/* vkformer_default_model: the folder a task's default model is found in (task_defaults.h). */
#include <stddef.h>

#include "api/handles.h"
#include "models/formats/task_defaults.h"

vkformer_status vkformer_default_model(const char *task, char **out_dir) {
  if (!out_dir)
    return vkf_api_status(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "out_dir is NULL"));
  return vkf_api_status(vkf_task_default_model(task, out_dir));
}
