/* The loading sequence every architecture shares (arch_loader.h). */
#include "models/arch/arch_loader.h"

#include <stdlib.h>
#include <string.h>

static vkf_arch_files *files_of(const vkf_arch_loader *spec, void *model) {
  return (vkf_arch_files *)((char *)model + spec->files_at);
}

static int takes(const vkf_arch_loader *spec, void *model, const char *type) {
  if (!spec->model_types) return spec->accepts(model);
  for (const char *const *t = spec->model_types; *t; t++)
    if (!strcmp(*t, type)) return 1;
  return 0;
}

vkf_status vkf_arch_load(const vkf_arch_loader *spec, const char *model_dir, void **out_model) {
  *out_model = NULL;
  void *m = calloc(1, spec->size);
  if (!m) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  vkf_arch_files *f = files_of(spec, m);
  vkf_status s = VKF_OK;
  if (spec->open) {
    s = spec->open(m, model_dir);
  } else {
    s = vkf_arch_files_open(model_dir, f);
    if (!s && !takes(spec, m, f->config.model_type))
      s = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s/config.json: model_type \"%s\" %s", model_dir,
                          f->config.model_type, spec->refusal);
  }
  if (!s && spec->configure) s = spec->configure(m, model_dir);
  if (!s && !spec->open) s = vkf_arch_files_open_weights(f);
  if (!s) s = spec->check(m);
  if (s) {
    vkf_arch_unload(spec, m);
    return s;
  }
  *out_model = m;
  return VKF_OK;
}

void vkf_arch_unload(const vkf_arch_loader *spec, void *model) {
  if (!model) return;
  if (spec->release) spec->release(model);
  vkf_arch_files_close(files_of(spec, model));
  free(model);
}

vkf_status vkf_arch_quantize(const vkf_arch_loader *spec, void *model, const char *format) {
  if (!spec->f32_only) return vkf_arch_files_quantize(files_of(spec, model), format);
  if (!format || !*format || !strcmp(format, "none")) return VKF_OK;
  return vkf_status_make(VKF_STATUS_UNSUPPORTED, "--quantize %s: %s runs in f32 only", format,
                         spec->f32_only);
}
