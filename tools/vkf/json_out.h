/* JSON text on stdout for the subcommands' --json modes. */
#ifndef VKF_TOOLS_JSON_OUT_H
#define VKF_TOOLS_JSON_OUT_H

#include <stddef.h>

/* Writes `n` bytes of UTF-8 as a JSON string the way Python's json.dumps(..., ensure_ascii=False)
 * does, so output can be compared byte for byte with references: quote, backslash and control
 * characters escaped (\b \f \n \r \t, else \u00XX), everything else as is. */
void vkf_cli_json_string_n(const char *s, size_t n);
/* The same for a NUL-terminated string (NULL prints null). */
void vkf_cli_json_string(const char *s);

#endif
