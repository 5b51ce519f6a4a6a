/* What the server's files share: a request ("job") as the HTTP side and the worker thread both see
 * it, the workers, and the server. Private to serve/. */
#ifndef VKF_SERVE_SERVE_INTERNAL_H
#define VKF_SERVE_SERVE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "models/generate/generation_config.h"
#include "models/registry/model.h"
#include "text/chat_prompt.h"
#include "text/text_tokenizer.h"
#include "text/wordpiece.h"
#include "runtime/device_open.h"
#include "runtime/serve_slots.h"
#include "serve/metrics.h"
#include "serve/serve.h"

/* SERVE_EMBED_BATCH: embedding inputs run per turn of a worker's loop (between decode steps) */
enum { SERVE_MAX_N = 8, SERVE_MAX_INPUTS = 2048, SERVE_MAX_END_IDS = 16, SERVE_EMBED_BATCH = 16 };

typedef enum serve_kind { SERVE_CHAT, SERVE_COMPLETION, SERVE_EMBEDDING } serve_kind;

struct serve_job;
/* One generated token with its log-probability and the likeliest alternatives, as text. */
typedef struct serve_logprob {
  char *token;
  float logprob;
  int top_count;
  char *top[VKF_SLOTS_MAX_TOP_LOGPROBS];
  float top_logprob[VKF_SLOTS_MAX_TOP_LOGPROBS];
} serve_logprob;

typedef struct serve_choice {
  struct serve_job *job;
  int index;
  char *text;
  size_t size, cap;
  const char *finish; /* "stop", "length"; NULL while running */
  int64_t tokens;
  int done;
  serve_logprob *lp; /* with logprobs: one per generated token */
  size_t lp_count, lp_cap;
  const vkf_text_tokenizer *tok; /* the worker's, for the tokens' text */
} serve_choice;

/* One API request. The HTTP thread fills the request part, the worker the result part; `mu`
 * guards the results, `refs` counts the two sides. */
typedef struct serve_job {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int refs;
  atomic_int cancelled;
  int fd; /* the client's socket (-1: none), polled for a hang-up while the job waits */
  struct vkf_server *srv;
  struct serve_job *next; /* a worker's queue */
  /* request */
  serve_kind kind;
  int model; /* index in the server's names */
  int stream, include_usage;
  char *messages; /* chat: the "messages" array as JSON */
  char *prompt;   /* completion */
  char **inputs;  /* embeddings */
  size_t input_count;
  int base64;
  int has_temperature, has_top_p, has_seed;
  int logprobs, top_logprobs; /* logprobs: 0 none, 1 asked */
  double temperature, top_p;
  uint64_t seed;
  int64_t max_tokens; /* 0: unset */
  char *stops[VKF_SLOTS_MAX_STOPS];
  size_t stop_count;
  int n;
  char id[48];
  long long created;
  /* results */
  int accepted; /* the prompt is in a scheduler: a stream may start */
  serve_choice ch[SERVE_MAX_N];
  int done_count, finished;
  int64_t prompt_tokens;
  int status; /* 0, or the HTTP status of an error */
  char *error;
  const char *error_type, *error_param, *error_code;
  float *embeddings; /* [input_count, dims] */
  size_t dims, embedded; /* embedded: inputs done (the worker's) */
  /* streaming (HTTP side, under mu) */
  size_t sent[SERVE_MAX_N], lp_sent[SERVE_MAX_N];
  int role_sent[SERVE_MAX_N], finish_sent[SERVE_MAX_N], usage_sent, done_sent;
  char *out;
  size_t out_size, out_cap, out_pos;
} serve_job;

/* One model on one worker's device. */
typedef struct serve_model {
  vkf_model *model;
  int embed; /* a BERT-family encoder: embeddings; else a decoder: completions */
  vkf_text_tokenizer *tok;
  vkf_wordpiece *wordpiece;
  vkf_chat_prompt *chat; /* NULL: the model has no chat template */
  vkf_generation_config gc;
  int64_t chat_end[SERVE_MAX_END_IDS];
  size_t chat_end_count;
  vkf_slots *slots;
} serve_model;

typedef struct serve_worker {
  struct vkf_server *srv;
  int index;
  pthread_t thread;
  int started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  serve_job *head, *tail;
  serve_job *embed_head, *embed_tail; /* embeddings requests under way (the thread's own) */
  int64_t queued; /* jobs handed over and not yet in a scheduler */
  int stop;
  vkf_rt_device dev;
  serve_model *models;
  atomic_llong load; /* requests queued or running: where the next one goes */
} serve_worker;

struct vkf_server {
  vkf_serve_options o;
  char **names; /* clients' names of the models */
  const char **paths; /* where they are */
  int model_count;
  serve_worker *workers;
  int worker_count;
  struct MHD_Daemon *mhd;
  struct serve_gate *gate;
  uint16_t port;
  atomic_int stopping;
  pthread_mutex_t jobs_mu; /* the jobs in flight, for cancelling on stop */
  serve_job **jobs;
  size_t job_count, job_cap;
  serve_metrics metrics;
};

/* serve/http.c: binds and starts the daemon and the gate (s->port set). */
vkf_status vkf_serve_http_start(struct vkf_server *s);
/* INVALID_ARGUMENT unless `host` (NULL: 127.0.0.1) is a numeric address. */
vkf_status vkf_serve_check_host(const char *host);
/* Stops the gate and the daemon, closing every connection. */
void vkf_serve_http_stop(struct vkf_server *s);
/* 1 when the client of socket `fd` has closed its end or reset (a request it no longer waits
 * for). */
int vkf_serve_client_gone(int fd);

/* serve/gate.c: accepts connections and checks each request's head before libmicrohttpd gets it */
struct sockaddr;
struct serve_gate;
vkf_status vkf_serve_gate_start(struct vkf_server *s, const struct sockaddr *addr,
                                unsigned addr_len, struct serve_gate **out);
uint16_t vkf_serve_gate_port(const struct serve_gate *g);
/* halt: the thread ends and the listening socket closes; stop: halts, then frees */
void vkf_serve_gate_halt(struct serve_gate *g);
void vkf_serve_gate_stop(struct serve_gate *g);
/* libmicrohttpd closed the connection from `addr` / when the gate accepted it (now if unknown) */
void vkf_serve_gate_closed(struct serve_gate *g, const struct sockaddr *addr);
double vkf_serve_gate_accepted(struct serve_gate *g, const struct sockaddr *addr);
unsigned vkf_serve_request_timeout(const struct vkf_server *s);
double vkf_serve_now(void); /* CLOCK_MONOTONIC seconds */

/* serve/worker.c */
vkf_status vkf_serve_worker_start(struct vkf_server *s, serve_worker *w);
/* Joins the thread, frees the models, closes the device: the validation messages it reported. */
uint32_t vkf_serve_worker_stop(serve_worker *w);
/* Hands a job to the least loaded worker; 0, or 429 when its queue is full. */
int vkf_serve_submit(struct vkf_server *s, serve_job *job);

/* serve/jobs.c */
serve_job *vkf_serve_job_new(struct vkf_server *s);
void vkf_serve_job_release(serve_job *job); /* drops a reference (mu not held) */
/* Records an error result (mu held by the caller or not yet shared). */
void vkf_serve_job_fail(serve_job *job, int status, const char *type, const char *param,
                        const char *code, const char *fmt, ...);
void vkf_serve_log(struct vkf_server *s, const char *fmt, ...);

/* serve/openai.c */
/* Parses a request body into `job` for the endpoint `kind`; 0, or an HTTP status with the error
 * recorded in the job. */
int vkf_serve_parse(struct vkf_server *s, serve_kind kind, const char *body, size_t size,
                    serve_job *job);
/* The JSON bodies (malloc'd). */
char *vkf_serve_error_json(const char *message, const char *type, const char *param,
                           const char *code);
char *vkf_serve_result_json(const serve_job *job);
char *vkf_serve_models_json(const struct vkf_server *s);
/* Appends to job->out the stream events that are ready (mu held); 1 when the stream is over. */
int vkf_serve_stream_events(serve_job *job);

#endif
