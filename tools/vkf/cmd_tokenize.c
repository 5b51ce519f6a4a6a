/* vkf tokenize: the ids (with the special tokens the model's template adds) and the token strings
 * of each text, exactly as the checkpoint's Hugging Face tokenizer gives them; no truncation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/formats/gguf.h"
#include "models/formats/task_defaults.h"
#include "text/text_tokenizer.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli_inputs.h"
#include "tools/vkf/json_out.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf tokenize [--model DIR] [--json] (TEXT... | --file F)\n"
          "  TEXT         a text; '-' reads texts from stdin, one per line\n"
          "  --file F     texts, one per line ('-': stdin)\n"
          "  --model DIR  checkpoint folder with the tokenizer files (tokenizer.json: BPE or\n"
          "               Unigram; source.spm + target.spm + vocab.json: Marian;\n"
          "               vocab.json + merges.txt: BART/RoBERTa/GPT-2; vocab.txt and\n"
          "               tokenizer_config.json: WordPiece); default: all-MiniLM-L6-v2\n"
          "  --json       {\"model\": DIR, \"texts\": [{\"text\", \"ids\", \"tokens\"}]} on one "
          "line\n");
}
static void print_json(const char *dir, const vkf_text_tokenizer *tok, char **texts, int count,
                       int32_t **ids, const size_t *lens) {
  printf("{\"model\": ");
  vkf_cli_json_string(dir);
  printf(", \"texts\": [");
  for (int i = 0; i < count; i++) {
    printf("%s{\"text\": ", i ? ", " : "");
    vkf_cli_json_string(texts[i]);
    printf(", \"ids\": [");
    for (size_t j = 0; j < lens[i]; j++) printf("%s%d", j ? ", " : "", ids[i][j]);
    printf("], \"tokens\": [");
    for (size_t j = 0; j < lens[i]; j++) {
      if (j) printf(", ");
      vkf_cli_json_string(vkf_text_tokenizer_id_to_token(tok, ids[i][j]));
    }
    printf("]}");
  }
  printf("]}\n");
}

static void print_text(const vkf_text_tokenizer *tok, char **texts, int count, int32_t **ids,
                       const size_t *lens) {
  for (int i = 0; i < count; i++) {
    printf("%s\"%s\": %zu tokens\n  ids:", i ? "\n" : "", texts[i], lens[i]);
    for (size_t j = 0; j < lens[i]; j++) printf(" %d", ids[i][j]);
    printf("\n  tokens:");
    for (size_t j = 0; j < lens[i]; j++) printf(" %s", vkf_text_tokenizer_id_to_token(tok, ids[i][j]));
    printf("\n");
  }
}

int vkf_cli_tokenize(int argc, char **argv) {
  const char *model_dir = NULL;
  int json = 0;
  vkf_cli_inputs given = {0};
  vkf_status st = VKF_OK;
  for (int i = 0; i < argc && !st; i++) {
    if (vkf_cli_is_help(argv[i])) {
      usage(stdout);
      vkf_cli_inputs_free(&given);
      return 0;
    } else if (!strcmp(argv[i], "--model") && i + 1 < argc) {
      model_dir = argv[++i];
    } else if (!strcmp(argv[i], "--file") && i + 1 < argc) {
      st = vkf_cli_inputs_add_file(&given, argv[++i]);
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (!strcmp(argv[i], "--")) {
      while (!st && ++i < argc) st = vkf_cli_inputs_add(&given, argv[i]);
    } else if (argv[i][0] == '-' && argv[i][1]) {
      vkf_cli_inputs_free(&given);
      return vkf_cli_bad_arg("vkf tokenize", usage, argc, argv, i);
    } else {
      st = vkf_cli_inputs_add(&given, argv[i]);
    }
  }
  if (!st && given.count == 0) {
    vkf_cli_inputs_free(&given);
    return vkf_cli_usage_error("vkf tokenize", "give at least one TEXT (or --file F)");
  }
  if (!st && given.count > INT32_MAX / 2)
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "more than %d texts", INT32_MAX / 2);
  char **texts = given.items;
  int count = st ? 0 : (int)given.count;
  char *found = NULL;
  vkf_text_tokenizer *tok = NULL;
  int32_t **ids = calloc((size_t)count, sizeof *ids);
  size_t *lens = calloc((size_t)count, sizeof *lens);
  if (!st && !(ids && lens)) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "texts");
  if (!st && !model_dir) st = vkf_task_default_model("embed", &found);
  if (!st && !model_dir) model_dir = found;
  struct stat sb; /* a file that is no GGUF is named as such, not as a folder lacking tokenizers */
  if (!st && !stat(model_dir, &sb) && !S_ISDIR(sb.st_mode) && !vkf_gguf_is_file(model_dir))
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "model %s: neither a directory nor a GGUF file",
                         model_dir);
  if (!st) st = vkf_text_tokenizer_load(model_dir, &tok);
  for (int i = 0; !st && i < count; i++) {
    st = vkf_text_tokenizer_encode(tok, texts[i], 1, &ids[i], &lens[i]);
    if (st) st = vkf_status_annotate(st, "text %d: ", i);
  }
  if (!st && json) print_json(model_dir, tok, texts, count, ids, lens);
  if (!st && !json) print_text(tok, texts, count, ids, lens);
  for (int i = 0; ids && i < count; i++) free(ids[i]);
  free(ids);
  free(lens);
  vkf_text_tokenizer_destroy(tok);
  free(found);
  vkf_cli_inputs_free(&given);
  return st ? vkf_cli_fail(st) : 0;
}
