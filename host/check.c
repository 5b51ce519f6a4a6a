/* Owns VKF_CHECK: pinning every node output, then replaying each node in the interpreter from the
 * device's input values and comparing outputs. */
#include "host/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/half.h"
#include "graph/interp/interp.h"

vkf_status vkf_check_pin_all(vkf_graph *g) {
  uint32_t count = vkf_graph_node_count(g);
  for (uint32_t i = 0; i < count; i++) {
    const vkf_node *n = vkf_graph_node(g, i);
    vkf_value out = n->output;
    const vkf_tensor *t = vkf_graph_tensor(g, out);
    /* Views share their base's storage; outputs are pinned already. */
    if (n->dead || t->base.id != out.id || t->role == VKF_ROLE_OUTPUT) continue;
    vkf_graph_output(g, out, NULL);
  }
  return vkf_graph_status(g);
}

static float load(const void *raw, vkf_dtype dtype, size_t i) {
  switch (dtype) {
    case VKF_F16:
      return vkf_half_to_float(((const uint16_t *)raw)[i]);
    case VKF_I32:
      return (float)((const int32_t *)raw)[i];
    default:
      return ((const float *)raw)[i];
  }
}

/* Reads a tensor's device value (contiguous, its dtype) into a malloc'd buffer. */
static vkf_status device_value(vkf_runner *r, const vkf_graph *g, vkf_value v, void **out) {
  size_t size = vkf_tensor_size(vkf_graph_tensor(g, v));
  *out = malloc(size + 16);
  if (!*out) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "VKF_CHECK: %zu bytes", size);
  vkf_status st = vkf_runner_get(r, v, *out, size);
  if (st) {
    free(*out);
    *out = NULL;
  }
  return st;
}

/* Gives the interpreter the device's value of every tensor node `n` reads (through its base). */
static vkf_status feed_inputs(vkf_runner *r, const vkf_graph *g, vkf_interp *in,
                              const vkf_node *n) {
  for (uint32_t s = 0; s < n->input_count; s++) {
    if (!vkf_value_valid(n->inputs[s])) continue;
    vkf_value base = vkf_graph_tensor(g, n->inputs[s])->base;
    const vkf_tensor *b = vkf_graph_tensor(g, base);
    if (b->role == VKF_ROLE_CONSTANT && b->data) continue; /* read in place by the interpreter */
    void *data = NULL;
    VKF_RETURN_IF_ERROR(device_value(r, g, base, &data));
    vkf_status st = vkf_interp_set(in, base, data, vkf_tensor_size(b));
    free(data);
    VKF_RETURN_IF_ERROR(st);
  }
  return VKF_OK;
}

vkf_status vkf_check_run(vkf_runner *r, const vkf_graph *g, const vkf_check_options *options,
                         vkf_check_report *out_report) {
  vkf_check_report rep = {0};
  if (out_report) *out_report = rep;
  vkf_interp *in = NULL;
  VKF_RETURN_IF_ERROR(vkf_interp_create(g, &in));
  vkf_status st = VKF_OK;
  uint32_t count = vkf_graph_node_count(g);
  for (uint32_t i = 0; i < count && !st; i++) {
    const vkf_node *n = vkf_graph_node(g, i);
    const vkf_tensor *t = vkf_graph_tensor(g, n->output);
    st = feed_inputs(r, g, in, n);
    if (!st) st = vkf_interp_run_node(in, i);
    if (st || (vkf_op_flags(n->op) & VKF_OPF_VIEW) || t->base.id != n->output.id) continue;
    size_t elems = (size_t)vkf_tensor_element_count(t);
    float *ref = malloc(elems * sizeof *ref + 16);
    void *dev = NULL;
    st = ref ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "VKF_CHECK");
    if (!st) st = vkf_interp_get_f32(in, n->output, ref, elems);
    if (!st) st = device_value(r, g, n->output, &dev);
    if (!st) {
      double atol = options && options->atol > 0 ? options->atol
                    : t->dtype == VKF_F16        ? 2e-3
                                                 : 1e-4;
      double rtol = options && options->rtol > 0 ? options->rtol
                    : t->dtype == VKF_F16        ? 1e-2
                                                 : 1e-3;
      double worst = 0, worst_err = 0;
      size_t at = 0;
      for (size_t e = 0; e < elems; e++) {
        double d = load(dev, t->dtype, e), ref_e = ref[e];
        double err = fabs(d - ref_e);
        /* NaN on either side, or an infinity on one only, is always a mismatch. */
        double ratio =
            (isnan(d) || isnan(ref_e) || (isinf(d) != isinf(ref_e)))
                ? INFINITY
                : (isinf(d) ? (d == ref_e ? 0 : INFINITY) : err / (atol + rtol * fabs(ref_e)));
        if (ratio > worst || (e == 0 && ratio == worst)) worst = ratio, worst_err = err, at = e;
      }
      rep.nodes_checked++;
      if (worst > rep.worst_ratio || !rep.worst_node)
        rep.worst_ratio = worst, rep.worst_node = n->name, rep.worst_error = worst_err;
      if (worst > 1) {
        char shape[96];
        vkf_shape_format(t->rank, t->shape, shape, sizeof shape);
        st = vkf_status_make(VKF_STATUS_MISMATCH,
                             "VKF_CHECK: node \"%s\" (%s %s %s) diverges from the interpreter: max "
                             "|device - reference| %.3g at element %zu (device %.9g, reference "
                             "%.9g; atol %g rtol %g); %u earlier node(s) agreed",
                             n->name, vkf_op_name(n->op), shape, vkf_dtype_name(t->dtype),
                             worst_err, at, (double)load(dev, t->dtype, at), (double)ref[at], atol,
                             rtol, rep.nodes_checked - 1);
      }
    }
    free(dev);
    free(ref);
  }
  vkf_interp_destroy(in);
  if (out_report) *out_report = rep;
  return st;
}
