#version 450
// Block-sparse attention, the FlashAttention-2 scheme of attention.comp over the listed key blocks
// only: out = softmax(q·kᵀ·scale + key_bias, visible keys)·v. The query rows are cut in query
// blocks of BQ rows; each query block visits the key blocks of its CSR row (rows / cols, per
// layout head), and a key inside a listed block is visible iff the entry's mask bit (mask id -1:
// all), kv_len and the causal rule let it through. A workgroup (GPU body) or a subgroup (CPU body)
// owns rows of one query block only, so its walk over the entries is uniform: K/V tiles of a
// listed block stream through shared memory, the running max, sum and un-normalised output stay
// in fp32 registers, one normalisation at the end; a row that sees no key is zeros. Cost grows
// with the listed blocks, not Nq·Nk.
//
// Defines (unset = 0):
//   F16=0|1             q, k, v and the output are float16 in storage (math stays fp32)
//   BIAS_F16=0|1        the key bias is float16
//   CPU_BCAST=0|1       1: the CPU-class body (attention_cpu_macros.glsl): a subgroup of 8 lanes
//                       owns ROWS rows of one query block and walks each listed block 16 keys at a
//                       time in named registers, no shared memory; 0: the GPU body, LANES
//                       invocations per row, BR rows of one query block per workgroup
//   CPU_DMAX=32|64|128|256 (CPU_BCAST) compile-time bound on D and DV (default 256), as in
//                       attention.comp
//   STAGE_KV=0|1        (GPU body) K/V tiles staged in shared memory (fp32)
//   SUBGROUP_REDUCE=0|1 (GPU body) row max / sum with subgroup arithmetic (LANES = subgroup size)
//   VEC4=0|1, TEXEL=0|1 (CPU body) as in attention.comp
//   AUX_MASKS, AUX_LEN, AUX_BIAS: binding (6 or 7) of the mask table, kv_len and the key bias, or
//                       unset when absent; AUX_PACKED=7 instead of the last two when all three are
//                       given (the plan has 8 bindings): kv_len and the bias packed into one buffer
//                       by sparse_attention_pack.comp
// Bindings: 0 q [B,H,Nq,D], 1 k [B,Hkv,Nk,D], 2 v [B,Hkv,Nk,DV] (samplerBuffer under TEXEL),
//   3 out [B,H,Nq,DV] or [B,Nq,H,DV] (flags bit 0), 4 rows int[L, NQB+1], 5 cols int[L, E, 2],
//   6, 7: the AUX tables: masks int[M, BQ, ceil(BK/32)], kv_len int[B], key_bias [B, Nk].
// Tables bound at run time are clamped here (offsets to [0, E], block ids and mask ids outside
// their ranges skip the entry): no value reads outside a buffer.
// Specialization constants: 0 local size, 1 BR (GPU: rows per workgroup), 2 BC (GPU: keys per
//   tile, a multiple of LANES), 3 D, 4 DV, 5 LANES, 6 ROWS (CPU: rows per subgroup, 1..8).
#extension GL_EXT_control_flow_attributes : enable
#if F16 || BIAS_F16
#extension GL_EXT_shader_16bit_storage : require
#endif
#if SUBGROUP_REDUCE
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#if CPU_BCAST
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_GOOGLE_include_directive : require
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BR = 4;
layout(constant_id = 2) const uint BC = 32;
layout(constant_id = 3) const uint D = 64;
layout(constant_id = 4) const uint DV = 64;
layout(constant_id = 5) const uint LANES = 32;
const uint WG = BR * LANES;
const uint DPL = (DV + LANES - 1) / LANES; // output dims per invocation (GPU body)
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
layout(binding = 0) uniform samplerBuffer q_tex;
layout(binding = 1) uniform samplerBuffer k_tex;
layout(binding = 2) uniform samplerBuffer v_tex;
#else
layout(std430, binding = 0) readonly buffer QB { T_IO q[]; };
layout(std430, binding = 1) readonly buffer KB { T_IO k[]; };
layout(std430, binding = 2) readonly buffer VB { T_IO v[]; };
#endif
#if CPU_BCAST && VEC4 && !TEXEL
#if F16
#define T_IO4 f16vec4
#else
#define T_IO4 vec4
#endif
layout(std430, binding = 0) readonly buffer QB4 { T_IO4 q_vec4[]; };
layout(std430, binding = 1) readonly buffer KB4 { T_IO4 k_vec4[]; };
layout(std430, binding = 2) readonly buffer VB4 { T_IO4 v_vec4[]; };
#endif
layout(std430, binding = 3) writeonly buffer OB { T_IO o[]; };
layout(std430, binding = 4) readonly buffer RB { int rows_tab[]; };
layout(std430, binding = 5) readonly buffer CB { int cols_tab[]; };
#ifdef AUX_MASKS
layout(std430, binding = AUX_MASKS) readonly buffer MB { int masks_tab[]; };
#endif
#ifdef AUX_LEN
layout(std430, binding = AUX_LEN) readonly buffer LB { int kv_len[]; };
#endif
#ifdef AUX_BIAS
layout(std430, binding = AUX_BIAS) readonly buffer BB { T_BIAS key_bias[]; };
#endif
#ifdef AUX_PACKED // kv_len and the key bias packed by sparse_attention_pack.comp
layout(std430, binding = AUX_PACKED) readonly buffer PB { uint packed[]; };
#endif

layout(push_constant) uniform Params {
  uint q_off, k_off, v_off, o_off; // element 0 of each tensor in its bound range
  uint q_sb, q_sh, q_sn;           // element strides over b, h, n
  uint k_sb, k_sh, k_sn;
  uint v_sb, v_sh, v_sn;
  uint rows_off, cols_off, masks_off, len_off, bias_off;
  uint flags;                      // bit 0: output [B, Nq, H, DV]; bit 1: causal
  uint nq, nk, h, group;           // group = H / Hkv
  float scale_log2;                // scale * log2(e): scores live in log2 units
  uint bq, bk, nqb, nkb;           // block sizes and counts
  uint entries, mask_count, lheads; // E, M, L (1 or H)
  uint parts;                      // workgroups (GPU) or subgroups (CPU) per query block
} p;

uint k_base, v_base;

uint out_row(uint bh, uint row) {
  return (p.flags & 1u) != 0u ? ((bh / p.h) * p.nq + row) * p.h + bh % p.h : bh * p.nq + row;
}

// Key `key` of the current block (first key ks) is allowed by mask `mid` for local query row r.
bool mask_bit(int mid, uint r, int key, int ks) {
#ifdef AUX_MASKS
  if (mid < 0) return true;
  // Rows past the block (a CPU subgroup's spare rows, never stored) read its last mask row.
  r = min(r, p.bq - 1u);
  const uint words = (p.bk + 31u) / 32u, jj = uint(key - ks);
  const uint w = uint(masks_tab[p.masks_off + (uint(mid) * p.bq + r) * words + jj / 32u]);
  return ((w >> (jj % 32u)) & 1u) != 0u;
#else
  return true;
#endif
}

// Word (o / 32) of local row r of mask `mid` (mid >= 0).
uint mask_word(int mid, uint r, int o) {
#ifdef AUX_MASKS
  r = min(r, p.bq - 1u);
  return uint(masks_tab[p.masks_off + (uint(mid) * p.bq + r) * ((p.bk + 31u) / 32u) + uint(o) / 32u]);
#else
  return 0xFFFFFFFFu;
#endif
}

// Entry e of layout head lh: key block and mask id; false when the entry is out of range (a
// table bound at run time that the builder could not check).
bool entry_at(uint lh, int e, out int kblock, out int mid) {
  const uint at = p.cols_off + (lh * p.entries + uint(e)) * 2u;
  kblock = cols_tab[at];
  mid = cols_tab[at + 1u];
#ifndef AUX_MASKS
  if (mid != -1) return false;
#endif
  return kblock >= 0 && uint(kblock) < p.nkb && mid >= -1 && (mid < 0 || uint(mid) < p.mask_count);
}

// The entries [e0, e1) of query block qblk of layout head lh, clamped to [0, E].
void row_range(uint lh, uint qblk, out int e0, out int e1) {
  const uint at = p.rows_off + lh * (p.nqb + 1u) + qblk;
  e0 = clamp(rows_tab[at], 0, int(p.entries));
  e1 = clamp(rows_tab[at + 1u], e0, int(p.entries));
}

// Keys [0, limit) exist for batch b: kv_len clamped to [0, Nk].
int key_limit(uint b) {
#ifdef AUX_LEN
  return clamp(kv_len[p.len_off + b], 0, int(p.nk));
#elif defined(AUX_PACKED)
  return clamp(int(packed[p.len_off + b]), 0, int(p.nk));
#else
  return int(p.nk);
#endif
}

float bias_at(uint b, uint hh, uint i, int j) {
#ifdef AUX_BIAS
  return float(key_bias[p.bias_off + b * p.nk + uint(j)]);
#elif defined(AUX_PACKED)
  return uintBitsToFloat(packed[p.bias_off + b * p.nk + uint(j)]);
#else
  return 0.0;
#endif
}

#if defined(AUX_BIAS) || defined(AUX_PACKED)
const bool HAS_BIAS = true;
#else
const bool HAS_BIAS = false;
#endif

#if CPU_BCAST
#define ROW_END r1
// Visible: inside the block and kv_len (hi), causal, and the entry's mask bit for this row.
// The mask word is addressed by the chunk (c0 - ks, a multiple of 16: its 16 keys share one
// word), not by the lane's key, so every lane loads the same address: one load instead of a loop
// over the lanes on lavapipe.
#define VISIBLE(key, row)                                                                       \
  ((key) < hi && (!causal || (key) <= (row) + diag) &&                                          \
   (mid < 0 || ((mask_word(mid, uint((row) - qstart), c0 - ks) >> (uint((key) - ks) % 32u)) & 1u) != 0u))
#include "attention_cpu_macros.glsl"

void main() {
  const uint lane = gl_SubgroupInvocationID;
  const uint bh = gl_WorkGroupID.y, b = bh / p.h, hh = bh % p.h, kvh = hh / p.group;
  const uint lh = p.lheads == 1u ? 0u : hh;
  // This subgroup's query block and its rows [r0, r1).
  const uint gs = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  if (gs >= p.nqb * p.parts) return; // a whole subgroup: uniform
  const uint qblk = gs / p.parts;
  const int qstart = int(qblk * p.bq);
  const uint r0 = qblk * p.bq + (gs % p.parts) * ROWS;
  const uint r1 = min(min(r0 + ROWS, (qblk + 1u) * p.bq), p.nq);
  if (r0 >= r1) return;
  const bool has_bias = HAS_BIAS;
  const bool causal = (p.flags & 2u) != 0u;
  const int diag = int(p.nk) - int(p.nq);
  k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
  v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;
  const int limit = key_limit(b);

  const uint qb = p.q_off + b * p.q_sb + hh * p.q_sh + min(r0 + min(lane, ROWS - 1u), r1 - 1u) * p.q_sn;
  REP64(Q_DECL)
  REP64(Q_LOAD)
  REP8(QS_DECL_R)
  REP8(QS_SET_R)
  REP8(A_DECL)
  REP8(ROW_DECL)
  int e0, e1;
  row_range(lh, qblk, e0, e1);
  for (int e = e0; e < e1; e++) {
    int kblock, mid;
    if (!entry_at(lh, e, kblock, mid)) continue;
    const int ks = kblock * int(p.bk);
    // Keys of this block any row may see: up to kv_len and the last row's causal limit.
    int hi = min(ks + int(p.bk), limit);
    if (causal) hi = min(hi, int(r1) - 1 + diag + 1);
    for (int c0 = ks; c0 < hi; c0 += 16) {
      const int key_i = c0 + int(lane), key_h = key_i + 8;
      const uint kb = k_base + uint(min(key_i, hi - 1)) * p.k_sn;
      const uint kbh = k_base + uint(min(key_h, hi - 1)) * p.k_sn;
      float sr0 = 0.0, sr1 = 0.0, sr2 = 0.0, sr3 = 0.0, sr4 = 0.0, sr5 = 0.0, sr6 = 0.0, sr7 = 0.0;
      float sh0 = 0.0, sh1 = 0.0, sh2 = 0.0, sh3 = 0.0, sh4 = 0.0, sh5 = 0.0, sh6 = 0.0, sh7 = 0.0;
      REP64(QK)
      // Whole chunk visible to every row: no mask, no causal cut, no key past the block.
      const bool interior = mid < 0 && c0 + 16 <= hi && (!causal || c0 + 15 <= int(r0) + diag);
      REP8(SOFT)
      PV_LOADV(0) PV_LOADV(1) PV_LOADV(2) PV_LOADV(3) PV_LOADV(4) PV_LOADV(5) PV_LOADV(6)
      PV_LOADV(7) PV_LOADV(8) PV_LOADV(9) PV_LOADV(10) PV_LOADV(11) PV_LOADV(12) PV_LOADV(13)
      PV_LOADV(14) PV_LOADV(15)
      REP8(PV_ROW)
    }
  }
  REP8(STORE_R)
}

#else // GPU body

#if STAGE_KV
shared float Ks[BC * D];  /* [BC, D] */
shared float Vs[BC * DV]; /* [BC, DV] */
#define KS(j, d) Ks[(j) * D + (d)]
#define VS(j, d) Vs[(j) * DV + (d)]
#else
// Keys past t1 are clamped to a valid one (their scores are masked anyway).
#define KS(j, d) float(k[k_base + uint(min(t0 + int(j), t1 - 1)) * p.k_sn + (d)])
#define VS(j, d) float(v[v_base + uint(min(t0 + int(j), t1 - 1)) * p.v_sn + (d)])
#endif
shared float Qs[BR * D];  /* [BR, D], pre-scaled */
shared float Ps[BR * BC]; /* [BR, BC] probabilities of the current tile */
#if !SUBGROUP_REDUCE
shared float Red[WG];
#endif

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

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint bh = gl_WorkGroupID.y, b = bh / p.h, hh = bh % p.h, kvh = hh / p.group;
  const uint lh = p.lheads == 1u ? 0u : hh;
  // This workgroup's query block and rows [r0, r1) (uniform).
  const uint qblk = gl_WorkGroupID.x / p.parts;
  const uint qstart = qblk * p.bq;
  const uint r0 = qstart + (gl_WorkGroupID.x % p.parts) * BR;
  const uint r1 = min(min(r0 + BR, qstart + p.bq), p.nq);
  const uint rl = lid / LANES, lane = lid % LANES;
  const uint row = r0 + rl;
  const bool row_ok = row < r1;
  const bool causal = (p.flags & 2u) != 0u;
  const int diag = int(p.nk) - int(p.nq);
  k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
  v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;
  const uint q_base = p.q_off + b * p.q_sb + hh * p.q_sh;
  const int limit = key_limit(b);

  float m = NEG, l = 0.0;
  float acc[DPL];
  [[unroll]] for (uint i = 0; i < DPL; i++) acc[i] = 0.0;
  for (uint e = lid; e < BR * D; e += WG) {
    uint rr = r0 + e / D;
    Qs[e] = rr < r1 ? float(q[q_base + rr * p.q_sn + e % D]) * p.scale_log2 : 0.0;
  }

  int e0 = 0, e1 = 0;
  if (r0 < r1) row_range(lh, qblk, e0, e1);
  for (int e = e0; e < e1; e++) {
    int kblock, mid;
    if (!entry_at(lh, e, kblock, mid)) continue;
    const int ks = kblock * int(p.bk);
    int hi = min(ks + int(p.bk), limit);
    if (causal) hi = min(hi, int(r1) - 1 + diag + 1);
    for (int t0 = ks; t0 < hi; t0 += int(BC)) {
      const int t1 = min(t0 + int(BC), hi);
      barrier(); // the previous tile's readers are done (and Qs is written on the first pass)
#if STAGE_KV
      for (uint x = lid; x < BC * D; x += WG) {
        int key = t0 + int(x / D);
        Ks[x] = key < t1 ? float(k[k_base + uint(key) * p.k_sn + x % D]) : 0.0;
      }
      for (uint x = lid; x < BC * DV; x += WG) {
        int key = t0 + int(x / DV);
        Vs[x] = key < t1 ? float(v[v_base + uint(key) * p.v_sn + x % DV]) : 0.0;
      }
      barrier();
#endif
      const bool interior = mid < 0 && t1 - t0 == int(BC) &&
                            (!causal || t1 - 1 <= int(r0) + diag);
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
        if (HAS_BIAS && j < t1) a += bias_at(b, hh, row, j) * LOG2E;
        s[u] = a;
        if (interior || (row_ok && j < t1 && (!causal || j <= int(row) + diag) &&
                         mask_bit(mid, row - qstart, j, ks))) {
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
    }
  }
  l = row_sum(l);
  if (!row_ok) return;
  const float inv = l > 0.0 ? 1.0 / l : 0.0; // a row that sees no key gives zeros
  const uint o_base = p.o_off + out_row(bh, row) * DV;
  [[unroll]] for (uint i = 0; i < DPL; i++) {
    const uint d = lane + i * LANES;
    if (d < DV) o[o_base + d] = T_IO(acc[i] * inv);
  }
}
#endif
