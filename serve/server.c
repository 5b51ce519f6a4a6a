/* The server's life: names for the models, a worker per device, the HTTP daemon; and the stop:
 * new requests get 503 (connections are still taken, so /health answers 503 rather than hang),
 * the requests in flight finish or are cancelled after the grace time (queued ones answered 503,
 * streams ended with an error event and [DONE]), then the workers end and the daemon closes. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "host/instance.h"
#include "serve/serve_internal.h"

/* A model's name for clients: NAME of "NAME=PATH", else the last part of its path (a folder's
 * trailing '/' dropped), or the part before it when that is "model" (the folder pip packages of
 * models use: every one would be "model"). *path_out: where it is. */
static char *name_of(const char *arg, const char **path_out) {
  const char *eq = strchr(arg, '=');
  if (eq && eq > arg && !memchr(arg, '/', (size_t)(eq - arg))) {
    *path_out = eq + 1;
    return strndup(arg, (size_t)(eq - arg));
  }
  *path_out = arg;
  const char *path = arg;
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') n--;
  size_t b = n;
  while (b && path[b - 1] != '/') b--;
  if (n - b == 5 && !strncmp(path + b, "model", 5) && b > 1) {
    n = b - 1;
    while (n > 1 && path[n - 1] == '/') n--;
    b = n;
    while (b && path[b - 1] != '/') b--;
  }
  char *out = malloc(n - b + 1);
  if (out) {
    memcpy(out, path + b, n - b);
    out[n - b] = 0;
  }
  return out;
}

static uint32_t destroy(vkf_server *s) {
  uint32_t messages = 0;
  vkf_serve_http_stop(s);
  for (int i = 0; s->workers && i < s->worker_count; i++)
    messages += vkf_serve_worker_stop(&s->workers[i]);
  for (int i = 0; s->names && i < s->model_count; i++) free(s->names[i]);
  free(s->names);
  free(s->paths);
  free(s->workers);
  free(s->jobs);
  pthread_mutex_destroy(&s->jobs_mu);
  free(s);
  return messages;
}

/* Devices a "--device all" server puts a replica on. */
static vkf_status device_count(int *out) {
  vkf_instance *inst = NULL;
  VKF_RETURN_IF_ERROR(vkf_instance_create(NULL, &inst));
  *out = (int)vkf_instance_device_count(inst);
  vkf_instance_destroy(inst);
  return *out ? VKF_OK : vkf_status_make(VKF_STATUS_NOT_FOUND, "no Vulkan device");
}

vkf_status vkf_serve_start(const vkf_serve_options *o, vkf_server **out) {
  *out = NULL;
  if (!o->model_count)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "give at least one --model");
  if (o->port < 0 || o->port > 65535)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "--port %d: 0 to 65535", o->port);
  VKF_RETURN_IF_ERROR(vkf_serve_check_host(o->host)); /* before the models take seconds to load */
  vkf_server *s = calloc(1, sizeof *s);
  if (!s) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "server");
  s->o = *o;
  pthread_mutex_init(&s->jobs_mu, NULL);
  vkf_serve_metrics_init(&s->metrics);
  s->model_count = (int)o->model_count;
  s->names = calloc(o->model_count, sizeof *s->names);
  s->paths = calloc(o->model_count, sizeof *s->paths);
  vkf_status st = s->names && s->paths ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "server");
  for (size_t i = 0; !st && i < o->model_count; i++) {
    if (!(s->names[i] = name_of(o->models[i], &s->paths[i])))
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "server");
    for (size_t k = 0; !st && k < i; k++)
      if (!strcmp(s->names[k], s->names[i]))
        st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "--model %s and %s have the same name \"%s\"", o->models[k],
                             o->models[i], s->names[i]);
  }
  int devices = 1;
  if (!st && o->device && !strcmp(o->device, "all")) st = device_count(&devices);
  if (!st && !(s->workers = calloc((size_t)devices, sizeof *s->workers)))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "server");
  for (int i = 0; !st && i < devices; i++) {
    s->workers[i].srv = s;
    s->workers[i].index = i;
    st = vkf_serve_worker_start(s, &s->workers[i]);
    if (!st) s->worker_count = i + 1;
  }
  if (!st) st = vkf_serve_http_start(s);
  if (st) {
    destroy(s);
    return st;
  }
  *out = s;
  return VKF_OK;
}

uint16_t vkf_serve_port(const vkf_server *s) {
  return s->port;
}

static size_t in_flight(vkf_server *s) {
  pthread_mutex_lock(&s->jobs_mu);
  size_t n = s->job_count;
  pthread_mutex_unlock(&s->jobs_mu);
  return n;
}

/* Waits until no request is in flight or `limit_s` passed since t0; 1 when none is. */
static int drained(vkf_server *s, double t0, double limit_s) {
  for (;;) {
    if (!in_flight(s)) return 1;
    if (vkf_serve_now() - t0 >= limit_s) return 0;
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
  }
}

uint32_t vkf_serve_stop(vkf_server *s, double grace_s) {
  if (!s) return 0;
  atomic_store(&s->stopping, 1);
  double t0 = vkf_serve_now();
  if (!drained(s, t0, grace_s)) {
    pthread_mutex_lock(&s->jobs_mu);
    for (size_t i = 0; i < s->job_count; i++) atomic_store(&s->jobs[i]->cancelled, 1);
    pthread_mutex_unlock(&s->jobs_mu);
    /* the cancelled ones end at the workers' next step; their answers (a 503, a stream's error
     * event and [DONE]) still go out before the connections close */
    drained(s, vkf_serve_now(), 5.0);
  }
  return destroy(s);
}
