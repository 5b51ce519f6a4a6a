/* Graph dumps for people and tools: a stable text form (golden-tested), Graphviz DOT (renders
 * with `dot -Tsvg`) and JSON. Each shows node names, ops, attributes, shapes, dtypes, views and,
 * when the graph has a valid memory plan, every tensor's arena offset and size. */
#ifndef VKF_GRAPH_DUMP_H
#define VKF_GRAPH_DUMP_H

#include <stddef.h>
#include <stdio.h>

#include "graph/ir/graph.h"

/* Each writes the whole graph to `f`; a write error is VKF_STATUS_IO. */
vkf_status vkf_dump_text(const vkf_graph *graph, FILE *f);
vkf_status vkf_dump_dot(const vkf_graph *graph, FILE *f);
vkf_status vkf_dump_json(const vkf_graph *graph, FILE *f);
/* Writes <dir>/<stem>.txt, <dir>/<stem>.dot and <dir>/<stem>.json. */
vkf_status vkf_dump_files(const vkf_graph *graph, const char *dir, const char *stem);

/* The node's attributes as "key=value ..." text ("" when it has none); used by all three. */
void vkf_dump_format_attrs(const vkf_graph *graph, const vkf_node *node, char *buf,
                           size_t buf_size);

#endif
