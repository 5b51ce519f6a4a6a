/* The INPUTs of the commands that take texts or images (classify, embed, tokenize, generate's
 * prompts): positional arguments, `--file F` (one input per line) and `-` (as an INPUT or as F:
 * one input per line from stdin), in the order given. */
#ifndef VKF_TOOLS_CLI_INPUTS_H
#define VKF_TOOLS_CLI_INPUTS_H

#include <stddef.h>

#include "graph/base/status.h"

enum {
  VKF_CLI_MAX_INPUTS = 1 << 20, /* inputs in all */
  VKF_CLI_MAX_LINE = 1 << 20,   /* bytes in one line of a --file */
};

typedef struct vkf_cli_inputs {
  char **items; /* count entries, then NULL; each owned */
  size_t count, cap;
  int stdin_used; /* stdin can be read once */
} vkf_cli_inputs;

/* Appends one positional INPUT: `-` reads stdin's lines, anything else is itself. */
vkf_status vkf_cli_inputs_add(vkf_cli_inputs *in, const char *arg);
/* Appends every line of `path` (`-`: stdin); the line ends (\n, \r\n) are dropped and empty lines
 * skipped, so a file may end with a newline or separate groups with blank lines. */
vkf_status vkf_cli_inputs_add_file(vkf_cli_inputs *in, const char *path);
void vkf_cli_inputs_free(vkf_cli_inputs *in);

#endif
