/* `vkf op sparse_attention`: the layout from --attr pattern=... (graph/ir/sparse_layout.h's
 * pattern text), --attr layout=FILE.npy (a dense 0/1 block table [L, Nqb, Nkb]) or explicit CSR
 * tables (--in rows=R.npy --in cols=C.npy [--in masks=M.npy]), then the node. */
#ifndef VKF_TOOLS_VKF_OP_SPARSE_H
#define VKF_TOOLS_VKF_OP_SPARSE_H

#include "graph/ir/graph.h"
#include "models/formats/npy.h"
#include "tools/vkf/op_attrs.h"

typedef struct vkf_op_sparse_inputs {
  vkf_value q, k, v, key_bias;
  const vkf_npy_array *rows, *cols, *masks; /* explicit tables, NULL when not given */
  const char *rows_path, *cols_path, *masks_path;
} vkf_op_sparse_inputs;

/* Builds the node; the layout tables live in the graph's arena. VKF_NO_VALUE with *out_err on a
 * bad attribute, file or layout (one line naming it), or a sticky graph error. */
vkf_value vkf_op_build_sparse(vkf_graph *g, const vkf_op_attrs *attrs,
                              const vkf_op_sparse_inputs *in, vkf_status *out_err);

#endif
