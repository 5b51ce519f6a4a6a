/* The chat template of a model folder (or GGUF) and apply_chat_template's variables. */
#include "text/chat_prompt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/formats/json_fields.h"
#include "text/chat_template.h"

struct vkf_chat_prompt {
  vkf_chat_template *tmpl;
  cJSON *vars; /* bos_token, eos_token, unk_token, pad_token, add_generation_prompt */
};

/* A special token as tokenizer_config.json writes it: a string, or an AddedToken object. */
static const char *token_string(const cJSON *item) {
  if (cJSON_IsString(item)) return item->valuestring;
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "content"));
}

/* chat_template: a string, or a list of {"name", "template"} (the "default" one, else the first). */
static const char *template_of(const cJSON *config) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(config, "chat_template");
  if (cJSON_IsString(t)) return t->valuestring;
  const char *first = NULL;
  const cJSON *e, *list = cJSON_IsArray(t) ? t : NULL;
  cJSON_ArrayForEach(e, list) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
    const char *body = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "template"));
    if (body && !first) first = body;
    if (body && name && !strcmp(name, "default")) return body;
  }
  return first;
}

static vkf_status load(vkf_chat_prompt *p, const char *dir) {
  size_t n = strlen(dir) + 32, size = 0;
  char *path = malloc(n), *text = NULL;
  if (!path) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", dir);
  snprintf(path, n, "%s/tokenizer_config.json", dir);
  cJSON *config = NULL;
  vkf_status st = vkf_json_read_file(path, &text, &size);
  if (vkf_status_code_of(st) == VKF_STATUS_NOT_FOUND) {
    vkf_status_free(st);
    st = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: not found, so no chat template (chat needs an instruction-tuned "
                         "model that ships one)",
                         path);
  }
  if (!st) st = vkf_json_parse_object(text, size, path, &config);
  const char *body = st ? NULL : template_of(config);
  if (!st && !body)
    st = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: no chat_template (chat needs an instruction-tuned model whose "
                         "tokenizer_config.json or GGUF metadata has one)",
                         path);
  if (!st) {
    vkf_status ps = vkf_chat_template_parse(body, strlen(body), &p->tmpl);
    if (ps) {
      st = vkf_status_make(vkf_status_code_of(ps), "%s: chat_template: %s", path,
                           vkf_status_message(ps));
      vkf_status_free(ps);
    }
  }
  if (!st && !(p->vars = cJSON_CreateObject()))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  static const char *const names[] = {"bos_token", "eos_token", "unk_token", "pad_token"};
  for (size_t i = 0; !st && i < sizeof names / sizeof *names; i++) {
    const char *v = token_string(cJSON_GetObjectItemCaseSensitive(config, names[i]));
    if (v && !cJSON_AddStringToObject(p->vars, names[i], v))
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  }
  if (!st && !cJSON_AddBoolToObject(p->vars, "add_generation_prompt", 1))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  cJSON_Delete(config);
  free(text);
  free(path);
  return st;
}

vkf_status vkf_chat_prompt_load(const char *model_dir, vkf_chat_prompt **out) {
  *out = NULL;
  vkf_chat_prompt *p = calloc(1, sizeof *p);
  if (!p) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", model_dir);
  vkf_status st = load(p, model_dir);
  if (st) {
    vkf_chat_prompt_destroy(p);
    return st;
  }
  *out = p;
  return VKF_OK;
}

void vkf_chat_prompt_destroy(vkf_chat_prompt *p) {
  if (!p) return;
  vkf_chat_template_destroy(p->tmpl);
  cJSON_Delete(p->vars);
  free(p);
}

vkf_status vkf_chat_prompt_render(const vkf_chat_prompt *p, const char *messages_json, size_t size,
                                  char **out_text) {
  *out_text = NULL;
  cJSON *messages = cJSON_ParseWithLength(messages_json, size);
  if (!cJSON_IsArray(messages)) {
    cJSON_Delete(messages);
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "messages must be a JSON list of {\"role\", \"content\"} objects");
  }
  int i = 0;
  const cJSON *m;
  vkf_status st = VKF_OK;
  cJSON_ArrayForEach(m, messages) {
    if (!cJSON_IsObject(m) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m, "role")) ||
        !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m, "content"))) {
      st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "message %d is not an object with string \"role\" and \"content\"", i);
      break;
    }
    i++;
  }
  if (!st && !i) st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "no messages");
  if (!st) st = vkf_chat_template_render(p->tmpl, messages, p->vars, out_text, NULL);
  cJSON_Delete(messages);
  return st;
}
