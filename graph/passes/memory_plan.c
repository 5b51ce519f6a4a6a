/* Owns the memory planner: tensor lifetimes over the node order, then greedy-by-size placement
 * of every intermediate base tensor into one arena (inputs, constants, outputs are pinned). */
#include <stdlib.h>
#include <string.h>

#include "graph/ir/graph_internal.h"
#include "graph/passes/memory_plan.h"

typedef struct item {
  uint32_t id;
  size_t size;
  uint32_t first, last;
} item;

static int by_size_desc(const void *pa, const void *pb) {
  const item *a = pa, *b = pb;
  if (a->size != b->size) return a->size < b->size ? 1 : -1;
  if (a->first != b->first) return a->first < b->first ? -1 : 1;
  return a->id < b->id ? -1 : 1;
}

typedef struct range {
  size_t begin, end;
} range;

static int by_begin(const void *pa, const void *pb) {
  const range *a = pa, *b = pb;
  return a->begin < b->begin ? -1 : a->begin > b->begin ? 1 : 0;
}

static size_t align_up(size_t n, size_t a) {
  return (n + a - 1) & ~(a - 1);
}

vkf_status vkf_memory_plan_build(vkf_graph *g, const vkf_memory_plan_options *options) {
  size_t alignment = options && options->alignment ? options->alignment : 256;
  if (alignment & (alignment - 1))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "memory plan: alignment %zu is not a "
                           "power of two",
                           alignment);
  vkf_memory_plan *mp = &g->plan;
  free(mp->placements);
  memset(mp, 0, sizeof *mp);
  mp->alignment = alignment;
  mp->tensor_bound = g->tensor_count;
  mp->placements = calloc(g->tensor_count, sizeof *mp->placements);
  item *items = calloc(g->tensor_count, sizeof *items);
  range *busy = calloc(g->tensor_count, sizeof *busy);
  uint32_t *index_of = calloc(g->tensor_count, sizeof *index_of);
  if (!mp->placements || !items || !busy || !index_of) {
    free(items);
    free(busy);
    free(index_of);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "memory plan: out of host memory");
  }

  /* Arena residents: intermediate base tensors produced by a live node. */
  uint32_t count = 0;
  for (uint32_t id = 1; id < g->tensor_count; id++) {
    const vkf_tensor *t = &g->tensors[id];
    index_of[id] = UINT32_MAX;
    if (t->removed || t->role != VKF_ROLE_INTERMEDIATE || t->base.id != id ||
        t->producer == VKF_NO_NODE || t->producer >= g->node_count)
      continue;
    index_of[id] = count;
    items[count++] = (item){id, align_up(vkf_tensor_size(t), alignment), t->producer, t->producer};
  }
  /* A read through any view (or in-place output) extends the base's lifetime to that reader. */
  for (uint32_t i = 0; i < g->node_count; i++) {
    const vkf_node *n = &g->nodes[i];
    for (uint32_t s = 0; s < n->input_count; s++) {
      if (!n->inputs[s].id) continue;
      uint32_t base = g->tensors[n->inputs[s].id].base.id;
      uint32_t k = index_of[base];
      if (k != UINT32_MAX && items[k].last < i) items[k].last = i;
    }
  }
  qsort(items, count, sizeof *items, by_size_desc);

  /* Each tensor goes to the lowest offset that is free over its whole lifetime. The gap search
   * below only ever skips past conflicting blocks, so offset <= sum of earlier sizes and the peak
   * can never exceed the naive sum. */
  for (uint32_t k = 0; k < count; k++) {
    uint32_t nb = 0;
    for (uint32_t j = 0; j < k; j++)
      if (items[j].first <= items[k].last && items[k].first <= items[j].last) {
        vkf_tensor_placement *p = &mp->placements[items[j].id];
        busy[nb++] = (range){p->offset, p->offset + p->size};
      }
    qsort(busy, nb, sizeof *busy, by_begin);
    size_t offset = 0;
    for (uint32_t j = 0; j < nb; j++) {
      if (busy[j].begin >= offset + items[k].size) break;
      if (busy[j].end > offset) offset = busy[j].end;
    }
    vkf_tensor_placement *p = &mp->placements[items[k].id];
    *p = (vkf_tensor_placement){1, offset, items[k].size, items[k].first, items[k].last};
    if (offset + items[k].size > mp->peak_size) mp->peak_size = offset + items[k].size;
    mp->naive_size += items[k].size;
  }
  /* Views and in-place outputs (kv_write) point into their base's block. */
  for (uint32_t id = 1; id < g->tensor_count; id++) {
    const vkf_tensor *t = &g->tensors[id];
    if (t->removed || t->base.id == id) continue;
    const vkf_tensor_placement *b = &mp->placements[t->base.id];
    vkf_tensor_placement *p = &mp->placements[id];
    *p = *b;
    p->offset = b->offset + (size_t)t->offset * vkf_dtype_size(t->dtype);
  }
  free(items);
  free(busy);
  free(index_of);
  mp->valid = 1;
  return VKF_OK;
}
