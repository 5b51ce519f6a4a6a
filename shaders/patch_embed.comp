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
//          IM2COL: instead of the product, write the patch matrix A [M, K] (binding 1, dense,
//          from out_off) for the GEMM lowering to multiply; its own Params block (see below),
//          workgroup size in specialization constant 5, the other constants unused. fp32, or
//          with COLS_F16 f16 (for the cooperative-matrix GEMM; an f16 image's bits copied as they
//          are, so the patch matrix is exact).
// Bindings: 0 image [B, C, H, W] (read), 1 weight [E, C, P, Q] (read), 2 bias (read, HAS_BIAS),
//           then out [B, GH*GW, E] (write): binding 3 with HAS_BIAS, else 2.
// Push constants: m (B*GH*GW), n (E), k (C*P*Q), patches (GH*GW), gw, ph (P), pw (Q), pq (P*Q),
//                 vkf_fastdiv magic and shift of pq and pw, img_off, img_st[4], w_off, w_st[4], bias_off, bias_st, out_off, out_st[3]
//                 (element offsets and strides).
// Specialization constants: 0 BM, 1 BN, 2 BK, 3 TM, 4 TN (BM % TM == 0, BN % TN == 0),
//                           5 workgroup size WG = (BM/TM) * (BN/TN); WG % BK == 0 and
//                           BM*BK, BN*BK multiples of WG.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if defined(IMG_F16) || defined(W_F16) || defined(BIAS_F16) || defined(OUT_F16) || defined(COLS_F16)
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
#ifdef IM2COL
// The patch matrix alone, for a GEMM lowering to multiply (CPU devices: fp32 for their register-
// blocked kernel; cooperative matrices: f16, COLS_F16): cols[m * k + kk] = A[m, kk], one
// invocation per element (grid-stride).
#ifdef COLS_F16
layout(std430, binding = 1) writeonly buffer Cols { uint16_t cols[]; };
#ifdef IMG_F16
#define STORE_COL(i, src) cols[i] = img[src] // the f16 bits as they are
#else
#define STORE_COL(i, src) cols[i] = uint16_t(vkf_float_to_half(img[src]))
#endif
#else
layout(std430, binding = 1) writeonly buffer Cols { float cols[]; };
#define STORE_COL(i, src) cols[i] = LOAD_IMG(src)
#endif
layout(push_constant) uniform Params {
  uint total; // m * k
  uint k, k_magic, k_shift, patches, patches_magic, patches_shift, gw, gw_magic, gw_shift;
  uint pq, pq_magic, pq_shift, pw, pw_magic, pw_shift, ph;
  uint img_off, img_st0, img_st1, img_st2, img_st3, out_off;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.total; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint gm = vkf_fastdiv(i, p.k_magic, p.k_shift), gk = i - gm * p.k;
    uint b = vkf_fastdiv(gm, p.patches_magic, p.patches_shift), pr = gm - b * p.patches;
    uint py = vkf_fastdiv(pr, p.gw_magic, p.gw_shift), px = pr - py * p.gw;
    uint ch = vkf_fastdiv(gk, p.pq_magic, p.pq_shift), kr = gk - ch * p.pq;
    uint ky = vkf_fastdiv(kr, p.pw_magic, p.pw_shift), kx = kr - ky * p.pw;
    STORE_COL(p.out_off + i, p.img_off + b * p.img_st0 + ch * p.img_st1 +
                                 (py * p.ph + ky) * p.img_st2 + (px * p.pw + kx) * p.img_st3);
  }
}
#else
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
  uint pq_magic, pq_shift, pw_magic, pw_shift;
  uint img_off, img_st0, img_st1, img_st2, img_st3;
  uint w_off, w_st0, w_st1, w_st2, w_st3;
  uint bias_off, bias_st, out_off, out_st0, out_st1, out_st2;
} p;

// Staging: invocation lid always loads k column kk = lid % BK of its tile rows r0 + r * RSTEP
// (the host keeps WG a multiple of BK and BM*BK, BN*BK multiples of WG), so the row part of each
// address is computed once, and the k part once per slice for A and W together.
const uint LA = (BM * BK) / WG, LB = (BN * BK) / WG, RSTEP = WG / BK;
const uint NO_ROW = 0xffffffffu;

shared float As[BK * BM]; // [BK][BM]
shared float Bs[BK * BN]; // [BK][BN]

void main() {
  uint lid = gl_LocalInvocationID.x;
  uint tx = lid % TX, ty = lid / TX;
  uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  uint kk = lid % BK, r0 = lid / BK;
  uint a_base[LA], b_base[LB];
  [[unroll]] for (uint r = 0; r < LA; r++) {
    uint gm = m0 + r0 + r * RSTEP;
    a_base[r] = NO_ROW;
    if (gm < p.m) {
      uint b = gm / p.patches, pr = gm - b * p.patches;
      uint py = pr / p.gw, px = pr - py * p.gw;
      a_base[r] = p.img_off + b * p.img_st0 + py * p.ph * p.img_st2 + px * p.pw * p.img_st3;
    }
  }
  [[unroll]] for (uint r = 0; r < LB; r++) {
    uint gn = n0 + r0 + r * RSTEP;
    b_base[r] = gn < p.n ? p.w_off + gn * p.w_st0 : NO_ROW;
  }
  float acc[TM][TN];
  [[unroll]] for (uint i = 0; i < TM; i++)
    [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.k; k0 += BK) {
    // im2col on the fly: k = (ch, ky, kx) -> its offset in the image and in the weight.
    uint gk = k0 + kk;
    bool k_in = gk < p.k;
    uint ch = vkf_fastdiv(gk, p.pq_magic, p.pq_shift), kr = gk - ch * p.pq;
    uint ky = vkf_fastdiv(kr, p.pw_magic, p.pw_shift), kx = kr - ky * p.pw;
    uint a_k = ch * p.img_st1 + ky * p.img_st2 + kx * p.img_st3;
    uint w_k = ch * p.w_st1 + ky * p.w_st2 + kx * p.w_st3;
    [[unroll]] for (uint r = 0; r < LA; r++)
      As[kk * BM + r0 + r * RSTEP] = k_in && a_base[r] != NO_ROW ? LOAD_IMG(a_base[r] + a_k) : 0.0;
    [[unroll]] for (uint r = 0; r < LB; r++)
      Bs[kk * BN + r0 + r * RSTEP] = k_in && b_base[r] != NO_ROW ? LOAD_W(b_base[r] + w_k) : 0.0;
    barrier();
    for (uint q = 0; q < BK; q++) {
      float a[TM], bv[TN];
      [[unroll]] for (uint i = 0; i < TM; i++) a[i] = As[q * BM + ty + i * TY];
      [[unroll]] for (uint j = 0; j < TN; j++) bv[j] = Bs[q * BN + tx + j * TX];
      [[unroll]] for (uint i = 0; i < TM; i++)
        [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = fma(a[i], bv[j], acc[i][j]);
    }
    barrier();
  }

  [[unroll]] for (uint i = 0; i < TM; i++) {
    uint gm = m0 + ty + i * TY;
    if (gm >= p.m) continue;
    uint b = gm / p.patches, pr = gm - b * p.patches;
    [[unroll]] for (uint j = 0; j < TN; j++) {
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
#endif // IM2COL
