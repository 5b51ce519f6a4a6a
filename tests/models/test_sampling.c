/* models/generate: the processed scores against transformers 4.38.2's logits processors
 * (tests/models/golden/sampling from tools/goldens/make_sampling_golden.py), greedy picks, the seeded
 * generator and its distribution, stop conditions, and generation_config.json / config.json. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/formats/npy.h"
#include "models/generate/generation_config.h"
#include "models/generate/sampling.h"
#include "tests/test_util.h"

#define GOLDEN "tests/models/golden/sampling"

static bool load_npy(const char *name, vkf_npy_dtype dtype, vkf_npy_array *out) {
  char path[256];
  snprintf(path, sizeof path, GOLDEN "/%s.npy", name);
  vkf_status s = vkf_npy_load(path, out);
  CHECK_MSG(s == VKF_OK, "%s", vkf_status_message(s));
  vkf_status_free(s);
  if (s) return false;
  CHECK_MSG(out->dtype == dtype && out->rank == 1, "%s: dtype or rank", path);
  return out->dtype == dtype && out->rank == 1;
}

/* Equal to HF's score, or within 1e-6 relative; -inf exactly where HF has -inf. */
static int compare_scores(const char *name, const float *got, const float *want, size_t n) {
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    bool ok = isinf(want[i])
                  ? got[i] == want[i]
                  : isfinite(got[i]) && fabsf(got[i] - want[i]) <= 1e-6f * fabsf(want[i]);
    if (!ok && bad++ < 3)
      fprintf(stderr, "%s[%zu]: got %.9g, HF %.9g\n", name, i, (double)got[i], (double)want[i]);
  }
  return bad;
}

static void test_golden(void) {
  FILE *f = fopen(GOLDEN "/cases.txt", "r");
  CHECK_MSG(f, "cannot open " GOLDEN "/cases.txt");
  if (!f) return;
  char line[512];
  int cases = 0, exact = 0, with_top_p = 0;
  while (fgets(line, sizeof line, f)) {
    char name[128], vec[32];
    double rep, temp, top_p;
    long long ngram, top_k, greedy;
    if (sscanf(line, "%127s %31s %lf %lld %lf %lld %lf %lld", name, vec, &rep, &ngram, &temp,
               &top_k, &top_p, &greedy) != 8) {
      CHECK_MSG(0, "bad line in cases.txt: %s", line);
      continue;
    }
    char buf[160];
    vkf_npy_array logits = {0}, ids = {0}, want = {0};
    snprintf(buf, sizeof buf, "%s_logits", vec);
    bool ok = load_npy(buf, VKF_NPY_F32, &logits);
    snprintf(buf, sizeof buf, "%s_ids", vec);
    ok = load_npy(buf, VKF_NPY_I64, &ids) && ok;
    ok = load_npy(name, VKF_NPY_F32, &want) && ok;
    if (ok) {
      const size_t V = logits.element_count;
      vkf_sampling_options o = {.do_sample = true,
                                .repetition_penalty = rep,
                                .no_repeat_ngram_size = ngram,
                                .temperature = temp,
                                .top_k = top_k,
                                .top_p = top_p == 0 ? VKF_SAMPLING_TOP_P_ZERO : top_p};
      float *scores = malloc(V * sizeof *scores);
      memcpy(scores, logits.data, V * sizeof *scores);
      CHECK_OK(vkf_sampling_process(&o, ids.data, ids.element_count, V, scores));
      int bad = compare_scores(name, scores, want.data, V);
      CHECK_MSG(bad == 0, "%s: %d scores differ from HF", name, bad);
      /* Every step is one IEEE float32 operation per score (or a -inf), as in torch, so the
       * result is not merely close but bit-identical on every machine. */
      bool same = memcmp(scores, want.data, V * sizeof *scores) == 0;
      CHECK_MSG(same, "%s: not bit-identical to HF", name);
      exact += same;
      CHECK_MSG(vkf_sampling_argmax(scores, V) == greedy, "%s: argmax %lld, HF %lld", name,
                (long long)vkf_sampling_argmax(scores, V), greedy);
      with_top_p += top_p < 1;

      /* Greedy: only the processors (repetition penalty, n-grams) run, never the warpers. */
      vkf_sampling_options g = o;
      g.do_sample = false;
      memcpy(scores, logits.data, V * sizeof *scores);
      int64_t token = -1;
      CHECK_OK(vkf_sampling_next(&g, ids.data, ids.element_count, V, scores, NULL, &token));
      if (temp == 1.0 && top_k == 0 && top_p >= 1.0) {
        CHECK_MSG(compare_scores(name, scores, want.data, V) == 0, "%s greedy scores", name);
        CHECK_MSG(token == greedy, "%s: greedy %lld, HF %lld", name, (long long)token, greedy);
      }
      free(scores);
      cases++;
    }
    vkf_npy_array_release(&logits);
    vkf_npy_array_release(&ids);
    vkf_npy_array_release(&want);
  }
  fclose(f);
  CHECK_MSG(cases >= 60 && with_top_p >= 20, "only %d cases (%d with top_p)", cases, with_top_p);
  printf("golden: %d cases, %d bit-exact\n", cases, exact);
}

/* The tie rule and the boundary on hand-made rows, so a broken sort or "<" for "<=" shows even
 * without the goldens. */
static void test_rules(void) {
  float s[6] = {1, 3, 3, -2, 3, 0};
  CHECK(vkf_sampling_argmax(s, 6) == 1);
  /* Four equal scores: probabilities 1/4, cumulative 1/4, 1/2, 3/4, 1. top_p 0.5 -> remove those
   * with cumulative <= 0.5: exactly two go. */
  float t[4] = {0, 0, 0, 0};
  vkf_sampling_options o = {.do_sample = true, .top_p = 0.5};
  CHECK_OK(vkf_sampling_process(&o, NULL, 0, 4, t));
  int removed = 0;
  for (int i = 0; i < 4; i++) removed += t[i] == -INFINITY;
  CHECK(removed == 2);
  /* top_k keeps ties at the cut. */
  float k[5] = {5, 4, 4, 4, 1};
  o = (vkf_sampling_options){.do_sample = true, .top_k = 2};
  CHECK_OK(vkf_sampling_process(&o, NULL, 0, 5, k));
  CHECK(k[0] == 5 && k[1] == 4 && k[2] == 4 && k[3] == 4 && k[4] == -INFINITY);
  /* Repetition penalty: each distinct id once, sign-dependent. */
  float r[3] = {2, -2, 1};
  int64_t ids[4] = {0, 0, 1, 1};
  o = (vkf_sampling_options){.repetition_penalty = 2};
  CHECK_OK(vkf_sampling_process(&o, ids, 4, 3, r));
  CHECK(r[0] == 1 && r[1] == -4 && r[2] == 1);
  /* Greedy runs the processors only: temperature, top_k and top_p leave the row alone. */
  float w[4] = {1, -1, 2, 0.5f};
  o = (vkf_sampling_options){.temperature = 0.5, .top_k = 1, .top_p = 0.1};
  CHECK_OK(vkf_sampling_process(&o, NULL, 0, 4, w));
  CHECK(w[0] == 1 && w[1] == -1 && w[2] == 2 && w[3] == 0.5f);
  /* Errors name the option or the position. */
  int64_t bad_ids[2] = {0, 3};
  CHECK_STATUS(vkf_sampling_process(&o, bad_ids, 2, 3, r), VKF_STATUS_INVALID_ARGUMENT,
               "position 1");
  o = (vkf_sampling_options){.top_p = 1.5};
  CHECK_STATUS(vkf_sampling_process(&o, NULL, 0, 3, r), VKF_STATUS_INVALID_ARGUMENT, "top_p");
  o = (vkf_sampling_options){.temperature = -1};
  CHECK_STATUS(vkf_sampling_process(&o, NULL, 0, 3, r), VKF_STATUS_INVALID_ARGUMENT, "temperature");
  o = (vkf_sampling_options){.top_k = -1};
  CHECK_STATUS(vkf_sampling_process(&o, NULL, 0, 3, r), VKF_STATUS_INVALID_ARGUMENT, "top_k");
  /* bad_words_ids: [3] always (not [2], an eos id, skipped as transformers does), [1, 4] after a
   * 1, [0, 1, 5] after 0, 1; ids not ending so leave 4 and 5 alone. */
  const int64_t bw[] = {3, 2, 1, 4, 0, 1, 5};
  const uint32_t bl[] = {1, 1, 2, 3};
  const int64_t eos[] = {2};
  vkf_sampling_options b = {.bad_words = bw, .bad_word_lens = bl, .bad_word_count = 4,
                            .eos_ids = eos, .eos_id_count = 1};
  int64_t seq[3] = {0, 0, 1};
  float v6[6] = {0, 1, 2, 3, 4, 5};
  CHECK_OK(vkf_sampling_process(&b, seq, 3, 6, v6));
  CHECK(v6[3] == -INFINITY && v6[2] == 2 && v6[4] == -INFINITY && v6[5] == -INFINITY &&
        v6[0] == 0 && v6[1] == 1);
  float u6[6] = {0, 1, 2, 3, 4, 5};
  int64_t seq2[2] = {1, 0};
  CHECK_OK(vkf_sampling_process(&b, seq2, 2, 6, u6));
  CHECK(u6[3] == -INFINITY && u6[4] == 4 && u6[5] == 5);
  /* transformers skips a sequence longer than the ids so far: [1, 4] after the lone id 1 */
  float w6[6] = {0, 1, 2, 3, 4, 5};
  int64_t one[1] = {1};
  CHECK_OK(vkf_sampling_process(&b, one, 1, 6, w6));
  CHECK(w6[4] == 4 && w6[3] == -INFINITY);
  float inf[2] = {-INFINITY, -INFINITY};
  vkf_rng rng;
  vkf_rng_seed(&rng, 1);
  int64_t tok;
  CHECK_STATUS(vkf_sampling_draw(inf, 2, &rng, &tok), VKF_STATUS_INVALID_ARGUMENT, "-inf");
}

static void test_rng(void) {
  /* xoshiro256** from splitmix64(0): fixed first outputs, so a change of generator shows. */
  vkf_rng a, b;
  vkf_rng_seed(&a, 0);
  CHECK(a.s[0] == 0xe220a8397b1dcdafull); /* splitmix64's first output from 0 */
  vkf_rng_seed(&a, 42);
  vkf_rng_seed(&b, 42);
  bool same = true;
  for (int i = 0; i < 1000; i++) same &= vkf_rng_next(&a) == vkf_rng_next(&b);
  CHECK(same);
  vkf_rng_seed(&b, 43);
  CHECK(vkf_rng_next(&a) != vkf_rng_next(&b));
  for (int i = 0; i < 1000; i++) {
    double u = vkf_rng_uniform(&a);
    if (!(u >= 0 && u < 1)) {
      CHECK_MSG(0, "uniform %g outside [0, 1)", u);
      break;
    }
  }
}

/* Draws from the processed V = 50 row: reproducible per seed, never a filtered token, and the
 * frequencies close to softmax. With 20000 draws the standard error of a frequency is at most
 * 0.0036; the bound 0.02 is over 5.5 standard errors and the seed is fixed, so it cannot fail
 * by chance, while a draw from the unprocessed row misses it by far. */
static void test_distribution(void) {
  vkf_npy_array logits = {0}, ids = {0};
  if (!load_npy("v50_logits", VKF_NPY_F32, &logits) || !load_npy("v50_ids", VKF_NPY_I64, &ids)) {
    vkf_npy_array_release(&logits);
    vkf_npy_array_release(&ids);
    return;
  }
  enum { V = 50, DRAWS = 20000 };
  vkf_sampling_options o = {
      .do_sample = true, .repetition_penalty = 1.2, .temperature = 1.3, .top_k = 20, .top_p = 0.9};
  float scores[V];
  memcpy(scores, logits.data, sizeof scores);
  CHECK_OK(vkf_sampling_process(&o, ids.data, ids.element_count, V, scores));
  double probs[V];
  CHECK_OK(vkf_sampling_softmax(scores, V, probs));
  int64_t first[16], again[16];
  vkf_rng rng;
  for (int pass = 0; pass < 2; pass++) {
    vkf_rng_seed(&rng, 1234);
    for (int i = 0; i < 16; i++) {
      float row[V];
      memcpy(row, logits.data, sizeof row);
      CHECK_OK(vkf_sampling_next(&o, ids.data, ids.element_count, V, row, &rng,
                                 pass ? &again[i] : &first[i]));
    }
  }
  CHECK(memcmp(first, again, sizeof first) == 0);
  double count[V] = {0};
  vkf_rng_seed(&rng, 99);
  int filtered = 0;
  for (int i = 0; i < DRAWS; i++) {
    int64_t t = -1;
    CHECK_OK(vkf_sampling_draw(scores, V, &rng, &t));
    if (t < 0 || t >= V) continue;
    count[t]++;
    filtered += scores[t] == -INFINITY;
  }
  CHECK(filtered == 0);
  double worst = 0;
  for (int i = 0; i < V; i++) worst = fmax(worst, fabs(count[i] / DRAWS - probs[i]));
  CHECK_MSG(worst < 0.02, "max |frequency - probability| = %g", worst);
  vkf_npy_array_release(&logits);
  vkf_npy_array_release(&ids);
}

static void test_stop(void) {
  const int64_t eos[2] = {2, 7};
  const char *strings[2] = {"\n\n", "END"};
  vkf_stop_criteria c = {.eos_ids = eos,
                         .eos_id_count = 2,
                         .max_new_tokens = 5,
                         .stop_strings = strings,
                         .stop_string_count = 2};
  int64_t gen[5] = {4, 7, 1, 1, 1};
  size_t end;
  CHECK(vkf_stop_check(&c, gen, 1, "a", 1, &end) == VKF_STOP_NONE && end == 1);
  CHECK(vkf_stop_check(&c, gen, 2, "ab", 2, &end) == VKF_STOP_EOS);
  CHECK(vkf_stop_check(&c, gen, 3, "abc", 3, &end) == VKF_STOP_NONE);
  CHECK(vkf_stop_check(&c, gen, 5, "abcde", 5, &end) == VKF_STOP_MAX_NEW_TOKENS);
  CHECK(vkf_stop_check(&c, gen, 3, "xENDy\n\n", 7, &end) == VKF_STOP_STRING && end == 1);
  CHECK(vkf_stop_check(&c, gen, 3, "x\n\nEND", 6, &end) == VKF_STOP_STRING && end == 1);
  CHECK(vkf_stop_check(&c, gen, 3, "EN", 2, &end) == VKF_STOP_NONE);
}

/* ---- generation_config.json / config.json ---- */

static char tmp_dir[64];

static void write_file(const char *dir, const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  VKF_ASSERT(f);
  fputs(text, f);
  fclose(f);
}

/* A fresh model folder under tmp_dir holding the given files (NULL: absent). */
static const char *model_dir(const char *name, const char *gen, const char *config) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
  VKF_ASSERT(mkdir(path, 0700) == 0);
  if (gen) write_file(path, "generation_config.json", gen);
  if (config) write_file(path, "config.json", config);
  return path;
}

static void test_config(void) {
  vkf_generation_config c;
  /* No files: GenerationConfig's defaults. */
  CHECK_OK(vkf_generation_config_load(model_dir("none", NULL, NULL), 100, &c));
  CHECK(c.source == VKF_GENERATION_DEFAULTS && c.eos_token_id_count == 0 && c.bos_token_id == -1 &&
        c.pad_token_id == -1 && c.max_length == 20 && c.max_new_tokens == -1 && !c.do_sample &&
        c.temperature == 1.0 && c.top_k == 50 && c.top_p == 1.0 && c.repetition_penalty == 1.0 &&
        c.no_repeat_ngram_size == 0);
  CHECK(vkf_generation_config_new_token_limit(&c, 5) == 15);
  CHECK(vkf_generation_config_new_token_limit(&c, 30) == 1);

  /* Llama-2-chat's generation_config.json: eos as an int, sampling settings; config.json's
   * fields are not mixed in. */
  CHECK_OK(vkf_generation_config_load(
      model_dir("llama",
                "{\"bos_token_id\": 1, \"do_sample\": true, \"eos_token_id\": 2,"
                " \"max_length\": 4096, \"pad_token_id\": 0, \"temperature\": 0.6,"
                " \"top_p\": 0.9, \"transformers_version\": \"4.32.0.dev0\"}",
                "{\"model_type\": \"llama\", \"bos_token_id\": 1, \"eos_token_id\": 2,"
                " \"repetition_penalty\": 1.5, \"vocab_size\": 32000}"),
      32000, &c));
  CHECK(c.source == VKF_GENERATION_FROM_GENERATION_CONFIG);
  CHECK(c.eos_token_id_count == 1 && c.eos_token_ids[0] == 2 && c.bos_token_id == 1 &&
        c.pad_token_id == 0 && c.max_length == 4096 && c.do_sample && c.temperature == 0.6 &&
        c.top_p == 0.9 && c.top_k == 50 && c.repetition_penalty == 1.0);
  vkf_sampling_options o;
  vkf_generation_config_sampling(&c, &o);
  CHECK(o.do_sample && o.temperature == 0.6 && o.top_k == 50 && o.top_p == 0.9);
  vkf_stop_criteria sc;
  vkf_generation_config_stop_criteria(&c, 10, &sc);
  CHECK(sc.eos_id_count == 1 && sc.eos_ids[0] == 2 && sc.max_new_tokens == 4086);

  /* Llama-3's eos list; max_new_tokens wins over max_length. */
  CHECK_OK(vkf_generation_config_load(
      model_dir("llama3", "{\"eos_token_id\": [128001, 128009], \"max_new_tokens\": 7}", NULL),
      128256, &c));
  CHECK(c.eos_token_id_count == 2 && c.eos_token_ids[0] == 128001 && c.eos_token_ids[1] == 128009 &&
        c.max_new_tokens == 7);
  CHECK(vkf_generation_config_new_token_limit(&c, 100) == 7);

  /* No generation_config.json: from config.json, nested text_config filling defaults. */
  CHECK_OK(vkf_generation_config_load(
      model_dir("from_model", NULL,
                "{\"model_type\": \"gpt2\", \"bos_token_id\": 50, \"eos_token_id\": 51,"
                " \"top_k\": 10, \"do_sample\": true, \"pad_token_id\": null,"
                " \"text_config\": {\"top_k\": 3, \"temperature\": 0.5, \"eos_token_id\": 9}}"),
      100, &c));
  CHECK(c.source == VKF_GENERATION_FROM_MODEL_CONFIG && c.bos_token_id == 50 &&
        c.eos_token_id_count == 1 && c.eos_token_ids[0] == 51 && c.top_k == 10 &&
        c.temperature == 0.5 && c.do_sample && c.pad_token_id == -1);

  /* Legacy: generation_config.json made from the model config, and config.json sets a
   * generation parameter -> generate() rebuilds from config.json. */
  CHECK_OK(vkf_generation_config_load(
      model_dir("legacy", "{\"_from_model_config\": true, \"eos_token_id\": 5}",
                "{\"eos_token_id\": 6, \"no_repeat_ngram_size\": 3}"),
      100, &c));
  CHECK(c.source == VKF_GENERATION_FROM_MODEL_CONFIG && c.eos_token_ids[0] == 6 &&
        c.no_repeat_ngram_size == 3);
  /* ...but not when config.json holds only default generation parameters. */
  CHECK_OK(vkf_generation_config_load(
      model_dir("legacy_default", "{\"_from_model_config\": true, \"eos_token_id\": 5}",
                "{\"eos_token_id\": 6, \"max_length\": 20, \"do_sample\": false}"),
      100, &c));
  CHECK(c.source == VKF_GENERATION_FROM_GENERATION_CONFIG && c.eos_token_ids[0] == 5);

  /* top_p 0 keeps one token (HF accepts it); temperature 0 is fine when greedy. */
  CHECK_OK(vkf_generation_config_load(
      model_dir("zeros", "{\"top_p\": 0, \"temperature\": 0}", NULL), 100, &c));
  vkf_generation_config_sampling(&c, &o);
  CHECK(o.top_p == VKF_SAMPLING_TOP_P_ZERO && o.temperature == 0 && !o.do_sample);
}

static void test_config_errors(void) {
  vkf_generation_config c;
  static const struct {
    const char *json;
    vkf_status_code code;
    const char *needle;
  } cases[] = {
      {"{\"eos_token_id\": \"x\"}", VKF_STATUS_PARSE, "\"eos_token_id\""},
      {"{\"eos_token_id\": [1, 2.5]}", VKF_STATUS_PARSE, "\"eos_token_id\"[1]"},
      {"{\"eos_token_id\": [1, 100]}", VKF_STATUS_INVALID_ARGUMENT, "\"eos_token_id\" 100"},
      {"{\"eos_token_id\": -1}", VKF_STATUS_INVALID_ARGUMENT, "\"eos_token_id\" -1"},
      {"{\"bos_token_id\": 100}", VKF_STATUS_INVALID_ARGUMENT, "\"bos_token_id\""},
      {"{\"pad_token_id\": 1.5}", VKF_STATUS_PARSE, "\"pad_token_id\""},
      {"{\"max_length\": 0}", VKF_STATUS_INVALID_ARGUMENT, "\"max_length\""},
      {"{\"max_new_tokens\": 0}", VKF_STATUS_INVALID_ARGUMENT, "\"max_new_tokens\""},
      {"{\"max_new_tokens\": -1}", VKF_STATUS_INVALID_ARGUMENT, "\"max_new_tokens\" is -1"},
      {"{\"do_sample\": 1}", VKF_STATUS_PARSE, "\"do_sample\""},
      {"{\"do_sample\": true, \"temperature\": 0}", VKF_STATUS_INVALID_ARGUMENT, "\"temperature\""},
      {"{\"temperature\": \"hot\"}", VKF_STATUS_PARSE, "\"temperature\""},
      {"{\"top_k\": -1}", VKF_STATUS_INVALID_ARGUMENT, "\"top_k\""},
      {"{\"top_k\": 5.5}", VKF_STATUS_PARSE, "\"top_k\""},
      {"{\"top_p\": 1.5}", VKF_STATUS_INVALID_ARGUMENT, "\"top_p\""},
      {"{\"top_p\": -0.1}", VKF_STATUS_INVALID_ARGUMENT, "\"top_p\""},
      {"{\"repetition_penalty\": 0}", VKF_STATUS_INVALID_ARGUMENT, "\"repetition_penalty\""},
      {"{\"no_repeat_ngram_size\": -2}", VKF_STATUS_INVALID_ARGUMENT, "\"no_repeat_ngram_size\""},
      {"{\"top_p\": 0.9", VKF_STATUS_PARSE, "not valid JSON"},
      {"[1, 2]", VKF_STATUS_PARSE, "not a JSON object"},
      {"{\"bad_words_ids\": [3]}", VKF_STATUS_PARSE, "\"bad_words_ids\"[0] is not a non-empty list"},
      {"{\"bad_words_ids\": [[3], []]}", VKF_STATUS_PARSE, "\"bad_words_ids\"[1]"},
      {"{\"bad_words_ids\": [[3, -1]]}", VKF_STATUS_PARSE, "\"bad_words_ids\"[0][1] is not an id"},
      {"{\"bad_words_ids\": [[100]]}", VKF_STATUS_INVALID_ARGUMENT, "\"bad_words_ids\" 100"},
      /* set fields whose processors vkformer lacks: refused, never ignored */
      {"{\"suppress_tokens\": [1, 2]}", VKF_STATUS_UNSUPPORTED, "\"suppress_tokens\" is [1,2]"},
      {"{\"begin_suppress_tokens\": [3]}", VKF_STATUS_UNSUPPORTED, "\"begin_suppress_tokens\""},
      {"{\"sequence_bias\": {}}", VKF_STATUS_UNSUPPORTED, "\"sequence_bias\""},
      {"{\"forced_decoder_ids\": [[1, 5]]}", VKF_STATUS_UNSUPPORTED, "\"forced_decoder_ids\""},
      {"{\"typical_p\": 0.9}", VKF_STATUS_UNSUPPORTED, "\"typical_p\" is 0.9"},
      {"{\"epsilon_cutoff\": 0.001}", VKF_STATUS_UNSUPPORTED, "\"epsilon_cutoff\""},
      {"{\"eta_cutoff\": 0.001}", VKF_STATUS_UNSUPPORTED, "\"eta_cutoff\""},
      {"{\"num_return_sequences\": 2}", VKF_STATUS_UNSUPPORTED, "\"num_return_sequences\" is 2"},
      {"{\"num_beam_groups\": 2, \"diversity_penalty\": 0.5}", VKF_STATUS_UNSUPPORTED,
       "\"num_beam_groups\""},
      {"{\"diversity_penalty\": 0.5}", VKF_STATUS_UNSUPPORTED, "\"diversity_penalty\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK_STATUS(vkf_generation_config_parse(cases[i].json, strlen(cases[i].json),
                                             "generation_config.json", 100, &c),
                 cases[i].code, cases[i].needle);
    CHECK_STATUS(vkf_generation_config_parse(cases[i].json, strlen(cases[i].json),
                                             "generation_config.json", 100, &c),
                 cases[i].code, "generation_config.json");
  }
  /* Those fields at their off values are fine; bad_words_ids is read. */
  const char *off = "{\"typical_p\": 1.0, \"num_return_sequences\": 1, \"suppress_tokens\": null,"
                    " \"diversity_penalty\": 0.0, \"bad_words_ids\": [[7], [1, 2, 3]]}";
  CHECK_OK(vkf_generation_config_parse(off, strlen(off), "generation_config.json", 100, &c));
  CHECK(c.bad_word_count == 2 && c.bad_word_lens[0] == 1 && c.bad_word_lens[1] == 3 &&
        c.bad_words[0] == 7 && c.bad_words[3] == 3);
  /* 33 eos ids: over the bound. */
  char many[512] = "{\"eos_token_id\": [0";
  for (int i = 1; i < 33; i++) snprintf(many + strlen(many), sizeof many - strlen(many), ",%d", i);
  strcat(many, "]}");
  CHECK_STATUS(vkf_generation_config_parse(many, strlen(many), "generation_config.json", 100, &c),
               VKF_STATUS_UNSUPPORTED, "\"eos_token_id\"");

  /* Errors through load name the file's path; a config.json value out of range names it. */
  const char *dir = model_dir("bad_model", NULL, "{\"eos_token_id\": 500}");
  CHECK_STATUS(vkf_generation_config_load(dir, 100, &c), VKF_STATUS_INVALID_ARGUMENT,
               "bad_model/config.json: field \"eos_token_id\" 500");
  dir = model_dir("bad_gen", "{\"top_k\": -3}", "{}");
  CHECK_STATUS(vkf_generation_config_load(dir, 100, &c), VKF_STATUS_INVALID_ARGUMENT,
               "bad_gen/generation_config.json: field \"top_k\"");
  /* A folder named generation_config.json: a clear error, nothing allocated. */
  dir = model_dir("folder", NULL, NULL);
  char sub[256];
  snprintf(sub, sizeof sub, "%s/generation_config.json", dir);
  VKF_ASSERT(mkdir(sub, 0700) == 0);
  CHECK_STATUS(vkf_generation_config_load(dir, 100, &c), VKF_STATUS_IO, "is a directory");
  rmdir(sub);
  /* A 2 GB (sparse) generation_config.json: refused by size before any read. */
  dir = model_dir("huge", NULL, NULL);
  snprintf(sub, sizeof sub, "%s/generation_config.json", dir);
  FILE *f = fopen(sub, "wb");
  VKF_ASSERT(f);
  VKF_ASSERT(ftruncate(fileno(f), (off_t)2 << 30) == 0);
  fclose(f);
  CHECK_STATUS(vkf_generation_config_load(dir, 100, &c), VKF_STATUS_UNSUPPORTED,
               "huge/generation_config.json: 2147483648 bytes");
  unlink(sub);
}

static void remove_tree(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
  VKF_ASSERT(system(cmd) == 0);
}

int main(void) {
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/vkf_sampling_XXXXXX");
  VKF_ASSERT(mkdtemp(tmp_dir));
  test_golden();
  test_rules();
  test_rng();
  test_distribution();
  test_stop();
  test_config();
  test_config_errors();
  remove_tree();
  return test_report();
}
