/* Prints the op table with what `vkf op` takes for each op (tools/vkf/op_list.h). */
#include "tools/vkf/op_list.h"

#include <string.h>

#include "graph/ir/graph.h"
#include "tools/vkf/op_attrs.h"

static const char *type_name(vkf_op_attr_type t) {
  switch (t) {
    case VKF_ATTR_INT:
      return "int";
    case VKF_ATTR_FLOAT:
      return "float";
    case VKF_ATTR_INTS:
      return "ints";
    case VKF_ATTR_CHOICE:
      return "choice";
    case VKF_ATTR_TEXT:
      return "text";
  }
  return "?";
}

static void print_op(FILE *f, vkf_op op) {
  const char *name = vkf_op_name(op);
  const vkf_op_spec *spec = vkf_op_spec_find(name);
  uint32_t lo = vkf_op_min_inputs(op), hi = vkf_op_max_inputs(op);
  fprintf(f, "%s (graph inputs %u", name, lo);
  if (hi != lo) fprintf(f, "..%u", hi);
  fprintf(f, ")%s\n",
          spec ? "" : ": graph-internal (made by passes or model builders), not run by vkf op");
  if (!spec) return;
  fprintf(f, "  inputs: %s\n", spec->inputs);
  if (!spec->attrs[0].key) fprintf(f, "  attributes: none\n");
  for (int i = 0; i < VKF_OP_MAX_SPEC_ATTRS && spec->attrs[i].key; i++) {
    const vkf_op_attr_spec *a = &spec->attrs[i];
    char range[96];
    if (a->range)
      snprintf(range, sizeof range, "%s", a->range);
    else
      snprintf(range, sizeof range, "[%g, %g]", a->lo, a->hi);
    fprintf(f, "  --attr %s=%s  %s; default %s: %s\n", a->key, type_name(a->type), range,
            a->fallback, a->meaning);
  }
}

/* The composites vkf op builds from table ops. */
static void print_composite(FILE *f, const char *name, const char *what) {
  const vkf_op_spec *spec = vkf_op_spec_find(name);
  fprintf(f, "%s (composite: %s)\n  inputs: %s\n", name, what, spec->inputs);
  for (int i = 0; i < VKF_OP_MAX_SPEC_ATTRS && spec->attrs[i].key; i++) {
    const vkf_op_attr_spec *a = &spec->attrs[i];
    fprintf(f, "  --attr %s=%s  [%g, %g]; default %s: %s\n", a->key, type_name(a->type), a->lo,
            a->hi, a->fallback, a->meaning);
  }
}

static const char *const POOLING =
    "Nadaraya-Watson with a Gaussian kernel, softmax(-|q - k|^2 / (2 sigma^2)) v, run as attention";

void vkf_op_list_print(FILE *f) {
  for (int op = 0; op < VKF_OP_COUNT; op++) print_op(f, (vkf_op)op);
  print_composite(f, "attention_pooling", POOLING);
}

int vkf_op_list_print_one(FILE *f, const char *name) {
  if (!strcmp(name, "attention_pooling")) {
    print_composite(f, name, POOLING);
    return 1;
  }
  for (int op = 0; op < VKF_OP_COUNT; op++)
    if (!strcmp(vkf_op_name((vkf_op)op), name)) {
      print_op(f, (vkf_op)op);
      return 1;
    }
  return 0;
}
