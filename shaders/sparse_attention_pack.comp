#version 450
// Packs the run-time kv_len [B] and key bias [B, Nk] of a block-sparse attention into one fp32 /
// int32 scratch buffer, [kv_len (int bits) | key bias (float bits)], so the attention kernel reads
// both through one binding (its 8 are q, k, v, out, rows, cols, masks and this one).
// Defines: BIAS_F16=0|1 (the key bias is float16). Bindings: 0 kv_len int[], 1 key bias, 2 packed
// uint[B + B * Nk] (write). Push constants below. One invocation per packed element on a 2-D grid.
#extension GL_EXT_control_flow_attributes : enable
#if BIAS_F16
#extension GL_EXT_shader_16bit_storage : require
#define T_BIAS float16_t
#else
#define T_BIAS float
#endif
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer LB { int kv_len[]; };
layout(std430, binding = 1) readonly buffer BB { T_BIAS key_bias[]; };
layout(std430, binding = 2) writeonly buffer PB { uint packed[]; };
layout(push_constant) uniform Params {
  uint len_off, bias_off, out_off, batch, count; // count = B * Nk
} p;

void main() {
  const uint e = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (e < p.batch) packed[p.out_off + e] = uint(kv_len[p.len_off + e]);
  else if (e < p.batch + p.count)
    packed[p.out_off + e] = floatBitsToUint(float(key_bias[p.bias_off + e - p.batch]));
}
