// Workgroup-wide sum and max of one float per invocation, for the row kernels (layernorm.comp,
// softmax.comp: one workgroup per row). Every invocation gets the result; calls may follow each
// other (each call starts with a barrier so the previous result has been read).
// Needs, declared before the #include: the constant WG (workgroup size, a power of two), the
// bool constant ONE_SUBGROUP (with SUBGROUP_REDUCE: the workgroup is a single subgroup, so the
// subgroup operation is the whole reduction: no shared memory, no barrier; CPU devices run
// barrier-free shaders without switching between the invocations' coroutines) and, with
// SUBGROUP_REDUCE, `#extension GL_KHR_shader_subgroup_arithmetic : require`.
// Defines: SUBGROUP_REDUCE: reduce inside subgroups with subgroupAdd/subgroupMax, then over the
//   subgroups' partials in shared memory (in subgroup order, so results are deterministic);
//   without it, a shared-memory tree (devices without subgroup arithmetic: the mobile profile).
// Shared memory: WG floats.

shared float wg_red[WG];

#ifdef SUBGROUP_REDUCE
float wg_sum(float v) {
  v = subgroupAdd(v);
  if (ONE_SUBGROUP) return v;
  barrier();
  if (subgroupElect()) wg_red[gl_SubgroupID] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; i++) s += wg_red[i];
  return s;
}

float wg_max(float v) {
  v = subgroupMax(v);
  if (ONE_SUBGROUP) return v;
  barrier();
  if (subgroupElect()) wg_red[gl_SubgroupID] = v;
  barrier();
  float m = wg_red[0];
  for (uint i = 1; i < gl_NumSubgroups; i++) m = max(m, wg_red[i]);
  return m;
}
#else
float wg_sum(float v) {
  uint lid = gl_LocalInvocationID.x;
  barrier();
  wg_red[lid] = v;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) wg_red[lid] += wg_red[lid + s];
    barrier();
  }
  return wg_red[0];
}

float wg_max(float v) {
  uint lid = gl_LocalInvocationID.x;
  barrier();
  wg_red[lid] = v;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) wg_red[lid] = max(wg_red[lid], wg_red[lid + s]);
    barrier();
  }
  return wg_red[0];
}
#endif
