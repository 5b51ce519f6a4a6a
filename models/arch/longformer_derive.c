/* The host side of a Longformer run: what Hugging Face computes from the values of the inputs
 * (RoBERTa positions, the merged attention mask's global tokens, their indices and the local
 * attention's key masks) becomes small derived inputs, so the graph itself only depends on the
 * most global tokens in a row. */
#include <stdlib.h>

#include "models/arch/longformer.h"
#include "models/arch/longformer_internal.h"

static void *alloc_part(vkf_longformer_derived *out, int part, size_t count) {
  out->size[part] = count * 4;
  out->data[part] = malloc(out->size[part] + 1);
  return out->data[part];
}

/* LongformerForQuestionAnswering's default global mask (_compute_global_attention_mask with
 * before_sep_token): the tokens before each row's question end. transformers finds the sep tokens
 * of the whole batch in row-major order, asserts there are 3 · B of them and takes entry 3b as row
 * b's end (a row with 4 seps thus lends one to the next row, as it does there). Padding counts. */
static vkf_status question_ends(const vkf_longformer_model *m, const int32_t *ids, int64_t batch,
                                int64_t seq, int64_t **out) {
  int64_t sep = vkf_longformer_config(m)->sep_token_id, found = 0;
  for (int64_t k = 0; k < batch * seq; k++) found += ids[k] == sep;
  if (found != 3 * batch)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "input_ids: %lld rows hold %lld sep tokens (id %lld); "
                           "LongformerForQuestionAnswering needs exactly 3 in every row to make "
                           "the question global, or a global_attention_mask",
                           (long long)batch, (long long)found, (long long)sep);
  int64_t *end = malloc((size_t)batch * sizeof *end + 1);
  if (!end)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "Longformer inputs of %lld rows",
                           (long long)batch);
  for (int64_t k = 0, n = 0; k < batch * seq; k++) {
    if (ids[k] != sep) continue;
    if (n % 3 == 0) end[n / 3] = k % seq; /* the first of each group of three */
    n++;
  }
  *out = end;
  return VKF_OK;
}

/* HF's merged mask at (b, i): attention_mask · (global_attention_mask + 1): 0 padding, 1 local,
 * 2 global (a global flag on a padding position stays padding). Without a global mask,
 * LongformerForSequenceClassification makes the first token global and
 * LongformerForQuestionAnswering the question (qend, the row's question end). */
static int merged(const vkf_longformer_model *m, const int32_t *mask, const int32_t *glob,
                  const int64_t *qend, int64_t seq, int64_t b, int64_t i) {
  int keep = mask ? mask[b * seq + i] : 1;
  int g = glob ? glob[b * seq + i]
          : qend
              ? i < qend[b]
              : vkf_longformer_head_of(m) == VKF_LONGFORMER_HEAD_SEQUENCE_CLASSIFICATION && i == 0;
  return keep * (g + 1);
}

vkf_status vkf_longformer_derive(const vkf_longformer_model *m, const int32_t *ids,
                                 const int32_t *mask, const int32_t *glob, int64_t batch,
                                 int64_t seq, vkf_longformer_derived *out) {
  *out = (vkf_longformer_derived){0};
  const vkf_hf_config *c = vkf_longformer_config(m);
  int64_t pad = c->pad_token_id, np = vkf_longformer_padded_len(m, seq);
  int64_t most = 0, *qend = NULL;
  if (!glob && vkf_longformer_head_of(m) == VKF_LONGFORMER_HEAD_QUESTION_ANSWERING)
    VKF_RETURN_IF_ERROR(question_ends(m, ids, batch, seq, &qend));
  for (int64_t b = 0; b < batch; b++) {
    int64_t count = 0;
    for (int64_t i = 0; i < seq; i++) count += merged(m, mask, glob, qend, seq, b, i) == 2;
    if (count > most) most = count;
  }
  int64_t p = vkf_longformer_prefix_len(most);
  out->global_tokens = most;
  out->count = most ? 4 : 3;
  int32_t *pos = alloc_part(out, VKF_LONGFORMER_POSITION_IDS, (size_t)(batch * seq));
  int32_t *scatter = alloc_part(out, VKF_LONGFORMER_SCATTER_INDEX, (size_t)(batch * np));
  float *bias = alloc_part(out, VKF_LONGFORMER_KEY_BIAS, (size_t)(batch * (p + np)));
  int32_t *gidx = most ? alloc_part(out, VKF_LONGFORMER_GLOBAL_INDEX, (size_t)(batch * p)) : NULL;
  if (!pos || !scatter || !bias || (most && !gidx)) {
    for (int k = 0; k < VKF_LONGFORMER_DERIVED_COUNT; k++) free(out->data[k]);
    *out = (vkf_longformer_derived){0};
    free(qend);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "Longformer inputs of %lld rows",
                           (long long)batch);
  }
  for (int64_t b = 0; b < batch; b++) {
    /* create_position_ids_from_input_ids: cumsum of non-padding ids, padding ids at pad. */
    int64_t run = 0, slot = 0;
    for (int64_t i = 0; i < seq; i++) {
      int is_token = ids[b * seq + i] != pad;
      run += is_token;
      pos[b * seq + i] = (int32_t)(is_token ? run + pad : pad);
    }
    float *kb = bias + b * (p + np);
    for (int64_t i = 0; i < np; i++) {
      int kind = i < seq ? merged(m, mask, glob, qend, seq, b, i) : 0;
      /* HF masks padding and global positions out of the window part (global keys count once,
       * through the prefix). */
      kb[p + i] = kind == 1 ? 0.0f : -VKF_MASKED_SCORE;
      if (kind == 2) gidx[b * p + slot] = (int32_t)i;
      scatter[b * np + i] = (int32_t)(kind == 1 ? i : kind == 2 ? np + slot : np + p);
      slot += kind == 2;
    }
    for (int64_t s = 0; s < p; s++) {
      if (s >= slot) gidx[b * p + s] = 0;
      kb[s] = s < slot ? 0.0f : -VKF_MASKED_SCORE;
    }
  }
  free(qend);
  return VKF_OK;
}
