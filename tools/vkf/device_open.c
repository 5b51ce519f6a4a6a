/* The CLI's device: runtime/device_open.c with validation following VKF_VALIDATE, the progress
 * line installed (tools/vkf/progress.h), and the message count printed on close. */
#include "tools/vkf/device_open.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "graph/base/env.h"

#include "tools/vkf/progress.h"

vkf_status vkf_cli_device_open(const char *selector, vkf_cli_device *out) {
  VKF_RETURN_IF_ERROR(vkf_rt_device_open(selector, 0, out));
  vkf_cli_progress_install(out->device);
  return VKF_OK;
}

typedef struct opening {
  const char *selector;
  vkf_cli_device *out;
  vkf_status status;
} opening;

static void *open_thread(void *arg) {
  opening *o = arg;
  o->status = vkf_cli_device_open(o->selector, o->out);
  return NULL;
}

vkf_status vkf_cli_device_open_beside(const char *selector, vkf_cli_device *out,
                                      vkf_status (*beside)(void *user), void *user) {
  (void)vkf_env_get(); /* read once here: the first read is not thread-safe */
  opening o = {selector, out, VKF_OK};
  pthread_t thread;
  int threaded = pthread_create(&thread, NULL, open_thread, &o) == 0;
  if (!threaded) open_thread(&o); /* no thread to spare: one after the other */
  vkf_status st = beside(user);
  if (threaded) pthread_join(thread, NULL);
  if (o.status) {
    vkf_status_free(st);
    return o.status;
  }
  if (st) vkf_cli_device_close(out), memset(out, 0, sizeof *out);
  return st;
}

int vkf_cli_device_close(vkf_cli_device *d) {
  uint32_t messages = vkf_rt_device_close(d);
  if (messages) fprintf(stderr, "vkf: %u validation message(s)\n", messages);
  return messages ? 1 : 0;
}
