#version 450
// GEMM with fused epilogue: C[z, m, n] = act(sum_k A[z, m, k] * B[z, k, n] + bias[n]) + R[z, m, n].
// One template, four kernel shapes chosen by define (graph/lower/lower_matmul.c picks one per device):
//   (default)  GPU-shaped: BMxBK / BKxBN tiles through shared memory, each invocation a TMxTN
//              register block.
//   GEMM_CPU   CPU-class devices (lavapipe): no shared memory and no barriers. A subgroup of 8 owns
//              8*CPU_RA rows x 8*4*CPU_TN4 columns; each lane loads CPU_RA rows of A and its own
//              columns of B once, and A values reach every lane through subgroupShuffle with a
//              constant lane (one vpermd on CPU devices, where every buffer load is a per-lane
//              scalar loop).
//   GEMM_GEMV  GPU-class devices with at most 8 rows of A (decode steps): the weight read once,
//              coalesced, every row of A in registers, one reduction per workgroup
//              (gemm_gemv.glsl lists its defines: GEMV_ROWS, GEMV_COLS, GEMV_KN, GEMV_SUBGROUP).
//   GEMM_QCPU  CPU-class devices with quantised B: lanes own columns, A shared by shuffles, each
//              group of 16 or 32 products scaled once (gemm_qcpu.glsl: QCPU_ROWS, QCPU_COLS).
//   GEMM_NAIVE one output per invocation, straight from memory (the bench's reference).
//   GEMM_SPLITK_REDUCE the second pass of a split-K cooperative-matrix GEMM: adds the f32
//              partial sums (bound as A) and applies the epilogue (gemm_splitk.glsl).
//   GEMM_COOPMAT f16 A and B on cooperative matrices (tensor cores), f32 accumulators
//              (gemm_coopmat.glsl: CM, CM_SGM, CM_TM, CM_TN, CM_KS, CM_SPLITK; built by a
//              glslang that knows GL_KHR_cooperative_matrix, see shaders/CMakeLists.txt).
// Any operand layout is strides in push constants (transposed B is swapped strides); the *_VEC4
// defines add vec4 loads along the contiguous axis when the chooser proved them aligned.
// Accumulation is fp32 always; fp16 storage is converted on load/store (no fp16 arithmetic).
//
// Defines:
//   GEMM_CPU | GEMM_GEMV | GEMM_NAIVE  kernel shape (none: the shared-memory tiled kernel)
//   CPU_RA=<n>, CPU_TN4=<n>      GEMM_CPU register block: 8*CPU_RA rows (CPU_RA 1..8),
//                                4*CPU_TN4 columns per lane (CPU_TN4 1, 2 or 4)
//   A_F16, B_F16, C_F16          operand / output storage is float16 (GL_EXT_shader_16bit_storage)
//   B_QUANT=<f>                  B is ggml blocks of vkf_quant_format f, [N, K] with whole blocks
//                                per row (needs B_VEC4_K), decoded on load (quant_decode.glsl)
//   B_BF16                       B is bfloat16, read as 32-bit words (two values each; a vec4 is
//                                one 8-byte uvec2) and widened exactly: no 16-bit storage needed.
//                                With B_TEXEL: an RGBA16UI view (usamplerBuffer)
//   BIAS, BIAS_F16               bias [N] is bound (binding 3), and is float16
//   RESIDUAL, RES_F16            residual (output-shaped) is bound (binding 3, or 4 with BIAS)
//   A_VEC4                       A is contiguous along k, K % 4 == 0, row starts 4-aligned
//   B_VEC4_N                     B is contiguous along n, N % 4 == 0, row starts 4-aligned
//   B_VEC4_K                     B is contiguous along k (transposed), K % 4 == 0, 4-aligned
//   GEMV_K8                      (GEMM_GEMV, [N, K], B f16 or bf16, A_VEC4) B is contiguous along k,
//                                K % 8 == 0, 8-aligned: 8 weights per 16-byte load (load_b_k8)
//   C_VEC4                       (GEMM_CPU, GEMM_SPLITK_REDUCE) C, the residual and the bias
//                                are contiguous along n, N % 4 == 0, 4-aligned: the epilogue
//                                reads and writes vec4s
//   ACT=<n>                      activation id (vkf_activation: 1 gelu_erf, 2 gelu_tanh, 3 relu,
//                                4 silu; absent: none). A define, not a specialization
//                                constant: with a constant the SPIR-V carries every activation
//                                at every inlined store (160 in a CPU_RA=5 kernel), and lavapipe
//                                spends ~4/5 of its pipeline creation on that dead code
//   A_TEXEL, B_TEXEL             A (needs A_VEC4) / B (needs B_VEC4_N or B_VEC4_K; B_QUANT: an
//                                R32UI view of the blocks' words, RG32UI under QCPU_W2) is bound as a
//                                uniform texel buffer of vec4s (RGBA32F, or RGBA16F with *_F16):
//                                on CPU devices a texelFetch is one vector gather where a
//                                storage-buffer load is a scalar loop over the lanes
//   A_RMSNORM                    (M <= 8, fp32 A, not GEMM_COOPMAT; any M in GEMM_QCPU) A is
//                                RMSNorm's input: the bodies read rmsnorm(A) * gamma (load_a /
//                                load_a4; GEMM_QCPU scales its sums, gemm_qcpu.glsl)
//   A_RMSNORM_SUBGROUP           (with A_RMSNORM) a subgroup shares each row's sum of squares
//                                (subgroup arithmetic) instead of each invocation summing it all
//   A_GLU=<n>                    (M <= 8, fp32 A, not GEMM_COOPMAT) A is [M, 2K], gate then up:
//                                the bodies read act_n(gate) * up (load_a / load_a4)
//   C_GLU=<n>                    (GEMM_QCPU, QCPU_COLS=2; no bias, residual or activation) B
//                                holds 2N rows, gate then up, and C is act_n(gate) * up: a lane's
//                                two columns are gate column j and up column j (gemm_qcpu.glsl)
// Bindings (set 0): 0 A (read), 1 B (read), 2 C (write), 3 bias (read, BIAS), 3|4 residual (read),
//   then gamma (read, A_RMSNORM); all storage buffers except A and B under A_TEXEL / B_TEXEL
//   (samplerBuffer).
// Push constants (uint32 each, elements not bytes; offsets are from the bound range start):
//   m, n, k, batch1 (size of the inner batch dim: z = b0 * batch1 + b1),
//   a_off, a_rs, a_ks, a_bs0, a_bs1      A[m, k] = a[a_off + m*a_rs + k*a_ks + b0*a_bs0 + b1*a_bs1]
//   b_off, b_ks, b_ns, b_bs0, b_bs1      B[k, n] likewise (transpose_b: b_ks = 1, b_ns = K)
//   c_off, c_rs, c_cs, c_bs0, c_bs1      output
//   bias_off, bias_s                     bias[n] = bias[bias_off + n*bias_s]
//   r_off, r_rs, r_cs, r_bs0, r_bs1      residual
//   (A_RMSNORM) g_off, eps               gamma[k] = g[g_off + k]; RMSNorm's eps (float bits)
//   (A_GLU) a_glu_off                    up[row, k] = A[row, k] + a_glu_off elements
// Specialization constants:
//   0 WG   invocations per workgroup (local_size_x)
//   1 BM, 2 BN, 3 BK, 4 TM, 5 TN   tiled kernel tile sizes (WG == (BM/TM)*(BN/TN)); unused otherwise
// Workgroups: tiled (ceil(N/BN), ceil(M/BM), batches); GEMM_CPU (ceil(M/(8*CPU_RA)),
//   ceil(N/(WG*4*CPU_TN4)), batches); GEMM_GEMV (see gemm_gemv.glsl); GEMM_NAIVE (ceil(N/WG), M,
//   batches).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if defined(A_F16) || defined(B_F16) || defined(C_F16) || defined(BIAS_F16) || defined(RES_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#if defined(GEMM_CPU) || defined(GEMM_QCPU)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#if defined(GEMV_SUBGROUP) || defined(A_RMSNORM_SUBGROUP)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#ifdef GEMM_COOPMAT
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint BM = 32;
layout(constant_id = 2) const uint BN = 32;
layout(constant_id = 3) const uint BK = 16;
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;
#ifdef GEMM_COOPMAT
// The cooperative-matrix kernels exist for GPUs only, whose compilers drop the other activations'
// dead code, so the activation is a constant there: fewer build-time variants (gemm_coopmat.glsl).
layout(constant_id = 6) const uint CM_ACT = 0;
layout(constant_id = 7) const bool CM_A_VEC8 = false;
layout(constant_id = 8) const bool CM_B_ROWS = false;
layout(constant_id = 9) const bool CM_B_VEC8 = false;
layout(constant_id = 10) const bool CM_C_VEC4 = false;
#define ACT CM_ACT
#endif
#ifndef ACT
#define ACT 0
#endif

#ifdef A_F16
#define A_T float16_t
#define A_T4 f16vec4
#else
#define A_T float
#define A_T4 vec4
#endif
#ifdef B_F16
#define B_T float16_t
#define B_T4 f16vec4
#else
#define B_T float
#define B_T4 vec4
#endif
#ifdef C_F16
#define C_T float16_t
#define C_T4 f16vec4
#else
#define C_T float
#define C_T4 vec4
#endif

// Scalar and vec4 views of the same binding: the vec4 view is only read when a *_VEC4 define says
// the chooser checked alignment.
// Under *_TEXEL the same names read a texel view (element i is component i % 4 of texel i / 4),
// so every loader below works unchanged.
#if defined(A_TEXEL) && !defined(A_VEC4)
#error "A_TEXEL needs A_VEC4"
#endif
#if defined(B_TEXEL) && !defined(B_VEC4_N) && !defined(B_VEC4_K) && !defined(B_QUANT)
#error "B_TEXEL needs B_VEC4_N or B_VEC4_K"
#endif
#ifdef A_TEXEL
layout(set = 0, binding = 0) uniform samplerBuffer a_tex;
#define a_data4(i) texelFetch(a_tex, int(i))
#define a_data(i) texelFetch(a_tex, int((i) >> 2))[(i) & 3u]
#else
layout(std430, set = 0, binding = 0) readonly buffer BufA { A_T a_data_[]; };
layout(std430, set = 0, binding = 0) readonly buffer BufA4 { A_T4 a_data4_[]; };
#define a_data4(i) a_data4_[i]
#define a_data(i) a_data_[i]
#endif
#if defined(B_BF16) && defined(B_F16)
#error "B_BF16 excludes B_F16"
#endif
#if defined(B_QUANT) && (defined(B_F16) || defined(B_BF16) || !defined(B_VEC4_K))
#error "B_QUANT is [N, K] blocks (B_VEC4_K)"
#endif
#if defined(GEMM_QCPU) && !defined(B_QUANT)
#error "GEMM_QCPU reads quantised B"
#endif
#if defined(B_QUANT)
// ggml blocks as the file holds them (quant_decode.glsl): element i of B is element i % QK of
// block i / QK (the lowering binds B from its start, each row of K whole blocks). Under B_TEXEL
// the words come through an R32UI texel view.
#if defined(B_TEXEL) && defined(QCPU_W2)
// gemm_qcpu.glsl's word pairs: an RG32UI view
layout(set = 0, binding = 1) uniform usamplerBuffer b_qtex;
#define QWORD2(i) texelFetch(b_qtex, int(i)).xy
#define QWORD(i) QWORD2((i) >> 1u)[(i) & 1u]
#elif defined(B_TEXEL)
layout(set = 0, binding = 1) uniform usamplerBuffer b_qtex;
#define QWORD(i) texelFetch(b_qtex, int(i)).x
#else
layout(std430, set = 0, binding = 1) readonly buffer BufBQ { uint b_qwords_[]; };
#define QWORD(i) b_qwords_[i]
#endif
#define QUANT_FMT B_QUANT
#include "quant_decode.glsl"
#ifdef GEMM_GEMV
#include "quant_piece.glsl"
#endif
#define b_data4(i) q_dequant4(((i) * 4u / QK) * QB, ((i) * 4u) % QK)
#define b_data(i) q_dequant1(((i) / QK) * QB, (i) % QK)
#elif defined(B_BF16) && defined(B_TEXEL)
// An RGBA16UI texel holds 4 bf16 bit patterns (the CPU kernel's vector gather, as for f32 / f16).
layout(set = 0, binding = 1) uniform usamplerBuffer b_tex;
#define b_data4(i) uintBitsToFloat(texelFetch(b_tex, int(i)) << 16)
#define b_data(i) uintBitsToFloat(texelFetch(b_tex, int((i) >> 2))[(i) & 3u] << 16)
#elif defined(B_BF16)
// Element i is the low (even i) or high (odd i) half of word i / 2; the binding starts 4-aligned.
layout(std430, set = 0, binding = 1) readonly buffer BufB { uint b_words_[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB4 { uvec2 b_words2_[]; };
float bf16_at(uint i) {
  uint w = b_words_[i >> 1];
  return uintBitsToFloat((i & 1u) != 0u ? (w & 0xffff0000u) : (w << 16));
}
vec4 bf16x4(uvec2 w) {
  return uintBitsToFloat(uvec4(w.x << 16, w.x & 0xffff0000u, w.y << 16, w.y & 0xffff0000u));
}
#define b_data4(i) bf16x4(b_words2_[i])
#define b_data(i) bf16_at(i)
#elif defined(B_TEXEL)
layout(set = 0, binding = 1) uniform samplerBuffer b_tex;
#define b_data4(i) texelFetch(b_tex, int(i))
#define b_data(i) texelFetch(b_tex, int((i) >> 2))[(i) & 3u]
#else
layout(std430, set = 0, binding = 1) readonly buffer BufB { B_T b_data_[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufB4 { B_T4 b_data4_[]; };
#define b_data4(i) b_data4_[i]
#define b_data(i) b_data_[i]
#endif
layout(std430, set = 0, binding = 2) writeonly buffer BufC { C_T c_data[]; };
#ifdef C_VEC4
layout(std430, set = 0, binding = 2) writeonly buffer BufC4 { C_T4 c_data4[]; };
#endif
#ifdef BIAS
#ifdef BIAS_F16
#define BIAS_T float16_t
#define BIAS_T4 f16vec4
#else
#define BIAS_T float
#define BIAS_T4 vec4
#endif
layout(std430, set = 0, binding = 3) readonly buffer BufBias { BIAS_T bias_data[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufBias4 { BIAS_T4 bias_data4[]; };
#define RES_BINDING 4
#else
#define RES_BINDING 3
#endif
#ifdef RESIDUAL
#ifdef RES_F16
#define RES_T float16_t
#define RES_T4 f16vec4
#else
#define RES_T float
#define RES_T4 vec4
#endif
layout(std430, set = 0, binding = RES_BINDING) readonly buffer BufRes { RES_T res_data[]; };
layout(std430, set = 0, binding = RES_BINDING) readonly buffer BufRes4 { RES_T4 res_data4[]; };
#define NORM_BINDING (RES_BINDING + 1)
#else
#define NORM_BINDING RES_BINDING
#endif
#ifdef A_RMSNORM
#if defined(A_F16) || defined(GEMM_COOPMAT)
#error "A_RMSNORM normalises an fp32 A through load_a / load_a4"
#endif
// RMSNorm's gamma [K] (f32), the binding after the residual's.
layout(std430, set = 0, binding = NORM_BINDING) readonly buffer BufNormG { float norm_g[]; };
#endif

layout(push_constant) uniform Params {
  uint m, n, k, batch1;
  uint a_off, a_rs, a_ks, a_bs0, a_bs1;
  uint b_off, b_ks, b_ns, b_bs0, b_bs1;
  uint c_off, c_rs, c_cs, c_bs0, c_bs1;
  uint bias_off, bias_s;
  uint r_off, r_rs, r_cs, r_bs0, r_bs1;
#ifdef A_RMSNORM
  uint g_off;       // gamma[k] = norm_g[g_off + k]
  float a_norm_eps; // RMSNorm's eps
#endif
#ifdef A_GLU
  uint a_glu_off; // elements from A[row, k] (gate) to its up value
#endif
} p;

#include "gemm_epilogue.glsl"

// Element offsets of this workgroup's batch in A, B, C and the residual.
uint a_base, b_base, c_base, r_base;

#if defined(A_GLU) && (defined(A_F16) || defined(A_RMSNORM) || defined(GEMM_COOPMAT))
#error "A_GLU reads an fp32 A through load_a / load_a4, without A_RMSNORM"
#endif
// A[row, k]; callers guarantee row < M and k < K. Under A_GLU (graph/passes/fuse_glu.c) A holds
// gate then up and this is act(gate) * up, as the separate activation and product gave it.
float load_a_raw(uint row, uint k) {
  uint i = a_base + row * p.a_rs + k * p.a_ks;
#ifdef A_GLU
  return vkf_activation(A_GLU, float(a_data(i))) * float(a_data(i + p.a_glu_off));
#else
  return float(a_data(i));
#endif
}
float load_b(uint k, uint col) { return float(b_data(b_base + k * p.b_ks + col * p.b_ns)); }

// A[row, k..k+3] as stored, zero past K. The vec4 form needs A_VEC4 (so K % 4 == 0, no tail).
vec4 load_a4_raw(uint row, uint k) {
#if defined(A_VEC4) && defined(A_GLU)
  uint q = (a_base + row * p.a_rs + k) >> 2;
  return vkf_activation4(A_GLU, vec4(a_data4(q))) * vec4(a_data4(q + (p.a_glu_off >> 2)));
#elif defined(A_VEC4)
  return vec4(a_data4((a_base + row * p.a_rs + k) >> 2));
#else
  vec4 v = vec4(0.0);
  [[unroll]] for (uint i = 0; i < 4u; i++)
    if (k + i < p.k) v[i] = load_a_raw(row, k + i);
  return v;
#endif
}

#ifdef A_RMSNORM
// The RMSNorm prologue (graph/passes/fuse_norm.c): A is the norm's input x and every body reads
// it as rmsnorm(x) = x * inv[row] * gamma, inv = 1 / sqrt(mean(x^2) + eps), the layernorm.comp
// expression, in the same order. Every workgroup computes the norms of all M <= 8 rows at the
// start of main, with no shared memory and no barrier, so the bodies keep their own
// synchronisation (the CPU bodies none at all): under A_RMSNORM_SUBGROUP the invocations of a
// subgroup split each row's K by their rank among the active ones (right at any subgroup size,
// a partial subgroup included) and add with subgroupAdd; otherwise each invocation sums it all.
#define A_RMSNORM_MAX_ROWS 8
float a_norm_inv[A_RMSNORM_MAX_ROWS];

void a_rmsnorm_prologue() {
#ifdef A_RMSNORM_SUBGROUP
  uint first = subgroupExclusiveAdd(1u), stride = subgroupAdd(1u);
#else
  uint first = 0u, stride = 1u;
#endif
  for (uint r = 0u; r < min(p.m, uint(A_RMSNORM_MAX_ROWS)); r++) {
    float ss = 0.0;
#ifdef A_VEC4
    for (uint q = first; q < p.k / 4u; q += stride) {
      vec4 v = load_a4_raw(r, 4u * q);
      ss += dot(v, v);
    }
#else
    for (uint k = first; k < p.k; k += stride) {
      float v = load_a_raw(r, k);
      ss += v * v;
    }
#endif
#ifdef A_RMSNORM_SUBGROUP
    ss = subgroupAdd(ss);
#endif
    a_norm_inv[r] = 1.0 / sqrt(ss / float(p.k) + p.a_norm_eps);
  }
}

float load_a(uint row, uint k) { return load_a_raw(row, k) * a_norm_inv[row] * norm_g[p.g_off + k]; }

vec4 load_a4(uint row, uint k) {
  vec4 g = vec4(0.0);
  [[unroll]] for (uint i = 0; i < 4u; i++)
    if (k + i < p.k) g[i] = norm_g[p.g_off + k + i];
  return load_a4_raw(row, k) * a_norm_inv[row] * g;
}
#else
#define load_a load_a_raw
#define load_a4 load_a4_raw
#endif

void set_batch_bases() {
  uint z = gl_WorkGroupID.z, b0 = z / p.batch1, b1 = z % p.batch1;
  a_base = p.a_off + b0 * p.a_bs0 + b1 * p.a_bs1;
  b_base = p.b_off + b0 * p.b_bs0 + b1 * p.b_bs1;
  c_base = p.c_off + b0 * p.c_bs0 + b1 * p.c_bs1;
  r_base = p.r_off + b0 * p.r_bs0 + b1 * p.r_bs1;
#if defined(A_RMSNORM) && !defined(GEMM_QCPU) /* gemm_qcpu.glsl sums the squares in its loop */
  a_rmsnorm_prologue();
#endif
}

// B[k, col..col+3], zero past N.
vec4 load_b_n4(uint k, uint col) {
#ifdef B_VEC4_N
  return vec4(b_data4((b_base + k * p.b_ks + col) >> 2));
#else
  vec4 v = vec4(0.0);
  [[unroll]] for (uint i = 0; i < 4u; i++)
    if (col + i < p.n) v[i] = load_b(k, col + i);
  return v;
#endif
}

// B[k..k+3, col], zero past K.
vec4 load_b_k4(uint k, uint col) {
#ifdef B_VEC4_K
  return vec4(b_data4((b_base + col * p.b_ns + k) >> 2));
#else
  vec4 v = vec4(0.0);
  [[unroll]] for (uint i = 0; i < 4u; i++)
    if (k + i < p.k) v[i] = load_b(k + i, col);
  return v;
#endif
}

#ifdef GEMV_K8
#if !(defined(B_F16) || defined(B_BF16)) || defined(B_TEXEL)
#error "GEMV_K8 needs a 16-bit B in a storage buffer"
#endif
layout(std430, set = 0, binding = 1) readonly buffer BufB8 { uvec4 b_data8_[]; };
// B[k..k+7, col] as two vec4s, one 16-byte load.
void load_b_k8(uint k, uint col, out vec4 lo, out vec4 hi) {
  uvec4 w = b_data8_[(b_base + col * p.b_ns + k) >> 3];
#ifdef B_BF16
  lo = uintBitsToFloat(uvec4(w.x << 16, w.x & 0xffff0000u, w.y << 16, w.y & 0xffff0000u));
  hi = uintBitsToFloat(uvec4(w.z << 16, w.z & 0xffff0000u, w.w << 16, w.w & 0xffff0000u));
#else
  lo = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
  hi = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
#endif
}
#endif

// Bias, activation, residual, then the store; the caller checks row < M and col < N.
void store_c(uint row, uint col, float acc) {
#ifdef BIAS
  acc += float(bias_data[p.bias_off + col * p.bias_s]);
#endif
  acc = vkf_activation(ACT, acc);
#ifdef RESIDUAL
  acc += float(res_data[r_base + row * p.r_rs + col * p.r_cs]);
#endif
  c_data[c_base + row * p.c_rs + col * p.c_cs] = C_T(acc);
}

#ifdef C_VEC4
// store_c for output columns col..col+3 at once (C_VEC4: C, bias and residual are contiguous
// along n, N % 4 == 0 and every row start 4-aligned, so the four are one vec4 each). `bias4` is
// bias[col..col+3], loaded once by the caller. On CPU devices each vec4 access is one pass over
// the lanes where four scalar ones are four.
void store_c4(uint row, uint col, vec4 acc, vec4 bias4) {
#ifdef BIAS
  acc += bias4;
#endif
  acc = vkf_activation4(ACT, acc);
#ifdef RESIDUAL
  acc += vec4(res_data4[(r_base + row * p.r_rs + col) >> 2]);
#endif
  c_data4[(c_base + row * p.c_rs + col) >> 2] = C_T4(acc);
}
#endif

#if defined(GEMM_COOPMAT)
#include "gemm_coopmat.glsl"
#elif defined(GEMM_SPLITK_REDUCE)
#include "gemm_splitk.glsl"
#elif defined(GEMM_NAIVE)
#include "gemm_naive.glsl"
#elif defined(GEMM_GEMV)
#include "gemm_gemv.glsl"
#elif defined(GEMM_CPU)
#include "gemm_cpu.glsl"
#elif defined(GEMM_QCPU)
#include "gemm_qcpu.glsl"
#else
#include "gemm_tiled.glsl"
#endif
