/* A chat with an instruction-tuned decoder: the model's own chat template (tokenizer_config.json's
 * chat_template, or a GGUF's tokenizer.chat_template) renders the conversation as transformers'
 * apply_chat_template(add_generation_prompt=True) does, the text is tokenized as it tokenizes it
 * (no added special tokens: the template writes them), and the reply is generated on a KV cache
 * that lives across turns: each turn computes only the tokens after the longest prefix the cache
 * already holds. Replies stop at an end-of-sequence or end-of-turn id. Prints nothing. */
#ifndef VKF_RUNTIME_CHAT_SESSION_H
#define VKF_RUNTIME_CHAT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "host/device.h"
#include "models/registry/model.h"
#include "models/generate/generation_config.h"
#include "text/text_tokenizer.h"

/* Zero fields take the checkpoint's generation config (sampling, eos ids) or the default. */
typedef struct vkf_chat_options {
  int64_t ctx;       /* cache positions; 0: min(the model's maximum, 4096) */
  int64_t max_new;   /* tokens per reply; 0: until an end id or the context is full */
  int decoding;      /* 0: the config's do_sample; 1: greedy; 2: sampling */
  double temperature, top_p, repetition_penalty;
  int64_t top_k; /* -1: off */
  uint64_t seed;
  int fp16;
} vkf_chat_options;

/* Why a reply ended. */
typedef enum vkf_chat_stop {
  VKF_CHAT_STOP_END = 0, /* an end-of-sequence / end-of-turn id */
  VKF_CHAT_STOP_LENGTH,  /* max_new tokens */
  VKF_CHAT_STOP_CONTEXT, /* the context is full */
  VKF_CHAT_STOP_CALLER,  /* the piece callback asked to stop */
} vkf_chat_stop;

typedef struct vkf_chat_reply {
  char *text; /* malloc'd, NUL-terminated: the reply (special tokens skipped) */
  size_t text_size;
  int32_t *ids; /* malloc'd: the generated ids (the end id included when one stopped it) */
  int64_t id_count;
  int64_t prompt_tokens; /* the rendered conversation */
  int64_t reused_tokens; /* of them, already in the cache from earlier turns */
  vkf_chat_stop stop;
  double prefill_s, decode_s;
} vkf_chat_reply;

/* Called per generated token (not the end id) with the text it completes (`token` -1: the bytes
 * flushed at the end); non-zero stops the reply. */
typedef int (*vkf_chat_piece_fn)(void *user, int64_t token, const char *piece, size_t size);

typedef struct vkf_chat_session vkf_chat_session;

/* The ids that end a reply of the model in `dir`: the generation config's eos ids, a GGUF's
 * end-of-turn / end-of-message ids (llama.cpp's end-of-generation set), and the end-of-turn tokens
 * of the common chat formats (<|im_end|>, <|eot_id|>, <|eom_id|>, <|end|>, <end_of_turn>) that the
 * tokenizer has as one token. Writes at most `max` into out; returns how many. */
size_t vkf_chat_end_ids(const char *dir, const vkf_text_tokenizer *tok,
                        const vkf_generation_config *gc, int64_t vocab, int64_t *out,
                        size_t max);

/* A "decoder" family model with a language-model head, its tokenizer (both borrowed; they must
 * outlive the session) and the chat template from the model's folder or GGUF. Errors name the
 * model: no chat template (UNSUPPORTED), a template outside the renderer's subset (PARSE naming
 * the construct), a context past the model's positions. */
vkf_status vkf_chat_session_open(vkf_device *device, vkf_model *model,
                                 const vkf_text_tokenizer *tok, const vkf_chat_options *options,
                                 vkf_chat_session **out);
void vkf_chat_session_close(vkf_chat_session *s);

/* The conversation `messages_json` (`size` bytes of a JSON list of {"role", "content"} objects,
 * as apply_chat_template takes it) rendered with the generation prompt (text/
 * chat_prompt.h). *out_text is malloc'd. */
vkf_status vkf_chat_session_render(const vkf_chat_session *s, const char *messages_json,
                                   size_t size, char **out_text);
/* Generates the assistant's next message for `messages_json`. `on_piece` may be NULL. The reply's
 * buffers are the caller's (vkf_chat_reply_free). A prompt that leaves no room in the context is
 * INVALID_ARGUMENT saying how many tokens it has. */
vkf_status vkf_chat_session_reply(vkf_chat_session *s, const char *messages_json, size_t size,
                                  vkf_chat_piece_fn on_piece, void *user, vkf_chat_reply *out);
void vkf_chat_reply_free(vkf_chat_reply *r);

#endif
