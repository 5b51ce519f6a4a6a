/* One loader for every architecture: an architecture describes how its checkpoints load as data
 * (which model_type values it takes, its own config reader, its tensor checks, what it owns besides
 * the files) and vkf_arch_load runs the one sequence they share: allocate, read config.json, refuse
 * a foreign model_type, read the architecture's config, open the weights, check them, and on any
 * error free what was made. The error messages stay the architectures' own. */
#ifndef VKF_MODELS_ARCH_LOADER_H
#define VKF_MODELS_ARCH_LOADER_H

#include <stddef.h>

#include "models/arch/arch_weights.h"

typedef struct vkf_arch_loader {
  size_t size;     /* sizeof the model struct (zeroed on allocation) */
  size_t files_at; /* offsetof its vkf_arch_files */
  /* The config.json model_type values taken (NULL-terminated), or `accepts` deciding (and noting
   * the family it picked in the model); otherwise "DIR/config.json: model_type \"T\" <refusal>". */
  const char *const *model_types;
  int (*accepts)(void *model);
  const char *refusal;
  /* Optional: opens the files itself instead of vkf_arch_files_open + the model_type check +
   * vkf_arch_files_open_weights (a config.json vkf_hf_config does not read: Transformer-XL). */
  vkf_status (*open)(void *model, const char *model_dir);
  /* Optional: reads what config.json's common fields leave out (a second config reader, the
   * processor) before the weights open. */
  vkf_status (*configure)(void *model, const char *model_dir);
  /* The load-time checks of every tensor a build reads (the weights are open). */
  vkf_status (*check)(void *model);
  /* Optional: frees what the model owns besides its files (layout caches). */
  void (*release)(void *model);
  /* Non-NULL: the architecture runs in f32 only, and --quantize names it in its refusal. */
  const char *f32_only;
} vkf_arch_loader;

/* Loads model_dir as `spec` says; *out_model is NULL on error. */
vkf_status vkf_arch_load(const vkf_arch_loader *spec, const char *model_dir, void **out_model);
/* Frees a model vkf_arch_load made (NULL: nothing). */
void vkf_arch_unload(const vkf_arch_loader *spec, void *model);
/* --quantize for the model (vkf_arch_files_quantize), or the f32-only refusal of any format but
 * "none". */
vkf_status vkf_arch_quantize(const vkf_arch_loader *spec, void *model, const char *format);

#endif
