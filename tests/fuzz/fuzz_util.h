/* Shared by the libFuzzer targets: the checks every reader's error must pass, one input split into
 * several files, and a private scratch folder for the readers that only take a path. Header-only
 * so each target is one file. */
#ifndef VKF_TESTS_FUZZ_UTIL_H
#define VKF_TESTS_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/status.h"

/* Parts of a multi-file input are separated by this line (the seed script joins files with it). */
#define FUZZ_SEPARATOR "\n@@@@\n"
#define FUZZ_MAX_PARTS 8

typedef struct fuzz_part {
  const uint8_t *data;
  size_t size;
} fuzz_part;

/* A reader's failure must be a status with a one-line, non-empty message (the project's rule for
 * bad input); anything else is a finding, so abort and let libFuzzer save the input. Frees `s`. */
static inline void fuzz_check_status(vkf_status s) {
  if (!s) return;
  const char *msg = vkf_status_message(s);
  if (!msg || !msg[0] || strchr(msg, '\n')) {
    fprintf(stderr, "fuzz: error message is empty or spans lines: \"%s\"\n", msg ? msg : "(null)");
    abort();
  }
  vkf_status_free(s);
}

#define FUZZ_ASSERT(cond)                                                               \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

/* Splits `data` at FUZZ_SEPARATOR into at most `max` parts (the last takes the rest); parts that
 * are missing come back empty. Returns how many separators delimited real parts, plus one. */
static inline size_t fuzz_split(const uint8_t *data, size_t size, fuzz_part *parts, size_t max) {
  const size_t sep_len = sizeof FUZZ_SEPARATOR - 1;
  size_t n = 0, at = 0;
  while (n + 1 < max) {
    const uint8_t *hit = NULL;
    for (size_t i = at; i + sep_len <= size; i++)
      if (memcmp(data + i, FUZZ_SEPARATOR, sep_len) == 0) {
        hit = data + i;
        break;
      }
    if (!hit) break;
    parts[n++] = (fuzz_part){data + at, (size_t)(hit - data) - at};
    at = (size_t)(hit - data) + sep_len;
  }
  parts[n++] = (fuzz_part){data + at, size - at};
  for (size_t i = n; i < max; i++) parts[i] = (fuzz_part){(const uint8_t *)"", 0};
  return n;
}

/* A NUL-terminated copy of a part (the tokenizers take C strings); the caller frees it. */
static inline char *fuzz_strdup(fuzz_part part) {
  char *s = malloc(part.size + 1);
  FUZZ_ASSERT(s);
  if (part.size) memcpy(s, part.data, part.size);
  s[part.size] = 0;
  return s;
}

static char fuzz_dir_path[256];
/* What was created in the scratch folder, in order, so it can be removed in reverse at exit. */
static char fuzz_created[32][512];
static int fuzz_created_count;

static inline void fuzz_remove_scratch(void) {
  while (fuzz_created_count > 0) remove(fuzz_created[--fuzz_created_count]);
  if (fuzz_dir_path[0]) remove(fuzz_dir_path);
}

static inline void fuzz_note_created(const char *path) {
  for (int i = 0; i < fuzz_created_count; i++)
    if (strcmp(fuzz_created[i], path) == 0) return;
  FUZZ_ASSERT(fuzz_created_count < 32 && strlen(path) < sizeof fuzz_created[0]);
  strcpy(fuzz_created[fuzz_created_count++], path);
}

/* This process's scratch folder ($TMPDIR or /tmp), created on first use, removed at exit. */
static inline const char *fuzz_scratch_dir(void) {
  if (!fuzz_dir_path[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/vkf-fuzz-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    FUZZ_ASSERT(mkdtemp(fuzz_dir_path));
    atexit(fuzz_remove_scratch);
  }
  return fuzz_dir_path;
}

/* Writes `size` bytes to scratch/`name` (subfolders created); an empty name part is skipped. */
static inline void fuzz_write_file(const char *name, const void *data, size_t size) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", fuzz_scratch_dir(), name);
  for (char *slash = strchr(path + strlen(fuzz_scratch_dir()) + 1, '/'); slash;
       slash = strchr(slash + 1, '/')) {
    *slash = 0;
    if (mkdir(path, 0700) == 0) fuzz_note_created(path);
    *slash = '/';
  }
  fuzz_note_created(path);
  FILE *f = fopen(path, "wb");
  FUZZ_ASSERT(f);
  FUZZ_ASSERT(size == 0 || fwrite(data, 1, size, f) == size);
  FUZZ_ASSERT(fclose(f) == 0);
}

static inline void fuzz_remove_file(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", fuzz_scratch_dir(), name);
  remove(path);
}

/* A file of the source tree ($VKF_SOURCE_DIR, else the tree this target was built from). */
static inline const char *fuzz_source_path(const char *rel) {
  static char path[1024];
  const char *root = getenv("VKF_SOURCE_DIR");
  snprintf(path, sizeof path, "%s/%s", root && root[0] ? root : VKF_FUZZ_SOURCE_DIR, rel);
  return path;
}

#endif
