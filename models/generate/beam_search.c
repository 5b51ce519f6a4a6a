/* BeamSearchScorer.process / finalize and BeamHypotheses of transformers 4.38.2 over plain arrays.
 * Scores that Python keeps as floats (hypothesis scores, is_done's bounds) are doubles here; the
 * tensors (log-probabilities, beam scores) are float32. */
#include "models/generate/beam_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/generate/sampling.h"
#include "models/generate/torch_topk.h"

/* One finished hypothesis: its ids (without the closing EOS, as Hugging Face stores them). */
typedef struct hyp {
  double score;
  int64_t *ids;
  int64_t len;
} hyp;

/* BeamHypotheses: `beams` keeps Python's list order (appends at the end, deletion in place),
 * which decides ties when finalize sorts. */
typedef struct hyp_list {
  hyp *beams; /* [num_beams + 1] */
  int64_t count;
  double worst;
  bool done;
} hyp_list;

struct vkf_beam_search {
  vkf_beam_options o;
  int64_t rows, len, k;             /* len: current row length; k: topk candidates per source */
  int64_t *ids, *ids_next;          /* [rows, max_length] */
  float *beam_scores, *next_scores; /* [rows] */
  float *scores;                    /* [rows, vocab] */
  vkf_topk_item *topk_scratch;      /* [num_beams · vocab] */
  float *top_values;                /* [k] */
  int64_t *top_indices;             /* [k] */
  int64_t *beam_rows, *tokens;      /* [rows]: the last step's choice */
  hyp_list *hyps;                   /* [batch] */
  bool finished;
  int64_t *eos; /* copies of the borrowed lists */
  int64_t *forced_eos;
  /* finalize's output */
  int64_t *out_sequences, *out_lengths;
  float *out_scores;
};

static bool is_eos(const vkf_beam_search *s, int64_t token) {
  for (size_t i = 0; i < s->o.eos_id_count; i++)
    if (s->eos[i] == token) return true;
  return false;
}

/* ---- BeamHypotheses ---- */

static vkf_status hyp_add(vkf_beam_search *s, hyp_list *h, const int64_t *ids, int64_t len,
                          double sum_logprobs, int64_t generated_len) {
  double score = sum_logprobs / pow((double)generated_len, s->o.length_penalty);
  if (!(h->count < s->o.num_beams || score > h->worst)) return VKF_OK;
  int64_t *copy = malloc((size_t)(len > 0 ? len : 1) * sizeof *copy);
  if (!copy) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "beam search: a hypothesis");
  memcpy(copy, ids, (size_t)len * sizeof *copy);
  h->beams[h->count++] = (hyp){score, copy, len};
  if (h->count > s->o.num_beams) {
    /* sorted((score, index)): the smallest goes (the first of equal scores), the next smallest is
     * the new worst. */
    int64_t lo = 0, second = -1;
    for (int64_t i = 1; i < h->count; i++)
      if (h->beams[i].score < h->beams[lo].score) lo = i;
    for (int64_t i = 0; i < h->count; i++)
      if (i != lo && (second < 0 || h->beams[i].score < h->beams[second].score)) second = i;
    h->worst = h->beams[second].score;
    free(h->beams[lo].ids);
    memmove(&h->beams[lo], &h->beams[lo + 1], (size_t)(h->count - lo - 1) * sizeof *h->beams);
    h->count--;
  } else {
    h->worst = score < h->worst ? score : h->worst;
  }
  return VKF_OK;
}

static bool hyp_is_done(const vkf_beam_search *s, const hyp_list *h, double best_sum_logprobs,
                        int64_t cur_len) {
  if (h->count < s->o.num_beams) return false;
  const double lp = s->o.length_penalty;
  const int64_t prompt = s->o.prompt_len;
  switch (s->o.early_stopping) {
    case VKF_EARLY_STOPPING_TRUE:
      return true;
    case VKF_EARLY_STOPPING_FALSE:
      return h->worst >= best_sum_logprobs / pow((double)(cur_len - prompt), lp);
    case VKF_EARLY_STOPPING_NEVER:
    default: {
      int64_t len = lp > 0.0 ? s->o.max_length - prompt : cur_len - prompt;
      return h->worst >= best_sum_logprobs / pow((double)len, lp);
    }
  }
}

/* ---- create / destroy ---- */

static vkf_status check_token(const char *field, int64_t id, int64_t vocab) {
  if (id < 0 || id >= vocab)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "beam search: %s %lld is outside the vocabulary of %lld", field,
                           (long long)id, (long long)vocab);
  return VKF_OK;
}

static vkf_status check_options(const vkf_beam_options *o) {
  const int64_t n_eos = (int64_t)o->eos_id_count;
  const int64_t per_beam = n_eos + 1 > 2 ? n_eos + 1 : 2;
  if (o->batch < 1 || o->batch > (1 << 20))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam search: batch %lld (1..2^20)",
                           (long long)o->batch);
  if (o->num_beams < 2 || o->num_beams > 1024)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "beam search: num_beams %lld, must be in 2..1024",
                           (long long)o->num_beams);
  if (o->vocab_size < per_beam || o->vocab_size > (1 << 24))
    return vkf_status_make(
        VKF_STATUS_INVALID_ARGUMENT,
        "beam search: a vocabulary of %lld tokens (%lld..2^24 with %lld eos ids)",
        (long long)o->vocab_size, (long long)per_beam, (long long)n_eos);
  if (o->batch * o->num_beams > (1 << 20) ||
      o->batch * o->num_beams * o->vocab_size > ((int64_t)1 << 36))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam search: %lld rows of %lld scores",
                           (long long)(o->batch * o->num_beams), (long long)o->vocab_size);
  if (o->prompt_len < 1 || o->max_length <= o->prompt_len || o->max_length > (1 << 24))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "beam search: max_length %lld must exceed the prompt length %lld",
                           (long long)o->max_length, (long long)o->prompt_len);
  if (!(isfinite(o->length_penalty)))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam search: length_penalty %g",
                           o->length_penalty);
  if (o->early_stopping < VKF_EARLY_STOPPING_FALSE || o->early_stopping > VKF_EARLY_STOPPING_NEVER)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam search: early_stopping %d",
                           (int)o->early_stopping);
  if (o->num_return_sequences < 0 || o->num_return_sequences > o->num_beams)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "beam search: num_return_sequences %lld, must be in 1..num_beams (%lld)",
                           (long long)o->num_return_sequences, (long long)o->num_beams);
  if (o->eos_id_count > 1024 || o->forced_eos_id_count > 1024 || (o->eos_id_count && !o->eos_ids) ||
      (o->forced_eos_id_count && !o->forced_eos_ids))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam search: eos id lists");
  for (size_t i = 0; i < o->eos_id_count; i++)
    VKF_RETURN_IF_ERROR(check_token("eos_token_id", o->eos_ids[i], o->vocab_size));
  for (size_t i = 0; i < o->forced_eos_id_count; i++)
    VKF_RETURN_IF_ERROR(check_token("forced_eos_token_id", o->forced_eos_ids[i], o->vocab_size));
  if (o->pad_token_id != -1)
    VKF_RETURN_IF_ERROR(check_token("pad_token_id", o->pad_token_id, o->vocab_size));
  if (o->forced_bos_token_id != -1)
    VKF_RETURN_IF_ERROR(check_token("forced_bos_token_id", o->forced_bos_token_id, o->vocab_size));
  if (o->min_length < 0 || o->min_new_tokens < 0 || o->no_repeat_ngram_size < 0 ||
      !(o->repetition_penalty >= 0) || !isfinite(o->repetition_penalty))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "beam search: min_length %lld, min_new_tokens %lld, "
                           "no_repeat_ngram_size %lld, repetition_penalty %g",
                           (long long)o->min_length, (long long)o->min_new_tokens,
                           (long long)o->no_repeat_ngram_size, o->repetition_penalty);
  return VKF_OK;
}

static void *alloc_array(size_t count, size_t size, bool *failed) {
  void *p = calloc(count ? count : 1, size);
  if (!p) *failed = true;
  return p;
}

vkf_status vkf_beam_search_create(const vkf_beam_options *options, const int64_t *prompt_ids,
                                  vkf_beam_search **out) {
  VKF_ASSERT(options && prompt_ids && out);
  *out = NULL;
  VKF_RETURN_IF_ERROR(check_options(options));
  const vkf_beam_options *o = options;
  for (int64_t i = 0; i < o->batch * o->prompt_len; i++)
    if (prompt_ids[i] < 0 || prompt_ids[i] >= o->vocab_size)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "beam search: prompt %lld, position %lld: id %lld is outside the "
                             "vocabulary of %lld",
                             (long long)(i / o->prompt_len), (long long)(i % o->prompt_len),
                             (long long)prompt_ids[i], (long long)o->vocab_size);
  vkf_beam_search *s = calloc(1, sizeof *s);
  if (!s) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "beam search");
  s->o = *o;
  if (!s->o.num_return_sequences) s->o.num_return_sequences = 1;
  s->rows = o->batch * o->num_beams;
  s->len = o->prompt_len;
  int64_t n_eos = (int64_t)o->eos_id_count;
  s->k = (n_eos + 1 > 2 ? n_eos + 1 : 2) * o->num_beams;
  const size_t rows = (size_t)s->rows, vocab = (size_t)o->vocab_size, ml = (size_t)o->max_length;
  bool failed = false;
  s->ids = alloc_array(rows * ml, sizeof *s->ids, &failed);
  s->ids_next = alloc_array(rows * ml, sizeof *s->ids_next, &failed);
  s->beam_scores = alloc_array(rows, sizeof *s->beam_scores, &failed);
  s->next_scores = alloc_array(rows, sizeof *s->next_scores, &failed);
  s->scores = alloc_array(rows * vocab, sizeof *s->scores, &failed);
  s->topk_scratch = alloc_array((size_t)o->num_beams * vocab, sizeof *s->topk_scratch, &failed);
  s->top_values = alloc_array((size_t)s->k, sizeof *s->top_values, &failed);
  s->top_indices = alloc_array((size_t)s->k, sizeof *s->top_indices, &failed);
  s->beam_rows = alloc_array(rows, sizeof *s->beam_rows, &failed);
  s->tokens = alloc_array(rows, sizeof *s->tokens, &failed);
  s->hyps = alloc_array((size_t)o->batch, sizeof *s->hyps, &failed);
  s->eos = alloc_array(o->eos_id_count, sizeof *s->eos, &failed);
  s->forced_eos = alloc_array(o->forced_eos_id_count, sizeof *s->forced_eos, &failed);
  for (int64_t b = 0; !failed && b < o->batch; b++) {
    s->hyps[b].beams = alloc_array((size_t)o->num_beams + 1, sizeof(hyp), &failed);
    s->hyps[b].worst = 1e9;
  }
  if (failed) {
    vkf_beam_search_destroy(s);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "beam search of %lld rows",
                           (long long)s->rows);
  }
  if (o->eos_id_count) memcpy(s->eos, o->eos_ids, o->eos_id_count * sizeof *s->eos);
  if (o->forced_eos_id_count)
    memcpy(s->forced_eos, o->forced_eos_ids, o->forced_eos_id_count * sizeof *s->forced_eos);
  s->o.eos_ids = s->eos;
  s->o.forced_eos_ids = s->forced_eos;
  for (int64_t r = 0; r < s->rows; r++) {
    memcpy(s->ids + r * o->max_length, prompt_ids + (r / o->num_beams) * o->prompt_len,
           (size_t)o->prompt_len * sizeof *s->ids);
    s->beam_scores[r] = r % o->num_beams ? -1e9f : 0.0f;
  }
  *out = s;
  return VKF_OK;
}

void vkf_beam_search_destroy(vkf_beam_search *s) {
  if (!s) return;
  for (int64_t b = 0; s->hyps && b < s->o.batch; b++) {
    for (int64_t i = 0; s->hyps[b].beams && i < s->hyps[b].count; i++)
      free(s->hyps[b].beams[i].ids);
    free(s->hyps[b].beams);
  }
  free(s->hyps);
  free(s->ids);
  free(s->ids_next);
  free(s->beam_scores);
  free(s->next_scores);
  free(s->scores);
  free(s->topk_scratch);
  free(s->top_values);
  free(s->top_indices);
  free(s->beam_rows);
  free(s->tokens);
  free(s->eos);
  free(s->forced_eos);
  free(s->out_sequences);
  free(s->out_lengths);
  free(s->out_scores);
  free(s);
}

/* ---- one step ---- */

/* torch's log_softmax over the last dim: (x - max) - log(sum(exp(x - max))), in float32. */
static void log_softmax(const float *x, size_t n, float *out) {
  float max = x[0];
  for (size_t i = 1; i < n; i++)
    if (x[i] > max || isnan(x[i])) max = x[i];
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += exp((double)(x[i] - max));
  const float lse = (float)log(sum);
  for (size_t i = 0; i < n; i++) out[i] = (x[i] - max) - lse;
}

/* The processors after repetition penalty and no-repeat n-grams, on one row of length `len`. */
static void length_processors(const vkf_beam_search *s, int64_t len, float *row) {
  const vkf_beam_options *o = &s->o;
  const int64_t vocab = o->vocab_size;
  if (o->eos_id_count && o->min_length > 0 && len < o->min_length)
    for (size_t i = 0; i < o->eos_id_count; i++) row[o->eos_ids[i]] = -INFINITY;
  if (o->eos_id_count && o->min_new_tokens > 0 && len - o->prompt_len < o->min_new_tokens)
    for (size_t i = 0; i < o->eos_id_count; i++) row[o->eos_ids[i]] = -INFINITY;
  if (o->forced_bos_token_id >= 0 && len == 1) {
    for (int64_t v = 0; v < vocab; v++) row[v] = -INFINITY;
    row[o->forced_bos_token_id] = 0;
  }
  if (o->forced_eos_id_count && len == o->max_length - 1) {
    for (int64_t v = 0; v < vocab; v++) {
      bool keep = false;
      for (size_t i = 0; i < o->forced_eos_id_count; i++) keep |= o->forced_eos_ids[i] == v;
      if (!keep) row[v] = -INFINITY;
    }
    for (size_t i = 0; i < o->forced_eos_id_count; i++) row[o->forced_eos_ids[i]] = 0;
  }
}

/* BeamSearchScorer.process for source b: fills the next rows' scores, tokens and sources. */
static vkf_status process_source(vkf_beam_search *s, int64_t b, float *next_scores) {
  const int64_t nb = s->o.num_beams, vocab = s->o.vocab_size, cur_len = s->len + 1;
  hyp_list *h = &s->hyps[b];
  if (h->done) {
    if (s->o.pad_token_id < 0)
      return vkf_status_make(VKF_STATUS_INTERNAL,
                             "beam search: source %lld finished before max_length and there is no "
                             "pad_token_id to fill its beams with",
                             (long long)b);
    for (int64_t j = 0; j < nb; j++) {
      next_scores[b * nb + j] = 0;
      s->tokens[b * nb + j] = s->o.pad_token_id;
      s->beam_rows[b * nb + j] = 0;
    }
    return VKF_OK;
  }
  vkf_torch_topk(s->scores + b * nb * vocab, (size_t)(nb * vocab), (size_t)s->k, s->topk_scratch,
                 s->top_values, s->top_indices);
  int64_t beam = 0;
  for (int64_t rank = 0; rank < s->k && beam < nb; rank++) {
    const int64_t token = s->top_indices[rank] % vocab;
    const int64_t row = b * nb + s->top_indices[rank] / vocab;
    if (is_eos(s, token)) {
      if (rank >= nb) continue;
      VKF_RETURN_IF_ERROR(hyp_add(s, h, s->ids + row * s->o.max_length, s->len,
                                  (double)s->top_values[rank], cur_len - s->o.prompt_len));
    } else {
      next_scores[b * nb + beam] = s->top_values[rank];
      s->tokens[b * nb + beam] = token;
      s->beam_rows[b * nb + beam] = row;
      beam++;
    }
  }
  if (beam < nb)
    return vkf_status_make(VKF_STATUS_INTERNAL,
                           "beam search: source %lld has fewer than %lld candidates that are not "
                           "an eos id",
                           (long long)b, (long long)nb);
  h->done = h->done || hyp_is_done(s, h, (double)s->top_values[0], cur_len);
  return VKF_OK;
}

vkf_status vkf_beam_search_step(vkf_beam_search *s, const float *logits, bool *out_finished) {
  VKF_ASSERT(s && logits && out_finished);
  *out_finished = s->finished;
  if (s->finished)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "beam search: step after the last one");
  const vkf_beam_options *o = &s->o;
  const size_t vocab = (size_t)o->vocab_size;
  const vkf_sampling_options so = {.repetition_penalty = o->repetition_penalty,
                                   .no_repeat_ngram_size = o->no_repeat_ngram_size,
                                   .eos_ids = o->eos_ids,
                                   .eos_id_count = o->eos_id_count,
                                   .bad_words = o->bad_words,
                                   .bad_word_lens = o->bad_word_lens,
                                   .bad_word_count = o->bad_word_count};
  const bool penalties = (o->repetition_penalty != 0 && o->repetition_penalty != 1.0) ||
                         o->no_repeat_ngram_size > 0 || o->bad_word_count > 0;
  for (int64_t r = 0; r < s->rows; r++) {
    float *row = s->scores + (size_t)r * vocab;
    log_softmax(logits + (size_t)r * vocab, vocab, row);
    if (penalties)
      VKF_RETURN_IF_ERROR(
          vkf_sampling_process(&so, s->ids + r * o->max_length, (size_t)s->len, vocab, row));
    length_processors(s, s->len, row);
    for (size_t v = 0; v < vocab; v++) row[v] += s->beam_scores[r];
  }
  for (int64_t b = 0; b < o->batch; b++) VKF_RETURN_IF_ERROR(process_source(s, b, s->next_scores));
  memcpy(s->beam_scores, s->next_scores, (size_t)s->rows * sizeof *s->beam_scores);
  for (int64_t r = 0; r < s->rows; r++) {
    int64_t *dst = s->ids_next + r * o->max_length;
    memcpy(dst, s->ids + s->beam_rows[r] * o->max_length, (size_t)s->len * sizeof *dst);
    dst[s->len] = s->tokens[r];
  }
  int64_t *t = s->ids;
  s->ids = s->ids_next;
  s->ids_next = t;
  s->len++;
  bool all_done = true;
  for (int64_t b = 0; b < o->batch; b++) all_done &= s->hyps[b].done;
  s->finished = all_done || s->len >= o->max_length;
  *out_finished = s->finished;
  return VKF_OK;
}

void vkf_beam_search_next(const vkf_beam_search *s, const int64_t **out_beam_rows,
                          const int64_t **out_tokens) {
  *out_beam_rows = s->beam_rows;
  *out_tokens = s->tokens;
}

const int64_t *vkf_beam_search_ids(const vkf_beam_search *s, int64_t *out_length) {
  *out_length = s->len;
  return s->ids;
}

/* ---- finalize ---- */

vkf_status vkf_beam_search_finalize(vkf_beam_search *s, vkf_beam_result *out) {
  VKF_ASSERT(s && out);
  memset(out, 0, sizeof *out);
  const vkf_beam_options *o = &s->o;
  const int64_t nb = o->num_beams, keep = o->num_return_sequences;
  for (int64_t b = 0; b < o->batch; b++) {
    hyp_list *h = &s->hyps[b];
    if (h->done) continue;
    h->done = true; /* a second finalize adds nothing */
    for (int64_t j = 0; j < nb; j++) {
      int64_t r = b * nb + j;
      VKF_RETURN_IF_ERROR(hyp_add(s, h, s->ids + r * o->max_length, s->len,
                                  (double)s->beam_scores[r], s->len - o->prompt_len));
    }
  }
  const int64_t count = o->batch * keep;
  free(s->out_lengths);
  free(s->out_scores);
  free(s->out_sequences);
  s->out_sequences = NULL;
  s->out_lengths = malloc((size_t)count * sizeof *s->out_lengths);
  s->out_scores = malloc((size_t)count * sizeof *s->out_scores);
  const hyp **best = malloc((size_t)count * sizeof *best);
  const hyp **sorted = malloc((size_t)(nb + 1) * sizeof *sorted);
  vkf_status st = s->out_lengths && s->out_scores && best && sorted
                      ? VKF_OK
                      : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "beam search results");
  int64_t longest = 0, shortest = INT64_MAX;
  for (int64_t b = 0; !st && b < o->batch; b++) {
    /* sorted(beams, key=score) is stable; pop() takes from the end. */
    const hyp_list *h = &s->hyps[b];
    for (int64_t i = 0; i < h->count; i++) {
      int64_t j = i;
      while (j > 0 && sorted[j - 1]->score > h->beams[i].score) sorted[j] = sorted[j - 1], j--;
      sorted[j] = &h->beams[i];
    }
    for (int64_t j = 0; j < keep; j++) {
      const hyp *x = sorted[h->count - 1 - j];
      best[b * keep + j] = x;
      s->out_scores[b * keep + j] = (float)x->score;
      s->out_lengths[b * keep + j] = x->len;
      if (x->len > longest) longest = x->len;
      if (x->len < shortest) shortest = x->len;
    }
  }
  int64_t width = longest + 1 < o->max_length ? longest + 1 : o->max_length;
  if (!st && shortest != longest && o->pad_token_id < 0)
    st = vkf_status_make(VKF_STATUS_INTERNAL,
                         "beam search: hypotheses of different lengths need a pad_token_id");
  if (!st) {
    s->out_sequences = malloc((size_t)(count * width) * sizeof *s->out_sequences);
    if (!s->out_sequences) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "beam search results");
  }
  for (int64_t i = 0; !st && i < count; i++) {
    int64_t *row = s->out_sequences + i * width;
    for (int64_t t = 0; t < width; t++) row[t] = o->pad_token_id;
    memcpy(row, best[i]->ids, (size_t)best[i]->len * sizeof *row);
    if (best[i]->len < width) {
      if (!o->eos_id_count) {
        st = vkf_status_make(VKF_STATUS_INTERNAL, "beam search: a short hypothesis without eos");
        break;
      }
      row[best[i]->len] = o->eos_ids[0];
      s->out_lengths[i] = best[i]->len + 1;
    }
  }
  free(best);
  free(sorted);
  if (st) return st;
  *out = (vkf_beam_result){count, width, s->out_sequences, s->out_scores, s->out_lengths};
  return VKF_OK;
}
