/* The embedding batch: tokenize and pad, then the sentence_embedding graph for any row count. */
#include "runtime/text_embed.h"

#include <stdlib.h>

#include "runtime/model_batch.h"
#include "runtime/model_forward.h"

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

/* Every text's ids (special tokens added), cut to `max_len` keeping the closing token. */
static vkf_status tokenize_all(const vkf_text_tokenizer *tok, const char *const *texts,
                               int64_t count, size_t max_len, int32_t **ids, size_t *lens) {
  for (int64_t i = 0; i < count; i++) {
    VKF_RETURN_IF_ERROR(vkf_text_tokenizer_encode(tok, texts[i], 1, &ids[i], &lens[i]));
    if (!lens[i])
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "text %lld has no tokens",
                             (long long)i);
    if (lens[i] > max_len) {
      ids[i][max_len - 1] = ids[i][lens[i] - 1];
      lens[i] = max_len;
    }
  }
  return VKF_OK;
}

/* Pools h [count, len, dim] over each row's mask into e [count, dim]. */
static void pool(const float *h, const int32_t *mask, int64_t count, int64_t len, int64_t dim,
                 vkf_embed_pooling pooling, float *e) {
  for (int64_t i = 0; i < count; i++) {
    float *out = e + i * dim;
    if (pooling == VKF_POOL_CLS) {
      for (int64_t d = 0; d < dim; d++) out[d] = h[i * len * dim + d];
      continue;
    }
    double n = 0;
    for (int64_t d = 0; d < dim; d++) out[d] = 0;
    for (int64_t t = 0; t < len; t++) {
      if (!mask[i * len + t]) continue;
      n += 1;
      for (int64_t d = 0; d < dim; d++) out[d] += h[(i * len + t) * dim + d];
    }
    for (int64_t d = 0; d < dim; d++) out[d] = (float)(out[d] / (n > 0 ? n : 1));
  }
}

vkf_status vkf_rt_embed_pooled(vkf_device *device, vkf_model *model, const vkf_text_tokenizer *tok,
                               const char *const *texts, int64_t count, vkf_dtype dtype,
                               vkf_embed_pooling pooling, const char *tool, float **out_e,
                               size_t **out_tokens) {
  *out_e = NULL;
  if (out_tokens) *out_tokens = NULL;
  int ids_in = vkf_model_find_input(model, "input_ids");
  int mask_in = vkf_model_find_input(model, "attention_mask");
  int hidden_out = vkf_model_find_output(model, "last_hidden_state");
  if (count < 1) return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "no text to embed");
  if (ids_in < 0 || hidden_out < 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s has no input_ids / last_hidden_state",
                           vkf_model_dir(model), vkf_model_architecture(model));
  const vkf_model_io *io = vkf_model_input(model, (uint32_t)ids_in);
  size_t max_len = io->exact_seq ? (size_t)io->exact_seq : (size_t)io->max_seq, len = 0;
  int64_t dim = vkf_model_output(model, (uint32_t)hidden_out)->shape[2];
  int32_t **each = calloc((size_t)count, sizeof *each);
  size_t *lens = calloc((size_t)count, sizeof *lens);
  vkf_status st = each && lens && max_len >= 2
                      ? tokenize_all(tok, texts, count, max_len, each, lens)
                      : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%lld texts", (long long)count);
  for (int64_t i = 0; !st && i < count; i++) len = lens[i] > len ? lens[i] : len;
  if (io->exact_seq) len = max_len; /* the checkpoint fixes the length (Nystromformer) */
  int32_t *ids = st ? NULL : calloc((size_t)count * len, sizeof *ids);
  int32_t *mask = st ? NULL : calloc((size_t)count * len, sizeof *mask);
  float *e = st ? NULL : malloc((size_t)(count * dim) * sizeof *e);
  if (!st && (!ids || !mask || !e))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%lld texts", (long long)count);
  for (int64_t i = 0; !st && i < count; i++)
    for (size_t t = 0; t < lens[i]; t++) ids[i * len + t] = each[i][t], mask[i * len + t] = 1;
  vkf_model_array in[2] = {
      {.name = "input_ids", .dtype = VKF_I32, .rank = 2, .shape = {count, (int64_t)len},
       .data = ids},
      {.name = "attention_mask", .dtype = VKF_I32, .rank = 2, .shape = {count, (int64_t)len},
       .data = mask}};
  const char *want[1] = {"last_hidden_state"};
  vkf_rt_forward f = {0};
  if (!st) st = vkf_rt_forward_prepare(&f, model, dtype, in, mask_in >= 0 ? 2 : 1, want, 1);
  if (!st) st = vkf_rt_forward_run(&f, tool, device);
  uint32_t rank = 0;
  int64_t shape[VKF_MAX_DIMS];
  if (!st)
    pool(vkf_rt_forward_output(&f, 0, &rank, shape), mask, count, (int64_t)len, dim, pooling, e);
  vkf_rt_forward_release(&f);
  for (int64_t i = 0; each && i < count; i++) free(each[i]);
  free(each);
  free(ids);
  free(mask);
  if (st) {
    free(e);
    free(lens);
    return st;
  }
  *out_e = e;
  if (out_tokens)
    *out_tokens = lens;
  else
    free(lens);
  return VKF_OK;
}
