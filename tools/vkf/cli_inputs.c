/* Reads the texts and image paths of `--file F` and `-` (tools/vkf/cli_inputs.h). */
#include "tools/vkf/cli_inputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vkf_status push(vkf_cli_inputs *in, const char *s, size_t len, const char *from) {
  if (in->count + 1 >= VKF_CLI_MAX_INPUTS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: more than %d inputs", from,
                           VKF_CLI_MAX_INPUTS - 1);
  if (in->count + 2 > in->cap) {
    size_t cap = in->cap ? 2 * in->cap : 16;
    char **items = realloc(in->items, cap * sizeof *items);
    if (!items) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: inputs", from);
    in->items = items;
    in->cap = cap;
  }
  char *copy = malloc(len + 1);
  if (!copy) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: inputs", from);
  memcpy(copy, s, len);
  copy[len] = 0;
  in->items[in->count++] = copy;
  in->items[in->count] = NULL;
  return VKF_OK;
}

vkf_status vkf_cli_inputs_add(vkf_cli_inputs *in, const char *arg) {
  if (!strcmp(arg, "-")) return vkf_cli_inputs_add_file(in, "-");
  return push(in, arg, strlen(arg), arg);
}

vkf_status vkf_cli_inputs_add_file(vkf_cli_inputs *in, const char *path) {
  int is_stdin = !strcmp(path, "-");
  const char *name = is_stdin ? "stdin" : path;
  if (is_stdin && in->stdin_used)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "stdin ('-') is given twice");
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f)
    return vkf_status_make(VKF_STATUS_IO, "--file %s: cannot open: %s", path, strerror(errno));
  in->stdin_used |= is_stdin;
  char *line = NULL;
  size_t cap = 0, number = 0;
  ssize_t len;
  vkf_status st = VKF_OK;
  while (!st && (len = getline(&line, &cap, f)) >= 0) {
    number++;
    if (memchr(line, 0, (size_t)len))
      st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s:%zu: a NUL byte in the line (not text)",
                           name, number);
    else if (len > VKF_CLI_MAX_LINE)
      st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s:%zu: line longer than %d bytes", name,
                           number, VKF_CLI_MAX_LINE);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    if (!st && len > 0) st = push(in, line, (size_t)len, name);
  }
  if (!st && ferror(f))
    st = vkf_status_make(VKF_STATUS_IO, "%s: read error: %s", name, strerror(errno));
  free(line);
  if (!is_stdin) fclose(f);
  return st;
}

void vkf_cli_inputs_free(vkf_cli_inputs *in) {
  for (size_t i = 0; i < in->count; i++) free(in->items[i]);
  free(in->items);
  memset(in, 0, sizeof *in);
}
