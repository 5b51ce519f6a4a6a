/* The gate in front of libmicrohttpd: this thread accepts the connections itself and reads each
 * request's head with MSG_PEEK (so the bytes stay for libmicrohttpd) before handing the socket
 * over. libmicrohttpd 0.9 answers a bad request line, an oversized URL or header, a negative
 * Content-Length or a missing Host with HTML bodies of its own and has no hook to change them,
 * and it counts a head trickled in line by line as active, never idle; here every such case gets
 * OpenAI's error JSON at once, a head must arrive whole within --request-timeout, and one client
 * address holds at most --client-connections. Each connection carries one request (the answers
 * say "Connection: close"), so every head passes the gate. */
#define _GNU_SOURCE /* accept4, pipe2, POLLRDHUP */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "serve/serve_internal.h"

enum {
  GATE_URL_MAX = 8 * 1024,    /* longer request targets: 414 */
  GATE_HEAD_MAX = 32 * 1024,  /* longer heads: 431 (libmicrohttpd gets 4x this, never reached) */
  GATE_LINGER_MS = 1000,      /* an error answer waits this long for the client to read it */
};

typedef struct gate_conn {
  int fd;
  int closing; /* answered: draining what the client still sends until it closes or the linger */
  double t0;   /* accepted (closing: answered) */
  double active; /* when its head last grew */
  size_t seen;   /* head bytes then */
  struct sockaddr_storage addr;
  socklen_t addr_len;
  char ip[INET6_ADDRSTRLEN];
} gate_conn;

typedef struct gate_open { /* handed to libmicrohttpd, until its close notification */
  char key[INET6_ADDRSTRLEN + 8]; /* ip:port */
  char ip[INET6_ADDRSTRLEN];
  double t0;
} gate_open;

struct serve_gate {
  struct vkf_server *srv;
  int listen_fd, wake[2];
  pthread_t thread;
  int started;
  atomic_int stop;
  pthread_mutex_t mu; /* `open` (libmicrohttpd's threads close connections) */
  gate_open *open;
  size_t open_count, open_cap;
  gate_conn *pending;
  size_t pending_count;
  char *buf;
};

double vkf_serve_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void addr_text(const struct sockaddr *a, char *ip, size_t ip_size, char *key,
                      size_t key_size) {
  unsigned port = 0;
  ip[0] = 0;
  if (a->sa_family == AF_INET) {
    const struct sockaddr_in *v4 = (const void *)a;
    inet_ntop(AF_INET, &v4->sin_addr, ip, (socklen_t)ip_size);
    port = ntohs(v4->sin_port);
  } else if (a->sa_family == AF_INET6) {
    const struct sockaddr_in6 *v6 = (const void *)a;
    inet_ntop(AF_INET6, &v6->sin6_addr, ip, (socklen_t)ip_size);
    port = ntohs(v6->sin6_port);
  }
  if (key) snprintf(key, key_size, "%s:%u", ip, port);
}

static unsigned limit_total(const struct vkf_server *s) {
  return s->o.connections ? s->o.connections : 128;
}

static unsigned limit_client(const struct vkf_server *s) {
  unsigned total = limit_total(s);
  return s->o.client_connections ? s->o.client_connections : (total + 1) / 2;
}

unsigned vkf_serve_request_timeout(const struct vkf_server *s) {
  return s->o.request_timeout_s ? s->o.request_timeout_s : 30;
}

/* Connections of `ip` (NULL: all), pending and handed over; g->mu held. */
static unsigned count(const struct serve_gate *g, const char *ip) {
  unsigned n = 0;
  for (size_t i = 0; i < g->pending_count; i++) n += !ip || !strcmp(g->pending[i].ip, ip);
  for (size_t i = 0; i < g->open_count; i++) n += !ip || !strcmp(g->open[i].ip, ip);
  return n;
}

/* An error answer written straight to the socket (it is small: the socket's buffer takes it),
 * counted and logged as the routes' answers are. */
static void answer_error(struct serve_gate *g, gate_conn *c, int status, const char *reason,
                         const char *code, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char *body = vkf_serve_error_json(msg, status >= 500 && status != 505 ? "server_error"
                                         : status == 429 ? "rate_limit_error"
                                                         : "invalid_request_error",
                                    NULL, code);
  char head[256];
  int n = snprintf(head, sizeof head,
                   "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                   "Connection: close\r\n\r\n",
                   status, reason, body ? strlen(body) : 0);
  (void)!send(c->fd, head, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (body) (void)!send(c->fd, body, strlen(body), MSG_NOSIGNAL | MSG_DONTWAIT);
  free(body);
  shutdown(c->fd, SHUT_WR);
  c->closing = 1;
  c->t0 = vkf_serve_now();
  vkf_serve_metrics_request(&g->srv->metrics, SERVE_EP_OTHER, status);
  vkf_serve_log(g->srv, "%s %d (%s)", c->ip, status, msg);
}

static void drop(struct serve_gate *g, size_t i) {
  close(g->pending[i].fd);
  pthread_mutex_lock(&g->mu);
  g->pending[i] = g->pending[--g->pending_count];
  pthread_mutex_unlock(&g->mu);
}

static int is_tchar(unsigned char c) { /* RFC 9110's token characters */
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Checks the head in buf[0, n): 0 while it is incomplete and fine so far, 1 when it is complete
 * and fine, -1 when it was answered with an error. */
static int check_head(struct serve_gate *g, gate_conn *c, const char *buf, size_t n) {
  const char *eol = memchr(buf, '\n', n);
  size_t line = eol ? (size_t)(eol - buf) : n;
  /* the request line: METHOD SP TARGET SP HTTP/1.x, judged as far as it has come */
  size_t m = 0;
  while (m < line && is_tchar((unsigned char)buf[m])) m++;
  if ((m < line && (buf[m] != ' ' || !m)) || (!eol && m == line && m > 32)) {
    answer_error(g, c, 400, "Bad Request", "bad_request_line",
                 "the request line is not METHOD TARGET HTTP/1.x");
    return -1;
  }
  if (!eol) {
    if (n > GATE_URL_MAX + 64) {
      answer_error(g, c, 414, "URI Too Long", "uri_too_long",
                   "the request URL is longer than %d bytes", GATE_URL_MAX);
      return -1;
    }
    return 0;
  }
  size_t end = line && buf[line - 1] == '\r' ? line - 1 : line;
  const char *sp = memchr(buf + m + 1, ' ', end > m + 1 ? end - m - 1 : 0);
  size_t target = sp ? (size_t)(sp - buf) - m - 1 : 0;
  if (target > GATE_URL_MAX) {
    answer_error(g, c, 414, "URI Too Long", "uri_too_long",
                 "the request URL is longer than %d bytes", GATE_URL_MAX);
    return -1;
  }
  if (!sp || !target || memchr(buf + m + 1, '\t', target) || buf + end - sp - 1 != 8 ||
      memcmp(sp + 1, "HTTP/", 5) || sp[6] < '0' || sp[6] > '9' || sp[7] != '.' || sp[8] < '0' ||
      sp[8] > '9') {
    answer_error(g, c, 400, "Bad Request", "bad_request_line",
                 "the request line is not METHOD TARGET HTTP/1.x");
    return -1;
  }
  if (sp[6] != '1' || (sp[8] != '0' && sp[8] != '1')) {
    answer_error(g, c, 505, "HTTP Version Not Supported", "http_version",
                 "HTTP/1.0 and HTTP/1.1 only");
    return -1;
  }
  int http11 = sp[8] == '1';
  /* the header fields, up to the empty line */
  size_t at = line + 1, complete = 0;
  int host = 0, has_length = 0, chunked = 0;
  unsigned long long length = 0;
  while (at < n) {
    const char *e = memchr(buf + at, '\n', n - at);
    if (!e) break;
    size_t len = (size_t)(e - buf) - at;
    if (len && buf[at + len - 1] == '\r') len--;
    if (!len) {
      complete = (size_t)(e - buf) + 1;
      break;
    }
    const char *h = buf + at, *colon = memchr(h, ':', len);
    size_t name = colon ? (size_t)(colon - h) : 0;
    for (size_t k = 0; k < name; k++)
      if (!is_tchar((unsigned char)h[k])) name = 0;
    if (!name) {
      answer_error(g, c, 400, "Bad Request", "bad_header",
                   "header line %.40s is not NAME: VALUE", h);
      return -1;
    }
    const char *v = colon + 1, *vend = h + len;
    while (v < vend && (*v == ' ' || *v == '\t')) v++;
    while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t')) vend--;
    if (name == 4 && !strncasecmp(h, "host", 4)) host = 1;
    if (name == 14 && !strncasecmp(h, "content-length", 14)) {
      unsigned long long x = 0;
      int digits = vend > v && vend - v <= 18;
      for (const char *p = v; digits && p < vend; p++) {
        digits = *p >= '0' && *p <= '9';
        x = x * 10 + (unsigned long long)(*p - '0');
      }
      if (!digits || (has_length && x != length)) {
        answer_error(g, c, 400, "Bad Request", "bad_content_length",
                     "Content-Length must be one non-negative integer, not '%.*s'",
                     (int)(vend - v > 40 ? 40 : vend - v), v);
        return -1;
      }
      has_length = 1;
      length = x;
    }
    if (name == 17 && !strncasecmp(h, "transfer-encoding", 17)) chunked = 1;
    at = (size_t)(e - buf) + 1;
  }
  if (!complete) {
    if (n > GATE_HEAD_MAX) {
      answer_error(g, c, 431, "Request Header Fields Too Large", "headers_too_large",
                   "the request headers are larger than %d bytes", GATE_HEAD_MAX);
      return -1;
    }
    return 0;
  }
  if (http11 && !host) {
    answer_error(g, c, 400, "Bad Request", "no_host", "an HTTP/1.1 request needs a Host header");
    return -1;
  }
  if (chunked) { /* refused at once rather than left to time out */
    answer_error(g, c, 411, "Length Required", "length_required",
                 "send the body with a Content-Length (chunked transfer encoding is not "
                 "supported)");
    return -1;
  }
  return 1;
}

static void hand_over(struct serve_gate *g, size_t i) {
  gate_conn c = g->pending[i];
  gate_open o = {.t0 = c.t0};
  addr_text((const struct sockaddr *)&c.addr, o.ip, sizeof o.ip, o.key, sizeof o.key);
  pthread_mutex_lock(&g->mu);
  g->pending[i] = g->pending[--g->pending_count];
  int listed = 0;
  if (g->open_count == g->open_cap) {
    size_t cap = g->open_cap ? 2 * g->open_cap : 64;
    gate_open *grown = realloc(g->open, cap * sizeof *grown);
    if (grown) g->open = grown, g->open_cap = cap;
  }
  if (g->open_count < g->open_cap) g->open[g->open_count++] = o, listed = 1;
  pthread_mutex_unlock(&g->mu);
  if (!listed) {
    close(c.fd);
    return;
  }
  /* libmicrohttpd closes the socket when it cannot take it */
  if (MHD_add_connection(g->srv->mhd, c.fd, (const struct sockaddr *)&c.addr, c.addr_len) != MHD_YES)
    vkf_serve_gate_closed(g, (const struct sockaddr *)&c.addr);
}

void vkf_serve_gate_closed(struct serve_gate *g, const struct sockaddr *addr) {
  char ip[INET6_ADDRSTRLEN], key[INET6_ADDRSTRLEN + 8];
  addr_text(addr, ip, sizeof ip, key, sizeof key);
  pthread_mutex_lock(&g->mu);
  for (size_t i = 0; i < g->open_count; i++)
    if (!strcmp(g->open[i].key, key)) {
      g->open[i] = g->open[--g->open_count];
      break;
    }
  pthread_mutex_unlock(&g->mu);
}

double vkf_serve_gate_accepted(struct serve_gate *g, const struct sockaddr *addr) {
  char ip[INET6_ADDRSTRLEN], key[INET6_ADDRSTRLEN + 8];
  addr_text(addr, ip, sizeof ip, key, sizeof key);
  double t0 = vkf_serve_now();
  pthread_mutex_lock(&g->mu);
  for (size_t i = 0; i < g->open_count; i++)
    if (!strcmp(g->open[i].key, key)) t0 = g->open[i].t0;
  pthread_mutex_unlock(&g->mu);
  return t0;
}

static void accept_one(struct serve_gate *g) {
  gate_conn c = {.addr_len = sizeof c.addr};
  c.fd = accept4(g->listen_fd, (struct sockaddr *)&c.addr, &c.addr_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (c.fd < 0) return;
  c.t0 = c.active = vkf_serve_now();
  addr_text((const struct sockaddr *)&c.addr, c.ip, sizeof c.ip, NULL, 0);
  const struct vkf_server *s = g->srv;
  pthread_mutex_lock(&g->mu);
  unsigned all = count(g, NULL), mine = count(g, c.ip);
  int room = all < limit_total(s) && g->pending_count < limit_total(s);
  if (room) g->pending[g->pending_count++] = c;
  pthread_mutex_unlock(&g->mu);
  if (!room) { /* answered here without a slot of its own: nothing more is read */
    answer_error(g, &c, 503, "Service Unavailable", "too_many_connections",
                 "the server has %u connections open (--connections); retry later", all);
    close(c.fd);
  } else if (mine >= limit_client(s)) {
    gate_conn *p = &g->pending[g->pending_count - 1];
    answer_error(g, p, 429, "Too Many Requests", "too_many_connections",
                 "%u connections from %s are open (--client-connections); retry later", mine,
                 c.ip);
  }
}

static void *gate_main(void *arg) {
  struct serve_gate *g = arg;
  unsigned limit = limit_total(g->srv);
  struct pollfd *fds = calloc((size_t)limit + 2, sizeof *fds);
  if (!fds) return NULL;
  while (!atomic_load(&g->stop)) {
    fds[0] = (struct pollfd){.fd = g->wake[0], .events = POLLIN};
    fds[1] = (struct pollfd){.fd = g->listen_fd, .events = POLLIN};
    size_t n = g->pending_count;
    for (size_t i = 0; i < n; i++) fds[2 + i] = (struct pollfd){.fd = g->pending[i].fd, .events = POLLIN};
    poll(fds, 2 + n, 100);
    if (fds[0].revents) {
      char b[16];
      (void)!read(g->wake[0], b, sizeof b);
    }
    double now = vkf_serve_now(), deadline = vkf_serve_request_timeout(g->srv);
    double idle = g->srv->o.timeout_s ? g->srv->o.timeout_s : 60;
    /* from the last so removals (the last moves down) leave the ones before in place */
    for (size_t i = n; i-- > 0;) {
      gate_conn *c = &g->pending[i];
      if (c->closing) {
        if (fds[2 + i].revents) {
          ssize_t r = recv(c->fd, g->buf, GATE_HEAD_MAX, 0);
          if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
            drop(g, i);
            continue;
          }
        }
        if (now - c->t0 > GATE_LINGER_MS / 1000.0) drop(g, i);
        continue;
      }
      if (fds[2 + i].revents) {
        ssize_t r = recv(c->fd, g->buf, GATE_HEAD_MAX + 1, MSG_PEEK);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
          drop(g, i);
          continue;
        }
        if (r > 0 && (size_t)r > c->seen) c->seen = (size_t)r, c->active = now;
        int verdict = r > 0 ? check_head(g, c, g->buf, (size_t)r) : 0;
        if (verdict > 0) {
          hand_over(g, i);
          continue;
        }
        if (verdict < 0) continue;
      }
      if (now - c->t0 > deadline)
        answer_error(g, c, 408, "Request Timeout", "request_timeout",
                     "the request's headers took longer than %g s (--request-timeout)", deadline);
      else if (now - c->active > idle) /* silent: an idle connection is closed, as --timeout says */
        drop(g, i);
    }
    if (fds[1].revents & POLLIN)
      for (int k = 0; k < 16 && g->pending_count < limit; k++) accept_one(g);
  }
  while (g->pending_count) drop(g, g->pending_count - 1);
  free(fds);
  return NULL;
}

vkf_status vkf_serve_gate_start(struct vkf_server *s, const struct sockaddr *addr,
                                unsigned addr_len, struct serve_gate **out) {
  *out = NULL;
  struct serve_gate *g = calloc(1, sizeof *g);
  if (!g) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "gate");
  g->srv = s;
  g->listen_fd = g->wake[0] = g->wake[1] = -1;
  pthread_mutex_init(&g->mu, NULL);
  g->pending = calloc((size_t)limit_total(s), sizeof *g->pending);
  g->buf = malloc(GATE_HEAD_MAX + 1);
  vkf_status st = g->pending && g->buf ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "gate");
  int one = 1;
  if (!st && ((g->listen_fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
              setsockopt(g->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
              (addr->sa_family == AF_INET6 &&
               setsockopt(g->listen_fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one)) ||
              bind(g->listen_fd, addr, addr_len) || listen(g->listen_fd, 128)))
    st = vkf_status_make(VKF_STATUS_IO, "%s", strerror(errno));
  if (!st && pipe2(g->wake, O_CLOEXEC | O_NONBLOCK))
    st = vkf_status_make(VKF_STATUS_IO, "%s", strerror(errno));
  if (!st && pthread_create(&g->thread, NULL, gate_main, g))
    st = vkf_status_make(VKF_STATUS_INTERNAL, "cannot start the gate's thread");
  if (st) {
    vkf_serve_gate_stop(g);
    return st;
  }
  g->started = 1;
  *out = g;
  return VKF_OK;
}

uint16_t vkf_serve_gate_port(const struct serve_gate *g) {
  struct sockaddr_storage a;
  socklen_t len = sizeof a;
  if (getsockname(g->listen_fd, (struct sockaddr *)&a, &len)) return 0;
  return a.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&a)->sin6_port)
                                 : ntohs(((struct sockaddr_in *)&a)->sin_port);
}

void vkf_serve_gate_halt(struct serve_gate *g) {
  if (!g || !g->started) return;
  atomic_store(&g->stop, 1);
  (void)!write(g->wake[1], "x", 1);
  pthread_join(g->thread, NULL);
  g->started = 0;
  close(g->listen_fd);
  g->listen_fd = -1;
}

void vkf_serve_gate_stop(struct serve_gate *g) {
  if (!g) return;
  vkf_serve_gate_halt(g);
  if (g->listen_fd >= 0) close(g->listen_fd);
  if (g->wake[0] >= 0) close(g->wake[0]);
  if (g->wake[1] >= 0) close(g->wake[1]);
  pthread_mutex_destroy(&g->mu);
  free(g->pending);
  free(g->open);
  free(g->buf);
  free(g);
}
