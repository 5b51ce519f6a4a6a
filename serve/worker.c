/* A worker: one device, a replica of every model on it, and the thread that owns them. It takes
 * the jobs handed to it, tokenizes them, feeds the decoders' slot schedulers (or embeds at once)
 * and steps the schedulers while any has work; results go back into the jobs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/arch/bert.h"
#include "models/arch/decoder.h"
#include "runtime/chat_session.h"
#include "runtime/text_embed.h"
#include "serve/serve_internal.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The job is complete: its waiters wake and the worker's reference goes. */
static void complete(serve_job *j) {
  pthread_mutex_lock(&j->mu);
  j->finished = 1;
  pthread_cond_broadcast(&j->cv);
  pthread_mutex_unlock(&j->mu);
  vkf_serve_job_release(j);
}

static int on_text(void *user, const char *text, size_t size) {
  serve_choice *c = user;
  serve_job *j = c->job;
  pthread_mutex_lock(&j->mu);
  if (c->size + size + 1 > c->cap) {
    size_t want = c->cap * 2 + size + 256;
    char *t = realloc(c->text, want);
    if (t) c->text = t, c->cap = want;
  }
  if (c->size + size + 1 <= c->cap) {
    memcpy(c->text + c->size, text, size);
    c->size += size;
    c->text[c->size] = 0;
  }
  pthread_cond_broadcast(&j->cv);
  int cancel = atomic_load(&j->cancelled);
  pthread_mutex_unlock(&j->mu);
  return cancel;
}

/* A token's text as the tokenizer decodes it alone (special tokens included). */
static char *token_text(const vkf_text_tokenizer *tok, int32_t id) {
  char *text = NULL;
  vkf_status st = vkf_text_tokenizer_decode(tok, &id, 1, 0, &text);
  vkf_status_free(st);
  return text ? text : strdup("");
}

static void on_logprob(void *user, const vkf_slot_logprob *lp) {
  serve_choice *c = user;
  serve_logprob e = {.token = token_text(c->tok, lp->token), .logprob = lp->logprob,
                     .top_count = lp->top_count};
  for (int k = 0; k < lp->top_count; k++) {
    e.top[k] = token_text(c->tok, lp->top[k]);
    e.top_logprob[k] = lp->top_logprob[k];
  }
  serve_job *j = c->job;
  pthread_mutex_lock(&j->mu);
  if (c->lp_count == c->lp_cap) {
    size_t cap = c->lp_cap ? 2 * c->lp_cap : 32;
    serve_logprob *grown = realloc(c->lp, cap * sizeof *grown);
    if (grown) c->lp = grown, c->lp_cap = cap;
  }
  int kept = c->lp_count < c->lp_cap;
  if (kept) c->lp[c->lp_count++] = e;
  pthread_mutex_unlock(&j->mu);
  if (!kept) { /* out of memory: the entry is dropped, never half-written */
    free(e.token);
    for (int k = 0; k < e.top_count; k++) free(e.top[k]);
  }
}

static int is_cancelled(void *user) {
  serve_choice *c = user;
  return atomic_load(&c->job->cancelled);
}

static void on_done(void *user, vkf_slot_finish finish, int64_t prompt_tokens,
                    int64_t completion_tokens, vkf_status error) {
  serve_choice *c = user;
  serve_job *j = c->job;
  struct vkf_server *s = j->srv;
  atomic_fetch_add(&s->metrics.completion_tokens, completion_tokens);
  pthread_mutex_lock(&j->mu);
  c->done = 1;
  c->finish = finish == VKF_SLOT_LENGTH ? "length" : "stop";
  c->tokens = completion_tokens;
  j->prompt_tokens = prompt_tokens;
  if (finish == VKF_SLOT_ERROR)
    vkf_serve_job_fail(j, 500, "server_error", NULL, NULL, "%s", vkf_status_message(error));
  if (finish == VKF_SLOT_CANCELLED && atomic_load(&s->stopping))
    vkf_serve_job_fail(j, 503, "server_error", NULL, NULL, "the server stopped before the reply "
                       "was complete");
  int all = ++j->done_count == j->n;
  pthread_cond_broadcast(&j->cv);
  pthread_mutex_unlock(&j->mu);
  if (all) {
    atomic_fetch_add(&s->metrics.prompt_tokens, prompt_tokens);
    complete(j);
  }
}

static void fail_job(serve_job *j, int status, const char *param, const char *code,
                     const char *message) {
  pthread_mutex_lock(&j->mu);
  vkf_serve_job_fail(j, status, status >= 500 ? "server_error" : "invalid_request_error", param,
                     code, "%s", message);
  pthread_mutex_unlock(&j->mu);
  complete(j);
}

/* Embeds the next batch of the job's inputs; 1 when the job is complete (answered). A job's
 * inputs go a batch per turn of the worker's loop, between the decoders' steps, so a long list
 * never holds the streams back by more than one batch. */
static int embed_batch(serve_worker *w, serve_model *m, serve_job *j) {
  if (atomic_load(&j->cancelled)) {
    int stopping = atomic_load(&w->srv->stopping);
    fail_job(j, stopping ? 503 : 499, NULL, NULL,
             stopping ? "the server stopped before the reply was complete" : "the client went away");
    return 1;
  }
  size_t from = j->embedded, n = j->input_count - from;
  if (n > SERVE_EMBED_BATCH) n = SERVE_EMBED_BATCH;
  float *e = NULL;
  size_t *tokens = NULL;
  vkf_model_embed facet;
  vkf_status st = vkf_model_embed_facet(m->model, &facet);
  if (!st)
    st = vkf_rt_embed(w->dev.device, facet.encoder, m->wordpiece,
                      (const char *const *)j->inputs + from, (int64_t)n,
                      w->srv->o.fp16 ? VKF_F16 : VKF_F32, "vkf serve", &e, &tokens);
  size_t dims = st ? 0 : (size_t)facet.dims;
  if (!st && !j->embeddings && !(j->embeddings = malloc(j->input_count * dims * sizeof *e)))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "embeddings");
  if (st) {
    fail_job(j, 400, "input", NULL, vkf_status_message(st));
    vkf_status_free(st);
    free(e);
    free(tokens);
    return 1;
  }
  pthread_mutex_lock(&j->mu);
  memcpy(j->embeddings + from * dims, e, n * dims * sizeof *e);
  j->dims = dims;
  for (size_t i = 0; i < n; i++) j->prompt_tokens += (int64_t)tokens[i];
  pthread_mutex_unlock(&j->mu);
  free(e);
  free(tokens);
  atomic_fetch_add(&w->srv->metrics.embedded_inputs, (long long)n);
  j->embedded = from + n;
  if (j->embedded < j->input_count) return 0;
  complete(j);
  return 1;
}

/* The job's prompt ids: the rendered conversation (no special tokens added: the template writes
 * them), or the completion prompt with them, as `vkf generate` tokenizes it. */
static vkf_status tokenize(serve_model *m, serve_job *j, int32_t **ids, size_t *count) {
  if (j->kind == SERVE_COMPLETION)
    return vkf_text_tokenizer_encode(m->tok, j->prompt, 1, ids, count);
  char *text = NULL;
  VKF_RETURN_IF_ERROR(vkf_chat_prompt_render(m->chat, j->messages, strlen(j->messages), &text));
  vkf_status st = vkf_text_tokenizer_encode(m->tok, text, 0, ids, count);
  free(text);
  return st;
}

static void generate(serve_worker *w, serve_model *m, serve_job *j) {
  const char *name = w->srv->names[j->model];
  char msg[512];
  if (j->kind == SERVE_CHAT && !m->chat) {
    snprintf(msg, sizeof msg, "model '%s' has no chat template; use /v1/completions", name);
    fail_job(j, 400, "model", NULL, msg);
    return;
  }
  int32_t *ids = NULL;
  size_t count = 0;
  vkf_status st = tokenize(m, j, &ids, &count);
  if (st) {
    fail_job(j, 400, j->kind == SERVE_CHAT ? "messages" : "prompt", NULL, vkf_status_message(st));
    vkf_status_free(st);
    free(ids);
    return;
  }
  int64_t ctx = vkf_slots_context(m->slots);
  if (!count) { /* nothing to continue from: not a context overflow */
    free(ids);
    fail_job(j, 400, j->kind == SERVE_CHAT ? "messages" : "prompt", NULL,
             j->kind == SERVE_CHAT ? "the conversation renders to no tokens"
                                   : "'prompt' is empty (it has no tokens); give some text");
    return;
  }
  if ( (int64_t)count + 1 > ctx || (j->max_tokens && (int64_t)count + j->max_tokens > ctx)) {
    snprintf(msg, sizeof msg,
             "This model's maximum context length is %lld tokens. However, you requested %lld "
             "tokens (%zu in the %s, %lld in the completion).",
             (long long)ctx, (long long)count + (j->max_tokens ? j->max_tokens : 1), count,
             j->kind == SERVE_CHAT ? "messages" : "prompt",
             (long long)(j->max_tokens ? j->max_tokens : 1));
    free(ids);
    const char *input = j->kind == SERVE_CHAT ? "messages" : "prompt";
    fail_job(j, 400, (int64_t)count + 1 > ctx ? input : "max_tokens", "context_length_exceeded",
             msg);
    return;
  }
  vkf_slot_request r = {.prompt = ids, .prompt_len = count, .max_new = j->max_tokens};
  vkf_generation_config_sampling(&m->gc, &r.sampling);
  if (j->has_temperature) {
    r.sampling.do_sample = j->temperature > 0;
    if (j->temperature > 0) r.sampling.temperature = j->temperature;
  } else if (j->has_top_p) {
    r.sampling.do_sample = 1;
  }
  if (j->has_top_p) r.sampling.top_p = j->top_p;
  if (j->kind == SERVE_CHAT) {
    r.end_ids = m->chat_end;
    r.end_id_count = m->chat_end_count;
  } else {
    r.end_ids = m->gc.eos_token_ids;
    r.end_id_count = m->gc.eos_token_id_count;
  }
  r.stops = (const char *const *)j->stops;
  r.stop_count = j->stop_count;
  r.on_text = on_text;
  r.on_done = on_done;
  r.is_cancelled = is_cancelled;
  r.logprobs = j->logprobs;
  r.top_logprobs = j->top_logprobs;
  r.on_logprob = on_logprob;
  for (int i = 0; i < j->n; i++) j->ch[i].tok = m->tok;
  uint64_t seed = j->has_seed ? j->seed : (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)j << 7);
  int submitted = 0;
  for (int i = 0; i < j->n && !st; i++) {
    r.seed = seed + (uint64_t)i;
    r.user = &j->ch[i];
    st = vkf_slots_submit(m->slots, &r);
    if (!st) submitted++;
  }
  free(ids);
  if (st) {
    /* nothing is queued when the first fails; later ones cannot fail once the first passed */
    if (!submitted) fail_job(j, 400, NULL, NULL, vkf_status_message(st));
    vkf_status_free(st);
    return;
  }
  pthread_mutex_lock(&j->mu);
  j->accepted = 1;
  pthread_cond_broadcast(&j->cv);
  pthread_mutex_unlock(&j->mu);
}

static int busy(const serve_worker *w) {
  for (int i = 0; i < w->srv->model_count; i++) {
    const serve_model *m = &w->models[i];
    if (m->slots && (vkf_slots_busy(m->slots) || vkf_slots_queued(m->slots))) return 1;
  }
  return 0;
}

/* An idle worker woken by a request lets a burst gather before its first step: it waits while
 * requests keep arriving less than GATHER_QUIET_MS apart, GATHER_MAX_MS at most. Requests sent
 * together (clients started at once, a fan-out) then prefill in one step and decode together from
 * the next, instead of the first running alone while the rest arrive and join a few prompts a
 * step. A request alone waits GATHER_QUIET_MS, a few percent of its time to first token. From
 * idle only: a busy worker admits what arrived at each step anyway. Called with w->mu held. */
enum { GATHER_QUIET_MS = 4, GATHER_MAX_MS = 25 };

static void gather(serve_worker *w) {
  double until = now_s() + GATHER_MAX_MS * 1e-3;
  for (int64_t seen = w->queued; !w->stop;) {
    double t = now_s() + GATHER_QUIET_MS * 1e-3;
    if (t > until) t = until;
    struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - (double)(time_t)t) * 1e9)};
    while (!w->stop && w->queued == seen && now_s() < t)
      if (pthread_cond_timedwait(&w->cv, &w->mu, &ts)) break;
    if (w->queued == seen || now_s() >= until) return;
    seen = w->queued;
  }
}

static void *worker_main(void *arg) {
  serve_worker *w = arg;
  struct vkf_server *s = w->srv;
  long long last_running = 0, last_queued = 0;
  for (;;) {
    pthread_mutex_lock(&w->mu);
    int idle = !w->head && !w->embed_head && !busy(w);
    while (!w->stop && !w->head && !w->embed_head && !busy(w)) pthread_cond_wait(&w->cv, &w->mu);
    if (idle && w->head) gather(w);
    if (w->stop && !w->head && !w->embed_head && !busy(w)) {
      pthread_mutex_unlock(&w->mu);
      break;
    }
    serve_job *jobs = w->head;
    w->head = w->tail = NULL;
    atomic_fetch_add(&w->load, w->queued); /* counted until the step below recounts */
    w->queued = 0;
    pthread_mutex_unlock(&w->mu);
    while (jobs) {
      serve_job *j = jobs;
      jobs = j->next;
      j->next = NULL;
      serve_model *m = &w->models[j->model];
      if (atomic_load(&j->cancelled))
        fail_job(j, atomic_load(&s->stopping) ? 503 : 499, NULL, NULL,
                 atomic_load(&s->stopping) ? "the server stopped before the reply was complete"
                                           : "the client went away");
      else if (j->kind == SERVE_EMBEDDING && !m->embed)
        fail_job(j, 400, "model", NULL, "this model does not make embeddings; use an encoder such as all-MiniLM-L6-v2");
      else if (j->kind != SERVE_EMBEDDING && m->embed)
        fail_job(j, 400, "model", NULL, "this model makes embeddings only; use /v1/embeddings");
      else if (m->embed) { /* batches go one a turn below */
        if (w->embed_tail)
          w->embed_tail->next = j;
        else
          w->embed_head = j;
        w->embed_tail = j;
      } else
        generate(w, m, j);
    }
    if (w->embed_head) { /* one batch of the oldest embeddings request, then the decoders' step */
      serve_job *j = w->embed_head, *next = j->next; /* a complete job is released: read first */
      if (embed_batch(w, &w->models[j->model], j))
        if (!(w->embed_head = next)) w->embed_tail = NULL;
    }
    long long running = 0, queued = 0, step_rows = 0;
    for (int i = 0; i < s->model_count; i++) {
      serve_model *m = &w->models[i];
      if (!m->slots || !(vkf_slots_busy(m->slots) || vkf_slots_queued(m->slots))) continue;
      double t0 = now_s();
      int any = 0;
      /* the sequences this step runs: those in slots and those joining now, counted before it
       * since the ones that finish in it leave during it */
      int64_t width = s->o.parallel > 0 ? s->o.parallel : 4;
      int64_t rows = vkf_slots_busy(m->slots) + vkf_slots_queued(m->slots);
      step_rows += rows < width ? rows : width;
      int64_t tok0, rows0, tok1, rows1;
      vkf_slots_rows(m->slots, &tok0, &rows0);
      vkf_status st = vkf_slots_step(m->slots, &any);
      vkf_slots_rows(m->slots, &tok1, &rows1);
      atomic_fetch_add(&s->metrics.step_tokens, (long long)(tok1 - tok0));
      atomic_fetch_add(&s->metrics.step_plan_rows, (long long)(rows1 - rows0));
      if (st) {
        vkf_serve_log(s, "vkf serve: device step of %s failed: %s", s->names[i], vkf_status_message(st));
        vkf_status_free(st);
      }
      atomic_fetch_add(&s->metrics.steps, 1);
      atomic_fetch_add(&s->metrics.step_ns, (long long)((now_s() - t0) * 1e9));
      running += vkf_slots_busy(m->slots);
      queued += vkf_slots_queued(m->slots);
    }
    atomic_fetch_add(&s->metrics.step_rows, step_rows);
    atomic_fetch_add(&s->metrics.running, running - last_running);
    atomic_fetch_add(&s->metrics.queued, queued - last_queued);
    last_running = running;
    last_queued = queued;
    atomic_store(&w->load, running + queued);
  }
  atomic_fetch_add(&s->metrics.running, -last_running);
  atomic_fetch_add(&s->metrics.queued, -last_queued);
  return NULL;
}

int vkf_serve_submit(struct vkf_server *s, serve_job *job) {
  serve_worker *best = NULL;
  long long best_load = 0;
  for (int i = 0; i < s->worker_count; i++) {
    pthread_mutex_lock(&s->workers[i].mu);
    long long l = atomic_load(&s->workers[i].load) + s->workers[i].queued;
    pthread_mutex_unlock(&s->workers[i].mu);
    if (!best || l < best_load) best = &s->workers[i], best_load = l;
  }
  int64_t max_queue = s->o.max_queue > 0 ? s->o.max_queue : 64;
  int64_t slots = s->o.parallel > 0 ? s->o.parallel : 4;
  pthread_mutex_lock(&best->mu);
  best_load = atomic_load(&best->load) + best->queued;
  int full = best_load >= max_queue + slots * s->model_count;
  if (!full) {
    pthread_mutex_lock(&job->mu);
    job->refs++; /* the worker's, released by complete() */
    pthread_mutex_unlock(&job->mu);
    if (best->tail)
      best->tail->next = job;
    else
      best->head = job;
    best->tail = job;
    best->queued++;
    pthread_cond_signal(&best->cv);
  }
  pthread_mutex_unlock(&best->mu);
  return full ? 429 : 0;
}

/* How many positions a sequence gets, and the prompt chunk, for a model of `max_pos`. */
static void ctx_of(const vkf_serve_options *o, int64_t max_pos, int64_t *ctx, int64_t *chunk) {
  *chunk = max_pos / 4 < 128 ? max_pos / 4 : 128;
  if (*chunk < 1) *chunk = 1;
  int64_t most = max_pos - *chunk, want = o->ctx > 0 ? o->ctx : 2048;
  *ctx = want < most ? want : most; /* a --ctx past what a model has gets what it has */
}

static vkf_status load_model(serve_worker *w, int i, serve_model *m) {
  struct vkf_server *s = w->srv;
  const char *path = s->paths[i];
  VKF_RETURN_IF_ERROR(vkf_model_open(path, &m->model));
  if (s->o.quantize) VKF_RETURN_IF_ERROR(vkf_model_quantize(m->model, s->o.quantize));
  /* What the model can do decides what it serves: embeddings through sentence-transformers'
   * pipeline, or completions (and chat) on an engine whose rows join and leave between steps. */
  vkf_model_generate gf;
  vkf_model_embed ef;
  vkf_status es = vkf_model_embed_facet(m->model, &ef);
  int pipeline = es == VKF_OK && ef.encoder;
  vkf_status_free(es);
  if (pipeline) {
    m->embed = 1;
    return vkf_wordpiece_load(path, &m->wordpiece);
  }
  vkf_status gs = vkf_model_generate_facet(m->model, &gf);
  int served = gs == VKF_OK && gf.continuous;
  vkf_status_free(gs);
  if (!served)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: %s; vkf serve runs decoder language models (completions, chat) "
                           "and BERT-family encoders (embeddings)",
                           path, vkf_model_architecture(m->model));
  vkf_decoder_model *dec = gf.engine_model;
  int64_t vocab = gf.vocab;
  VKF_RETURN_IF_ERROR(vkf_text_tokenizer_load(path, &m->tok));
  VKF_RETURN_IF_ERROR(vkf_generation_config_load(path, vocab, &m->gc));
  vkf_status cs = vkf_chat_prompt_load(path, &m->chat);
  if (cs) { /* no template: completions only */
    vkf_serve_log(s, "vkf serve: %s: no chat template (%s); /v1/chat/completions refuses it",
                  s->names[i], vkf_status_message(cs));
    vkf_status_free(cs);
    m->chat = NULL;
  }
  m->chat_end_count = vkf_chat_end_ids(path, m->tok, &m->gc, vocab, m->chat_end, SERVE_MAX_END_IDS);
  int64_t ctx, chunk;
  ctx_of(&s->o, gf.max_ctx, &ctx, &chunk);
  vkf_slots_options so = {.slots = s->o.parallel > 0 ? s->o.parallel : 4,
                          .ctx = ctx,
                          .chunk = chunk,
                          .dtype = s->o.fp16 ? VKF_F16 : VKF_F32};
  VKF_RETURN_IF_ERROR(vkf_slots_create(w->dev.device, dec, m->tok, &so, &m->slots));
  atomic_fetch_add(&s->metrics.device_bytes, (long long)vkf_slots_device_bytes(m->slots));
  /* --quantize: the formats the slots' builds made (a q4_k weight's rows that are not whole
   * 256-blocks are q5_0), so the log says what runs, not only what was asked */
  char made[128] = "";
  if (s->o.quantize) {
    uint32_t n[VKF_DTYPE_COUNT], kept;
    vkf_model_quantized(m->model, n, &kept);
    size_t used = (size_t)snprintf(made, sizeof made, "; --quantize %s made", s->o.quantize);
    int none = 1;
    for (int d = 0; d < VKF_DTYPE_COUNT && used < sizeof made; d++)
      if (n[d])
        used += (size_t)snprintf(made + used, sizeof made - used, "%s %s %u", none ? "" : ",",
                                 vkf_dtype_name((vkf_dtype)d), n[d]),
            none = 0;
    if (kept && used < sizeof made)
      snprintf(made + used, sizeof made - used, "%s float %u", none ? "" : ",", kept);
    else if (none && used < sizeof made)
      snprintf(made + used, sizeof made - used, " nothing");
  }
  /* no "vkf serve:" prefix: an information line, which --quiet leaves out */
  vkf_serve_log(s, "%s on device %d: %lld slots of %lld positions%s", s->names[i], w->index,
                (long long)so.slots, (long long)ctx, made);
  return VKF_OK;
}

static void free_models(serve_worker *w) {
  for (int i = 0; w->models && i < w->srv->model_count; i++) {
    serve_model *m = &w->models[i];
    vkf_slots_destroy(m->slots);
    vkf_chat_prompt_destroy(m->chat);
    vkf_text_tokenizer_destroy(m->tok);
    vkf_wordpiece_destroy(m->wordpiece);
    vkf_model_close(m->model);
  }
  free(w->models);
  w->models = NULL;
}

vkf_status vkf_serve_worker_start(struct vkf_server *s, serve_worker *w) {
  pthread_mutex_init(&w->mu, NULL);
  pthread_condattr_t ca; /* a monotonic clock for gather()'s timed waits */
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cv, &ca);
  pthread_condattr_destroy(&ca);
  char selector[32];
  const char *sel = s->o.device;
  if (sel && !strcmp(sel, "all")) {
    snprintf(selector, sizeof selector, "%d", w->index);
    sel = selector;
  }
  VKF_RETURN_IF_ERROR(vkf_rt_device_open(sel, 0, &w->dev));
  w->models = calloc((size_t)s->model_count, sizeof *w->models);
  vkf_status st = w->models ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "models");
  for (int i = 0; !st && i < s->model_count; i++) st = load_model(w, i, &w->models[i]);
  if (!st && pthread_create(&w->thread, NULL, worker_main, w))
    st = vkf_status_make(VKF_STATUS_INTERNAL, "cannot start a worker thread");
  if (st) {
    free_models(w);
    vkf_rt_device_close(&w->dev);
    return st;
  }
  w->started = 1;
  return VKF_OK;
}

uint32_t vkf_serve_worker_stop(serve_worker *w) {
  if (!w->started) return 0;
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  free_models(w);
  uint32_t messages = vkf_rt_device_close(&w->dev);
  w->started = 0;
  return messages;
}
