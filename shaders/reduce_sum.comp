#version 450
// Per-workgroup sum through shared memory (tree reduction), one partial per workgroup.
// Bindings: 0 x (float[n], read), 1 partial (float[groups], write).
// Push constants: n (uint).
// Specialization constants: 0 local_size_x (power of two, default 256).
// Defines: none.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer P { float partial[]; };
layout(push_constant) uniform Params { uint n; } p;

shared float tile[WG];

void main() {
  uint lid = gl_LocalInvocationID.x;
  float acc = 0.0;
  // Grid-stride loop: each invocation first sums its strided share, so any n fits.
  for (uint i = gl_WorkGroupID.x * WG + lid; i < p.n; i += gl_NumWorkGroups.x * WG) acc += x[i];
  tile[lid] = acc;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) tile[lid] += tile[lid + s];
    barrier();
  }
  if (lid == 0) partial[gl_WorkGroupID.x] = tile[0];
}
