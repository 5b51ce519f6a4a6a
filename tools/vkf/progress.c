/* Draws the device's progress on a terminal's stderr (tools/vkf/progress.h). */
#include "tools/vkf/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { PROGRESS_DELAY_MS = 500, PROGRESS_PERIOD_MS = 100 };

/* One per process: vkf runs one device at a time on one thread. */
typedef struct progress_line {
  const char *task;
  double start_ms, drawn_ms;
  int shown;
} progress_line;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void draw(void *user, const vkf_progress *p) {
  progress_line *line = user;
  double now = now_ms();
  if (p->done == 0 || !line->task || strcmp(line->task, p->task)) {
    line->task = p->task;
    line->start_ms = now;
  }
  if (p->done >= p->total) {
    if (line->shown) fprintf(stderr, "\r\033[K");
    line->shown = 0;
    line->task = NULL;
    return;
  }
  if (now - line->start_ms < PROGRESS_DELAY_MS || now - line->drawn_ms < PROGRESS_PERIOD_MS) return;
  line->drawn_ms = now;
  line->shown = 1;
  if (!strcmp(p->unit, "bytes"))
    fprintf(stderr, "\r\033[Kvkf: %s: %.0f / %.0f MiB", p->task, p->done / 1048576.0,
            p->total / 1048576.0);
  else
    fprintf(stderr, "\r\033[Kvkf: %s: %llu / %llu%s%s", p->task, (unsigned long long)p->done,
            (unsigned long long)p->total, p->item ? " " : "", p->item ? p->item : "");
  fflush(stderr);
}

void vkf_cli_progress_install(vkf_device *device) {
  static progress_line line;
  if (isatty(STDERR_FILENO)) vkf_device_set_progress(device, draw, &line);
}
