/* `vkf op --list` and `vkf op NAME --help`: every op of the op table (graph/ir/ops.def) with the
 * inputs and attributes `vkf op` takes for it (tools/vkf/op_attrs.c). */
#ifndef VKF_TOOLS_VKF_OP_LIST_H
#define VKF_TOOLS_VKF_OP_LIST_H

#include <stdio.h>

/* Every op of the table, runnable ones with their inputs and attributes. */
void vkf_op_list_print(FILE *f);
/* One op; 0 when `name` is not in the op table. */
int vkf_op_list_print_one(FILE *f, const char *name);

#endif
