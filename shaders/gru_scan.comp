#version 450
// One GRU layer's recurrence (torch.nn.GRU, gate order r, z, n) over T steps, from the input
// gates gi = x W_ih^T + b_ih (one GEMM before this kernel):
//   gh = W_hh h + b_hh, r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z),
//   n = tanh(gi_n + r * gh_n), h' = (1 - z) * n + z * h.
// One workgroup per batch row walks steps t0 .. t0 + steps - 1; invocation lid owns hidden units
// k = lid + m*WG (its three W_hh rows' dot products with h, then h'_k); h lives in shared memory,
// double buffered (one barrier per step). Every step's h is written out [B, T, H]. fp32.
// A recurrence may take several dispatches (the lowering bounds the loop iterations one
// invocation runs: lavapipe ends every loop of an invocation once 65535 iterations of all its
// loops have run): a dispatch from t0 > 0 starts from the state the previous one wrote, out[t0-1].
// Defines: HAS_H0 (binding 3 is h0 [B, H]; else zeros).
// Bindings: 0 gates [B, T, 3H], 1 w_hh [3H, H], 2 b_hh [3H], 3 h0 (bound to gates when absent),
//   4 out [B, T, H] (read at step t0 - 1 when t0 > 0).
// Push constants (uint): steps, h, g_off, g_s0, g_s1, g_s2, w_off, w_s0, w_s1, b_off, b_s0,
//   h0_off, h0_s0, h0_s1, o_off, o_s0, o_s1, o_s2, t0.
// Specialization constants: 0 WG. h <= HMAX (shared h: 2 * HMAX floats, 8 KiB; a fixed size, as
// lavapipe sizes shared arrays from a specialization constant's default).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
const uint HMAX = 1024; // the lowering's GRU_MAX_HIDDEN

layout(std430, binding = 0) readonly buffer G { float gates[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) readonly buffer H0 { float h0[]; };
layout(std430, binding = 4) buffer O { float o[]; };
layout(push_constant) uniform Params {
  uint steps, h;
  uint g_off, g_s0, g_s1, g_s2;
  uint w_off, w_s0, w_s1;
  uint b_off, b_s0;
  uint h0_off, h0_s0, h0_s1;
  uint o_off, o_s0, o_s1, o_s2;
  uint t0;
} p;

shared float hs[2 * HMAX];

float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

// Four columns per iteration, then the rest (the lowering's loop count assumes this shape).
float dot_row(uint row, uint cur) {
  float acc = bias[p.b_off + row * p.b_s0];
  uint wi = p.w_off + row * p.w_s0, c = 0, s1 = p.w_s1;
  for (; c + 4u <= p.h; c += 4u, wi += 4u * s1)
    acc += w[wi] * hs[cur + c] + w[wi + s1] * hs[cur + c + 1u] + w[wi + 2u * s1] * hs[cur + c + 2u] +
           w[wi + 3u * s1] * hs[cur + c + 3u];
  for (; c < p.h; c++, wi += s1) acc += w[wi] * hs[cur + c];
  return acc;
}

void main() {
  uint b = gl_WorkGroupID.x, lid = gl_LocalInvocationID.x;
  for (uint k = lid; k < p.h; k += WG) {
    if (p.t0 > 0u) {
      hs[k] = o[p.o_off + b * p.o_s0 + (p.t0 - 1u) * p.o_s1 + k * p.o_s2];
    } else {
#ifdef HAS_H0
      hs[k] = h0[p.h0_off + b * p.h0_s0 + k * p.h0_s1];
#else
      hs[k] = 0.0;
#endif
    }
  }
  barrier();
  uint cur = 0, nxt = HMAX;
  for (uint t = p.t0; t < p.t0 + p.steps; t++) {
    uint gb = p.g_off + b * p.g_s0 + t * p.g_s1;
    for (uint k = lid; k < p.h; k += WG) {
      float r = sigmoid(gates[gb + k * p.g_s2] + dot_row(k, cur));
      float z = sigmoid(gates[gb + (p.h + k) * p.g_s2] + dot_row(p.h + k, cur));
      float n = vkf_tanh(gates[gb + (2u * p.h + k) * p.g_s2] + r * dot_row(2u * p.h + k, cur));
      float hn = (1.0 - z) * n + z * hs[cur + k];
      hs[nxt + k] = hn;
      o[p.o_off + b * p.o_s0 + t * p.o_s1 + k * p.o_s2] = hn;
    }
    barrier();
    uint swap = cur;
    cur = nxt;
    nxt = swap;
  }
}
