#version 450
// y = a * x + y over n floats: the smallest end-to-end kernel, used by the host-layer tests.
// Bindings: 0 x (float[n], read), 1 y (float[n], read-write).
// Push constants: n (uint), a (float).
// Specialization constants: 0 local_size_x (workgroup size, default 256).
// Defines: none.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Params { uint n; float a; } p;

void main() {
  // 2-D dispatch so n may exceed 65535 workgroups in x on small-limit devices.
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i < p.n) y[i] = p.a * x[i] + y[i];
}
