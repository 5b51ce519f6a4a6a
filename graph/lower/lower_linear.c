/* Owns the lowering of the linear-attention family onto shaders/linear_features.comp and
 * shaders/linear_attention.comp (whose header describes the four modes):
 *  - LINEAR_FEATURES: one dispatch (elu1: per element; FAVOR+ / RFF: per 4 rows x 4 vectors);
 *  - LINEAR_ATTENTION non-causal: reduce every token into the totals [BH, F, Dv+1] (scratch), then
 *    the output (4 rows x 4 columns per invocation);
 *  - causal: the intra-chunk weights [BH*N, chunk] (and, gated, each row's decay), then, past one
 *    chunk, the chunk sums [BH*Nc, F*(Dv+1)] and decays and an exclusive scan over the chunks from
 *    the initial state, then the output (the chunk's start state + the intra-chunk weights). A
 *    single chunk (decoding, short prompts) reads the initial state directly;
 *  - LINEAR_STATE_WRITE: one reduce dispatch over all T tokens, starting from and writing the
 *    state in place (its output is the state's storage, as kv_write's is the cache's).
 * Tensors are f32 (the shape functions require it); strided views are read through their
 * strides. Kernel indices are 32-bit: a node whose indices would not fit is an error naming it;
 * scratch past maxStorageBufferRange is the plan check's one-line error naming the buffer. */
#include <stdio.h>

#include "graph/lower/lower_node.h"
#include "graph/lower/lower_layout.h"

enum { WORKGROUP = 64 };

typedef struct lin_dispatch {
  vkf_plan_dispatch d;
  int too_big; /* an index past 32 bits */
} lin_dispatch;

static uint64_t last_index(const vkf_plan_tensor *t) {
  uint64_t last = 0;
  for (uint32_t i = 0; i < t->rank; i++) last += (uint64_t)(t->shape[i] - 1) * t->strides[i];
  return last;
}

static uint32_t bind(const vkf_lower_ctx *ctx, lin_dispatch *ld, const vkf_plan_tensor *t,
                     vkf_plan_access access) {
  uint32_t off = vkf_lower_bind(ctx, &ld->d, t, access);
  if ((uint64_t)off + last_index(t) >= UINT32_MAX) ld->too_big = 1;
  return off;
}

/* Pushes offset then rank strides (the tensor's, as 32-bit words). */
static void push_view(lin_dispatch *ld, uint32_t off, const vkf_plan_tensor *t, uint32_t rank) {
  vkf_plan_dispatch_push_u32(&ld->d, off);
  for (uint32_t i = 0; i < rank; i++) {
    if (t->strides[i] > UINT32_MAX) ld->too_big = 1;
    vkf_plan_dispatch_push_u32(&ld->d, (uint32_t)t->strides[i]);
  }
}

static vkf_status add(const vkf_lower_ctx *ctx, const vkf_lower_node *n, lin_dispatch *ld,
                      uint64_t count) {
  if (ld->too_big || count >= INT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s \"%s\": needs indices beyond 32 bits",
                           vkf_op_name(n->op), n->name);
  uint32_t wg = vkf_lower_workgroup_1d(ctx, WORKGROUP);
  ld->d.spec[0] = wg;
  ld->d.spec_count = 1;
  ld->d.groups[0] = vkf_lower_groups_1d(ctx, count, wg);
  ld->d.groups[1] = ld->d.groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, &ld->d);
}

/* A scratch tensor [rows, cols] f32 in a new plan buffer. */
static vkf_plan_tensor scratch(const vkf_lower_ctx *ctx, const vkf_lower_node *n, const char *what,
                               uint64_t rows, uint64_t cols) {
  char name[192];
  snprintf(name, sizeof name, "%s.%s", n->name, what);
  vkf_plan_tensor t = {.dtype = VKF_F32, .rank = 2, .shape = {(int64_t)rows, (int64_t)cols}};
  t.buffer = vkf_plan_add_buffer(ctx->plan, VKF_PLAN_BUFFER_SCRATCH, name, rows * cols * 4);
  t.strides[0] = (int64_t)cols;
  t.strides[1] = 1;
  return t;
}

static vkf_status lower_features(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  const vkf_plan_tensor *x = &n->inputs[VKF_IN_LFEAT_X], *w = &n->inputs[VKF_IN_LFEAT_OMEGA];
  const vkf_plan_tensor *y = &n->output;
  vkf_feature_map kind = n->attrs->linear_features.kind;
  lin_dispatch ld = {.d = {.node = n->name, .shader = "linear_features.comp"}};
  static const char *const kinds[VKF_FEATURE_COUNT] = {"KIND=0", "KIND=1", "KIND=2"};
  vkf_plan_dispatch_define(&ld.d, kinds[kind]);
  int elu = kind == VKF_FEATURE_ELU1;
  uint32_t x_off = bind(ctx, &ld, x, VKF_ACCESS_READ);
  uint32_t y_off = bind(ctx, &ld, y, VKF_ACCESS_WRITE);
  uint32_t w_off = elu ? 0 : bind(ctx, &ld, w, VKF_ACCESS_READ);
  uint64_t rows = (uint64_t)y->shape[0] * y->shape[1] * y->shape[2];
  uint32_t m = elu ? 1u : (uint32_t)w->shape[0], tiles_k = (m + 3) / 4;
  /* ELU1: one invocation per element; random features: per 4 rows x 4 vectors. */
  uint64_t count = elu ? (uint64_t)vkf_plan_tensor_count(y) : (rows + 3) / 4 * tiles_k;
  if (rows >= INT32_MAX) ld.too_big = 1;
  uint32_t head[] = {(uint32_t)count,
                     (uint32_t)rows,
                     tiles_k,
                     (uint32_t)y->shape[1],
                     (uint32_t)y->shape[2],
                     (uint32_t)y->shape[3],
                     (uint32_t)x->shape[3],
                     m};
  for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
    vkf_plan_dispatch_push_u32(&ld.d, head[i]);
  push_view(&ld, x_off, x, 4);
  push_view(&ld, w_off, elu ? x : w, 2);
  vkf_plan_dispatch_push_u32(&ld.d, y_off);
  vkf_plan_dispatch_push_f32(&ld.d, n->attrs->linear_features.scale);
  return add(ctx, n, &ld, count);
}

/* vkf_plan_dispatch_define keeps the pointer until the dispatch is added: literals only. */
static void define_flag(vkf_plan_dispatch *d, const char *on_define, const char *off_define,
                        int on) {
  vkf_plan_dispatch_define(d, on ? on_define : off_define);
}

/* MODE 0: tokens [c*chunk, ...) of k/v (and gate) into dst [BH*Nc, F*(Dv+1)]; init: from dst's
 * old value (in place). decay: [BH*Nc] when gated. 4 x 4 tiles of S per invocation. */
static vkf_status reduce(const vkf_lower_ctx *ctx, const vkf_lower_node *n,
                         const vkf_plan_tensor *k, const vkf_plan_tensor *v,
                         const vkf_plan_tensor *gate, const vkf_plan_tensor *dst,
                         const vkf_plan_tensor *decay, uint32_t chunk, int init) {
  int gated = vkf_plan_tensor_present(gate);
  uint32_t heads = (uint32_t)k->shape[1], len = (uint32_t)k->shape[2], f = (uint32_t)k->shape[3];
  uint32_t cols = (uint32_t)v->shape[3] + 1, nc = (len + chunk - 1) / chunk;
  uint32_t tiles_i = (f + 3) / 4, tiles_j = (cols + 3) / 4;
  lin_dispatch ld = {.d = {.node = n->name, .shader = "linear_attention.comp"}};
  vkf_plan_dispatch_define(&ld.d, "MODE=0");
  define_flag(&ld.d, "GATED=1", "GATED=0", gated);
  define_flag(&ld.d, "INIT=1", "INIT=0", init);
  uint32_t k_off = bind(ctx, &ld, k, VKF_ACCESS_READ);
  uint32_t v_off = bind(ctx, &ld, v, VKF_ACCESS_READ);
  uint32_t g_off = bind(ctx, &ld, gated ? gate : k, VKF_ACCESS_READ);
  uint32_t d_off = bind(ctx, &ld, dst, init ? VKF_ACCESS_READ_WRITE : VKF_ACCESS_WRITE);
  uint32_t decay_off = gated ? bind(ctx, &ld, decay, VKF_ACCESS_WRITE) : 0;
  uint64_t count = (uint64_t)k->shape[0] * heads * nc * tiles_i * tiles_j;
  uint32_t head[] = {(uint32_t)count, tiles_j, tiles_i, nc, heads, len, chunk, f, cols};
  for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
    vkf_plan_dispatch_push_u32(&ld.d, head[i]);
  push_view(&ld, k_off, k, 4);
  push_view(&ld, v_off, v, 4);
  push_view(&ld, g_off, gated ? gate : k, 3);
  vkf_plan_dispatch_push_u32(&ld.d, d_off);
  vkf_plan_dispatch_push_u32(&ld.d, decay_off);
  return add(ctx, n, &ld, count);
}

/* MODE 1: sums [BH*Nc, E] -> the state at each chunk's start, from init [BH, E] or zeros. */
static vkf_status scan(const vkf_lower_ctx *ctx, const vkf_lower_node *n,
                       const vkf_plan_tensor *sums, const vkf_plan_tensor *decay,
                       const vkf_plan_tensor *init, uint64_t bh, uint32_t nc, uint32_t e) {
  int gated = vkf_plan_tensor_present(decay), has_init = vkf_plan_tensor_present(init);
  lin_dispatch ld = {.d = {.node = n->name, .shader = "linear_attention.comp"}};
  vkf_plan_dispatch_define(&ld.d, "MODE=1");
  define_flag(&ld.d, "GATED=1", "GATED=0", gated);
  define_flag(&ld.d, "INIT=1", "INIT=0", has_init);
  uint32_t s_off = bind(ctx, &ld, sums, VKF_ACCESS_READ_WRITE);
  uint32_t d_off = 0, i_off = 0;
  if (gated)
    d_off = bind(ctx, &ld, decay, VKF_ACCESS_READ);
  else if (has_init)
    bind(ctx, &ld, init, VKF_ACCESS_READ); /* fills binding 1 */
  if (has_init) i_off = bind(ctx, &ld, init, VKF_ACCESS_READ);
  uint64_t count = bh * e;
  uint32_t words[] = {(uint32_t)count, e, nc, s_off, d_off, i_off};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    vkf_plan_dispatch_push_u32(&ld.d, words[i]);
  return add(ctx, n, &ld, count);
}

/* MODE 3: intra-chunk weights W [BH*N, chunk] and, gated, the decay of each row's chunk-start
 * state [BH*N]. */
static vkf_status weights(const vkf_lower_ctx *ctx, const vkf_lower_node *n,
                          const vkf_plan_tensor *w, const vkf_plan_tensor *decay, uint32_t chunk) {
  const vkf_plan_tensor *q = &n->inputs[VKF_IN_LIN_Q], *k = &n->inputs[VKF_IN_LIN_K];
  const vkf_plan_tensor *gate = &n->inputs[VKF_IN_LIN_GATE];
  int gated = vkf_plan_tensor_present(gate);
  uint32_t heads = (uint32_t)q->shape[1], len = (uint32_t)q->shape[2], f = (uint32_t)q->shape[3];
  uint32_t tiles_m = chunk / 4, tiles_r = (len + 3) / 4;
  lin_dispatch ld = {.d = {.node = n->name, .shader = "linear_attention.comp"}};
  vkf_plan_dispatch_define(&ld.d, "MODE=3");
  define_flag(&ld.d, "GATED=1", "GATED=0", gated);
  uint32_t q_off = bind(ctx, &ld, q, VKF_ACCESS_READ);
  uint32_t k_off = bind(ctx, &ld, k, VKF_ACCESS_READ);
  uint32_t g_off = bind(ctx, &ld, gated ? gate : k, VKF_ACCESS_READ);
  uint32_t w_off = bind(ctx, &ld, w, VKF_ACCESS_WRITE);
  uint32_t d_off = gated ? bind(ctx, &ld, decay, VKF_ACCESS_WRITE) : 0;
  uint64_t count = (uint64_t)q->shape[0] * heads * tiles_r * tiles_m;
  uint32_t head[] = {(uint32_t)count, tiles_m, tiles_r, heads, len, chunk, f};
  for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
    vkf_plan_dispatch_push_u32(&ld.d, head[i]);
  push_view(&ld, q_off, q, 4);
  push_view(&ld, k_off, k, 4);
  push_view(&ld, g_off, gated ? gate : k, 3);
  vkf_plan_dispatch_push_u32(&ld.d, w_off);
  vkf_plan_dispatch_push_u32(&ld.d, d_off);
  return add(ctx, n, &ld, count);
}

/* MODE 2: 4 rows x 4 columns per invocation; pstate [BH*Nc, F*(Dv+1)] (absent: zeros), w and
 * decay from weights() (causal). */
static vkf_status output(const vkf_lower_ctx *ctx, const vkf_lower_node *n,
                         const vkf_plan_tensor *pstate, const vkf_plan_tensor *w,
                         const vkf_plan_tensor *decay, uint32_t chunk, int causal) {
  const vkf_plan_tensor *q = &n->inputs[VKF_IN_LIN_Q], *v = &n->inputs[VKF_IN_LIN_V];
  int gated = causal && vkf_plan_tensor_present(decay), has_p = vkf_plan_tensor_present(pstate);
  uint32_t heads = (uint32_t)q->shape[1], len = (uint32_t)q->shape[2], f = (uint32_t)q->shape[3];
  uint32_t dv = (uint32_t)v->shape[3], tiles_j = (dv + 3) / 4, tiles_r = (len + 3) / 4;
  lin_dispatch ld = {.d = {.node = n->name, .shader = "linear_attention.comp"}};
  vkf_plan_dispatch_define(&ld.d, "MODE=2");
  define_flag(&ld.d, "GATED=1", "GATED=0", gated);
  define_flag(&ld.d, "CAUSAL=1", "CAUSAL=0", causal);
  define_flag(&ld.d, "HAS_P=1", "HAS_P=0", has_p);
  uint32_t q_off = bind(ctx, &ld, q, VKF_ACCESS_READ);
  uint32_t v_off = bind(ctx, &ld, v, VKF_ACCESS_READ);
  uint32_t w_off = bind(ctx, &ld, causal ? w : q, VKF_ACCESS_READ);
  uint32_t d_off = bind(ctx, &ld, gated ? decay : q, VKF_ACCESS_READ);
  uint32_t p_off = bind(ctx, &ld, has_p ? pstate : q, VKF_ACCESS_READ);
  uint32_t o_off = bind(ctx, &ld, &n->output, VKF_ACCESS_WRITE);
  uint64_t count = (uint64_t)q->shape[0] * heads * tiles_r * tiles_j;
  uint32_t head[] = {(uint32_t)count, tiles_j, tiles_r, heads, len, chunk, f, dv};
  for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
    vkf_plan_dispatch_push_u32(&ld.d, head[i]);
  push_view(&ld, q_off, q, 4);
  push_view(&ld, v_off, v, 4);
  uint32_t tail[] = {w_off, d_off, p_off, o_off};
  for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
    vkf_plan_dispatch_push_u32(&ld.d, tail[i]);
  vkf_plan_dispatch_push_f32(&ld.d, n->attrs->linear_attention.eps);
  return add(ctx, n, &ld, count);
}

static const vkf_plan_tensor k_absent = {.buffer = VKF_PLAN_NO_BUFFER};

/* The scan's chunk: the attribute rounded up to a multiple of 4 (a row tile never straddles two
 * chunks) and at most 128 (W holds N x chunk weights); the result does not depend on it. */
static uint32_t effective_chunk(uint32_t chunk) {
  chunk = (chunk + 3) / 4 * 4;
  return chunk < 4 ? 4 : chunk > 128 ? 128 : chunk;
}

/* Past maxStorageBufferRange a longer chunk keeps the chunk states ([BH * N / chunk, E]) in one
 * binding, at the cost of more intra-chunk weights ([BH * N, chunk]): the first chunk from `chunk`
 * up to 256 for which both fit (else `chunk`, and the plan check names the binding). */
static uint32_t fitting_chunk(const vkf_lower_ctx *ctx, uint32_t chunk, uint64_t bh, uint32_t len,
                              uint32_t e) {
  uint64_t range = ctx->caps->max_storage_buffer_range;
  if (!range) return chunk;
  for (uint32_t c = chunk; c <= 256; c += 4) {
    uint64_t states = bh * ((len + c - 1) / c) * e * 4, weights = bh * len * c * 4;
    if (states <= range && weights <= range) return c;
  }
  return chunk;
}

static vkf_status lower_attention(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  const vkf_plan_tensor *k = &n->inputs[VKF_IN_LIN_K], *v = &n->inputs[VKF_IN_LIN_V];
  const vkf_plan_tensor *gate = &n->inputs[VKF_IN_LIN_GATE];
  const vkf_plan_tensor *state = &n->inputs[VKF_IN_LIN_STATE];
  uint64_t bh = (uint64_t)k->shape[0] * k->shape[1];
  uint32_t len = (uint32_t)k->shape[2], e = (uint32_t)(k->shape[3] * (v->shape[3] + 1));
  if (!n->attrs->linear_attention.causal) {
    vkf_plan_tensor totals = scratch(ctx, n, "totals", bh, e);
    VKF_RETURN_IF_ERROR(reduce(ctx, n, k, v, &k_absent, &totals, NULL, len, 0));
    return output(ctx, n, &totals, &k_absent, &k_absent, len, 0);
  }
  uint32_t chunk =
      fitting_chunk(ctx, effective_chunk(n->attrs->linear_attention.chunk), bh, len, e);
  uint32_t nc = (len + chunk - 1) / chunk;
  int gated = vkf_plan_tensor_present(gate);
  vkf_plan_tensor w = scratch(ctx, n, "intra_weights", bh * len, chunk);
  vkf_plan_tensor row_decay = gated ? scratch(ctx, n, "row_decay", bh * len, 1) : k_absent;
  VKF_RETURN_IF_ERROR(weights(ctx, n, &w, &row_decay, chunk));
  if (nc == 1) /* one chunk: its start state is the initial state */
    return output(ctx, n, vkf_plan_tensor_present(state) ? state : &k_absent, &w, &row_decay, chunk,
                  1);
  vkf_plan_tensor sums = scratch(ctx, n, "chunk_states", bh * nc, e);
  vkf_plan_tensor decay = gated ? scratch(ctx, n, "chunk_decay", bh * nc, 1) : k_absent;
  VKF_RETURN_IF_ERROR(reduce(ctx, n, k, v, gate, &sums, &decay, chunk, 0));
  vkf_plan_tensor init = k_absent;
  if (vkf_plan_tensor_present(state)) {
    if (!vkf_plan_tensor_is_contiguous(state))
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "linear_attention \"%s\": the state must be contiguous", n->name);
    init = *state; /* [B, H, F, Dv+1] contiguous as [BH, E] */
    init.rank = 2;
    init.shape[0] = (int64_t)bh;
    init.shape[1] = e;
    init.strides[0] = e;
    init.strides[1] = 1;
  }
  VKF_RETURN_IF_ERROR(scan(ctx, n, &sums, &decay, &init, bh, nc, e));
  return output(ctx, n, &sums, &w, &row_decay, chunk, 1);
}

static vkf_status lower_state_write(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  const vkf_plan_tensor *state = &n->inputs[VKF_IN_LSTATE_STATE];
  if (n->output.buffer != state->buffer || n->output.offset != state->offset)
    return vkf_status_make(VKF_STATUS_INTERNAL,
                           "linear_state_write \"%s\": output is not the state's storage", n->name);
  const vkf_plan_tensor *k = &n->inputs[VKF_IN_LSTATE_K], *v = &n->inputs[VKF_IN_LSTATE_V];
  const vkf_plan_tensor *gate = &n->inputs[VKF_IN_LSTATE_GATE];
  vkf_plan_tensor decay = k_absent;
  if (vkf_plan_tensor_present(gate))
    decay = scratch(ctx, n, "decay", (uint64_t)k->shape[0] * k->shape[1], 1);
  return reduce(ctx, n, k, v, gate, &n->output, &decay, (uint32_t)k->shape[2], 1);
}

vkf_status vkf_lower_linear(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  switch (n->op) {
    case VKF_OP_LINEAR_FEATURES:
      return lower_features(ctx, n);
    case VKF_OP_LINEAR_ATTENTION:
      return lower_attention(ctx, n);
    case VKF_OP_LINEAR_STATE_WRITE:
      return lower_state_write(ctx, n);
    default:
      return vkf_status_make(VKF_STATUS_INTERNAL, "%s \"%s\" is not a linear-attention op",
                             vkf_op_name(n->op), n->name);
  }
}
