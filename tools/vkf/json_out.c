/* Owns the one JSON string writer the subcommands share. */
#include "tools/vkf/json_out.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

vkf_status vkf_cli_check_finite(const float *v, int64_t rows, int64_t row_size, const char *what,
                                const char *index_name) {
  for (int64_t i = 0; i < rows * row_size; i++)
    if (!isfinite(v[i]))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s %lld holds %s at %s %lld: the model's weights or inputs hold "
                             "non-finite values, or it overflows",
                             what, (long long)(i / row_size), isnan(v[i]) ? "NaN" : "an infinity",
                             index_name, (long long)(i % row_size));
  return VKF_OK;
}

void vkf_cli_json_string_n(const char *s, size_t n) {
  static const char short_escapes[] = "\b\f\n\r\t";
  static const char short_names[] = "bfnrt";
  putchar('"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *e = c ? strchr(short_escapes, c) : NULL;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (e)
      printf("\\%c", short_names[e - short_escapes]);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

void vkf_cli_json_string(const char *s) {
  if (s)
    vkf_cli_json_string_n(s, strlen(s));
  else
    fputs("null", stdout);
}
