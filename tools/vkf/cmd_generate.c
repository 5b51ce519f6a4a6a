/* vkf generate: autoregressive generation with a decoder-only checkpoint: the prompt through the
 * prefill plan, then one recorded decode step per token against the device KV cache; greedy or
 * sampled (the checkpoint's generation_config.json, overridable), streamed to stdout. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/formats/npy.h"
#include "models/generate/generation_config.h"
#include "models/generate/sampling.h"
#include "models/registry/model.h"
#include "models/text/text_tokenizer.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli_inputs.h"
#include "tools/vkf/device_open.h"
#include "tools/vkf/generate_beam.h"
#include "tools/vkf/gen_backend.h"
#include "tools/vkf/generate_engine.h"
#include "tools/vkf/json_out.h"

enum { GEN_MAX_PROMPTS = 16, GEN_MAX_STOPS = 8, GEN_DEFAULT_CTX = 4096 };

typedef struct gen_args {
  const char *model, *device, *save_logits;
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

/* One sequence being generated. */
typedef struct gen_row {
  int64_t *ids; /* prompt (an encoder-decoder's: its decoder start token) then generated, capacity
                   ctx */
  int64_t *src; /* encoder-decoders: the source ids */
  int64_t src_len;
  int64_t prompt_len, len;
  int done;
  char *text; /* decoded generated text */
  size_t text_size, text_cap;
  vkf_text_decoder *dec;
  float score; /* beam search: the sequence's score (sum of log-probabilities / length^penalty) */
} gen_row;

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: vkf generate --model DIR (--prompt TEXT | --ids 1,2,3 | --file F)...\n"
      "                    [--max-new-tokens N] [--device N|NAME]\n"
      "                    [--greedy | --temperature T --top-k K --top-p P --seed S]\n"
      "                    [--repetition-penalty R] [--stop STRING]... [--ignore-eos]\n"
      "                    [--num-beams N] [--ctx N] [--chunk N] [--fp16] [--cache-fp16]\n"
      "                    [--json] [--save-logits F.npy]\n"
      "  Several prompts run as one batch; each gets the tokens it gets alone. Defaults come\n"
      "  from the checkpoint's generation_config.json (else config.json), as transformers'\n"
      "  generate() reads them. --ctx: KV cache positions (default: the smaller of the\n"
      "  model's maximum and %d). --chunk: prompts longer run in chunks of N tokens against\n"
      "  the cache (default 512). --save-logits: float32 [steps, vocab] of one prompt, the raw\n"
      "  logits of every generated step. Text streams to stdout, speeds go to stderr.\n"
      "  --num-beams N (or num_beams in generation_config.json): beam search as generate()\n"
      "  runs it, with the config's length_penalty, early_stopping, min_length and the other\n"
      "  beam settings; each prompt's best sequence is printed when all are done.\n"
      "  --file F: prompts, one per line ('-': stdin; --prompt - reads stdin too).\n"
      "  On a terminal, stderr shows the kernels being built and the tokens generated.\n",
      GEN_DEFAULT_CTX);
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end = NULL;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static int parse_f64(const char *s, double *out) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (!*s || *end || v != v) return 0;
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
      int64_t s = 0;
      ok = parse_i64(v, 0, INT64_MAX, &s), a->seed = (uint64_t)s;
    } else if (!strcmp(o, "--temperature")) {
      ok = parse_f64(v, &a->temperature) && a->temperature > 0, a->has_temp = a->sample = 1;
    } else if (!strcmp(o, "--top-p")) {
      ok = parse_f64(v, &a->top_p) && a->top_p > 0 && a->top_p <= 1, a->has_top_p = a->sample = 1;
    } else if (!strcmp(o, "--repetition-penalty")) {
      ok = parse_f64(v, &a->repetition_penalty) && a->repetition_penalty > 0, a->has_rep = 1;
    } else {
      ok = 0;
    }
    if (!ok) return vkf_cli_bad_arg("vkf generate", usage, argc, argv, i);
    i += used;
  }
  if (!a->model || a->prompt_count + a->ids_count == 0)
    return vkf_cli_usage_error(
        "vkf generate", "%s",
        !a->model ? "--model DIR is required" : "give a --prompt TEXT, --ids 1,2,3 or --file F");
  if (a->greedy && a->sample)
    return vkf_cli_usage_error("vkf generate",
                               "--greedy contradicts --temperature / --top-k / --top-p");
  return 0;
}

/* "1,2,3" -> ids, each in [0, vocab). */
static vkf_status parse_ids(const char *s, int64_t vocab, int64_t **out, size_t *out_count) {
  size_t cap = strlen(s) / 2 + 2, n = 0;
  int64_t *ids = malloc(cap * sizeof *ids);
  if (!ids) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "--ids");
  const char *p = s;
  while (*p) {
    char *end = NULL;
    long long v = strtoll(p, &end, 10);
    if (end == p || (*end && *end != ',') || v < 0 || v >= vocab || n == cap) {
      free(ids);
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "--ids \"%s\": entry %zu is not an id in [0, %" PRId64 ")", s, n,
                             vocab);
    }
    ids[n++] = v;
    p = *end ? end + 1 : end;
  }
  if (!n) {
    free(ids);
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "--ids is empty");
  }
  *out = ids;
  *out_count = n;
  return VKF_OK;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static vkf_status append_text(gen_row *r, const char *s, size_t n) {
  if (r->text_size + n + 1 > r->text_cap) {
    size_t cap = (r->text_size + n + 1) * 2;
    char *t = realloc(r->text, cap);
    if (!t) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generated text");
    r->text = t, r->text_cap = cap;
  }
  memcpy(r->text + r->text_size, s, n);
  r->text_size += n;
  r->text[r->text_size] = 0;
  return VKF_OK;
}

typedef struct gen_state {
  gen_args a;
  vkf_model *model;
  vkf_decoder_model *dec;
  vkf_encdec_model *encdec;
  vkf_gen_model gm;
  int64_t start_id; /* encoder-decoders: the decoder start token */
  vkf_text_tokenizer *tok;
  vkf_generation_config gc;
  vkf_sampling_options so;
  vkf_stop_criteria stop;
  int64_t vocab, batch, ctx, longest, max_new, num_beams;
  gen_row rows[GEN_MAX_PROMPTS];
  float *saved; /* --save-logits: [max_new, vocab] */
  size_t saved_steps;
  double prefill_s, decode_s, encode_s;
  int64_t decoded_tokens;
} gen_state;

/* The model, its tokenizer (needed for --prompt and for text), the generation defaults with the
 * command line's overrides, and every prompt's ids. */
static vkf_status prepare(gen_state *g) {
  gen_args *a = &g->a;
  VKF_RETURN_IF_ERROR(vkf_model_open(a->model, &g->model));
  const char *family = vkf_model_family(g->model);
  if (strcmp(family, "decoder") != 0 && strcmp(family, "encdec") != 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: %s is not a language model (GPT-2, Llama, Mistral, Qwen2; BART, "
                           "Marian, T5, the seeds' Transformer)",
                           a->model, vkf_model_architecture(g->model));
  const vkf_hf_config *c;
  int64_t max_ctx, src_vocab, max_src = 0;
  if (!strcmp(family, "encdec")) {
    g->gm.encdec = g->encdec = vkf_model_impl(g->model);
    c = vkf_encdec_config(g->encdec);
    if (!vkf_encdec_has_lm_head(g->encdec))
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s has no language-model head",
                             a->model, vkf_model_architecture(g->model));
    max_ctx = max_src = vkf_encdec_max_positions(g->encdec);
    src_vocab = vkf_encdec_source_vocab(g->encdec);
  } else {
    g->gm.decoder = g->dec = vkf_model_impl(g->model);
    c = vkf_decoder_config(g->dec);
    if (!vkf_decoder_has_lm_head(g->dec))
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s has no language-model head",
                             a->model, vkf_model_architecture(g->model));
    max_ctx = vkf_decoder_max_positions(g->dec);
    src_vocab = c->vocab_size;
  }
  g->vocab = c->vocab_size;
  vkf_status ts = vkf_text_tokenizer_load(a->model, &g->tok);
  if (ts && a->prompt_count) return ts;
  vkf_status_free(ts); /* --ids alone: generated ids are still printed, text needs a tokenizer */
  if (!g->tok && a->stop_count)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: --stop needs the checkpoint's tokenizer",
                           a->model);
  VKF_RETURN_IF_ERROR(vkf_generation_config_load(a->model, g->vocab, &g->gc));
  vkf_generation_config_sampling(&g->gc, &g->so);
  if (a->greedy) g->so.do_sample = 0;
  if (a->sample) g->so.do_sample = 1;
  if (a->has_temp) g->so.temperature = a->temperature;
  if (a->has_top_k) g->so.top_k = a->top_k;
  if (a->has_top_p) g->so.top_p = a->top_p;
  if (a->has_rep) g->so.repetition_penalty = a->repetition_penalty;
  g->batch = a->prompt_count + a->ids_count;
  /* The default context: the config's maximum, at most 4096; --ctx may go past it for rotary
   * models, which transformers runs at any position. An encoder-decoder's context is its
   * decoder's: the start token and the new tokens. */
  int64_t cfg_ctx = c->max_position_embeddings ? c->max_position_embeddings : max_ctx;
  g->ctx = a->ctx ? a->ctx : (cfg_ctx < GEN_DEFAULT_CTX ? cfg_ctx : GEN_DEFAULT_CTX);
  if (g->ctx > max_ctx)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "--ctx %lld is past the model's %lld positions", (long long)g->ctx,
                           (long long)max_ctx);
  if (g->encdec) {
    /* generate() starts the decoder with decoder_start_token_id, else bos_token_id. */
    g->start_id = g->gc.decoder_start_token_id >= 0 ? g->gc.decoder_start_token_id
                  : c->decoder_start_token_id >= 0  ? c->decoder_start_token_id
                  : g->gc.bos_token_id >= 0         ? g->gc.bos_token_id
                                                    : c->bos_token_id;
    if (g->start_id < 0 || g->start_id >= g->vocab)
      return vkf_status_make(VKF_STATUS_NOT_FOUND,
                             "%s: no decoder_start_token_id (nor bos_token_id) in the vocabulary "
                             "to start the decoder with",
                             a->model);
  }
  for (int64_t b = 0; b < g->batch; b++) {
    gen_row *r = &g->rows[b];
    int64_t *ids = NULL;
    size_t n = 0;
    if (b < a->prompt_count) {
      int32_t *ids32 = NULL;
      VKF_RETURN_IF_ERROR(vkf_text_tokenizer_encode(g->tok, a->prompts[b], 1, &ids32, &n));
      ids = malloc((n ? n : 1) * sizeof *ids);
      for (size_t i = 0; ids && i < n; i++) ids[i] = ids32[i];
      free(ids32);
      if (!ids) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "prompt");
      if (!n) {
        free(ids);
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "prompt %lld has no tokens",
                               (long long)b);
      }
      for (size_t i = 0; i < n; i++)
        if (ids[i] >= src_vocab) {
          int64_t bad = ids[i];
          free(ids);
          return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                 "prompt %lld: the tokenizer gives id %" PRId64
                                 " (token %zu), outside the model's vocabulary of %" PRId64,
                                 (long long)b, bad, i, src_vocab);
        }
    } else {
      VKF_RETURN_IF_ERROR(parse_ids(a->ids[b - a->prompt_count], src_vocab, &ids, &n));
    }
    if (g->encdec) {
      if ((int64_t)n > max_src) {
        free(ids);
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                               "source %lld has %zu tokens, more than the model's %lld positions",
                               (long long)b, n, (long long)max_src);
      }
      /* The source goes to the encoder; the decoder's prompt is its start token. */
      r->src = ids, r->src_len = (int64_t)n;
      ids = malloc(sizeof *ids);
      if (!ids) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "prompt");
      ids[0] = g->start_id;
      n = 1;
    }
    if ((int64_t)n >= g->ctx) {
      free(ids);
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "prompt %lld has %zu tokens; the context holds %lld (--ctx)",
                             (long long)b, n, (long long)g->ctx);
    }
    r->ids = malloc((size_t)g->ctx * sizeof *r->ids);
    if (!r->ids) {
      free(ids);
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "prompt");
    }
    memcpy(r->ids, ids, n * sizeof *ids);
    free(ids);
    r->prompt_len = r->len = (int64_t)n;
    if ((int64_t)n > g->longest) g->longest = (int64_t)n;
    if (g->tok) VKF_RETURN_IF_ERROR(vkf_text_decoder_create(g->tok, 1, &r->dec));
  }
  /* The new-token limit: --max-new-tokens, else the generation config's, as generate() counts it
   * from the longest prompt; past the context it is an error, never a silent wrap. */
  g->max_new = a->max_new > 0 ? a->max_new
                              : (int64_t)vkf_generation_config_new_token_limit(
                                    &g->gc, (size_t)g->longest);
  /* Beam search copies every cache row each step (kv_reorder.h): without --ctx its cache holds
   * just what the generation can reach. */
  g->num_beams = a->num_beams ? a->num_beams : g->gc.num_beams;
  if (g->num_beams > 1 && !a->ctx && g->longest + g->max_new < g->ctx)
    g->ctx = g->longest + g->max_new;
  for (int64_t b = 0; b < g->batch; b++)
    if (g->rows[b].prompt_len + g->max_new > g->ctx)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "prompt %lld of %lld tokens plus %lld new tokens exceeds the context "
                             "of %lld (--ctx, at most %lld)",
                             (long long)b, (long long)g->rows[b].prompt_len, (long long)g->max_new,
                             (long long)g->ctx, (long long)max_ctx);
  g->so.prompt_len = (size_t)g->longest;
  g->so.max_length = g->longest + g->max_new;
  vkf_generation_config_stop_criteria(&g->gc, (size_t)g->longest, &g->stop);
  g->stop.max_new_tokens = (size_t)g->max_new;
  if (a->ignore_eos) g->stop.eos_id_count = 0;
  g->stop.stop_strings = a->stops;
  g->stop.stop_string_count = (size_t)a->stop_count;
  if (g->num_beams > 1 && (a->stop_count || a->save_logits || g->so.do_sample))
    return vkf_status_make(
        VKF_STATUS_UNSUPPORTED, "%s does not combine with %lld beams%s",
        a->stop_count    ? "--stop"
        : a->save_logits ? "--save-logits"
                         : "sampling (do_sample, --temperature, --top-k, --top-p)",
        (long long)g->num_beams, a->stop_count || a->save_logits ? "" : " (--greedy turns it off)");
  if (a->save_logits) {
    if (g->batch != 1)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "--save-logits takes one prompt");
    g->saved = malloc((size_t)(g->max_new * g->vocab) * sizeof *g->saved);
    if (!g->saved) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "--save-logits");
  }
  return VKF_OK;
}

/* Picks row b's next token from its logits, records it and decides whether the row is done. */
static vkf_status advance(gen_state *g, int64_t b, const float *logits_row, float *work,
                          vkf_rng *rng) {
  gen_row *r = &g->rows[b];
  if (g->saved) memcpy(g->saved + g->saved_steps++ * g->vocab, logits_row, g->vocab * 4);
  memcpy(work, logits_row, (size_t)g->vocab * sizeof *work);
  /* Hugging Face left-pads a batch to its longest prompt: a shorter row's lengths, as the length
   * processors count them, are `shift` more than its own. */
  vkf_sampling_options o = g->so;
  int64_t shift = g->longest - r->prompt_len;
  o.prompt_len = (size_t)r->prompt_len;
  o.min_length = o.min_length > shift ? o.min_length - shift : 0;
  o.max_length = o.max_length - shift;
  int64_t token = 0;
  VKF_RETURN_IF_ERROR(
      vkf_sampling_next(&o, r->ids, (size_t)r->len, (size_t)g->vocab, work, rng, &token));
  r->ids[r->len++] = token;
  if (r->dec) {
    const char *piece = NULL;
    size_t n = 0;
    VKF_RETURN_IF_ERROR(vkf_text_decoder_push(r->dec, (int32_t)token, &piece, &n));
    VKF_RETURN_IF_ERROR(append_text(r, piece, n));
    if (g->batch == 1 && !g->a.json) fwrite(piece, 1, n, stdout), fflush(stdout);
  }
  size_t end = 0;
  r->done = vkf_stop_check(&g->stop, r->ids + r->prompt_len, (size_t)(r->len - r->prompt_len),
                           r->text ? r->text : "", r->text_size, &end) != VKF_STOP_NONE;
  return VKF_OK;
}

/* The decoders' last bytes (an incomplete UTF-8 character at the end). */
static vkf_status flush_text(gen_state *g) {
  for (int64_t b = 0; b < g->batch; b++) {
    gen_row *r = &g->rows[b];
    const char *tail = NULL;
    size_t n = 0;
    if (r->dec) VKF_RETURN_IF_ERROR(vkf_text_decoder_flush(r->dec, &tail, &n));
    if (n) VKF_RETURN_IF_ERROR(append_text(r, tail, n));
    if (n && g->batch == 1 && !g->a.json) fwrite(tail, 1, n, stdout);
  }
  return VKF_OK;
}

/* Row b's decoded text of its generated ids (beam search has them only at the end). */
static vkf_status push_tokens(gen_state *g, gen_row *r, const int64_t *tokens, int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    r->ids[r->len++] = tokens[i];
    if (!r->dec) continue;
    const char *piece = NULL;
    size_t n = 0;
    VKF_RETURN_IF_ERROR(vkf_text_decoder_push(r->dec, (int32_t)tokens[i], &piece, &n));
    VKF_RETURN_IF_ERROR(append_text(r, piece, n));
    if (g->batch == 1 && !g->a.json) fwrite(piece, 1, n, stdout);
  }
  return VKF_OK;
}

/* What padded sources carry (masked out): the config's pad id, else 0. */
static int64_t source_pad_id(const gen_state *g) {
  const vkf_hf_config *c = g->encdec ? vkf_encdec_config(g->encdec) : NULL;
  if (!c) return 0;
  return c->pad_token_id >= 0 && c->pad_token_id < vkf_encdec_source_vocab(g->encdec)
             ? c->pad_token_id
             : 0;
}

/* --num-beams: the generation config's beam settings over the loop in generate_beam.c. */
static vkf_status generate_beams(gen_state *g, vkf_cli_device *dev) {
  const vkf_generation_config *c = &g->gc;
  const int64_t *prompts[GEN_MAX_PROMPTS], *sources[GEN_MAX_PROMPTS];
  int64_t lens[GEN_MAX_PROMPTS], source_lens[GEN_MAX_PROMPTS];
  for (int64_t b = 0; b < g->batch; b++) {
    prompts[b] = g->rows[b].ids, lens[b] = g->rows[b].len;
    sources[b] = g->rows[b].src, source_lens[b] = g->rows[b].src_len;
  }
  vkf_gen_beam_request q = {
      .batch = g->batch,
      .prompts = prompts,
      .prompt_lens = lens,
      .max_new = g->max_new,
      .capacity = g->ctx,
      .dtype = g->a.fp16 ? VKF_F16 : VKF_F32,
      .cache_dtype = g->a.fp16 || g->a.cache_fp16 ? VKF_F16 : VKF_F32,
      .chunk = g->a.chunk,
      .source_ids = sources,
      .source_lens = source_lens,
      .source_pad_id = source_pad_id(g),
      .beam = {.num_beams = g->num_beams,
               .length_penalty = c->length_penalty,
               .early_stopping = c->early_stopping,
               .num_return_sequences = 1,
               .eos_ids = g->stop.eos_ids,
               .eos_id_count = g->stop.eos_id_count,
               /* generate() pads with the first eos id when the config has no pad id */
               .pad_token_id = c->pad_token_id >= 0    ? c->pad_token_id
                               : c->eos_token_id_count ? c->eos_token_ids[0]
                                                       : -1,
               .repetition_penalty = g->so.repetition_penalty,
               .no_repeat_ngram_size = g->so.no_repeat_ngram_size,
               .min_length = c->min_length,
               .min_new_tokens = c->min_new_tokens > 0 ? c->min_new_tokens : 0,
               .forced_bos_token_id = c->forced_bos_token_id,
               .forced_eos_ids = c->forced_eos_token_ids,
               .forced_eos_id_count = c->forced_eos_token_id_count},
  };
  vkf_gen_beam_result res[GEN_MAX_PROMPTS];
  int64_t steps = 0;
  double t0 = now_s();
  vkf_status s = vkf_gen_beam_run(dev->device, &g->gm, &q, res, &steps);
  g->decode_s = now_s() - t0;
  g->decoded_tokens = steps * g->batch * g->num_beams;
  for (int64_t b = 0; !s && b < g->batch; b++) {
    s = push_tokens(g, &g->rows[b], res[b].generated, res[b].count);
    g->rows[b].score = res[b].score;
  }
  for (int64_t b = 0; b < g->batch; b++) free(res[b].generated);
  if (!s)
    fprintf(stderr,
            "vkf generate: %lld beams, %.1f row-tokens/s (%lld steps of %lld rows, prefill "
            "included)\n",
            (long long)g->num_beams,
            g->decode_s > 0 ? (double)g->decoded_tokens / g->decode_s : 0.0, (long long)steps,
            (long long)(g->batch * g->num_beams));
  return s;
}

static vkf_status generate(gen_state *g, vkf_cli_device *dev) {
  if (g->num_beams > 1) {
    vkf_status s = generate_beams(g, dev);
    return s ? s : flush_text(g);
  }
  const int64_t *sources[GEN_MAX_PROMPTS];
  int64_t source_lens[GEN_MAX_PROMPTS];
  for (int64_t b = 0; b < g->batch; b++)
    sources[b] = g->rows[b].src, source_lens[b] = g->rows[b].src_len;
  vkf_gen_backend_options eo = {.rows = g->batch,
                                .prompt_len = g->longest,
                                .capacity = g->ctx,
                                .dtype = g->a.fp16 ? VKF_F16 : VKF_F32,
                                .cache_dtype = g->a.fp16 || g->a.cache_fp16 ? VKF_F16 : VKF_F32,
                                .chunk = g->a.chunk,
                                .sources = g->batch,
                                .source_ids = sources,
                                .source_lens = source_lens,
                                .source_pad_id = source_pad_id(g)};
  vkf_gen_backend e = {0};
  double t_open = now_s();
  VKF_RETURN_IF_ERROR(vkf_gen_backend_open(dev->device, &g->gm, &eo, &e));
  g->encode_s = now_s() - t_open;
  int32_t *ids = malloc((size_t)(g->batch * g->longest) * sizeof *ids);
  float *work = malloc((size_t)g->vocab * sizeof *work);
  int32_t tokens[GEN_MAX_PROMPTS];
  int64_t lens[GEN_MAX_PROMPTS], positions[GEN_MAX_PROMPTS];
  vkf_status s = ids && work ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  for (int64_t b = 0; !s && b < g->batch; b++) {
    const gen_row *r = &g->rows[b];
    for (int64_t t = 0; t < g->longest; t++)
      ids[b * g->longest + t] = (int32_t)r->ids[t < r->len ? t : r->len - 1];
    lens[b] = r->len;
  }
  vkf_rng rng;
  vkf_rng_seed(&rng, g->a.seed);
  const float *logits = NULL;
  double t0 = now_s();
  if (!s) s = e.prefill(e.impl, ids, lens, &logits);
  g->prefill_s = now_s() - t0;
  for (int64_t b = 0; !s && b < g->batch; b++) s = advance(g, b, logits + b * g->vocab, work, &rng);
  t0 = now_s();
  /* Text streamed to stdout shows the progress itself; otherwise the terminal line counts steps. */
  int streamed = g->batch == 1 && !g->a.json && g->rows[0].dec;
  vkf_progress p = {.task = "generating tokens", .total = (uint64_t)g->max_new, .unit = ""};
  for (;;) {
    int live = 0;
    for (int64_t b = 0; b < g->batch; b++) live |= !g->rows[b].done;
    p.done = s || !live ? p.total : p.done + 1; /* tokens per row so far (the prefill's first) */
    if (!streamed) vkf_device_report_progress(dev->device, &p);
    if (s || !live) break;
    for (int64_t b = 0; b < g->batch; b++) {
      const gen_row *r = &g->rows[b];
      /* A finished row repeats its last token at its last position (results ignored), so every
       * step keeps the recorded batch shape. */
      tokens[b] = (int32_t)r->ids[r->len - 1];
      positions[b] = r->len - 1;
    }
    s = e.step(e.impl, tokens, positions, &logits);
    for (int64_t b = 0; !s && b < g->batch; b++) {
      if (g->rows[b].done) continue;
      s = advance(g, b, logits + b * g->vocab, work, &rng);
      g->decoded_tokens++;
    }
  }
  g->decode_s = now_s() - t0;
  if (!s) s = flush_text(g);
  if (!s && g->dec) {
    vkf_gen_engine_memory mem = vkf_gen_engine_memory_of(e.impl);
    fprintf(stderr,
            "vkf generate: prompt %.1f tokens/s (%lld tokens), generation %.1f tokens/s (%lld "
            "steps); device memory: weights and prefill plan %.1f MiB, decode plan %.1f MiB, KV "
            "cache %.1f MiB\n",
            g->prefill_s > 0 ? (double)(g->batch * g->longest) / g->prefill_s : 0.0,
            (long long)(g->batch * g->longest),
            g->decode_s > 0 ? (double)g->decoded_tokens / g->decode_s : 0.0,
            (long long)g->decoded_tokens, mem.prefill_plan / 1048576.0,
            mem.decode_plan / 1048576.0, mem.cache / 1048576.0);
  } else if (!s) {
    fprintf(stderr,
            "vkf generate: encoder and plans %.2f s, first step %.3f s, generation %.1f "
            "tokens/s (%lld steps)\n",
            g->encode_s, g->prefill_s,
            g->decode_s > 0 ? (double)g->decoded_tokens / g->decode_s : 0.0,
            (long long)g->decoded_tokens);
  }
  vkf_gen_backend_close(&e);
  free(ids);
  free(work);
  return s;
}

static void print_results(const gen_state *g) {
  if (!g->a.json) {
    if (g->batch == 1) {
      printf("\n");
      return;
    }
    for (int64_t b = 0; b < g->batch; b++)
      printf("[%lld] %s\n", (long long)b, g->rows[b].text ? g->rows[b].text : "");
    return;
  }
  if (g->batch > 1) printf("[");
  for (int64_t b = 0; b < g->batch; b++) {
    const gen_row *r = &g->rows[b];
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

int vkf_cli_generate(int argc, char **argv) {
  gen_state g;
  memset(&g, 0, sizeof g);
  int rc = parse_args(argc, argv, &g.a);
  if (rc) {
    vkf_cli_inputs_free(&g.a.file_prompts);
    return rc;
  }
  vkf_cli_device dev = {0};
  vkf_status s = prepare(&g);
  if (!s) s = vkf_cli_device_open(g.a.device, &dev);
  if (!s) s = generate(&g, &dev);
  if (!s) print_results(&g);
  if (!s && g.saved) {
    int64_t shape[2] = {(int64_t)g.saved_steps, g.vocab};
    s = vkf_npy_save(g.a.save_logits, VKF_NPY_F32, 2, shape, g.saved);
  }
  int validation = vkf_cli_device_close(&dev);
  for (int64_t b = 0; b < GEN_MAX_PROMPTS; b++) {
    free(g.rows[b].ids);
    free(g.rows[b].src);
    free(g.rows[b].text);
    vkf_text_decoder_destroy(g.rows[b].dec);
  }
  free(g.saved);
  vkf_text_tokenizer_destroy(g.tok);
  vkf_model_close(g.model);
  vkf_cli_inputs_free(&g.a.file_prompts);
  if (!s && validation)
    s = vkf_status_make(VKF_STATUS_INTERNAL, "the validation layer reported messages");
  return s ? vkf_cli_fail(s) : 0;
}
