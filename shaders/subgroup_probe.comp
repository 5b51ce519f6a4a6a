#version 450
// The subgroup probe run once at device creation (host/subgroup_probe.c): invocation 0 writes the
// subgroup size the shader reads and the number of subgroups the workgroup really has, from which
// the host derives the width the device's pipelines run at. A device whose two disagree (Mesa
// 22.3's lavapipe at LP_NATIVE_VECTOR_WIDTH=1024 and 2048 reports 32 and 64 and runs 16) must not
// be planned on its reported size. Only basic subgroup operations: every Vulkan 1.1 device has them.
// Specialization constants: 0 local_size_x (a multiple of the size under test).
// Bindings: 0 out: uvec2 (gl_SubgroupSize, gl_NumSubgroups).
#extension GL_KHR_shader_subgroup_basic : require

layout(local_size_x_id = 0) in;
layout(std430, binding = 0) writeonly buffer Out { uvec2 o; };

void main() {
  if (gl_LocalInvocationIndex == 0) o = uvec2(gl_SubgroupSize, gl_NumSubgroups);
}
