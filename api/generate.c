/* Generation of vkformer.h: one prompt through the generation loop of `vkf generate`
 * (runtime/generate_loop.h), each piece of text handed to the caller's callback. */
#include <stdlib.h>
#include <string.h>

#include "api/handles.h"
#include "runtime/generate_loop.h"

typedef struct piece_sink {
  vkformer_token_callback callback;
  void *user;
} piece_sink;

static int on_piece(void *user, int64_t row, int64_t token, const char *piece, size_t size) {
  const piece_sink *sink = user;
  (void)row;
  return sink->callback ? sink->callback(sink->user, token, piece, size) : 0;
}

static vkf_status check_options(const vkformer_generate_options *o) {
  if (o->max_new_tokens < 0 || o->num_beams < 0 || o->ctx < 0 || o->top_k < -1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "generate options: max_new_tokens, num_beams and ctx must be >= 0, "
                           "top_k >= -1");
  if (o->decoding < VKFORMER_DECODING_DEFAULT || o->decoding > VKFORMER_DECODING_SAMPLE)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "generate options: decoding %d",
                           (int)o->decoding);
  /* !(x >= 0) also refuses NaN */
  if (!(o->temperature >= 0) || !(o->top_p >= 0 && o->top_p <= 1) || !(o->repetition_penalty >= 0))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "generate options: temperature %g, top_p %g (in (0, 1]), "
                           "repetition_penalty %g must not be negative",
                           o->temperature, o->top_p, o->repetition_penalty);
  if (o->decoding == VKFORMER_DECODING_GREEDY && (o->temperature > 0 || o->top_k || o->top_p > 0))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "generate options: greedy decoding contradicts temperature / top_k / "
                           "top_p");
  if (o->stop_string_count && !o->stop_strings)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "generate options: stop_strings is NULL");
  for (size_t i = 0; i < o->stop_string_count; i++)
    if (!o->stop_strings[i] || !o->stop_strings[i][0])
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "generate options: stop string %zu is NULL or empty", i);
  return VKF_OK;
}

static vkf_status generate(vkformer_model *model, const char *prompt, const int64_t *ids,
                           size_t id_count, const vkformer_generate_options *o, piece_sink *sink,
                           vkformer_generation *out) {
  VKF_RETURN_IF_ERROR(check_options(o));
  if (!prompt && (!ids || !id_count))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "give a prompt text or its ids");
  const vkformer_tokenizer *tok = NULL;
  vkf_model_generate facet;
  VKF_RETURN_IF_ERROR(vkf_model_generate_facet(model->model, &facet));
  if (facet.text_prompts) {
    /* Text needs the tokenizer; ids alone run without one (the result has no text). */
    vkformer_status ts = vkformer_model_tokenizer(model, &tok);
    if (ts && (prompt || o->stop_string_count)) return vkf_api_internal(ts);
    vkformer_status_free(ts);
  }
  const int64_t *id_lists[1] = {ids};
  size_t id_counts[1] = {id_count};
  vkf_rt_gen_request q = {.model = model->model,
                          .tok = tok ? tok->tok : NULL,
                          .prompts = prompt ? &prompt : NULL,
                          .prompt_count = prompt ? 1 : 0,
                          .ids = prompt ? NULL : id_lists,
                          .id_counts = prompt ? NULL : id_counts,
                          .ids_count = prompt ? 0 : 1,
                          .stops = o->stop_strings,
                          .stop_count = o->stop_string_count,
                          .max_new = o->max_new_tokens,
                          .ctx = o->ctx,
                          .num_beams = o->num_beams,
                          .decoding = o->decoding,
                          .temperature = o->temperature,
                          .top_p = o->top_p,
                          .repetition_penalty = o->repetition_penalty,
                          .top_k = o->top_k,
                          .seed = o->seed,
                          .ignore_eos = o->ignore_eos,
                          .fp16 = model->dtype == VKF_F16,
                          .cache_fp16 = model->cache_fp16,
                          .on_piece = on_piece,
                          .user = sink};
  vkf_rt_gen g;
  memset(&g, 0, sizeof g);
  vkf_status st = vkf_rt_gen_prepare(&g, &q);
  if (!st) st = vkf_rt_gen_run(&g, model->device->rt.device);
  if (!st) {
    const vkf_rt_gen_row *r = &g.rows[0];
    size_t n = (size_t)(r->len - r->prompt_len);
    out->ids = malloc((n ? n : 1) * sizeof *out->ids);
    out->text = malloc(r->text_size + 1);
    if (!out->ids || !out->text) {
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generated text");
    } else {
      memcpy(out->ids, r->ids + r->prompt_len, n * sizeof *out->ids);
      out->count = n;
      if (r->text_size) memcpy(out->text, r->text, r->text_size);
      out->text[r->text_size] = 0;
      out->score = r->score;
    }
  }
  vkf_rt_gen_release(&g);
  return st;
}

vkformer_status vkformer_generate(vkformer_model *model, const char *prompt, const int64_t *ids,
                                  size_t id_count, const vkformer_generate_options *options,
                                  vkformer_token_callback callback, void *user,
                                  vkformer_generation *out) {
  VKF_API_REQUIRE(out, "vkformer_generate: out is NULL");
  memset(out, 0, sizeof *out);
  VKF_API_REQUIRE(model, "vkformer_generate: model is NULL");
  vkformer_generate_options o = options ? *options : (vkformer_generate_options){0};
  piece_sink sink = {callback, user};
  vkf_status st = generate(model, prompt, ids, id_count, &o, &sink, out);
  if (st) vkformer_generation_release(out);
  return vkf_api_status(st);
}

void vkformer_generation_release(vkformer_generation *generation) {
  if (!generation) return;
  free(generation->ids);
  free(generation->text);
  memset(generation, 0, sizeof *generation);
}
