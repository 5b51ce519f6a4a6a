/* The bounded whole-file read shared by every reader of model files (see file_read.h). */
#include "models/formats/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/formats/gguf_model.h"

/* "<model.gguf>/<name>": open() fails with ENOTDIR when the folder part is a file; when that file
 * is a GGUF, it stands for a model folder and `name` is made from its metadata (gguf_model.h). */
static vkf_status gguf_member(const char *path, size_t max_size, int *handled, char **out_data,
                              size_t *out_size) {
  *handled = 0;
  const char *slash = strrchr(path, '/');
  if (!slash || slash == path) return VKF_OK;
  char *parent = strndup(path, (size_t)(slash - path));
  if (!parent) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  vkf_status s = VKF_OK;
  if (vkf_gguf_is_file(parent)) {
    *handled = 1;
    s = vkf_gguf_model_file_at(parent, slash + 1, out_data, out_size);
    if (!s && *out_size > max_size) {
      s = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                          "%s: %zu bytes made from the GGUF, more than %zu MiB", path, *out_size,
                          max_size >> 20);
      free(*out_data);
      *out_data = NULL;
      *out_size = 0;
    }
  }
  free(parent);
  return s;
}

vkf_status vkf_file_read_bounded(const char *path, size_t max_size, const char *what,
                                 char **out_data, size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  /* O_NONBLOCK: a FIFO named like the file must not hang the open. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno, handled = 0;
    if (err == ENOTDIR) {
      vkf_status s = gguf_member(path, max_size, &handled, out_data, out_size);
      if (handled || s) return s;
    }
    return vkf_status_make(err == ENOENT ? VKF_STATUS_NOT_FOUND : VKF_STATUS_IO,
                           "%s: cannot open: %s", path, strerror(err));
  }
  struct stat sb;
  vkf_status status = VKF_OK;
  /* The kind and size come first: a directory opens fine and reports 2^63 - 1 bytes to ftell. */
  if (fstat(fd, &sb) != 0)
    status = vkf_status_make(VKF_STATUS_IO, "%s: cannot stat: %s", path, strerror(errno));
  else if (S_ISDIR(sb.st_mode))
    status = vkf_status_make(VKF_STATUS_IO, "%s: is a directory, not a file", path);
  else if (!S_ISREG(sb.st_mode))
    status = vkf_status_make(VKF_STATUS_IO, "%s: not a regular file", path);
  else if (sb.st_size < 0 || (uint64_t)sb.st_size > max_size)
    status = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s: %lld bytes, more than %s may have (%zu MiB at most)", path,
                             (long long)sb.st_size, what, max_size >> 20);
  size_t size = status ? 0 : (size_t)sb.st_size, got = 0;
  char *data = status ? NULL : malloc(size + 1);
  if (!status && !data)
    status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for %zu bytes", path, size);
  while (!status && got < size) {
    ssize_t n = read(fd, data + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      status = vkf_status_make(VKF_STATUS_IO, "%s: read failed: %s", path, strerror(errno));
    else if (n == 0)
      status = vkf_status_make(VKF_STATUS_IO, "%s: ended after %zu of %zu bytes", path, got, size);
    else
      got += (size_t)n;
  }
  close(fd);
  if (status) {
    free(data);
    return status;
  }
  data[size] = '\0';
  *out_data = data;
  *out_size = size;
  return VKF_OK;
}
