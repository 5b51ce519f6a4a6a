#version 450
// Linear attention (LINEAR_ATTENTION, LINEAR_STATE_WRITE; graph/lower/lower_linear.c). The state
// of one (b, h) after a token is S [F, Dv + 1]: columns 0..Dv-1 sum phi(k) v^T, column Dv z = sum
// phi(k); ungated S_t = S_{t-1} + phi(k_t) [v_t, 1]^T, gated (RFA) S_t = g_t S_{t-1} +
// (1 - g_t) phi(k_t) [v_t, 1]^T with g_t = sigmoid(gate_t). Four modes:
// MODE 0 (reduce): one invocation per (bh, chunk c, 4 rows i of S, 4 columns j of S): what the
//   tokens [c*C, min((c+1)*C, N)) add to S, from 0 or, with INIT, from dst's own value (the
//   in-place state write: one chunk holding every token). GATED: the invocation of tile (0, 0)
//   also writes the chunk's decay (the product of its gates). dst [BH, Nc, F, Dv + 1].
// MODE 1 (scan): one invocation per (bh, element e of S): turns the chunk sums into the state at
//   each chunk's start, in place (P_{c+1} = decay_c P_c + A_c), from init [BH, F*(Dv+1)] or 0.
// MODE 3 (weights): one invocation per (bh, 4 query rows r, 4 keys m of their chunk): the
//   intra-chunk weights W[bh, r, m - t0] = (phi(q_r) . phi(k_m)) * (gated: (1 - g_m) *
//   prod_{m<s<=r} g_s), 0 for m > r; GATED: tile 0 of a row also writes decay[bh, r] =
//   prod_{t0<=s<=r} g_s (how much of the chunk's start state survives to r). W [BH, N, C].
// MODE 2 (output): one invocation per (bh, 4 query rows, 4 columns of v): [num, den] of row r =
//   decay_r phi(q_r)^T P_c (HAS_P; P the chunk's start state) + (CAUSAL) sum_m W[r, m] [v_m, 1];
//   out = num / (den + eps). Non-causal: chunk = N, P = the totals, no W.
// Lavapipe shapes the code (docs/performance.md, "What bounds the kernels on lavapipe"): every buffer load is a loop over the SIMD
// lanes, so each invocation owns a 4 x 4 tile in named vec4 accumulators (two loads of 4 per 16
// FMAs), and out-of-range rows and columns load a clamped index and are not stored (no load under
// a lane-varying condition). The chunk is a multiple of 4, so a row tile never straddles chunks.
// Defines: MODE, GATED, INIT, CAUSAL, HAS_P (0/1).
// Bindings: mode 0: 0 phi_k, 1 v, 2 gate, 3 dst (rw), 4 decay (write);
//           mode 1: 0 sums (rw), 1 decay (read), 2 init (read);
//           mode 3: 0 phi_q, 1 phi_k, 2 gate, 3 W (write), 4 decay (write);
//           mode 2: 0 phi_q, 1 v, 2 W, 3 decay, 4 P, 5 out (write).
// Push constants: see the Params blocks (element offsets and strides).
// Specialization constants: 0 workgroup size.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;

float gate_of(float logit) { return 1.0 / (1.0 + exp(-logit)); }

#define GRID_LOOP(x, count) \
  for (uint x = gl_GlobalInvocationID.x; x < count; x += gl_NumWorkGroups.x * gl_WorkGroupSize.x)

#if MODE == 0
layout(std430, binding = 0) readonly buffer K { float k[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
#if GATED
layout(std430, binding = 2) readonly buffer G { float gate[]; };
layout(std430, binding = 4) writeonly buffer Decay { float decay[]; };
#endif
layout(std430, binding = 3) buffer Dst { float dst[]; };
layout(push_constant) uniform Params {
  uint count, tiles_j, tiles_i, chunks, heads;
  uint n, chunk, f, cols;
  uint k_off, k_st0, k_st1, k_st2, k_st3;
  uint v_off, v_st0, v_st1, v_st2, v_st3;
  uint g_off, g_st0, g_st1, g_st2;
  uint dst_off, decay_off;
} p;

void main() {
  GRID_LOOP(x, p.count) {
    uint jt = x % p.tiles_j, r = x / p.tiles_j;
    uint it = r % p.tiles_i;
    r /= p.tiles_i;
    uint c = r % p.chunks, bh = r / p.chunks;
    uint b = bh / p.heads, h = bh % p.heads;
    uint i0 = it * 4u, j0 = jt * 4u;
    uint dv = p.cols - 1u;
    // Clamped rows / columns of S; column dv is z (a value of 1).
    uvec4 ii = min(uvec4(i0, i0 + 1u, i0 + 2u, i0 + 3u), uvec4(p.f - 1u));
    uvec4 jj = uvec4(j0, j0 + 1u, j0 + 2u, j0 + 3u);
    uvec4 jv = min(jj, uvec4(max(dv, 1u) - 1u));
    vec4 is_one = vec4(equal(jj, uvec4(dv)));
    uvec4 kb = p.k_off + b * p.k_st0 + h * p.k_st1 + ii * p.k_st3;
    uvec4 vb = p.v_off + b * p.v_st0 + h * p.v_st1 + jv * p.v_st3;
    uint t0 = c * p.chunk, t1 = min(t0 + p.chunk, p.n);
    vec4 a0 = vec4(0.0), a1 = vec4(0.0), a2 = vec4(0.0), a3 = vec4(0.0);
    uvec4 row = uvec4(0u, 1u, 2u, 3u) * p.cols;
    uint base = p.dst_off + ((bh * p.chunks + c) * p.f) * p.cols;
#if INIT
    // The state's current value (clamped reads; the stores below skip what is out of range).
    uvec4 jc = min(jj, uvec4(p.cols - 1u));
    uint ib = base + i0 * p.cols;
    uint last = base + p.f * p.cols - 1u;
    a0 = vec4(dst[min(ib + row.x + jc.x, last)], dst[min(ib + row.x + jc.y, last)], dst[min(ib + row.x + jc.z, last)], dst[min(ib + row.x + jc.w, last)]);
    a1 = vec4(dst[min(ib + row.y + jc.x, last)], dst[min(ib + row.y + jc.y, last)], dst[min(ib + row.y + jc.z, last)], dst[min(ib + row.y + jc.w, last)]);
    a2 = vec4(dst[min(ib + row.z + jc.x, last)], dst[min(ib + row.z + jc.y, last)], dst[min(ib + row.z + jc.z, last)], dst[min(ib + row.z + jc.w, last)]);
    a3 = vec4(dst[min(ib + row.w + jc.x, last)], dst[min(ib + row.w + jc.y, last)], dst[min(ib + row.w + jc.z, last)], dst[min(ib + row.w + jc.w, last)]);
#endif
#if GATED
    uint gb = p.g_off + b * p.g_st0 + h * p.g_st1;
    float prod = 1.0;
#endif
    for (uint t = t0; t < t1; t++) {
      uint ko = t * p.k_st2, vo = t * p.v_st2;
      vec4 vt = vec4(v[vb.x + vo], v[vb.y + vo], v[vb.z + vo], v[vb.w + vo]);
      vt = mix(vt, vec4(1.0), is_one);
      vec4 kt = vec4(k[kb.x + ko], k[kb.y + ko], k[kb.z + ko], k[kb.w + ko]);
#if GATED
      float g = gate_of(gate[gb + t * p.g_st2]);
      vt *= 1.0 - g;
      a0 = g * a0 + kt.x * vt;
      a1 = g * a1 + kt.y * vt;
      a2 = g * a2 + kt.z * vt;
      a3 = g * a3 + kt.w * vt;
      prod *= g;
#else
      a0 += kt.x * vt;
      a1 += kt.y * vt;
      a2 += kt.z * vt;
      a3 += kt.w * vt;
#endif
    }
#if GATED
    if (it == 0u && jt == 0u) decay[p.decay_off + bh * p.chunks + c] = prod;
#endif
    for (uint q = 0u; q < 4u; q++) {
      uint i = i0 + q;
      if (i >= p.f) break;
      vec4 a = q == 0u ? a0 : q == 1u ? a1 : q == 2u ? a2 : a3;
      uint o = base + i * p.cols + j0;
      if (j0 < p.cols) dst[o] = a.x;
      if (j0 + 1u < p.cols) dst[o + 1u] = a.y;
      if (j0 + 2u < p.cols) dst[o + 2u] = a.z;
      if (j0 + 3u < p.cols) dst[o + 3u] = a.w;
    }
  }
}

#elif MODE == 1
layout(std430, binding = 0) buffer Sums { float sums[]; };
#if GATED
layout(std430, binding = 1) readonly buffer Decay { float decay[]; };
#endif
#if INIT
layout(std430, binding = 2) readonly buffer Init { float init[]; };
#endif
layout(push_constant) uniform Params {
  uint count, size_e, chunks;
  uint sums_off, decay_off, init_off;
} p;

void main() {
  GRID_LOOP(x, p.count) {
    uint bh = x / p.size_e, e = x % p.size_e;
#if INIT
    float state = init[p.init_off + x];
#else
    float state = 0.0;
#endif
    uint at = p.sums_off + bh * p.chunks * p.size_e + e;
    for (uint c = 0; c < p.chunks; c++, at += p.size_e) {
      float a = sums[at];
      sums[at] = state;
#if GATED
      state = decay[p.decay_off + bh * p.chunks + c] * state + a;
#else
      state += a;
#endif
    }
  }
}

#elif MODE == 3
layout(std430, binding = 0) readonly buffer Q { float phq[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
#if GATED
layout(std430, binding = 2) readonly buffer G { float gate[]; };
layout(std430, binding = 4) writeonly buffer Decay { float decay[]; };
#endif
layout(std430, binding = 3) writeonly buffer W { float w[]; };
layout(push_constant) uniform Params {
  uint count, tiles_m, tiles_r, heads;
  uint n, chunk, f;
  uint q_off, q_st0, q_st1, q_st2, q_st3;
  uint k_off, k_st0, k_st1, k_st2, k_st3;
  uint g_off, g_st0, g_st1, g_st2;
  uint w_off, decay_off;
} p;

void main() {
  GRID_LOOP(x, p.count) {
    uint mt = x % p.tiles_m, r = x / p.tiles_m;
    uint rt = r % p.tiles_r, bh = r / p.tiles_r;
    uint b = bh / p.heads, h = bh % p.heads;
    uint r0 = rt * 4u, t0 = r0 / p.chunk * p.chunk, m0 = t0 + mt * 4u;
    uvec4 rr = min(uvec4(r0, r0 + 1u, r0 + 2u, r0 + 3u), uvec4(p.n - 1u));
    uvec4 mm = min(uvec4(m0, m0 + 1u, m0 + 2u, m0 + 3u), uvec4(p.n - 1u));
    uvec4 qb = p.q_off + b * p.q_st0 + h * p.q_st1 + rr * p.q_st2;
    uvec4 kb = p.k_off + b * p.k_st0 + h * p.k_st1 + mm * p.k_st2;
    // w_r = (q_r . k_m0..m3) as vec4 over the 4 keys.
    vec4 w0 = vec4(0.0), w1 = vec4(0.0), w2 = vec4(0.0), w3 = vec4(0.0);
    if (m0 <= r0 + 3u) { // a key tile entirely after the rows has weights 0
      for (uint i = 0; i < p.f; i++) {
        uint qi = i * p.q_st3, ki = i * p.k_st3;
        vec4 kt = vec4(k[kb.x + ki], k[kb.y + ki], k[kb.z + ki], k[kb.w + ki]);
        w0 += phq[qb.x + qi] * kt;
        w1 += phq[qb.y + qi] * kt;
        w2 += phq[qb.z + qi] * kt;
        w3 += phq[qb.w + qi] * kt;
      }
    }
    uvec4 key = uvec4(m0, m0 + 1u, m0 + 2u, m0 + 3u);
    // Causal mask (key <= row) and keys past N.
    w0 *= vec4(lessThanEqual(key, uvec4(r0))) * vec4(lessThan(key, uvec4(p.n)));
    w1 *= vec4(lessThanEqual(key, uvec4(r0 + 1u))) * vec4(lessThan(key, uvec4(p.n)));
    w2 *= vec4(lessThanEqual(key, uvec4(r0 + 2u))) * vec4(lessThan(key, uvec4(p.n)));
    w3 *= vec4(lessThanEqual(key, uvec4(r0 + 3u))) * vec4(lessThan(key, uvec4(p.n)));
#if GATED
    // factor(r, m) = (1 - g_m) prod_{m < s <= r} g_s: one walk from the tile's last row down to
    // its first key, keeping the running product of each of the 4 rows (a row joins once s is at
    // or before it); products, not differences of cumulative logs, so gates near 0 stay exact.
    uint gb = p.g_off + b * p.g_st0 + h * p.g_st1;
    vec4 f0 = vec4(0.0), f1 = vec4(0.0), f2 = vec4(0.0), f3 = vec4(0.0);
    vec4 run = vec4(1.0);
    uvec4 rows4 = uvec4(r0, r0 + 1u, r0 + 2u, r0 + 3u);
    uint top = min(r0 + 3u, p.n - 1u);
    for (uint back = 0u; back + m0 <= top; back++) {
      uint s = top - back;
      float g = gate_of(gate[gb + s * p.g_st2]);
      vec4 joined = vec4(lessThanEqual(uvec4(s), rows4));
      vec4 fac = joined * run * (1.0 - g);
      uint d = s - m0;
      if (d < 4u) {
        f0[d] = fac.x;
        f1[d] = fac.y;
        f2[d] = fac.z;
        f3[d] = fac.w;
      }
      run = mix(run, run * g, joined);
    }
    w0 *= f0; w1 *= f1; w2 *= f2; w3 *= f3;
    // The first key tile walked down to the chunk's start: run is prod_{t0 <= s <= r} g_s.
    if (mt == 0u)
      for (uint q = 0u; q < 4u; q++)
        if (r0 + q < p.n) decay[p.decay_off + bh * p.n + r0 + q] = run[q];
#endif
    uint ob = p.w_off + (bh * p.n + r0) * p.chunk + mt * 4u;
    for (uint q = 0u; q < 4u; q++) {
      if (r0 + q >= p.n) break;
      vec4 wq = q == 0u ? w0 : q == 1u ? w1 : q == 2u ? w2 : w3;
      uint o = ob + q * p.chunk;
      w[o] = wq.x;
      w[o + 1u] = wq.y;
      w[o + 2u] = wq.z;
      w[o + 3u] = wq.w;
    }
  }
}

#else
layout(std430, binding = 0) readonly buffer Q { float phq[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
#if CAUSAL
layout(std430, binding = 2) readonly buffer W { float w[]; };
#endif
#if GATED
layout(std430, binding = 3) readonly buffer Decay { float decay[]; };
#endif
#if HAS_P
layout(std430, binding = 4) readonly buffer P { float pstate[]; };
#endif
layout(std430, binding = 5) writeonly buffer Out { float o[]; };
layout(push_constant) uniform Params {
  uint count, tiles_j, tiles_r, heads;
  uint n, chunk, f, dv;
  uint q_off, q_st0, q_st1, q_st2, q_st3;
  uint v_off, v_st0, v_st1, v_st2, v_st3;
  uint w_off, decay_off, p_off, o_off;
  float eps;
} p;

void main() {
  GRID_LOOP(x, p.count) {
    uint jt = x % p.tiles_j, r = x / p.tiles_j;
    uint rt = r % p.tiles_r, bh = r / p.tiles_r;
    uint b = bh / p.heads, h = bh % p.heads;
    uint r0 = rt * 4u, c = r0 / p.chunk, t0 = c * p.chunk, j0 = jt * 4u;
    uvec4 jj = min(uvec4(j0, j0 + 1u, j0 + 2u, j0 + 3u), uvec4(p.dv - 1u));
    vec4 n0 = vec4(0.0), n1 = vec4(0.0), n2 = vec4(0.0), n3 = vec4(0.0);
    vec4 den = vec4(0.0); // rows r0..r0+3
#if HAS_P
    uvec4 rr = min(uvec4(r0, r0 + 1u, r0 + 2u, r0 + 3u), uvec4(p.n - 1u));
    uvec4 qb = p.q_off + b * p.q_st0 + h * p.q_st1 + rr * p.q_st2;
    uint nchunks = (p.n + p.chunk - 1u) / p.chunk;
    uint pb = p.p_off + (bh * nchunks + c) * p.f * (p.dv + 1u);
    for (uint i = 0; i < p.f; i++) {
      uint pi = pb + i * (p.dv + 1u), qi = i * p.q_st3;
      vec4 pt = vec4(pstate[pi + jj.x], pstate[pi + jj.y], pstate[pi + jj.z], pstate[pi + jj.w]);
      vec4 qt = vec4(phq[qb.x + qi], phq[qb.y + qi], phq[qb.z + qi], phq[qb.w + qi]);
      n0 += qt.x * pt;
      n1 += qt.y * pt;
      n2 += qt.z * pt;
      n3 += qt.w * pt;
      den += qt * pstate[pi + p.dv];
    }
#if GATED
    vec4 dec = vec4(decay[p.decay_off + bh * p.n + rr.x], decay[p.decay_off + bh * p.n + rr.y],
                    decay[p.decay_off + bh * p.n + rr.z], decay[p.decay_off + bh * p.n + rr.w]);
    n0 *= dec.x; n1 *= dec.y; n2 *= dec.z; n3 *= dec.w;
    den *= dec;
#endif
#endif
#if CAUSAL
    uint vb = p.v_off + b * p.v_st0 + h * p.v_st1;
    uvec4 vj = vb + jj * p.v_st3;
    uint wb = p.w_off + (bh * p.n + min(r0, p.n - 1u)) * p.chunk;
    uvec4 wr = uvec4(wb) + uvec4(0u, 1u, 2u, 3u) * p.chunk;
    wr = min(wr, uvec4(p.w_off + (bh * p.n + p.n - 1u) * p.chunk)); // rows past N: clamped
    uint m1 = min(r0 + 4u, p.n);
    for (uint m = t0; m < m1; m++) {
      uint mo = m - t0, vo = m * p.v_st2;
      vec4 vt = vec4(v[vj.x + vo], v[vj.y + vo], v[vj.z + vo], v[vj.w + vo]);
      vec4 wt = vec4(w[wr.x + mo], w[wr.y + mo], w[wr.z + mo], w[wr.w + mo]);
      n0 += wt.x * vt;
      n1 += wt.y * vt;
      n2 += wt.z * vt;
      n3 += wt.w * vt;
      den += wt;
    }
#endif
    vec4 inv = 1.0 / (den + p.eps);
    uint ob = p.o_off + (bh * p.n + r0) * p.dv + j0;
    for (uint q = 0u; q < 4u; q++) {
      if (r0 + q >= p.n) break;
      vec4 nq = (q == 0u ? n0 : q == 1u ? n1 : q == 2u ? n2 : n3) * inv[q];
      uint oq = ob + q * p.dv;
      if (j0 < p.dv) o[oq] = nq.x;
      if (j0 + 1u < p.dv) o[oq + 1u] = nq.y;
      if (j0 + 2u < p.dv) o[oq + 2u] = nq.z;
      if (j0 + 3u < p.dv) o[oq + 3u] = nq.w;
    }
  }
}
#endif
