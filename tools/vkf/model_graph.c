/* Chooses the model builder from config.json's model_type and builds the graph. */
#include "tools/vkf/model_graph.h"

#include <stdio.h>
#include <string.h>

#include "models/arch/bert.h"
#include "models/arch/vit.h"
#include "models/formats/hf_config.h"

static void destroy_vit(void *model) { vkf_vit_destroy(model); }
static void destroy_bert(void *model) { vkf_bert_destroy(model); }

vkf_status vkf_cli_model_graph_build(const char *model_dir,
                                     const vkf_cli_model_graph_options *options,
                                     vkf_cli_model_graph *out) {
  memset(out, 0, sizeof *out);
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", model_dir);
  vkf_hf_config config;
  VKF_RETURN_IF_ERROR(vkf_hf_config_load(path, &config));
  char type[64];
  snprintf(type, sizeof type, "%s", config.model_type);
  vkf_hf_config_release(&config);
  if (!strcmp(type, "vit") || !strcmp(type, "deit")) {
    vkf_vit_model *model = NULL;
    VKF_RETURN_IF_ERROR(vkf_vit_load(model_dir, &model));
    vkf_vit_build_options vo = {.batch = options->batch, .dtype = options->dtype};
    vkf_vit_graph vg;
    vkf_status st = vkf_vit_build(model, &vo, &vg);
    if (st) {
      vkf_vit_destroy(model);
      return st;
    }
    out->graph = vg.graph;
    out->model = model;
    out->destroy = destroy_vit;
    return VKF_OK;
  }
  if (!strcmp(type, "bert")) {
    vkf_bert_model *model = NULL;
    VKF_RETURN_IF_ERROR(vkf_bert_load(model_dir, &model));
    vkf_bert_build_options bo = {.batch = options->batch,
                                 .seq_len = options->seq_len ? options->seq_len : 128,
                                 .dtype = options->dtype};
    vkf_bert_graph bg;
    vkf_status st = vkf_bert_build(model, &bo, &bg);
    if (st) {
      vkf_bert_destroy(model);
      return st;
    }
    out->graph = bg.graph;
    out->model = model;
    out->destroy = destroy_bert;
    return VKF_OK;
  }
  return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: model_type \"%s\" has no builder (vit, deit, bert)", path, type);
}

void vkf_cli_model_graph_free(vkf_cli_model_graph *mg) {
  vkf_graph_destroy(mg->graph);
  if (mg->destroy) mg->destroy(mg->model);
  memset(mg, 0, sizeof *mg);
}
