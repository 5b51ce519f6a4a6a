/* vkf: entry point and subcommand table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph/base/log.h"
#include "tools/vkf/cli.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *help;
} command;

static const command commands[] = {
    {"devices", vkf_cli_devices, "list Vulkan devices and their caps [--json] [--device N|NAME]"},
    {"classify", vkf_cli_classify, "top-K labels for images: [--model DIR] [--top K] [--json] [--fp16] IMAGE..."},
    {"embed", vkf_cli_embed, "sentence embeddings + cosine matrix: [--model DIR] [--json] [--fp16] TEXT..."},
    {"forward", vkf_cli_forward, "any checkpoint on named .npy inputs: --model DIR --in NAME=F.npy --out NAME=F.npy [--list]"},
    {"generate", vkf_cli_generate, "text from a decoder LM or an encoder-decoder, KV cache on the device: --model DIR --prompt TEXT [--max-new-tokens N]"},
    {"chat", vkf_cli_chat, "chat with an instruction-tuned model through its chat template: [--model DIR|F.gguf] [--messages FILE]"},
    {"serve", vkf_cli_serve, "OpenAI-compatible HTTP server with continuous batching: --model M [--model M2 ...] [--port N]"},
    {"attn", vkf_cli_attn, "attention heatmaps (PNG): --model DIR [--layer L] [--head H|--mean] [--rollout] --out DIR INPUT..."},
    {"tokenize", vkf_cli_tokenize, "token ids and strings of texts: [--model DIR] [--json] TEXT..."},
    {"dump", vkf_cli_dump, "graph / passes / plan / kernels of a model: --model DIR --stage S"},
    {"op", vkf_cli_op, "run one op on .npy files: OP --in x.npy ... --out y.npy [--attr k=v] [--cpu]"},
    {"bench", vkf_cli_bench, "benchmarks: bench gemm [--json] (vkf bench --help lists them)"},
    {"version", vkf_cli_version, "vkformer's version and commit, Vulkan loader, volk, shaderc"},
};

int vkf_cli_fail(vkf_status status) {
  char line[2048];
  snprintf(line, sizeof line, "%s", vkf_status_message(status));
  for (char *p = line; *p; p++)
    if (*p == '\n') *p = ' ';
  fprintf(stderr, "vkf: %s\n", line);
  vkf_status_free(status);
  return 1;
}

static void usage(FILE *f) {
  fprintf(f, "usage: vkf <command> [options]\n       vkf --version\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
  fprintf(f, "\nvkf COMMAND --help shows a command's options (vkf bench --help, vkf op --list).\n");
}

/* A command whose output could not be written failed, whatever it returned: with stdout on a
 * full disk (or /dev/full) the text, JSON or ids are lost, so exit 1 with one line saying so. */
static int finish(int rc) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    int err = errno;
    fprintf(stderr, "vkf: writing the standard output failed: %s\n",
            strerror(err ? err : EIO));
    return rc ? rc : 1;
  }
  return rc;
}

static int run(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: vkf <command> [options] (vkf --help lists the commands)\n");
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) return vkf_cli_version(argc - 2, argv + 2);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 2, argv + 2);
  fprintf(stderr, "vkf: unknown command \"%s\" (try vkf --help)\n", argv[1]);
  return 2;
}

int main(int argc, char **argv) {
  vkf_log_env_warnings();
  return finish(run(argc, argv));
}
