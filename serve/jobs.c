/* A request's lifetime: made by the HTTP side, shared with a worker, freed by whichever lets go
 * last; the server keeps the list of those in flight so a stop can cancel them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve_internal.h"

void vkf_serve_log(struct vkf_server *s, const char *fmt, ...) {
  if (!s->o.log) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  s->o.log(s->o.log_user, line);
}

serve_job *vkf_serve_job_new(struct vkf_server *s) {
  static atomic_ullong counter;
  serve_job *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  pthread_mutex_init(&j->mu, NULL);
  pthread_cond_init(&j->cv, NULL);
  j->refs = 1;
  j->fd = -1;
  j->srv = s;
  j->n = 1;
  j->created = (long long)time(NULL);
  snprintf(j->id, sizeof j->id, "%llx%llx", (unsigned long long)j->created,
           (unsigned long long)atomic_fetch_add(&counter, 1) + 1);
  for (int i = 0; i < SERVE_MAX_N; i++) {
    j->ch[i].job = j;
    j->ch[i].index = i;
  }
  pthread_mutex_lock(&s->jobs_mu);
  if (s->job_count == s->job_cap) {
    size_t cap = s->job_cap ? 2 * s->job_cap : 64;
    serve_job **grown = realloc(s->jobs, cap * sizeof *grown);
    if (grown) s->jobs = grown, s->job_cap = cap;
  }
  int listed = s->job_count < s->job_cap;
  if (listed) s->jobs[s->job_count++] = j;
  pthread_mutex_unlock(&s->jobs_mu);
  if (!listed) {
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
    return NULL;
  }
  atomic_fetch_add(&s->metrics.in_flight, 1);
  return j;
}

static void job_free(serve_job *j) {
  struct vkf_server *s = j->srv;
  pthread_mutex_lock(&s->jobs_mu);
  for (size_t i = 0; i < s->job_count; i++)
    if (s->jobs[i] == j) {
      s->jobs[i] = s->jobs[--s->job_count];
      break;
    }
  pthread_mutex_unlock(&s->jobs_mu);
  atomic_fetch_sub(&s->metrics.in_flight, 1);
  free(j->messages);
  free(j->prompt);
  for (size_t i = 0; i < j->input_count; i++) free(j->inputs[i]);
  free(j->inputs);
  for (size_t i = 0; i < j->stop_count; i++) free(j->stops[i]);
  for (int i = 0; i < SERVE_MAX_N; i++) {
    serve_choice *c = &j->ch[i];
    free(c->text);
    for (size_t k = 0; k < c->lp_count; k++) {
      free(c->lp[k].token);
      for (int t = 0; t < c->lp[k].top_count; t++) free(c->lp[k].top[t]);
    }
    free(c->lp);
  }
  free(j->error);
  free(j->embeddings);
  free(j->out);
  pthread_mutex_destroy(&j->mu);
  pthread_cond_destroy(&j->cv);
  free(j);
}

void vkf_serve_job_release(serve_job *j) {
  if (!j) return;
  pthread_mutex_lock(&j->mu);
  int last = --j->refs == 0;
  pthread_mutex_unlock(&j->mu);
  if (last) job_free(j);
}

void vkf_serve_job_fail(serve_job *j, int status, const char *type, const char *param,
                        const char *code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  for (char *p = msg; *p; p++) /* one line, whatever the client's strings held */
    if ((unsigned char)*p < 0x20 || *p == 0x7F) *p = ' ';
  if (j->status) return; /* the first error stands */
  j->status = status;
  free(j->error);
  j->error = strdup(msg);
  j->error_type = type;
  j->error_param = param;
  j->error_code = code;
}
