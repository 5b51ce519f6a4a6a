/* The scheduler: a plan bound to a device. Creating a session compiles the kernels it has not
 * seen (on worker threads: host/kernel_batch.h), allocates one device buffer per plan buffer (weights one per tensor: never one blob,
 * since maxStorageBufferRange can be 128 MiB), and records one command list with barriers only
 * where the plan marks a hazard. Runs submit that recording again; nothing is re-recorded. */
#ifndef VKF_HOST_SESSION_H
#define VKF_HOST_SESSION_H

#include <stdint.h>

#include "graph/base/status.h"
#include "graph/lower/plan.h"
#include "host/buffer.h"
#include "host/device.h"

typedef struct vkf_session vkf_session;

typedef struct vkf_session_options {
  int profile; /* 1: timestamps around each dispatch; 0: follow VKF_PROFILE */
  /* Buffers owned by the caller (KV caches, another session's weights), indexed by plan buffer;
   * NULL entries (or a NULL array) are allocated by the session. Each must be at least the plan
   * buffer's size and outlive the session, which never frees them. */
  vkf_buffer *const *external;
  uint32_t external_count;
  /* 1: create returns while the kernels still build on worker threads, so the caller's weight
   * uploads overlap the driver's compiles; vkf_session_finish (or the first run) waits for them
   * and records. 0: create finishes. */
  int finish_later;
} vkf_session_options;

/* The plan must be finalized and outlive the session. */
vkf_status vkf_session_create(vkf_device *device, const vkf_plan *plan,
                              const vkf_session_options *options, vkf_session **out_session);
void vkf_session_destroy(vkf_session *session);
/* Waits for the kernels still building and records the command list; a build error comes back
 * here. Writes may come before it; runs call it. Once done, it returns at once. */
vkf_status vkf_session_finish(vkf_session *session);

/* Writes `size` bytes at byte `offset` of plan buffer `buffer` (inputs before each run, weights
 * once). A write of a whole weight also writes the copies the lowering regrouped from it
 * (vkf_plan_add_interleaved) that this session allocated. */
vkf_status vkf_session_write(vkf_session *session, uint32_t buffer, uint64_t offset,
                             const void *data, uint64_t size);
/* Writes regrouped weight buffer `copy` (when this session allocated it) from its source's data:
 * for a source the caller bound itself (imported host memory, another session's buffer), which
 * no write here fills. */
vkf_status vkf_session_write_regrouped(vkf_session *session, uint32_t copy, const void *data);
/* Submits the recorded dispatches and waits. */
vkf_status vkf_session_run(vkf_session *session);
/* Reads `size` bytes at `offset` of plan buffer `buffer` (outputs; any buffer for VKF_CHECK). */
vkf_status vkf_session_read(vkf_session *session, uint32_t buffer, uint64_t offset,
                            void *out_data, uint64_t size);

/* Per-dispatch GPU times of the last run in nanoseconds (profiling sessions only); `out_ns` has
 * the plan's dispatch count entries. */
vkf_status vkf_session_dispatch_times(vkf_session *session, double *out_ns);
/* Total GPU time of the last run (profiling sessions only), nanoseconds. */
double vkf_session_total_ns(const vkf_session *session);
/* The device buffer behind plan buffer `buffer` (owned by the session or the caller). */
vkf_buffer *vkf_session_buffer(const vkf_session *session, uint32_t buffer);
/* Bytes of device memory the session allocated itself (external buffers not counted). */
uint64_t vkf_session_device_bytes(const vkf_session *session);
/* Writes the per-dispatch profile table (node, kernel, time, share) to `out`. */
vkf_status vkf_session_print_profile(vkf_session *session, FILE *out);

#endif
