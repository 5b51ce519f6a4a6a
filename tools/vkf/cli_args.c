/* Owns the wording of vkf's argument errors (tools/vkf/cli_args.h). */
#include "tools/vkf/cli_args.h"

#include "models/arch/arch_weights.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int vkf_cli_is_help(const char *arg) {
  return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

/* Whether `text` names the option `opt` as a whole word ("--top" is not in "--top-k"). */
static int names_option(const char *text, const char *opt) {
  size_t n = strlen(opt);
  for (const char *p = text; (p = strstr(p, opt)) != NULL; p += n) {
    int starts = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '-');
    int ends = !(isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '_');
    if (starts && ends) return 1;
  }
  return 0;
}

/* Whether `usage` prints `opt` as one of the command's options. */
static int usage_names(vkf_cli_usage_fn usage, const char *opt) {
  char *text = NULL;
  size_t size = 0;
  FILE *f = usage ? open_memstream(&text, &size) : NULL;
  if (!f) return 0;
  usage(f);
  fclose(f);
  int found = text && names_option(text, opt);
  free(text);
  return found;
}

static struct {
  const char *value;
  char what[96];
} expected;

void vkf_cli_expected(const char *value, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(expected.what, sizeof expected.what, fmt, ap);
  va_end(ap);
  expected.value = value;
}

int vkf_cli_bad_arg(const char *cmd, vkf_cli_usage_fn usage, int argc, char **argv, int i) {
  const char *arg = argv[i];
  int is_option = arg[0] == '-' && arg[1];
  if (is_option && arg[1] == '-' && usage_names(usage, arg)) {
    if (i + 1 >= argc)
      fprintf(stderr, "%s: %s needs a value\n", cmd, arg);
    else
      fprintf(stderr, "%s: invalid value '%s' for %s%s%s (see %s --help)\n", cmd, argv[i + 1], arg,
              expected.value == argv[i + 1] ? ": want " : "",
              expected.value == argv[i + 1] ? expected.what : "", cmd);
  } else if (is_option) {
    fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", cmd, arg, cmd);
  } else {
    fprintf(stderr, "%s: unexpected argument '%s' (see %s --help)\n", cmd, arg, cmd);
  }
  return 2;
}

int vkf_cli_parse_f64(const char *s, double *out) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (!*s || *end || v != v) return 0;
  *out = v;
  return 1;
}

int vkf_cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (isdigit((unsigned char)*s) || *s == '-') {
    if (end != s && !*end && errno != ERANGE && v >= lo && v <= hi) {
      *out = v;
      return 1;
    }
  }
  if (hi == INT64_MAX)
    vkf_cli_expected(s, "an integer >= %lld", (long long)lo);
  else
    vkf_cli_expected(s, "an integer in [%lld, %lld]", (long long)lo, (long long)hi);
  return 0;
}

int vkf_cli_parse_dims(const char *s, int count, int64_t lo, int64_t hi, int64_t *out) {
  const char *value = s;
  int ok = 1;
  for (int i = 0; i < count && ok; i++) {
    char field[32];
    size_t n = strcspn(s, ",x");
    ok = n > 0 && n < sizeof field;
    if (ok) {
      memcpy(field, s, n);
      field[n] = 0;
      ok = vkf_cli_parse_i64(field, lo, hi, &out[i]);
      s += n;
    }
    if (ok && i + 1 < count) ok = *s++ != 0; /* a separator must follow all but the last */
  }
  if (ok && *s == 0) return 1;
  vkf_cli_expected(value, "%d integers in [%lld, %lld], 'x' or ',' between them", count,
                   (long long)lo, (long long)hi);
  return 0;
}

vkf_status vkf_cli_parse_ids(const char *what, const char *s, int64_t **out, size_t *out_count) {
  size_t cap = strlen(s) / 2 + 2, n = 0;
  int64_t *ids = malloc(cap * sizeof *ids);
  if (!ids) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", what);
  const char *p = s;
  while (*p) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || (*end && *end != ',') || v < 0 || errno == ERANGE || n == cap) {
      free(ids);
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s \"%s\": entry %zu is not a non-negative integer", what, s, n);
    }
    ids[n++] = v;
    p = *end ? end + 1 : end;
  }
  if (!n) {
    free(ids);
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s is empty", what);
  }
  *out = ids;
  *out_count = n;
  return VKF_OK;
}

int vkf_cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see %s --help)\n", cmd);
  va_end(ap);
  return 2;
}

int vkf_cli_quantize_ok(const char *s) {
  vkf_arch_files probe = {0}; /* only its format is set: nothing is opened */
  vkf_status st = *s ? vkf_arch_files_quantize(&probe, s) : vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "empty");
  if (!st) return 1;
  vkf_status_free(st);
  vkf_cli_expected(s, "%s or none", vkf_arch_quantize_formats());
  return 0;
}
