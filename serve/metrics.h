/* The server's counters and gauges, updated from any thread, rendered as Prometheus' text format
 * for GET /metrics. */
#ifndef VKF_SERVE_METRICS_H
#define VKF_SERVE_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { SERVE_ENDPOINTS = 7, SERVE_STATUS_CLASSES = 5 };

typedef enum serve_endpoint {
  SERVE_EP_CHAT,
  SERVE_EP_COMPLETIONS,
  SERVE_EP_EMBEDDINGS,
  SERVE_EP_MODELS,
  SERVE_EP_HEALTH,
  SERVE_EP_METRICS,
  SERVE_EP_OTHER,
} serve_endpoint;

typedef struct serve_metrics {
  atomic_llong requests[SERVE_ENDPOINTS][SERVE_STATUS_CLASSES]; /* by status class 1xx..5xx */
  atomic_llong prompt_tokens, completion_tokens, embedded_inputs;
  atomic_llong steps, step_rows; /* device steps of the decoders and the sequences they ran */
  atomic_llong step_tokens, step_plan_rows; /* the tokens those steps ran, the rows computed */
  atomic_llong running, queued;  /* gauges: sequences in slots, requests waiting */
  atomic_llong in_flight;        /* gauge: requests being handled */
  atomic_llong device_bytes;     /* gauge */
  atomic_llong step_ns;          /* time in decoder steps */
  double started;                /* CLOCK_MONOTONIC seconds */
  /* tokens/s over the last window (guarded by window_mu in the renderer) */
  double window_t;
  long long window_tokens;
  double tokens_per_s;
} serve_metrics;

void vkf_serve_metrics_init(serve_metrics *m);
void vkf_serve_metrics_request(serve_metrics *m, serve_endpoint ep, int status);
/* The Prometheus text (malloc'd). */
char *vkf_serve_metrics_render(serve_metrics *m);

#endif
