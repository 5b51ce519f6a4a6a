/* Runs a graph on a device: memory plan -> lowering (with the device's caps) -> session, weights
 * uploaded once from the graph's constants. The one path the CLI, model tests and benchmarks use
 * to execute a graph; passes (fusion) are the caller's choice and run before. */
#ifndef VKF_HOST_RUNNER_H
#define VKF_HOST_RUNNER_H

#include <stddef.h>

#include "graph/ir/graph.h"
#include "graph/lower/lower.h"
#include "host/buffer.h"
#include "host/device.h"
#include "host/session.h"

typedef struct vkf_runner vkf_runner;

/* A graph input bound to a buffer the caller owns (state that outlives a run: KV caches). */
typedef struct vkf_runner_binding {
  vkf_value value;    /* a graph input (contiguous, its own plan buffer) */
  vkf_buffer *buffer; /* at least the input's size; outlives the runner */
} vkf_runner_binding;

typedef struct vkf_runner_options {
  int profile; /* timestamps per dispatch (see vkf_session_print_profile) */
  const vkf_runner_binding *bindings; /* inputs read and written in caller-owned buffers */
  uint32_t binding_count;
  /* Constants whose host data (same pointer, same size) another runner already holds on the
   * device are bound to that runner's buffers instead of uploaded again (a prefill and a decode
   * plan of one model share one copy of the weights). That runner must outlive this one. */
  const struct vkf_runner *share_constants_with;
} vkf_runner_options;

/* Plans and lowers `graph` (which must stay alive and unchanged), creates the session and uploads
 * every constant that has host data (unless shared, see the options). On devices that read host
 * memory as their own (lavapipe, integrated GPUs with VK_EXT_external_memory_host) constants of
 * 64 KiB and more are bound in place instead of copied, so their data (borrowed by the graph,
 * vkf_graph_constant) must stay valid and unchanged until the runner is destroyed;
 * VKF_COPY_WEIGHTS=1 copies them all. */
vkf_status vkf_runner_create(vkf_device *device, vkf_graph *graph,
                             const vkf_runner_options *options, vkf_runner **out_runner);
void vkf_runner_destroy(vkf_runner *runner);

/* Sets an input (or a constant created without data) from contiguous host data in its dtype. */
vkf_status vkf_runner_set(vkf_runner *runner, vkf_value value, const void *data, size_t size);
/* Runs once; with VKF_PROFILE=1 also prints the per-dispatch timestamp table on stderr. */
vkf_status vkf_runner_run(vkf_runner *runner);
/* Reads any tensor that lives in a plan buffer as contiguous host data in its dtype (outputs;
 * intermediates hold their value until the arena bytes are reused by a later node). */
vkf_status vkf_runner_get(vkf_runner *runner, vkf_value value, void *dst, size_t size);

vkf_session *vkf_runner_session(vkf_runner *runner);
/* Device bytes this runner holds itself: its arena, inputs, outputs and unshared weights (those
 * bound in place included: the device reads them where they are). */
uint64_t vkf_runner_device_bytes(const vkf_runner *runner);
const vkf_lowered *vkf_runner_lowered(const vkf_runner *runner);
/* Bytes of those weights the device reads in place from host memory. */
uint64_t vkf_runner_in_place_bytes(const vkf_runner *runner);

#endif
