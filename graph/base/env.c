/* The one place that calls getenv(): reads all VKF_* switches into a struct. */
#include "graph/base/env.h"

#include <stdlib.h>
#include <string.h>

static vkf_env g_env;
static int g_loaded;

static const char *str_or_null(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

static int int_or(const char *name, int fallback) {
  const char *v = getenv(name);
  return (v && *v) ? atoi(v) : fallback;
}

void vkf_env_reload(void) {
  g_env.validate = int_or("VKF_VALIDATE", 0);
  g_env.device = str_or_null("VKF_DEVICE");
  g_env.device_profile = str_or_null("VKF_DEVICE_PROFILE");
  g_env.cache_dir = str_or_null("VKF_CACHE_DIR");
  g_env.no_cache = int_or("VKF_NO_CACHE", 0);
  g_env.dump = str_or_null("VKF_DUMP");
  g_env.dump_dir = str_or_null("VKF_DUMP_DIR");
  g_env.profile = int_or("VKF_PROFILE", 0);
  g_env.check = int_or("VKF_CHECK", 0);
  g_env.update_golden = int_or("VKF_UPDATE_GOLDEN", 0);
  g_env.no_fuse = str_or_null("VKF_NO_FUSE");
  g_env.log_level = int_or("VKF_LOG", 1);
  g_env.python_site = str_or_null("VKF_PYTHON_SITE");
  g_env.xdg_cache_home = str_or_null("XDG_CACHE_HOME");
  g_env.home = str_or_null("HOME");
  g_env.virtual_env = str_or_null("VIRTUAL_ENV");
  g_env.pyenv_root = str_or_null("PYENV_ROOT");
  g_loaded = 1;
}

const vkf_env *vkf_env_get(void) {
  if (!g_loaded) vkf_env_reload();
  return &g_env;
}

int vkf_env_list_has(const char *list, const char *name) {
  if (!list) return 0;
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return 1;
    if (len == 3 && strncmp(p, "all", 3) == 0) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}
