/* Owns attention fusion: the unfused pattern matmul(q, kᵀ) -> scale -> mask -> softmax ->
 * matmul(·, v) is rewritten into one attention node, and an attention whose output is only
 * permuted to [B, N, H, Dv] and copied (the heads merge of every multi-head block) writes that
 * layout itself (see vkf_pass_fuse_attention). */
#include <stdlib.h>
#include <string.h>

#include "graph/ir/graph_internal.h"
#include "graph/passes/passes.h"

/* The live producer of v, or NULL for inputs, constants and values of dead nodes. */
static vkf_node *producer(vkf_graph *g, vkf_value v) {
  if (!v.id) return NULL;
  uint32_t p = g->tensors[v.id].producer;
  if (p == VKF_NO_NODE || g->nodes[p].dead) return NULL;
  return &g->nodes[p];
}

/* v is consumed exactly once and is no graph output: folding its producer loses nothing. */
static int single_use(const vkf_graph *g, const uint32_t *uses, vkf_value v) {
  return uses[v.id] == 1 && g->tensors[v.id].role == VKF_ROLE_INTERMEDIATE;
}

static int plain_matmul(const vkf_node *n) {
  return n && n->op == VKF_OP_MATMUL && n->input_count == 2 &&
         n->attrs.matmul.activation == VKF_ACT_NONE;
}

/* True when `n` is a permute that swaps the last two axes and keeps the others. */
static int swaps_last_two(const vkf_graph *g, const vkf_node *n) {
  if (!n || n->op != VKF_OP_PERMUTE) return 0;
  uint32_t r = g->tensors[n->output.id].rank;
  if (r < 2) return 0;
  for (uint32_t i = 0; i + 2 < r; i++)
    if (n->attrs.permute.axes[i] != i) return 0;
  return n->attrs.permute.axes[r - 2] == r - 1 && n->attrs.permute.axes[r - 1] == r - 2;
}

/* Tries to fuse the pattern ending at node `pv` (the probabilities x values matmul). On success
 * rewrites pv into an attention node and marks the absorbed nodes dead. */
static int try_fuse(vkf_graph *g, const uint32_t *uses, vkf_node *pv) {
  if (!plain_matmul(pv) || pv->attrs.matmul.transpose_b) return 0;
  vkf_value p = pv->inputs[VKF_IN_MATMUL_A], v = pv->inputs[VKF_IN_MATMUL_B];
  vkf_node *sm = producer(g, p);
  if (!sm || sm->op != VKF_OP_SOFTMAX || !single_use(g, uses, p)) return 0;
  vkf_node *absorbed[16];
  uint32_t absorbed_count = 0;
  absorbed[absorbed_count++] = sm;

  float scale = sm->attrs.softmax.scale;
  vkf_value kv_len = VKF_NO_VALUE, bias = VKF_NO_VALUE;
  vkf_value vl = sm->input_count > VKF_IN_SOFTMAX_VALID_LENS ? sm->inputs[VKF_IN_SOFTMAX_VALID_LENS]
                                                             : VKF_NO_VALUE;
  if (vl.id) {
    if (g->tensors[vl.id].rank != 1) return 0; /* per-row lengths have no attention equivalent */
    kv_len = vl;
  }
  if (sm->input_count > VKF_IN_SOFTMAX_BIAS) bias = sm->inputs[VKF_IN_SOFTMAX_BIAS];

  /* Walk up from the softmax input: an optional additive mask, then scales, then q·kᵀ. */
  vkf_value s = sm->inputs[VKF_IN_SOFTMAX_X];
  vkf_node *n = producer(g, s);
  if (n && n->op == VKF_OP_ADD && single_use(g, uses, s) && scale == 1.0f && !bias.id) {
    /* softmax(x + mask): the mask is whichever operand is not the scores chain. */
    vkf_node *l = producer(g, n->inputs[0]), *r = producer(g, n->inputs[1]);
    int left_is_chain = l && (l->op == VKF_OP_SCALE || plain_matmul(l));
    int right_is_chain = r && (r->op == VKF_OP_SCALE || plain_matmul(r));
    if (left_is_chain == right_is_chain) return 0;
    bias = n->inputs[left_is_chain ? 1 : 0];
    s = n->inputs[left_is_chain ? 0 : 1];
    absorbed[absorbed_count++] = n;
    n = producer(g, s);
  }
  while (n && n->op == VKF_OP_SCALE && single_use(g, uses, s) && absorbed_count < 15) {
    scale *= n->attrs.scale.value;
    absorbed[absorbed_count++] = n;
    s = n->inputs[0];
    n = producer(g, s);
  }
  if (!plain_matmul(n) || !single_use(g, uses, s)) return 0;
  absorbed[absorbed_count++] = n;
  vkf_value q = n->inputs[VKF_IN_MATMUL_A], k = n->inputs[VKF_IN_MATMUL_B];
  vkf_node *kt = NULL;
  if (!n->attrs.matmul.transpose_b) {
    kt = producer(g, k);
    if (!swaps_last_two(g, kt)) return 0;
    k = kt->inputs[0]; /* the permute becomes dead if nothing else reads it (DCE) */
  }

  vkf_node cand = *pv;
  cand.op = VKF_OP_ATTENTION;
  memset(&cand.attrs, 0, sizeof cand.attrs);
  cand.attrs.attention.scale = scale;
  cand.attrs.attention.causal = sm->attrs.softmax.causal;
  cand.attrs.attention.window_left = -1;
  cand.attrs.attention.window_right = -1;
  vkf_value in[5] = {q, k, v, kv_len, bias};
  cand.input_count = bias.id ? 5 : kv_len.id ? 4 : 3;
  memset(cand.inputs, 0, sizeof cand.inputs);
  memcpy(cand.inputs, in, cand.input_count * sizeof in[0]);
  /* The fused node must infer exactly the matmul's output (rank, batch dims and dtype agree). */
  /* The fused node reads q, k, v, kv_len and bias at the last matmul's slot: refused when an
   * in-place write of one of them lies between the earliest absorbed node and it. */
  uint32_t first = (uint32_t)(pv - g->nodes);
  for (uint32_t i = 0; i < absorbed_count; i++)
    if ((uint32_t)(absorbed[i] - g->nodes) < first) first = (uint32_t)(absorbed[i] - g->nodes);
  if (kt && (uint32_t)(kt - g->nodes) < first) first = (uint32_t)(kt - g->nodes);
  for (uint32_t i = 0; i < cand.input_count; i++)
    if (vkf_graph_in_place_between(g, cand.inputs[i], first, (uint32_t)(pv - g->nodes))) return 0;
  vkf_tensor desc;
  vkf_status st = vkf_graph_infer_node(g, &cand, &desc);
  const vkf_tensor *out = &g->tensors[pv->output.id];
  int same = !st && desc.dtype == out->dtype && desc.rank == out->rank &&
             memcmp(desc.shape, out->shape, out->rank * sizeof out->shape[0]) == 0;
  vkf_status_free(st);
  if (!same) return 0;
  *pv = cand;
  for (uint32_t i = 0; i < absorbed_count; i++) absorbed[i]->dead = 1;
  return 1;
}

/* attention [B,H,N,Dv] -> permute (0,2,1,3) -> copy: the attention node takes over the copy's
 * output with merge_heads set (the kernel writes each row where the copy would have put it), and
 * the permute and the copy die. Saves a pass over the output and its buffer. */
static int try_merge_heads(vkf_graph *g, const uint32_t *uses, uint32_t index) {
  vkf_node *a = &g->nodes[index];
  if (a->op != VKF_OP_ATTENTION || a->attrs.attention.merge_heads ||
      g->tensors[a->output.id].rank != 4)
    return 0;
  int32_t pi = vkf_graph_sole_consumer(g, uses, a->output, index);
  vkf_node *p = pi < 0 ? NULL : &g->nodes[pi];
  static const uint32_t merge[4] = {0, 2, 1, 3};
  if (!p || p->op != VKF_OP_PERMUTE || memcmp(p->attrs.permute.axes, merge, sizeof merge) != 0)
    return 0;
  int32_t ci = vkf_graph_sole_consumer(g, uses, p->output, (uint32_t)pi);
  vkf_node *c = ci < 0 ? NULL : &g->nodes[ci];
  if (!c || c->op != VKF_OP_COPY) return 0;
  vkf_tensor *old = &g->tensors[a->output.id], *out = &g->tensors[c->output.id];
  if (out->dtype != old->dtype || out->base.id != c->output.id) return 0;
  a->attrs.attention.merge_heads = 1;
  a->output = c->output;
  out->producer = index;
  old->producer = VKF_NO_NODE;
  old->removed = 1;
  p->dead = 1;
  c->dead = 1;
  return 1;
}

vkf_status vkf_pass_fuse_attention(vkf_graph *g, const vkf_pass_options *options,
                                   uint32_t *out_rewrites) {
  *out_rewrites = 0;
  uint32_t *uses = vkf_graph_use_counts(g);
  if (!uses) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "fuse_attention: out of memory");
  for (uint32_t i = 0; i < g->node_count; i++)
    if (!g->nodes[i].dead && try_fuse(g, uses, &g->nodes[i])) (*out_rewrites)++;
  /* Use counts are unchanged by the fusions for what the merge looks at (attention outputs and
   * their readers), so the same table serves. */
  for (uint32_t i = 0; i < g->node_count; i++)
    if (!g->nodes[i].dead && try_merge_heads(g, uses, i)) (*out_rewrites)++;
  free(uses);
  g->plan.valid = 0;
  /* Removes the absorbed nodes and any transposes left without readers. */
  uint32_t removed;
  return vkf_pass_dce(g, options, &removed);
}
