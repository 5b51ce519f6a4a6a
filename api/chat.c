/* Chat of vkformer.h: a runtime chat session (runtime/chat_session.h) on a loaded model, its
 * replies handed back as vkformer_generation values. */
#include <stdlib.h>
#include <string.h>

#include "api/handles.h"
#include "runtime/chat_session.h"

struct vkformer_chat {
  vkf_chat_session *session;
};

typedef struct piece_sink {
  vkformer_token_callback callback;
  void *user;
} piece_sink;

static int on_piece(void *user, int64_t token, const char *piece, size_t size) {
  const piece_sink *sink = user;
  return sink->callback ? sink->callback(sink->user, token, piece, size) : 0;
}

static vkf_status chat_options(const vkformer_generate_options *o, vkf_chat_options *out) {
  memset(out, 0, sizeof *out);
  if (!o) return VKF_OK;
  if (o->num_beams > 1 || o->stop_string_count || o->ignore_eos)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "chat options: num_beams > 1, stop strings and ignore_eos are not "
                           "chat settings");
  if (o->max_new_tokens < 0 || o->ctx < 0 || o->top_k < -1 || !(o->temperature >= 0) ||
      !(o->top_p >= 0 && o->top_p <= 1) || !(o->repetition_penalty >= 0) ||
      o->decoding < VKFORMER_DECODING_DEFAULT || o->decoding > VKFORMER_DECODING_SAMPLE)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "chat options: max_new_tokens and ctx >= 0, top_k >= -1, temperature "
                           ">= 0, top_p in [0, 1], repetition_penalty >= 0, a known decoding");
  if (o->decoding == VKFORMER_DECODING_GREEDY && (o->temperature > 0 || o->top_k || o->top_p > 0))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "chat options: greedy decoding contradicts temperature / top_k / top_p");
  *out = (vkf_chat_options){.ctx = o->ctx,
                            .max_new = o->max_new_tokens,
                            .decoding = o->decoding,
                            .temperature = o->temperature,
                            .top_p = o->top_p,
                            .repetition_penalty = o->repetition_penalty,
                            .top_k = o->top_k,
                            .seed = o->seed};
  return VKF_OK;
}

vkformer_status vkformer_chat_open(vkformer_model *model, const vkformer_generate_options *options,
                                   vkformer_chat **out) {
  VKF_API_REQUIRE(out, "vkformer_chat_open: out is NULL");
  *out = NULL;
  VKF_API_REQUIRE(model, "vkformer_chat_open: model is NULL");
  vkf_chat_options o;
  vkf_status st = chat_options(options, &o);
  o.fp16 = model->dtype == VKF_F16;
  const vkformer_tokenizer *tok = NULL;
  if (!st) st = vkf_api_internal(vkformer_model_tokenizer(model, &tok));
  vkformer_chat *c = st ? NULL : calloc(1, sizeof *c);
  if (!st && !c) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat");
  if (!st) st = vkf_chat_session_open(model->device->rt.device, model->model, tok->tok, &o, &c->session);
  if (st) {
    free(c);
    return vkf_api_status(st);
  }
  *out = c;
  return NULL;
}

vkformer_status vkformer_chat_reply(vkformer_chat *chat, const char *messages_json,
                                    vkformer_token_callback callback, void *user,
                                    vkformer_generation *out) {
  VKF_API_REQUIRE(out, "vkformer_chat_reply: out is NULL");
  memset(out, 0, sizeof *out);
  VKF_API_REQUIRE(chat && messages_json, "vkformer_chat_reply: chat or messages_json is NULL");
  piece_sink sink = {callback, user};
  vkf_chat_reply r;
  vkf_status st = vkf_chat_session_reply(chat->session, messages_json, strlen(messages_json),
                                         on_piece, &sink, &r);
  if (st) return vkf_api_status(st);
  out->ids = malloc((r.id_count ? (size_t)r.id_count : 1) * sizeof *out->ids);
  if (!out->ids) {
    vkf_chat_reply_free(&r);
    return vkf_api_status(vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat reply"));
  }
  for (int64_t i = 0; i < r.id_count; i++) out->ids[i] = r.ids[i];
  out->count = (size_t)r.id_count;
  out->text = r.text; /* handed over */
  r.text = NULL;
  vkf_chat_reply_free(&r);
  return NULL;
}

void vkformer_chat_close(vkformer_chat *chat) {
  if (!chat) return;
  vkf_chat_session_close(chat->session);
  free(chat);
}
