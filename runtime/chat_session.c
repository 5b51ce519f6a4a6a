/* The chat session: template and special tokens read once, an incremental engine whose cache
 * holds the last conversation's tokens, and per reply the longest cached prefix kept, the rest
 * appended, then greedy / sampled tokens until an end id. */
#include "runtime/chat_session.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/formats/gguf.h"
#include "models/generate/generation_config.h"
#include "models/generate/sampling.h"
#include "text/chat_prompt.h"
#include "runtime/generate_engine.h"
#include "runtime/token_text.h"

enum { MAX_END_IDS = 16, DEFAULT_CTX = 4096, CHUNK = 128 };

/* End-of-turn tokens of the common chat formats (ChatML, Llama 3, Phi-3, Gemma), which stop a
 * reply when the tokenizer has them as one token, as llama.cpp's end-of-generation set does. */
static const char *const k_end_tokens[] = {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end|>",
                                           "<end_of_turn>"};

struct vkf_chat_session {
  vkf_device *device;
  vkf_model *model;
  vkf_decoder_model *dec;
  const vkf_text_tokenizer *tok;
  vkf_chat_options o;
  vkf_chat_prompt *prompt;
  vkf_generation_config gc;
  vkf_sampling_options so;
  int64_t end_ids[MAX_END_IDS];
  size_t end_count;
  int64_t vocab, ctx;
  vkf_gen_engine *engine;
  int32_t *cached; /* [ctx]: the tokens the cache holds at positions 0 .. cached_len - 1 */
  int64_t cached_len;
  vkf_rng rng;
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void add_end_id(int64_t *ids, size_t *count, size_t max, int64_t vocab, int64_t id) {
  for (size_t i = 0; i < *count; i++)
    if (ids[i] == id) return;
  if (*count < max && id >= 0 && id < vocab) ids[(*count)++] = id;
}

size_t vkf_chat_end_ids(const char *dir, const vkf_text_tokenizer *tok,
                        const vkf_generation_config *gc, int64_t vocab, int64_t *out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < gc->eos_token_id_count; i++)
    add_end_id(out, &n, max, vocab, gc->eos_token_ids[i]);
  vkf_gguf *g = NULL;
  vkf_status gs = vkf_gguf_is_file(dir) ? vkf_gguf_open(dir, &g) : VKF_OK;
  static const char *const keys[] = {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"};
  for (size_t k = 0; g && k < sizeof keys / sizeof *keys; k++) {
    uint64_t id = 0;
    vkf_status ks = vkf_gguf_get_uint(g, keys[k], (uint64_t)vocab - 1, &id);
    if (!ks) add_end_id(out, &n, max, vocab, (int64_t)id);
    vkf_status_free(ks); /* absent or out of range: not an end id */
  }
  vkf_gguf_close(g);
  vkf_status_free(gs); /* the model opened from it already: it reads */
  for (size_t k = 0; k < sizeof k_end_tokens / sizeof *k_end_tokens; k++) {
    int32_t *ids = NULL;
    size_t count = 0;
    vkf_status st = vkf_text_tokenizer_encode(tok, k_end_tokens[k], 0, &ids, &count);
    const char *back = !st && count == 1 ? vkf_text_tokenizer_id_to_token(tok, ids[0]) : NULL;
    if (back && !strcmp(back, k_end_tokens[k])) add_end_id(out, &n, max, vocab, ids[0]);
    vkf_status_free(st);
    free(ids);
  }
  return n;
}

static void set_sampling(vkf_chat_session *s) {
  const vkf_chat_options *o = &s->o;
  vkf_generation_config_sampling(&s->gc, &s->so);
  int sample = o->temperature > 0 || o->top_k || o->top_p > 0;
  if (o->decoding == 1) s->so.do_sample = 0;
  if (o->decoding == 2 || (o->decoding == 0 && sample)) s->so.do_sample = 1;
  if (o->temperature > 0) s->so.temperature = o->temperature;
  if (o->top_k) s->so.top_k = o->top_k < 0 ? 0 : o->top_k;
  if (o->top_p > 0) s->so.top_p = o->top_p;
  if (o->repetition_penalty > 0) s->so.repetition_penalty = o->repetition_penalty;
  /* a chat reply has no length processors: min_length and max_length count the whole history */
  s->so.min_length = 0;
  s->so.min_new_tokens = 0;
  s->so.max_length = 0;
  s->so.forced_eos_id_count = 0;
  vkf_rng_seed(&s->rng, o->seed);
}

vkf_status vkf_chat_session_open(vkf_device *device, vkf_model *model,
                                 const vkf_text_tokenizer *tok, const vkf_chat_options *options,
                                 vkf_chat_session **out) {
  *out = NULL;
  const char *dir = vkf_model_dir(model);
  vkf_model_generate facet;
  VKF_RETURN_IF_ERROR(vkf_model_chat_facet(model, &facet));
  vkf_decoder_model *dec = facet.engine_model;
  vkf_chat_session *s = calloc(1, sizeof *s);
  if (!s) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat");
  s->device = device;
  s->model = model;
  s->dec = dec;
  s->tok = tok;
  s->o = *options;
  s->vocab = facet.vocab;
  int64_t max_ctx = facet.max_ctx;
  int64_t cfg = facet.config_ctx ? facet.config_ctx : max_ctx;
  s->ctx = options->ctx > 0 ? options->ctx : (cfg < DEFAULT_CTX ? cfg : DEFAULT_CTX);
  vkf_status st = VKF_OK;
  if (s->ctx > max_ctx || s->ctx < 2)
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "ctx %lld: 2 to the model's %lld positions",
                         (long long)s->ctx, (long long)max_ctx);
  if (!st) st = vkf_chat_prompt_load(dir, &s->prompt);
  if (!st) st = vkf_generation_config_load(dir, s->vocab, &s->gc);
  if (!st) {
    set_sampling(s);
    s->end_count = vkf_chat_end_ids(dir, tok, &s->gc, s->vocab, s->end_ids, MAX_END_IDS);
    s->so.eos_ids = s->end_ids;
    s->so.eos_id_count = s->end_count;
    s->cached = malloc((size_t)s->ctx * sizeof *s->cached);
    if (!s->cached) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat: %lld positions",
                                         (long long)s->ctx);
  }
  vkf_gen_engine_options eo = {.batch = 1,
                               .prompt_len = 1,
                               .capacity = s->ctx,
                               .dtype = options->fp16 ? VKF_F16 : VKF_F32,
                               .cache_dtype = options->fp16 ? VKF_F16 : VKF_F32,
                               .chunk = s->ctx < CHUNK ? s->ctx : CHUNK,
                               .incremental = 1};
  if (!st) st = vkf_gen_engine_create(device, dec, &eo, &s->engine);
  if (st) {
    vkf_chat_session_close(s);
    return st;
  }
  *out = s;
  return VKF_OK;
}

void vkf_chat_session_close(vkf_chat_session *s) {
  if (!s) return;
  vkf_gen_engine_destroy(s->engine);
  vkf_chat_prompt_destroy(s->prompt);
  free(s->cached);
  free(s);
}

vkf_status vkf_chat_session_render(const vkf_chat_session *s, const char *messages_json,
                                   size_t size, char **out_text) {
  return vkf_chat_prompt_render(s->prompt, messages_json, size, out_text);
}

static int is_end(const vkf_chat_session *s, int64_t id) {
  for (size_t i = 0; i < s->end_count; i++)
    if (s->end_ids[i] == id) return 1;
  return 0;
}

/* The rendered conversation's ids, checked against the vocabulary and the context. */
static vkf_status prompt_of(vkf_chat_session *s, const char *messages_json, size_t size,
                            int32_t **ids, size_t *count) {
  char *text = NULL;
  VKF_RETURN_IF_ERROR(vkf_chat_session_render(s, messages_json, size, &text));
  vkf_status st = vkf_text_tokenizer_encode(s->tok, text, 0, ids, count);
  free(text);
  VKF_RETURN_IF_ERROR(st);
  for (size_t i = 0; i < *count; i++)
    if ((*ids)[i] < 0 || (*ids)[i] >= s->vocab)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "the tokenizer gives id %d, outside the model's vocabulary of %lld",
                             (*ids)[i], (long long)s->vocab);
  if (!*count) /* not a context overflow: nothing to reply to */
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "the chat template renders this conversation to no tokens (its "
                           "messages' roles or contents give it nothing to write)");
  if ((int64_t)*count + 1 > s->ctx)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "the conversation is %zu tokens; the context holds %lld (--ctx, or "
                           "start a new conversation)",
                           *count, (long long)s->ctx);
  return VKF_OK;
}

static vkf_status append_text(vkf_chat_reply *r, const char *piece, size_t size, size_t *cap) {
  if (r->text_size + size + 1 > *cap) {
    size_t want = (*cap ? *cap * 2 : 256) + size;
    char *t = realloc(r->text, want);
    if (!t) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "reply text");
    r->text = t;
    *cap = want;
  }
  memcpy(r->text + r->text_size, piece, size);
  r->text_size += size;
  r->text[r->text_size] = 0;
  return VKF_OK;
}

/* Streams one piece: into the reply, then to the caller (who may stop the reply). */
static vkf_status emit(vkf_chat_reply *r, size_t *cap, int64_t token, const char *piece,
                       size_t size, vkf_chat_piece_fn on_piece, void *user, int *stop) {
  if (!size && token < 0) return VKF_OK;
  VKF_RETURN_IF_ERROR(append_text(r, piece, size, cap));
  if (on_piece && on_piece(user, token, piece, size)) *stop = 1;
  return VKF_OK;
}

vkf_status vkf_chat_session_reply(vkf_chat_session *s, const char *messages_json, size_t json_size,
                                  vkf_chat_piece_fn on_piece, void *user, vkf_chat_reply *out) {
  memset(out, 0, sizeof *out);
  int32_t *ids = NULL;
  size_t n = 0;
  vkf_status st = prompt_of(s, messages_json, json_size, &ids, &n);
  int64_t *history = NULL; /* conversation + reply, as int64 for the processors */
  float *scores = malloc((size_t)s->vocab * sizeof *scores);
  vkf_text_decoder *dec = NULL;
  size_t cap = 0;
  if (!st && !(history = malloc((size_t)s->ctx * sizeof *history)))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat history");
  if (!st && !scores) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat logits");
  if (!st && !(out->ids = malloc((size_t)s->ctx * sizeof *out->ids)))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat reply");
  if (!st) st = vkf_text_decoder_create(s->tok, 1, &dec);
  if (!st) st = append_text(out, "", 0, &cap);
  /* keep the cached prefix; recompute at least the last token for its logits */
  int64_t keep = 0;
  while (!st && keep < s->cached_len && keep < (int64_t)n && s->cached[keep] == ids[keep]) keep++;
  if (keep == (int64_t)n) keep--;
  const float *logits = NULL;
  double t0 = now_s();
  if (!st) st = vkf_gen_engine_extend(s->engine, ids + keep, (int64_t)n - keep, keep, &logits);
  if (!st) {
    memcpy(s->cached, ids, n * sizeof *ids);
    s->cached_len = (int64_t)n;
    for (size_t i = 0; i < n; i++) history[i] = ids[i];
    out->prompt_tokens = (int64_t)n;
    out->reused_tokens = keep;
  } else {
    s->cached_len = 0; /* a failed run may have written part of the cache */
  }
  double t1 = now_s();
  int64_t len = (int64_t)n, max_new = s->o.max_new > 0 ? s->o.max_new : s->ctx;
  int stop = 0;
  while (!st) {
    memcpy(scores, logits, (size_t)s->vocab * sizeof *scores);
    st = vkf_sampling_check_logits(scores, 1, (size_t)s->vocab, out->id_count);
    int64_t next = 0;
    if (!st)
      st = vkf_sampling_next(&s->so, history, (size_t)len, (size_t)s->vocab, scores, &s->rng,
                             &next);
    if (st) break;
    out->ids[out->id_count++] = (int32_t)next;
    if (is_end(s, next)) {
      out->stop = VKF_CHAT_STOP_END;
      break;
    }
    const char *piece;
    size_t size;
    st = vkf_gen_decoder_push(s->tok, dec, next, &piece, &size);
    if (!st) st = emit(out, &cap, next, piece, size, on_piece, user, &stop);
    if (st) break;
    history[len] = next;
    if (stop) {
      out->stop = VKF_CHAT_STOP_CALLER;
      break;
    }
    if (out->id_count >= max_new) {
      out->stop = VKF_CHAT_STOP_LENGTH;
      break;
    }
    if (len + 1 >= s->ctx) {
      out->stop = VKF_CHAT_STOP_CONTEXT;
      break;
    }
    st = vkf_gen_engine_step(s->engine, (int32_t[]){(int32_t)next}, (int64_t[]){len}, &logits);
    if (st) {
      s->cached_len = 0;
      break;
    }
    s->cached[len++] = (int32_t)next;
    s->cached_len = len;
  }
  if (!st) {
    const char *piece;
    size_t size;
    st = vkf_text_decoder_flush(dec, &piece, &size);
    if (!st && size) st = emit(out, &cap, -1, piece, size, on_piece, user, &stop);
  }
  out->prefill_s = t1 - t0;
  out->decode_s = now_s() - t1;
  vkf_text_decoder_destroy(dec);
  free(ids);
  free(history);
  free(scores);
  if (st) vkf_chat_reply_free(out);
  return st;
}

void vkf_chat_reply_free(vkf_chat_reply *r) {
  free(r->text);
  free(r->ids);
  memset(r, 0, sizeof *r);
}
