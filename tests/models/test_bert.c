/* all-MiniLM-L6-v2 sentence embeddings against the goldens of tools/make_embedding_golden.py
 * (Hugging Face BertModel + mean pooling + L2, fp32): the tokenizer on the sentence set, the
 * builder through the interpreter, and the device path for a padded mixed-length batch and for
 * each sentence alone, under the default caps and the mobile profile; then load/build errors. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/env.h"
#include "graph/interp.h"
#include "host/runner.h"
#include "models/bert.h"
#include "models/model_paths.h"
#include "models/npy.h"
#include "models/tokenizer.h"
#include "tests/gpu_util.h"

/* Minimum cosine similarity between our sentence vector and the golden, per sentence. */
static const struct {
  double interp_f32; /* interpreter vs PyTorch: same maths, other summation order */
  double device_f32; /* the bound, padded batch and unpadded alike */
  double device_f16; /* f16 weights + activations (fp32 accumulation, softmax state, pooling) */
} TOL = {0.99999, 0.9999, 0.9995};

#define SENTENCES "tests/models/embedding_sentences.txt"
#define GOLDEN "tests/models/golden/bert/"
#define MAX_SENTENCES 64
#define MAX_TOKENS 128 /* the longest golden sentence has 125 */

typedef struct fixture {
  char *text[MAX_SENTENCES];
  size_t count;
  vkf_npy_array golden; /* f32 [count, D] */
  int64_t dim;
  int32_t ids[MAX_SENTENCES * MAX_TOKENS];  /* padded batch, [count, len] */
  int32_t mask[MAX_SENTENCES * MAX_TOKENS]; /* [count, len] */
  size_t len;
  size_t lengths[MAX_SENTENCES]; /* real tokens per sentence */
} fixture;

static void fixture_load(fixture *f, const vkf_tokenizer *tok) {
  FILE *in = fopen(SENTENCES, "r");
  CHECK(in != NULL);
  char line[4096];
  while (in && f->count < MAX_SENTENCES && fgets(line, sizeof line, in)) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == '\0' || line[0] == '#') continue;
    f->text[f->count++] = strdup(line);
  }
  if (in) fclose(in);
  CHECK_OK(vkf_npy_load(GOLDEN "minilm_embeddings.npy", &f->golden));
  CHECK(f->golden.rank == 2 && (size_t)f->golden.shape[0] == f->count);
  f->dim = f->golden.shape[1];

  /* Our tokenizer must give Hugging Face's ids for every sentence, or nothing below means much. */
  FILE *ids = fopen(GOLDEN "minilm_ids.txt", "r");
  CHECK(ids != NULL);
  for (size_t i = 0; ids && i < f->count; i++) {
    int32_t got[MAX_TOKENS];
    size_t n = 0;
    CHECK_OK(vkf_tokenizer_encode(tok, f->text[i], MAX_TOKENS, got, &n));
    f->lengths[i] = n;
    char *p = fgets(line, sizeof line, ids);
    size_t k = 0;
    int same = p != NULL;
    for (char *end = NULL; p && k <= n; p = end, k++) {
      long v = strtol(p, &end, 10);
      if (end == p) break;
      same = same && k < n && got[k] == v;
    }
    CHECK_MSG(same && k == n, "sentence %zu: token ids differ from Hugging Face's", i);
  }
  if (ids) fclose(ids);
  CHECK_OK(vkf_tokenizer_encode_batch(tok, (const char *const *)f->text, f->count, MAX_TOKENS,
                                      f->ids, f->mask, &f->len));
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cosine(const float *a, const float *b, int64_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; i++) ab += (double)a[i] * b[i], aa += (double)a[i] * a[i],
                                   bb += (double)b[i] * b[i];
  return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}

/* Checks got[i] against golden row pick[i] for i < count; returns the smallest cosine. */
static double compare(const fixture *f, const float *got, const size_t *pick, size_t count,
                      double tol, const char *what) {
  double worst = 1;
  for (size_t i = 0; i < count; i++) {
    const float *want = (const float *)f->golden.data + pick[i] * (size_t)f->dim;
    double c = cosine(got + i * (size_t)f->dim, want, f->dim);
    CHECK_MSG(c >= tol, "%s: sentence %zu (%zu tokens) cosine %.7f < %g", what, pick[i],
              f->lengths[pick[i]], c, tol);
    if (!(c >= worst)) worst = c;
  }
  return worst;
}

static void build(vkf_bert_model *m, size_t batch, size_t len, vkf_dtype dt, vkf_bert_graph *out) {
  vkf_bert_build_options o = {.batch = (int64_t)batch, .seq_len = (int64_t)len, .dtype = dt};
  CHECK_OK(vkf_bert_build(m, &o, out));
}

/* Copies the padded batch's rows pick[0..count-1], re-padded to `len` columns. */
static void rows(const fixture *f, const size_t *pick, size_t count, size_t len, int32_t *ids,
                 int32_t *mask) {
  for (size_t i = 0; i < count; i++)
    for (size_t j = 0; j < len; j++) {
      ids[i * len + j] = f->ids[pick[i] * f->len + j];
      mask[i * len + j] = f->mask[pick[i] * f->len + j];
    }
}

/* The longest length among rows pick[0..count-1]. */
static size_t longest(const fixture *f, const size_t *pick, size_t count) {
  size_t len = 0;
  for (size_t i = 0; i < count; i++)
    if (f->lengths[pick[i]] > len) len = f->lengths[pick[i]];
  return len;
}

/* Embeds rows pick[0..count-1] as one batch padded to their longest length, through the
 * interpreter (t NULL) or the device, and checks each against its golden. Returns the smallest
 * cosine (0 on failure). */
static double run_set(gpu_test *t, vkf_bert_model *m, const fixture *f, const size_t *pick,
                      size_t count, vkf_dtype dt, double tol, const char *what) {
  size_t len = longest(f, pick, count);
  vkf_bert_graph bg;
  build(m, count, len, dt, &bg);
  if (!bg.graph) return 0;
  size_t in_size = count * len * sizeof(int32_t), out_size = count * (size_t)f->dim * 4;
  int32_t *ids = malloc(in_size), *mask = malloc(in_size);
  float *got = malloc(out_size);
  rows(f, pick, count, len, ids, mask);
  double t0 = now_s();
  vkf_status st = VKF_OK;
  if (!t) {
    vkf_input_binding in[2] = {{bg.input_ids, ids, in_size}, {bg.attention_mask, mask, in_size}};
    vkf_output_binding out = {bg.sentence_embedding, got, out_size};
    st = vkf_interp_evaluate(bg.graph, in, 2, &out, 1);
  } else {
    vkf_runner *r = NULL;
    st = vkf_runner_create(t->device, bg.graph, NULL, &r);
    if (!st) st = vkf_runner_set(r, bg.input_ids, ids, in_size);
    if (!st) st = vkf_runner_set(r, bg.attention_mask, mask, in_size);
    if (!st) st = vkf_runner_run(r);
    if (!st) st = vkf_runner_get(r, bg.sentence_embedding, got, out_size);
    vkf_runner_destroy(r);
  }
  CHECK_MSG(st == VKF_OK, "%s: %s", what, vkf_status_message(st));
  double worst = st ? 0 : compare(f, got, pick, count, tol, what);
  if (count > 1)
    fprintf(stderr, "%s: %zu sentences padded to %zu tokens, min cosine %.9f (tolerance %g), "
            "%.1f s\n", what, count, len, worst, tol, now_s() - t0);
  vkf_status_free(st);
  free(ids);
  free(mask);
  free(got);
  vkf_graph_destroy(bg.graph);
  return worst;
}

/* Each sentence of pick[] alone at its own length (no padding at all). */
static void run_alone(gpu_test *t, vkf_bert_model *m, const fixture *f, const size_t *pick,
                      size_t count, double tol, const char *what) {
  double worst = 1, t0 = now_s();
  for (size_t i = 0; i < count; i++) {
    double c = run_set(t, m, f, &pick[i], 1, VKF_F32, tol, what);
    if (!(c >= worst)) worst = c;
  }
  fprintf(stderr, "%s: %zu sentences one at a time, min cosine %.9f (tolerance %g), %.1f s\n",
          what, count, worst, tol, now_s() - t0);
}

/* Mixed lengths for the slow paths: the shortest sentence, two medium ones and the longest. */
static const size_t MIXED[4] = {9, 11, 14, 22};

static void test_device(gpu_test *t, vkf_bert_model *m, const fixture *f, const char *profile) {
  size_t all[MAX_SENTENCES];
  for (size_t i = 0; i < f->count; i++) all[i] = i;
  char what[96];
  if (!profile) {
    /* Every sentence in one batch padded to the longest: padding must change nobody's vector. */
    run_set(t, m, f, all, f->count, VKF_F32, TOL.device_f32, "device fp32");
    run_set(t, m, f, all + f->count - 8, 8, VKF_F16, TOL.device_f16, "device fp16");
    run_alone(t, m, f, all, f->count, TOL.device_f32, "device fp32 alone");
    return;
  }
  /* The mobile profile's variants (small tiles, no subgroup arithmetic) are several times slower
   * on lavapipe: a mixed batch and the same sentences alone. */
  snprintf(what, sizeof what, "device fp32 %s", profile);
  run_set(t, m, f, MIXED, 4, VKF_F32, TOL.device_f32, what);
  snprintf(what, sizeof what, "device fp16 %s", profile);
  run_set(t, m, f, MIXED, 4, VKF_F16, TOL.device_f16, what);
  snprintf(what, sizeof what, "device fp32 %s alone", profile);
  run_alone(t, m, f, MIXED, 4, TOL.device_f32, what);
}

static void test_errors(vkf_bert_model *m) {
  vkf_bert_model *bad = NULL;
  CHECK_STATUS(vkf_bert_load("tests/models/data/no_such_model", &bad), VKF_STATUS_NOT_FOUND,
               "no_such_model");
  CHECK(bad == NULL);
  CHECK_STATUS(vkf_bert_load("tests/models/data/vit_tiny", &bad), VKF_STATUS_UNSUPPORTED,
               "model_type \"vit\"");
  CHECK(bad == NULL);
  vkf_bert_graph bg;
  vkf_bert_build_options o = {.batch = 2, .seq_len = 513};
  CHECK_STATUS(vkf_bert_build(m, &o, &bg), VKF_STATUS_INVALID_ARGUMENT, "seq_len 513");
  CHECK(bg.graph == NULL);
  o = (vkf_bert_build_options){.dtype = VKF_I32};
  CHECK_STATUS(vkf_bert_build(m, &o, &bg), VKF_STATUS_INVALID_ARGUMENT, "dtype");
}

int main(void) {
  char *dir = NULL;
  vkf_status st = vkf_model_paths_find(VKF_MODEL_PACKAGE_MINILM, &dir);
  CHECK_MSG(st == VKF_OK, "the model package is needed (tools/setup.sh installs it): %s",
            vkf_status_message(st));
  vkf_status_free(st);
  if (!dir) return test_report();
  vkf_bert_model *m = NULL;
  vkf_tokenizer *tok = NULL;
  CHECK_OK(vkf_bert_load(dir, &m));
  CHECK_OK(vkf_tokenizer_load(dir, &tok));
  free(dir);
  if (!m || !tok) return test_report();
  const vkf_bert_pipeline *pl = vkf_bert_pipeline_of(m);
  CHECK(pl->pooling == VKF_BERT_POOL_MEAN && pl->normalize && pl->max_seq_length == 256);
  static fixture f;
  fixture_load(&f, tok);
  vkf_tokenizer_destroy(tok);
  test_errors(m);
  CHECK(f.count > MIXED[3]);
  if (f.count <= MIXED[3] || !f.golden.data) return test_report();

  /* Interpreter: a padded mixed batch, and every sentence alone. */
  size_t all[MAX_SENTENCES];
  for (size_t i = 0; i < f.count; i++) all[i] = i;
  run_set(NULL, m, &f, MIXED, 4, VKF_F32, TOL.interp_f32, "interpreter fp32");
  run_alone(NULL, m, &f, all, f.count, TOL.interp_f32, "interpreter fp32 alone");

  static const char *profiles[2] = {NULL, "mobile"};
  for (int p = 0; p < 2; p++) {
    if (profiles[p]) setenv("VKF_DEVICE_PROFILE", profiles[p], 1);
    vkf_env_reload();
    gpu_test t = gpu_test_start();
    test_device(&t, m, &f, profiles[p]);
    if (p == 0) {
      vkf_device_destroy(t.device);
      uint32_t messages = vkf_instance_validation_message_count(t.instance);
      CHECK_MSG(messages == 0, "%u validation messages", messages);
      vkf_instance_destroy(t.instance);
      continue;
    }
    vkf_bert_destroy(m);
    vkf_npy_array_release(&f.golden);
    for (size_t i = 0; i < f.count; i++) free(f.text[i]);
    return gpu_test_finish(&t);
  }
  return test_report();
}
