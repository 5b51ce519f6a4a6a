/* Owns the wording of vkf's argument errors (tools/vkf/cli_args.h). */
#include "tools/vkf/cli_args.h"

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

int vkf_cli_bad_arg(const char *cmd, vkf_cli_usage_fn usage, int argc, char **argv, int i) {
  const char *arg = argv[i];
  int is_option = arg[0] == '-' && arg[1];
  if (is_option && arg[1] == '-' && usage_names(usage, arg)) {
    if (i + 1 >= argc)
      fprintf(stderr, "%s: %s needs a value\n", cmd, arg);
    else
      fprintf(stderr, "%s: invalid value '%s' for %s (see %s --help)\n", cmd, argv[i + 1], arg,
              cmd);
  } else if (is_option) {
    fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", cmd, arg, cmd);
  } else {
    fprintf(stderr, "%s: unexpected argument '%s' (see %s --help)\n", cmd, arg, cmd);
  }
  return 2;
}

int vkf_cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (!(*s == '-' || isdigit((unsigned char)*s))) return 0;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno == ERANGE || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

int vkf_cli_parse_dims(const char *s, int count, int64_t lo, int64_t hi, int64_t *out) {
  for (int i = 0; i < count; i++) {
    char field[32];
    size_t n = strcspn(s, ",x");
    if (n == 0 || n >= sizeof field) return 0;
    memcpy(field, s, n);
    field[n] = 0;
    if (!vkf_cli_parse_i64(field, lo, hi, &out[i])) return 0;
    s += n;
    if (i + 1 < count && !*s++) return 0; /* a separator must follow all but the last */
  }
  return *s == 0;
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
