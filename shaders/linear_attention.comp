#version 450
// Linear attention (LINEAR_ATTENTION, LINEAR_STATE_WRITE; graph/lower/lower_linear.c). The state
// of one (b, h) after a token is S [F, Dv + 1]: columns 0..Dv-1 sum phi(k) v^T, column Dv z = sum
// phi(k); ungated S_t = S_{t-1} + phi(k_t) [v_t, 1]^T, gated (RFA) S_t = g_t S_{t-1} +
// (1 - g_t) phi(k_t) [v_t, 1]^T with g_t = sigmoid(gate_t). Three modes:
// MODE 0 (reduce): one invocation per (bh, chunk c, i < F, j <= Dv): the state element (i, j)
//   that the tokens [c*C, min((c+1)*C, N)) add, starting from 0, or, with INIT, from dst's own
//   value (the in-place state write: one chunk holding every token). With GATED the invocation
//   (i, j) = (0, 0) also writes the chunk's decay, the product of its gates. dst [BH, Nc, F, Dv+1].
// MODE 1 (scan): one invocation per (bh, e < F*(Dv+1)): turns the chunk sums into the state at
//   each chunk's start, in place (exclusive prefix scan, chunk by chunk; P = decay_c P + A_c),
//   from the initial state (INIT: binding 3, [BH, F*(Dv+1)]) or zeros.
// MODE 2 (output): one invocation per query row (bh, t): out_t = num / (den + eps) with
//   [num, den] = decay(c..t) phi(q_t)^T P_c + sum over tokens m of t's chunk up to t (CAUSAL) of
//   (phi(q_t) . phi(k_m)) (gated: (1 - g_m) prod_{m<s<=t} g_s) [v_m, 1]; P_c the state at the
//   chunk's start (HAS_P; else zeros). Non-causal passes chunk = N and P = the totals. The row is
//   accumulated in the output itself (no register arrays: lavapipe keeps those in memory anyway).
// Defines: MODE, GATED, INIT, CAUSAL, HAS_P (0/1).
// Bindings: mode 0: 0 phi_k, 1 v, 2 gate, 3 dst (rw), 4 decay (write);
//           mode 1: 0 sums (rw), 1 decay (read), 2 init (read);
//           mode 2: 0 phi_q, 1 phi_k, 2 v, 3 gate, 4 P (read), 5 out (rw).
// Push constants: see the Params blocks (element offsets and strides; fastdiv triples).
// Specialization constants: 0 workgroup size.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;

float gate_of(float logit) { return 1.0 / (1.0 + exp(-logit)); }

#if MODE == 0
layout(std430, binding = 0) readonly buffer K { float k[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
#if GATED
layout(std430, binding = 2) readonly buffer G { float gate[]; };
layout(std430, binding = 4) writeonly buffer Decay { float decay[]; };
#endif
layout(std430, binding = 3) buffer Dst { float dst[]; };
layout(push_constant) uniform Params {
  uint count;
  uint size_j, magic_j, shift_j, size_i, magic_i, shift_i, size_c, magic_c, shift_c;
  uint size_h, magic_h, shift_h;
  uint n, chunk;
  uint k_off, k_st0, k_st1, k_st2, k_st3;
  uint v_off, v_st0, v_st1, v_st2, v_st3;
  uint g_off, g_st0, g_st1, g_st2;
  uint dst_off, decay_off;
} p;

void main() {
  for (uint x = gl_GlobalInvocationID.x; x < p.count; x += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint r = vkf_fastdiv(x, p.magic_j, p.shift_j);
    uint j = x - r * p.size_j;
    uint q = vkf_fastdiv(r, p.magic_i, p.shift_i);
    uint i = r - q * p.size_i;
    uint bh = vkf_fastdiv(q, p.magic_c, p.shift_c);
    uint c = q - bh * p.size_c;
    uint b = vkf_fastdiv(bh, p.magic_h, p.shift_h);
    uint h = bh - b * p.size_h;
    uint t0 = c * p.chunk, t1 = min(t0 + p.chunk, p.n);
    uint kb = p.k_off + b * p.k_st0 + h * p.k_st1 + i * p.k_st3;
    uint vb = p.v_off + b * p.v_st0 + h * p.v_st1 + j * p.v_st3;
    int is_z = j + 1u == p.size_j ? 1 : 0;
    float acc = 0.0;
#if GATED
    // Tokens in order: acc = g acc + (1 - g) x, so acc starts from the initial value.
    uint gb = p.g_off + b * p.g_st0 + h * p.g_st1;
    float prod = 1.0;
#if INIT
    acc = dst[p.dst_off + x];
#endif
    for (uint t = t0; t < t1; t++) {
      float g = gate_of(gate[gb + t * p.g_st2]);
      float val = is_z != 0 ? 1.0 : v[vb + t * p.v_st2];
      acc = g * acc + (1.0 - g) * k[kb + t * p.k_st2] * val;
      prod *= g;
    }
    if (i == 0u && j == 0u) decay[p.decay_off + bh * p.size_c + c] = prod;
#else
    for (uint t = t0; t < t1; t++) {
      float val = is_z != 0 ? 1.0 : v[vb + t * p.v_st2];
      acc = fma(k[kb + t * p.k_st2], val, acc);
    }
#if INIT
    acc += dst[p.dst_off + x];
#endif
#endif
    dst[p.dst_off + x] = acc;
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
  uint count;
  uint size_e, magic_e, shift_e;
  uint chunks;
  uint sums_off, decay_off, init_off;
} p;

void main() {
  for (uint x = gl_GlobalInvocationID.x; x < p.count; x += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint bh = vkf_fastdiv(x, p.magic_e, p.shift_e);
    uint e = x - bh * p.size_e;
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

#else
layout(std430, binding = 0) readonly buffer Q { float phq[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
#if GATED
layout(std430, binding = 3) readonly buffer G { float gate[]; };
#endif
#if HAS_P
layout(std430, binding = 4) readonly buffer P { float pstate[]; };
#endif
layout(std430, binding = 5) buffer Out { float o[]; };
layout(push_constant) uniform Params {
  uint count;
  uint size_n, magic_n, shift_n, size_h, magic_h, shift_h;
  uint q_off, q_st0, q_st1, q_st2, q_st3;
  uint k_off, k_st0, k_st1, k_st2, k_st3;
  uint v_off, v_st0, v_st1, v_st2, v_st3;
  uint g_off, g_st0, g_st1, g_st2;
  uint p_off, o_off;
  uint f, dv, chunk;
  float eps;
} p;

void main() {
  for (uint x = gl_GlobalInvocationID.x; x < p.count; x += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint bh = vkf_fastdiv(x, p.magic_n, p.shift_n);
    uint t = x - bh * p.size_n;
    uint b = vkf_fastdiv(bh, p.magic_h, p.shift_h);
    uint h = bh - b * p.size_h;
    uint c = t / p.chunk, t0 = c * p.chunk;
    uint qb = p.q_off + b * p.q_st0 + h * p.q_st1 + t * p.q_st2;
    uint kb = p.k_off + b * p.k_st0 + h * p.k_st1;
    uint vb = p.v_off + b * p.v_st0 + h * p.v_st1;
    uint ob = p.o_off + x * p.dv;
    float den = 0.0;
    float decay = 1.0;
#if GATED
    uint gb = p.g_off + b * p.g_st0 + h * p.g_st1;
    for (uint s = t0; s <= t; s++) decay *= gate_of(gate[gb + s * p.g_st2]);
#endif
#if HAS_P
    uint nchunks = (p.size_n + p.chunk - 1u) / p.chunk;
    uint pb = p.p_off + (bh * nchunks + c) * p.f * (p.dv + 1u);
    for (uint j = 0; j <= p.dv; j++) {
      float acc = 0.0;
      for (uint i = 0; i < p.f; i++)
        acc = fma(phq[qb + i * p.q_st3], pstate[pb + i * (p.dv + 1u) + j], acc);
      if (j < p.dv) o[ob + j] = decay * acc;
      else den = decay * acc;
    }
#else
    for (uint j = 0; j < p.dv; j++) o[ob + j] = 0.0;
#endif
#if CAUSAL
    float carry = 1.0;
    for (uint back = 0u; back <= t - t0; back++) { // tokens t, t-1, ..., t0
      uint m = t - back;
      float w = 0.0;
      for (uint i = 0; i < p.f; i++)
        w = fma(phq[qb + i * p.q_st3], k[kb + m * p.k_st2 + i * p.k_st3], w);
#if GATED
      float g = gate_of(gate[gb + m * p.g_st2]);
      w *= carry * (1.0 - g);
      carry *= g;
#endif
      den += w;
      for (uint j = 0; j < p.dv; j++) o[ob + j] = fma(w, v[vb + m * p.v_st2 + j * p.v_st3], o[ob + j]);
    }
#endif
    float inv = 1.0 / (den + p.eps);
    for (uint j = 0; j < p.dv; j++) o[ob + j] *= inv;
  }
}
#endif
