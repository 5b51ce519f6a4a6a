/* Owns elementwise lowering: a single elementwise op or a fused elementwise program becomes one
 * generated GLSL kernel (text written here, compiled by the host like any template): each input
 * read once through its own broadcast strides, the program evaluated in fp32 registers, one store.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/lower/lower_node.h"
#include "graph/lower/lower_layout.h"

/* Growing text with a sticky out-of-memory flag, so the emitters need no check per call. */
typedef struct text {
  char *buf;
  size_t len, cap;
  int oom;
} text;

static void emit(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(text *t, const char *fmt, ...) {
  if (t->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->oom = 1;
      return;
    }
    if (t->buf && t->len + (size_t)n < t->cap) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap ? t->cap * 2 : 4096;
    while (cap < t->len + (size_t)n + 1) cap *= 2;
    char *b = realloc(t->buf, cap);
    if (!b) {
      t->oom = 1;
      return;
    }
    t->buf = b;
    t->cap = cap;
  }
}

static int is_binary(vkf_op op) {
  return op == VKF_OP_ADD || op == VKF_OP_SUB || op == VKF_OP_MUL || op == VKF_OP_DIV;
}

/* A float literal that GLSL parses back to exactly `v` (%.9g round-trips binary32). */
static void emit_float(text *t, float v) {
  if (!isfinite(v)) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    emit(t, "uintBitsToFloat(0x%08" PRIx32 "u)", bits);
    return;
  }
  char s[32];
  snprintf(s, sizeof s, "%.9g", (double)v);
  emit(t, "%s%s", s, strpbrk(s, ".e") ? "" : ".0");
}

/* The GLSL expression of one instruction on registers r<a>, r<b>. */
static vkf_status emit_instr(text *t, const vkf_ew_instr *ins, uint32_t dst) {
  emit(t, "    float r%u = ", dst);
  switch (ins->op) {
    case VKF_OP_ADD:
      emit(t, "r%u + r%u", ins->a, ins->b);
      break;
    case VKF_OP_SUB:
      emit(t, "r%u - r%u", ins->a, ins->b);
      break;
    case VKF_OP_MUL:
      emit(t, "r%u * r%u", ins->a, ins->b);
      break;
    case VKF_OP_DIV:
      emit(t, "r%u / r%u", ins->a, ins->b);
      break;
    case VKF_OP_SCALE:
      emit(t, "r%u * ", ins->a);
      emit_float(t, ins->scale);
      break;
    case VKF_OP_GELU_ERF:
      emit(t, "vkf_gelu_erf(r%u)", ins->a);
      break;
    case VKF_OP_GELU_TANH:
      emit(t, "vkf_gelu_tanh(r%u)", ins->a);
      break;
    case VKF_OP_RELU:
      emit(t, "vkf_relu(r%u)", ins->a);
      break;
    case VKF_OP_SILU:
      emit(t, "vkf_silu(r%u)", ins->a);
      break;
    case VKF_OP_EXP:
      emit(t, "exp(r%u)", ins->a);
      break;
    case VKF_OP_TANH:
      emit(t, "vkf_tanh(r%u)", ins->a);
      break;
    case VKF_OP_LOG:
      emit(t, "log(r%u)", ins->a);
      break;
    default:
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "op %s is not elementwise",
                             vkf_op_name(ins->op));
  }
  emit(t, ";\n");
  return VKF_OK;
}

/* Operands: the distinct inputs the program reads, then the output (last). */
typedef struct ew_operands {
  uint32_t count; /* inputs + 1 */
  const vkf_plan_tensor *t[VKF_LAYOUT_MAX_OPERANDS];
  uint32_t of_input[VKF_MAX_NODE_INPUTS];    /* input slot -> operand, UINT32_MAX when unused */
  uint32_t binding[VKF_LAYOUT_MAX_OPERANDS]; /* operand -> binding slot */
  uint32_t elem_offset[VKF_LAYOUT_MAX_OPERANDS];
  uint32_t binding_count;
  int dense[VKF_LAYOUT_MAX_OPERANDS];
} ew_operands;

static int same_view(const vkf_plan_tensor *a, const vkf_plan_tensor *b) {
  return a->buffer == b->buffer && a->offset == b->offset && a->dtype == b->dtype &&
         a->rank == b->rank && !memcmp(a->shape, b->shape, a->rank * sizeof a->shape[0]) &&
         !memcmp(a->strides, b->strides, a->rank * sizeof a->strides[0]);
}

/* Input bindings: one per operand; only when that would exceed the plan's binding limit do
 * operands of the same buffer and dtype share one (a different binding map is different kernel
 * text, so sharing is not the default: it would split the kernel cache by memory placement). */
static vkf_status bind_operands(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                                vkf_plan_dispatch *d, ew_operands *ops) {
  uint32_t inputs = ops->count - 1;
  int share = inputs + 1 > VKF_PLAN_MAX_BINDINGS;
  int done[VKF_LAYOUT_MAX_OPERANDS] = {0};
  for (uint32_t k = 0; k < inputs; k++) {
    if (done[k]) continue;
    const vkf_plan_tensor *group[VKF_LAYOUT_MAX_OPERANDS];
    uint32_t members[VKF_LAYOUT_MAX_OPERANDS], n = 0, offs[VKF_LAYOUT_MAX_OPERANDS];
    for (uint32_t j = k; j < inputs; j++) {
      if (done[j] || (j != k && !(share && ops->t[j]->buffer == ops->t[k]->buffer &&
                                  ops->t[j]->dtype == ops->t[k]->dtype)))
        continue;
      group[n] = ops->t[j];
      members[n++] = j;
      done[j] = 1;
    }
    if (d->binding_count + 1 >= VKF_PLAN_MAX_BINDINGS)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s \"%s\": %u inputs in distinct buffers exceed %d bindings",
                             vkf_op_name(node->op), node->name, inputs, VKF_PLAN_MAX_BINDINGS - 1);
    uint64_t size = vkf_lower_bind_shared(ctx, d, group, n, VKF_ACCESS_READ, offs);
    if (n > 1 && size > ctx->caps->max_storage_buffer_range)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s \"%s\": inputs sharing a binding span %" PRIu64
                             " bytes, more than the device's storage buffer range",
                             vkf_op_name(node->op), node->name, size);
    for (uint32_t m = 0; m < n; m++) {
      ops->binding[members[m]] = d->binding_count - 1;
      ops->elem_offset[members[m]] = offs[m];
    }
  }
  uint32_t out = ops->count - 1;
  ops->elem_offset[out] = vkf_lower_bind(ctx, d, ops->t[out], VKF_ACCESS_WRITE);
  ops->binding[out] = d->binding_count - 1;
  ops->binding_count = d->binding_count;
  return VKF_OK;
}

/* More distinct input buffers than bindings beside the output: the smallest operands are copied
 * into one scratch buffer (one copy.comp dispatch each), where they then share a binding. Only
 * fused programs with 8 inputs from 8 buffers (graph inputs, weights) get here. */
static vkf_status stage_operands(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                                 ew_operands *ops, vkf_plan_tensor *staged) {
  uint32_t inputs = ops->count; /* the output is not an operand yet */
  uint32_t group_of[VKF_LAYOUT_MAX_OPERANDS], groups = 0;
  uint64_t group_bytes[VKF_LAYOUT_MAX_OPERANDS] = {0};
  for (uint32_t k = 0; k < inputs; k++) {
    group_of[k] = groups;
    for (uint32_t j = 0; j < k; j++)
      if (ops->t[j]->buffer == ops->t[k]->buffer && ops->t[j]->dtype == ops->t[k]->dtype)
        group_of[k] = group_of[j];
    if (group_of[k] == groups) groups++;
    group_bytes[group_of[k]] +=
        (uint64_t)vkf_plan_tensor_count(ops->t[k]) * vkf_dtype_size(ops->t[k]->dtype);
  }
  if (groups + 1 <= VKF_PLAN_MAX_BINDINGS) return VKF_OK;
  /* Moving j groups into scratch leaves groups - j + 1 bindings for inputs. */
  uint32_t move = groups - (VKF_PLAN_MAX_BINDINGS - 1) + 1;
  int moved[VKF_LAYOUT_MAX_OPERANDS] = {0};
  for (uint32_t m = 0; m < move; m++) {
    uint32_t best = UINT32_MAX;
    for (uint32_t gi = 0; gi < groups; gi++)
      if (!moved[gi] && (best == UINT32_MAX || group_bytes[gi] < group_bytes[best])) best = gi;
    moved[best] = 1;
  }
  /* Staged copies keep their own (unbroadcast) shape, densely packed; all share one dtype so
   * they can share the binding: stage only the moved groups' operands of the first such dtype,
   * and give up on mixed dtypes (fused programs have one dtype). */
  uint64_t size = 0;
  uint64_t offsets[VKF_LAYOUT_MAX_OPERANDS];
  vkf_dtype dtype = VKF_DTYPE_COUNT;
  for (uint32_t k = 0; k < inputs; k++) {
    if (!moved[group_of[k]]) continue;
    if (dtype == VKF_DTYPE_COUNT) dtype = ops->t[k]->dtype;
    if (ops->t[k]->dtype != dtype)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s \"%s\": inputs of mixed dtypes in %u "
                             "buffers exceed the binding limit",
                             vkf_op_name(node->op), node->name, groups);
    offsets[k] = size;
    size += (uint64_t)vkf_plan_tensor_count(ops->t[k]) * vkf_dtype_size(dtype);
    size = (size + ctx->alignment - 1) / ctx->alignment * ctx->alignment;
  }
  char name[160];
  snprintf(name, sizeof name, "%s.staged", node->name);
  uint32_t buffer = vkf_plan_add_buffer(ctx->plan, VKF_PLAN_BUFFER_SCRATCH, name, size);
  for (uint32_t k = 0; k < inputs; k++) {
    if (!moved[group_of[k]]) continue;
    vkf_plan_tensor *s = &staged[k];
    *s = *ops->t[k];
    s->buffer = buffer;
    s->offset = offsets[k];
    int64_t expect = 1;
    for (uint32_t dd = s->rank; dd-- > 0;) s->strides[dd] = expect, expect *= s->shape[dd];
    VKF_RETURN_IF_ERROR(vkf_lower_copy_view(ctx, node, ops->t[k], s));
    ops->t[k] = s;
  }
  return VKF_OK;
}

static const char *op_short(vkf_op op) {
  switch (op) {
    case VKF_OP_GELU_ERF:
      return "gelu";
    case VKF_OP_GELU_TANH:
      return "gelut";
    default:
      return vkf_op_name(op);
  }
}

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* The element index of operand k: flat mode walks i (coordinates i0..), rows mode walks column c
 * of a row whose start base<k> is known. */
static void emit_index(text *t, const vkf_layout *l, const ew_operands *ops, uint32_t k, int rows) {
  if (rows) {
    if (ops->dense[k])
      emit(t, "base%u + c", k);
    else
      emit(t, "base%u + c * st%u_%u", k, k, l->rank - 1);
    return;
  }
  emit(t, "off%u", k);
  if (ops->dense[k]) {
    emit(t, " + i");
  } else {
    for (uint32_t d = 0; d < l->rank; d++) emit(t, " + i%u * st%u_%u", d, k, d);
  }
}

/* Writes the kernel. Shapes and strides go to push constants when they fit (the text then only
 * depends on the program, dtypes, coalesced rank, which operands are dense and flat vs row-wise
 * walking, so one compiled kernel serves many shapes); otherwise they are baked into the text. */
static vkf_status write_kernel(const vkf_lower_node *node, const vkf_ew_instr *prog,
                               uint32_t prog_count, const vkf_layout *l, const ew_operands *ops,
                               int baked, int rows, text *t) {
  uint32_t out = ops->count - 1, inputs = node->input_count;
  int any_f16 = 0;
  for (uint32_t k = 0; k < ops->count; k++) any_f16 |= ops->t[k]->dtype == VKF_F16;
  emit(t, "#version 450\n#extension GL_GOOGLE_include_directive : require\n");
  if (any_f16) emit(t, "#extension GL_EXT_shader_16bit_storage : require\n");
  emit(t, "// Generated by graph/lower/lower_elementwise.c:");
  for (uint32_t j = 0; j < prog_count; j++) {
    emit(t, " r%u=%s(r%u", inputs + j, vkf_op_name(prog[j].op), prog[j].a);
    if (is_binary(prog[j].op)) emit(t, ",r%u", prog[j].b);
    emit(t, ")");
  }
  emit(t,
       "\n// Inputs r0..r%u are read through their own broadcast strides.\n"
       "// Defines: none. Bindings: inputs (read) then the output (write); f16 is stored as\n"
       "// uint16_t bits. Push constants: the Params block (count; coalesced sizes with their\n"
       "// vkf_fastdiv magic and shift; per-operand element offsets and strides), unless\n"
       "// baked as constants below. Specialization constants: 0 workgroup size.\n",
       inputs ? inputs - 1 : 0);
  emit(t, "#include \"common.glsl\"\nlayout(local_size_x_id = 0) in;\n");
  for (uint32_t b = 0; b < ops->binding_count; b++) {
    uint32_t k = 0;
    while (ops->binding[k] != b) k++;
    emit(t, "layout(std430, binding = %u) %s buffer B%u { %s b%u[]; };\n", b,
         k == out ? "writeonly" : "readonly", b, ops->t[k]->dtype == VKF_F16 ? "uint16_t" : "float",
         b);
  }
  /* Values of the index parameters, in the order they appear in Params. */
  char names[64][24]; /* "st<k>_<d>" with 32-bit k and d fits */
  uint32_t values[64], n = 0;
  uint64_t count = 1;
  for (uint32_t d = 0; d < l->rank; d++) count *= (uint64_t)l->shape[d];
  snprintf(names[n], sizeof names[n], "count"), values[n++] = (uint32_t)count;
  for (uint32_t d = 1; d < l->rank; d++) {
    vkf_fastdiv f = vkf_fastdiv_make((uint32_t)l->shape[d]);
    snprintf(names[n], sizeof names[n], "size%u", d), values[n++] = f.divisor;
    snprintf(names[n], sizeof names[n], "magic%u", d), values[n++] = f.magic;
    snprintf(names[n], sizeof names[n], "shift%u", d), values[n++] = f.shift;
  }
  for (uint32_t k = 0; k < ops->count; k++) {
    snprintf(names[n], sizeof names[n], "off%u", k), values[n++] = ops->elem_offset[k];
    if (ops->dense[k]) continue;
    for (uint32_t d = 0; d < l->rank; d++)
      snprintf(names[n], sizeof names[n], "st%u_%u", k, d),
          values[n++] = (uint32_t)l->strides[k][d];
  }
  if (baked) {
    for (uint32_t i = 0; i < n; i++) emit(t, "const uint %s = %uu;\n", names[i], values[i]);
  } else {
    emit(t, "layout(push_constant) uniform Params {\n");
    for (uint32_t i = 0; i < n; i++) emit(t, "  uint %s;\n", names[i]);
    emit(t, "};\n");
  }
  /* Operands loaded from their binding (the first input register of each), and the output. */
  int loaded[VKF_LAYOUT_MAX_OPERANDS] = {0};
  for (uint32_t r = 0; r < inputs; r++)
    if (ops->of_input[r] != UINT32_MAX) loaded[ops->of_input[r]] = 1;
  loaded[out] = 1;
  const char *ind = rows ? "      " : "    ";
  emit(t, "void main() {\n");
  if (rows) {
    /* Rows of the innermost dim: the outer coordinates are decomposed once per row, and the
     * inner loop needs no division at all. */
    uint32_t r = l->rank - 1;
    emit(t,
         "  uint rows = vkf_fastdiv(count, magic%u, shift%u);\n"
         "  for (uint row = gl_WorkGroupID.y; row < rows; row += gl_NumWorkGroups.y) {\n"
         "    uint rem = row;\n",
         r, r);
    for (uint32_t d = r; d-- > 1;)
      emit(
          t,
          "    uint q%u = vkf_fastdiv(rem, magic%u, shift%u);\n    uint i%u = rem - q%u * size%u;\n"
          "    rem = q%u;\n",
          d, d, d, d, d, d, d);
    emit(t, "    uint i0 = rem;\n");
    for (uint32_t k = 0; k < ops->count; k++) {
      if (!loaded[k]) continue;
      emit(t, "    uint base%u = off%u", k, k);
      if (ops->dense[k]) {
        emit(t, " + row * size%u", r);
      } else {
        for (uint32_t d = 0; d < r; d++) emit(t, " + i%u * st%u_%u", d, k, d);
      }
      emit(t, ";\n");
    }
    emit(t,
         "    for (uint c = gl_GlobalInvocationID.x; c < size%u;"
         " c += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {\n",
         r);
  } else {
    emit(t,
         "  for (uint i = gl_GlobalInvocationID.x; i < count;"
         " i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {\n");
    if (l->rank > 1) {
      emit(t, "    uint rem = i;\n");
      /* Multiply-high division by the sizes: a hardware divide is scalarised per lane on CPU
       * devices and dominated the kernel there. */
      for (uint32_t d = l->rank; d-- > 1;)
        emit(t,
             "    uint q%u = vkf_fastdiv(rem, magic%u, shift%u);\n    uint i%u = rem - q%u * "
             "size%u;\n"
             "    rem = q%u;\n",
             d, d, d, d, d, d, d);
      emit(t, "    uint i0 = rem;\n");
    } else {
      emit(t, "    uint i0 = i;\n");
    }
  }
  for (uint32_t r = 0; r < inputs; r++) {
    uint32_t k = ops->of_input[r];
    if (k == UINT32_MAX) continue;
    uint32_t first = 0;
    while (ops->of_input[first] != k) first++;
    if (first != r) {
      emit(t, "%sfloat r%u = r%u;\n", ind, r, first);
      continue;
    }
    emit(t, "%sfloat r%u = %sb%u[", ind, r,
         ops->t[k]->dtype == VKF_F16 ? "vkf_half_to_float(uint(" : "", ops->binding[k]);
    emit_index(t, l, ops, k, rows);
    emit(t, "]%s;\n", ops->t[k]->dtype == VKF_F16 ? "))" : "");
  }
  for (uint32_t j = 0; j < prog_count; j++) {
    emit(t, "%s", rows ? "  " : "");
    VKF_RETURN_IF_ERROR(emit_instr(t, &prog[j], inputs + j));
  }
  emit(t, "%sb%u[", ind, ops->binding[out]);
  emit_index(t, l, ops, out, rows);
  uint32_t last = inputs + prog_count - 1;
  if (ops->t[out]->dtype == VKF_F16)
    emit(t, "] = uint16_t(vkf_float_to_half(r%u));\n", last);
  else
    emit(t, "] = r%u;\n", last);
  emit(t, "%s", rows ? "    }\n  }\n}\n" : "  }\n}\n");
  return VKF_OK;
}

/* Chooser: one generated kernel per program.
 * - Workgroup: 256 invocations (a multiple of every subgroup size), clamped to the device limit
 *   (128 under the mobile profile); grid-stride loop so any element count fits 65535 groups.
 * - Row-wise walk (one grid row per tensor row, no per-element division) when the coalesced
 *   innermost dim fills a workgroup; otherwise a flat walk with multiply-high division.
 * - Index parameters in push constants when they fit the device's budget, else baked (many-input
 *   fused programs on rank-4 strided views).
 * - f16 storage needs storageBuffer16BitAccess; math is always fp32. */
vkf_status vkf_lower_elementwise(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  char sbuf[64];
  const vkf_plan_tensor *y = &node->output; /* [...] broadcast of all inputs */
  vkf_ew_instr single = {.op = node->op, .a = 0, .b = 1};
  const vkf_ew_instr *prog = &single;
  uint32_t prog_count = 1;
  if (node->op == VKF_OP_FUSED_ELEMENTWISE) {
    prog = node->attrs->fused.instrs;
    prog_count = node->attrs->fused.count;
    if (!prog || prog_count == 0)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s \"%s\": empty program",
                             vkf_op_name(node->op), node->name);
  } else {
    if (!(vkf_op_flags(node->op) & VKF_OPF_ELEMENTWISE))
      return vkf_status_make(VKF_STATUS_INTERNAL, "%s \"%s\" is not an elementwise op",
                             vkf_op_name(node->op), node->name);
    if (node->op == VKF_OP_SCALE) single.scale = node->attrs->scale.value;
    if (!is_binary(node->op)) single.b = 0;
  }
  /* Registers each instruction reads must exist; which inputs are read at all. */
  int used[VKF_MAX_NODE_INPUTS] = {0};
  for (uint32_t j = 0; j < prog_count; j++) {
    uint32_t regs = node->input_count + j;
    if (prog[j].a >= regs || (is_binary(prog[j].op) && prog[j].b >= regs))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s \"%s\": instruction %u reads a register not yet written",
                             vkf_op_name(node->op), node->name, j);
    if (prog[j].a < node->input_count) used[prog[j].a] = 1;
    if (is_binary(prog[j].op) && prog[j].b < node->input_count) used[prog[j].b] = 1;
  }
  for (uint32_t i = 0; i <= node->input_count; i++) {
    const vkf_plan_tensor *x = i < node->input_count ? &node->inputs[i] : y;
    if (i < node->input_count && !vkf_plan_tensor_present(x))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s \"%s\": input %u is missing",
                             vkf_op_name(node->op), node->name, i);
    if (x->dtype != VKF_F32 && x->dtype != VKF_F16)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s \"%s\": %s %s tensor %s (f32/f16 only)",
                             vkf_op_name(node->op), node->name,
                             i < node->input_count ? "input" : "output", vkf_dtype_name(x->dtype),
                             vkf_shape_format(x->rank, x->shape, sbuf, sizeof sbuf));
    if (x->dtype == VKF_F16 && !ctx->caps->storage_16bit)
      return vkf_status_make(
          VKF_STATUS_UNSUPPORTED,
          "%s \"%s\": f16 tensor %s needs 16-bit storage, which the device lacks",
          vkf_op_name(node->op), node->name,
          vkf_shape_format(x->rank, x->shape, sbuf, sizeof sbuf));
  }
  if (vkf_plan_tensor_count(y) == 0) return VKF_OK; /* nothing to compute */

  /* Operands and their strides over the output's index space, then coalesced. */
  ew_operands ops = {0};
  vkf_layout l = {.rank = y->rank};
  memcpy(l.shape, y->shape, sizeof l.shape);
  for (uint32_t i = 0; i < node->input_count; i++) {
    ops.of_input[i] = UINT32_MAX;
    if (!used[i]) continue;
    for (uint32_t k = 0; k < ops.count; k++)
      if (same_view(ops.t[k], &node->inputs[i])) ops.of_input[i] = k;
    if (ops.of_input[i] != UINT32_MAX) continue;
    ops.of_input[i] = ops.count;
    ops.t[ops.count++] = &node->inputs[i];
  }
  vkf_plan_tensor staged[VKF_LAYOUT_MAX_OPERANDS];
  VKF_RETURN_IF_ERROR(stage_operands(ctx, node, &ops, staged));
  for (uint32_t k = 0; k < ops.count; k++)
    vkf_layout_broadcast_strides(ops.t[k], y->rank, y->shape, l.strides[k]);
  ops.t[ops.count] = y;
  memcpy(l.strides[ops.count], y->strides, sizeof l.strides[0]);
  ops.count++;
  l.operand_count = ops.count;
  vkf_layout_coalesce(&l);

  vkf_plan_dispatch d = {.node = node->name};
  VKF_RETURN_IF_ERROR(bind_operands(ctx, node, &d, &ops));
  /* 32-bit index math in the kernel: every operand's furthest element must fit. */
  uint32_t words = 1 + 3 * (l.rank - 1);
  for (uint32_t k = 0; k < ops.count; k++) {
    ops.dense[k] = vkf_layout_operand_dense(&l, k);
    words += 1 + (ops.dense[k] ? 0 : l.rank);
    if ((uint64_t)vkf_layout_operand_last(&l, k) + ops.elem_offset[k] > UINT32_MAX ||
        (uint64_t)vkf_plan_tensor_count(y) > INT32_MAX)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s \"%s\": output %s needs indices beyond 32 bits",
                             vkf_op_name(node->op), node->name,
                             vkf_shape_format(y->rank, y->shape, sbuf, sizeof sbuf));
  }
  uint32_t push_budget = ctx->caps->max_push_constants_size < VKF_PLAN_MAX_PUSH
                             ? ctx->caps->max_push_constants_size
                             : VKF_PLAN_MAX_PUSH;
  int baked = words * 4 > push_budget;
  /* Rows mode when the innermost dim fills a workgroup: no per-element division (the flat
   * mode's divisions dominated broadcast adds on lavapipe); narrower rows would idle lanes. */
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  int rows = l.rank > 1 && l.shape[l.rank - 1] >= wg;

  text t = {0};
  vkf_status st = write_kernel(node, prog, prog_count, &l, &ops, baked, rows, &t);
  if (!st && t.oom)
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s \"%s\": generating GLSL",
                         vkf_op_name(node->op), node->name);
  if (st) {
    free(t.buf);
    return st;
  }
  /* Name: the chain's ops for dumps and profiles, plus a hash of the text so that identical
   * programs share a name (and a cached kernel) and different ones never collide. */
  char name[96];
  int len = snprintf(name, sizeof name, "ew");
  for (uint32_t j = 0; j < prog_count && j < 4; j++)
    len += snprintf(name + len, sizeof name - (size_t)len, "_%s", op_short(prog[j].op));
  if (prog_count > 4) len += snprintf(name + len, sizeof name - (size_t)len, "_etc");
  snprintf(name + len, sizeof name - (size_t)len, "_%012" PRIx64,
           (uint64_t)(fnv1a(t.buf, t.len) & 0xffffffffffffull));
  d.shader = name;
  d.source = t.buf;
  d.spec[0] = wg;
  d.spec_count = 1;
  if (rows) {
    uint64_t inner = (uint64_t)l.shape[l.rank - 1],
             nrows = (uint64_t)vkf_plan_tensor_count(y) / inner;
    d.groups[0] = vkf_lower_groups_1d(ctx, inner, wg);
    /* The kernel strides over rows too; the grid as a whole stays within the group budget. */
    uint64_t ycap = vkf_lower_group_budget(ctx) / d.groups[0];
    if (ycap > 65535) ycap = 65535;
    if (ycap < 1) ycap = 1;
    d.groups[1] = nrows > ycap ? (uint32_t)ycap : (uint32_t)nrows;
  } else {
    d.groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)vkf_plan_tensor_count(y), wg);
    d.groups[1] = 1;
  }
  d.groups[2] = 1;
  if (!baked) {
    uint64_t count = (uint64_t)vkf_plan_tensor_count(y);
    vkf_plan_dispatch_push_u32(&d, (uint32_t)count);
    for (uint32_t dd = 1; dd < l.rank; dd++)
      vkf_plan_dispatch_push_fastdiv(&d, (uint32_t)l.shape[dd]);
    for (uint32_t k = 0; k < ops.count; k++) {
      vkf_plan_dispatch_push_u32(&d, ops.elem_offset[k]);
      if (ops.dense[k]) continue;
      for (uint32_t dd = 0; dd < l.rank; dd++)
        vkf_plan_dispatch_push_u32(&d, (uint32_t)l.strides[k][dd]);
    }
  }
  st = vkf_plan_add_dispatch(ctx->plan, &d);
  free(t.buf);
  return st;
}
