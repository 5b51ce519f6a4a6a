/* The embedding batch: tokenize and pad, then the sentence_embedding graph for any row count. */
#include "runtime/text_embed.h"

#include <stdlib.h>

#include "runtime/model_batch.h"

typedef struct bert_build {
  vkf_bert_model *model;
  int64_t seq_len;
  vkf_dtype dtype;
} bert_build;

/* Slots: inputs input_ids, attention_mask [rows, seq]; output sentence_embedding [rows, dim]. */
static vkf_status build_rows(void *user, int64_t rows, vkf_batch_graph *out) {
  const bert_build *b = user;
  vkf_bert_build_options bo = {.batch = rows, .seq_len = b->seq_len, .dtype = b->dtype};
  vkf_bert_graph bg;
  *out = (vkf_batch_graph){0};
  VKF_RETURN_IF_ERROR(vkf_bert_build(b->model, &bo, &bg));
  *out = (vkf_batch_graph){.graph = bg.graph,
                           .input_count = 2,
                           .output_count = 1,
                           .inputs = {bg.input_ids, bg.attention_mask},
                           .outputs = {bg.sentence_embedding}};
  return VKF_OK;
}

vkf_status vkf_rt_embed(vkf_device *device, vkf_bert_model *model, const vkf_wordpiece *tok,
                        const char *const *texts, int64_t count, vkf_dtype dtype, const char *tool,
                        float **out_e, size_t **out_tokens) {
  *out_e = NULL;
  if (out_tokens) *out_tokens = NULL;
  if (count < 1) return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "no text to embed");
  size_t max_len = (size_t)vkf_bert_pipeline_of(model)->max_seq_length, len = 0;
  int64_t dim = vkf_bert_config(model)->hidden_size;
  int32_t *ids = malloc((size_t)count * max_len * sizeof *ids);
  int32_t *mask = malloc((size_t)count * max_len * sizeof *mask);
  float *e = malloc((size_t)(count * dim) * sizeof *e);
  size_t *tokens = calloc((size_t)count, sizeof *tokens);
  vkf_status st =
      ids && mask && e && tokens
          ? vkf_wordpiece_encode_batch(tok, texts, (size_t)count, max_len, ids, mask, &len)
          : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%lld texts", (long long)count);
  for (int64_t i = 0; !st && i < count; i++)
    for (size_t j = 0; j < len; j++) tokens[i] += (size_t)mask[(size_t)i * len + j];
  bert_build bb = {.model = model, .seq_len = (int64_t)len, .dtype = dtype};
  size_t in_size = (size_t)count * len * sizeof *ids;
  vkf_batch_input in[2] = {{ids, in_size}, {mask, in_size}};
  vkf_batch_output out = {e, (size_t)(count * dim) * sizeof *e};
  if (!st) st = vkf_rt_batch_run(tool, device, count, build_rows, &bb, in, &out);
  free(ids);
  free(mask);
  if (st) {
    free(e);
    free(tokens);
    return st;
  }
  *out_e = e;
  if (out_tokens)
    *out_tokens = tokens;
  else
    free(tokens);
  return VKF_OK;
}
