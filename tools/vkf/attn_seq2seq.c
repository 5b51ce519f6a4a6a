/* The Bahdanau decoder's attention over its source, step by step (attn_seq2seq.h). */
#include "tools/vkf/attn_seq2seq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/arch/seq2seq_attention.h"
#include "models/formats/npy.h"
#include "models/generate/generation_config.h"
#include "runtime/seq2seq_attention_engine.h"
#include "tools/vkf/attn_figure.h"
#include "tools/vkf/cli_args.h"

/* The decoder's first token and its end ids as `vkf generate` takes them: the generation
 * config's decoder_start_token_id, config.json's, then the bos ids; eos from the generation
 * config, else config.json. */
typedef struct decode_ids {
  int64_t start;
  int64_t eos[VKF_GENERATION_MAX_EOS];
  size_t eos_count;
} decode_ids;

static vkf_status decode_ids_of(vkf_model *m, const vkf_hf_config *c, decode_ids *out) {
  vkf_generation_config gc;
  VKF_RETURN_IF_ERROR(vkf_generation_config_load(vkf_model_dir(m), c->vocab_size, &gc));
  out->start = gc.decoder_start_token_id >= 0   ? gc.decoder_start_token_id
               : c->decoder_start_token_id >= 0 ? c->decoder_start_token_id
               : gc.bos_token_id >= 0           ? gc.bos_token_id
                                                : c->bos_token_id;
  if (out->start < 0 || out->start >= c->vocab_size)
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "%s: no decoder_start_token_id (nor bos_token_id) in the vocabulary "
                           "to start the decoder with",
                           vkf_model_dir(m));
  out->eos_count = gc.eos_token_id_count;
  memcpy(out->eos, gc.eos_token_ids, gc.eos_token_id_count * sizeof *out->eos);
  if (!out->eos_count && c->eos_token_id >= 0) out->eos[out->eos_count++] = c->eos_token_id;
  return VKF_OK;
}

static int is_eos(const decode_ids *d, int64_t id) {
  for (size_t k = 0; k < d->eos_count; k++)
    if (d->eos[k] == id) return 1;
  return 0;
}

static int32_t argmax(const float *v, int64_t n) {
  int64_t best = 0;
  for (int64_t k = 1; k < n; k++)
    if (v[k] > v[best]) best = k; /* the first of equal maxima, as torch.argmax */
  return (int32_t)best;
}

/* Greedy steps from d->start: weights [steps, n] (room for max_steps rows) and the ids each step
 * chose; *out_steps rows filled. */
static vkf_status decode(vkf_device *dev, vkf_s2sa_model *sm, const int64_t *src, int64_t n,
                         const decode_ids *d, int64_t max_steps, float *weights, int64_t *chosen,
                         int64_t *out_steps) {
  const vkf_hf_config *c = vkf_s2sa_config(sm);
  vkf_s2sa_engine *e = NULL;
  *out_steps = 0;
  const int64_t *sources[1] = {src};
  VKF_RETURN_IF_ERROR(vkf_s2sa_engine_create(dev, sm, 1, 1, sources, &n, &e));
  int32_t token = (int32_t)d->start;
  vkf_status st = VKF_OK;
  for (int64_t t = 0; !st && t < max_steps; t++) {
    const float *logits = NULL;
    st = vkf_s2sa_engine_step(e, &token, &logits);
    if (st) break;
    int64_t s_len = 0;
    const float *w = vkf_s2sa_engine_weights(e, &s_len);
    memcpy(weights + t * n, w, (size_t)n * sizeof *weights);
    token = argmax(logits, c->vocab_size);
    chosen[t] = token;
    *out_steps = t + 1;
    if (is_eos(d, token)) break;
  }
  vkf_s2sa_engine_destroy(e);
  return st;
}

static vkf_status save(const vkf_attn_seq2seq_options *o, const float *weights,
                       const int64_t *chosen, int64_t steps, int64_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/attn_%d.npy", o->npy_dir, o->index);
  int64_t shape[2] = {steps, n};
  VKF_RETURN_IF_ERROR(vkf_npy_save(path, VKF_NPY_F32, 2, shape, weights));
  snprintf(path, sizeof path, "%s/attn_%d_ids.npy", o->npy_dir, o->index);
  return vkf_npy_save(path, VKF_NPY_I64, 1, shape, chosen);
}

/* Rows are named by the id each step chose, columns by the source's ids. */
static vkf_status draw(const vkf_attn_seq2seq_options *o, const float *weights,
                       const int64_t *chosen, int64_t steps, const int64_t *src, int64_t n) {
  char(*names)[24] = malloc((size_t)(steps + n) * sizeof *names);
  const char **labels = malloc((size_t)(steps + n) * sizeof *labels);
  vkf_status st = names && labels ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "figure");
  for (int64_t k = 0; !st && k < steps + n; k++) {
    snprintf(names[k], sizeof names[k], "%lld",
             (long long)(k < steps ? chosen[k] : src[k - steps]));
    labels[k] = names[k];
  }
  char path[4096], title[256];
  snprintf(path, sizeof path, "%s/attn_%d_steps.png", o->out_dir, o->index);
  snprintf(title, sizeof title, "greedy decoding: %lld steps over %lld source tokens",
           (long long)steps, (long long)n);
  if (!st)
    st = vkf_attn_matrix_figure(weights, steps, n, labels, labels + steps, title,
                                "step (chosen id)", "source id", path);
  if (!st) printf("%s\n", path);
  free(names);
  free(labels);
  return st;
}

vkf_status vkf_attn_seq2seq(vkf_model *m, vkf_device *dev, const vkf_attn_seq2seq_options *o) {
  vkf_model_attention_maps maps;
  VKF_RETURN_IF_ERROR(vkf_model_attention_maps_facet(m, &maps));
  vkf_s2sa_model *sm = maps.additive;
  if (!sm)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s has no additive attention",
                           vkf_model_architecture(m));
  const vkf_hf_config *c = vkf_s2sa_config(sm);
  int64_t *src = NULL;
  size_t n = 0;
  decode_ids d;
  vkf_status st = vkf_cli_parse_ids("source", o->ids, &src, &n);
  if (!st && (int64_t)n > VKF_S2SA_MAX_SOURCE)
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%zu source ids (1 .. %lld)", n,
                         (long long)VKF_S2SA_MAX_SOURCE);
  for (size_t k = 0; !st && k < n; k++)
    if (src[k] >= c->src_vocab_size)
      st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "source id %lld at %zu is not an id in [0, %lld)", (long long)src[k], k,
                           (long long)c->src_vocab_size);
  if (!st) st = decode_ids_of(m, c, &d);
  float *weights = st ? NULL : malloc((size_t)o->max_steps * n * sizeof *weights);
  int64_t *chosen = st ? NULL : malloc((size_t)o->max_steps * sizeof *chosen);
  if (!st && (!weights || !chosen))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%lld steps over %zu source tokens",
                         (long long)o->max_steps, n);
  int64_t steps = 0;
  if (!st) st = decode(dev, sm, src, (int64_t)n, &d, o->max_steps, weights, chosen, &steps);
  if (!st && o->npy_dir) st = save(o, weights, chosen, steps, (int64_t)n);
  if (!st) st = draw(o, weights, chosen, steps, src, (int64_t)n);
  free(weights);
  free(chosen);
  free(src);
  return st ? vkf_status_annotate(st, "source %d: ", o->index) : VKF_OK;
}
