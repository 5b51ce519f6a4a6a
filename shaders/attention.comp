#version 450
// Fused tiled attention (FlashAttention-2 scheme): out = softmax(q·kᵀ·scale + bias, masked)·v
// without writing the score matrix anywhere. One workgroup owns BR query rows of one (batch,
// head); K/V blocks of BC keys stream through shared memory (or are read in place); the running
// max m, sum l and un-normalised output stay in registers in fp32; one normalisation at the end.
// Blocks that the masks remove entirely are never visited; only boundary blocks are predicated.
// With SPLIT=1 a workgroup covers one chunk of keys (gl_WorkGroupID.z) and writes its partial
// (O, m, l) for attention_merge.comp (flash-decoding).
//
// Defines:
//   F16=0|1             q, k, v and the output are float16 in storage (math stays fp32)
//   BIAS_F16=0|1        the bias tensor is float16
//   ROW_PER_INVOCATION=1  one invocation per query row: with CPU_BCAST the CPU-class body of
//                       attention_cpu.glsl; without, a plain body keeping q and the accumulator in
//                       register arrays (GPUs with many registers; forced in tests)
//   ROW_PER_INVOCATION=0  GPU layout: LANES invocations per row; q·k splits keys across lanes,
//                       p·v splits output dims across lanes.
//   STAGE_KV=0|1        1: K/V tiles staged in shared memory (fp32); 0: read from the buffers
//   SUBGROUP_REDUCE=0|1 (ROW_PER_INVOCATION=0) row max/sum with subgroup arithmetic, which needs
//                       LANES == subgroup size; 0: through shared memory
//   SPLIT=0|1           write per-chunk partials instead of the output
//   GQA_ROWS=0|1        (ROW_PER_INVOCATION=0, not RAMP) grouped-query decoding: a workgroup owns
//                       one (batch, kv head) and its rows are the `group` query heads sharing it
//                       (row rl: head kvh * group + rl % group, query r0 + rl / group), so each
//                       K/V tile is staged once for all of them; BR is a multiple of the group
//   CPU_BCAST=0|1       (with ROW_PER_INVOCATION=1) the CPU-class body of attention_cpu.glsl:
//                       8-key blocks shared across rows (q rows by subgroupBroadcast once,
//                       probabilities by subgroupShuffle with a constant lane: one vpermd on
//                       lavapipe, where a broadcast searches for the first active lane), named
//                       vec4 registers, no shared memory (STAGE_KV ignored)
//   CPU_DMAX=32|64|128|256 (CPU_BCAST) compile-time bound on D and DV (default 256): register
//                       blocks past it are not compiled at all (attention_cpu_macros.glsl)
//   CPU_ROWS=8          (CPU_BCAST) query rows per subgroup fixed at compile time (encoders):
//                       specialization constant 6 is then ignored and every row's guard folds
//   VEC4=0|1            (CPU_BCAST) q/k/v rows start at multiples of 4 elements: vec4 loads
//   TEXEL=0|1           (CPU_BCAST, VEC4) q, k and v are uniform texel buffers of vec4s (RGBA32F,
//                       RGBA16F with F16): on CPU devices a texelFetch is one vector gather, a
//                       storage-buffer load at lane-varying addresses a scalar loop over lanes
//   RAMP=0|1            the adaptive span (Sukhbaatar et al. 2019) of binding 6: per head h the
//                       soft mask m = clamp((R + z_h - x) / R, 0, 1) on the distance x from the
//                       query (at row + L - Nq, L = kv_len[b] or Nk) to the key, added to the
//                       scores as log2 m; keys at m = 0 are masked, and those past every row's
//                       span are not visited at all
//   ATTN_COOPMAT=1, CM=8|16  (F16=1) the cooperative-matrix body of attention_coopmat.glsl
//                       (tensor cores; built by the coopmat glslang, shaders/variants_coopmat.txt)
//   ATTN_TILED=1        the register-tiled SIMT body of attention_tiled.glsl (GPU prefill and
//                       encoders without tensor cores: 128 invocations, BR rows x BC keys)
//   Unset defines are 0.
// Bindings (set 0): 0 q [B,H,Nq,D] (read), 1 k [B,Hkv,Nk,D] (read), 2 v [B,Hkv,Nk,DV] (read)
//   (samplerBuffer under TEXEL, storage buffers otherwise),
//   3 kv_len int[B] (read; any buffer when absent), or int[2, B] with flags bit 3: the lengths,
//     then the k/v batch of each query batch (ragged rows: k and v may have any batch count), 4 bias (read; any buffer when absent),
//   5 out: [B,H,Nq,DV] contiguous, [B,Nq,H,DV] with flags bit 2 (write), or with SPLIT the fp32
//     partials: O [B*H*Nq, S, DV] followed by (m, l) [B*H*Nq, S, 2], m in log2 units,
//   6 (RAMP) ramp float [H, 2]: (R + z_h, 1 / R) per head, from element ramp_off.
// Push constants: Params below (element offsets and strides; d strides are 1).
// Specialization constants: 0 local_size_x (BR * LANES; CPU_BCAST: 8 * BR / ROWS), 1 BR (query
//   rows per workgroup), 2 BC (keys per tile; a multiple of 8 and of LANES), 3 D, 4 DV, 5 LANES (1 when
//   ROW_PER_INVOCATION), 6 ROWS (CPU_BCAST: query rows per subgroup, 1..8; BR = ROWS *
//   subgroups per workgroup).
#extension GL_EXT_control_flow_attributes : enable
#if F16 || BIAS_F16
#extension GL_EXT_shader_16bit_storage : require
#endif
#if SUBGROUP_REDUCE
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#if ATTN_COOPMAT
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_memory_scope_semantics : require
#if !F16 || SPLIT
#error "ATTN_COOPMAT is the f16, single-pass body"
#endif
#endif
#if GQA_ROWS && (ROW_PER_INVOCATION || RAMP)
#error "GQA_ROWS is the LANES body's, without the per-head ramp"
#endif
#if ATTN_TILED
#extension GL_GOOGLE_include_directive : require
#if SPLIT || ROW_PER_INVOCATION || STAGE_KV
#error "ATTN_TILED is its own single-pass body"
#endif
#endif
#if CPU_BCAST
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_GOOGLE_include_directive : require
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BR = 32;
layout(constant_id = 2) const uint BC = 32;
layout(constant_id = 3) const uint D = 64;
layout(constant_id = 4) const uint DV = 64;
layout(constant_id = 5) const uint LANES = 1;
const uint WG = BR * LANES;
const uint DPL = (DV + LANES - 1) / LANES; // output dims per invocation
const uint JC = 8;                         // keys per register chunk (ROW layout)
const float NEG = -3.402823466e38;         // "no score yet": finite, so exp2 never sees inf - inf
const float LOG2E = 1.4426950408889634;

#if F16
#define T_IO float16_t
#else
#define T_IO float
#endif
#if BIAS_F16
#define T_BIAS float16_t
#else
#define T_BIAS float
#endif

#if TEXEL
#if !CPU_BCAST || !VEC4
#error "TEXEL needs CPU_BCAST and VEC4"
#endif
layout(binding = 0) uniform samplerBuffer q_tex;
layout(binding = 1) uniform samplerBuffer k_tex;
layout(binding = 2) uniform samplerBuffer v_tex;
#else
layout(std430, binding = 0) readonly buffer QB { T_IO q[]; };
layout(std430, binding = 1) readonly buffer KB { T_IO k[]; };
layout(std430, binding = 2) readonly buffer VB { T_IO v[]; };
#endif
layout(std430, binding = 3) readonly buffer LB { int kv_len[]; };
layout(std430, binding = 4) readonly buffer BB { T_BIAS bias[]; };
#if CPU_BCAST && VEC4 && !TEXEL
#if F16
#define T_IO4 f16vec4
#else
#define T_IO4 vec4
#endif
// The same bindings seen as vec4 rows (the lowering checks offsets and strides are multiples of 4).
layout(std430, binding = 0) readonly buffer QB4 { T_IO4 q_vec4[]; };
layout(std430, binding = 1) readonly buffer KB4 { T_IO4 k_vec4[]; };
layout(std430, binding = 2) readonly buffer VB4 { T_IO4 v_vec4[]; };
#endif
#if RAMP
layout(std430, binding = 6) readonly buffer RB { float ramp[]; };
#endif
#if SPLIT
layout(std430, binding = 5) writeonly buffer OB { float o[]; };
#else
layout(std430, binding = 5) writeonly buffer OB { T_IO o[]; };
#endif

layout(push_constant) uniform Params {
  uint q_off, k_off, v_off, o_off;  // element 0 of each tensor in its bound range
  uint q_sb, q_sh, q_sn;            // element strides over b, h, n
  uint k_sb, k_sh, k_sn;
  uint v_sb, v_sh, v_sn;
  uint bias_off, bias_sb, bias_sh, bias_si, bias_sj; // 0 along broadcast dims
  uint kv_len_off;
  uint flags;                       // bit 0: bias present, bit 1: kv_len present, bit 2: output
                                    // [B, Nq, H, DV] (merge_heads)
  uint nq, nk, h, group;            // group = H / Hkv (grouped-query attention)
  float scale_log2;                 // scale * log2(e): scores live in log2 units
  int lower_off, upper_off;         // key j is allowed for query i iff i+lower_off <= j <= i+upper_off
  uint chunk;                       // SPLIT: keys per split
  uint splits;
  uint ramp_off;                    // RAMP: element 0 of the ramp
  uint kv_rows_off;                 // flags bit 3 (ragged rows): query batch b reads k/v batch
                                    // kv_len[kv_rows_off + b] (kv_len [2, B]: after the lengths)
} p;

#if STAGE_KV && !CPU_BCAST
// K rows at an odd pitch: the LANES body's lanes each read a different key at the same d, which
// at pitch D (a multiple of the bank count) would all hit one bank.
const uint KP = D + 1;
shared float Ks[BC * KP]; /* [BC, D] at pitch KP */
shared float Vs[BC * DV]; /* [BC, DV] */
#endif
#if !ROW_PER_INVOCATION && !ATTN_COOPMAT && !ATTN_TILED
shared float Qs[BR * D];  /* [BR, D], pre-scaled */
shared float Ps[BR * BC]; /* [BR, BC] probabilities of the current tile */
#if !SUBGROUP_REDUCE
shared float Red[WG];
#endif
#endif

// Key range [t0, t1) of the current tile and bases of this (batch, kv head) in k and v.
int t0, t1;
uint k_base, v_base;

// Output row of query `row` of (batch, head) bh, in rows of DV elements: [B, H, Nq, DV], or
// [B, Nq, H, DV] with flags bit 2 (merge_heads: heads side by side, as the output projection
// reads them).
uint out_row(uint bh, uint row) {
  return (p.flags & 4u) != 0u ? ((bh / p.h) * p.nq + row) * p.h + bh % p.h : bh * p.nq + row;
}

#if STAGE_KV && !CPU_BCAST
#define KS(j, d) Ks[(j) * KP + (d)]
#define VS(j, d) Vs[(j) * DV + (d)]
#else
// Keys past t1 are clamped to a valid one (their scores are masked anyway).
#define KS(j, d) float(k[k_base + uint(min(t0 + int(j), t1 - 1)) * p.k_sn + (d)])
#define VS(j, d) float(v[v_base + uint(min(t0 + int(j), t1 - 1)) * p.v_sn + (d)])
#endif

#if RAMP
// The adaptive span of head hh: the span's end R + z and 1 / R, and the first key any query row
// from r0 on may keep (x < R + z, x = r0 + at0 - key: an integer, so x <= ceil(R + z) - 1).
float span, inv_ramp;
int ramp_lo(uint hh, uint r0, int at0) {
  span = ramp[p.ramp_off + 2u * hh];
  inv_ramp = ramp[p.ramp_off + 2u * hh + 1u];
  return int(r0) + at0 - (int(min(ceil(span), 16777216.0)) - 1);
}
// The soft mask m of a key at distance x: log2 m added to the score `s`, and whether m > 0.
bool ramp_keep(inout float s, int x) {
  const float mr = (span - float(x)) * inv_ramp;
  s += mr > 0.0 ? log2(min(mr, 1.0)) : 0.0;
  return mr > 0.0;
}
#endif

// The k/v batch query batch b reads: b, or its ragged row's (flags bit 3).
uint kv_batch(uint b) {
  return (p.flags & 8u) != 0u ? uint(kv_len[p.kv_rows_off + b]) : b;
}

float bias_at(uint b, uint hh, uint i, int j) {
  return float(bias[p.bias_off + b * p.bias_sb + hh * p.bias_sh + i * p.bias_si + uint(j) * p.bias_sj]);
}

#if !ROW_PER_INVOCATION && !ATTN_COOPMAT && !ATTN_TILED
float row_max(float x) {
#if SUBGROUP_REDUCE
  return subgroupMax(x);
#else
  uint lid = gl_LocalInvocationID.x, first = lid - lid % LANES;
  Red[lid] = x;
  barrier();
  float r = Red[first];
  for (uint t = 1; t < LANES; t++) r = max(r, Red[first + t]);
  barrier();
  return r;
#endif
}
float row_sum(float x) {
#if SUBGROUP_REDUCE
  return subgroupAdd(x);
#else
  uint lid = gl_LocalInvocationID.x, first = lid - lid % LANES;
  Red[lid] = x;
  barrier();
  float r = 0.0;
  for (uint t = 0; t < LANES; t++) r += Red[first + t];
  barrier();
  return r;
#endif
}
#endif

#if ATTN_COOPMAT
#include "attention_coopmat.glsl"
#elif ATTN_TILED
#include "attention_tiled.glsl"
#elif CPU_BCAST
#include "attention_cpu.glsl"
#else
void main() {
  const uint lid = gl_LocalInvocationID.x;
#if GQA_ROWS
  const uint G = p.group, RPH = BR / G; /* query rows per head in this workgroup */
  const uint bkv = gl_WorkGroupID.y, b = bkv / (p.h / G), kvh = bkv % (p.h / G);
  const uint rl = lid / LANES, lane = lid % LANES;
  const uint hh = kvh * G + rl % G, bh = b * p.h + hh;
  const uint r0 = gl_WorkGroupID.x * RPH, r1 = min(r0 + RPH, p.nq);
  const uint row = r0 + rl / G;
  const uint nbh = gl_NumWorkGroups.y * G; /* batch * heads */
#else
  const uint bh = gl_WorkGroupID.y, b = bh / p.h, hh = bh % p.h, kvh = hh / p.group;
  const uint r0 = gl_WorkGroupID.x * BR, r1 = min(r0 + BR, p.nq);
#if ROW_PER_INVOCATION
  const uint rl = lid, lane = 0;
#else
  const uint rl = lid / LANES, lane = lid % LANES;
#endif
  const uint row = r0 + rl;
  const uint nbh = gl_NumWorkGroups.y;
#endif
  const bool row_ok = row < p.nq;
  const int irow = int(row);
  k_base = p.k_off + kv_batch(b) * p.k_sb + kvh * p.k_sh;
  v_base = p.v_off + kv_batch(b) * p.v_sb + kvh * p.v_sh;
  const uint q_base = p.q_off + b * p.q_sb + hh * p.q_sh;
  const bool has_bias = (p.flags & 1u) != 0u;

  // Keys any row of this block may see: whole blocks outside are skipped, not predicated.
  int hi = int(p.nk);
  if ((p.flags & 2u) != 0u) hi = clamp(kv_len[p.kv_len_off + b], 0, hi);
#if RAMP
  const int at0 = hi - int(p.nq); // query row i sits at position i + at0
  int lo = max(max(0, int(r0) + p.lower_off), ramp_lo(hh, r0, at0));
#else
  int lo = max(0, int(r0) + p.lower_off);
#endif
  hi = min(hi, int(r1) - 1 + p.upper_off + 1);
#if SPLIT
  lo = max(lo, int(gl_WorkGroupID.z * p.chunk));
  hi = min(hi, int((gl_WorkGroupID.z + 1u) * p.chunk));
#endif

  float m = NEG, l = 0.0;
  float acc[DPL];
  [[unroll]] for (uint i = 0; i < DPL; i++) acc[i] = 0.0;

#if ROW_PER_INVOCATION
  float qr[D]; /* this row of q, pre-scaled into log2 units */
  [[unroll]] for (uint d = 0; d < D; d++)
    qr[d] = row_ok ? float(q[q_base + row * p.q_sn + d]) * p.scale_log2 : 0.0;
#else
  for (uint e = lid; e < BR * D; e += WG) {
#if GQA_ROWS
    const uint er = e / D, rr = r0 + er / G;
    const uint eq = p.q_off + b * p.q_sb + (kvh * G + er % G) * p.q_sh;
#else
    const uint rr = r0 + e / D, eq = q_base;
#endif
    Qs[e] = rr < p.nq ? float(q[eq + rr * p.q_sn + e % D]) * p.scale_log2 : 0.0;
  }
#endif

  for (t0 = lo; t0 < hi; t0 += int(BC)) {
    t1 = min(t0 + int(BC), hi);
#if STAGE_KV || !ROW_PER_INVOCATION
    barrier(); // the previous tile's readers are done (and Qs is written on the first pass)
#endif
#if STAGE_KV
    for (uint e = lid; e < BC * D; e += WG) {
      int key = t0 + int(e / D);
      Ks[(e / D) * KP + e % D] = key < t1 ? float(k[k_base + uint(key) * p.k_sn + e % D]) : 0.0;
    }
    for (uint e = lid; e < BC * DV; e += WG) {
      int key = t0 + int(e / DV);
      Vs[e] = key < t1 ? float(v[v_base + uint(key) * p.v_sn + e % DV]) : 0.0;
    }
    barrier();
#endif
    // A full tile that every row of the block sees whole needs no predicate.
    const bool interior = t1 - t0 == int(BC) && t0 >= int(r1) - 1 + p.lower_off &&
                          t1 - 1 <= int(r0) + p.upper_off;
    const int lo_row = irow + p.lower_off, hi_row = irow + p.upper_off;

#if ROW_PER_INVOCATION
    const uint n_chunks = uint(t1 - t0 + int(JC) - 1) / JC;
    for (uint c = 0; c < n_chunks; c++) {
      const uint jb = c * JC;
      float s[JC];
      [[unroll]] for (uint u = 0; u < JC; u++) s[u] = 0.0;
      [[unroll]] for (uint d = 0; d < D; d++) {
        const float qd = qr[d];
        [[unroll]] for (uint u = 0; u < JC; u++) s[u] += qd * KS(jb + u, d);
      }
      float cmax = m;
      uint ok = (1u << JC) - 1u;
      [[unroll]] for (uint u = 0; u < JC; u++) {
        const int j = t0 + int(jb + u);
        if (!interior && !(j < t1 && j >= lo_row && j <= hi_row)) ok &= ~(1u << u);
        if (has_bias && j < t1) s[u] += bias_at(b, hh, min(row, p.nq - 1), j) * LOG2E;
#if RAMP
        if (!ramp_keep(s[u], irow + at0 - j)) ok &= ~(1u << u);
#endif
        if ((ok & (1u << u)) != 0u) cmax = max(cmax, s[u]);
      }
      const float alpha = exp2(m - cmax);
      m = cmax;
      float pr[JC];
      float psum = 0.0;
      [[unroll]] for (uint u = 0; u < JC; u++) {
        pr[u] = (ok & (1u << u)) != 0u ? exp2(s[u] - m) : 0.0;
        psum += pr[u];
      }
      l = l * alpha + psum;
      [[unroll]] for (uint d = 0; d < DV; d++) {
        float a = acc[d] * alpha;
        [[unroll]] for (uint u = 0; u < JC; u++) a += pr[u] * VS(jb + u, d);
        acc[d] = a;
      }
    }
#else
    // q·k: lane owns keys lane, lane + LANES, ... of the tile.
    const uint KPL = BC / LANES;
    float s[KPL];
    float lmax = NEG;
    uint ok = 0u;
    for (uint u = 0; u < KPL; u++) {
      const uint jj = lane + u * LANES;
      const int j = t0 + int(jj);
      float a = 0.0;
      for (uint d = 0; d < D; d++) a += Qs[rl * D + d] * KS(jj, d);
      if (has_bias && j < t1) a += bias_at(b, hh, min(row, p.nq - 1), j) * LOG2E;
#if RAMP
      const bool kept = ramp_keep(a, irow + at0 - j);
#else
      const bool kept = true;
#endif
      s[u] = a;
      if (kept && (interior || (j < t1 && j >= lo_row && j <= hi_row))) {
        ok |= 1u << u;
        lmax = max(lmax, a);
      }
    }
    const float mn = max(m, row_max(lmax));
    const float alpha = exp2(m - mn);
    m = mn;
    float psum = 0.0;
    for (uint u = 0; u < KPL; u++) {
      const float pu = (ok & (1u << u)) != 0u ? exp2(s[u] - m) : 0.0;
      psum += pu;
      Ps[rl * BC + lane + u * LANES] = pu;
    }
    l = l * alpha + psum; // per-lane partial sum; the row total is summed once at the end
    barrier();
    const uint nj = uint(t1 - t0);
    [[unroll]] for (uint i = 0; i < DPL; i++) {
      const uint d = lane + i * LANES;
      if (d < DV) {
        float a = acc[i] * alpha;
        for (uint jj = 0; jj < nj; jj++) a += Ps[rl * BC + jj] * VS(jj, d);
        acc[i] = a;
      }
    }
#endif
  }

#if !ROW_PER_INVOCATION
  l = row_sum(l);
#endif
  if (!row_ok) return;
#if SPLIT
  const uint prow = (bh * p.nq + row) * p.splits + gl_WorkGroupID.z;
  [[unroll]] for (uint i = 0; i < DPL; i++) {
    const uint d = lane + i * LANES;
    if (d < DV) o[p.o_off + prow * DV + d] = acc[i];
  }
  if (lane == 0) {
    const uint ml = p.o_off + nbh * p.nq * p.splits * DV + prow * 2;
    o[ml] = m;
    o[ml + 1] = l;
  }
#else
  const float inv = l > 0.0 ? 1.0 / l : 0.0; // fully masked rows give zeros
  const uint o_base = p.o_off + out_row(bh, row) * DV;
  [[unroll]] for (uint i = 0; i < DPL; i++) {
    const uint d = lane + i * LANES;
    if (d < DV) o[o_base + d] = T_IO(acc[i] * inv);
  }
#endif
}
#endif
