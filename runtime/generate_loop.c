/* The generation loop: prepare (model, generation config with overrides, prompts), then greedy /
 * sampling step by step or beam search, each row's text decoded as its tokens come. */
#include "runtime/generate_loop.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/generate_beam.h"
#include "runtime/token_text.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static vkf_status append_text(vkf_rt_gen_row *r, const char *s, size_t n) {
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

/* Appends a piece of row b's text and hands it to the caller; a caller's stop ends the row. */
static vkf_status emit(vkf_rt_gen *g, int64_t b, int64_t token, const char *piece, size_t n) {
  vkf_rt_gen_row *r = &g->rows[b];
  VKF_RETURN_IF_ERROR(append_text(r, piece, n));
  if (g->q.on_piece && g->q.on_piece(g->q.user, b, token, piece, n)) r->stopped = r->done = 1;
  return VKF_OK;
}

/* Row b's prompt ids: the text through the tokenizer, or the caller's ids, each checked against
 * the (source) vocabulary. *out is malloc'd. */
static vkf_status prompt_ids(vkf_rt_gen *g, int64_t b, int64_t src_vocab, int64_t **out,
                             size_t *out_n) {
  const vkf_rt_gen_request *q = &g->q;
  int64_t *ids = NULL;
  size_t n = 0;
  if (b < q->prompt_count) {
    int32_t *ids32 = NULL;
    VKF_RETURN_IF_ERROR(vkf_text_tokenizer_encode(q->tok, q->prompts[b], 1, &ids32, &n));
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
    int64_t k = b - q->prompt_count;
    n = q->id_counts[k];
    if (!n)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "the ids of prompt %lld are empty",
                             (long long)b);
    for (size_t i = 0; i < n; i++)
      if (q->ids[k][i] < 0 || q->ids[k][i] >= src_vocab)
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                               "the ids of prompt %lld: entry %zu is not an id in [0, %" PRId64
                               ") (%" PRId64 ")",
                               (long long)b, i, src_vocab, q->ids[k][i]);
    ids = malloc(n * sizeof *ids);
    if (!ids) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "prompt");
    memcpy(ids, q->ids[k], n * sizeof *ids);
  }
  *out = ids;
  *out_n = n;
  return VKF_OK;
}

/* The decoding settings: the generation config's, then the request's overrides. */
static void apply_overrides(vkf_rt_gen *g) {
  const vkf_rt_gen_request *q = &g->q;
  vkf_generation_config_sampling(&g->gc, &g->so);
  int sample = q->temperature > 0 || q->top_k || q->top_p > 0;
  if (q->decoding == 1) g->so.do_sample = 0;
  if (q->decoding == 2 || (q->decoding == 0 && sample)) g->so.do_sample = 1;
  if (q->temperature > 0) g->so.temperature = q->temperature;
  if (q->top_k) g->so.top_k = q->top_k < 0 ? 0 : q->top_k;
  if (q->top_p > 0) g->so.top_p = q->top_p;
  if (q->repetition_penalty > 0) g->so.repetition_penalty = q->repetition_penalty;
}

vkf_status vkf_rt_gen_prepare(vkf_rt_gen *g, const vkf_rt_gen_request *request) {
  g->q = *request;
  const vkf_rt_gen_request *q = &g->q;
  const char *dir = vkf_model_dir(q->model);
  VKF_RETURN_IF_ERROR(vkf_model_generate_facet(q->model, &g->gm));
  g->batch = q->prompt_count + q->ids_count;
  if (g->batch < 1 || g->batch > VKF_RT_GEN_MAX_PROMPTS || q->prompt_count < 0 || q->ids_count < 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%lld prompts: give 1 to %d prompts (texts or ids)", (long long)g->batch,
                           VKF_RT_GEN_MAX_PROMPTS);
  if (q->prompt_count && !q->tok)
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "%s: a text prompt needs the checkpoint's tokenizer", dir);
  if (!q->tok && q->stop_count)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: stop strings need the checkpoint's tokenizer",
                           dir);
  const vkf_model_generate *f = &g->gm;
  int64_t max_ctx = f->max_ctx, src_vocab = f->prompt_vocab, max_src = f->max_source;
  g->vocab = f->vocab;
  VKF_RETURN_IF_ERROR(vkf_generation_config_load(dir, g->vocab, &g->gc));
  apply_overrides(g);
  /* The default context: the config's maximum, at most 4096; ctx may go past it for rotary
   * models, which transformers runs at any position. An encoder-decoder's context is its
   * decoder's: the start token and the new tokens. */
  int64_t cfg_ctx = f->config_ctx ? f->config_ctx : max_ctx;
  g->ctx =
      q->ctx > 0 ? q->ctx : (cfg_ctx < VKF_RT_GEN_DEFAULT_CTX ? cfg_ctx : VKF_RT_GEN_DEFAULT_CTX);
  if (g->ctx > max_ctx)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "ctx %lld is past the model's %lld positions", (long long)g->ctx,
                           (long long)max_ctx);
  if (max_src) {
    /* generate() starts the decoder with decoder_start_token_id, else bos_token_id. */
    g->start_id = g->gc.decoder_start_token_id >= 0 ? g->gc.decoder_start_token_id
                  : f->decoder_start_id >= 0        ? f->decoder_start_id
                  : g->gc.bos_token_id >= 0         ? g->gc.bos_token_id
                                                    : f->bos_id;
    if (g->start_id < 0 || g->start_id >= g->vocab)
      return vkf_status_make(VKF_STATUS_NOT_FOUND,
                             "%s: no decoder_start_token_id (nor bos_token_id) in the vocabulary "
                             "to start the decoder with",
                             dir);
  }
  for (int64_t b = 0; b < g->batch; b++) {
    vkf_rt_gen_row *r = &g->rows[b];
    int64_t *ids = NULL;
    size_t n = 0;
    VKF_RETURN_IF_ERROR(prompt_ids(g, b, src_vocab, &ids, &n));
    if (max_src) {
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
                             "prompt %lld has %zu tokens; the context holds %lld (ctx)",
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
    if (q->tok) VKF_RETURN_IF_ERROR(vkf_text_decoder_create(q->tok, 1, &r->dec));
  }
  /* The new-token limit: the request's, else the generation config's, as generate() counts it
   * from the longest prompt; past the context it is an error, never a silent wrap. */
  g->max_new = q->max_new > 0
                   ? q->max_new
                   : (int64_t)vkf_generation_config_new_token_limit(&g->gc, (size_t)g->longest);
  /* Beam search copies every cache row each step (kv_reorder.h): without a ctx its cache holds
   * just what the generation can reach. */
  /* Greedy is transformers' num_beams=1, do_sample=False: a config's num_beams gives way to it
   * (an explicit --num-beams does not). */
  g->num_beams = q->num_beams > 0 ? q->num_beams : q->decoding == 1 ? 1 : g->gc.num_beams;
  if (g->num_beams > 1 && q->ctx <= 0 && g->longest + g->max_new < g->ctx)
    g->ctx = g->longest + g->max_new;
  for (int64_t b = 0; b < g->batch; b++)
    if (g->rows[b].prompt_len + g->max_new > g->ctx)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "prompt %lld of %lld tokens plus %lld new tokens exceeds the context "
                             "of %lld (ctx, at most %lld)",
                             (long long)b, (long long)g->rows[b].prompt_len, (long long)g->max_new,
                             (long long)g->ctx, (long long)max_ctx);
  g->so.prompt_len = (size_t)g->longest;
  g->so.max_length = g->longest + g->max_new;
  vkf_generation_config_stop_criteria(&g->gc, (size_t)g->longest, &g->stop);
  g->stop.max_new_tokens = (size_t)g->max_new;
  if (q->ignore_eos) g->stop.eos_id_count = 0;
  g->stop.stop_strings = q->stops;
  g->stop.stop_string_count = q->stop_count;
  if (g->num_beams > 1 && (q->stop_count || q->keep_logits || g->so.do_sample))
    return vkf_status_make(
        VKF_STATUS_UNSUPPORTED, "%s does not combine with %lld beams%s",
        q->stop_count    ? "--stop"
        : q->keep_logits ? "--save-logits"
                         : "sampling (do_sample, --temperature, --top-k, --top-p)",
        (long long)g->num_beams, q->stop_count || q->keep_logits ? "" : " (--greedy turns it off)");
  if (q->keep_logits) {
    if (g->batch != 1)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "--save-logits takes one prompt");
    g->saved = malloc((size_t)(g->max_new * g->vocab) * sizeof *g->saved);
    if (!g->saved) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "--save-logits");
  }
  return VKF_OK;
}

/* Picks row b's next token from its logits, records it and decides whether the row is done. */
static vkf_status advance(vkf_rt_gen *g, int64_t b, const float *logits_row, float *work,
                          vkf_rng *rng) {
  vkf_rt_gen_row *r = &g->rows[b];
  VKF_RETURN_IF_ERROR(
      vkf_sampling_check_logits(logits_row, 1, (size_t)g->vocab, r->len - r->prompt_len));
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
  const char *piece = "";
  size_t n = 0;
  if (r->dec) VKF_RETURN_IF_ERROR(vkf_gen_decoder_push(g->q.tok, r->dec, token, &piece, &n));
  VKF_RETURN_IF_ERROR(emit(g, b, token, piece, n));
  size_t end = 0;
  if (!r->done)
    r->done = vkf_stop_check(&g->stop, r->ids + r->prompt_len, (size_t)(r->len - r->prompt_len),
                             r->text ? r->text : "", r->text_size, &end) != VKF_STOP_NONE;
  return VKF_OK;
}

/* The decoders' last bytes (an incomplete UTF-8 character at the end). */
static vkf_status flush_text(vkf_rt_gen *g) {
  for (int64_t b = 0; b < g->batch; b++) {
    vkf_rt_gen_row *r = &g->rows[b];
    const char *tail = NULL;
    size_t n = 0;
    if (r->dec) VKF_RETURN_IF_ERROR(vkf_text_decoder_flush(r->dec, &tail, &n));
    if (n && !r->stopped) VKF_RETURN_IF_ERROR(emit(g, b, -1, tail, n));
  }
  return VKF_OK;
}

/* Row b's generated ids and their text (beam search has them only at the end). */
static vkf_status push_tokens(vkf_rt_gen *g, int64_t b, const int64_t *tokens, int64_t count) {
  vkf_rt_gen_row *r = &g->rows[b];
  for (int64_t i = 0; i < count && !r->stopped; i++) {
    r->ids[r->len++] = tokens[i];
    const char *piece = "";
    size_t n = 0;
    if (r->dec) VKF_RETURN_IF_ERROR(vkf_gen_decoder_push(g->q.tok, r->dec, tokens[i], &piece, &n));
    VKF_RETURN_IF_ERROR(emit(g, b, tokens[i], piece, n));
  }
  return VKF_OK;
}

/* What padded sources carry (masked out): the facet's pad id (the config's, else 0). */
static int64_t source_pad_id(const vkf_rt_gen *g) {
  return g->gm.max_source ? g->gm.pad_id : 0;
}

static vkf_dtype run_dtype(const vkf_rt_gen *g) {
  return g->q.fp16 ? VKF_F16 : VKF_F32;
}
static vkf_dtype cache_dtype(const vkf_rt_gen *g) {
  return g->q.fp16 || g->q.cache_fp16 ? VKF_F16 : VKF_F32;
}

/* Beam search: the generation config's beam settings over the loop in generate_beam.c. */
static vkf_status generate_beams(vkf_rt_gen *g, vkf_device *device) {
  const vkf_generation_config *c = &g->gc;
  const int64_t *prompts[VKF_RT_GEN_MAX_PROMPTS], *sources[VKF_RT_GEN_MAX_PROMPTS];
  int64_t lens[VKF_RT_GEN_MAX_PROMPTS], source_lens[VKF_RT_GEN_MAX_PROMPTS];
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
      .dtype = run_dtype(g),
      .cache_dtype = cache_dtype(g),
      .chunk = g->q.chunk,
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
               .bad_words = g->so.bad_words,
               .bad_word_lens = g->so.bad_word_lens,
               .bad_word_count = g->so.bad_word_count,
               .min_length = c->min_length,
               .min_new_tokens = c->min_new_tokens > 0 ? c->min_new_tokens : 0,
               .forced_bos_token_id = c->forced_bos_token_id,
               .forced_eos_ids = c->forced_eos_token_ids,
               .forced_eos_id_count = c->forced_eos_token_id_count},
  };
  vkf_gen_beam_result res[VKF_RT_GEN_MAX_PROMPTS];
  memset(res, 0, sizeof res);
  int64_t steps = 0;
  double t0 = now_s();
  vkf_status s = vkf_gen_beam_run(device, &g->gm, &q, res, &steps);
  g->decode_s = now_s() - t0;
  g->beam_steps = steps;
  g->decoded_tokens = steps * g->batch * g->num_beams;
  for (int64_t b = 0; !s && b < g->batch; b++) {
    s = push_tokens(g, b, res[b].generated, res[b].count);
    g->rows[b].score = res[b].score;
  }
  for (int64_t b = 0; b < g->batch; b++) free(res[b].generated);
  return s;
}

vkf_status vkf_rt_gen_run(vkf_rt_gen *g, vkf_device *device) {
  if (g->num_beams > 1) {
    vkf_status s = generate_beams(g, device);
    return s ? s : flush_text(g);
  }
  const int64_t *sources[VKF_RT_GEN_MAX_PROMPTS];
  int64_t source_lens[VKF_RT_GEN_MAX_PROMPTS];
  for (int64_t b = 0; b < g->batch; b++)
    sources[b] = g->rows[b].src, source_lens[b] = g->rows[b].src_len;
  vkf_gen_backend_options eo = {.rows = g->batch,
                                .prompt_len = g->longest,
                                .capacity = g->ctx,
                                .dtype = run_dtype(g),
                                .cache_dtype = cache_dtype(g),
                                .chunk = g->q.chunk,
                                .sources = g->batch,
                                .source_ids = sources,
                                .source_lens = source_lens,
                                .source_pad_id = source_pad_id(g)};
  vkf_gen_backend e = {0};
  double t_open = now_s();
  VKF_RETURN_IF_ERROR(vkf_gen_backend_open(device, &g->gm, &eo, &e));
  g->encode_s = now_s() - t_open;
  int32_t *ids = malloc((size_t)(g->batch * g->longest) * sizeof *ids);
  float *work = malloc((size_t)g->vocab * sizeof *work);
  int32_t tokens[VKF_RT_GEN_MAX_PROMPTS];
  int64_t lens[VKF_RT_GEN_MAX_PROMPTS], positions[VKF_RT_GEN_MAX_PROMPTS];
  vkf_status s = ids && work ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  for (int64_t b = 0; !s && b < g->batch; b++) {
    const vkf_rt_gen_row *r = &g->rows[b];
    for (int64_t t = 0; t < g->longest; t++)
      ids[b * g->longest + t] = (int32_t)r->ids[t < r->len ? t : r->len - 1];
    lens[b] = r->len;
  }
  vkf_rng rng;
  vkf_rng_seed(&rng, g->q.seed);
  const float *logits = NULL;
  double t0 = now_s();
  if (!s) s = e.prefill(e.impl, ids, lens, &logits);
  g->prefill_s = now_s() - t0;
  for (int64_t b = 0; !s && b < g->batch; b++) s = advance(g, b, logits + b * g->vocab, work, &rng);
  t0 = now_s();
  vkf_progress p = {.task = "generating tokens", .total = (uint64_t)g->max_new, .unit = ""};
  for (;;) {
    int live = 0;
    for (int64_t b = 0; b < g->batch; b++) live |= !g->rows[b].done;
    p.done = s || !live ? p.total : p.done + 1; /* tokens per row so far (the prefill's first) */
    if (g->q.report_progress) vkf_device_report_progress(device, &p);
    if (s || !live) break;
    for (int64_t b = 0; b < g->batch; b++) {
      const vkf_rt_gen_row *r = &g->rows[b];
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
  if (!s && e.memory) {
    e.memory(e.impl, &g->mem_prefill_plan, &g->mem_decode_plan, &g->mem_cache);
    g->has_memory = 1;
  }
  vkf_gen_backend_close(&e);
  free(ids);
  free(work);
  return s;
}

void vkf_rt_gen_release(vkf_rt_gen *g) {
  for (int64_t b = 0; b < VKF_RT_GEN_MAX_PROMPTS; b++) {
    free(g->rows[b].ids);
    free(g->rows[b].src);
    free(g->rows[b].text);
    vkf_text_decoder_destroy(g->rows[b].dec);
  }
  free(g->saved);
  memset(g, 0, sizeof *g);
}
