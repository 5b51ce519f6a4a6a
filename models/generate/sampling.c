/* Hugging Face's logits processors and warpers on one logits row, with torch's float32 arithmetic
 * and torch.sort's tie order; the xoshiro256** generator, the draw and the stop conditions. */
#include "models/generate/sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- torch.sort(scores, descending=False) on the CPU ----
 * torch 1.13 sorts a row with std::sort over (value, index) pairs compared by value only (NaN
 * last), and std::sort is not stable: the order among equal values is whatever libstdc++'s
 * introsort leaves. Top-p removes a prefix of that order, so tied tokens straddling the cut are
 * removed or kept exactly as in Hugging Face only if the same algorithm runs here. What follows is
 * libstdc++'s std::sort (introsort loop, median-of-three pivot, unguarded partition, heap sort
 * past the depth limit, final insertion sort with a threshold of 16), step for step. */

typedef struct scored {
  float value;
  int64_t index;
} scored;

static bool less(const scored *a, const scored *b) {
  return (!isnan(a->value) && isnan(b->value)) || a->value < b->value;
}

static void swap_scored(scored *a, scored *b) {
  scored t = *a;
  *a = *b;
  *b = t;
}

static void push_heap(scored *first, ptrdiff_t hole, ptrdiff_t top, scored value) {
  ptrdiff_t parent = (hole - 1) / 2;
  while (hole > top && less(&first[parent], &value)) {
    first[hole] = first[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  first[hole] = value;
}

static void adjust_heap(scored *first, ptrdiff_t hole, ptrdiff_t len, scored value) {
  const ptrdiff_t top = hole;
  ptrdiff_t child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (less(&first[child], &first[child - 1])) child--;
    first[hole] = first[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    first[hole] = first[child - 1];
    hole = child - 1;
  }
  push_heap(first, hole, top, value);
}

/* std::partial_sort(first, last, last): make_heap then sort_heap. */
static void heap_sort(scored *first, scored *last) {
  ptrdiff_t len = last - first;
  if (len < 2) return;
  for (ptrdiff_t parent = (len - 2) / 2;; parent--) {
    adjust_heap(first, parent, len, first[parent]);
    if (parent == 0) break;
  }
  while (last - first > 1) {
    --last;
    scored value = *last;
    *last = *first;
    adjust_heap(first, 0, last - first, value);
  }
}

static void move_median_to_first(scored *result, scored *a, scored *b, scored *c) {
  if (less(a, b)) {
    if (less(b, c))
      swap_scored(result, b);
    else if (less(a, c))
      swap_scored(result, c);
    else
      swap_scored(result, a);
  } else if (less(a, c)) {
    swap_scored(result, a);
  } else if (less(b, c)) {
    swap_scored(result, c);
  } else {
    swap_scored(result, b);
  }
}

static scored *unguarded_partition(scored *first, scored *last, const scored *pivot) {
  for (;;) {
    while (less(first, pivot)) first++;
    last--;
    while (less(pivot, last)) last--;
    if (!(first < last)) return first;
    swap_scored(first, last);
    first++;
  }
}

static void introsort_loop(scored *first, scored *last, int depth_limit) {
  while (last - first > 16) {
    if (depth_limit == 0) {
      heap_sort(first, last);
      return;
    }
    depth_limit--;
    scored *mid = first + (last - first) / 2;
    move_median_to_first(first, first + 1, mid, last - 1);
    scored *cut = unguarded_partition(first + 1, last, first);
    introsort_loop(cut, last, depth_limit);
    last = cut;
  }
}

static void unguarded_linear_insert(scored *last) {
  scored value = *last;
  scored *next = last - 1;
  while (less(&value, next)) {
    *last = *next;
    last = next;
    next--;
  }
  *last = value;
}

static void insertion_sort(scored *first, scored *last) {
  if (first == last) return;
  for (scored *i = first + 1; i != last; i++) {
    if (less(i, first)) {
      scored value = *i;
      memmove(first + 1, first, (size_t)(i - first) * sizeof *first);
      *first = value;
    } else {
      unguarded_linear_insert(i);
    }
  }
}

static void torch_sort_ascending(scored *first, size_t n) {
  if (n < 2) return;
  int lg = 0;
  while (((size_t)2 << lg) <= n) lg++; /* std::__lg(n) = floor(log2 n) */
  introsort_loop(first, first + n, 2 * lg);
  if (n > 16) {
    insertion_sort(first, first + 16);
    for (scored *i = first + 16; i != first + n; i++) unguarded_linear_insert(i);
  } else {
    insertion_sort(first, first + n);
  }
}

/* ---- the processors ---- */

static vkf_status check_options(const vkf_sampling_options *o) {
  if (o->repetition_penalty < 0 || isnan(o->repetition_penalty))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sampling: repetition_penalty %g must be > 0 (0 means off)",
                           o->repetition_penalty);
  if (o->no_repeat_ngram_size < 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sampling: no_repeat_ngram_size %lld must be >= 0",
                           (long long)o->no_repeat_ngram_size);
  if (o->temperature < 0 || isnan(o->temperature))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sampling: temperature %g must be > 0 (0 means off)", o->temperature);
  if (o->top_k < 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "sampling: top_k %lld must be >= 0",
                           (long long)o->top_k);
  if (!(o->top_p >= 0 && o->top_p <= 1))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sampling: top_p %g must be in [0, 1] (0 means off)", o->top_p);
  return VKF_OK;
}

/* torch.gather then scatter_: every position reads the original score, so an id seen twice is
 * penalised once. A Python float against a float32 tensor computes in float32. */
static vkf_status repetition_penalty(double penalty, const int64_t *ids, size_t id_count,
                                     size_t vocab_size, float *scores) {
  unsigned char *seen = calloc(vocab_size, 1);
  if (!seen)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "sampling: no memory for %zu flags",
                           vocab_size);
  const float p = (float)penalty;
  for (size_t i = 0; i < id_count; i++) {
    size_t id = (size_t)ids[i];
    if (seen[id]) continue;
    seen[id] = 1;
    float s = scores[id];
    scores[id] = s < 0 ? s * p : s / p;
  }
  free(seen);
  return VKF_OK;
}

/* NoRepeatNGramLogitsProcessor: the last n-1 ids as a prefix; every earlier n-gram that starts
 * with it bans its last token. */
static void no_repeat_ngram(size_t n, const int64_t *ids, size_t id_count, float *scores) {
  if (id_count + 1 < n) return;
  const int64_t *prefix = ids + id_count + 1 - n;
  for (size_t start = 0; start + n <= id_count; start++) {
    if (memcmp(ids + start, prefix, (n - 1) * sizeof *ids) == 0)
      scores[ids[start + n - 1]] = -INFINITY;
  }
}

static int compare_desc(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x < y) - (x > y);
}

/* scores < topk(scores, k).values[-1]: every score tied with the k-th largest stays. */
static vkf_status top_k(size_t k, size_t vocab_size, float *scores) {
  if (k > vocab_size) k = vocab_size;
  float *sorted = malloc(vocab_size * sizeof *sorted);
  if (!sorted)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "sampling: no memory for top_k over %zu",
                           vocab_size);
  memcpy(sorted, scores, vocab_size * sizeof *sorted);
  qsort(sorted, vocab_size, sizeof *sorted, compare_desc);
  const float kth = sorted[k - 1];
  free(sorted);
  for (size_t i = 0; i < vocab_size; i++)
    if (scores[i] < kth) scores[i] = -INFINITY;
  return VKF_OK;
}

/* TopPLogitsWarper: softmax of the ascending scores, cumsum, remove cumulative <= 1 - top_p, keep
 * the last. torch's softmax is float32 (exp of x - max, one reciprocal of the sum, a multiply);
 * its cumsum accumulates in double and rounds each prefix to float32; the threshold 1 - top_p is
 * a Python double compared against a float32 tensor, so it is rounded to float32 first. */
static vkf_status top_p(double p, size_t vocab_size, float *scores) {
  scored *sorted = malloc(vocab_size * sizeof *sorted);
  if (!sorted)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "sampling: no memory for top_p over %zu",
                           vocab_size);
  for (size_t i = 0; i < vocab_size; i++) sorted[i] = (scored){scores[i], (int64_t)i};
  torch_sort_ascending(sorted, vocab_size);
  float max = -INFINITY;
  for (size_t i = 0; i < vocab_size; i++)
    if (sorted[i].value > max) max = sorted[i].value;
  /* All -inf (or NaN): torch's probabilities are NaN and NaN <= t is false, so nothing goes. */
  if (max != -INFINITY && !isnan(max)) {
    double sum = 0;
    for (size_t i = 0; i < vocab_size; i++) sum += expf(sorted[i].value - max);
    const float inv = 1.0f / (float)sum;
    const float threshold = (float)(1.0 - p);
    double cumulative = 0;
    for (size_t i = 0; i + 1 < vocab_size; i++) { /* the last (largest) always stays */
      cumulative += expf(sorted[i].value - max) * inv;
      if ((float)cumulative <= threshold) scores[sorted[i].index] = -INFINITY;
    }
  }
  free(sorted);
  return VKF_OK;
}

/* Only this token may come: every other score -inf, its own 0 (as Hugging Face sets them). */
static void force_tokens(const int64_t *keep, size_t keep_count, size_t vocab_size, float *scores) {
  for (size_t i = 0; i < vocab_size; i++) scores[i] = -INFINITY;
  for (size_t k = 0; k < keep_count; k++)
    if (keep[k] >= 0 && (uint64_t)keep[k] < vocab_size) scores[keep[k]] = 0.0f;
}

/* NoBadWordsLogitsProcessor (SequenceBiasLogitsProcessor with -inf biases in 4.38). */
static void bad_words(const vkf_sampling_options *o, const int64_t *ids, size_t id_count,
                      size_t vocab_size, float *scores) {
  const int64_t *w = o->bad_words;
  for (size_t s = 0; s < o->bad_word_count; w += o->bad_word_lens[s], s++) {
    size_t len = o->bad_word_lens[s];
    int64_t last = w[len - 1];
    if (last < 0 || (uint64_t)last >= vocab_size) continue;
    if (len == 1) {
      int is_eos = 0;
      for (size_t k = 0; k < o->eos_id_count; k++) is_eos |= o->eos_ids[k] == last;
      if (!is_eos) scores[last] = -INFINITY;
      continue;
    }
    /* SequenceBiasLogitsProcessor skips a sequence longer than the ids so far, even when its
     * prefix matches them all (a quirk kept: [a, b] is not banned right after a lone a) */
    if (id_count < len) continue;
    int match = 1;
    for (size_t j = 0; j + 1 < len && match; j++) match = ids[id_count - (len - 1) + j] == w[j];
    if (match) scores[last] = -INFINITY;
  }
}

static void length_processors(const vkf_sampling_options *o, size_t id_count, size_t vocab_size,
                              float *scores) {
  int ban_eos = (o->min_length > 0 && (int64_t)id_count < o->min_length) ||
                (o->min_new_tokens > 0 &&
                 (int64_t)id_count - (int64_t)o->prompt_len < o->min_new_tokens);
  for (size_t k = 0; ban_eos && k < o->eos_id_count; k++)
    if (o->eos_ids[k] >= 0 && (uint64_t)o->eos_ids[k] < vocab_size)
      scores[o->eos_ids[k]] = -INFINITY;
  if (o->forced_bos && id_count == 1) force_tokens(&o->forced_bos_token_id, 1, vocab_size, scores);
  if (o->forced_eos_id_count && o->max_length > 0 && (int64_t)id_count == o->max_length - 1)
    force_tokens(o->forced_eos_ids, o->forced_eos_id_count, vocab_size, scores);
}

vkf_status vkf_sampling_process(const vkf_sampling_options *options, const int64_t *ids,
                                size_t id_count, size_t vocab_size, float *scores) {
  VKF_ASSERT(options && scores && vocab_size > 0 && (ids || id_count == 0));
  VKF_RETURN_IF_ERROR(check_options(options));
  for (size_t i = 0; i < id_count; i++) {
    if (ids[i] < 0 || (uint64_t)ids[i] >= vocab_size)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "sampling: id %lld at position %zu is outside the vocabulary of %zu",
                             (long long)ids[i], i, vocab_size);
  }
  const vkf_sampling_options *o = options;
  if (o->repetition_penalty != 0 && o->repetition_penalty != 1.0)
    VKF_RETURN_IF_ERROR(
        repetition_penalty(o->repetition_penalty, ids, id_count, vocab_size, scores));
  if (o->no_repeat_ngram_size > 0)
    no_repeat_ngram((size_t)o->no_repeat_ngram_size, ids, id_count, scores);
  if (o->bad_word_count) bad_words(o, ids, id_count, vocab_size, scores);
  length_processors(o, id_count, vocab_size, scores);
  if (!o->do_sample) return VKF_OK;
  if (o->temperature != 0 && o->temperature != 1.0) {
    const float t = (float)o->temperature;
    for (size_t i = 0; i < vocab_size; i++) scores[i] = scores[i] / t;
  }
  if (o->top_k > 0) VKF_RETURN_IF_ERROR(top_k((size_t)o->top_k, vocab_size, scores));
  if (o->top_p != 0 && o->top_p < 1.0) VKF_RETURN_IF_ERROR(top_p(o->top_p, vocab_size, scores));
  return VKF_OK;
}

vkf_status vkf_sampling_check_logits(const float *logits, size_t rows, size_t vocab_size,
                                     int64_t step) {
  for (size_t i = 0; i < rows * vocab_size; i++)
    if (!isfinite(logits[i]))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "generation step %lld: the model's logit for id %zu (row %zu) is %s; "
                             "its weights or inputs hold non-finite values, or it overflows",
                             (long long)step, i % vocab_size, i / vocab_size,
                             isnan(logits[i]) ? "NaN" : logits[i] > 0 ? "+Inf" : "-Inf");
  return VKF_OK;
}

int64_t vkf_sampling_argmax(const float *scores, size_t vocab_size) {
  VKF_ASSERT(scores && vocab_size > 0);
  size_t best = 0;
  for (size_t i = 1; i < vocab_size && !isnan(scores[best]); i++)
    if (scores[i] > scores[best] || isnan(scores[i])) best = i;
  return (int64_t)best;
}

/* ---- the generator: splitmix64 seeding, xoshiro256** ---- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void vkf_rng_seed(vkf_rng *rng, uint64_t seed) {
  VKF_ASSERT(rng);
  for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t vkf_rng_next(vkf_rng *rng) {
  uint64_t *s = rng->s;
  const uint64_t result = rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double vkf_rng_uniform(vkf_rng *rng) {
  return (double)(vkf_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* ---- softmax and the draw ---- */

vkf_status vkf_sampling_softmax(const float *scores, size_t vocab_size, double *out_probs) {
  VKF_ASSERT(scores && out_probs && vocab_size > 0);
  double max = -INFINITY;
  for (size_t i = 0; i < vocab_size; i++) {
    if (isnan(scores[i]))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "sampling: score %zu is NaN", i);
    if (scores[i] > max) max = scores[i];
  }
  if (max == -INFINITY)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sampling: every one of the %zu scores is -inf", vocab_size);
  double sum = 0;
  for (size_t i = 0; i < vocab_size; i++) sum += out_probs[i] = exp((double)scores[i] - max);
  for (size_t i = 0; i < vocab_size; i++) out_probs[i] /= sum;
  return VKF_OK;
}

vkf_status vkf_sampling_draw(const float *scores, size_t vocab_size, vkf_rng *rng,
                             int64_t *out_token) {
  VKF_ASSERT(scores && rng && out_token && vocab_size > 0);
  *out_token = -1;
  double *probs = malloc(vocab_size * sizeof *probs);
  if (!probs)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "sampling: no memory for %zu probabilities",
                           vocab_size);
  vkf_status status = vkf_sampling_softmax(scores, vocab_size, probs);
  if (!status) {
    const double u = vkf_rng_uniform(rng);
    double cumulative = 0;
    size_t last_nonzero = 0;
    for (size_t i = 0; i < vocab_size; i++) {
      if (probs[i] <= 0) continue;
      last_nonzero = i;
      cumulative += probs[i];
      if (u < cumulative) {
        *out_token = (int64_t)i;
        break;
      }
    }
    /* The sum can round below u when u is within an ulp of 1: the last possible token. */
    if (*out_token < 0) *out_token = (int64_t)last_nonzero;
  }
  free(probs);
  return status;
}

vkf_status vkf_sampling_next(const vkf_sampling_options *options, const int64_t *ids,
                             size_t id_count, size_t vocab_size, float *logits, vkf_rng *rng,
                             int64_t *out_token) {
  VKF_ASSERT(out_token && options && (rng || !options->do_sample));
  *out_token = -1;
  VKF_RETURN_IF_ERROR(vkf_sampling_process(options, ids, id_count, vocab_size, logits));
  if (options->do_sample) return vkf_sampling_draw(logits, vocab_size, rng, out_token);
  *out_token = vkf_sampling_argmax(logits, vocab_size);
  return VKF_OK;
}

/* ---- stop conditions ---- */

static const char *find_bytes(const char *hay, size_t hay_size, const char *needle,
                              size_t needle_size) {
  if (needle_size == 0 || needle_size > hay_size) return NULL;
  for (size_t i = 0; i + needle_size <= hay_size; i++)
    if (hay[i] == needle[0] && memcmp(hay + i, needle, needle_size) == 0) return hay + i;
  return NULL;
}

vkf_stop_reason vkf_stop_check(const vkf_stop_criteria *criteria, const int64_t *generated,
                               size_t generated_count, const char *generated_text, size_t text_size,
                               size_t *out_text_end) {
  VKF_ASSERT(criteria && out_text_end && (generated || generated_count == 0));
  *out_text_end = text_size;
  const vkf_stop_criteria *c = criteria;
  if (generated_count > 0) {
    const int64_t last = generated[generated_count - 1];
    for (size_t i = 0; i < c->eos_id_count; i++)
      if (c->eos_ids[i] == last) return VKF_STOP_EOS;
  }
  if (c->max_new_tokens > 0 && generated_count >= c->max_new_tokens) return VKF_STOP_MAX_NEW_TOKENS;
  if (c->stop_string_count == 0 || !generated_text) return VKF_STOP_NONE;
  const char *earliest = NULL;
  for (size_t i = 0; i < c->stop_string_count; i++) {
    const char *hit =
        find_bytes(generated_text, text_size, c->stop_strings[i], strlen(c->stop_strings[i]));
    if (hit && (!earliest || hit < earliest)) earliest = hit;
  }
  if (!earliest) return VKF_STOP_NONE;
  *out_text_end = (size_t)(earliest - generated_text);
  return VKF_STOP_STRING;
}
