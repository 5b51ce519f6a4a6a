/* runtime/serve_slots on tiny decoders (llama_tiny: the fused rotary + cache write; gpt2_tiny:
 * learned positions and kv_write): greedy sequences run together in ragged steps, decoding rows
 * beside other slots' prompt chunks, give the tokens each gives alone on a plain incremental
 * engine (extend the prompt, then one step a token), and a step computes the rows its tokens take
 * (the smallest plan of 1, 2, 3, 4, 6, 8, 12 ... rows holding them), not a chunk for every slot,
 * and takes a waiting prompt whole beside the decoding rows where it fits the budget. mistral_tiny
 * (a sliding window, which the ragged plans do not take) runs the rectangular plans and must give
 * the same tokens. llama_tiny's ragged plans rotate and write the cache in one dispatch a layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/lower/lower.h"
#include "host/instance.h"
#include "host/runner.h"
#include "models/registry/model.h"
#include "runtime/generate_engine.h"
#include "runtime/serve_slots.h"
#include "tests/test_util.h"

enum { NEW = 8, SLOTS = 4, CTX = 40, CHUNK = 16, MAX_PROMPT = 32 };

typedef struct rec {
  int32_t ids[64];
  int count, done;
} rec;

static void on_logprob(void *user, const vkf_slot_logprob *lp) {
  rec *r = user;
  if (r->count < 64) r->ids[r->count++] = lp->token;
}
static int on_text(void *user, const char *t, size_t n) {
  (void)user, (void)t, (void)n;
  return 0;
}
static void on_done(void *user, vkf_slot_finish f, int64_t p, int64_t c, vkf_status e) {
  rec *r = user;
  (void)p, (void)c;
  CHECK_MSG(f == VKF_SLOT_LENGTH, "finished %d: %s", (int)f, e ? vkf_status_message(e) : "");
  r->done = 1;
}

static int64_t argmax(const float *x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; i++)
    if (x[i] > x[best]) best = i;
  return best;
}

/* The dispatches of `shader` in a runner's plan. */
static int dispatches_of(const vkf_runner *r, const char *shader) {
  const vkf_plan *plan = vkf_runner_lowered(r)->plan;
  int n = 0;
  for (uint32_t i = 0; i < vkf_plan_dispatch_count(plan); i++)
    n += strcmp(vkf_plan_dispatch_get(plan, i)->shader, shader) == 0;
  return n;
}

/* A rotary model's ragged plans write the cache with the fused rotary + cache write, as decode
 * steps do (graph/lower/lower_rotary_kv.c through the rows' swap views): no separate rotary or
 * kv_write dispatch. A ragged-only engine (what serve's slots create) has no rectangular plans:
 * a step on it is refused, not run on a plan that is not there. */
static void check_ragged_fusion(vkf_device *dev, vkf_decoder_model *m, const char *dir) {
  vkf_gen_engine_options o = {.batch = SLOTS, .prompt_len = 1, .capacity = CTX + CHUNK,
                              .dtype = VKF_F32, .cache_dtype = VKF_F32, .chunk = CHUNK,
                              .incremental = 1, .ragged_rows = CHUNK, .ragged_only = 1};
  vkf_gen_engine *e = NULL;
  vkf_status s = vkf_gen_engine_create(dev, m, &o, &e);
  CHECK_MSG(!s, "engine: %s", vkf_status_message(s));
  vkf_status_free(s);
  if (s) return;
  CHECK(vkf_gen_engine_ragged_plans(e) > 0);
  /* the plans' rows: 1, 2, 3, 4, 6, 8, 12 and 16 (the chunk) */
  static const int64_t fit[][3] = {{1, 1, 1},  {3, 3, 3},    {5, 4, 6},    {7, 6, 8},
                                   {9, 8, 12}, {13, 12, 16}, {16, 16, 16}, {17, 16, 0}};
  for (size_t i = 0; i < sizeof fit / sizeof fit[0]; i++) {
    int64_t lo = vkf_gen_engine_ragged_fit(e, fit[i][0], 0),
            hi = vkf_gen_engine_ragged_fit(e, fit[i][0], 1);
    CHECK_MSG(lo == fit[i][1] && hi == fit[i][2],
              "%lld rows: plans of %lld and %lld rows around, expected %lld and %lld",
              (long long)fit[i][0], (long long)lo, (long long)hi, (long long)fit[i][1],
              (long long)fit[i][2]);
  }
  int32_t token = 1;
  int64_t pos[SLOTS] = {0};
  const float *logits = NULL;
  s = vkf_gen_engine_step(e, &token, pos, &logits);
  CHECK_MSG(s && vkf_status_code_of(s) == VKF_STATUS_UNSUPPORTED &&
                  strstr(vkf_status_message(s), "only ragged"),
            "a step on a ragged-only engine: %s", s ? vkf_status_message(s) : "ran");
  vkf_status_free(s);
  CHECK(vkf_gen_engine_decode_runner(e) == NULL);
  for (int i = 0; i < vkf_gen_engine_ragged_plans(e); i++) {
    const vkf_runner *r = vkf_gen_engine_ragged_runner(e, i);
    int fused = dispatches_of(r, "rotary_kv.comp"), rotary = dispatches_of(r, "rotary.comp"),
        writes = dispatches_of(r, "kv_write.comp");
    CHECK_MSG(fused > 0 && rotary == 0 && writes == 0,
              "%s ragged plan %d: %d rotary_kv, %d rotary, %d kv_write dispatches", dir, i, fused,
              rotary, writes);
  }
  vkf_gen_engine_destroy(e);
}

/* The greedy tokens of `prompt` alone: one incremental engine row, no ragged plans. */
static void alone(vkf_device *dev, vkf_decoder_model *m, int64_t vocab, const int32_t *prompt,
                  int64_t len, int32_t *out) {
  vkf_gen_engine_options o = {.batch = 1, .prompt_len = 1, .capacity = CTX + CHUNK,
                              .dtype = VKF_F32, .cache_dtype = VKF_F32, .chunk = CHUNK,
                              .incremental = 1};
  vkf_gen_engine *e = NULL;
  vkf_status s = vkf_gen_engine_create(dev, m, &o, &e);
  CHECK_MSG(!s, "engine: %s", vkf_status_message(s));
  if (s) return;
  const float *logits = NULL;
  s = vkf_gen_engine_extend(e, prompt, len, 0, &logits);
  for (int64_t t = 0; !s && t < NEW; t++) {
    out[t] = (int32_t)argmax(logits, vocab);
    int64_t pos = len + t;
    if (t + 1 < NEW) s = vkf_gen_engine_step(e, &out[t], &pos, &logits);
  }
  CHECK_MSG(!s, "alone: %s", vkf_status_message(s));
  vkf_status_free(s);
  vkf_gen_engine_destroy(e);
}

static void submit(vkf_slots *sl, const int32_t *prompt, int64_t len, rec *r) {
  vkf_slot_request q = {.prompt = prompt, .prompt_len = (size_t)len, .max_new = NEW,
                        .logprobs = 1, .on_logprob = on_logprob, .on_text = on_text,
                        .on_done = on_done, .user = r};
  vkf_status s = vkf_slots_submit(sl, &q);
  CHECK_MSG(!s, "submit: %s", vkf_status_message(s));
  vkf_status_free(s);
}

/* One step; *tokens and *rows: what it ran and computed. */
static void step(vkf_slots *sl, int64_t *tokens, int64_t *rows) {
  int64_t t0, r0, t1, r1;
  int busy = 0;
  vkf_slots_rows(sl, &t0, &r0);
  vkf_status s = vkf_slots_step(sl, &busy);
  CHECK_MSG(!s, "step: %s", vkf_status_message(s));
  vkf_status_free(s);
  vkf_slots_rows(sl, &t1, &r1);
  *tokens = t1 - t0;
  *rows = r1 - r0;
}

static void run_model(vkf_device *dev, const char *dir, int ragged, int rotary) {
  fprintf(stderr, "%s\n", dir);
  vkf_model *model = NULL;
  vkf_text_tokenizer *tok = NULL;
  vkf_status s = vkf_model_open(dir, &model);
  vkf_model_generate gf;
  if (!s) s = vkf_model_generate_facet(model, &gf);
  /* the text is not checked: any byte-level tokenizer decodes the tiny vocabularies' ids */
  if (!s) s = vkf_text_tokenizer_load("tests/models/data/gpt2", &tok);
  CHECK_MSG(!s, "%s: %s", dir, vkf_status_message(s));
  if (s) {
    vkf_status_free(s);
    vkf_model_close(model);
    return;
  }
  vkf_decoder_model *m = gf.engine_model;
  int64_t vocab = gf.vocab;
  if (rotary) check_ragged_fusion(dev, m, dir);
  CHECK_MSG(vkf_decoder_takes_ragged(m) == ragged, "%s: takes ragged rows %d, expected %d", dir,
            vkf_decoder_takes_ragged(m), ragged);
  /* four prompts: two short ones that decode while a 13-token and a 30-token one (two chunks)
   * join */
  static const int64_t lens[4] = {3, 5, 13, 30};
  int32_t prompts[4][MAX_PROMPT], want[4][NEW];
  for (int p = 0; p < 4; p++) {
    for (int64_t t = 0; t < lens[p]; t++) prompts[p][t] = (int32_t)((p * 37 + t * 11 + 5) % vocab);
    alone(dev, m, vocab, prompts[p], lens[p], want[p]);
  }
  vkf_slots_options so = {.slots = SLOTS, .ctx = CTX, .chunk = CHUNK, .dtype = VKF_F32};
  vkf_slots *sl = NULL;
  s = vkf_slots_create(dev, m, tok, &so, &sl);
  CHECK_MSG(!s, "slots: %s", vkf_status_message(s));
  if (!s && !ragged) { /* the rectangular plans: the tokens only */
    rec r[4] = {0};
    for (int p = 0; p < 4; p++) submit(sl, prompts[p], lens[p], &r[p]);
    int64_t tokens, rows;
    for (int i = 0; i < 64 && (vkf_slots_busy(sl) || vkf_slots_queued(sl)); i++) {
      step(sl, &tokens, &rows);
      CHECK_MSG(rows >= tokens, "%lld tokens, %lld rows", (long long)tokens, (long long)rows);
    }
    for (int p = 0; p < 4; p++)
      for (int t = 0; t < NEW; t++)
        CHECK_MSG(r[p].count == NEW && r[p].ids[t] == want[p][t],
                  "%s prompt %d token %d: %d batched (of %d), %d alone", dir, p, t, r[p].ids[t],
                  r[p].count, want[p][t]);
  } else if (!s) {
    rec r[4] = {0};
    int64_t tokens, rows;
    submit(sl, prompts[0], lens[0], &r[0]);
    submit(sl, prompts[1], lens[1], &r[1]);
    step(sl, &tokens, &rows); /* both prompts: 8 tokens, a plan of 8 rows */
    CHECK_MSG(tokens == 8 && rows == 8, "two prompts: %lld tokens, %lld rows", (long long)tokens,
              (long long)rows);
    step(sl, &tokens, &rows); /* two decoding rows */
    CHECK_MSG(tokens == 2 && rows == 2, "two tokens: %lld tokens, %lld rows", (long long)tokens,
              (long long)rows);
    submit(sl, prompts[2], lens[2], &r[2]);
    /* 2 decoding + the whole 13-token prompt (within the 16-token budget): a plan of 16 rows,
     * not 4 x 16, nor 8 rows taking 6 of the prompt's tokens */
    step(sl, &tokens, &rows);
    CHECK_MSG(tokens == 15 && rows == 16, "a prompt beside two decoders: %lld tokens, %lld rows",
              (long long)tokens, (long long)rows);
    submit(sl, prompts[3], lens[3], &r[3]);
    /* 3 decoding + 16 of the 30 (the budget) in a plan of 20, its padding row topped up: 17 */
    step(sl, &tokens, &rows);
    CHECK_MSG(tokens == 20 && rows == 20,
              "a prompt beside three decoders: %lld tokens, "
              "%lld rows",
              (long long)tokens, (long long)rows);
    for (int i = 0; i < 64 && (vkf_slots_busy(sl) || vkf_slots_queued(sl)); i++) {
      step(sl, &tokens, &rows);
      CHECK_MSG(rows >= tokens && rows < 2 * tokens, "%lld tokens, %lld rows", (long long)tokens,
                (long long)rows);
    }
    for (int p = 0; p < 4; p++) {
      CHECK_MSG(r[p].done && r[p].count == NEW, "%s prompt %d: done %d, %d tokens", dir, p,
                r[p].done, r[p].count);
      for (int t = 0; t < NEW && t < r[p].count; t++)
        CHECK_MSG(r[p].ids[t] == want[p][t], "%s prompt %d token %d: %d batched, %d alone", dir,
                  p, t, r[p].ids[t], want[p][t]);
    }
  }
  vkf_status_free(s);
  vkf_slots_destroy(sl);
  vkf_text_tokenizer_destroy(tok);
  vkf_model_close(model);
}

int main(void) {
  vkf_instance_options io = {.validate = 1};
  vkf_instance *inst = NULL;
  vkf_device *dev = NULL;
  uint32_t index = 0;
  vkf_status s = vkf_instance_create(&io, &inst);
  if (!s) s = vkf_instance_choose_device(inst, NULL, &index);
  if (!s) s = vkf_device_create(inst, index, &dev);
  if (s) {
    fprintf(stderr, "no device: %s\n", vkf_status_message(s));
    return 1;
  }
  run_model(dev, "tests/models/data/llama_tiny", 1, 1);
  run_model(dev, "tests/models/data/gpt2_tiny", 1, 0);
  run_model(dev, "tests/models/data/mistral_tiny", 0, 0);
  vkf_device_destroy(dev);
  uint32_t messages = vkf_instance_validation_message_count(inst);
  CHECK_MSG(messages == 0, "%u validation messages", messages);
  vkf_instance_destroy(inst);
  return test_report();
}
