#version 450
// Stable ascending argsort along the last axis: out[row, rank(i)] = i, where rank(i) counts the
// keys j of the row with key[j] < key[i], or key[j] == key[i] and j < i. One invocation per key
// (grid-stride), O(K) loads each; ranks are distinct for finite keys, and always < K, so no write
// leaves the row (NaN keys give an unspecified permutation, never an out-of-bounds access).
// Defines: none.
// Bindings: 0 keys f32 [rows, K] contiguous (read), 1 out i32 [rows, K] (write).
// Push constants: count (rows·K), K, keys_off, out_off (elements).
// Specialization constants: 0 workgroup size (default 256).
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Keys { float keys[]; };
layout(std430, binding = 1) writeonly buffer Out { int dst[]; };
layout(push_constant) uniform Params {
  uint count, len, keys_off, out_off;
} p;

void main() {
  for (uint e = gl_GlobalInvocationID.x; e < p.count; e += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint i = e % p.len, row = e - i;
    float ki = keys[p.keys_off + e];
    uint rank = 0u;
    for (uint j = 0u; j < p.len; j++) {
      float kj = keys[p.keys_off + row + j];
      rank += uint(kj < ki || (kj == ki && j < i));
    }
    dst[p.out_off + row + min(rank, p.len - 1u)] = int(i);
  }
}
