/* Owns the status object: allocation, annotation and the code names. */
#include "graph/base/status.h"

#include <stdarg.h>
#include <string.h>

struct vkf_status_s {
  vkf_status_code code;
  char *message;
};

static struct vkf_status_s oom_status = {VKF_STATUS_OUT_OF_MEMORY,
                                         (char *)"out of host memory while reporting an error"};

/* Messages are one line by design, yet readers quote what a file says (a name, a type, a token),
 * and a hostile file can put newlines or terminal escapes there (found by fuzzing). So control
 * bytes become C escapes here, once for every message: \n, \r, \t, else \xNN. */
static char *escape_controls(char *msg) {
  size_t extra = 0;
  for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
    if (*p < 0x20 || *p == 0x7f) extra += 3;
  if (!extra) return msg;
  size_t len = strlen(msg);
  char *out = malloc(len + extra + 1);
  if (!out) {
    for (char *p = msg; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    return msg;
  }
  char *o = out;
  for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
    if (*p >= 0x20 && *p != 0x7f) {
      *o++ = (char)*p;
    } else if (*p == '\n' || *p == '\r' || *p == '\t') {
      *o++ = '\\';
      *o++ = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't';
    } else {
      static const char hex[] = "0123456789abcdef";
      *o++ = '\\', *o++ = 'x', *o++ = hex[*p >> 4], *o++ = hex[*p & 15];
    }
  }
  *o = 0;
  free(msg);
  return out;
}

static char *vformat(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return NULL;
  char *buf = malloc((size_t)n + 1);
  if (buf) vsnprintf(buf, (size_t)n + 1, fmt, ap);
  return buf ? escape_controls(buf) : NULL;
}

vkf_status vkf_status_make(vkf_status_code code, const char *fmt, ...) {
  VKF_ASSERT(code != VKF_STATUS_OK);
  struct vkf_status_s *s = malloc(sizeof *s);
  if (!s) return &oom_status;
  va_list ap;
  va_start(ap, fmt);
  s->message = vformat(fmt, ap);
  va_end(ap);
  if (!s->message) {
    free(s);
    return &oom_status;
  }
  s->code = code;
  return s;
}

vkf_status vkf_status_annotate(vkf_status status, const char *fmt, ...) {
  if (status == VKF_OK || status == &oom_status) return status;
  va_list ap;
  va_start(ap, fmt);
  char *prefix = vformat(fmt, ap);
  va_end(ap);
  if (!prefix) return status;
  size_t a = strlen(prefix), b = strlen(status->message);
  char *joined = malloc(a + b + 1);
  if (joined) {
    memcpy(joined, prefix, a);
    memcpy(joined + a, status->message, b + 1);
    free(status->message);
    status->message = joined;
  }
  free(prefix);
  return status;
}

vkf_status_code vkf_status_code_of(vkf_status status) {
  return status ? status->code : VKF_STATUS_OK;
}

const char *vkf_status_message(vkf_status status) { return status ? status->message : ""; }

const char *vkf_status_code_name(vkf_status_code code) {
  static const char *const names[VKF_STATUS_CODE_COUNT] = {
      "ok",           "invalid argument", "not found",     "unsupported", "out of memory",
      "i/o error",    "parse error",      "shape error",   "invalid graph", "no device",
      "device error", "compile error",    "mismatch",      "internal error"};
  return (code >= 0 && code < VKF_STATUS_CODE_COUNT) ? names[code] : "unknown";
}

void vkf_status_free(vkf_status status) {
  if (status == VKF_OK || status == &oom_status) return;
  free(status->message);
  free(status);
}
