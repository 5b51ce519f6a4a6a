/* The beam loop: prompts expanded to batch · num_beams rows, prefill, then step / reorder / decode
 * until the beam search says it is over, then its finalize. */
#include "runtime/generate_beam.h"

#include <stdlib.h>
#include <string.h>

#include "models/generate/sampling.h"
#include "runtime/kv_reorder.h"

typedef struct beam_run {
  vkf_gen_backend engine;
  vkf_kv_reorder *reorder;
  vkf_beam_search *search;
  int32_t *ids;       /* [rows, longest]: right-padded prompts for the prefill */
  int64_t *lens;      /* [rows] */
  int64_t *padded;    /* [batch, longest]: left-padded prompts for the beam search */
  int32_t *tokens;    /* [rows] */
  int64_t *positions; /* [rows] */
} beam_run;

static void release(beam_run *b) {
  vkf_beam_search_destroy(b->search);
  vkf_kv_reorder_destroy(b->reorder);
  vkf_gen_backend_close(&b->engine);
  free(b->ids);
  free(b->lens);
  free(b->padded);
  free(b->tokens);
  free(b->positions);
}

/* The rows of both layouts. */
static vkf_status layout(beam_run *b, const vkf_gen_beam_request *q, int64_t longest) {
  const int64_t nb = q->beam.num_beams, rows = q->batch * nb;
  b->ids = malloc((size_t)(rows * longest) * sizeof *b->ids);
  b->lens = malloc((size_t)rows * sizeof *b->lens);
  b->padded = malloc((size_t)(q->batch * longest) * sizeof *b->padded);
  b->tokens = malloc((size_t)rows * sizeof *b->tokens);
  b->positions = malloc((size_t)rows * sizeof *b->positions);
  if (!b->ids || !b->lens || !b->padded || !b->tokens || !b->positions)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "beam search rows");
  if (q->beam.pad_token_id < 0)
    for (int64_t s = 0; s < q->batch; s++)
      if (q->prompt_lens[s] != longest)
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                               "prompts of different lengths need a pad_token_id (or an "
                               "eos_token_id) in the generation config to pad them with");
  for (int64_t s = 0; s < q->batch; s++) {
    const int64_t n = q->prompt_lens[s], pad = longest - n;
    for (int64_t t = 0; t < longest; t++)
      b->padded[s * longest + t] = t < pad ? q->beam.pad_token_id : q->prompts[s][t - pad];
    for (int64_t j = 0; j < nb; j++) {
      const int64_t r = s * nb + j;
      b->lens[r] = n;
      for (int64_t t = 0; t < longest; t++)
        b->ids[r * longest + t] = (int32_t)q->prompts[s][t < n ? t : n - 1];
    }
  }
  return VKF_OK;
}

static vkf_status results(beam_run *b, const vkf_gen_beam_request *q, int64_t longest,
                          vkf_gen_beam_result *out) {
  vkf_beam_result res;
  VKF_RETURN_IF_ERROR(vkf_beam_search_finalize(b->search, &res));
  const int64_t keep = res.count / q->batch;
  for (int64_t s = 0; s < q->batch; s++) {
    const int64_t i = s * keep, n = res.lengths[i] - longest;
    out[s].count = n > 0 ? n : 0;
    out[s].score = res.scores[i];
    out[s].generated = malloc((size_t)(out[s].count + 1) * sizeof *out[s].generated);
    if (!out[s].generated) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "beam results");
    memcpy(out[s].generated, res.sequences + i * res.length + longest,
           (size_t)out[s].count * sizeof *out[s].generated);
  }
  return VKF_OK;
}

vkf_status vkf_gen_beam_run(vkf_device *device, const vkf_model_generate *model,
                            const vkf_gen_beam_request *q, vkf_gen_beam_result *out,
                            int64_t *out_steps) {
  *out_steps = 0;
  memset(out, 0, (size_t)q->batch * sizeof *out);
  int64_t longest = 0;
  for (int64_t s = 0; s < q->batch; s++)
    if (q->prompt_lens[s] > longest) longest = q->prompt_lens[s];
  vkf_beam_options bo = q->beam;
  bo.batch = q->batch;
  bo.vocab_size = model->vocab;
  bo.prompt_len = longest;
  bo.max_length = longest + q->max_new;
  const int64_t rows = q->batch * bo.num_beams;
  beam_run b = {0};
  vkf_status s = bo.num_beams >= 2 && bo.num_beams <= 1024 && q->batch * bo.num_beams <= 4096
                     ? VKF_OK
                     : vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                       "%lld beams of %lld prompts (2..1024 beams, 4096 rows)",
                                       (long long)bo.num_beams, (long long)q->batch);
  if (!s) s = layout(&b, q, longest);
  if (!s) s = vkf_beam_search_create(&bo, b.padded, &b.search);
  vkf_gen_backend_options eo = {.rows = rows,
                                .prompt_len = longest,
                                .capacity = q->capacity,
                                .dtype = q->dtype,
                                .cache_dtype = q->cache_dtype,
                                .chunk = q->chunk,
                                .sources = q->batch,
                                .source_ids = q->source_ids,
                                .source_lens = q->source_lens,
                                .source_pad_id = q->source_pad_id};
  if (!s) s = vkf_gen_backend_open(device, model, &eo, &b.engine);
  if (!s && !b.engine.reorder)
    s = vkf_kv_reorder_create(device, b.engine.cache(b.engine.impl), &b.reorder);
  const float *logits = NULL;
  if (!s) s = b.engine.prefill(b.engine.impl, b.ids, b.lens, &logits);
  for (int64_t k = 0; !s; k++) {
    bool finished = false;
    s = vkf_sampling_check_logits(logits, (size_t)rows, (size_t)bo.vocab_size, k);
    if (!s) s = vkf_beam_search_step(b.search, logits, &finished);
    if (s || finished) break;
    const int64_t *beam_rows = NULL, *tokens = NULL;
    vkf_beam_search_next(b.search, &beam_rows, &tokens);
    s = b.engine.reorder ? b.engine.reorder(b.engine.impl, beam_rows)
                         : vkf_kv_reorder_run(b.reorder, beam_rows);
    for (int64_t r = 0; r < rows; r++) {
      b.tokens[r] = (int32_t)tokens[r];
      b.positions[r] = b.lens[r] + k; /* token k of the row goes right after its prompt */
    }
    if (!s) s = b.engine.step(b.engine.impl, b.tokens, b.positions, &logits);
    (*out_steps)++;
  }
  if (!s) s = results(&b, q, longest, out);
  release(&b);
  if (s)
    for (int64_t i = 0; i < q->batch; i++) free(out[i].generated), out[i].generated = NULL;
  return s;
}
