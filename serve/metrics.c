/* Prometheus' text exposition format, version 0.0.4: HELP and TYPE lines, then samples. */
#include "serve/metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static pthread_mutex_t window_mu = PTHREAD_MUTEX_INITIALIZER;

void vkf_serve_metrics_init(serve_metrics *m) {
  memset(m, 0, sizeof *m);
  m->started = now_s();
  m->window_t = m->started;
}

void vkf_serve_metrics_request(serve_metrics *m, serve_endpoint ep, int status) {
  int cls = status / 100 - 1;
  if (cls < 0 || cls >= SERVE_STATUS_CLASSES) cls = SERVE_STATUS_CLASSES - 1;
  atomic_fetch_add(&m->requests[ep][cls], 1);
}

typedef struct text {
  char *s;
  size_t size, cap;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char line[512];
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || !t->s) return;
  if (t->size + (size_t)n + 1 > t->cap) {
    size_t want = t->cap * 2 + (size_t)n + 1024;
    char *s = realloc(t->s, want);
    if (!s) {
      free(t->s);
      t->s = NULL;
      return;
    }
    t->s = s;
    t->cap = want;
  }
  memcpy(t->s + t->size, line, (size_t)n + 1);
  t->size += (size_t)n;
}

char *vkf_serve_metrics_render(serve_metrics *m) {
  static const char *const eps[SERVE_ENDPOINTS] = {"chat_completions", "completions", "embeddings",
                                                   "models", "health", "metrics", "other"};
  text t = {malloc(4096), 0, 4096};
  if (!t.s) return NULL;
  t.s[0] = 0;
  put(&t, "# HELP vkf_requests_total HTTP requests answered, by endpoint and status class.\n");
  put(&t, "# TYPE vkf_requests_total counter\n");
  for (int e = 0; e < SERVE_ENDPOINTS; e++)
    for (int c = 0; c < SERVE_STATUS_CLASSES; c++)
      put(&t, "vkf_requests_total{endpoint=\"%s\",status=\"%dxx\"} %lld\n", eps[e], c + 1,
          (long long)atomic_load(&m->requests[e][c]));
  long long completion = atomic_load(&m->completion_tokens);
  double now = now_s();
  pthread_mutex_lock(&window_mu);
  if (now - m->window_t >= 1.0) { /* tokens/s since the last scrape at least a second ago */
    m->tokens_per_s = (double)(completion - m->window_tokens) / (now - m->window_t);
    m->window_t = now;
    m->window_tokens = completion;
  }
  double tps = m->tokens_per_s;
  pthread_mutex_unlock(&window_mu);
  struct {
    const char *name, *type, *help;
    double value;
  } rows[] = {
      {"vkf_prompt_tokens_total", "counter", "Prompt tokens of the completions.",
       (double)atomic_load(&m->prompt_tokens)},
      {"vkf_completion_tokens_total", "counter", "Tokens generated.", (double)completion},
      {"vkf_embedded_inputs_total", "counter", "Texts embedded.",
       (double)atomic_load(&m->embedded_inputs)},
      {"vkf_tokens_per_second", "gauge",
       "Tokens generated per second between the last two scrapes a second or more apart.", tps},
      {"vkf_decode_steps_total", "counter", "Device steps of the decoders.",
       (double)atomic_load(&m->steps)},
      {"vkf_step_sequences_total", "counter",
       "Sequences advanced by those steps (divided by the steps: the mean batch size).",
       (double)atomic_load(&m->step_rows)},
      {"vkf_step_tokens_total", "counter",
       "Tokens those steps ran: prompt tokens and one a decoding sequence.",
       (double)atomic_load(&m->step_tokens)},
      {"vkf_step_plan_rows_total", "counter",
       "Rows the steps' plans computed: the tokens and the padding of the plan that held them.",
       (double)atomic_load(&m->step_plan_rows)},
      {"vkf_step_seconds_total", "counter", "Time in those steps.",
       (double)atomic_load(&m->step_ns) * 1e-9},
      {"vkf_requests_running", "gauge", "Sequences in a slot.", (double)atomic_load(&m->running)},
      {"vkf_requests_queued", "gauge", "Requests waiting for a slot.",
       (double)atomic_load(&m->queued)},
      {"vkf_requests_in_flight", "gauge", "Requests being handled (any endpoint).",
       (double)atomic_load(&m->in_flight)},
      {"vkf_device_memory_bytes", "gauge", "Device memory of the models' engines.",
       (double)atomic_load(&m->device_bytes)},
      {"vkf_uptime_seconds", "gauge", "Seconds since the server started.", now - m->started},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    put(&t, "# HELP %s %s\n# TYPE %s %s\n", rows[i].name, rows[i].help, rows[i].name, rows[i].type);
    put(&t, "%s %.17g\n", rows[i].name, rows[i].value);
  }
  return t.s;
}
