/* BERT sentence embeddings against the goldens of tools/goldens/make_embedding_golden.py (PyTorch fp32):
 * all-MiniLM-L6-v2 (real weights, mean pooling + L2) and a tiny random BertForMaskedLM ("bert."
 * names, CLS pooling, no normalisation). For each: the tokenizer on the sentence set, the builder
 * through the interpreter, the device path for padded mixed-length batches and for sentences
 * alone, under the default caps and the mobile profile; then load/build errors. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "graph/base/env.h"
#include "graph/interp/interp.h"
#include "graph/passes/passes.h"
#include "host/runner.h"
#include "models/arch/bert.h"
#include "models/formats/model_paths.h"
#include "models/formats/npy.h"
#include "text/wordpiece.h"
#include "tests/gpu_util.h"

/* Error per sentence vector: 1 - cosine for the normalised all-MiniLM-L6-v2 (the criterion
 * is cosine >= 0.9999), ||got - golden|| / ||golden|| for the tiny model, whose CLS vectors are
 * not normalised (so the norm is checked too). */
static const struct {
  double interp_f32; /* interpreter vs PyTorch: same maths, other summation order */
  double device_f32; /* padded batch and unpadded alike */
  double device_f16; /* f16 weights + activations (fp32 accumulation, softmax state, pooling) */
} TOL_MINILM = {1e-5, 1e-4, 5e-4}, TOL_TINY = {1e-5, 1e-4, 1e-2};

#define SENTENCES "tests/models/embedding_sentences.txt"
#define GOLDEN "tests/models/golden/bert/"
#define TINY_DIR "tests/models/data/bert_tiny"
#define MAX_SENTENCES 64
#define MAX_TOKENS 128 /* the longest golden sentence has 125 */

typedef struct fixture {
  const char *name;
  int normalized;
  char *text[MAX_SENTENCES];
  size_t count;
  vkf_npy_array golden; /* f32 [count, D] */
  int64_t dim;
  int32_t ids[MAX_SENTENCES * MAX_TOKENS];  /* padded batch, [count, len] */
  int32_t mask[MAX_SENTENCES * MAX_TOKENS]; /* [count, len] */
  size_t len;
  size_t lengths[MAX_SENTENCES]; /* real tokens per sentence */
} fixture;

/* Reads the sentences, the golden `prefix`_embeddings.npy and checks our token ids against
 * `prefix`_ids.txt (Hugging Face's slow tokenizer), then tokenizes the whole set as a batch. */
static void fixture_load(fixture *f, const char *name, const char *prefix, const char *model_dir) {
  f->name = name;
  vkf_wordpiece *tok = NULL;
  CHECK_OK(vkf_wordpiece_load(model_dir, &tok));
  FILE *in = fopen(SENTENCES, "r");
  CHECK(in != NULL);
  char line[4096], path[256];
  while (in && f->count < MAX_SENTENCES && fgets(line, sizeof line, in)) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == '\0' || line[0] == '#') continue;
    f->text[f->count++] = strdup(line);
  }
  if (in) fclose(in);
  snprintf(path, sizeof path, GOLDEN "%s_embeddings.npy", prefix);
  CHECK_OK(vkf_npy_load(path, &f->golden));
  CHECK(f->golden.rank == 2 && (size_t)f->golden.shape[0] == f->count);
  f->dim = f->golden.shape[1];
  if (!tok) return;

  /* Our tokenizer must give Hugging Face's ids for every sentence, or nothing below means much. */
  snprintf(path, sizeof path, GOLDEN "%s_ids.txt", prefix);
  FILE *ids = fopen(path, "r");
  CHECK(ids != NULL);
  for (size_t i = 0; ids && i < f->count; i++) {
    int32_t got[MAX_TOKENS];
    size_t n = 0;
    CHECK_OK(vkf_wordpiece_encode(tok, f->text[i], MAX_TOKENS, got, &n));
    f->lengths[i] = n;
    char *p = fgets(line, sizeof line, ids);
    size_t k = 0;
    int same = p != NULL;
    for (char *end = NULL; p && k <= n; p = end, k++) {
      long v = strtol(p, &end, 10);
      if (end == p) break;
      same = same && k < n && got[k] == v;
    }
    CHECK_MSG(same && k == n, "%s sentence %zu: token ids differ from Hugging Face's", name, i);
  }
  if (ids) fclose(ids);
  CHECK_OK(vkf_wordpiece_encode_batch(tok, (const char *const *)f->text, f->count, MAX_TOKENS,
                                      f->ids, f->mask, &f->len));
  vkf_wordpiece_destroy(tok);
}

static void fixture_release(fixture *f) {
  vkf_npy_array_release(&f->golden);
  for (size_t i = 0; i < f->count; i++) free(f->text[i]);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The fixture's error measure of one vector (see the tolerance table). */
static double vector_error(const fixture *f, const float *a, const float *b) {
  double ab = 0, aa = 0, bb = 0, dd = 0;
  for (int64_t i = 0; i < f->dim; i++) {
    ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    dd += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
  }
  if (f->normalized) return aa > 0 && bb > 0 ? 1 - ab / sqrt(aa * bb) : 1;
  return bb > 0 ? sqrt(dd / bb) : 1;
}

/* Checks got[i] against golden row pick[i] for i < count; returns the largest error. */
static double compare(const fixture *f, const float *got, const size_t *pick, size_t count,
                      double tol, const char *what) {
  double worst = 0;
  for (size_t i = 0; i < count; i++) {
    const float *want = (const float *)f->golden.data + pick[i] * (size_t)f->dim;
    double e = vector_error(f, got + i * (size_t)f->dim, want);
    CHECK_MSG(e <= tol, "%s %s: sentence %zu (%zu tokens) %s %.3g > %g", f->name, what, pick[i],
              f->lengths[pick[i]], f->normalized ? "1 - cosine" : "relative error", e, tol);
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

/* The longest length among rows pick[0..count-1]. */
static size_t longest(const fixture *f, const size_t *pick, size_t count) {
  size_t len = 0;
  for (size_t i = 0; i < count; i++)
    if (f->lengths[pick[i]] > len) len = f->lengths[pick[i]];
  return len;
}

/* Embeds rows pick[0..count-1] as one batch padded to their longest length, through the
 * interpreter (t NULL) or the device, and checks each against its golden. Returns the largest
 * error (1 on failure). */
static double run_set(gpu_test *t, vkf_bert_model *m, const fixture *f, const size_t *pick,
                      size_t count, vkf_dtype dt, double tol, const char *what) {
  size_t len = longest(f, pick, count);
  vkf_bert_graph bg;
  vkf_bert_build_options o = {.batch = (int64_t)count, .seq_len = (int64_t)len, .dtype = dt};
  CHECK_OK(vkf_bert_build(m, &o, &bg));
  if (!bg.graph) return 1;
  size_t in_size = count * len * sizeof(int32_t), out_size = count * (size_t)f->dim * 4;
  int32_t *ids = malloc(in_size), *mask = malloc(in_size);
  float *got = malloc(out_size);
  for (size_t i = 0; i < count; i++) /* rows of the whole set's batch, re-padded to `len` */
    for (size_t j = 0; j < len; j++) {
      ids[i * len + j] = f->ids[pick[i] * f->len + j];
      mask[i * len + j] = f->mask[pick[i] * f->len + j];
    }
  double t0 = now_s();
  vkf_status st = VKF_OK;
  if (!t) {
    vkf_input_binding in[2] = {{bg.input_ids, ids, in_size}, {bg.attention_mask, mask, in_size}};
    vkf_output_binding out = {bg.sentence_embedding, got, out_size};
    st = vkf_interp_evaluate(bg.graph, in, 2, &out, 1);
  } else {
    vkf_runner *r = NULL;
    st = vkf_passes_run(bg.graph, NULL, NULL); /* as vkf embed runs it */
    if (!st) st = vkf_runner_create(t->device, bg.graph, NULL, &r);
    if (!st) st = vkf_runner_set(r, bg.input_ids, ids, in_size);
    if (!st) st = vkf_runner_set(r, bg.attention_mask, mask, in_size);
    if (!st) st = vkf_runner_run(r);
    if (!st) st = vkf_runner_get(r, bg.sentence_embedding, got, out_size);
    vkf_runner_destroy(r);
  }
  CHECK_MSG(st == VKF_OK, "%s %s: %s", f->name, what, vkf_status_message(st));
  double worst = st ? 1 : compare(f, got, pick, count, tol, what);
  if (count > 1)
    fprintf(stderr,
            "%s %s: %zu sentences padded to %zu tokens, max error %.3g (tolerance %g), "
            "%.1f s\n",
            f->name, what, count, len, worst, tol, now_s() - t0);
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
  double worst = 0, t0 = now_s();
  for (size_t i = 0; i < count; i++) {
    double e = run_set(t, m, f, &pick[i], 1, VKF_F32, tol, what);
    if (!(e <= worst)) worst = e;
  }
  fprintf(stderr, "%s %s: %zu sentences one at a time, max error %.3g (tolerance %g), %.1f s\n",
          f->name, what, count, worst, tol, now_s() - t0);
}

/* Mixed lengths for the slow paths: the shortest sentence, two medium ones and the longest. */
static const size_t MIXED[4] = {9, 11, 14, 22};

/* `full`: every sentence as one padded batch and every sentence alone; otherwise (the mobile
 * profile, whose variants are several times slower on lavapipe) the MIXED set. fp16 on MIXED. */
static void test_device(gpu_test *t, vkf_bert_model *m, const fixture *f, int full,
                        const char *profile, double tol_f32, double tol_f16) {
  size_t all[MAX_SENTENCES];
  for (size_t i = 0; i < f->count; i++) all[i] = i;
  char what[3][64];
  snprintf(what[0], sizeof what[0], "device fp32 %s", profile);
  snprintf(what[1], sizeof what[1], "device fp16 %s", profile);
  snprintf(what[2], sizeof what[2], "device fp32 %s alone", profile);
  const size_t *set = full ? all : MIXED;
  size_t count = full ? f->count : 4;
  run_set(t, m, f, set, count, VKF_F32, tol_f32, what[0]);
  run_set(t, m, f, MIXED, 4, VKF_F16, tol_f16, what[1]);
  run_alone(t, m, f, set, count, tol_f32, what[2]);
}

/* ---- errors: copies of the tiny checkpoint, changed one way per case ---- */

static void copy_file(const char *from, const char *to, const char *find, const char *replace) {
  FILE *in = fopen(from, "rb");
  CHECK(in != NULL);
  if (!in) return;
  fseek(in, 0, SEEK_END);
  long n = ftell(in);
  fseek(in, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  CHECK(fread(buf, 1, (size_t)n, in) == (size_t)n);
  fclose(in);
  buf[n] = '\0';
  FILE *out = fopen(to, "wb");
  CHECK(out != NULL);
  char *at = find ? strstr(buf, find) : NULL;
  CHECK(!find || at != NULL);
  if (out && at) {
    fwrite(buf, 1, (size_t)(at - buf), out);
    fputs(replace, out);
    fputs(at + strlen(find), out);
  } else if (out) {
    fwrite(buf, 1, (size_t)n, out);
  }
  if (out) fclose(out);
  free(buf);
}

/* A copy of the tiny checkpoint in `dir` with `find` replaced by `replace` in file `changed`. */
static void make_variant(const char *dir, const char *changed, const char *find,
                         const char *replace) {
  static const char *files[] = {"config.json", "model.safetensors",     "modules.json",
                                "vocab.txt",   "tokenizer_config.json", "1_Pooling/config.json"};
  char from[512], to[512];
  mkdir(dir, 0700);
  snprintf(to, sizeof to, "%s/1_Pooling", dir);
  mkdir(to, 0700);
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(from, sizeof from, TINY_DIR "/%s", files[i]);
    snprintf(to, sizeof to, "%s/%s", dir, files[i]);
    int edit = strcmp(files[i], changed) == 0;
    copy_file(from, to, edit ? find : NULL, edit ? replace : NULL);
  }
}

static void expect_load_error(const char *dir, vkf_status_code code, const char *needle) {
  vkf_bert_model *m = NULL;
  vkf_status st = vkf_bert_load(dir, &m);
  CHECK_MSG(vkf_status_code_of(st) == code && strstr(vkf_status_message(st), needle) &&
                !strchr(vkf_status_message(st), '\n'),
            "%s: got %s \"%s\", expected %s with \"%s\"", dir,
            vkf_status_code_name(vkf_status_code_of(st)), vkf_status_message(st),
            vkf_status_code_name(code), needle);
  CHECK(m == NULL);
  vkf_status_free(st);
  vkf_bert_destroy(m);
}

static void test_errors(vkf_bert_model *tiny) {
  expect_load_error("tests/models/data/no_such_model", VKF_STATUS_NOT_FOUND, "no_such_model");
  expect_load_error("tests/models/data/vit_tiny", VKF_STATUS_UNSUPPORTED, "model_type \"vit\"");
  char root[] = "/tmp/vkf_test_bert_XXXXXX", dir[512];
  CHECK(mkdtemp(root) != NULL);
  snprintf(dir, sizeof dir, "%s/shape", root);
  make_variant(dir, "config.json", "\"intermediate_size\": 64", "\"intermediate_size\": 65");
  expect_load_error(dir, VKF_STATUS_SHAPE, "bert.encoder.layer.0.intermediate.dense.weight");
  snprintf(dir, sizeof dir, "%s/relative", root);
  make_variant(dir, "config.json", "\"absolute\"", "\"relative_key\"");
  expect_load_error(dir, VKF_STATUS_UNSUPPORTED, "position_embedding_type \"relative_key\"");
  snprintf(dir, sizeof dir, "%s/dense", root);
  make_variant(dir, "modules.json", "models.Pooling\"",
               "models.Pooling\"}, {\"path\": \"2_Dense\", \"type\": "
               "\"sentence_transformers.models.Dense\"");
  expect_load_error(dir, VKF_STATUS_UNSUPPORTED, "sentence_transformers.models.Dense");
  snprintf(dir, sizeof dir, "%s/max", root);
  make_variant(dir, "1_Pooling/config.json", "\"pooling_mode_max_tokens\": false",
               "\"pooling_mode_max_tokens\": true");
  expect_load_error(dir, VKF_STATUS_UNSUPPORTED, "pooling_mode_max_tokens");
  snprintf(dir, sizeof dir, "%s/roberta", root);
  make_variant(dir, "config.json", "\"model_type\": \"bert\"", "\"model_type\": \"roberta\"");
  expect_load_error(dir, VKF_STATUS_UNSUPPORTED, "model_type \"roberta\"");
  /* A directory where a sentence-transformers JSON file belongs is named as such, not sized as
   * 2^63 bytes by ftell. */
  static const char *const dir_files[] = {"modules.json", "1_Pooling/config.json",
                                          "sentence_bert_config.json"};
  for (size_t i = 0; i < sizeof dir_files / sizeof *dir_files; i++) {
    char path[600], needle[700];
    snprintf(dir, sizeof dir, "%s/dir%zu", root, i);
    make_variant(dir, "config.json", NULL, NULL);
    snprintf(path, sizeof path, "%s/%s", dir, dir_files[i]);
    unlink(path);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(needle, sizeof needle, "%s: is a directory, not a file", path);
    expect_load_error(dir, VKF_STATUS_IO, needle);
  }
  snprintf(dir, sizeof dir, "rm -rf '%s'", root);
  CHECK(system(dir) == 0);

  vkf_bert_graph bg;
  vkf_bert_build_options o = {.batch = 2, .seq_len = 129};
  CHECK_STATUS(vkf_bert_build(tiny, &o, &bg), VKF_STATUS_INVALID_ARGUMENT, "seq_len 129");
  CHECK(bg.graph == NULL);
  o = (vkf_bert_build_options){.dtype = VKF_I32};
  CHECK_STATUS(vkf_bert_build(tiny, &o, &bg), VKF_STATUS_INVALID_ARGUMENT, "dtype");
}

int main(void) {
  char *dir = NULL;
  vkf_status st = vkf_model_paths_find(VKF_MODEL_PACKAGE_MINILM, &dir);
  CHECK_MSG(st == VKF_OK, "the model package is needed (tools/dev/setup.sh installs it): %s",
            vkf_status_message(st));
  vkf_status_free(st);
  if (!dir) return test_report();
  vkf_bert_model *minilm = NULL, *tiny = NULL;
  CHECK_OK(vkf_bert_load(dir, &minilm));
  CHECK_OK(vkf_bert_load(TINY_DIR, &tiny));
  static fixture fm = {.normalized = 1}, ft = {.normalized = 0};
  fixture_load(&fm, "all-MiniLM-L6-v2", "minilm", dir);
  fixture_load(&ft, "bert_tiny", "tiny", TINY_DIR);
  free(dir);
  if (!minilm || !tiny) return test_report();
  const vkf_bert_pipeline *p = vkf_bert_pipeline_of(minilm);
  CHECK(p->pooling == VKF_BERT_POOL_MEAN && p->normalize && p->max_seq_length == 256);
  p = vkf_bert_pipeline_of(tiny);
  CHECK(p->pooling == VKF_BERT_POOL_CLS && !p->normalize && p->max_seq_length == 128);
  test_errors(tiny);
  CHECK(fm.count > MIXED[3] && ft.count == fm.count && fm.len == ft.len);
  if (fm.count <= MIXED[3] || !fm.golden.data || !ft.golden.data) return test_report();

  /* Interpreter: a padded mixed batch, and every sentence alone. */
  size_t all[MAX_SENTENCES];
  for (size_t i = 0; i < fm.count; i++) all[i] = i;
  run_set(NULL, minilm, &fm, MIXED, 4, VKF_F32, TOL_MINILM.interp_f32, "interpreter fp32");
  run_alone(NULL, minilm, &fm, all, fm.count, TOL_MINILM.interp_f32, "interpreter fp32");
  run_set(NULL, tiny, &ft, all, ft.count, VKF_F32, TOL_TINY.interp_f32, "interpreter fp32");
  run_alone(NULL, tiny, &ft, all, ft.count, TOL_TINY.interp_f32, "interpreter fp32");

  /* Device: default caps, then the mobile profile (a second device picks up the clamp). */
  static const char *profiles[2] = {"default", "mobile"};
  for (int i = 0; i < 2; i++) {
    if (i == 1) setenv("VKF_DEVICE_PROFILE", profiles[i], 1);
    vkf_env_reload();
    gpu_test t = gpu_test_start();
    test_device(&t, minilm, &fm, i == 0, profiles[i], TOL_MINILM.device_f32, TOL_MINILM.device_f16);
    test_device(&t, tiny, &ft, 1, profiles[i], TOL_TINY.device_f32, TOL_TINY.device_f16);
    if (i == 0) {
      vkf_device_destroy(t.device);
      uint32_t messages = vkf_instance_validation_message_count(t.instance);
      CHECK_MSG(messages == 0, "%u validation messages", messages);
      vkf_instance_destroy(t.instance);
      continue;
    }
    vkf_bert_destroy(minilm);
    vkf_bert_destroy(tiny);
    fixture_release(&fm);
    fixture_release(&ft);
    return gpu_test_finish(&t);
  }
  return test_report();
}
