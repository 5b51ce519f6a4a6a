/* Owns the lowering of VKF_OP_SPARSE_ATTENTION: the body chooser (CPU subgroup body or GPU
 * workgroup body of shaders/sparse_attention.comp), its tile sizes, the bindings of the layout
 * tables, and slicing along the heads when one batch row's q/k/v exceed a binding's range. */
#include "graph/lower/lower_sparse_attention.h"

#include "graph/lower/lower_attention.h"
#include "graph/lower/lower_rows.h"

#include <stdio.h>
#include <string.h>

enum {
  MAX_HEAD_DIM = 256, /* register budget of the accumulators (GPU body) */
  CPU_SUBGROUPS = 4,  /* subgroups per workgroup in the CPU body */
};

static vkf_sparse_force g_force;

void vkf_lower_sparse_attention_set_force(const vkf_sparse_force *force) {
  memset(&g_force, 0, sizeof g_force);
  if (force) g_force = *force;
}


static uint32_t shared_bytes(const vkf_sparse_config *c, const vkf_sparse_shape *s) {
  uint32_t floats = c->stage_kv ? c->bc * (s->d + s->dv) : 0;
  floats += c->rows * s->d + c->rows * c->bc + (c->subgroup_reduce ? 0 : c->rows * c->lanes);
  return floats * 4;
}

void vkf_sparse_attention_choose(const vkf_device_caps *caps, const vkf_sparse_shape *s,
                                 const vkf_sparse_force *force, vkf_sparse_config *out) {
  vkf_sparse_force f = force ? *force : (vkf_sparse_force){0};
  memset(out, 0, sizeof *out);
  uint32_t max_inv = caps->max_workgroup_invocations ? caps->max_workgroup_invocations : 128;
  if (caps->max_workgroup_size[0] && caps->max_workgroup_size[0] < max_inv)
    max_inv = caps->max_workgroup_size[0];
  /* Both subgroup bodies are planned on the size: it must be guaranteed (vkf_caps_subgroup_fixed). */
  uint32_t sg = vkf_caps_subgroup_fixed(caps);
  /* The CPU body is dense attention's broadcast body (attention_cpu_macros.glsl) and has its
   * needs: subgroup broadcast, shuffle and arithmetic on exactly 8 lanes, head dims multiples of
   * 4 up to 128, and four subgroups per workgroup. */
  uint32_t bcast_ops =
      VKF_SUBGROUP_BASIC | VKF_SUBGROUP_BALLOT | VKF_SUBGROUP_ARITHMETIC | VKF_SUBGROUP_SHUFFLE;
  int cpu_ok = (caps->subgroup_ops & bcast_ops) == bcast_ops && sg == 8 && s->d % 4 == 0 &&
               s->dv % 4 == 0 && s->d <= 128 && s->dv <= 128 && max_inv >= 8 * CPU_SUBGROUPS;
  out->body = f.body == VKF_SPARSE_BODY_CPU && cpu_ok       ? VKF_SPARSE_BODY_CPU
              : f.body                                      ? VKF_SPARSE_BODY_GPU
              : caps->kind == VKF_DEVICE_KIND_CPU && cpu_ok ? VKF_SPARSE_BODY_CPU
                                                            : VKF_SPARSE_BODY_GPU;
  if (out->body == VKF_SPARSE_BODY_CPU) {
    /* Rows per subgroup: the query block in as few subgroups as possible, evenly (a block of 12
     * rows is two subgroups of 6, not 8 + 4), since a subgroup's spare rows are wasted work. */
    uint32_t parts = (s->block_q + 7) / 8;
    out->rows = (s->block_q + parts - 1) / parts;
    out->parts = (s->block_q + out->rows - 1) / out->rows;
    out->lanes = 1;
    out->local_size = 8 * CPU_SUBGROUPS;
    return;
  }
  /* GPU body: as dense attention's LANES layout: a whole subgroup per row when subgroup
   * arithmetic reduces it, else 8 lanes through shared memory; about 128 invocations per group,
   * but never more rows than the query block has (every row of a group shares its block's list
   * of key blocks, so the walk and its barriers are uniform). */
  out->subgroup_reduce = vkf_caps_subgroup_add(caps) && sg >= 4 && sg <= 64 && sg <= max_inv;
  out->lanes = out->subgroup_reduce ? sg : vkf_u32_min(8, max_inv);
  out->rows = vkf_u32_max(1, vkf_u32_min(s->block_q, vkf_u32_min(128, max_inv) / out->lanes));
  /* Mali-class GPUs have no dedicated shared memory: K/V are read in place there. */
  out->stage_kv = f.stage_kv ? f.stage_kv > 0 : caps->vendor_id != 0x13B5;
  /* Keys per tile: up to 8 per lane, no more than the key block (rounded to the lanes). */
  uint32_t unit = out->lanes;
  out->bc = vkf_u32_max(unit, vkf_u32_min(64, 8 * out->lanes));
  out->bc = vkf_u32_max(unit, vkf_u32_min(out->bc, vkf_u32_round_up(s->block_k, unit)));
  uint32_t limit = caps->max_shared_memory_size ? caps->max_shared_memory_size : 16384;
  while (out->bc > unit && shared_bytes(out, s) > limit)
    out->bc = vkf_u32_max(unit, out->bc / 2 / unit * unit);
  if (out->stage_kv && shared_bytes(out, s) > limit) out->stage_kv = 0;
  while (out->rows > 1 && shared_bytes(out, s) > limit) out->rows /= 2;
  out->parts = (s->block_q + out->rows - 1) / out->rows;
  out->local_size = out->rows * out->lanes;
}

static vkf_status unsupported(const vkf_lower_node *n, const char *what) {
  return vkf_status_make(VKF_STATUS_UNSUPPORTED, "sparse_attention \"%s\": %s", n->name, what);
}

/* Element strides (b, h, n) of q, k or v; the head dim must be contiguous. */
static vkf_status strides3(const vkf_lower_node *n, const vkf_plan_tensor *t, const char *what,
                           uint32_t out[3]) {
  if (t->strides[3] != 1 && t->shape[3] != 1)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "sparse_attention \"%s\": %s has stride %lld along its head dim; the "
                           "kernel reads it contiguous (copy it first)",
                           n->name, what, (long long)t->strides[3]);
  int64_t span = 1;
  for (uint32_t i = 0; i < 4; i++) span += (t->shape[i] - 1) * t->strides[i];
  if (span >= (int64_t)UINT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "sparse_attention \"%s\": %s spans %lld elements; the kernel indexes "
                           "with 32 bits",
                           n->name, what, (long long)span);
  for (int i = 0; i < 3; i++) out[i] = (uint32_t)t->strides[i];
  return VKF_OK;
}

static const vkf_plan_tensor *optional(const vkf_lower_node *n, uint32_t slot) {
  return n->input_count > slot && vkf_plan_tensor_present(&n->inputs[slot]) ? &n->inputs[slot]
                                                                            : NULL;
}

static vkf_status check(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  const vkf_plan_tensor *q = &n->inputs[VKF_IN_SPARSE_Q], *k = &n->inputs[VKF_IN_SPARSE_K],
                        *v = &n->inputs[VKF_IN_SPARSE_V];
  if (k->dtype != q->dtype || v->dtype != q->dtype || n->output.dtype != q->dtype)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "sparse_attention \"%s\": q, k, v and the output must share one dtype "
                           "(got %s, %s, %s -> %s)",
                           n->name, vkf_dtype_name(q->dtype), vkf_dtype_name(k->dtype),
                           vkf_dtype_name(v->dtype), vkf_dtype_name(n->output.dtype));
  const vkf_plan_tensor *bias = optional(n, VKF_IN_SPARSE_KEY_BIAS);
  if ((q->dtype == VKF_F16 || (bias && bias->dtype == VKF_F16)) && !ctx->caps->storage_16bit)
    return unsupported(n, "f16 tensors need 16-bit storage, which the device lacks");
  if (q->shape[3] < 1 || v->shape[3] < 1 || q->shape[3] > MAX_HEAD_DIM ||
      v->shape[3] > MAX_HEAD_DIM)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "sparse_attention \"%s\": head dims D=%lld, Dv=%lld; the kernel "
                           "supports 1..%d",
                           n->name, (long long)q->shape[3], (long long)v->shape[3], MAX_HEAD_DIM);
  if (!vkf_plan_tensor_is_contiguous(&n->output))
    return unsupported(n, "the output must be contiguous");
  for (uint32_t s = VKF_IN_SPARSE_ROWS; s <= VKF_IN_SPARSE_KEY_BIAS; s++)
    if (optional(n, s) && !vkf_plan_tensor_is_contiguous(&n->inputs[s]))
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "sparse_attention \"%s\": input %u (layout table, kv_len or key "
                             "bias) must be contiguous",
                             n->name, s);
  return VKF_OK;
}

/* Masks, kv_len and a key bias together would need 9 bindings (the plan has 8): a small dispatch
 * packs kv_len and the bias into one scratch buffer [B ints | B * Nk floats] that the attention
 * kernel reads through binding 7 (AUX_PACKED). */
static vkf_status pack_len_bias(const vkf_lower_ctx *ctx, const vkf_lower_node *n,
                                uint32_t *out_buffer, uint64_t *out_size) {
  const vkf_plan_tensor *kv_len = &n->inputs[VKF_IN_SPARSE_KV_LEN],
                        *bias = &n->inputs[VKF_IN_SPARSE_KEY_BIAS];
  uint64_t batch = (uint64_t)bias->shape[0], count = batch * (uint64_t)bias->shape[1];
  uint64_t size = (batch + count) * 4;
  if (size >= UINT32_MAX) return unsupported(n, "the packed kv_len and key bias exceed 4 GiB");
  char name[160];
  snprintf(name, sizeof name, "%s.len_bias%u", n->name, vkf_plan_buffer_count(ctx->plan));
  *out_buffer = vkf_plan_add_buffer(ctx->plan, VKF_PLAN_BUFFER_SCRATCH, name, size);
  *out_size = size;
  vkf_plan_dispatch d = {.node = n->name, .shader = "sparse_attention_pack.comp"};
  vkf_plan_dispatch_define(&d, bias->dtype == VKF_F16 ? "BIAS_F16=1" : "BIAS_F16=0");
  uint32_t len_off = vkf_lower_bind(ctx, &d, kv_len, VKF_ACCESS_READ);
  uint32_t bias_off = vkf_lower_bind(ctx, &d, bias, VKF_ACCESS_READ);
  vkf_plan_dispatch_bind(&d, *out_buffer, 0, size, VKF_ACCESS_WRITE);
  uint32_t push[] = {len_off, bias_off, 0, (uint32_t)batch, (uint32_t)count};
  for (size_t i = 0; i < sizeof push / sizeof push[0]; i++) vkf_plan_dispatch_push_u32(&d, push[i]);
  VKF_RETURN_IF_ERROR(vkf_rows_grid(ctx->caps, vkf_div_up(batch + count, 64), n->name, d.groups));
  return vkf_plan_add_dispatch(ctx->plan, &d);
}

static vkf_status lower_one(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  VKF_RETURN_IF_ERROR(check(ctx, n));
  const vkf_plan_tensor *q = &n->inputs[VKF_IN_SPARSE_Q], *k = &n->inputs[VKF_IN_SPARSE_K],
                        *v = &n->inputs[VKF_IN_SPARSE_V];
  const vkf_plan_tensor *rows = &n->inputs[VKF_IN_SPARSE_ROWS],
                        *cols = &n->inputs[VKF_IN_SPARSE_COLS];
  const vkf_plan_tensor *masks = optional(n, VKF_IN_SPARSE_MASKS);
  const vkf_plan_tensor *kv_len = optional(n, VKF_IN_SPARSE_KV_LEN);
  const vkf_plan_tensor *bias = optional(n, VKF_IN_SPARSE_KEY_BIAS);
  const vkf_node_attrs *a = n->attrs;
  uint32_t qs[3], ks[3], vs[3];
  VKF_RETURN_IF_ERROR(strides3(n, q, "q", qs));
  VKF_RETURN_IF_ERROR(strides3(n, k, "k", ks));
  VKF_RETURN_IF_ERROR(strides3(n, v, "v", vs));
  uint32_t batch = (uint32_t)q->shape[0], heads = (uint32_t)q->shape[1];
  uint32_t nq = (uint32_t)q->shape[2], nk = (uint32_t)k->shape[2];
  vkf_sparse_shape s = {(uint32_t)q->shape[3], (uint32_t)v->shape[3], a->sparse_attention.block_q,
                        a->sparse_attention.block_k};
  vkf_sparse_config c;
  vkf_sparse_attention_choose(ctx->caps, &s, &g_force, &c);
  uint32_t nqb = (uint32_t)rows->shape[1] - 1;

  vkf_plan_dispatch d = {.node = n->name, .shader = "sparse_attention.comp"};
  vkf_plan_dispatch_define(&d, q->dtype == VKF_F16 ? "F16=1" : "F16=0");
  vkf_plan_dispatch_define(&d, bias && bias->dtype == VKF_F16 ? "BIAS_F16=1" : "BIAS_F16=0");
  int cpu = c.body == VKF_SPARSE_BODY_CPU;
  vkf_plan_dispatch_define(&d, cpu ? "CPU_BCAST=1" : "CPU_BCAST=0");
  if (cpu) vkf_plan_dispatch_define(&d, vkf_attention_cpu_dmax_define(s.d, s.dv));
  vkf_plan_dispatch_define(&d, c.stage_kv ? "STAGE_KV=1" : "STAGE_KV=0");
  vkf_plan_dispatch_define(&d, c.subgroup_reduce ? "SUBGROUP_REDUCE=1" : "SUBGROUP_REDUCE=0");
  if (cpu || c.subgroup_reduce) d.subgroup_size = vkf_caps_subgroup_fixed(ctx->caps);
  /* Bindings 6 and 7 take the optional tables present, in slot order. */
  static const char *aux_masks[] = {"AUX_MASKS=6", "AUX_MASKS=7"};
  static const char *aux_len[] = {"AUX_LEN=6", "AUX_LEN=7"};
  static const char *aux_bias[] = {"AUX_BIAS=6", "AUX_BIAS=7"};
  uint32_t aux = 0, packed = VKF_PLAN_NO_BUFFER;
  uint64_t packed_size = 0;
  if (masks && kv_len && bias) {
    VKF_RETURN_IF_ERROR(pack_len_bias(ctx, n, &packed, &packed_size));
    vkf_plan_dispatch_define(&d, "AUX_MASKS=6");
    vkf_plan_dispatch_define(&d, "AUX_PACKED=7");
  } else {
    if (masks) vkf_plan_dispatch_define(&d, aux_masks[aux++]);
    if (kv_len) vkf_plan_dispatch_define(&d, aux_len[aux++]);
    if (bias) vkf_plan_dispatch_define(&d, aux_bias[aux++]);
  }
  uint32_t spec[7] = {c.local_size, cpu ? 1 : c.rows,  cpu ? 8 : c.bc,  s.d,
                      s.dv,         cpu ? 1 : c.lanes, cpu ? c.rows : 8};
  memcpy(d.spec, spec, sizeof spec);
  d.spec_count = 7;
  uint64_t units = (uint64_t)nqb * c.parts;
  uint64_t gx = cpu ? (units + CPU_SUBGROUPS - 1) / CPU_SUBGROUPS : units;
  d.groups[0] = (uint32_t)gx;
  d.groups[1] = batch * heads;
  d.groups[2] = 1;
  for (int i = 0; i < 2; i++) {
    uint32_t lim = ctx->caps->max_workgroup_count[i] ? ctx->caps->max_workgroup_count[i] : 65535;
    uint64_t want = i == 0 ? gx : (uint64_t)batch * heads;
    if (want > lim)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "sparse_attention \"%s\": grid dimension %d needs %llu workgroups "
                             "(limit %u)",
                             n->name, i, (unsigned long long)want, lim);
  }
  uint32_t q_off = vkf_lower_bind(ctx, &d, q, VKF_ACCESS_READ);
  uint32_t k_off = vkf_lower_bind(ctx, &d, k, VKF_ACCESS_READ);
  uint32_t v_off = vkf_lower_bind(ctx, &d, v, VKF_ACCESS_READ);
  uint32_t o_off = vkf_lower_bind(ctx, &d, &n->output, VKF_ACCESS_WRITE);
  uint32_t rows_off = vkf_lower_bind(ctx, &d, rows, VKF_ACCESS_READ);
  uint32_t cols_off = vkf_lower_bind(ctx, &d, cols, VKF_ACCESS_READ);
  uint32_t masks_off = masks ? vkf_lower_bind(ctx, &d, masks, VKF_ACCESS_READ) : 0;
  uint32_t len_off = 0, bias_off = 0;
  if (packed != VKF_PLAN_NO_BUFFER) {
    vkf_plan_dispatch_bind(&d, packed, 0, packed_size, VKF_ACCESS_READ);
    bias_off = batch; /* the bias follows the B lengths */
  } else {
    len_off = kv_len ? vkf_lower_bind(ctx, &d, kv_len, VKF_ACCESS_READ) : 0;
    bias_off = bias ? vkf_lower_bind(ctx, &d, bias, VKF_ACCESS_READ) : 0;
  }
  /* CPU body: vec4 loads when every q/k/v row starts at a multiple of 4 elements, through
   * texel views where the device has the format (a gather instead of a loop over lanes). */
  int vec4 = cpu && q_off % 4 == 0 && k_off % 4 == 0 && v_off % 4 == 0;
  for (int i = 0; i < 3; i++) vec4 = vec4 && qs[i] % 4 == 0 && ks[i] % 4 == 0 && vs[i] % 4 == 0;
  vkf_plan_dispatch_define(&d, vec4 ? "VEC4=1" : "VEC4=0");
  int texel = vec4;
  for (int i = 0; i < 3 && texel; i++)
    texel = (d.bindings[i].texel = vkf_lower_texel_format(ctx, q->dtype, &d.bindings[i])) != 0;
  if (!texel)
    for (int i = 0; i < 3; i++) d.bindings[i].texel = VKF_TEXEL_NONE;
  vkf_plan_dispatch_define(&d, texel ? "TEXEL=1" : "TEXEL=0");
  uint32_t flags =
      (a->sparse_attention.merge_heads ? 1u : 0u) | (a->sparse_attention.causal ? 2u : 0u);
  uint32_t push[] = {q_off,
                     k_off,
                     v_off,
                     o_off,
                     qs[0],
                     qs[1],
                     qs[2],
                     ks[0],
                     ks[1],
                     ks[2],
                     vs[0],
                     vs[1],
                     vs[2],
                     rows_off,
                     cols_off,
                     masks_off,
                     len_off,
                     bias_off,
                     flags,
                     nq,
                     nk,
                     heads,
                     heads / (uint32_t)k->shape[1]};
  for (size_t i = 0; i < sizeof push / sizeof push[0]; i++) vkf_plan_dispatch_push_u32(&d, push[i]);
  vkf_plan_dispatch_push_f32(&d, a->sparse_attention.scale * 1.4426950408889634f);
  uint32_t tail[] = {s.block_q,
                     s.block_k,
                     nqb,
                     (nk + s.block_k - 1) / s.block_k,
                     (uint32_t)cols->shape[1],
                     masks ? (uint32_t)masks->shape[0] : 0,
                     (uint32_t)rows->shape[0],
                     c.parts};
  for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++) vkf_plan_dispatch_push_u32(&d, tail[i]);
  return vkf_plan_add_dispatch(ctx->plan, &d);
}

static uint64_t span(const vkf_lower_ctx *ctx, const vkf_plan_tensor *t) {
  uint64_t begin, end;
  vkf_lower_binding_range(ctx, t, &begin, &end);
  return end - begin;
}

static int fits(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  uint64_t range = ctx->caps->max_storage_buffer_range;
  if (!range || span(ctx, &n->output) > range) return !range;
  for (uint32_t i = 0; i < n->input_count; i++)
    if (vkf_plan_tensor_present(&n->inputs[i]) && span(ctx, &n->inputs[i]) > range) return 0;
  return 1;
}

/* Heads [h0, h0 + len) of the node: q and the output (not merged), their kv heads, and the
 * layout's heads when it has one per head. h0 and len are multiples of the group size. */
static vkf_lower_node head_slice(const vkf_lower_node *n, int64_t h0, int64_t len) {
  vkf_lower_node s = *n;
  int64_t group = n->inputs[VKF_IN_SPARSE_Q].shape[1] / n->inputs[VKF_IN_SPARSE_K].shape[1];
  vkf_plan_tensor *per_head[] = {&s.inputs[VKF_IN_SPARSE_Q], &s.output};
  for (int i = 0; i < 2; i++) {
    per_head[i]->offset +=
        (uint64_t)(h0 * per_head[i]->strides[1]) * vkf_dtype_size(per_head[i]->dtype);
    per_head[i]->shape[1] = len;
  }
  vkf_plan_tensor *per_kv[] = {&s.inputs[VKF_IN_SPARSE_K], &s.inputs[VKF_IN_SPARSE_V]};
  for (int i = 0; i < 2; i++) {
    per_kv[i]->offset +=
        (uint64_t)(h0 / group * per_kv[i]->strides[1]) * vkf_dtype_size(per_kv[i]->dtype);
    per_kv[i]->shape[1] = len / group;
  }
  if (n->inputs[VKF_IN_SPARSE_ROWS].shape[0] > 1) {
    vkf_plan_tensor *tables[] = {&s.inputs[VKF_IN_SPARSE_ROWS], &s.inputs[VKF_IN_SPARSE_COLS]};
    for (int i = 0; i < 2; i++) {
      tables[i]->offset += (uint64_t)(h0 * tables[i]->strides[0]) * 4;
      tables[i]->shape[0] = len;
    }
  }
  return s;
}

vkf_status vkf_lower_sparse_attention(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  /* One batch row (the walker slices the batch) whose heads do not fit one binding: groups of
   * heads, halved until they fit. A merged output interleaves the heads, so it cannot be cut. */
  if (fits(ctx, n) || n->attrs->sparse_attention.merge_heads) return lower_one(ctx, n);
  int64_t heads = n->inputs[VKF_IN_SPARSE_Q].shape[1];
  int64_t group = heads / n->inputs[VKF_IN_SPARSE_K].shape[1], len = heads;
  while (len > group) {
    int64_t half = (len / group + 1) / 2 * group;
    len = half;
    vkf_lower_node s = head_slice(n, 0, len);
    if (fits(ctx, &s)) break;
  }
  for (int64_t h0 = 0; h0 < heads; h0 += len) {
    vkf_lower_node s = head_slice(n, h0, h0 + len <= heads ? len : heads - h0);
    VKF_RETURN_IF_ERROR(lower_one(ctx, &s));
  }
  return VKF_OK;
}
