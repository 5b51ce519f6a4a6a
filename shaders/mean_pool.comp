#version 450
// Masked mean over tokens (sentence-transformers mean pooling):
//   out[b, c] = sum_t mask[b, t] * x[b, t, c] / max(sum_t mask[b, t], 1e-9)
// (no mask: every token counts). One invocation per output element; neighbours in c read
// neighbouring x elements. Accumulation in fp32.
// Defines: HAS_MASK: binding 1 is the i32 mask [B, N]; IO_F16: x and out are f16 (uint16_t bits).
// Bindings: 0 x [B, N, D] (read), 1 mask (read, with HAS_MASK), then out [B, D] (write): binding 2
//           with HAS_MASK, else 1.
// Push constants: batch, tokens, d, x_off, x_st0, x_st1, x_st2, mask_off, mask_st0, mask_st1,
//                 out_off, out_st0, out_st1 (element offsets and strides).
// Specialization constants: 0 workgroup size (default 256).
#extension GL_GOOGLE_include_directive : require
#ifdef IO_F16
#extension GL_EXT_shader_16bit_storage : require
#define IO_T uint16_t
#define LOAD_X(i) vkf_half_to_float(uint(x[i]))
#define STORE_T(v) uint16_t(vkf_float_to_half(v))
#else
#define IO_T float
#define LOAD_X(i) x[i]
#define STORE_T(v) (v)
#endif
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { IO_T x[]; };
#ifdef HAS_MASK
layout(std430, binding = 1) readonly buffer Mask { int mask[]; };
layout(std430, binding = 2) writeonly buffer Out { IO_T dst[]; };
#else
layout(std430, binding = 1) writeonly buffer Out { IO_T dst[]; };
#endif
layout(push_constant) uniform Params {
  uint batch, tokens, d;
  uint x_off, x_st0, x_st1, x_st2;
  uint mask_off, mask_st0, mask_st1;
  uint out_off, out_st0, out_st1;
} p;

void main() {
  uint total = p.batch * p.d;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint b = i / p.d, c = i - b * p.d;
    float acc = 0.0, weight = 0.0;
    uint xi = p.x_off + b * p.x_st0 + c * p.x_st2;
    for (uint t = 0; t < p.tokens; t++, xi += p.x_st1) {
#ifdef HAS_MASK
      float m = float(mask[p.mask_off + b * p.mask_st0 + t * p.mask_st1]);
      weight += m;
      acc += m * LOAD_X(xi);
#else
      weight += 1.0;
      acc += LOAD_X(xi);
#endif
    }
    dst[p.out_off + b * p.out_st0 + c * p.out_st1] = STORE_T(acc / max(weight, 1e-9));
  }
}
