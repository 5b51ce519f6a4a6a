/* The one place that calls getenv(): reads all VKF_* switches into a struct. */
#include "graph/base/env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static vkf_env g_env;
static int g_loaded;

/* Invalid values are kept here, one line each; vkf_log_env_warnings (log.c, which reads the env
 * for its level, so env.c does not call it back) prints them. */
#define MAX_WARNINGS 16
static char g_warnings[MAX_WARNINGS][320];
static int g_warning_count;

static void warn_invalid(const char *name, const char *value, const char *accepted,
                         const char *fallback) {
  if (g_warning_count == MAX_WARNINGS) return;
  snprintf(g_warnings[g_warning_count++], sizeof g_warnings[0],
           "%s=\"%.64s\" is not valid (accepted: %s); %s", name, value, accepted, fallback);
}

static const char *str_or_null(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

/* An integer in [lo, hi] written as plain digits; anything else warns and gives the fallback. */
static int int_in(const char *name, int lo, int hi, int fallback, const char *accepted) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  char *end = NULL;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (strspn(v, "0123456789") == strlen(v) && !errno && x >= lo && x <= hi) return (int)x;
  char used[64];
  snprintf(used, sizeof used, "using %d", fallback);
  warn_invalid(name, v, accepted, used);
  return fallback;
}

static int flag(const char *name) {
  return int_in(name, 0, 1, 0, "0, 1");
}

/* A comma list whose items must be among `names` (or "all"); unknown items warn and are ignored. */
static const char *list_of(const char *name, const char *const *names, const char *accepted) {
  const char *v = str_or_null(name);
  for (const char *p = v; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    int known = len == 3 && !strncmp(p, "all", 3);
    for (size_t i = 0; names[i] && !known; i++)
      known = strlen(names[i]) == len && !strncmp(p, names[i], len);
    if (!known) {
      warn_invalid(name, v, accepted, "unknown items are ignored");
      break;
    }
    if (!end) break;
    p = end + 1;
  }
  return v;
}

void vkf_env_reload(void) {
  static const char *const dumps[] = {"passes", NULL};
  static const char *const fusions[] = {"attention", "gemm", "norm", "glu", "elementwise", NULL};
  g_warning_count = 0;
  g_env.validate = int_in("VKF_VALIDATE", 0, 2, 0, "0, 1, 2 (GPU-assisted bounds checks)");
  g_env.device = str_or_null("VKF_DEVICE");
  g_env.device_profile = str_or_null("VKF_DEVICE_PROFILE");
  g_env.cache_dir = str_or_null("VKF_CACHE_DIR");
  g_env.no_cache = flag("VKF_NO_CACHE");
  g_env.copy_weights = flag("VKF_COPY_WEIGHTS");
  g_env.dequantize = flag("VKF_DEQUANTIZE");
  g_env.dump = list_of("VKF_DUMP", dumps, "passes, all");
  g_env.dump_dir = str_or_null("VKF_DUMP_DIR");
  g_env.coopmat = int_in("VKF_COOPMAT", 0, 1, -1, "0 off, 1 on despite the vendor allowlist");
  g_env.profile = flag("VKF_PROFILE");
  g_env.check = flag("VKF_CHECK");
  g_env.update_golden = flag("VKF_UPDATE_GOLDEN");
  g_env.no_fuse =
      list_of("VKF_NO_FUSE", fusions, "a comma list of attention, gemm, norm, glu, elementwise; all");
  g_env.log_level = int_in("VKF_LOG", 0, 3, 1, "0 error, 1 warning, 2 info, 3 debug");
  g_env.python_site = str_or_null("VKF_PYTHON_SITE");
  g_env.model_path = str_or_null("VKF_MODEL_PATH");
  g_env.xdg_cache_home = str_or_null("XDG_CACHE_HOME");
  g_env.home = str_or_null("HOME");
  g_env.virtual_env = str_or_null("VIRTUAL_ENV");
  g_env.pyenv_root = str_or_null("PYENV_ROOT");
  g_loaded = 1;
}

int vkf_env_warning_count(void) {
  if (!g_loaded) vkf_env_reload();
  return g_warning_count;
}

const char *vkf_env_warning(int index) {
  return index >= 0 && index < vkf_env_warning_count() ? g_warnings[index] : NULL;
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
