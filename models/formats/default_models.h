/* Finds the model folders vkformer ships (the default checkpoint of `vkf classify`, ...) without
 * naming the source tree: through VKF_MODEL_PATH, then beside the installed executable or library.
 */
#ifndef VKF_MODELS_DEFAULT_MODELS_H
#define VKF_MODELS_DEFAULT_MODELS_H

#include "graph/base/status.h"

/* Where shipped models live relative to an install prefix: `cmake --install` copies each into
 * <prefix>/share/vkformer/models/<name>/, and the build tree links them into the same place
 * (build/share/vkformer/models/), so the one search below serves both. */
#define VKF_DEFAULT_MODELS_SUBDIR "share/vkformer/models"

/* Returns the first folder <dir>/`name` holding a config.json, <dir> taken in this order:
 *   1. each entry of VKF_MODEL_PATH (':'-separated)
 *   2. <folder of the running executable>/../share/vkformer/models
 *   3. <folder of the shared library holding this code, libvkformer.so>/../share/vkformer/models
 *      (when vkformer is linked into the executable, this is 2 again and is skipped)
 * An installed vkf (<prefix>/bin) and an installed libvkformer.so (<prefix>/lib) both find
 * <prefix>/share; the build tree's vkf (build/tools/) and libvkformer.so (build/lib/) find
 * build/share. `name` is a plain folder name (no '/'). On success *out_dir is a malloc'd path the
 * caller frees; otherwise VKF_STATUS_NOT_FOUND naming every folder tried. */
vkf_status vkf_default_model_find(const char *name, char **out_dir);

#endif
