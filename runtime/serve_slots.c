/* The slot scheduler: a queue of requests, one engine row (cache row) per slot, and per step one
 * run of the engine. With ragged plans (vkf_gen_engine_ragged) the run's rows are the tokens
 * present: one per decoding slot, then prompt tokens up to a budget (the full chunk when no slot
 * is decoding, else `small`, fitted to a plan's rows), so a prompt costs its own tokens
 * and holds the decoding slots back by one small step at most. Without them (a model the ragged
 * plans do not take): vkf_gen_engine_extend_rows when some slot still has prompt tokens (decoding
 * slots ride along with their one token), vkf_gen_engine_step otherwise. */
#include "runtime/serve_slots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/generate_engine.h"
#include "runtime/token_text.h"

typedef struct job {
  vkf_slot_request r;
  int32_t *prompt;
  int64_t end_ids[VKF_SLOTS_MAX_END_IDS];
  char *stops[VKF_SLOTS_MAX_STOPS];
  size_t max_stop; /* longest stop string, bytes */
  struct job *next;
} job;

typedef struct slot {
  job *job; /* NULL: free */
  int32_t *cached; /* [ctx]: the tokens positions 0 .. cached_len - 1 of this row hold */
  int64_t cached_len;
  int64_t fed;  /* prompt tokens in the cache; == prompt_len once decoding */
  int64_t len;  /* prompt + generated, the next token included (decoding) */
  int32_t next; /* decoding: the last sampled token, fed at position len - 1 by the next run */
  int64_t *history; /* [ctx]: prompt + generated ids for the sampling processors */
  int64_t generated;
  vkf_text_decoder *dec;
  char *text;
  size_t text_size, text_cap, emitted;
  vkf_rng rng;
  vkf_sampling_options so;
  int64_t count; /* tokens of this step's run */
} slot;

struct vkf_slots {
  vkf_device *device;
  vkf_decoder_model *model;
  const vkf_text_tokenizer *tok;
  vkf_slots_options o;
  int64_t vocab, chunk, cap;
  int64_t small; /* the engine's small prompt plan (tokens a row), 0: none */
  vkf_gen_engine *engine;
  slot *slots;
  job *head, *tail;
  int64_t queued;
  int32_t *ids;       /* [slots, chunk] */
  int64_t *counts, *starts, *positions;
  int32_t *tokens;
  float *scores;
  int64_t ragged;    /* the engine's most ragged rows (0: none) */
  int32_t *r_ids;    /* [ragged]: a ragged run's tokens, */
  int64_t *r_seqs, *r_pos; /* their slots and positions, */
  int64_t *r_logit;  /* [slots]: the rows whose logits are read, */
  int64_t *r_first;  /* [slots]: each slot's logit index this run (-1: none) */
  int64_t tokens_total, rows_total; /* tokens run and rows computed, all steps */
};

static void job_free(job *j) {
  if (!j) return;
  free(j->prompt);
  for (size_t i = 0; i < j->r.stop_count; i++) free(j->stops[i]);
  free(j);
}

vkf_status vkf_slots_create(vkf_device *device, vkf_decoder_model *model,
                            const vkf_text_tokenizer *tok, const vkf_slots_options *options,
                            vkf_slots **out) {
  *out = NULL;
  const vkf_hf_config *c = vkf_decoder_config(model);
  int64_t max_pos = vkf_decoder_max_positions(model);
  int64_t chunk = options->chunk > 0 ? options->chunk : options->ctx < 128 ? options->ctx : 128;
  if (options->slots < 1 || options->slots > 256 || options->ctx < 2 || chunk < 1 ||
      options->ctx + chunk > max_pos)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%lld slots of %lld positions (+ a %lld-token chunk): slots 1 to 256, "
                           "at least 2 positions, at most the model's %lld in all",
                           (long long)options->slots, (long long)options->ctx, (long long)chunk,
                           (long long)max_pos);
  if (!vkf_decoder_has_lm_head(model))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "the model has no language-model head");
  vkf_slots *s = calloc(1, sizeof *s);
  if (!s) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "slots");
  s->device = device;
  s->model = model;
  s->tok = tok;
  s->o = *options;
  s->vocab = c->vocab_size;
  s->chunk = chunk;
  s->small = chunk > 16 ? 16 : 0;
  s->cap = options->ctx + chunk;
  int64_t n = options->slots;
  s->slots = calloc((size_t)n, sizeof *s->slots);
  s->ids = calloc((size_t)(n * chunk), sizeof *s->ids);
  s->counts = calloc((size_t)n, sizeof *s->counts);
  s->starts = calloc((size_t)n, sizeof *s->starts);
  s->positions = calloc((size_t)n, sizeof *s->positions);
  s->tokens = calloc((size_t)n, sizeof *s->tokens);
  s->scores = malloc((size_t)s->vocab * sizeof *s->scores);
  vkf_status st = s->slots && s->ids && s->counts && s->starts && s->positions && s->tokens &&
                          s->scores
                      ? VKF_OK
                      : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "slots");
  for (int64_t i = 0; !st && i < n; i++) {
    slot *sl = &s->slots[i];
    sl->cached = malloc((size_t)options->ctx * sizeof *sl->cached);
    sl->history = malloc((size_t)options->ctx * sizeof *sl->history);
    if (!sl->cached || !sl->history) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "slots");
    if (!st) st = vkf_text_decoder_create(tok, 1, &sl->dec);
  }
  /* ragged plans up to a full chunk, or every slot's token and a small piece of prompt; a model
   * the ragged plans do not take gets rectangular ones, of the busy rows and a small chunk */
  int64_t most = n + (s->small ? s->small : chunk);
  if (most < chunk) most = chunk;
  int ragged = vkf_decoder_takes_ragged(model);
  vkf_gen_engine_options eo = {.batch = n,
                               .prompt_len = 1,
                               .capacity = s->cap,
                               .dtype = options->dtype,
                               .cache_dtype = options->dtype,
                               .chunk = chunk,
                               .incremental = 1,
                               .ragged_rows = ragged ? most : 0,
                               .ragged_only = ragged,
                               .row_plans = !ragged,
                               .small_chunk = ragged ? 0 : s->small};
  if (!st) st = vkf_gen_engine_create(device, model, &eo, &s->engine);
  if (!st) s->ragged = vkf_gen_engine_ragged_rows(s->engine);
  if (!st && s->ragged) {
    s->r_ids = malloc((size_t)s->ragged * sizeof *s->r_ids);
    s->r_seqs = malloc((size_t)s->ragged * sizeof *s->r_seqs);
    s->r_pos = malloc((size_t)s->ragged * sizeof *s->r_pos);
    s->r_logit = malloc((size_t)n * sizeof *s->r_logit);
    s->r_first = malloc((size_t)n * sizeof *s->r_first);
    if (!s->r_ids || !s->r_seqs || !s->r_pos || !s->r_logit || !s->r_first)
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "slots");
  }
  if (st) {
    vkf_slots_destroy(s);
    return st;
  }
  *out = s;
  return VKF_OK;
}

void vkf_slots_destroy(vkf_slots *s) {
  if (!s) return;
  for (int64_t i = 0; s->slots && i < s->o.slots; i++) {
    slot *sl = &s->slots[i];
    job_free(sl->job);
    free(sl->cached);
    free(sl->history);
    free(sl->text);
    vkf_text_decoder_destroy(sl->dec);
  }
  while (s->head) {
    job *j = s->head;
    s->head = j->next;
    job_free(j);
  }
  vkf_gen_engine_destroy(s->engine);
  free(s->slots);
  free(s->ids);
  free(s->counts);
  free(s->starts);
  free(s->positions);
  free(s->tokens);
  free(s->scores);
  free(s->r_ids);
  free(s->r_seqs);
  free(s->r_pos);
  free(s->r_logit);
  free(s->r_first);
  free(s);
}

vkf_status vkf_slots_submit(vkf_slots *s, const vkf_slot_request *r) {
  if (!r->prompt_len || (int64_t)r->prompt_len + 1 > s->o.ctx)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "the prompt is %zu tokens; the context holds %lld (prompt and reply)",
                           r->prompt_len, (long long)s->o.ctx);
  for (size_t i = 0; i < r->prompt_len; i++)
    if (r->prompt[i] < 0 || r->prompt[i] >= s->vocab)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "prompt token %zu is %d, outside the vocabulary of %lld", i,
                             r->prompt[i], (long long)s->vocab);
  if (r->end_id_count > VKF_SLOTS_MAX_END_IDS || r->stop_count > VKF_SLOTS_MAX_STOPS ||
      r->max_new < 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "at most %d end ids and %d stop strings, max_new >= 0",
                           VKF_SLOTS_MAX_END_IDS, VKF_SLOTS_MAX_STOPS);
  job *j = calloc(1, sizeof *j);
  if (!j) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "request");
  j->r = *r;
  j->prompt = malloc(r->prompt_len * sizeof *j->prompt);
  vkf_status st = j->prompt ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "request");
  if (!st) memcpy(j->prompt, r->prompt, r->prompt_len * sizeof *j->prompt);
  j->r.prompt = j->prompt;
  if (r->end_id_count) /* end_ids may be NULL when there are none */
    memcpy(j->end_ids, r->end_ids, r->end_id_count * sizeof *j->end_ids);
  j->r.end_ids = j->end_ids;
  for (size_t i = 0; !st && i < r->stop_count; i++) {
    size_t len = r->stops[i] ? strlen(r->stops[i]) : 0;
    if (!len) st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "stop string %zu is empty", i);
    if (!st && !(j->stops[i] = strdup(r->stops[i])))
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "request");
    j->r.stop_count = i + 1; /* what job_free frees */
    if (len > j->max_stop) j->max_stop = len;
  }
  j->r.stops = NULL;
  if (st) {
    job_free(j);
    return st;
  }
  if (s->tail)
    s->tail->next = j;
  else
    s->head = j;
  s->tail = j;
  s->queued++;
  return VKF_OK;
}

static vkf_status append(slot *sl, const char *piece, size_t size) {
  if (sl->text_size + size + 1 > sl->text_cap) {
    size_t want = sl->text_cap * 2 + size + 256;
    char *t = realloc(sl->text, want);
    if (!t) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "reply text");
    sl->text = t;
    sl->text_cap = want;
  }
  memcpy(sl->text + sl->text_size, piece, size);
  sl->text_size += size;
  sl->text[sl->text_size] = 0;
  return VKF_OK;
}

/* Emits text[emitted, end) (end moved back to a character boundary); non-zero: cancelled. */
static int emit_to(slot *sl, size_t end) {
  while (end > sl->emitted && end < sl->text_size && (sl->text[end] & 0xC0) == 0x80) end--;
  if (end <= sl->emitted) return 0;
  int stop = sl->job->r.on_text(sl->job->r.user, sl->text + sl->emitted, end - sl->emitted);
  sl->emitted = end;
  return stop;
}

static void finish(vkf_slots *s, slot *sl, vkf_slot_finish how, vkf_status error) {
  job *j = sl->job;
  if (how != VKF_SLOT_ERROR && how != VKF_SLOT_CANCELLED) {
    const char *piece;
    size_t size;
    vkf_status fs = vkf_text_decoder_flush(sl->dec, &piece, &size);
    if (!fs && size && !append(sl, piece, size)) emit_to(sl, sl->text_size);
    vkf_status_free(fs);
  } else {
    const char *piece;
    size_t size;
    vkf_status_free(vkf_text_decoder_flush(sl->dec, &piece, &size)); /* reset for the next */
  }
  if (j->r.on_done) j->r.on_done(j->r.user, how, (int64_t)j->r.prompt_len, sl->generated, error);
  job_free(j);
  sl->job = NULL;
  (void)s;
}

/* A free slot for `j`: the one whose cached tokens share the longest prefix with its prompt. */
static void admit(vkf_slots *s, job *j, slot *best, int64_t keep) {
  best->job = j;
  if (keep >= (int64_t)j->r.prompt_len) keep = (int64_t)j->r.prompt_len - 1;
  best->fed = keep;
  best->cached_len = keep;
  best->len = (int64_t)j->r.prompt_len;
  best->generated = 0;
  best->text_size = best->emitted = 0;
  for (size_t i = 0; i < j->r.prompt_len; i++) best->history[i] = j->r.prompt[i];
  best->so = j->r.sampling;
  best->so.eos_ids = j->end_ids;
  best->so.eos_id_count = j->r.end_id_count;
  best->so.bad_word_count = 0;
  best->so.forced_bos = 0;
  best->so.forced_eos_id_count = 0;
  best->so.min_length = best->so.min_new_tokens = best->so.max_length = 0;
  best->so.prompt_len = j->r.prompt_len;
  vkf_rng_seed(&best->rng, j->r.seed);
  (void)s;
}

static void admit_queued(vkf_slots *s) {
  while (s->head) {
    job *j = s->head;
    slot *best = NULL;
    int64_t best_keep = -1;
    for (int64_t i = 0; i < s->o.slots; i++) {
      slot *sl = &s->slots[i];
      if (sl->job) continue;
      int64_t k = 0;
      while (k < sl->cached_len && k < (int64_t)j->r.prompt_len && sl->cached[k] == j->prompt[k])
        k++;
      if (k > best_keep) best = sl, best_keep = k;
    }
    if (!best) return;
    s->head = j->next;
    if (!s->head) s->tail = NULL;
    s->queued--;
    j->next = NULL;
    admit(s, j, best, best_keep);
  }
}

static void drop_cancelled(vkf_slots *s) {
  for (job **p = &s->head; *p;) {
    job *j = *p;
    if (j->r.is_cancelled && j->r.is_cancelled(j->r.user)) {
      *p = j->next;
      if (s->tail == j) {
        s->tail = NULL;
        for (job *t = s->head; t; t = t->next) s->tail = t;
      }
      s->queued--;
      if (j->r.on_done) j->r.on_done(j->r.user, VKF_SLOT_CANCELLED, (int64_t)j->r.prompt_len, 0, NULL);
      job_free(j);
    } else {
      p = &j->next;
    }
  }
  for (int64_t i = 0; i < s->o.slots; i++) {
    slot *sl = &s->slots[i];
    if (sl->job && sl->job->r.is_cancelled && sl->job->r.is_cancelled(sl->job->r.user)) {
      sl->cached_len = sl->fed < (int64_t)sl->job->r.prompt_len ? sl->fed : sl->len - 1;
      finish(s, sl, VKF_SLOT_CANCELLED, NULL);
    }
  }
}

static int is_end(const job *j, int64_t id) {
  for (size_t i = 0; i < j->r.end_id_count; i++)
    if (j->end_ids[i] == id) return 1;
  return 0;
}

static const char *find_bytes(const char *hay, size_t n, const char *needle, size_t m) {
  for (size_t i = 0; m && i + m <= n; i++)
    if (hay[i] == needle[0] && !memcmp(hay + i, needle, m)) return hay + i;
  return NULL;
}

/* The first stop string in text[from..], or -1. */
static int64_t find_stop(const slot *sl, size_t from) {
  const job *j = sl->job;
  int64_t best = -1;
  for (size_t i = 0; i < j->r.stop_count; i++) {
    const char *at =
        find_bytes(sl->text + from, sl->text_size - from, j->stops[i], strlen(j->stops[i]));
    if (at && (best < 0 || at - sl->text < best)) best = at - sl->text;
  }
  return best;
}

/* The log-probabilities of `next` and the `top` likeliest tokens under softmax(logits). */
static void logprobs_of(const float *logits, int64_t vocab, int64_t next, int top,
                        vkf_slot_logprob *out) {
  double max = -INFINITY;
  for (int64_t v = 0; v < vocab; v++)
    if (logits[v] > max) max = logits[v];
  double sum = 0;
  for (int64_t v = 0; v < vocab; v++) sum += exp((double)logits[v] - max);
  double lse = max + log(sum);
  out->token = (int32_t)next;
  out->logprob = (float)((double)logits[next] - lse);
  out->top_count = 0;
  for (int64_t v = 0; v < vocab; v++) { /* insertion into the sorted top list (ties: lower id) */
    int k = out->top_count;
    if (k == top && (k == 0 || logits[v] <= logits[out->top[k - 1]])) continue;
    if (k < top) out->top_count++;
    else k--;
    while (k > 0 && logits[out->top[k - 1]] < logits[v]) {
      out->top[k] = out->top[k - 1];
      k--;
    }
    out->top[k] = (int32_t)v;
  }
  for (int k = 0; k < out->top_count; k++)
    out->top_logprob[k] = (float)((double)logits[out->top[k]] - lse);
}

/* Samples the slot's next token from `logits` and handles it: end, text, stop strings, limits. */
static vkf_status advance(vkf_slots *s, slot *sl, const float *logits) {
  job *j = sl->job;
  memcpy(s->scores, logits, (size_t)s->vocab * sizeof *s->scores);
  int64_t next = 0;
  vkf_status st = vkf_sampling_check_logits(s->scores, 1, (size_t)s->vocab, sl->generated);
  if (!st)
    st = vkf_sampling_next(&sl->so, sl->history, (size_t)sl->len, (size_t)s->vocab, s->scores,
                           &sl->rng, &next);
  if (st) {
    finish(s, sl, VKF_SLOT_ERROR, st);
    vkf_status_free(st);
    return VKF_OK;
  }
  sl->generated++;
  if (j->r.logprobs && j->r.on_logprob && !is_end(j, next)) {
    vkf_slot_logprob lp;
    int top = j->r.top_logprobs < 0 ? 0
              : j->r.top_logprobs > VKF_SLOTS_MAX_TOP_LOGPROBS ? VKF_SLOTS_MAX_TOP_LOGPROBS
                                                               : j->r.top_logprobs;
    logprobs_of(logits, s->vocab, next, top, &lp);
    j->r.on_logprob(j->r.user, &lp);
  }
  if (is_end(j, next)) {
    finish(s, sl, VKF_SLOT_STOP, NULL);
    return VKF_OK;
  }
  const char *piece;
  size_t size;
  st = vkf_gen_decoder_push(s->tok, sl->dec, next, &piece, &size);
  size_t before = sl->text_size;
  if (!st) st = append(sl, piece, size);
  if (st) {
    finish(s, sl, VKF_SLOT_ERROR, st);
    vkf_status_free(st);
    return VKF_OK;
  }
  if (j->r.stop_count) {
    size_t from = before >= j->max_stop ? before - j->max_stop + 1 : 0;
    int64_t at = find_stop(sl, from);
    if (at >= 0) {
      sl->text_size = (size_t)at;
      int cancel = emit_to(sl, (size_t)at);
      vkf_text_decoder_destroy(sl->dec); /* drop what it holds past the stop */
      sl->dec = NULL;
      st = vkf_text_decoder_create(s->tok, 1, &sl->dec);
      finish(s, sl, cancel ? VKF_SLOT_CANCELLED : VKF_SLOT_STOP, NULL);
      return st;
    }
  }
  size_t hold = j->max_stop ? j->max_stop - 1 : 0;
  if (emit_to(sl, sl->text_size > hold ? sl->text_size - hold : 0)) {
    finish(s, sl, VKF_SLOT_CANCELLED, NULL);
    return VKF_OK;
  }
  if ((j->r.max_new && sl->generated >= j->r.max_new) || sl->len + 1 > s->o.ctx) {
    finish(s, sl, VKF_SLOT_LENGTH, NULL);
    return VKF_OK;
  }
  sl->history[sl->len] = next;
  sl->next = (int32_t)next;
  sl->len++;
  return VKF_OK;
}

/* Ends every request in a slot with the device error `st` and returns it. */
static vkf_status fail_all(vkf_slots *s, vkf_status st) {
  for (int64_t i = 0; i < s->o.slots; i++)
    if (s->slots[i].job) {
      s->slots[i].cached_len = 0;
      finish(s, &s->slots[i], VKF_SLOT_ERROR, st);
    }
  return st;
}

/* One ragged run: a row per decoding slot's token, then prompt tokens. */
static vkf_status step_ragged(vkf_slots *s, int *out_busy) {
  int64_t n = s->o.slots, rows = 0, decoding = 0, pending = 0, logits_n = 0;
  for (int64_t i = 0; i < n; i++) {
    slot *sl = &s->slots[i];
    sl->count = 0;
    s->r_first[i] = -1;
    if (!sl->job) continue;
    if (sl->fed < (int64_t)sl->job->r.prompt_len) {
      pending += (int64_t)sl->job->r.prompt_len - sl->fed;
      continue;
    }
    s->r_ids[rows] = sl->next; /* at position len - 1 */
    s->r_seqs[rows] = i;
    s->r_pos[rows] = sl->len - 1;
    s->r_first[i] = logits_n;
    s->r_logit[logits_n++] = rows;
    s->starts[i] = sl->len - 1;
    sl->count = 1;
    rows++;
    decoding++;
  }
  *out_busy = rows || pending;
  if (!*out_busy) return VKF_OK;
  /* Prompt tokens: a whole chunk when nothing decodes, else a small piece, so the decoding slots
   * wait one small step at most. The step takes the smallest plan (1, 2, 3, 4, 6, 8, 12 ...)
   * holding the decoding rows and that budget, and tops its padding up with more prompt tokens.
   * A plan's padding rows cost as much as its tokens (on a CPU device a step's time grows with
   * its rows), so where that plan would be over a quarter padding and a smaller one still takes
   * some prompt, the smaller one runs and the rest waits for the next step. Never a plan of the
   * decoding rows alone while a prompt waits: 15 decoding slots in a plan of 16 would take a
   * waiting prompt one token a step. */
  int64_t budget = decoding ? (s->small ? s->small : s->chunk) : s->chunk;
  if (budget > s->ragged - rows) budget = s->ragged - rows;
  if (budget > pending) budget = pending;
  int64_t want = rows + budget, plan = vkf_gen_engine_ragged_fit(s->engine, want, 1),
          below = vkf_gen_engine_ragged_fit(s->engine, want, 0);
  if (4 * (plan - want) > plan && below > rows) plan = below;
  budget = plan - rows < pending ? plan - rows : pending;
  for (int64_t i = 0; i < n && budget > 0; i++) {
    slot *sl = &s->slots[i];
    if (!sl->job || sl->fed >= (int64_t)sl->job->r.prompt_len) continue;
    int64_t left = (int64_t)sl->job->r.prompt_len - sl->fed, take = left < budget ? left : budget;
    s->starts[i] = sl->fed;
    for (int64_t t = 0; t < take; t++) {
      s->r_ids[rows + t] = sl->job->prompt[sl->fed + t];
      s->r_seqs[rows + t] = i;
      s->r_pos[rows + t] = sl->fed + t;
    }
    rows += take;
    budget -= take;
    sl->count = take;
    if (take == left) { /* the prompt's last token: its logits give the first new token */
      s->r_first[i] = logits_n;
      s->r_logit[logits_n++] = rows - 1;
    }
  }
  const float *logits = NULL;
  vkf_status st = vkf_gen_engine_ragged(s->engine, rows, s->r_ids, s->r_seqs, s->r_pos, logits_n,
                                        s->r_logit, &logits);
  if (st) return fail_all(s, st);
  s->tokens_total += rows;
  s->rows_total += vkf_gen_engine_rows_run(s->engine);
  for (int64_t i = 0; i < n; i++) {
    slot *sl = &s->slots[i];
    if (!sl->job || !sl->count) continue;
    const int32_t *fed = sl->fed < (int64_t)sl->job->r.prompt_len ? sl->job->prompt + sl->fed
                                                                  : &sl->next;
    memcpy(sl->cached + s->starts[i], fed, (size_t)sl->count * sizeof *sl->cached);
    sl->cached_len = s->starts[i] + sl->count;
    if (sl->fed < (int64_t)sl->job->r.prompt_len) sl->fed += sl->count;
    if (s->r_first[i] >= 0)
      VKF_RETURN_IF_ERROR(advance(s, sl, logits + s->r_first[i] * s->vocab));
  }
  return VKF_OK;
}

vkf_status vkf_slots_step(vkf_slots *s, int *out_busy) {
  drop_cancelled(s);
  admit_queued(s);
  if (s->ragged) return step_ragged(s, out_busy);
  int64_t n = s->o.slots, c = s->chunk;
  int any = 0, prefill = 0;
  /* The full plan computes `chunk` rows for every slot, prompt or not: worth it only when the
   * prompts fill half of it. Else the prompts go `small` tokens a step through the small plan,
   * which also runs only the slots up to the last busy one: a short prompt beside a few decoding
   * slots costs a few rows, not slots x chunk. */
  int64_t pending = 0;
  for (int64_t i = 0; i < n; i++) {
    const slot *sl = &s->slots[i];
    if (sl->job && sl->fed < (int64_t)sl->job->r.prompt_len) {
      int64_t left = (int64_t)sl->job->r.prompt_len - sl->fed;
      pending += left < c ? left : c;
    }
  }
  int64_t piece = s->small && 2 * pending < n * c ? s->small : c;
  for (int64_t i = 0; i < n; i++) {
    slot *sl = &s->slots[i];
    s->counts[i] = 0;
    if (!sl->job) continue;
    any = 1;
    if (sl->fed < (int64_t)sl->job->r.prompt_len) {
      int64_t left = (int64_t)sl->job->r.prompt_len - sl->fed;
      s->counts[i] = left < piece ? left : piece;
      s->starts[i] = sl->fed;
      memcpy(s->ids + i * c, sl->job->prompt + sl->fed, (size_t)s->counts[i] * sizeof *s->ids);
      prefill = 1;
    } else {
      s->counts[i] = 1;
      s->starts[i] = sl->len - 1;
      s->ids[i * c] = sl->next;
    }
    sl->count = s->counts[i];
  }
  *out_busy = any;
  if (!any) return VKF_OK;
  const float *logits = NULL;
  vkf_status st;
  if (prefill) {
    st = vkf_gen_engine_extend_rows(s->engine, s->ids, s->counts, s->starts, &logits);
  } else {
    int64_t rows = 0; /* through the last busy slot: the engine skips the rows past it */
    for (int64_t i = 0; i < n; i++) {
      s->tokens[i] = s->counts[i] ? s->ids[i * c] : 0;
      s->positions[i] = s->counts[i] ? s->starts[i] : s->cap - 1; /* idle: the reserved tail */
      if (s->counts[i]) rows = i + 1;
    }
    st = vkf_gen_engine_step_rows(s->engine, rows, s->tokens, s->positions, &logits);
  }
  if (st) return fail_all(s, st);
  int64_t tokens = 0;
  for (int64_t i = 0; i < n; i++) tokens += s->counts[i];
  s->tokens_total += tokens;
  s->rows_total += vkf_gen_engine_rows_run(s->engine);
  for (int64_t i = 0; i < n; i++) {
    slot *sl = &s->slots[i];
    if (!sl->job || !sl->count) continue;
    memcpy(sl->cached + s->starts[i], s->ids + i * c, (size_t)sl->count * sizeof *sl->cached);
    sl->cached_len = s->starts[i] + sl->count;
    if (sl->fed < (int64_t)sl->job->r.prompt_len) {
      sl->fed += sl->count;
      if (sl->fed < (int64_t)sl->job->r.prompt_len) continue; /* more prompt to go */
    }
    VKF_RETURN_IF_ERROR(advance(s, sl, logits + i * s->vocab));
  }
  return VKF_OK;
}

void vkf_slots_rows(const vkf_slots *s, int64_t *out_tokens, int64_t *out_rows) {
  *out_tokens = s->tokens_total;
  *out_rows = s->rows_total;
}

int64_t vkf_slots_queued(const vkf_slots *s) {
  return s->queued;
}

int64_t vkf_slots_busy(const vkf_slots *s) {
  int64_t b = 0;
  for (int64_t i = 0; i < s->o.slots; i++) b += s->slots[i].job != NULL;
  return b;
}

int64_t vkf_slots_context(const vkf_slots *s) {
  return s->o.ctx;
}

uint64_t vkf_slots_device_bytes(const vkf_slots *s) {
  vkf_gen_engine_memory m = vkf_gen_engine_memory_of(s->engine);
  return m.prefill_plan + m.decode_plan + m.cache;
}
