/* Owns gated-linear-unit fusion: with gu = x·[Wgate | Wup] (gate+up stacked),
 *   act(gu[..., :F]) * gu[..., F:]
 * read only as one matmul's A becomes that matmul reading gu itself, with matmul.a_glu = act (see
 * vkf_pass_fuse_glu). A SwiGLU decode step's silu·mul kernel and its barrier go: the down
 * projection computes the product as it loads A. With options->quant_glu_epilogue, where gu is
 * the output of a matmul with quantised weights read by nothing else, that matmul computes the
 * product in its epilogue instead (matmul.c_glu = act), at any rows: the quantised CPU kernel
 * takes gate column j and up column j in one lane, so no value is computed twice, and gu is never
 * stored. */
#include <stdlib.h>

#include "graph/ir/graph_internal.h"
#include "graph/passes/passes.h"

/* Rows at most (options->prologue_rows overrides it): the loads of A recompute the activation
 * once per workgroup column block, which costs nothing next to the weights only while rows are
 * few, as in a decode step. Every dim but the last counts (lowering runs batches as rows). */
enum { FOLD_MAX_ROWS = 8 };

/* The slice node making `v` as [start, end) of the last axis of some tensor, or NULL. */
static const vkf_node *last_axis_slice(const vkf_graph *g, vkf_value v) {
  const vkf_tensor *t = &g->tensors[v.id];
  if (t->producer == VKF_NO_NODE) return NULL;
  const vkf_node *s = &g->nodes[t->producer];
  const vkf_tensor *src = &g->tensors[s->inputs[0].id];
  if (s->dead || s->op != VKF_OP_SLICE || s->attrs.slice.axis != src->rank - 1) return NULL;
  return s;
}

typedef struct glu {
  uint32_t mul, act, gate_slice, up_slice;
  vkf_value gu;
  vkf_activation fn;
  int32_t matmul; /* the prologue's matmul */
} glu;

/* Whether mul node mi is act(gu[..., :F]) * gu[..., F:2F], the activation on operand `side`: the
 * pattern both folds take, f32 throughout, the activation's output an intermediate read only by
 * the mul. */
static int glu_parts(const vkf_graph *g, const uint32_t *uses, uint32_t mi, int side, glu *out) {
  const vkf_node *m = &g->nodes[mi];
  if (m->dead || m->op != VKF_OP_MUL || m->inputs[0].id == m->inputs[1].id) return 0;
  const vkf_tensor *at = &g->tensors[m->inputs[side].id];
  if (at->producer == VKF_NO_NODE) return 0;
  const vkf_node *a = &g->nodes[at->producer];
  vkf_activation fn = vkf_graph_activation_of(a->op);
  if (a->dead || fn == VKF_ACT_NONE || uses[m->inputs[side].id] != 1 ||
      at->role != VKF_ROLE_INTERMEDIATE)
    return 0;
  const vkf_node *gs = last_axis_slice(g, a->inputs[0]);
  const vkf_node *us = last_axis_slice(g, m->inputs[1 - side]);
  if (!gs || !us || gs->inputs[0].id != us->inputs[0].id) return 0;
  const vkf_tensor *gu = &g->tensors[gs->inputs[0].id];
  int64_t f = gu->shape[gu->rank - 1] / 2;
  if (gu->shape[gu->rank - 1] != 2 * f || gs->attrs.slice.start != 0 || gs->attrs.slice.end != f ||
      us->attrs.slice.start != f || us->attrs.slice.end != 2 * f)
    return 0;
  if (gu->dtype != VKF_F32 || g->tensors[m->output.id].dtype != VKF_F32 || at->dtype != VKF_F32)
    return 0;
  *out = (glu){.mul = mi,
               .act = at->producer,
               .gate_slice = g->tensors[a->inputs[0].id].producer,
               .up_slice = g->tensors[m->inputs[1 - side].id].producer,
               .gu = gs->inputs[0],
               .fn = fn,
               .matmul = -1};
  return 1;
}

/* The prologue: the product read once as a matmul's A, at most max_rows rows. */
static int match(const vkf_graph *g, const uint32_t *uses, uint32_t mi, int64_t max_rows,
                 glu *out) {
  for (int side = 0; side < 2; side++) {
    glu f;
    if (!glu_parts(g, uses, mi, side, &f)) continue;
    const vkf_tensor *gu = &g->tensors[f.gu.id], *y = &g->tensors[g->nodes[mi].output.id];
    if (gu->rank < 2 || vkf_tensor_rows(gu) > max_rows || y->rank != gu->rank) continue;
    int32_t ci = vkf_graph_sole_consumer(g, uses, g->nodes[mi].output, mi);
    if (ci < 0) continue;
    const vkf_node *c = &g->nodes[ci];
    if (c->op != VKF_OP_MATMUL || c->inputs[VKF_IN_MATMUL_A].id != g->nodes[mi].output.id ||
        c->attrs.matmul.a_rmsnorm || c->attrs.matmul.a_glu != VKF_ACT_NONE)
      continue;
    /* the matmul will read gu at its own slot */
    if (vkf_graph_in_place_between(g, f.gu, mi, (uint32_t)ci)) continue;
    f.matmul = ci;
    *out = f;
    return 1;
  }
  return 0;
}

/* The GLU epilogue: gu is made by a quantised-weights matmul (no bias, residual, activation or
 * GLU of its own) and read only by the two slices, each read only by the pattern (a graph
 * output counts as a reader); that matmul then makes the product itself, at the mul's slot. */
static int fold_epilogue(vkf_graph *g, const uint32_t *uses, uint32_t mi) {
  for (int side = 0; side < 2; side++) {
    glu f;
    if (!glu_parts(g, uses, mi, side, &f)) continue;
    const vkf_tensor *gu = &g->tensors[f.gu.id];
    if (uses[f.gu.id] != 2 || gu->role != VKF_ROLE_INTERMEDIATE || gu->producer == VKF_NO_NODE ||
        uses[g->nodes[f.gate_slice].output.id] != 1 || uses[g->nodes[f.up_slice].output.id] != 1)
      continue;
    uint32_t pi = gu->producer;
    vkf_node *p = &g->nodes[pi];
    if (p->dead || p->op != VKF_OP_MATMUL || !p->attrs.matmul.transpose_b ||
        !vkf_dtype_is_quant(g->tensors[p->inputs[VKF_IN_MATMUL_B].id].dtype) ||
        p->attrs.matmul.activation != VKF_ACT_NONE || p->attrs.matmul.a_glu != VKF_ACT_NONE ||
        p->attrs.matmul.c_glu != VKF_ACT_NONE ||
        (p->input_count > VKF_IN_MATMUL_BIAS && p->inputs[VKF_IN_MATMUL_BIAS].id) ||
        (p->input_count > VKF_IN_MATMUL_RESIDUAL && p->inputs[VKF_IN_MATMUL_RESIDUAL].id))
      continue;
    /* the merged matmul reads its inputs at the mul's slot */
    int moved = 0;
    for (uint32_t s = 0; s < p->input_count; s++)
      moved |= vkf_value_valid(p->inputs[s]) && vkf_graph_in_place_between(g, p->inputs[s], pi, mi);
    if (moved) continue;
    vkf_node merged = *p;
    merged.attrs.matmul.c_glu = f.fn;
    merged.output = g->nodes[mi].output;
    g->nodes[f.gate_slice].dead = g->nodes[f.up_slice].dead = g->nodes[f.act].dead = 1;
    p->dead = 1;
    g->nodes[mi] = merged;
    return 1;
  }
  return 0;
}

vkf_status vkf_pass_fuse_glu(vkf_graph *g, const vkf_pass_options *options,
                             uint32_t *out_rewrites) {
  int64_t max_rows =
      options && options->prologue_rows > 0 ? options->prologue_rows : FOLD_MAX_ROWS;
  *out_rewrites = 0;
  uint32_t *uses = vkf_graph_use_counts(g);
  if (!uses) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "fuse_glu: out of memory");
  for (uint32_t i = 0; options && options->quant_glu_epilogue && i < g->node_count; i++)
    if (fold_epilogue(g, uses, i)) (*out_rewrites)++;
  for (uint32_t i = 0; i < g->node_count; i++) {
    glu f;
    if (!match(g, uses, i, max_rows, &f)) continue;
    vkf_node *c = &g->nodes[f.matmul];
    vkf_value gu = f.gu;
    c->inputs[VKF_IN_MATMUL_A] = gu;
    c->attrs.matmul.a_glu = f.fn;
    g->nodes[f.mul].dead = g->nodes[f.act].dead = 1;
    /* The slices go too when nothing else reads them (their readers were the two nodes). */
    uses[gu.id]++;
    if (uses[g->nodes[f.gate_slice].output.id] == 1) g->nodes[f.gate_slice].dead = 1;
    if (uses[g->nodes[f.up_slice].output.id] == 1) g->nodes[f.up_slice].dead = 1;
    (*out_rewrites)++;
  }
  free(uses);
  vkf_graph_compact(g);
  return VKF_OK;
}
