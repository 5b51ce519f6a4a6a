/* Owns the plan container, hazard analysis (where barriers go) and the plan's text dump. */
#include "graph/lower/plan.h"

#include <stdlib.h>
#include <string.h>

#include "graph/base/arena.h"

struct vkf_plan {
  vkf_arena *arena; /* strings */
  vkf_plan_buffer *buffers;
  uint32_t buffer_count, buffer_capacity;
  vkf_plan_dispatch *dispatches;
  uint32_t dispatch_count, dispatch_capacity;
};

vkf_plan *vkf_plan_create(void) {
  vkf_plan *plan = calloc(1, sizeof *plan);
  if (plan && !(plan->arena = vkf_arena_create())) {
    free(plan);
    plan = NULL;
  }
  return plan;
}

void vkf_plan_destroy(vkf_plan *plan) {
  if (!plan) return;
  vkf_arena_destroy(plan->arena);
  free(plan->buffers);
  free(plan->dispatches);
  free(plan);
}

static const char *copy_str(vkf_plan *plan, const char *s) {
  return s ? vkf_arena_strdup(plan->arena, s) : NULL;
}

uint32_t vkf_plan_add_buffer(vkf_plan *plan, vkf_plan_buffer_kind kind, const char *name,
                             uint64_t size) {
  if (plan->buffer_count == plan->buffer_capacity) {
    uint32_t cap = plan->buffer_capacity ? plan->buffer_capacity * 2 : 16;
    vkf_plan_buffer *b = realloc(plan->buffers, cap * sizeof *b);
    VKF_ASSERT(b != NULL);
    plan->buffers = b;
    plan->buffer_capacity = cap;
  }
  plan->buffers[plan->buffer_count] =
      (vkf_plan_buffer){.kind = kind, .name = copy_str(plan, name), .size = size};
  return plan->buffer_count++;
}

uint32_t vkf_plan_add_interleaved(vkf_plan *plan, uint32_t source, uint64_t rows,
                                  uint64_t row_bytes, uint32_t group, uint64_t chunk) {
  VKF_ASSERT(source < plan->buffer_count && group && chunk && rows % group == 0 &&
             row_bytes % chunk == 0);
  vkf_plan_interleave il = {
      .source = source, .rows = group, .row_bytes = row_bytes, .chunk = chunk};
  uint64_t size = rows * row_bytes;
  for (uint32_t i = 0; i < plan->buffer_count; i++) {
    const vkf_plan_buffer *b = &plan->buffers[i];
    if (b->interleave.rows && !memcmp(&b->interleave, &il, sizeof il) && b->size == size) return i;
  }
  char name[256];
  snprintf(name, sizeof name, "%s (rows interleaved by %u)",
           plan->buffers[source].name ? plan->buffers[source].name : "", group);
  uint32_t i = vkf_plan_add_buffer(plan, VKF_PLAN_BUFFER_WEIGHT, name, size);
  plan->buffers[i].interleave = il;
  return i;
}

void vkf_plan_interleave_fill(const vkf_plan_buffer *b, const void *source_data, void *dst) {
  const vkf_plan_interleave *il = &b->interleave;
  const unsigned char *src = source_data;
  unsigned char *out = dst;
  uint64_t chunks = il->row_bytes / il->chunk, rows = b->size / il->row_bytes;
  for (uint64_t r = 0; r < rows; r++)
    for (uint64_t j = 0; j < chunks; j++)
      memcpy(out + ((r / il->rows * chunks + j) * il->rows + r % il->rows) * il->chunk,
             src + r * il->row_bytes + j * il->chunk, il->chunk);
}

vkf_status vkf_plan_add_dispatch(vkf_plan *plan, const vkf_plan_dispatch *d) {
  for (uint32_t i = 0; i < d->binding_count; i++) {
    const vkf_plan_binding *b = &d->bindings[i];
    if (b->texel && b->access != VKF_ACCESS_READ)
      return vkf_status_make(VKF_STATUS_INTERNAL,
                             "node \"%s\" (%s): binding %u is a texel view but not read-only",
                             d->node ? d->node : "?", d->shader, i);
    if (b->buffer >= plan->buffer_count || b->size == 0 ||
        b->offset + b->size > plan->buffers[b->buffer].size)
      return vkf_status_make(VKF_STATUS_INTERNAL,
                             "node \"%s\" (%s): binding %u [%llu, +%llu) is outside buffer %u",
                             d->node ? d->node : "?", d->shader, i, (unsigned long long)b->offset,
                             (unsigned long long)b->size, b->buffer);
  }
  if (d->push_size % 4 || d->push_size > VKF_PLAN_MAX_PUSH)
    return vkf_status_make(VKF_STATUS_INTERNAL, "node \"%s\": bad push constant size %u",
                           d->node ? d->node : "?", d->push_size);
  if (plan->dispatch_count == plan->dispatch_capacity) {
    uint32_t cap = plan->dispatch_capacity ? plan->dispatch_capacity * 2 : 64;
    vkf_plan_dispatch *n = realloc(plan->dispatches, cap * sizeof *n);
    if (!n) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
    plan->dispatches = n;
    plan->dispatch_capacity = cap;
  }
  vkf_plan_dispatch *copy = &plan->dispatches[plan->dispatch_count++];
  *copy = *d;
  copy->node = copy_str(plan, d->node);
  copy->shader = copy_str(plan, d->shader);
  copy->source = copy_str(plan, d->source);
  for (uint32_t i = 0; i < d->define_count; i++) copy->defines[i] = copy_str(plan, d->defines[i]);
  copy->barrier_before = 0;
  return VKF_OK;
}

typedef struct range {
  uint32_t buffer;
  uint64_t begin, end;
} range;

static int overlaps(const range *set, uint32_t count, const vkf_plan_binding *b) {
  for (uint32_t i = 0; i < count; i++)
    if (set[i].buffer == b->buffer && set[i].begin < b->offset + b->size &&
        b->offset < set[i].end)
      return 1;
  return 0;
}

void vkf_plan_finalize(vkf_plan *plan) {
  /* Ranges written / read since the last barrier. A dispatch touching a pending write, or
   * writing a pending read, needs a barrier; the barrier then clears both sets. */
  uint32_t cap = plan->dispatch_count * VKF_PLAN_MAX_BINDINGS + 1;
  range *written = malloc(cap * sizeof *written), *read = malloc(cap * sizeof *read);
  VKF_ASSERT(written && read);
  uint32_t nw = 0, nr = 0;
  for (uint32_t i = 0; i < plan->dispatch_count; i++) {
    vkf_plan_dispatch *d = &plan->dispatches[i];
    int hazard = 0;
    for (uint32_t j = 0; j < d->binding_count && !hazard; j++) {
      const vkf_plan_binding *b = &d->bindings[j];
      if (overlaps(written, nw, b)) hazard = 1;
      if ((b->access & VKF_ACCESS_WRITE) && overlaps(read, nr, b)) hazard = 1;
    }
    d->barrier_before = hazard;
    if (hazard) nw = nr = 0;
    for (uint32_t j = 0; j < d->binding_count; j++) {
      const vkf_plan_binding *b = &d->bindings[j];
      range r = {b->buffer, b->offset, b->offset + b->size};
      if (b->access & VKF_ACCESS_WRITE) written[nw++] = r;
      if (b->access & VKF_ACCESS_READ) read[nr++] = r;
    }
  }
  free(written);
  free(read);
}

uint32_t vkf_plan_buffer_count(const vkf_plan *plan) { return plan->buffer_count; }
const vkf_plan_buffer *vkf_plan_buffer_get(const vkf_plan *plan, uint32_t index) {
  VKF_ASSERT(index < plan->buffer_count);
  return &plan->buffers[index];
}
uint32_t vkf_plan_dispatch_count(const vkf_plan *plan) { return plan->dispatch_count; }
const vkf_plan_dispatch *vkf_plan_dispatch_get(const vkf_plan *plan, uint32_t index) {
  VKF_ASSERT(index < plan->dispatch_count);
  return &plan->dispatches[index];
}
uint32_t vkf_plan_barrier_count(const vkf_plan *plan) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < plan->dispatch_count; i++) n += plan->dispatches[i].barrier_before;
  return n;
}

static const char *kind_name(vkf_plan_buffer_kind k) {
  static const char *const names[] = {"arena", "input", "output", "weight", "scratch"};
  return names[k];
}

void vkf_plan_dump_text(const vkf_plan *plan, FILE *out) {
  fprintf(out, "plan: %u buffers, %u dispatches, %u barriers\n", plan->buffer_count,
          plan->dispatch_count, vkf_plan_barrier_count(plan));
  for (uint32_t i = 0; i < plan->buffer_count; i++) {
    const vkf_plan_buffer *b = &plan->buffers[i];
    fprintf(out, "buffer %u %s \"%s\" %llu bytes", i, kind_name(b->kind), b->name ? b->name : "",
            (unsigned long long)b->size);
    if (b->interleave.rows)
      fprintf(out, " = buffer %u regrouped: %u rows of %llu bytes side by side, %llu bytes of each",
              b->interleave.source, b->interleave.rows, (unsigned long long)b->interleave.row_bytes,
              (unsigned long long)b->interleave.chunk);
    fputc('\n', out);
  }
  static const char *const access[] = {"", "r", "w", "rw"};
  for (uint32_t i = 0; i < plan->dispatch_count; i++) {
    const vkf_plan_dispatch *d = &plan->dispatches[i];
    if (d->barrier_before) fprintf(out, "  barrier\n");
    fprintf(out, "dispatch %u \"%s\" %s", i, d->node ? d->node : "", d->shader);
    for (uint32_t j = 0; j < d->define_count; j++) fprintf(out, " -D%s", d->defines[j]);
    if (d->spec_count) {
      fprintf(out, " spec=[");
      for (uint32_t j = 0; j < d->spec_count; j++) fprintf(out, "%s%u", j ? "," : "", d->spec[j]);
      fprintf(out, "]");
    }
    fprintf(out, " groups=%ux%ux%u\n", d->groups[0], d->groups[1], d->groups[2]);
    for (uint32_t j = 0; j < d->binding_count; j++) {
      const vkf_plan_binding *b = &d->bindings[j];
      static const char *const texel[] = {"", " texel rgba32f", " texel rgba16f", " texel rgba16ui",
                                          " texel r32ui", " texel rg32ui"};
      _Static_assert(sizeof texel / sizeof texel[0] == VKF_TEXEL_RG32UI + 1, "a name per texel");
      fprintf(out, "    binding %u: buffer %u [%llu, +%llu) %s%s\n", j, b->buffer,
              (unsigned long long)b->offset, (unsigned long long)b->size, access[b->access],
              texel[b->texel]);
    }
    if (d->push_size) {
      fprintf(out, "    push:");
      for (uint32_t j = 0; j < d->push_size; j += 4) {
        uint32_t w;
        memcpy(&w, d->push + j, 4);
        fprintf(out, " %08x", w);
      }
      fprintf(out, "\n");
    }
  }
}

void vkf_plan_dispatch_define(vkf_plan_dispatch *d, const char *define) {
  VKF_ASSERT(d->define_count < VKF_PLAN_MAX_DEFINES);
  d->defines[d->define_count++] = define;
}

void vkf_plan_dispatch_push_u32(vkf_plan_dispatch *d, uint32_t value) {
  VKF_ASSERT(d->push_size + 4 <= VKF_PLAN_MAX_PUSH);
  memcpy(d->push + d->push_size, &value, 4);
  d->push_size += 4;
}

void vkf_plan_dispatch_push_f32(vkf_plan_dispatch *d, float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  vkf_plan_dispatch_push_u32(d, bits);
}

void vkf_plan_dispatch_bind(vkf_plan_dispatch *d, uint32_t buffer, uint64_t offset, uint64_t size,
                            vkf_plan_access access) {
  VKF_ASSERT(d->binding_count < VKF_PLAN_MAX_BINDINGS);
  d->bindings[d->binding_count++] =
      (vkf_plan_binding){.buffer = buffer, .offset = offset, .size = size, .access = access};
}
