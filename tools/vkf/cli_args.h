/* The argument conventions every vkf subcommand shares, so each parser loop keeps its own options
 * but every command answers the same way: --help / -h prints usage on stdout (exit 0); an argument
 * the loop did not accept is one line on stderr naming it (exit 2). */
#ifndef VKF_TOOLS_CLI_ARGS_H
#define VKF_TOOLS_CLI_ARGS_H

#include <stdint.h>
#include <stdio.h>

#include "graph/base/status.h"

/* Prints a command's usage (the text --help shows). */
typedef void (*vkf_cli_usage_fn)(FILE *f);

/* Whether `arg` asks for help. */
int vkf_cli_is_help(const char *arg);

/* The one-line error for argv[i], an argument the parser loop of `cmd` ("vkf classify") did not
 * accept; returns 2. An option that the usage text names is one whose value is missing (given
 * last: "--top needs a value") or was rejected ("invalid value 'x' for --top"); any other
 * "-..." is "unknown option '--tpo' (see vkf classify --help)". */
int vkf_cli_bad_arg(const char *cmd, vkf_cli_usage_fn usage, int argc, char **argv, int i);

/* Records what `value` (an argv string) should have been ("a number > 0"), which
 * vkf_cli_bad_arg then adds to its "invalid value" line for that very string. */
void vkf_cli_expected(const char *value, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A whole number strtod reads (nothing after it; not NaN); 0 when `s` is not one. */
int vkf_cli_parse_f64(const char *s, double *out);

/* A whole base-10 integer in [lo, hi] (no sign other than '-', no trailing text); 0 when `s` is
 * not one (and the range is recorded as vkf_cli_expected records it). */
int vkf_cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* 1 when `s` names a --quantize format (or none); else 0, with what is wanted noted for
 * vkf_cli_bad_arg (so a bad or empty value is a usage error, exit 2, before the model loads). */
int vkf_cli_quantize_ok(const char *s);

/* Exactly `count` whole base-10 integers in [lo, hi] separated by ',' or 'x' ("1,12,197,197,64"
 * or "1x12x197x197x64", the bench commands' shape flags); 0 on anything else (a missing or an
 * extra field, trailing text, a value out of range). */
int vkf_cli_parse_dims(const char *s, int count, int64_t lo, int64_t hi, int64_t *out);

/* "1,2,3" -> ids[count] (malloc'd; the caller checks them against a vocabulary). Errors name
 * `what` (the option) and the entry that is not a non-negative integer, or say it is empty. */
vkf_status vkf_cli_parse_ids(const char *what, const char *s, int64_t **out, size_t *out_count);

/* A one-line usage error of `cmd` (a required option missing, two that exclude each other):
 * "vkf generate: MESSAGE (see vkf generate --help)"; returns 2. */
int vkf_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
