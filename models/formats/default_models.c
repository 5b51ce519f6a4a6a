/* The search of default_models.h: candidate folders built from the environment and from where the
 * running code sits on disk (/proc/self/exe, dladdr), tried in a fixed order. */
#define _GNU_SOURCE /* dladdr */
#include "models/formats/default_models.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/base/env.h"

#define MAX_DIRS 32

typedef struct dirs {
  char *items[MAX_DIRS];
  int count;
  int oom;
} dirs;

static void dirs_add(dirs *d, const char *dir, size_t len) {
  if (d->oom || d->count == MAX_DIRS || len == 0) return;
  for (int i = 0; i < d->count; i++)
    if (strlen(d->items[i]) == len && strncmp(d->items[i], dir, len) == 0) return;
  char *copy = malloc(len + 1);
  if (!copy) {
    d->oom = 1;
    return;
  }
  memcpy(copy, dir, len);
  copy[len] = '\0';
  d->items[d->count++] = copy;
}

/* <folder of `file`>/../share/vkformer/models, from the real path of a binary on disk. */
static void dirs_add_beside(dirs *d, const char *file) {
  char real[PATH_MAX];
  if (!file || !*file || !realpath(file, real)) return;
  char *slash = strrchr(real, '/');
  if (!slash) return;
  *slash = '\0';
  char dir[PATH_MAX + sizeof("/../" VKF_DEFAULT_MODELS_SUBDIR)];
  int n = snprintf(dir, sizeof dir, "%s/../%s", real, VKF_DEFAULT_MODELS_SUBDIR);
  if (n <= 0 || (size_t)n >= sizeof dir) return;
  /* Without the "bin/.." when the folder exists, so messages name it plainly. */
  char plain[PATH_MAX];
  if (realpath(dir, plain))
    dirs_add(d, plain, strlen(plain));
  else
    dirs_add(d, dir, (size_t)n);
}

static void dirs_free(dirs *d) {
  for (int i = 0; i < d->count; i++) free(d->items[i]);
}

static int has_config(const char *dir, const char *name, char **out) {
  size_t size = strlen(dir) + strlen(name) + sizeof("//config.json");
  char *path = malloc(size);
  if (!path) return 0;
  snprintf(path, size, "%s/%s/config.json", dir, name);
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
    free(path);
    return 0;
  }
  path[strlen(path) - strlen("/config.json")] = '\0';
  *out = path;
  return 1;
}

vkf_status vkf_default_model_find(const char *name, char **out_dir) {
  VKF_ASSERT(name && out_dir);
  *out_dir = NULL;
  if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "default model name \"%s\" is not a plain folder name", name);
  dirs d = {0};
  const char *list = vkf_env_get()->model_path;
  for (const char *p = list; p && *p;) {
    size_t len = strcspn(p, ":");
    dirs_add(&d, p, len);
    p += len;
    if (*p) p++;
  }
  dirs_add_beside(&d, "/proc/self/exe");
  /* The object holding this function: libvkformer.so when loaded as one (Python's ctypes, a C
   * program linked with -lvkformer), else the executable itself, which dirs_add drops as a repeat.
   */
  Dl_info info;
  if (dladdr((void *)vkf_default_model_find, &info) && info.dli_fname)
    dirs_add_beside(&d, info.dli_fname);
  if (d.oom) {
    dirs_free(&d);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "finding model %s: out of memory", name);
  }
  for (int i = 0; i < d.count; i++) {
    if (has_config(d.items[i], name, out_dir)) {
      dirs_free(&d);
      return VKF_OK;
    }
  }
  char where[2048] = "";
  size_t used = 0;
  for (int i = 0; i < d.count && used < sizeof where; i++) {
    int n = snprintf(where + used, sizeof where - used, "%s%s", i ? ", " : "", d.items[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
  dirs_free(&d);
  return vkf_status_make(VKF_STATUS_NOT_FOUND,
                         "model %s/config.json not found in any folder searched (%s); name the "
                         "folder holding it in VKF_MODEL_PATH or give the model folder itself",
                         name, d.count ? where : "none");
}
