/* OpenAI's API as JSON: request bodies checked field by field into a job (a wrong type, a value
 * out of range or an option the engine does not have is a 400 naming the field), and the result,
 * error, model-list and stream-chunk bodies as OpenAI writes them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/formats/json_fields.h"
#include "serve/serve_internal.h"

#define BAD(field, ...)                                                                        \
  (vkf_serve_job_fail(job, 400, "invalid_request_error", field, NULL, __VA_ARGS__), 400)
/* a string that held "\u0000" (vkf_json_mark_nuls): refused rather than cut at the NUL */
#define NUL_IN(field, what)                                                                    \
  BAD(field, "%s holds a NUL character (\\u0000), which this server does not accept", what)

/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF); the offset of the first
 * bad byte, or -1. */
static long bad_utf8(const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = p[i];
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!len || i + len > n || (len == 2 && c < 0xC2) || (len == 4 && c > 0xF4)) return (long)i;
    for (size_t k = 1; k < len; k++)
      if ((p[i + k] & 0xC0) != 0x80) return (long)i;
    if (len == 3) {
      unsigned cp = (c & 0x0F) << 12 | (p[i + 1] & 0x3F) << 6 | (p[i + 2] & 0x3F);
      if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return (long)i;
    }
    if (len == 4) {
      unsigned cp = (c & 0x07) << 18 | (p[i + 1] & 0x3F) << 12 | (p[i + 2] & 0x3F) << 6;
      if (cp < 0x10000 || cp > 0x10FFFF) return (long)i;
    }
    i += len;
  }
  return -1;
}

static int model_index(const struct vkf_server *s, const char *name) {
  for (int i = 0; i < s->model_count; i++)
    if (!strcmp(s->names[i], name)) return i;
  for (int i = 0; i < s->model_count; i++) { /* "X.gguf" also answers to "X" */
    size_t n = strlen(name);
    if (!strncmp(s->names[i], name, n) && !strcmp(s->names[i] + n, ".gguf")) return i;
  }
  return -1;
}

/* An integer-valued JSON number within [lo, hi]. */
static int get_int(const cJSON *v, double lo, double hi, int64_t *out) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
      v->valuedouble < lo || v->valuedouble > hi)
    return 0;
  *out = (int64_t)v->valuedouble;
  return 1;
}

static int is_null(const cJSON *v) {
  return !v || cJSON_IsNull(v);
}

/* Options the engine has no implementation of: refused unless at their neutral value. */
static int unsupported(serve_job *job, const cJSON *root) {
  static const char *const zero[] = {"frequency_penalty", "presence_penalty"};
  for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, zero[i]);
    if (is_null(v)) continue;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > 2)
      return BAD(zero[i], "'%s' must be a number from -2 to 2", zero[i]);
    if (v->valuedouble != 0)
      return BAD(zero[i], "'%s' is not supported by this server (only 0)", zero[i]);
  }
  const cJSON *bias = cJSON_GetObjectItemCaseSensitive(root, "logit_bias");
  if (!is_null(bias) && (!cJSON_IsObject(bias) || bias->child))
    return BAD("logit_bias", "'logit_bias' is not supported by this server");
  static const char *const off[] = {"echo", "tools", "functions", "suffix", "response_format"};
  for (size_t i = 0; i < sizeof off / sizeof *off; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, off[i]);
    if (is_null(v) || cJSON_IsFalse(v) || (cJSON_IsArray(v) && !v->child)) continue;
    if (!strcmp(off[i], "response_format") && cJSON_IsObject(v)) {
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "type");
      if (cJSON_IsString(t) && !strcmp(t->valuestring, "text")) continue;
    }
    return BAD(off[i], "'%s' is not supported by this server", off[i]);
  }
  int64_t best_of = 1;
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "best_of");
  if (!is_null(b) && (!get_int(b, 1, 1, &best_of)))
    return BAD("best_of", "'best_of' is not supported by this server (only 1)");
  return 0;
}

static int parse_sampling(serve_job *job, const cJSON *root, serve_kind kind) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "temperature");
  if (!is_null(v)) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 2))
      return BAD("temperature", "'temperature' must be a number from 0 to 2");
    job->has_temperature = 1;
    job->temperature = v->valuedouble;
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "top_p");
  if (!is_null(v)) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble <= 1))
      return BAD("top_p", "'top_p' must be a number above 0 and at most 1");
    job->has_top_p = v->valuedouble < 1;
    job->top_p = v->valuedouble;
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "seed");
  if (!is_null(v)) {
    int64_t seed = 0;
    if (!get_int(v, -9007199254740992.0, 9007199254740992.0, &seed))
      return BAD("seed", "'seed' must be an integer");
    job->has_seed = 1;
    job->seed = (uint64_t)seed;
  }
  const char *mt = kind == SERVE_CHAT && cJSON_GetObjectItemCaseSensitive(root, "max_completion_tokens")
                       ? "max_completion_tokens"
                       : "max_tokens";
  v = cJSON_GetObjectItemCaseSensitive(root, mt);
  if (!is_null(v) && !get_int(v, 1, 1e9, &job->max_tokens))
    return BAD(mt, "'%s' must be an integer from 1 up", mt);
  if (kind == SERVE_COMPLETION && is_null(v)) job->max_tokens = 16; /* OpenAI's default */
  v = cJSON_GetObjectItemCaseSensitive(root, "n");
  if (!is_null(v)) {
    int64_t n = 0;
    if (!get_int(v, 1, SERVE_MAX_N, &n)) return BAD("n", "'n' must be an integer from 1 to %d", SERVE_MAX_N);
    job->n = (int)n;
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "stop");
  if (cJSON_IsString(v)) {
    if (!*v->valuestring) return BAD("stop", "'stop' must not be empty");
    job->stops[job->stop_count++] = strdup(v->valuestring);
  } else if (cJSON_IsArray(v)) {
    if (cJSON_GetArraySize(v) > VKF_SLOTS_MAX_STOPS)
      return BAD("stop", "'stop' takes at most %d strings", VKF_SLOTS_MAX_STOPS);
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
      if (!cJSON_IsString(e) || !*e->valuestring)
        return BAD("stop", "'stop' must be a string or a list of non-empty strings");
      job->stops[job->stop_count++] = strdup(e->valuestring);
    }
  } else if (!is_null(v)) {
    return BAD("stop", "'stop' must be a string or a list of non-empty strings");
  }
  for (size_t i = 0; i < job->stop_count; i++)
    if (!job->stops[i]) return BAD("stop", "out of memory");
    else if (vkf_json_has_nul(job->stops[i])) return NUL_IN("stop", "'stop'");
  /* logprobs: chat takes a boolean and top_logprobs 0..20, completions an integer 0..5 */
  v = cJSON_GetObjectItemCaseSensitive(root, "logprobs");
  const cJSON *top = cJSON_GetObjectItemCaseSensitive(root, "top_logprobs");
  if (kind == SERVE_CHAT) {
    if (!is_null(v) && !cJSON_IsBool(v)) return BAD("logprobs", "'logprobs' must be a boolean");
    job->logprobs = cJSON_IsTrue(v);
    if (!is_null(top)) {
      int64_t t = 0;
      if (!get_int(top, 0, VKF_SLOTS_MAX_TOP_LOGPROBS, &t))
        return BAD("top_logprobs", "'top_logprobs' must be an integer from 0 to %d",
                   VKF_SLOTS_MAX_TOP_LOGPROBS);
      if (!job->logprobs)
        return BAD("top_logprobs", "'top_logprobs' needs 'logprobs' set to true");
      job->top_logprobs = (int)t;
    }
  } else if (!is_null(v)) {
    int64_t t = 0;
    if (!get_int(v, 0, 5, &t)) return BAD("logprobs", "'logprobs' must be an integer from 0 to 5");
    job->logprobs = 1;
    job->top_logprobs = (int)t;
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "stream");
  if (!is_null(v)) {
    if (!cJSON_IsBool(v)) return BAD("stream", "'stream' must be a boolean");
    job->stream = cJSON_IsTrue(v);
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "stream_options");
  if (!is_null(v)) {
    const cJSON *u = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "include_usage") : NULL;
    if (!cJSON_IsObject(v) || (!is_null(u) && !cJSON_IsBool(u)))
      return BAD("stream_options", "'stream_options' must be an object with a boolean include_usage");
    if (!job->stream)
      return BAD("stream_options", "'stream_options' is only allowed when 'stream' is true");
    job->include_usage = cJSON_IsTrue(u);
  }
  return 0;
}

/* The messages as the template renderer takes them: [{"role", "content"}] with text contents. */
static int parse_messages(serve_job *job, const cJSON *root) {
  const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
  if (!cJSON_IsArray(msgs) || !msgs->child)
    return BAD("messages", "'messages' must be a non-empty list of messages");
  cJSON *out = cJSON_CreateArray();
  const cJSON *m;
  int i = 0, err = 0;
  cJSON_ArrayForEach(m, msgs) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
    char field[64];
    snprintf(field, sizeof field, "messages[%d]", i);
    if (!cJSON_IsObject(m) || !cJSON_IsString(role)) {
      err = BAD("messages", "'%s' must be an object with a string 'role'", field);
      break;
    }
    if (vkf_json_has_nul(role->valuestring)) {
      char what[80];
      snprintf(what, sizeof what, "'%s.role'", field);
      err = NUL_IN("messages", what);
      break;
    }
    static const char *const roles[] = {"system", "developer", "user", "assistant", "tool"};
    int known = 0;
    for (size_t r = 0; r < sizeof roles / sizeof *roles; r++) known |= !strcmp(role->valuestring, roles[r]);
    if (!known) {
      err = BAD("messages", "'%s.role' is '%s'; expected system, developer, user, assistant or tool",
                field, role->valuestring);
      break;
    }
    char *text = NULL;
    if (cJSON_IsString(content)) {
      text = strdup(content->valuestring);
    } else if (cJSON_IsArray(content)) { /* content parts: the text ones, joined */
      size_t size = 0;
      text = calloc(1, 1);
      const cJSON *part;
      cJSON_ArrayForEach(part, content) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "text") || !cJSON_IsString(t)) {
          free(text);
          text = NULL;
          err = BAD("messages", "'%s.content': only text parts are supported", field);
          break;
        }
        size_t n = strlen(t->valuestring);
        char *grown = text ? realloc(text, size + n + 1) : NULL;
        if (!grown) {
          free(text);
          text = NULL;
          break;
        }
        text = grown;
        memcpy(text + size, t->valuestring, n + 1);
        size += n;
      }
      if (err) break;
    } else if (is_null(content) && !strcmp(role->valuestring, "assistant")) {
      text = strdup("");
    } else {
      err = BAD("messages", "'%s.content' must be a string or a list of text parts", field);
      break;
    }
    if (!text) {
      err = BAD("messages", "out of memory");
      break;
    }
    if (vkf_json_has_nul(text)) {
      char what[80];
      snprintf(what, sizeof what, "'%s.content'", field);
      err = NUL_IN("messages", what);
      free(text);
      break;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "role", !strcmp(role->valuestring, "developer") ? "system" : role->valuestring);
    cJSON_AddStringToObject(o, "content", text);
    cJSON_AddItemToArray(out, o);
    free(text);
    i++;
  }
  if (!err && !(job->messages = cJSON_PrintUnformatted(out))) err = BAD("messages", "out of memory");
  cJSON_Delete(out);
  return err;
}

static int parse_inputs(serve_job *job, const cJSON *root) {
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(root, "input");
  if (cJSON_IsString(in)) {
    job->inputs = calloc(1, sizeof *job->inputs);
    if (job->inputs && (job->inputs[0] = strdup(in->valuestring))) job->input_count = 1;
  } else if (cJSON_IsArray(in) && in->child) {
    int n = cJSON_GetArraySize(in);
    if (n > SERVE_MAX_INPUTS) return BAD("input", "'input' takes at most %d texts", SERVE_MAX_INPUTS);
    job->inputs = calloc((size_t)n, sizeof *job->inputs);
    const cJSON *e;
    cJSON_ArrayForEach(e, in) {
      if (!cJSON_IsString(e))
        return BAD("input", "'input' must be a string or a list of strings (token ids are not "
                            "supported)");
      if (!job->inputs || !(job->inputs[job->input_count] = strdup(e->valuestring))) break;
      job->input_count++;
    }
    if (job->input_count != (size_t)n) return BAD("input", "out of memory");
  } else {
    return BAD("input", "'input' must be a string or a non-empty list of strings");
  }
  if (!job->input_count) return BAD("input", "out of memory");
  for (size_t i = 0; i < job->input_count; i++)
    if (vkf_json_has_nul(job->inputs[i])) {
      char what[48];
      snprintf(what, sizeof what, "'input[%zu]'", i);
      return NUL_IN("input", what);
    }
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "encoding_format");
  if (!is_null(f)) {
    if (!cJSON_IsString(f) || (strcmp(f->valuestring, "float") && strcmp(f->valuestring, "base64")))
      return BAD("encoding_format", "'encoding_format' must be 'float' or 'base64'");
    job->base64 = !strcmp(f->valuestring, "base64");
  }
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "dimensions");
  if (!is_null(d)) return BAD("dimensions", "'dimensions' is not supported by this server");
  return 0;
}

int vkf_serve_parse(struct vkf_server *s, serve_kind kind, const char *body, size_t size,
                    serve_job *job) {
  job->kind = kind;
  long at = bad_utf8((const unsigned char *)body, size);
  if (at >= 0) return BAD(NULL, "the request body is not valid UTF-8 (byte %ld)", at);
  /* a copy with each "\u0000" marked: the fields that held one are refused by name below */
  char *marked = malloc(size + 1);
  if (!marked) return BAD(NULL, "out of memory");
  memcpy(marked, body, size);
  marked[size] = 0;
  vkf_json_mark_nuls(marked, size);
  body = marked;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(body, size, &end, 0);
  while (root && end && end < body + size && strchr(" \t\r\n", *end)) end++;
  if (root && end != body + size) { /* something after the document */
    cJSON_Delete(root);
    root = NULL;
  }
  if (!root) {
    long off = end ? (long)(end - body) : 0;
    free(marked);
    return BAD(NULL, "the request body is not valid JSON (near byte %ld)", off);
  }
  free(marked);
  int err = 0;
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
  if (!cJSON_IsObject(root)) {
    err = BAD(NULL, "the request body must be a JSON object");
  } else if (!cJSON_IsString(model)) {
    err = BAD("model", is_null(model) ? "you must provide a model parameter"
                                      : "'model' must be a string");
  } else if (vkf_json_has_nul(model->valuestring)) {
    err = NUL_IN("model", "'model'");
  } else if ((job->model = model_index(s, model->valuestring)) < 0) {
    vkf_serve_job_fail(job, 404, "invalid_request_error", "model", "model_not_found",
                       "The model '%s' does not exist", model->valuestring);
    err = 404;
  }
  if (!err && kind != SERVE_EMBEDDING) err = unsupported(job, root);
  if (!err && kind != SERVE_EMBEDDING) err = parse_sampling(job, root, kind);
  if (!err && kind == SERVE_CHAT) err = parse_messages(job, root);
  if (!err && kind == SERVE_COMPLETION) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "prompt");
    if (cJSON_IsArray(p) && cJSON_GetArraySize(p) == 1 && cJSON_IsString(p->child)) p = p->child;
    if (!cJSON_IsString(p))
      err = BAD("prompt", "'prompt' must be a string (lists of prompts and token ids are not "
                          "supported)");
    else if (vkf_json_has_nul(p->valuestring))
      err = NUL_IN("prompt", "'prompt'");
    else if (!(job->prompt = strdup(p->valuestring)))
      err = BAD("prompt", "out of memory");
  }
  if (!err && kind == SERVE_EMBEDDING) err = parse_inputs(job, root);
  cJSON_Delete(root);
  return err;
}

char *vkf_serve_error_json(const char *message, const char *type, const char *param,
                           const char *code) {
  cJSON *root = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(root, "error");
  cJSON_AddStringToObject(e, "message", message ? message : "");
  cJSON_AddStringToObject(e, "type", type ? type : "invalid_request_error");
  if (param)
    cJSON_AddStringToObject(e, "param", param);
  else
    cJSON_AddNullToObject(e, "param");
  if (code)
    cJSON_AddStringToObject(e, "code", code);
  else
    cJSON_AddNullToObject(e, "code");
  char *s = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return s;
}

static void add_usage(cJSON *o, int64_t prompt, int64_t completion) {
  cJSON *u = cJSON_AddObjectToObject(o, "usage");
  cJSON_AddNumberToObject(u, "prompt_tokens", (double)prompt);
  cJSON_AddNumberToObject(u, "completion_tokens", (double)completion);
  cJSON_AddNumberToObject(u, "total_tokens", (double)(prompt + completion));
}

static cJSON *envelope(const serve_job *job, const char *object) {
  cJSON *o = cJSON_CreateObject();
  char id[64];
  snprintf(id, sizeof id, "%s-%s", job->kind == SERVE_CHAT ? "chatcmpl" : "cmpl", job->id);
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "object", object);
  cJSON_AddNumberToObject(o, "created", (double)job->created);
  cJSON_AddStringToObject(o, "model", job->srv->names[job->model]);
  return o;
}

static void base64(const unsigned char *p, size_t n, char *out) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    out[o++] = t[v >> 18 & 63];
    out[o++] = t[v >> 12 & 63];
    out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
    out[o++] = i + 2 < n ? t[v & 63] : '=';
  }
  out[o] = 0;
}

static char *embeddings_json(const serve_job *job) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "object", "list");
  cJSON *data = cJSON_AddArrayToObject(root, "data");
  char *b64 = job->base64 ? malloc(4 * ((job->dims * 4 + 2) / 3) + 1) : NULL;
  for (size_t i = 0; i < job->input_count; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "object", "embedding");
    cJSON_AddNumberToObject(e, "index", (double)i);
    const float *v = job->embeddings + i * job->dims;
    if (b64) {
      unsigned char *bytes = malloc(job->dims * 4 + 1);
      for (size_t k = 0; bytes && k < job->dims; k++) memcpy(bytes + 4 * k, &v[k], 4);
      if (bytes) base64(bytes, job->dims * 4, b64);
      free(bytes);
      cJSON_AddStringToObject(e, "embedding", b64);
    } else {
      cJSON *arr = cJSON_AddArrayToObject(e, "embedding");
      for (size_t k = 0; k < job->dims; k++) cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[k]));
    }
    cJSON_AddItemToArray(data, e);
  }
  free(b64);
  cJSON_AddStringToObject(root, "model", job->srv->names[job->model]);
  cJSON *u = cJSON_AddObjectToObject(root, "usage");
  cJSON_AddNumberToObject(u, "prompt_tokens", (double)job->prompt_tokens);
  cJSON_AddNumberToObject(u, "total_tokens", (double)job->prompt_tokens);
  char *s = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return s;
}

static cJSON *utf8_bytes(const char *t) {
  cJSON *a = cJSON_CreateArray();
  for (const unsigned char *p = (const unsigned char *)t; *p; p++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber(*p));
  return a;
}

static size_t chars(const char *t) { /* code points of UTF-8 text */
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)t; *p; p++) n += (*p & 0xC0) != 0x80;
  return n;
}

/* The "logprobs" object of entries [from, to) of choice c: chat's {"content": [...]} or the
 * completions' {"tokens", "token_logprobs", "top_logprobs", "text_offset"}; null without them. */
static cJSON *logprobs_json(const serve_job *job, const serve_choice *c, size_t from, size_t to) {
  if (!job->logprobs) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  if (job->kind == SERVE_CHAT) {
    cJSON *content = cJSON_AddArrayToObject(o, "content");
    for (size_t k = from; k < to; k++) {
      const serve_logprob *e = &c->lp[k];
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "token", e->token);
      cJSON_AddNumberToObject(x, "logprob", e->logprob);
      cJSON_AddItemToObject(x, "bytes", utf8_bytes(e->token));
      cJSON *tops = cJSON_AddArrayToObject(x, "top_logprobs");
      for (int t = 0; t < e->top_count; t++) {
        cJSON *y = cJSON_CreateObject();
        cJSON_AddStringToObject(y, "token", e->top[t]);
        cJSON_AddNumberToObject(y, "logprob", e->top_logprob[t]);
        cJSON_AddItemToObject(y, "bytes", utf8_bytes(e->top[t]));
        cJSON_AddItemToArray(tops, y);
      }
      cJSON_AddItemToArray(content, x);
    }
    cJSON_AddNullToObject(o, "refusal");
    return o;
  }
  cJSON *tokens = cJSON_AddArrayToObject(o, "tokens");
  cJSON *lps = cJSON_AddArrayToObject(o, "token_logprobs");
  cJSON *tops = cJSON_AddArrayToObject(o, "top_logprobs");
  cJSON *offsets = cJSON_AddArrayToObject(o, "text_offset");
  size_t at = chars(job->prompt ? job->prompt : ""); /* offsets count from the prompt's start */
  for (size_t k = 0; k < to; k++) {
    const serve_logprob *e = &c->lp[k];
    if (k >= from) {
      cJSON_AddItemToArray(tokens, cJSON_CreateString(e->token));
      cJSON_AddItemToArray(lps, cJSON_CreateNumber(e->logprob));
      cJSON *d = cJSON_CreateObject();
      for (int t = 0; t < e->top_count; t++)
        if (!cJSON_GetObjectItemCaseSensitive(d, e->top[t])) /* two ids, one text: the likelier */
          cJSON_AddNumberToObject(d, e->top[t], e->top_logprob[t]);
      cJSON_AddItemToArray(tops, d);
      cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)at));
    }
    at += chars(e->token);
  }
  return o;
}

char *vkf_serve_result_json(const serve_job *job) {
  if (job->kind == SERVE_EMBEDDING) return embeddings_json(job);
  int chat = job->kind == SERVE_CHAT;
  cJSON *root = envelope(job, chat ? "chat.completion" : "text_completion");
  cJSON *choices = cJSON_AddArrayToObject(root, "choices");
  int64_t completion = 0;
  for (int i = 0; i < job->n; i++) {
    const serve_choice *c = &job->ch[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", i);
    if (chat) {
      cJSON *m = cJSON_AddObjectToObject(o, "message");
      cJSON_AddStringToObject(m, "role", "assistant");
      cJSON_AddStringToObject(m, "content", c->text ? c->text : "");
    } else {
      cJSON_AddStringToObject(o, "text", c->text ? c->text : "");
    }
    cJSON_AddItemToObject(o, "logprobs", logprobs_json(job, c, 0, c->lp_count));
    cJSON_AddStringToObject(o, "finish_reason", c->finish ? c->finish : "stop");
    cJSON_AddItemToArray(choices, o);
    completion += c->tokens;
  }
  add_usage(root, job->prompt_tokens, completion);
  char *s = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return s;
}

char *vkf_serve_models_json(const struct vkf_server *s) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "object", "list");
  cJSON *data = cJSON_AddArrayToObject(root, "data");
  for (int i = 0; i < s->model_count; i++) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "id", s->names[i]);
    cJSON_AddStringToObject(m, "object", "model");
    cJSON_AddNumberToObject(m, "created", 0);
    cJSON_AddStringToObject(m, "owned_by", "vkformer");
    cJSON_AddItemToArray(data, m);
  }
  char *out = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return out;
}

static int out_append(serve_job *job, const char *a, size_t n) {
  if (job->out_size + n + 1 > job->out_cap) {
    size_t want = job->out_cap * 2 + n + 1024;
    char *o = realloc(job->out, want);
    if (!o) return 0;
    job->out = o;
    job->out_cap = want;
  }
  memcpy(job->out + job->out_size, a, n);
  job->out_size += n;
  return 1;
}

static void event(serve_job *job, cJSON *root) {
  char *s = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!s) return;
  out_append(job, "data: ", 6);
  out_append(job, s, strlen(s));
  out_append(job, "\n\n", 2);
  free(s);
}

/* One chunk of choice i: a delta (chat) or text, and a finish reason or null. */
static void chunk(serve_job *job, int i, const char *role, const char *text, size_t size,
                  const char *finish, size_t lp_from, size_t lp_to) {
  int chat = job->kind == SERVE_CHAT;
  cJSON *root = envelope(job, chat ? "chat.completion.chunk" : "text_completion");
  cJSON *choices = cJSON_AddArrayToObject(root, "choices");
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "index", i);
  char *t = malloc(size + 1);
  if (t) {
    memcpy(t, text, size);
    t[size] = 0;
  }
  if (chat) {
    cJSON *d = cJSON_AddObjectToObject(o, "delta");
    if (role) cJSON_AddStringToObject(d, "role", role);
    if (role || size) cJSON_AddStringToObject(d, "content", t ? t : "");
  } else {
    cJSON_AddStringToObject(o, "text", t ? t : "");
  }
  free(t);
  if (lp_to > lp_from)
    cJSON_AddItemToObject(o, "logprobs", logprobs_json(job, &job->ch[i], lp_from, lp_to));
  else
    cJSON_AddNullToObject(o, "logprobs");
  if (finish)
    cJSON_AddStringToObject(o, "finish_reason", finish);
  else
    cJSON_AddNullToObject(o, "finish_reason");
  cJSON_AddItemToArray(choices, o);
  event(job, root);
}

int vkf_serve_stream_events(serve_job *job) {
  if (job->done_sent) return 1;
  if (job->status) { /* an error after the stream started: one error event, then the end */
    char *e = vkf_serve_error_json(job->error, job->error_type, job->error_param, job->error_code);
    if (e) {
      out_append(job, "data: ", 6);
      out_append(job, e, strlen(e));
      out_append(job, "\n\n", 2);
      free(e);
    }
    out_append(job, "data: [DONE]\n\n", 14);
    job->done_sent = 1;
    return 1;
  }
  int finished = 1;
  int64_t completion = 0;
  for (int i = 0; i < job->n; i++) {
    serve_choice *c = &job->ch[i];
    if (job->kind == SERVE_CHAT && !job->role_sent[i]) {
      chunk(job, i, "assistant", "", 0, NULL, 0, 0);
      job->role_sent[i] = 1;
    }
    if (c->size > job->sent[i] || c->lp_count > job->lp_sent[i]) {
      chunk(job, i, NULL, c->text + job->sent[i], c->size - job->sent[i], NULL, job->lp_sent[i],
            c->lp_count);
      job->sent[i] = c->size;
      job->lp_sent[i] = c->lp_count;
    }
    if (c->done && !job->finish_sent[i]) {
      chunk(job, i, NULL, "", 0, c->finish ? c->finish : "stop", 0, 0);
      job->finish_sent[i] = 1;
    }
    finished &= job->finish_sent[i];
    completion += c->tokens;
  }
  if (!finished) return 0;
  if (job->include_usage && !job->usage_sent) {
    cJSON *root = envelope(job, job->kind == SERVE_CHAT ? "chat.completion.chunk" : "text_completion");
    cJSON_AddArrayToObject(root, "choices");
    add_usage(root, job->prompt_tokens, completion);
    event(job, root);
    job->usage_sent = 1;
  }
  out_append(job, "data: [DONE]\n\n", 14);
  job->done_sent = 1;
  return 1;
}
