/* Owns the stderr log sink and its level filter. */
#include "graph/base/log.h"

#include <stdarg.h>
#include <stdio.h>

#include "graph/base/env.h"

void vkf_log(vkf_log_level level, const char *fmt, ...) {
  if ((int)level > vkf_env_get()->log_level) return;
  static const char *const tags[] = {"error", "warning", "info", "debug"};
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "vkf: %s: %s\n", tags[level], line);
}

void vkf_log_env_warnings(void) {
  for (int i = 0; i < vkf_env_warning_count(); i++)
    vkf_log(VKF_LOG_WARN, "%s", vkf_env_warning(i));
}
