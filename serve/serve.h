/* `vkf serve`: an OpenAI-compatible HTTP server over libmicrohttpd. Chat and text completions
 * (streamed as server-sent events as OpenAI sends them) from decoder models, embeddings from
 * BERT-family models, the model list, health and Prometheus metrics. Every device gets a replica
 * of every model and a worker thread that owns it; each decoder batches its requests
 * continuously (runtime/serve_slots.h). Prints nothing: log lines go to the options' callback. */
#ifndef VKF_SERVE_SERVE_H
#define VKF_SERVE_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct vkf_serve_options {
  /* folders or GGUF files, "PATH" or "NAME=PATH"; clients name them NAME, else by the path's
   * last part */
  const char *const *models;
  size_t model_count;
  const char *host;     /* address to bind; NULL: 127.0.0.1 */
  int port;             /* 0: a free port (vkf_serve_port) */
  const char *api_key;  /* NULL: none; else every /v1/ request needs "Authorization: Bearer KEY" */
  int64_t parallel;     /* sequences batched per decoder model and device; 0: 4 */
  int64_t ctx;          /* positions per sequence; 0: min(2048, what the model has) */
  const char *device;   /* NULL: VKF_DEVICE, then the best; "all": a replica on every device */
  int fp16;
  const char *quantize; /* NULL, or --quantize's formats */
  size_t max_body;      /* request body bytes; 0: 4 MiB */
  int64_t max_queue;    /* requests waiting per worker beyond the busy slots; 0: 64 */
  unsigned timeout_s;   /* idle connection timeout; 0: 60 */
  unsigned connections; /* concurrent connections; 0: 128 */
  unsigned client_connections; /* of one client address; 0: half of connections */
  unsigned request_timeout_s;  /* a request's head must arrive within this, its body within this
                                  again; 0: 30 */
  void (*log)(void *user, const char *line); /* NULL: no log */
  void *log_user;
} vkf_serve_options;

typedef struct vkf_server vkf_server;

/* Loads every model on every device, then listens. Errors name the model, device or address. */
vkf_status vkf_serve_start(const vkf_serve_options *options, vkf_server **out);
/* The port it listens on. */
uint16_t vkf_serve_port(const vkf_server *server);
/* Stops accepting connections, lets the requests in flight finish for up to grace_s seconds,
 * cancels the rest, closes every connection and frees everything. Returns the number of messages
 * the validation layer reported on the devices (0 when it is off). */
uint32_t vkf_serve_stop(vkf_server *server, double grace_s);

#endif
