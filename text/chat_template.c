/* Chat template entry points: parse (lex + parse into the template's arena) and render (bind the
 * messages and variables, run the statements into a bounded buffer, all values in a per-render
 * arena freed in one call). */
#include "text/chat_template.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text/chat_template_internal.h"

vkf_status vkf_chat_template_parse(const char *source, size_t size, vkf_chat_template **out) {
  *out = NULL;
  if (!source && size) return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "chat template: no source");
  vkf_chat_template *t = calloc(1, sizeof *t);
  if (!t) return ct_oom();
  t->arena.limit = CT_MAX_ARENA;
  ct_token *toks;
  size_t count;
  vkf_status s = ct_lex(&t->arena, source ? source : "", size, &toks, &count);
  if (!s) s = ct_parse(&t->arena, toks, count, &t->root);
  if (s) {
    vkf_chat_template_destroy(t);
    return s;
  }
  *out = t;
  return VKF_OK;
}

void vkf_chat_template_destroy(vkf_chat_template *t) {
  if (!t) return;
  ct_arena_free(&t->arena);
  free(t);
}

static vkf_status bind_inputs(ct_ctx *c, const cJSON *messages, const cJSON *vars) {
  ct_dict *root = c->frames[0].vars;
  if (vars) {
    if (!cJSON_IsObject(vars))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "chat template: vars must be a JSON object");
    for (const cJSON *e = vars->child; e; e = e->next) {
      ct_value v;
      VKF_RETURN_IF_ERROR(ct_from_json(c->arena, e, 0, &v));
      size_t n = strlen(e->string ? e->string : "");
      char *key = ct_alloc(c->arena, n + 1);
      if (!key) return ct_oom();
      memcpy(key, e->string ? e->string : "", n + 1);
      if (!ct_dict_set(c->arena, root, (ct_str){key, n}, v)) return ct_oom();
    }
  }
  if (messages) {
    if (!cJSON_IsArray(messages))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "chat template: messages must be a JSON array");
    ct_value v;
    VKF_RETURN_IF_ERROR(ct_from_json(c->arena, messages, 0, &v));
    if (!ct_dict_set(c->arena, root, (ct_str){"messages", 8}, v)) return ct_oom();
  }
  return VKF_OK;
}

vkf_status vkf_chat_template_render_at(const vkf_chat_template *t, const cJSON *messages,
                                       const cJSON *vars, int64_t unix_time, char **out_text,
                                       size_t *out_size) {
  *out_text = NULL;
  if (out_size) *out_size = 0;
  ct_arena arena = {.limit = CT_MAX_ARENA};
  ct_buf out = {.limit = CT_MAX_OUTPUT};
  ct_ctx c = {.arena = &arena, .out = &out, .tmpl = t, .now = unix_time};
  c.cap_frames = 8 * CT_MAX_DEPTH + 16;
  c.frames = ct_alloc(&arena, c.cap_frames * sizeof *c.frames);
  vkf_status s = VKF_OK;
  ct_dict *root = c.frames ? ct_dict_new(&arena, 8) : NULL;
  if (!root) s = ct_oom();
  if (!s) {
    c.frames[0].vars = root;
    c.n_frames = 1;
    s = bind_inputs(&c, messages, vars);
  }
  int control = 0;
  if (!s) s = ct_render_body(&c, &t->root, &control);
  if (!s && out.failed) s = ct_oom();
  ct_arena_free(&arena);
  if (s) {
    free(out.data);
    return s;
  }
  if (!out.data) {
    out.data = calloc(1, 1);
    if (!out.data) return ct_oom();
  }
  *out_text = out.data;
  if (out_size) *out_size = out.size;
  return VKF_OK;
}

vkf_status vkf_chat_template_render(const vkf_chat_template *t, const cJSON *messages,
                                    const cJSON *vars, char **out_text, size_t *out_size) {
  return vkf_chat_template_render_at(t, messages, vars, (int64_t)time(NULL), out_text, out_size);
}
