/* The HTTP side, on libmicrohttpd with a thread per connection (so a connection may wait for its
 * job) behind the gate (serve/gate.c, which accepts and checks the heads): bodies read up to the
 * bound and the deadline, routes, the API key, JSON answers, and streams as server-sent events
 * from a content-reader callback that waits for the worker's text. A connection carries one
 * request; while it waits, the client's hang-up cancels its job. */
#define _GNU_SOURCE /* accept4, pipe2, POLLRDHUP */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "serve/serve_internal.h"

typedef struct conn {
  char *body;
  size_t size, cap;
  int too_big, answered;
  int fd;    /* the client's socket */
  double t0; /* accepted */
} conn;

int vkf_serve_client_gone(int fd) {
  if (fd < 0) return 0;
  struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
  if (poll(&p, 1, 0) <= 0) return 0;
  if (p.revents & (POLLERR | POLLHUP | POLLRDHUP)) return 1;
  char b;
  ssize_t r = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static int respond(struct vkf_server *s, struct MHD_Connection *c, serve_endpoint ep, int status,
                   char *body, const char *type, const char *method, const char *url) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(body ? strlen(body) : 0, body, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close"); /* the gate sees every head */
  if (status == 401) MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
  enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
  MHD_destroy_response(r);
  vkf_serve_metrics_request(&s->metrics, ep, status);
  vkf_serve_log(s, "%s %s %d", method, url, status);
  return ok;
}

static int respond_error(struct vkf_server *s, struct MHD_Connection *c, serve_endpoint ep,
                         int status, const char *type, const char *param, const char *code,
                         const char *message, const char *method, const char *url) {
  return respond(s, c, ep, status, vkf_serve_error_json(message, type, param, code),
                 "application/json", method, url);
}

static int respond_job_error(struct vkf_server *s, struct MHD_Connection *c, serve_endpoint ep,
                             serve_job *j, const char *method, const char *url) {
  return respond_error(s, c, ep, j->status, j->error_type, j->error_param, j->error_code,
                       j->error, method, url);
}

/* The stream: events as the worker's text arrives; blocks (this connection's own thread). */
static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  serve_job *j = cls;
  /* libmicrohttpd counts the time spent here as the connection's idle time: a wait for the next
   * token longer than half the idle timeout sends an SSE comment, which clients skip */
  unsigned timeout = j->srv->o.timeout_s ? j->srv->o.timeout_s : 60;
  time_t waited_since = time(NULL);
  pthread_mutex_lock(&j->mu);
  for (;;) {
    if (j->out_pos < j->out_size) {
      size_t n = j->out_size - j->out_pos < max ? j->out_size - j->out_pos : max;
      memcpy(buf, j->out + j->out_pos, n);
      j->out_pos += n;
      if (j->out_pos == j->out_size) j->out_pos = j->out_size = 0;
      pthread_mutex_unlock(&j->mu);
      return (ssize_t)n;
    }
    if (j->done_sent) {
      pthread_mutex_unlock(&j->mu);
      return MHD_CONTENT_READER_END_OF_STREAM;
    }
    vkf_serve_stream_events(j);
    if (j->out_size) continue;
    if (vkf_serve_client_gone(j->fd)) { /* before the next write would tell: cancel it now */
      atomic_store(&j->cancelled, 1);
      pthread_mutex_unlock(&j->mu);
      return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if ((unsigned)(time(NULL) - waited_since) * 2 >= timeout && max >= 14) {
      memcpy(buf, ": keep-alive\n\n", 14);
      pthread_mutex_unlock(&j->mu);
      return 14;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&j->cv, &j->mu, &until);
  }
}

/* The response is gone: sent, or the client went away, which cancels the job. */
static void stream_gone(void *cls) {
  serve_job *j = cls;
  atomic_store(&j->cancelled, 1);
  vkf_serve_job_release(j);
}

static int run_job(struct vkf_server *s, struct MHD_Connection *c, serve_endpoint ep,
                   serve_kind kind, conn *k, const char *method, const char *url) {
  serve_job *j = vkf_serve_job_new(s);
  if (j) j->fd = k->fd;
  if (!j) return respond_error(s, c, ep, 500, "server_error", NULL, NULL, "out of memory", method, url);
  int status = vkf_serve_parse(s, kind, k->body ? k->body : "", k->size, j);
  if (!status && (status = vkf_serve_submit(s, j)))
    vkf_serve_job_fail(j, 429, "rate_limit_error", NULL, "queue_full",
                       "the server's queue is full; retry later");
  if (status) {
    int r = respond_job_error(s, c, ep, j, method, url);
    vkf_serve_job_release(j);
    return r;
  }
  pthread_mutex_lock(&j->mu);
  /* a stream starts once the worker accepted the prompt; errors before that are plain answers.
   * A client that hangs up meanwhile cancels the job: the worker drops it at its next step. */
  while (!j->finished && !(j->stream && j->accepted)) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&j->cv, &j->mu, &until);
    if (!atomic_load(&j->cancelled) && vkf_serve_client_gone(k->fd)) atomic_store(&j->cancelled, 1);
  }
  int failed = j->status != 0 && (j->finished || !j->stream);
  pthread_mutex_unlock(&j->mu);
  if (failed || !j->stream) {
    int r = failed ? respond_job_error(s, c, ep, j, method, url)
                   : respond(s, c, ep, 200, vkf_serve_result_json(j), "application/json", method, url);
    vkf_serve_job_release(j);
    return r;
  }
  struct MHD_Response *r =
      MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, read_stream, j, stream_gone);
  if (!r) {
    atomic_store(&j->cancelled, 1);
    vkf_serve_job_release(j);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  enum MHD_Result ok = MHD_queue_response(c, 200, r);
  MHD_destroy_response(r);
  vkf_serve_metrics_request(&s->metrics, ep, 200);
  vkf_serve_log(s, "%s %s 200 (stream)", method, url);
  return ok;
}

static int authorized(const struct vkf_server *s, struct MHD_Connection *c) {
  if (!s->o.api_key) return 1;
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  if (!h || strncasecmp(h, "Bearer", 6) || (h[6] != ' ' && h[6] != '\t')) return 0;
  h += 6; /* the scheme is case-insensitive (RFC 9110 11.1), then one or more spaces */
  while (*h == ' ' || *h == '\t') h++;
  return !strcmp(h, s->o.api_key);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls) {
  (void)version;
  struct vkf_server *s = cls;
  size_t max_body = s->o.max_body ? s->o.max_body : (size_t)4 << 20;
  conn *k = *con_cls;
  if (!k) {
    if (!(k = calloc(1, sizeof *k))) return MHD_NO;
    *con_cls = k;
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    k->fd = fd ? fd->connect_fd : -1;
    k->t0 = ad && s->gate ? vkf_serve_gate_accepted(s->gate, ad->client_addr) : vkf_serve_now();
    const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (len && strtoull(len, NULL, 10) > max_body) {
      k->answered = 1; /* refused before reading it: MHD closes the connection after */
      char msg[128];
      snprintf(msg, sizeof msg, "the request body is larger than %zu bytes", max_body);
      return respond_error(s, c, SERVE_EP_OTHER, 413, "invalid_request_error", NULL, NULL, msg,
                           method, url);
    }
    return MHD_YES;
  }
  if (*upload_size) {
    /* the whole request within twice --request-timeout of the accept: the head had one, the
     * body gets the other; a body trickled in past it loses the connection */
    if (vkf_serve_now() - k->t0 > 2.0 * vkf_serve_request_timeout(s)) {
      vkf_serve_log(s, "%s %s: the body took longer than --request-timeout; closed", method, url);
      vkf_serve_metrics_request(&s->metrics, SERVE_EP_OTHER, 408);
      return MHD_NO;
    }
    if (!k->too_big && k->size + *upload_size <= max_body) {
      if (k->size + *upload_size + 1 > k->cap) {
        size_t want = (k->size + *upload_size) * 2 + 1;
        if (want > max_body + 1) want = max_body + 1;
        char *b = realloc(k->body, want);
        if (!b) return MHD_NO;
        k->body = b;
        k->cap = want;
      }
      memcpy(k->body + k->size, upload, *upload_size);
      k->size += *upload_size;
    } else {
      k->too_big = 1;
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (k->answered) return MHD_YES;
  k->answered = 1;
  if (k->too_big) {
    char msg[128];
    snprintf(msg, sizeof msg, "the request body is larger than %zu bytes", max_body);
    return respond_error(s, c, SERVE_EP_OTHER, 413, "invalid_request_error", NULL, NULL, msg,
                         method, url);
  }
  static const struct {
    const char *path, *method;
    serve_endpoint ep;
  } routes[] = {{"/v1/chat/completions", "POST", SERVE_EP_CHAT},
                {"/v1/completions", "POST", SERVE_EP_COMPLETIONS},
                {"/v1/embeddings", "POST", SERVE_EP_EMBEDDINGS},
                {"/v1/models", "GET", SERVE_EP_MODELS},
                {"/health", "GET", SERVE_EP_HEALTH},
                {"/metrics", "GET", SERVE_EP_METRICS}};
  int route = -1;
  for (size_t i = 0; i < sizeof routes / sizeof *routes; i++)
    if (!strcmp(url, routes[i].path)) route = (int)i;
  char msg[256];
  if (route < 0) {
    snprintf(msg, sizeof msg, "Unknown request URL: %s %.160s", method, url);
    return respond_error(s, c, SERVE_EP_OTHER, 404, "invalid_request_error", NULL,
                         "unknown_url", msg, method, url);
  }
  serve_endpoint ep = routes[route].ep;
  if (strcmp(method, routes[route].method)) {
    snprintf(msg, sizeof msg, "%s takes %s, not %.16s", url, routes[route].method, method);
    return respond_error(s, c, ep, 405, "invalid_request_error", NULL, "method_not_allowed", msg,
                         method, url);
  }
  if (!strncmp(url, "/v1/", 4) && !authorized(s, c))
    return respond_error(s, c, ep, 401, "invalid_request_error", NULL, "invalid_api_key",
                         "Incorrect API key provided (send Authorization: Bearer KEY)", method,
                         url);
  if (ep == SERVE_EP_HEALTH) {
    int stopping = atomic_load(&s->stopping);
    return respond(s, c, ep, stopping ? 503 : 200,
                   strdup(stopping ? "{\"status\":\"stopping\"}" : "{\"status\":\"ok\"}"),
                   "application/json", method, url);
  }
  if (ep == SERVE_EP_METRICS)
    return respond(s, c, ep, 200, vkf_serve_metrics_render(&s->metrics),
                   "text/plain; version=0.0.4", method, url);
  if (ep == SERVE_EP_MODELS)
    return respond(s, c, ep, 200, vkf_serve_models_json(s), "application/json", method, url);
  if (atomic_load(&s->stopping))
    return respond_error(s, c, ep, 503, "server_error", NULL, NULL, "the server is stopping",
                         method, url);
  serve_kind kind = ep == SERVE_EP_CHAT          ? SERVE_CHAT
                    : ep == SERVE_EP_COMPLETIONS ? SERVE_COMPLETION
                                                 : SERVE_EMBEDDING;
  return run_job(s, c, ep, kind, k, method, url);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode code) {
  (void)cls, (void)c, (void)code;
  conn *k = *con_cls;
  if (!k) return;
  free(k->body);
  free(k);
  *con_cls = NULL;
}

/* libmicrohttpd closed a connection the gate handed over */
static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
  (void)socket_context;
  struct vkf_server *s = cls;
  if (code != MHD_CONNECTION_NOTIFY_CLOSED || !s->gate) return;
  const union MHD_ConnectionInfo *ad = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (ad) vkf_serve_gate_closed(s->gate, ad->client_addr);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
  struct vkf_server *s = cls;
  char line[512];
  vsnprintf(line, sizeof line, fmt, ap);
  size_t n = strlen(line);
  while (n && line[n - 1] == '\n') line[--n] = 0;
  vkf_serve_log(s, "vkf serve: %s", line);
}

vkf_status vkf_serve_check_host(const char *host) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_NUMERICHOST | AI_PASSIVE};
  struct addrinfo *ai = NULL;
  int rc = getaddrinfo(host ? host : "127.0.0.1", NULL, &hints, &ai);
  if (ai) freeaddrinfo(ai);
  if (rc || !ai)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "--host %s: not a numeric IPv4 or IPv6 address (%s)", host,
                           gai_strerror(rc));
  return VKF_OK;
}

vkf_status vkf_serve_http_start(struct vkf_server *s) {
  const char *host = s->o.host ? s->o.host : "127.0.0.1";
  char port[16];
  snprintf(port, sizeof port, "%d", s->o.port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_NUMERICHOST | AI_PASSIVE | AI_NUMERICSERV};
  struct addrinfo *ai = NULL;
  int rc = getaddrinfo(host, port, &hints, &ai);
  if (rc || !ai)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "--host %s: not a numeric IPv4 or IPv6 address (%s)", host,
                           gai_strerror(rc));
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                   MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET;
  if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  unsigned connections = s->o.connections ? s->o.connections : 128;
  s->mhd = MHD_start_daemon(
      flags, 0, NULL, NULL, answer, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
      /* the gate bounds the connections and heads: libmicrohttpd's own limits stay above */
      MHD_OPTION_CONNECTION_LIMIT, connections + 16,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)256 * 1024,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(s->o.timeout_s ? s->o.timeout_s : 60),
      MHD_OPTION_NOTIFY_COMPLETED, completed, s,
      MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s, MHD_OPTION_END);
  vkf_status st = VKF_OK;
  if (!s->mhd)
    st = vkf_status_make(VKF_STATUS_INTERNAL, "cannot start libmicrohttpd");
  else if ((st = vkf_serve_gate_start(s, ai->ai_addr, (unsigned)ai->ai_addrlen, &s->gate))) {
    vkf_status wrapped = vkf_status_make(VKF_STATUS_IO, "cannot listen on %s port %d (%s; in use, "
                                         "or not an address of this machine)", host, s->o.port,
                                         vkf_status_message(st));
    vkf_status_free(st);
    st = wrapped;
  }
  freeaddrinfo(ai);
  if (st) return st;
  s->port = vkf_serve_gate_port(s->gate);
  return VKF_OK;
}

void vkf_serve_http_stop(struct vkf_server *s) {
  /* no new connections (the gate's thread ends, so nothing more is handed to the daemon); then
   * the daemon closes the open ones, whose close notifications still reach the gate */
  vkf_serve_gate_halt(s->gate);
  if (s->mhd) MHD_stop_daemon(s->mhd);
  s->mhd = NULL;
  vkf_serve_gate_stop(s->gate);
  s->gate = NULL;
}
