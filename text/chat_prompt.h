/* A model's chat template with the variables transformers' apply_chat_template passes it: read
 * from the model's tokenizer_config.json (chat_template: a string, or a list of named templates,
 * "default" first) or a GGUF's metadata through the same path, and rendered over a conversation
 * given as JSON text (a list of {"role", "content", ...} objects; every field reaches the
 * template). */
#ifndef VKF_MODELS_TEXT_CHAT_PROMPT_H
#define VKF_MODELS_TEXT_CHAT_PROMPT_H

#include <stddef.h>

#include "graph/base/status.h"

typedef struct vkf_chat_prompt vkf_chat_prompt;

/* UNSUPPORTED naming the file when the model has no tokenizer_config.json or no chat_template;
 * a template outside the renderer's subset is its PARSE error prefixed with the file. */
vkf_status vkf_chat_prompt_load(const char *model_dir, vkf_chat_prompt **out);
void vkf_chat_prompt_destroy(vkf_chat_prompt *p);

/* The conversation rendered with add_generation_prompt=True and the special tokens map
 * (bos_token, eos_token, unk_token, pad_token). INVALID_ARGUMENT for JSON that is not a non-empty
 * list of objects with string "role" and "content" (naming the message), or the template's
 * raise_exception message. *out_text is malloc'd, NUL-terminated. */
vkf_status vkf_chat_prompt_render(const vkf_chat_prompt *p, const char *messages_json, size_t size,
                                  char **out_text);

#endif
