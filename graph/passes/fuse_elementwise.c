/* Owns elementwise grouping: a tree of single-use elementwise nodes becomes one
 * fused_elementwise node carrying a small program that a GLSL generator can turn into one kernel.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/ir/graph_internal.h"
#include "graph/passes/passes.h"

enum { MAX_GROUP = 64 };

typedef struct group {
  uint32_t members[MAX_GROUP]; /* node indices */
  uint32_t count;
} group;

static int is_member(const group *grp, uint32_t node) {
  for (uint32_t i = 0; i < grp->count; i++)
    if (grp->members[i] == node) return 1;
  return 0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static int elementwise(const vkf_node *n) {
  return !n->dead && (vkf_op_flags(n->op) & VKF_OPF_ELEMENTWISE);
}

/* Fusing moves node `member`'s reads to the root's slot: refused when an in-place write of
 * something it reads lies in between. */
static int moves_past_write(const vkf_graph *g, uint32_t member, uint32_t root) {
  const vkf_node *n = &g->nodes[member];
  for (uint32_t s = 0; s < n->input_count; s++)
    if (vkf_graph_in_place_between(g, n->inputs[s], member, root)) return 1;
  return 0;
}

/* Grows the group backwards from its root through inputs that are single-use outputs of other
 * elementwise nodes of the same dtype. */
static void grow(const vkf_graph *g, const uint32_t *uses, const unsigned char *taken, group *grp) {
  vkf_dtype dtype = g->tensors[g->nodes[grp->members[0]].output.id].dtype;
  for (uint32_t k = 0; k < grp->count; k++) {
    const vkf_node *n = &g->nodes[grp->members[k]];
    for (uint32_t s = 0; s < n->input_count && grp->count < MAX_GROUP; s++) {
      vkf_value v = n->inputs[s];
      const vkf_tensor *t = &g->tensors[v.id];
      if (t->producer == VKF_NO_NODE || uses[v.id] != 1 || t->role != VKF_ROLE_INTERMEDIATE ||
          t->dtype != dtype || taken[t->producer] || is_member(grp, t->producer))
        continue;
      if (!elementwise(&g->nodes[t->producer]) || moves_past_write(g, t->producer, grp->members[0]))
        continue;
      grp->members[grp->count++] = t->producer;
    }
  }
}

/* Rewrites the group's root into a fused_elementwise node; 0 when it needs too many inputs. */
static int rewrite(vkf_graph *g, group *grp) {
  qsort(grp->members, grp->count, sizeof grp->members[0], cmp_u32);
  uint32_t root = grp->members[grp->count - 1];
  vkf_value ext[VKF_MAX_NODE_INPUTS];
  uint32_t ext_count = 0;
  vkf_ew_instr *prog = vkf_arena_alloc(g->arena, grp->count * sizeof *prog);
  if (!prog) return 0;
  for (uint32_t k = 0; k < grp->count; k++) {
    const vkf_node *n = &g->nodes[grp->members[k]];
    uint32_t regs[2] = {0, 0};
    for (uint32_t s = 0; s < n->input_count; s++) {
      vkf_value v = n->inputs[s];
      uint32_t p = g->tensors[v.id].producer;
      int internal = 0;
      for (uint32_t j = 0; j < k; j++)
        if (grp->members[j] == p) {
          regs[s] = VKF_MAX_NODE_INPUTS + j; /* temporarily: fixed up below */
          internal = 1;
        }
      if (internal) continue;
      uint32_t e = 0;
      while (e < ext_count && ext[e].id != v.id) e++;
      if (e == ext_count) {
        if (ext_count == VKF_MAX_NODE_INPUTS) return 0;
        ext[ext_count++] = v;
      }
      regs[s] = e;
    }
    prog[k] = (vkf_ew_instr){n->op, regs[0], regs[1],
                             n->op == VKF_OP_SCALE ? n->attrs.scale.value : 0.0f};
  }
  /* Registers: inputs first, then one per instruction. */
  for (uint32_t k = 0; k < grp->count; k++) {
    if (prog[k].a >= VKF_MAX_NODE_INPUTS) prog[k].a = prog[k].a - VKF_MAX_NODE_INPUTS + ext_count;
    if (prog[k].b >= VKF_MAX_NODE_INPUTS) prog[k].b = prog[k].b - VKF_MAX_NODE_INPUTS + ext_count;
  }
  vkf_node fused = g->nodes[root];
  fused.op = VKF_OP_FUSED_ELEMENTWISE;
  memset(&fused.attrs, 0, sizeof fused.attrs);
  fused.attrs.fused.count = grp->count;
  fused.attrs.fused.instrs = prog;
  memset(fused.inputs, 0, sizeof fused.inputs);
  memcpy(fused.inputs, ext, ext_count * sizeof ext[0]);
  fused.input_count = ext_count;
  /* Broadcasting inside the tree must not change the root's shape. */
  vkf_tensor desc;
  vkf_status st = vkf_graph_infer_node(g, &fused, &desc);
  const vkf_tensor *out = &g->tensors[fused.output.id];
  int same = !st && desc.rank == out->rank && desc.dtype == out->dtype &&
             memcmp(desc.shape, out->shape, out->rank * sizeof out->shape[0]) == 0;
  vkf_status_free(st);
  if (!same) return 0;
  g->nodes[root] = fused;
  for (uint32_t k = 0; k + 1 < grp->count; k++) g->nodes[grp->members[k]].dead = 1;
  return 1;
}

vkf_status vkf_pass_fuse_elementwise(vkf_graph *g, const vkf_pass_options *options,
                                     uint32_t *out_rewrites) {
  (void)options;
  *out_rewrites = 0;
  uint32_t *uses = vkf_graph_use_counts(g);
  unsigned char *taken = calloc(g->node_count + 1, 1);
  if (!uses || !taken) {
    free(uses);
    free(taken);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "fuse_elementwise: out of memory");
  }
  /* Roots are visited last-first, so each group is as large as single-use edges allow. */
  for (uint32_t i = g->node_count; i-- > 0;) {
    if (taken[i] || !elementwise(&g->nodes[i])) continue;
    group grp = {.members = {i}, .count = 1};
    grow(g, uses, taken, &grp);
    for (uint32_t k = 0; k < grp.count; k++) taken[grp.members[k]] = 1;
    if (grp.count >= 2 && rewrite(g, &grp)) (*out_rewrites)++;
  }
  free(uses);
  free(taken);
  vkf_graph_compact(g);
  return VKF_OK;
}
