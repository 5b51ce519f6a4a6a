/* The plan: plain data that lowering produces and the scheduler (host/) executes. An ordered list
 * of dispatches — kernel key (shader + defines + specialization constants), bindings as byte
 * ranges of plan buffers with their access, push constants, workgroup counts — and the barriers
 * that real hazards need. Stable text dump for golden tests. No Vulkan here. */
#ifndef VKF_GRAPH_PLAN_H
#define VKF_GRAPH_PLAN_H

#include <stdint.h>
#include <stdio.h>

#include "graph/base/caps.h"
#include "graph/base/status.h"

enum {
  VKF_PLAN_MAX_DEFINES = 16,
  VKF_PLAN_MAX_SPEC = 16,
  VKF_PLAN_MAX_BINDINGS = 8,
  VKF_PLAN_MAX_PUSH = 128, /* bytes: the Vulkan minimum maxPushConstantsSize */
};

typedef enum vkf_plan_buffer_kind {
  VKF_PLAN_BUFFER_ARENA,   /* intermediates, offsets from the memory plan */
  VKF_PLAN_BUFFER_INPUT,   /* uploaded by the caller before each run */
  VKF_PLAN_BUFFER_OUTPUT,  /* downloaded by the caller after each run */
  VKF_PLAN_BUFFER_WEIGHT,  /* uploaded once, kept for every later run */
  VKF_PLAN_BUFFER_SCRATCH, /* kernel-private temporaries (split-K partials, ...) */
} vkf_plan_buffer_kind;

/* A weight buffer may hold another weight buffer's rows regrouped for its kernels (a layout the
 * lowering picks for a device, vkf_plan_add_interleaved): made from the source's data when that
 * is written (host/session.h's vkf_session_write, vkf_session_write_regrouped), never by a
 * kernel. */
typedef struct vkf_plan_interleave {
  uint32_t source;    /* the weight buffer it is made from */
  uint32_t rows;      /* rows a group (0: not interleaved) */
  uint64_t row_bytes; /* bytes a row of the source */
  uint64_t chunk;     /* bytes of a row that lie together (row_bytes % chunk == 0) */
} vkf_plan_interleave;

typedef struct vkf_plan_buffer {
  vkf_plan_buffer_kind kind;
  const char *name;
  uint64_t size; /* bytes */
  vkf_plan_interleave interleave;
} vkf_plan_buffer;

typedef enum vkf_plan_access { VKF_ACCESS_READ = 1, VKF_ACCESS_WRITE = 2, VKF_ACCESS_READ_WRITE = 3 } vkf_plan_access;

/* How a binding reaches the kernel: a storage buffer, or a read-only uniform texel buffer view of
 * 4-component texels (GLSL samplerBuffer, vec4 for either float format; usamplerBuffer for RGBA16UI). */
typedef enum vkf_plan_texel {
  VKF_TEXEL_NONE = 0, /* storage buffer */
  VKF_TEXEL_RGBA32F,  /* view of float32 vec4s (16-byte texels) */
  VKF_TEXEL_RGBA16F,  /* view of float16 vec4s (8-byte texels) */
  VKF_TEXEL_RGBA16UI, /* view of uint16 uvec4s (8-byte texels; bf16 bits, GLSL usamplerBuffer) */
  VKF_TEXEL_R32UI,    /* view of 32-bit words (4-byte texels; ggml blocks, GLSL usamplerBuffer) */
  VKF_TEXEL_RG32UI,   /* view of word pairs (8-byte texels; ggml blocks two words a fetch) */
} vkf_plan_texel;

/* Whether the device takes uniform texel buffers of t's format. */
static inline int vkf_plan_texel_supported(const vkf_device_caps *caps, vkf_plan_texel t) {
  return t == VKF_TEXEL_RGBA32F    ? caps->texel_rgba32f
         : t == VKF_TEXEL_RGBA16F  ? caps->texel_rgba16f
         : t == VKF_TEXEL_RGBA16UI ? caps->texel_rgba16ui
         : t == VKF_TEXEL_R32UI    ? caps->texel_r32ui
         : t == VKF_TEXEL_RG32UI   ? caps->texel_rg32ui
                                   : 0;
}

/* Bytes a texel of t (0 for a storage buffer). */
static inline uint32_t vkf_plan_texel_size(vkf_plan_texel t) {
  return t == VKF_TEXEL_RGBA32F ? 16 : t == VKF_TEXEL_R32UI ? 4 : t == VKF_TEXEL_NONE ? 0 : 8;
}

/* A byte range of one plan buffer, bound at one binding slot of a kernel. */
typedef struct vkf_plan_binding {
  uint32_t buffer;  /* index returned by vkf_plan_add_buffer */
  uint64_t offset;  /* bytes */
  uint64_t size;    /* bytes (> 0) */
  vkf_plan_access access;
  vkf_plan_texel texel; /* VKF_TEXEL_NONE unless the kernel reads it as a texel buffer */
} vkf_plan_binding;

typedef struct vkf_plan_dispatch {
  const char *node;   /* graph node that produced it (profiles, dumps, VKF_CHECK) */
  const char *shader; /* embedded template ("gemm.comp") or generated kernel name */
  const char *source; /* generated GLSL text, NULL for embedded templates */
  const char *defines[VKF_PLAN_MAX_DEFINES]; /* "NAME" or "NAME=VALUE" */
  uint32_t define_count;
  uint32_t spec[VKF_PLAN_MAX_SPEC]; /* specialization constants, constant_id = index */
  uint32_t spec_count;
  vkf_plan_binding bindings[VKF_PLAN_MAX_BINDINGS];
  uint32_t binding_count;
  uint8_t push[VKF_PLAN_MAX_PUSH];
  uint32_t push_size; /* bytes, multiple of 4 */
  uint32_t groups[3];
  int barrier_before; /* set by vkf_plan_finalize: a hazard with earlier dispatches */
  /* The subgroup size its body was planned on (lanes per row, one-subgroup workgroups, 8-wide
   * CPU bodies, subgroups per tile), 0 when it is right at any size; host/ refuses to run it on
   * a device that does not guarantee that size (a plan lowered for other caps). */
  uint32_t subgroup_size;
} vkf_plan_dispatch;

typedef struct vkf_plan vkf_plan;

vkf_plan *vkf_plan_create(void); /* NULL when out of memory */
void vkf_plan_destroy(vkf_plan *plan);

/* Returns the new buffer's index. `name` is copied. */
uint32_t vkf_plan_add_buffer(vkf_plan *plan, vkf_plan_buffer_kind kind, const char *name,
                             uint64_t size);
/* The weight buffer that holds weight buffer `source`'s first `rows` rows of `row_bytes` bytes
 * interleaved `group` rows at a time, `chunk` bytes of each: chunk j of row r of group g lies at
 * ((g * (row_bytes / chunk) + j) * group + r % group) * chunk, so a workgroup reading `group`
 * rows side by side walks one contiguous stream. The same request twice gives the same buffer.
 * Needs rows % group == 0 and row_bytes % chunk == 0 (asserted). */
uint32_t vkf_plan_add_interleaved(vkf_plan *plan, uint32_t source, uint64_t rows,
                                  uint64_t row_bytes, uint32_t group, uint64_t chunk);
/* Writes an interleaved buffer's bytes (b->size of them) from its source's data. */
void vkf_plan_interleave_fill(const vkf_plan_buffer *b, const void *source_data, void *dst);
/* Copies the dispatch (strings included). Checks bindings against buffer sizes. */
vkf_status vkf_plan_add_dispatch(vkf_plan *plan, const vkf_plan_dispatch *dispatch);
/* Marks barrier_before on each dispatch that reads or writes a range written since the last
 * barrier (RAW, WAW), or writes a range read since then (WAR). Idempotent. */
void vkf_plan_finalize(vkf_plan *plan);

uint32_t vkf_plan_buffer_count(const vkf_plan *plan);
const vkf_plan_buffer *vkf_plan_buffer_get(const vkf_plan *plan, uint32_t index);
uint32_t vkf_plan_dispatch_count(const vkf_plan *plan);
const vkf_plan_dispatch *vkf_plan_dispatch_get(const vkf_plan *plan, uint32_t index);
uint32_t vkf_plan_barrier_count(const vkf_plan *plan);

/* Stable, human-readable dump (golden-tested): buffers, then one line per dispatch, then totals. */
void vkf_plan_dump_text(const vkf_plan *plan, FILE *out);

/* Helpers for lowering code: append a define / push-constant word. */
void vkf_plan_dispatch_define(vkf_plan_dispatch *d, const char *define);
void vkf_plan_dispatch_push_u32(vkf_plan_dispatch *d, uint32_t value);
void vkf_plan_dispatch_push_f32(vkf_plan_dispatch *d, float value);
void vkf_plan_dispatch_bind(vkf_plan_dispatch *d, uint32_t buffer, uint64_t offset, uint64_t size,
                            vkf_plan_access access);

#endif
