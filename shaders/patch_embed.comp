#version 450
// Patch embedding = convolution with stride == kernel, computed as a tiled GEMM with the im2col
// gather done while loading tiles:
//   out[b, py*GW + px, e] = bias[e] + sum_k A[m, k] * W[e, k],   m = (b, py, px), k = (ch, ky, kx)
//   A[m, k] = image[b, ch, py*P + ky, px*Q + kx],  W[e, k] = weight[e, ch, ky, kx].
// A workgroup owns a BM x BN output tile; K is walked in BK slices staged through shared memory
// (A slice stored k-major so the inner loop reads rows contiguously); each invocation keeps a
// TM x TN register block, rows ty + i*TY and columns tx + j*TX (interleaved: conflict-free shared
// reads, coalesced stores).
// Defines: HAS_BIAS (binding 2 is bias [E]); IMG_F16, W_F16, BIAS_F16, OUT_F16: that tensor is f16
//          (uint16_t bits), otherwise f32. Accumulation is fp32.
// Bindings: 0 image [B, C, H, W] (read), 1 weight [E, C, P, Q] (read), 2 bias (read, HAS_BIAS),
//           then out [B, GH*GW, E] (write): binding 3 with HAS_BIAS, else 2.
// Push constants: m (B*GH*GW), n (E), k (C*P*Q), patches (GH*GW), gw, ph (P), pw (Q), pq (P*Q),
//                 img_off, img_st[4], w_off, w_st[4], bias_off, bias_st, out_off, out_st[3]
//                 (element offsets and strides).
// Specialization constants: 0 BM, 1 BN, 2 BK, 3 TM, 4 TN (BM % TM == 0, BN % TN == 0),
//                           5 workgroup size = (BM/TM) * (BN/TN).
#extension GL_GOOGLE_include_directive : require
#if defined(IMG_F16) || defined(W_F16) || defined(BIAS_F16) || defined(OUT_F16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(constant_id = 0) const uint BM = 64;
layout(constant_id = 1) const uint BN = 64;
layout(constant_id = 2) const uint BK = 16;
layout(constant_id = 3) const uint TM = 4;
layout(constant_id = 4) const uint TN = 4;
layout(local_size_x_id = 5) in;
const uint TX = BN / TN, TY = BM / TM, WG = TX * TY;

#ifdef IMG_F16
layout(std430, binding = 0) readonly buffer Img { uint16_t img[]; };
#define LOAD_IMG(i) vkf_half_to_float(uint(img[i]))
#else
layout(std430, binding = 0) readonly buffer Img { float img[]; };
#define LOAD_IMG(i) img[i]
#endif
#ifdef W_F16
layout(std430, binding = 1) readonly buffer Wt { uint16_t wt[]; };
#define LOAD_W(i) vkf_half_to_float(uint(wt[i]))
#else
layout(std430, binding = 1) readonly buffer Wt { float wt[]; };
#define LOAD_W(i) wt[i]
#endif
#ifdef HAS_BIAS
#ifdef BIAS_F16
layout(std430, binding = 2) readonly buffer Bias { uint16_t bias[]; };
#define LOAD_BIAS(i) vkf_half_to_float(uint(bias[i]))
#else
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
#define LOAD_BIAS(i) bias[i]
#endif
#define OUT_BINDING 3
#else
#define OUT_BINDING 2
#endif
#ifdef OUT_F16
layout(std430, binding = OUT_BINDING) writeonly buffer Out { uint16_t dst[]; };
#define STORE_OUT(i, v) dst[i] = uint16_t(vkf_float_to_half(v))
#else
layout(std430, binding = OUT_BINDING) writeonly buffer Out { float dst[]; };
#define STORE_OUT(i, v) dst[i] = (v)
#endif

layout(push_constant) uniform Params {
  uint m, n, k, patches, gw, ph, pw, pq;
  uint img_off, img_st0, img_st1, img_st2, img_st3;
  uint w_off, w_st0, w_st1, w_st2, w_st3;
  uint bias_off, bias_st, out_off, out_st0, out_st1, out_st2;
} p;

shared float As[BK * BM]; // [BK][BM]
shared float Bs[BK * BN]; // [BK][BN]

void main() {
  uint lid = gl_LocalInvocationID.x;
  uint tx = lid % TX, ty = lid / TX;
  uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  float acc[TM][TN];
  for (uint i = 0; i < TM; i++)
    for (uint j = 0; j < TN; j++) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.k; k0 += BK) {
    // Stage A[m0.., k0..] (im2col on the fly); k fastest so neighbours read neighbouring pixels.
    for (uint e = lid; e < BM * BK; e += WG) {
      uint kk = e % BK, mm = e / BK;
      uint gm = m0 + mm, gk = k0 + kk;
      float v = 0.0;
      if (gm < p.m && gk < p.k) {
        uint b = gm / p.patches, pr = gm - b * p.patches;
        uint py = pr / p.gw, px = pr - py * p.gw;
        uint ch = gk / p.pq, kr = gk - ch * p.pq;
        uint ky = kr / p.pw, kx = kr - ky * p.pw;
        v = LOAD_IMG(p.img_off + b * p.img_st0 + ch * p.img_st1 + (py * p.ph + ky) * p.img_st2 +
                     (px * p.pw + kx) * p.img_st3);
      }
      As[kk * BM + mm] = v;
    }
    // Stage W[n0.., k0..] transposed to [BK][BN]; k fastest along the weight's rows.
    for (uint e = lid; e < BN * BK; e += WG) {
      uint kk = e % BK, nn = e / BK;
      uint gn = n0 + nn, gk = k0 + kk;
      float v = 0.0;
      if (gn < p.n && gk < p.k) {
        uint ch = gk / p.pq, kr = gk - ch * p.pq;
        uint ky = kr / p.pw, kx = kr - ky * p.pw;
        v = LOAD_W(p.w_off + gn * p.w_st0 + ch * p.w_st1 + ky * p.w_st2 + kx * p.w_st3);
      }
      Bs[kk * BN + nn] = v;
    }
    barrier();
    for (uint kk = 0; kk < BK; kk++) {
      float a[TM], bv[TN];
      for (uint i = 0; i < TM; i++) a[i] = As[kk * BM + ty + i * TY];
      for (uint j = 0; j < TN; j++) bv[j] = Bs[kk * BN + tx + j * TX];
      for (uint i = 0; i < TM; i++)
        for (uint j = 0; j < TN; j++) acc[i][j] = fma(a[i], bv[j], acc[i][j]);
    }
    barrier();
  }

  for (uint i = 0; i < TM; i++) {
    uint gm = m0 + ty + i * TY;
    if (gm >= p.m) continue;
    uint b = gm / p.patches, pr = gm - b * p.patches;
    for (uint j = 0; j < TN; j++) {
      uint gn = n0 + tx + j * TX;
      if (gn >= p.n) continue;
      float v = acc[i][j];
#ifdef HAS_BIAS
      v += LOAD_BIAS(p.bias_off + gn * p.bias_st);
#endif
      STORE_OUT(p.out_off + b * p.out_st0 + pr * p.out_st1 + gn * p.out_st2, v);
    }
  }
}
