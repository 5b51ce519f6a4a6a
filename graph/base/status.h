/* Run-time failure values: a status is NULL on success or a heap object holding a code and a
 * message that names the file, tensor, node or shape at fault. Programmer mistakes use VKF_ASSERT. */
#ifndef VKF_GRAPH_STATUS_H
#define VKF_GRAPH_STATUS_H

#include <stdio.h>
#include <stdlib.h>

typedef enum vkf_status_code {
  VKF_STATUS_OK = 0,
  VKF_STATUS_INVALID_ARGUMENT, /* a caller passed a bad value (bad option, bad attribute) */
  VKF_STATUS_NOT_FOUND,        /* missing file, tensor, device, config field */
  VKF_STATUS_UNSUPPORTED,      /* op, dtype, shape or feature the device/build cannot do */
  VKF_STATUS_OUT_OF_MEMORY,    /* host or device allocation failed or exceeds a device limit */
  VKF_STATUS_IO,               /* read/write/mmap failure */
  VKF_STATUS_PARSE,            /* malformed file contents (json, safetensors, npy, image) */
  VKF_STATUS_SHAPE,            /* shape or dtype inference failed */
  VKF_STATUS_INVALID_GRAPH,    /* verifier: the IR breaks an invariant */
  VKF_STATUS_NO_DEVICE,        /* no Vulkan loader or no physical device */
  VKF_STATUS_DEVICE,           /* a Vulkan call failed (device lost, ...) */
  VKF_STATUS_COMPILE,          /* shader compile error */
  VKF_STATUS_MISMATCH,         /* a device result differs from the reference (VKF_CHECK) */
  VKF_STATUS_INTERNAL,
  VKF_STATUS_CODE_COUNT
} vkf_status_code;

typedef struct vkf_status_s *vkf_status;
#define VKF_OK ((vkf_status)0)

/* Makes a status with a printf-style message. Never returns NULL for a non-OK code: when the
 * message cannot be allocated, a static out-of-memory status is returned (freeing it is a no-op). */
vkf_status vkf_status_make(vkf_status_code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prefixes context ("loading model.safetensors: ") to a status; takes ownership of `status`
 * and returns it (or a replacement). Passing VKF_OK returns VKF_OK. */
vkf_status vkf_status_annotate(vkf_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
vkf_status_code vkf_status_code_of(vkf_status status);
/* The message; "" for VKF_OK. Valid until the status is freed. */
const char *vkf_status_message(vkf_status status);
const char *vkf_status_code_name(vkf_status_code code);
void vkf_status_free(vkf_status status);

#define VKF_RETURN_IF_ERROR(expr)                                                                 \
  do {                                                                                            \
    vkf_status vkf_status_tmp_ = (expr);                                                          \
    if (vkf_status_tmp_ != VKF_OK) return vkf_status_tmp_;                                        \
  } while (0)

/* Programmer mistakes only: prints file:line and aborts. */
#define VKF_ASSERT(cond)                                                                          \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond);               \
      abort();                                                                                    \
    }                                                                                             \
  } while (0)

#endif
