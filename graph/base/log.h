/* The library's only logging path: leveled messages to stderr (never stdout). */
#ifndef VKF_GRAPH_LOG_H
#define VKF_GRAPH_LOG_H

typedef enum vkf_log_level {
  VKF_LOG_ERROR = 0,
  VKF_LOG_WARN = 1,
  VKF_LOG_INFO = 2,
  VKF_LOG_DEBUG = 3,
} vkf_log_level;

/* Printed when `level` <= VKF_LOG (default: warnings and errors). Thread-safe per line. */
void vkf_log(vkf_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs (as warnings) every environment value that was not accepted (vkf_env_warning); programs
 * call it once at start. */
void vkf_log_env_warnings(void);

#endif
