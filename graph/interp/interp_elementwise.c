/* Owns the reference for elementwise ops: the scalar functions, broadcasting binary/unary nodes,
 * and fused elementwise programs. */
#include <math.h>
#include <string.h>

#include "graph/interp/interp_internal.h"

float vkf_activation_eval(vkf_activation act, float xf) {
  double x = xf;
  switch (act) {
    case VKF_ACT_NONE:
      return xf;
    case VKF_ACT_GELU_ERF:
      return (float)(0.5 * x * (1.0 + erf(x / sqrt(2.0))));
    case VKF_ACT_GELU_TANH: {
      const double c = sqrt(2.0 / 3.14159265358979323846);
      return (float)(0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x))));
    }
    case VKF_ACT_RELU:
      return xf > 0 ? xf : 0.0f;
    case VKF_ACT_SILU:
      return (float)(x / (1.0 + exp(-x)));
    default:
      break;
  }
  VKF_ASSERT(!"bad activation");
  return 0;
}

float vkf_elementwise_apply(vkf_op op, float a, float b, float scale) {
  switch (op) {
    case VKF_OP_ADD:
      return a + b;
    case VKF_OP_SUB:
      return a - b;
    case VKF_OP_MUL:
      return a * b;
    case VKF_OP_DIV:
      return a / b;
    case VKF_OP_SCALE:
      return a * scale;
    case VKF_OP_GELU_ERF:
      return vkf_activation_eval(VKF_ACT_GELU_ERF, a);
    case VKF_OP_GELU_TANH:
      return vkf_activation_eval(VKF_ACT_GELU_TANH, a);
    case VKF_OP_RELU:
      return vkf_activation_eval(VKF_ACT_RELU, a);
    case VKF_OP_SILU:
      return vkf_activation_eval(VKF_ACT_SILU, a);
    case VKF_OP_EXP:
      return (float)exp((double)a);
    case VKF_OP_TANH:
      return (float)tanh((double)a);
    case VKF_OP_LOG:
      return (float)log((double)a);
    default:
      break;
  }
  VKF_ASSERT(!"not an elementwise op");
  return 0;
}

vkf_status vkf_ref_elementwise(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  const vkf_tensor *ta = vkf_interp_in_tensor(it, n, 0), *tb = vkf_interp_in_tensor(it, n, 1);
  VKF_IN_F32(a, it, n, 0);
  VKF_IN_F32(b, it, n, 1);
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t sa[VKF_MAX_DIMS] = {0}, sb[VKF_MAX_DIMS] = {0};
  vkf_broadcast_strides(ta->rank, ta->shape, out->rank, out->shape, sa);
  if (tb) vkf_broadcast_strides(tb->rank, tb->shape, out->rank, out->shape, sb);
  int64_t count = vkf_tensor_element_count(out);
  float scale = n->op == VKF_OP_SCALE ? n->attrs.scale.value : 1.0f;
  for (int64_t k = 0; k < count; k++) {
    float va = a[vkf_strided_offset(k, out->rank, out->shape, sa)];
    float vb = b ? b[vkf_strided_offset(k, out->rank, out->shape, sb)] : 0.0f;
    y[k] = vkf_elementwise_apply(n->op, va, vb, scale);
  }
  return VKF_OK;
}

vkf_status vkf_ref_fused(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  const float *in[VKF_MAX_NODE_INPUTS];
  int64_t strides[VKF_MAX_NODE_INPUTS][VKF_MAX_DIMS];
  memset(strides, 0, sizeof strides);
  for (uint32_t i = 0; i < n->input_count; i++) {
    const vkf_tensor *t = vkf_interp_in_tensor(it, n, i);
    in[i] = vkf_interp_in_f32(it, n, i);
    if (!in[i]) return vkf_interp_oom(n);
    vkf_broadcast_strides(t->rank, t->shape, out->rank, out->shape, strides[i]);
  }
  uint32_t count = n->attrs.fused.count;
  float *regs = vkf_interp_temp(it, (n->input_count + count) * sizeof(float));
  float *y = vkf_interp_out_f32(it, n);
  if (!regs || !y) return vkf_interp_oom(n);
  int64_t total = vkf_tensor_element_count(out);
  for (int64_t k = 0; k < total; k++) {
    for (uint32_t i = 0; i < n->input_count; i++)
      regs[i] = in[i][vkf_strided_offset(k, out->rank, out->shape, strides[i])];
    for (uint32_t j = 0; j < count; j++) {
      const vkf_ew_instr *ins = &n->attrs.fused.instrs[j];
      float b = (ins->op == VKF_OP_ADD || ins->op == VKF_OP_SUB || ins->op == VKF_OP_MUL ||
                 ins->op == VKF_OP_DIV)
                    ? regs[ins->b]
                    : 0.0f;
      regs[n->input_count + j] = vkf_elementwise_apply(ins->op, regs[ins->a], b, ins->scale);
    }
    y[k] = regs[n->input_count + count - 1];
  }
  return VKF_OK;
}

/* y = x * cos + rotate_half(x) * sin, each product rounded to fp32 as the unfused form (mul, mul,
 * add) computes it. */
vkf_status vkf_ref_rotary(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  const vkf_tensor *tc = vkf_interp_in_tensor(it, n, VKF_IN_ROTARY_COS);
  const vkf_tensor *ts = vkf_interp_in_tensor(it, n, VKF_IN_ROTARY_SIN);
  VKF_IN_F32(x, it, n, VKF_IN_ROTARY_X);
  VKF_IN_F32(c, it, n, VKF_IN_ROTARY_COS);
  VKF_IN_F32(s, it, n, VKF_IN_ROTARY_SIN);
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t sc[VKF_MAX_DIMS] = {0}, ss[VKF_MAX_DIMS] = {0};
  vkf_broadcast_strides(tc->rank, tc->shape, out->rank, out->shape, sc);
  vkf_broadcast_strides(ts->rank, ts->shape, out->rank, out->shape, ss);
  int64_t count = vkf_tensor_element_count(out), d = out->shape[out->rank - 1], half = d / 2;
  for (int64_t k = 0; k < count; k++) {
    int64_t j = k % d;
    float rot = j < half ? -x[k + half] : x[k - half];
    float a = x[k] * c[vkf_strided_offset(k, out->rank, out->shape, sc)];
    float b = rot * s[vkf_strided_offset(k, out->rank, out->shape, ss)];
    y[k] = a + b;
  }
  return VKF_OK;
}
