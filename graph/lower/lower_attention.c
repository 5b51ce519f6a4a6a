/* Owns the lowering of VKF_OP_ATTENTION: the variant chooser (layout, tiles, K/V staging, split-K)
 * and the dispatches of shaders/attention.comp and, for split-K, shaders/attention_merge.comp. */
#include "graph/lower/lower_attention.h"

#include <stdio.h>
#include <string.h>

#include "graph/lower/attention_loops.h"
#include "graph/lower/lower_node.h"
#include "graph/lower/lower_rows.h"

enum {
  MAX_HEAD_DIM = 256,   /* register budget of the accumulators */
  MAX_SPLITS = 64,      /* partials a merge reads per row */
  MIN_SPLIT_KEYS = 256, /* below this a split's fixed cost outweighs its parallelism */
  UNBOUNDED = 1 << 30,  /* a mask offset that no index reaches */
};

static vkf_attention_force g_force; /* test/bench hook; zero = chooser decides */

void vkf_lower_attention_set_force(const vkf_attention_force *force) {
  memset(&g_force, 0, sizeof g_force);
  if (force) g_force = *force;
}


static uint32_t shared_bytes(const vkf_attention_config *c, const vkf_attention_shape *s) {
  uint32_t floats = c->stage_kv ? c->bc * (s->d + 1 + s->dv) : 0; /* K at pitch d + 1 */
  if (c->layout == VKF_ATTENTION_LAYOUT_LANES)
    floats += c->br * s->d + c->br * c->bc + (c->subgroup_reduce ? 0 : c->br * c->lanes);
  return floats * 4;
}

/* Shared memory of attention_coopmat.glsl: `stages` K and V tiles of 32 keys at pitches d + 8
 * and dv + 8 halves (Q's 4 * tile rows at pitch d + 8 over them first), the per-subgroup f32
 * scores (pitch 36) and f16 probabilities (pitch 40). */
static uint32_t coopmat_shared_bytes(uint32_t tile, uint32_t d, uint32_t dv, uint32_t stages) {
  uint32_t kv = stages * 32 * (d + 8 + dv + 8) * 2, q = 4 * tile * (d + 8) * 2;
  return (kv > q ? kv : q) + 4 * tile * 36 * 4 + 4 * tile * 40 * 2;
}

/* Shared memory of attention_tiled.glsl: Q [br, d + 1], K [bc, d + 1], V [bc, dv], P [br, bc + 1]
 * and the row reductions [br, 8], f32. */
static uint32_t tiled_shared_bytes(uint32_t br, uint32_t bc, const vkf_attention_shape *s) {
  return 4 * (br * (s->d + 1) + bc * (s->d + 1) + bc * s->dv + br * (bc + 1) + br * 8);
}

/* The register-tiled body's block: the largest rows x keys whose shared memory fits and whose
 * accumulators (br / 16 rows x ceil(dv / 8) dims per invocation) stay within 64 registers;
 * 0 when none does (head dims past ~192 at 48 KiB). */
static int tiled_block(const vkf_device_caps *caps, const vkf_attention_shape *s, uint32_t *br,
                       uint32_t *bc) {
  static const uint32_t blocks[][2] = {{64, 32}, {32, 32}, {32, 16}, {16, 16}};
  uint32_t limit = caps->max_shared_memory_size ? caps->max_shared_memory_size : 16384;
  uint32_t max_inv = caps->max_workgroup_invocations ? caps->max_workgroup_invocations : 128;
  if (max_inv < 128 || (caps->max_workgroup_size[0] && caps->max_workgroup_size[0] < 128)) return 0;
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
    if (blocks[i][0] / 16 * vkf_div_up(s->dv, 8) <= 64 &&
        tiled_shared_bytes(blocks[i][0], blocks[i][1], s) <= limit) {
      *br = blocks[i][0];
      *bc = blocks[i][1];
      return 1;
    }
  return 0;
}

void vkf_attention_choose(const vkf_device_caps *caps, const vkf_attention_shape *s,
                          const vkf_attention_force *force, vkf_attention_config *out) {
  vkf_attention_force f = force ? *force : (vkf_attention_force){0};
  memset(out, 0, sizeof *out);
  uint32_t max_inv = caps->max_workgroup_invocations ? caps->max_workgroup_invocations : 128;
  if (caps->max_workgroup_size[0] && caps->max_workgroup_size[0] < max_inv)
    max_inv = caps->max_workgroup_size[0];
  /* The bodies planned on the subgroup size (tensor-core tiles of 4 subgroups, the 8-lane
   * broadcast body, a subgroup per row) need it guaranteed (vkf_caps_subgroup_fixed); with 0 the
   * chooser takes the bodies that reduce through shared memory. */
  uint32_t sg_fixed = vkf_caps_subgroup_fixed(caps);
  uint32_t sg = sg_fixed ? sg_fixed : caps->subgroup_size ? caps->subgroup_size : 1;

  /* Rule 0: tensor cores for f16 prefill and encoders on GPU-class devices with cooperative
   * matrices (and this build's kernels): head dims that are whole tiles up to 128, a block of
   * 4 * tile rows per workgroup, subgroup shuffles (its softmax reduces rows with them). Decode
   * steps (at most 8 queries) keep split-K on the SIMT body; a forced COOPMAT that the shape or
   * device cannot take falls back to the chooser. K/V tiles double-buffered where the two
   * stages fit (at 48 KiB every head dim at tile 8, up to 128 at tile 16 exactly; lavapipe's
   * 32 KiB: head dims up to 88 at tile 8, 64 at 16). */
  uint32_t tile = caps->coopmat_gemm_tile;
  int cm_ok = tile && s->dtype == VKF_F16 && s->d % tile == 0 && s->dv % tile == 0 && s->d <= 128 &&
              s->dv <= 128 && sg_fixed && 4 * sg <= max_inv &&
              (caps->subgroup_ops & VKF_SUBGROUP_SHUFFLE) &&
              coopmat_shared_bytes(tile, s->d, s->dv, 1) <= caps->max_shared_memory_size;
  int cm_want = f.layout == VKF_ATTENTION_LAYOUT_COOPMAT ||
                (f.layout == VKF_ATTENTION_LAYOUT_AUTO && caps->kind != VKF_DEVICE_KIND_CPU &&
                 s->nq > 8);
  if (cm_ok && cm_want) {
    out->layout = VKF_ATTENTION_LAYOUT_COOPMAT;
    out->coopmat_tile = tile;
    out->br = 4 * tile;
    out->bc = 32;
    out->lanes = 1;
    out->local_size = 4 * sg;
    out->stage_kv = 1;
    out->splits = 1;
    out->chunk = vkf_u32_round_up(s->nk ? s->nk : 1, out->bc);
    out->kv_stages =
        coopmat_shared_bytes(tile, s->d, s->dv, 2) <= caps->max_shared_memory_size ? 2 : 1;
    out->shared_size = coopmat_shared_bytes(tile, s->d, s->dv, out->kv_stages);
    return;
  }
  if (f.layout == VKF_ATTENTION_LAYOUT_COOPMAT) f.layout = VKF_ATTENTION_LAYOUT_AUTO;

  /* Rule 0b: GPU-class devices run prefill and encoders (more than 8 queries) on the
   * register-tiled body, which feeds several FMAs from each shared-memory read; decode steps
   * keep split-K on the LANES body. A forced TILED that the shape cannot take (a head dim whose
   * tiles do not fit) or a forced split count falls back to the chooser. */
  uint32_t tbr = 0, tbc = 0;
  int tl_want = f.layout == VKF_ATTENTION_LAYOUT_TILED ||
                (f.layout == VKF_ATTENTION_LAYOUT_AUTO && caps->kind != VKF_DEVICE_KIND_CPU &&
                 s->nq > 8);
  if (tl_want && f.splits <= 1 && tiled_block(caps, s, &tbr, &tbc)) {
    out->layout = VKF_ATTENTION_LAYOUT_TILED;
    out->br = tbr;
    out->bc = tbc;
    out->lanes = 1;
    out->local_size = 128;
    out->stage_kv = 1;
    out->splits = 1;
    out->chunk = vkf_u32_round_up(s->nk ? s->nk : 1, out->bc);
    out->shared_size = tiled_shared_bytes(tbr, tbc, s);
    return;
  }
  if (f.layout == VKF_ATTENTION_LAYOUT_TILED) f.layout = VKF_ATTENTION_LAYOUT_AUTO;

  /* Layout. A CPU device runs a workgroup on one core with SIMD across invocations: the ROW
   * layout gives each subgroup 8 rows and shares every K/V load across them by broadcasts.
   * GPUs want many invocations per row so a block of rows fills a SIMD unit and K/V reads
   * coalesce across lanes. */
  uint32_t bcast_ops = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_BALLOT | VKF_SUBGROUP_ARITHMETIC |
                       VKF_SUBGROUP_SHUFFLE;
  int bcast_ok = (caps->subgroup_ops & bcast_ops) == bcast_ops && sg_fixed == 8 && s->d % 4 == 0 &&
                 s->dv % 4 == 0 && s->d <= 128 && s->dv <= 128;
  /* ... but only through the broadcast body (below), which needs subgroup broadcast, shuffle and
   * arithmetic, exactly 8 lanes (its 8x8 blocks), head dims that are multiples of 4 and at most
   * 128 (past that LLVM needs ~45 s to compile its registers). The plain row body keeps D floats
   * in register arrays, which lavapipe keeps in memory and needs minutes to compile at D = 256:
   * without the broadcast body a CPU runs the LANES layout. */
  out->layout = f.layout                                        ? f.layout
                : caps->kind == VKF_DEVICE_KIND_CPU && bcast_ok ? VKF_ATTENTION_LAYOUT_ROW
                                                                : VKF_ATTENTION_LAYOUT_LANES;
  if (out->layout == VKF_ATTENTION_LAYOUT_ROW) {
    out->lanes = 1;
    /* On a CPU a buffer load is a loop over the SIMD lanes and local arrays live in memory:
     * the broadcast body (attention_cpu.glsl) loads each K/V element once per subgroup and keeps
     * q and the accumulator in named registers. */
    out->cpu_bcast = bcast_ok;
    /* A forced staging choice asks for the plain row body (tests reach it that way). */
    if (f.stage_kv) out->cpu_bcast = 0;
    /* Rows per workgroup: four subgroups' worth; few queries (decoding) use one subgroup so no
     * SIMD group runs idle rows only. Multiples of the subgroup size (each subgroup owns its
     * rows in the broadcast body). */
    out->br = s->nq <= 8 ? vkf_u32_max(8, vkf_u32_min(sg, 64)) : vkf_u32_max(32, 4 * vkf_u32_min(sg, 16));
    /* The broadcast body: 8 rows per subgroup, four subgroups; when decoding (Nq <= 8) one
     * subgroup with only Nq rows, so no lane computes a row nobody reads. */
    out->rows = out->cpu_bcast && s->nq < 8 ? s->nq : 8;
    if (out->cpu_bcast) out->br = s->nq < 8 ? s->nq : 32;
  } else {
    /* Lanes per row: a whole subgroup when subgroup arithmetic can reduce it (no shared memory,
     * no barrier); otherwise 8 lanes reduced through shared memory. */
    out->subgroup_reduce =
        vkf_caps_subgroup_add(caps) && sg_fixed >= 4 && sg_fixed <= 64 && sg_fixed <= max_inv;
    out->lanes = out->subgroup_reduce ? sg_fixed : vkf_u32_min(8, max_inv);
    /* Rows: about 128 invocations per workgroup (fits every device's limit and the mobile
     * profile), fewer when the query count is small. */
    out->br = vkf_u32_max(1, vkf_u32_min(128, max_inv) / out->lanes);
    while (out->br > 1 && out->br / 2 >= s->nq) out->br /= 2;
  }
  if (out->br > max_inv / out->lanes) out->br = vkf_u32_max(1, max_inv / out->lanes);
  /* Grouped-query decoding: one workgroup per kv head whose rows are its query heads' queries,
   * so each K/V tile is staged (and read from memory) once for the whole group rather than once
   * per query head, and a single query fills `group` rows instead of one of four. Not with the
   * adaptive span, whose mask differs per head; only where the whole group fits. */
  uint32_t plain_br = out->br, group = s->group > 1 ? s->group : 1;
  if (out->layout == VKF_ATTENTION_LAYOUT_LANES && group > 1 && s->heads % group == 0 &&
      s->nq <= 8 && !s->ramp && f.gqa >= 0) {
    uint32_t rph = 1;
    while (rph < s->nq) rph *= 2;
    while (rph > 1 && group * rph * out->lanes > max_inv) rph /= 2;
    if (group * rph * out->lanes <= max_inv) {
      out->gqa_group = group;
      out->br = group * rph;
    }
  }

  /* K/V staging. Mali-class GPUs (ARM) have no dedicated shared memory: staging is a copy
   * through the same caches, so K/V are read in place there. */
  out->stage_kv = f.stage_kv ? f.stage_kv > 0 : caps->vendor_id != 0x13B5;
  /* The broadcast body stages nothing: a barrier would suspend the workgroup on a CPU. */
  if (out->cpu_bcast) out->stage_kv = 0;
  /* Keys per tile: 16 in the broadcast body (two per lane: each broadcast q value then feeds two
   * keys, and the softmax bookkeeping runs once per 16 keys), 64 in the plain row body (fewer
   * barriers), at most 8 per lane on the LANES layout (score registers); halved until the
   * variant's shared memory fits. */
  uint32_t unit = vkf_u32_max(8, out->lanes);
  out->bc = out->cpu_bcast                            ? 16
            : out->layout == VKF_ATTENTION_LAYOUT_ROW ? 64
                                                      : vkf_u32_max(unit, vkf_u32_min(64, 8 * out->lanes));
  out->bc = vkf_u32_max(unit, vkf_u32_min(out->bc, vkf_u32_round_up(s->nk ? s->nk : 1, unit)));
  uint32_t limit = caps->max_shared_memory_size ? caps->max_shared_memory_size : 16384;
  /* (a multiple of `unit` throughout: the LANES body gives each lane bc / lanes keys) */
  while (out->bc > unit && shared_bytes(out, s) > limit)
    out->bc = vkf_u32_max(unit, out->bc / 2 / unit * unit);
  /* Head dims whose K/V tile does not fit even at the smallest tile read K/V in place. */
  if (out->stage_kv && shared_bytes(out, s) > limit) out->stage_kv = 0;
  /* The LANES layout's Q block and probabilities must fit too: fewer rows (one head's rows
   * again when a group's do not fit). */
  while (out->gqa_group && out->br > out->gqa_group && shared_bytes(out, s) > limit)
    out->br = out->br / out->gqa_group / 2 * out->gqa_group;
  if (out->gqa_group && shared_bytes(out, s) > limit) out->gqa_group = 0, out->br = plain_br;
  while (out->br > 1 && shared_bytes(out, s) > limit) out->br /= 2;
  out->shared_size = shared_bytes(out, s);
  out->local_size = out->cpu_bcast ? 8 * out->br / out->rows : out->br * out->lanes;

  /* Split-K (flash-decoding): few queries against a long KV give too few workgroups to fill the
   * device; split the keys so that about `target` workgroups run, each split at least
   * MIN_SPLIT_KEYS keys. A CPU device has a few cores; a GPU wants hundreds of workgroups. */
  uint32_t groups = out->gqa_group ? s->batch * (s->heads / out->gqa_group) *
                                         vkf_div_up(s->nq, out->br / out->gqa_group)
                                   : s->batch * s->heads * vkf_div_up(s->nq, out->br);
  uint32_t target = caps->kind == VKF_DEVICE_KIND_CPU ? 16 : 256;
  uint32_t splits = 1;
  if (s->nq <= 8 && groups < target) splits = vkf_div_up(target, groups);
  splits = vkf_u32_min(splits, vkf_u32_max(1, s->nk / MIN_SPLIT_KEYS));
  if (f.splits) splits = f.splits;
  splits = vkf_u32_max(1, vkf_u32_min(splits, MAX_SPLITS));
  /* Forced or not, at least as many splits as keep each workgroup's loops within the device's
   * loop-iteration limit (attention_loops.h; past it lavapipe drops the rest of the keys). */
  splits = vkf_u32_max(splits, vkf_u32_min(vkf_attention_loop_splits(caps, out, s),
                                           vkf_div_up(s->nk ? s->nk : 1, out->bc)));
  out->chunk = vkf_u32_round_up(vkf_div_up(s->nk ? s->nk : 1, splits), out->bc);
  out->splits = vkf_u32_max(1, vkf_div_up(s->nk, out->chunk));
  if (out->splits == 1) out->chunk = vkf_u32_round_up(s->nk ? s->nk : 1, out->bc);
}

/* Element strides of an attention operand over (b, h, n); a rank-3 [B, N, D] tensor is one head.
 * The d stride must be 1. */
static vkf_status operand_strides(const vkf_lower_node *node, const vkf_plan_tensor *t,
                                  const char *what, uint32_t out[3]) {
  uint32_t r = t->rank;
  if (t->strides[r - 1] != 1 && t->shape[r - 1] != 1)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "attention \"%s\": %s has stride %lld along its head dim; the kernel "
                           "reads it contiguous (copy it first)",
                           node->name, what, (long long)t->strides[r - 1]);
  int64_t st[3] = {t->strides[0], r == 4 ? t->strides[1] : 0, t->strides[r - 2]};
  int64_t span = 1;
  for (uint32_t i = 0; i < r; i++) span += (t->shape[i] - 1) * t->strides[i];
  if (span >= (int64_t)UINT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "attention \"%s\": %s spans %lld elements; the kernel indexes with 32 "
                           "bits",
                           node->name, what, (long long)span);
  for (int i = 0; i < 3; i++) out[i] = (uint32_t)st[i];
  return VKF_OK;
}

/* The dispatch grid of attention.comp: x = query blocks, y = batch * heads (batch * kv heads for
 * grouped-query rows), z = splits. */
static vkf_status grid(const vkf_device_caps *caps, const vkf_lower_node *node,
                       const vkf_attention_shape *s, const vkf_attention_config *c,
                       uint32_t out_groups[3]) {
  uint32_t g = c->gqa_group ? c->gqa_group : 1;
  out_groups[0] = vkf_div_up(s->nq, c->br / g);
  out_groups[1] = s->batch * (s->heads / g);
  out_groups[2] = c->splits;
  for (int i = 0; i < 3; i++) {
    uint32_t lim = caps->max_workgroup_count[i] ? caps->max_workgroup_count[i] : 65535;
    if (out_groups[i] > lim)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "attention \"%s\": grid dimension %d needs %u workgroups (limit %u)",
                             node->name, i, out_groups[i], lim);
  }
  return VKF_OK;
}

static vkf_status check_inputs(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                               vkf_attention_shape *out_shape) {
  const vkf_plan_tensor *q = &node->inputs[VKF_IN_ATTENTION_Q],
                        *k = &node->inputs[VKF_IN_ATTENTION_K],
                        *v = &node->inputs[VKF_IN_ATTENTION_V];
  uint32_t r = q->rank;
  if (k->dtype != q->dtype || v->dtype != q->dtype || node->output.dtype != q->dtype ||
      (q->dtype != VKF_F32 && q->dtype != VKF_F16))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "attention \"%s\": q, k, v and the output must share one dtype, f32 or "
                           "f16 (got %s, %s, %s -> %s)",
                           node->name, vkf_dtype_name(q->dtype), vkf_dtype_name(k->dtype),
                           vkf_dtype_name(v->dtype), vkf_dtype_name(node->output.dtype));
  if (q->dtype == VKF_F16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "attention \"%s\": f16 tensors need 16-bit storage, which the device "
                           "lacks",
                           node->name);
  const vkf_plan_tensor *bias = &node->inputs[VKF_IN_ATTENTION_BIAS];
  if (node->input_count > VKF_IN_ATTENTION_BIAS && vkf_plan_tensor_present(bias) &&
      bias->dtype == VKF_F16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "attention \"%s\": an f16 bias needs 16-bit storage", node->name);
  out_shape->batch = (uint32_t)q->shape[0];
  out_shape->heads = r == 4 ? (uint32_t)q->shape[1] : 1;
  out_shape->nq = (uint32_t)q->shape[r - 2];
  out_shape->nk = (uint32_t)k->shape[r - 2];
  out_shape->d = (uint32_t)q->shape[r - 1];
  out_shape->dv = (uint32_t)v->shape[r - 1];
  out_shape->dtype = q->dtype;
  uint32_t hkv = r == 4 ? (uint32_t)k->shape[1] : 1;
  out_shape->group = hkv && out_shape->heads % hkv == 0 ? out_shape->heads / hkv : 1;
  out_shape->ramp = node->input_count > VKF_IN_ATTENTION_RAMP &&
                    vkf_plan_tensor_present(&node->inputs[VKF_IN_ATTENTION_RAMP]);
  if (out_shape->d == 0 || out_shape->dv == 0 || out_shape->d > MAX_HEAD_DIM ||
      out_shape->dv > MAX_HEAD_DIM)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "attention \"%s\": head dims D=%u, Dv=%u; the kernel supports 1..%d",
                           node->name, out_shape->d, out_shape->dv, MAX_HEAD_DIM);
  return VKF_OK;
}

/* Key j is allowed for query i iff i + lower <= j <= i + upper (the diagonal is bottom-right
 * aligned: i + Nk - Nq); kv_len is applied in the kernel. */
static void mask_offsets(const vkf_node_attrs *a, const vkf_attention_shape *s, int32_t *out_lower,
                         int32_t *out_upper) {
  int64_t diag = (int64_t)s->nk - (int64_t)s->nq, upper = UNBOUNDED, lower = -UNBOUNDED;
  if (a->attention.causal) upper = diag;
  if (a->attention.window_right >= 0 && diag + a->attention.window_right < upper)
    upper = diag + a->attention.window_right;
  if (a->attention.window_left >= 0) lower = diag - a->attention.window_left;
  *out_lower = (int32_t)(lower < -UNBOUNDED ? -UNBOUNDED : lower > UNBOUNDED ? UNBOUNDED : lower);
  *out_upper = (int32_t)(upper < -UNBOUNDED ? -UNBOUNDED : upper > UNBOUNDED ? UNBOUNDED : upper);
}

const char *vkf_attention_cpu_dmax_define(uint32_t d, uint32_t dv) {
  uint32_t m = d > dv ? d : dv;
  return m <= 32    ? "CPU_DMAX=32"
         : m <= 64  ? "CPU_DMAX=64"
         : m <= 128 ? "CPU_DMAX=128"
                    : "CPU_DMAX=256";
}

vkf_status vkf_lower_attention(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  vkf_attention_shape s;
  VKF_RETURN_IF_ERROR(check_inputs(ctx, node, &s));
  const vkf_plan_tensor *q = &node->inputs[VKF_IN_ATTENTION_Q],
                        *k = &node->inputs[VKF_IN_ATTENTION_K],
                        *v = &node->inputs[VKF_IN_ATTENTION_V];
  const vkf_plan_tensor *kv_len =
      node->input_count > VKF_IN_ATTENTION_KV_LEN &&
              vkf_plan_tensor_present(&node->inputs[VKF_IN_ATTENTION_KV_LEN])
          ? &node->inputs[VKF_IN_ATTENTION_KV_LEN]
          : NULL;
  const vkf_plan_tensor *bias =
      node->input_count > VKF_IN_ATTENTION_BIAS &&
              vkf_plan_tensor_present(&node->inputs[VKF_IN_ATTENTION_BIAS])
          ? &node->inputs[VKF_IN_ATTENTION_BIAS]
          : NULL;
  const vkf_plan_tensor *ramp =
      node->input_count > VKF_IN_ATTENTION_RAMP &&
              vkf_plan_tensor_present(&node->inputs[VKF_IN_ATTENTION_RAMP])
          ? &node->inputs[VKF_IN_ATTENTION_RAMP]
          : NULL;
  uint32_t qs[3], ks[3], vs[3], os[3];
  VKF_RETURN_IF_ERROR(operand_strides(node, q, "q", qs));
  VKF_RETURN_IF_ERROR(operand_strides(node, k, "k", ks));
  VKF_RETURN_IF_ERROR(operand_strides(node, v, "v", vs));
  VKF_RETURN_IF_ERROR(operand_strides(node, &node->output, "the output", os));
  if (!vkf_plan_tensor_is_contiguous(&node->output))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "attention \"%s\": the output must be contiguous", node->name);
  uint32_t r = q->rank, hkv = r == 4 ? (uint32_t)k->shape[1] : 1;
  vkf_rows_view bias_view = {{1, 1, 1}, 1, {0, 0, 0, 0}};
  if (bias) {
    int64_t scores[4] = {q->shape[0], q->shape[1], q->shape[2], q->shape[3]};
    scores[r - 1] = k->shape[r - 2];
    VKF_RETURN_IF_ERROR(vkf_rows_view_make(bias, r, scores, node->name, "bias", &bias_view));
    if (r == 3) { /* [B, Nq, Nk] scores sit in dims 1..3 of the padded view: one head */
      bias_view.s[0] = bias_view.s[1];
      bias_view.s[1] = 0;
    }
  }

  vkf_attention_config c;
  vkf_attention_choose(ctx->caps, &s, &g_force, &c);
  int32_t lower, upper;
  mask_offsets(node->attrs, &s, &lower, &upper);

  vkf_plan_dispatch d = {.node = node->name, .shader = "attention.comp"};
  int coopmat = c.layout == VKF_ATTENTION_LAYOUT_COOPMAT;
  int tiled = c.layout == VKF_ATTENTION_LAYOUT_TILED;
  if (tiled) { /* its own define set: none of the other bodies' switches apply */
    vkf_plan_dispatch_define(&d, "ATTN_TILED=1");
    vkf_plan_dispatch_define(&d, s.dtype == VKF_F16 ? "F16=1" : "F16=0");
    vkf_plan_dispatch_define(&d, bias && bias->dtype == VKF_F16 ? "BIAS_F16=1" : "BIAS_F16=0");
    if (ramp) vkf_plan_dispatch_define(&d, "RAMP=1");
  } else if (coopmat) { /* its own define set (shaders/variants_coopmat.txt) */
    vkf_plan_dispatch_define(&d, "ATTN_COOPMAT=1");
    d.subgroup_size = vkf_caps_subgroup_fixed(ctx->caps);
    vkf_plan_dispatch_define(&d, c.coopmat_tile == 16 ? "CM=16" : "CM=8");
    vkf_plan_dispatch_define(&d, "F16=1");
    vkf_plan_dispatch_define(&d, bias && bias->dtype == VKF_F16 ? "BIAS_F16=1" : "BIAS_F16=0");
    if (ramp) vkf_plan_dispatch_define(&d, "RAMP=1");
  } else {
    vkf_plan_dispatch_define(&d, s.dtype == VKF_F16 ? "F16=1" : "F16=0");
    vkf_plan_dispatch_define(&d, bias && bias->dtype == VKF_F16 ? "BIAS_F16=1" : "BIAS_F16=0");
    vkf_plan_dispatch_define(
        &d, c.layout == VKF_ATTENTION_LAYOUT_ROW ? "ROW_PER_INVOCATION=1" : "ROW_PER_INVOCATION=0");
    vkf_plan_dispatch_define(&d, c.stage_kv ? "STAGE_KV=1" : "STAGE_KV=0");
    vkf_plan_dispatch_define(&d, c.subgroup_reduce ? "SUBGROUP_REDUCE=1" : "SUBGROUP_REDUCE=0");
    vkf_plan_dispatch_define(&d, c.splits > 1 ? "SPLIT=1" : "SPLIT=0");
    vkf_plan_dispatch_define(&d, c.cpu_bcast ? "CPU_BCAST=1" : "CPU_BCAST=0");
    /* Only grouped-query decoding names it: every other define set stays as it was. */
    if (c.gqa_group) vkf_plan_dispatch_define(&d, "GQA_ROWS=1");
    if (c.cpu_bcast || c.subgroup_reduce) d.subgroup_size = vkf_caps_subgroup_fixed(ctx->caps);
    if (c.cpu_bcast) vkf_plan_dispatch_define(&d, vkf_attention_cpu_dmax_define(s.d, s.dv));
    /* Every encoder's 8 rows per subgroup fixed at compile time (attention_cpu_macros.glsl): 24 %
     * less SPIR-V for lavapipe to translate on each run. Decode steps keep the constant. */
    if (c.cpu_bcast && c.rows == 8) vkf_plan_dispatch_define(&d, "CPU_ROWS=8");
    /* Only models with an adaptive span name it: every other define set stays as it was. */
    if (ramp) vkf_plan_dispatch_define(&d, "RAMP=1");
  }
  uint32_t spec[7] = {c.local_size, c.br, c.bc, s.d, s.dv, c.lanes, c.rows ? c.rows : 8};
  memcpy(d.spec, spec, sizeof spec);
  d.spec_count = 7;
  if (coopmat) d.spec[d.spec_count++] = c.kv_stages; /* constant 7: CM_STAGES */
  VKF_RETURN_IF_ERROR(grid(ctx->caps, node, &s, &c, d.groups));

  uint32_t q_off = vkf_lower_bind(ctx, &d, q, VKF_ACCESS_READ);
  uint32_t k_off = vkf_lower_bind(ctx, &d, k, VKF_ACCESS_READ);
  uint32_t v_off = vkf_lower_bind(ctx, &d, v, VKF_ACCESS_READ);
  /* Absent optional inputs bind q again: the kernel never reads them (flags say so). */
  uint32_t len_off = vkf_lower_bind(ctx, &d, kv_len ? kv_len : q, VKF_ACCESS_READ);
  uint32_t bias_off = vkf_lower_bind(ctx, &d, bias ? bias : q, VKF_ACCESS_READ);
  /* vec4 loads when every q/k/v row starts at a multiple of 4 elements. */
  int vec4 = c.cpu_bcast && q_off % 4 == 0 && k_off % 4 == 0 && v_off % 4 == 0;
  for (int i = 0; i < 3; i++) vec4 = vec4 && qs[i] % 4 == 0 && ks[i] % 4 == 0 && vs[i] % 4 == 0;
  if (!coopmat && !tiled) vkf_plan_dispatch_define(&d, vec4 ? "VEC4=1" : "VEC4=0");
  /* The CPU body reads q, k and v through texel views when all three allow it (a vector gather
   * per vec4 on CPU devices instead of a scalar loop over the lanes). */
  int texel = vec4 && !g_force.no_texel;
  for (int i = 0; i < 3 && texel; i++)
    texel = (d.bindings[i].texel = vkf_lower_texel_format(ctx, s.dtype, &d.bindings[i])) != 0;
  if (!texel)
    for (int i = 0; i < 3; i++) d.bindings[i].texel = VKF_TEXEL_NONE;
  if (!coopmat && !tiled) vkf_plan_dispatch_define(&d, texel ? "TEXEL=1" : "TEXEL=0");
  uint64_t rows = (uint64_t)s.batch * s.heads * s.nq;
  int merge_heads = node->attrs->attention.merge_heads != 0;
  /* kv_len [2, B] (ragged rows): its second row, the k/v batch of each query batch */
  int ragged = kv_len && kv_len->rank == 2;
  uint32_t flags = (bias ? 1u : 0u) | (kv_len ? 2u : 0u) | (merge_heads ? 4u : 0u) |
                   (ragged ? 8u : 0u);
  uint32_t scratch = 0, o_off = 0;
  if (c.splits > 1) {
    /* fp32 partials: O [rows, S, Dv] then (m, l) [rows, S, 2] */
    uint64_t size = rows * c.splits * (s.dv + 2) * 4;
    if (size >= UINT32_MAX)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "attention \"%s\": split-K partials need %llu bytes", node->name,
                             (unsigned long long)size);
    char name[160];
    snprintf(name, sizeof name, "%s.split_partials", node->name);
    scratch = vkf_plan_add_buffer(ctx->plan, VKF_PLAN_BUFFER_SCRATCH, name, size);
    vkf_plan_dispatch_bind(&d, scratch, 0, size, VKF_ACCESS_WRITE);
  } else {
    o_off = vkf_lower_bind(ctx, &d, &node->output, VKF_ACCESS_WRITE);
  }
  uint32_t ramp_off = ramp ? vkf_lower_bind(ctx, &d, ramp, VKF_ACCESS_READ) : 0; /* binding 6 */
  uint32_t push[] = {
      q_off,          k_off,          v_off,          o_off,
      qs[0],          qs[1],          qs[2],          ks[0],
      ks[1],          ks[2],          vs[0],          vs[1],
      vs[2],          bias_off,       bias_view.s[0], bias_view.s[1],
      bias_view.s[2], bias_view.s[3], len_off,        flags,
      s.nq,           s.nk,           s.heads,        s.heads / hkv};
  for (size_t i = 0; i < sizeof push / sizeof push[0]; i++) vkf_plan_dispatch_push_u32(&d, push[i]);
  vkf_plan_dispatch_push_f32(&d, node->attrs->attention.scale * 1.4426950408889634f);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)lower);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)upper);
  vkf_plan_dispatch_push_u32(&d, c.chunk);
  vkf_plan_dispatch_push_u32(&d, c.splits);
  vkf_plan_dispatch_push_u32(&d, ramp_off);
  vkf_plan_dispatch_push_u32(&d, ragged ? len_off + s.batch : 0u);
  VKF_RETURN_IF_ERROR(vkf_plan_add_dispatch(ctx->plan, &d));
  if (c.splits == 1) return VKF_OK;

  vkf_plan_dispatch m = {
      .node = node->name, .shader = "attention_merge.comp", .spec = {64}, .spec_count = 1};
  vkf_plan_dispatch_define(&m, s.dtype == VKF_F16 ? "F16=1" : "F16=0");
  vkf_plan_dispatch_bind(&m, scratch, 0, vkf_plan_buffer_get(ctx->plan, scratch)->size,
                         VKF_ACCESS_READ);
  uint32_t out_off = vkf_lower_bind(ctx, &m, &node->output, VKF_ACCESS_WRITE);
  vkf_plan_dispatch_push_u32(&m, 0);
  vkf_plan_dispatch_push_u32(&m, out_off);
  vkf_plan_dispatch_push_u32(&m, (uint32_t)rows);
  vkf_plan_dispatch_push_u32(&m, c.splits);
  vkf_plan_dispatch_push_u32(&m, s.dv);
  vkf_plan_dispatch_push_u32(&m, s.nq);
  vkf_plan_dispatch_push_u32(&m, s.heads);
  vkf_plan_dispatch_push_u32(&m, (uint32_t)merge_heads);
  VKF_RETURN_IF_ERROR(vkf_rows_grid(ctx->caps, vkf_div_up(rows * s.dv, 64), node->name, m.groups));
  return vkf_plan_add_dispatch(ctx->plan, &m);
}
