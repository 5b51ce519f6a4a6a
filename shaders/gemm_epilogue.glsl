// GEMM epilogue helpers for gemm.comp: activations (exact-erf GELU, tanh GELU, ReLU, SiLU).
// Included by gemm.comp after its bindings; no bindings of its own.
// Activation ids match vkf_activation (graph/ir/graph.h): 0 none, 1 gelu_erf, 2 gelu_tanh, 3 relu,
// 4 silu.

// erf in fp32 to about 6e-8 absolute (checked against libm erf over [-10, 10] in steps of 1e-5):
// two minimax fits split at |x| = 0.9277 (N. Juffa's single-precision erff). GLSL has no erf, and
// the Abramowitz-Stegun 7.1.26 form (1.5e-7) is visibly worse next to the interpreter's libm.
float vkf_erf(float a) {
  float t = abs(a), s = a * a, r;
  if (t > 0.927734375) {
    r = fma(-1.72853470e-5, t, 3.83197126e-4);
    float u = fma(-3.88396438e-3, t, 2.42546219e-2);
    r = fma(r, s, u);
    r = fma(r, t, -1.06777877e-1);
    r = fma(r, t, -6.34846687e-1);
    r = fma(r, t, -1.28717512e-1);
    r = fma(r, t, -t);
    r = 1.0 - exp(r);
    r = a < 0.0 ? -r : r;
  } else {
    r = -5.96761703e-4;
    r = fma(r, s, 4.99119423e-3);
    r = fma(r, s, -2.67681349e-2);
    r = fma(r, s, 1.12819925e-1);
    r = fma(r, s, -3.76125336e-1);
    r = fma(r, s, 1.28379166e-1);
    r = fma(r, a, a);
  }
  return r;
}

// tanh through exp that saturates instead of producing inf/inf = NaN for large |x|.
float vkf_tanh(float x) {
  float e = exp(-2.0 * abs(x));
  float t = (1.0 - e) / (1.0 + e);
  return x < 0.0 ? -t : t;
}

float vkf_activation(uint act, float x) {
  if (act == 1u) return 0.5 * x * (1.0 + vkf_erf(x * 0.70710678118654752));
  if (act == 2u) return 0.5 * x * (1.0 + vkf_tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
  if (act == 3u) return max(x, 0.0);
  if (act == 4u) return x / (1.0 + exp(-x));
  return x;
}
