/* JSON text on stdout for the subcommands' --json modes. */
#ifndef VKF_TOOLS_JSON_OUT_H
#define VKF_TOOLS_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

/* Writes `n` bytes of UTF-8 as a JSON string the way Python's json.dumps(..., ensure_ascii=False)
 * does, so output can be compared byte for byte with references: quote, backslash and control
 * characters escaped (\b \f \n \r \t, else \u00XX), everything else as is. */
void vkf_cli_json_string_n(const char *s, size_t n);
/* The same for a NUL-terminated string (NULL prints null). */
void vkf_cli_json_string(const char *s);

/* INVALID_ARGUMENT when v [rows, row_size] holds a NaN or an infinity, naming the first: "<what>
 * <row> holds NaN at <index_name> <i>: ...". Output that JSON cannot carry (a bare `nan`) and that
 * no ranking or cosine can use means a broken model, which the user must hear about. */
vkf_status vkf_cli_check_finite(const float *v, int64_t rows, int64_t row_size, const char *what,
                                const char *index_name);

#endif
