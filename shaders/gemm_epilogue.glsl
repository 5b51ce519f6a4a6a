// GEMM epilogue helpers for gemm.comp: activations (exact-erf GELU, tanh GELU, ReLU, SiLU).
// Included by gemm.comp after its bindings; no bindings of its own.
// Activation ids match vkf_activation (graph/ir/graph.h): 0 none, 1 gelu_erf, 2 gelu_tanh, 3 relu,
// 4 silu.

// erf in fp32 to about 6e-8 absolute (checked against libm erf over [-10, 10] in steps of 1e-5):
// two minimax fits split at |x| = 0.9277 (N. Juffa's single-precision erff). GLSL has no erf, and
// the Abramowitz-Stegun 7.1.26 form (1.5e-7) is visibly worse next to the interpreter's libm.
// The activations work on vec4s and the scalar forms take component x: the CPU kernel inlines
// them at each of its 8*CPU_RA*CPU_TN4 vec4 stores, and a vec4 op is one SPIR-V instruction where
// four scalar ones are four (lavapipe's pipeline creation time follows the SPIR-V's size; GPU
// compilers drop the unused components). Both fits, then a select: no branch, so each inlined
// copy is one basic block.
vec4 vkf_erf(vec4 a) {
  vec4 t = abs(a), s = a * a;
  vec4 r = fma(vec4(-1.72853470e-5), t, vec4(3.83197126e-4));
  vec4 u = fma(vec4(-3.88396438e-3), t, vec4(2.42546219e-2));
  r = fma(r, s, u);
  r = fma(r, t, vec4(-1.06777877e-1));
  r = fma(r, t, vec4(-6.34846687e-1));
  r = fma(r, t, vec4(-1.28717512e-1));
  r = fma(r, t, -t);
  r = 1.0 - exp(r);
  r = mix(r, -r, lessThan(a, vec4(0.0)));
  vec4 q = vec4(-5.96761703e-4);
  q = fma(q, s, vec4(4.99119423e-3));
  q = fma(q, s, vec4(-2.67681349e-2));
  q = fma(q, s, vec4(1.12819925e-1));
  q = fma(q, s, vec4(-3.76125336e-1));
  q = fma(q, s, vec4(1.28379166e-1));
  q = fma(q, a, a);
  return mix(q, r, greaterThan(t, vec4(0.927734375)));
}

// tanh through exp that saturates instead of producing inf/inf = NaN for large |x|.
vec4 vkf_tanh(vec4 x) {
  vec4 e = exp(-2.0 * abs(x));
  vec4 t = (1.0 - e) / (1.0 + e);
  return mix(t, -t, lessThan(x, vec4(0.0)));
}

vec4 vkf_activation4(uint act, vec4 x) {
  if (act == 1u) return 0.5 * x * (1.0 + vkf_erf(x * 0.70710678118654752));
  if (act == 2u) return 0.5 * x * (1.0 + vkf_tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
  if (act == 3u) return max(x, vec4(0.0));
  if (act == 4u) return x / (1.0 + exp(-x));
  return x;
}

float vkf_activation(uint act, float x) { return vkf_activation4(act, vec4(x)).x; }
