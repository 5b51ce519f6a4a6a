/* Builds the graph of any supported checkpoint folder (dispatch on config.json's model_type), for
 * subcommands that work on "a model" generically (dump). */
#ifndef VKF_TOOLS_MODEL_GRAPH_H
#define VKF_TOOLS_MODEL_GRAPH_H

#include "graph/ir/graph.h"

typedef struct vkf_cli_model_graph_options {
  int64_t batch;   /* 0: 1 */
  int64_t seq_len; /* text models: tokens per sequence; 0: 128 */
  vkf_dtype dtype; /* VKF_F32 (default) or VKF_F16 */
} vkf_cli_model_graph_options;

typedef struct vkf_cli_model_graph {
  vkf_graph *graph;
  void *model;                 /* the loaded checkpoint, kept alive: constants point into it */
  void (*destroy)(void *model);
} vkf_cli_model_graph;

vkf_status vkf_cli_model_graph_build(const char *model_dir,
                                     const vkf_cli_model_graph_options *options,
                                     vkf_cli_model_graph *out);
void vkf_cli_model_graph_free(vkf_cli_model_graph *mg);

#endif
