/* Builds a plan's kernels on worker threads (host/kernel_batch.h). */
#include "host/kernel_batch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/device_internal.h"
#include "host/kernel_internal.h"

/* More threads than this only queue in the driver (and most plans have fewer variants). */
enum { MAX_WORKERS = 8 };

/* One variant to build. The strings and arrays it needs are copied: the caller's descriptors
 * (defines parsed on its stack) are gone by the time a worker gets to it. */
typedef struct job {
  vkf_kernel *kernel;
  char *shader, *source;
  vkf_shader_define *defines;
  char **define_storage;
  uint32_t define_count;
  uint32_t spec[VKF_KERNEL_MAX_SPEC_CONSTANTS];
  uint32_t spec_count;
  vkf_status status;
} job;

struct vkf_kernel_batch {
  vkf_device *device;
  job *jobs;
  uint32_t job_count;
  pthread_t workers[MAX_WORKERS];
  uint32_t worker_count;
  pthread_mutex_t lock;
  pthread_cond_t finished; /* signalled whenever a job ends */
  uint32_t next, done;     /* under lock */
  const char *last;        /* the shader of the job that ended last, for progress */
};

static char *dup_or_null(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static void job_release(job *j) {
  free(j->shader);
  free(j->source);
  for (uint32_t i = 0; i < j->define_count && j->define_storage; i++)
    free(j->define_storage[i]);
  free(j->define_storage);
  free(j->defines);
}

/* Copies `d` into `j`; 0 when out of memory. */
static int job_init(job *j, const vkf_kernel_desc *d) {
  j->shader = dup_or_null(d->shader);
  j->source = dup_or_null(d->source);
  j->define_count = d->define_count;
  j->defines = calloc(d->define_count ? d->define_count : 1, sizeof *j->defines);
  j->define_storage = calloc(d->define_count ? d->define_count : 1, sizeof(char *));
  if (!j->shader || (d->source && !j->source) || !j->defines || !j->define_storage) return 0;
  for (uint32_t i = 0; i < d->define_count; i++) {
    /* name and value share one allocation: "NAME\0VALUE\0" */
    const char *v = d->defines[i].value;
    size_t nn = strlen(d->defines[i].name) + 1, vn = v ? strlen(v) + 1 : 0;
    char *p = malloc(nn + vn);
    if (!p) return 0;
    j->define_storage[i] = p;
    memcpy(p, d->defines[i].name, nn);
    if (v) memcpy(p + nn, v, vn);
    j->defines[i] = (vkf_shader_define){p, v ? p + nn : NULL};
  }
  memcpy(j->spec, d->spec_constants, d->spec_constant_count * sizeof(uint32_t));
  j->spec_count = d->spec_constant_count;
  return 1;
}

static vkf_status job_run(const vkf_device *device, job *j) {
  vkf_kernel_desc d = {.shader = j->shader,
                       .source = j->source,
                       .defines = j->defines,
                       .define_count = j->define_count,
                       .spec_constants = j->spec,
                       .spec_constant_count = j->spec_count};
  return vkf_kernel_build(device, j->kernel, &d);
}

static void *worker(void *arg) {
  vkf_kernel_batch *b = arg;
  for (;;) {
    pthread_mutex_lock(&b->lock);
    uint32_t i = b->next < b->job_count ? b->next++ : UINT32_MAX;
    pthread_mutex_unlock(&b->lock);
    if (i == UINT32_MAX) return NULL;
    vkf_status st = job_run(b->device, &b->jobs[i]);
    pthread_mutex_lock(&b->lock);
    b->jobs[i].status = st;
    b->done++;
    b->last = b->jobs[i].shader;
    pthread_cond_signal(&b->finished);
    pthread_mutex_unlock(&b->lock);
  }
}

static uint32_t worker_count_for(uint32_t jobs) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  uint32_t n = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : (uint32_t)cpus;
  return jobs < n ? jobs : n;
}

static void batch_free(vkf_kernel_batch *b) {
  for (uint32_t i = 0; i < b->job_count; i++) {
    vkf_kernel_free(b->device, b->jobs[i].kernel);
    job_release(&b->jobs[i]);
  }
  free(b->jobs);
  pthread_cond_destroy(&b->finished);
  pthread_mutex_destroy(&b->lock);
  free(b);
}

/* The jobs for the variants neither the device nor an earlier descriptor has. */
static vkf_status collect(vkf_kernel_batch *b, const vkf_kernel_desc *descs, uint32_t count) {
  uint64_t *keys = calloc(count ? count : 1, sizeof *keys);
  b->jobs = calloc(count ? count : 1, sizeof *b->jobs);
  if (!keys || !b->jobs) {
    free(keys);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  }
  vkf_status st = VKF_OK;
  for (uint32_t i = 0; i < count && !st; i++) {
    st = vkf_kernel_check_desc(b->device, &descs[i]);
    uint64_t key = st ? 0 : vkf_kernel_variant_key(&descs[i]);
    int seen = st || vkf_kernel_find(b->device, key) != NULL;
    for (uint32_t j = 0; j < b->job_count && !seen; j++) seen = keys[j] == key;
    if (seen) continue;
    job *jb = &b->jobs[b->job_count];
    keys[b->job_count++] = key;
    jb->kernel = vkf_kernel_new(&descs[i], key);
    if (!jb->kernel || !job_init(jb, &descs[i]))
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  }
  free(keys);
  return st;
}

vkf_status vkf_kernel_batch_start(vkf_device *device, const vkf_kernel_desc *descs, uint32_t count,
                                  vkf_kernel_batch **out_batch) {
  *out_batch = NULL;
  vkf_kernel_batch *b = calloc(1, sizeof *b);
  if (!b) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  b->device = device;
  if (pthread_mutex_init(&b->lock, NULL)) {
    free(b);
    return vkf_status_make(VKF_STATUS_INTERNAL, "kernel batch: pthread_mutex_init failed");
  }
  if (pthread_cond_init(&b->finished, NULL)) {
    pthread_mutex_destroy(&b->lock);
    free(b);
    return vkf_status_make(VKF_STATUS_INTERNAL, "kernel batch: pthread_cond_init failed");
  }
  vkf_status st = collect(b, descs, count);
  uint32_t want = st ? 0 : worker_count_for(b->job_count);
  while (b->worker_count < want &&
         !pthread_create(&b->workers[b->worker_count], NULL, worker, b))
    b->worker_count++;
  if (!st && b->job_count && !b->worker_count)
    st = vkf_status_make(VKF_STATUS_INTERNAL, "kernel batch: no worker thread could start");
  if (st) {
    batch_free(b);
    return st;
  }
  vkf_progress p = {.task = "building kernels", .total = b->job_count, .unit = ""};
  if (b->job_count) vkf_device_report_progress(device, &p);
  *out_batch = b;
  return VKF_OK;
}

vkf_status vkf_kernel_batch_wait(vkf_kernel_batch *b) {
  if (!b) return VKF_OK;
  vkf_progress p = {.task = "building kernels", .total = b->job_count, .unit = ""};
  pthread_mutex_lock(&b->lock);
  while (b->done < b->job_count) {
    p.done = b->done, p.item = b->last;
    /* The callback runs on this (the device's) thread, never a worker's. */
    pthread_mutex_unlock(&b->lock);
    if (p.done) vkf_device_report_progress(b->device, &p);
    pthread_mutex_lock(&b->lock);
    if (b->done == p.done) pthread_cond_wait(&b->finished, &b->lock);
  }
  pthread_mutex_unlock(&b->lock);
  for (uint32_t i = 0; i < b->worker_count; i++) pthread_join(b->workers[i], NULL);
  if (b->job_count) {
    p.done = p.total, p.item = NULL;
    vkf_device_report_progress(b->device, &p);
  }
  /* Built kernels join the cache even when another failed: they are valid variants. */
  vkf_status st = VKF_OK;
  for (uint32_t i = 0; i < b->job_count; i++) {
    job *j = &b->jobs[i];
    if (!j->status) {
      vkf_kernel_insert(b->device, j->kernel);
      j->kernel = NULL;
    } else if (!st) {
      st = j->status;
    } else {
      vkf_status_free(j->status);
    }
  }
  batch_free(b);
  return st;
}
