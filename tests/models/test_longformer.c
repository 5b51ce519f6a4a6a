/* LongformerModel through the model registry, run by the CPU reference interpreter, against
 * transformers 4.38.2 (tools/goldens/make_longformer_golden.py): last_hidden_state and pooler_output
 * within 1e-3 at every position (padding too: HF zeroes its attention output, so does the
 * scatter) with and without global tokens, for per-layer windows (some wider than a layout
 * block) and a
 * BF16 checkpoint; each row alone equals the batch; the host-derived inputs (positions, global
 * indices) as HF computes them; config and input errors as one line. The device path is
 * tests/cli/test_longformer.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "models/arch/longformer.h"
#include "models/arch/longformer_internal.h"
#include "models/formats/npy.h"
#include "models/registry/arch_entry.h" /* vkf_model_impl: the architecture object, white-box */
#include "models/registry/model.h"
#include "tests/test_util.h"

enum { IN_IDS, IN_MASK, IN_GLOBAL, IN_TYPES, IN_DECLARED };

typedef struct batch {
  int64_t rows, seq;
  int32_t *in[IN_DECLARED]; /* [rows, seq] each */
} batch;

static int32_t *load_ids(const char *dir, const char *name, int64_t *rows, int64_t *seq) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  vkf_npy_array a;
  vkf_status st = vkf_npy_load(path, &a);
  if (st) {
    fprintf(stderr, "%s\n", vkf_status_message(st));
    vkf_status_free(st);
    return NULL;
  }
  *rows = a.shape[0], *seq = a.shape[1];
  int32_t *v = malloc(a.element_count * sizeof *v);
  for (size_t i = 0; i < a.element_count; i++) v[i] = (int32_t)((const int64_t *)a.data)[i];
  vkf_npy_array_release(&a);
  return v;
}

static float *load_f32(const char *dir, const char *name, size_t *count) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  vkf_npy_array a;
  vkf_status st = vkf_npy_load(path, &a);
  if (st) {
    vkf_status_free(st);
    return NULL;
  }
  *count = a.element_count;
  float *v = malloc(a.data_size);
  memcpy(v, a.data, a.data_size);
  vkf_npy_array_release(&a);
  return v;
}

static vkf_dtype run_dtype = VKF_F32; /* the build's weights and activations */

/* Runs the rows of `b` through the interpreter (derived inputs from these rows; with_global 0:
 * global_attention_mask not given) and returns the named outputs, malloc'ed. */
static vkf_status run_outputs(vkf_model *m, const batch *b, int with_global,
                              const char *const *names, int count, float **outs) {
  const int32_t *data[IN_DECLARED];
  int32_t *zeros = calloc((size_t)(b->rows * b->seq), sizeof *zeros);
  for (int i = 0; i < IN_DECLARED; i++) data[i] = b->in[i] ? b->in[i] : zeros;
  if (!with_global) data[IN_GLOBAL] = NULL; /* not given: HF's None */
  vkf_model_derived d;
  vkf_status st = vkf_model_derive(m, data, b->rows, b->seq, &d);
  vkf_model_build_options o = {.batch = b->rows,
                               .seq_len = b->seq,
                               .outputs = names,
                               .output_count = (uint32_t)count,
                               .dtype = run_dtype,
                               .derived = &d};
  vkf_model_graph mg = {0};
  if (!st) st = vkf_model_build(m, &o, &mg);
  vkf_output_binding out[4];
  for (int k = 0; k < count; k++) {
    const vkf_model_io *io = vkf_model_output(m, (uint32_t)vkf_model_find_output(m, names[k]));
    int64_t last = io->shape[io->rank - 1]; /* -1: the sequence ([B, S] start/end logits) */
    size_t n = (size_t)b->rows * (size_t)(last < 0 ? b->seq : last) * (io->rank == 3 ? b->seq : 1);
    outs[k] = malloc(n * 4);
    out[k] = (vkf_output_binding){mg.outputs[vkf_model_find_output(m, names[k])], outs[k], n * 4};
  }
  if (!st) {
    vkf_input_binding in[VKF_MODEL_MAX_IO];
    size_t n = 0;
    for (uint32_t i = 0; i < mg.input_count; i++) {
      if (!vkf_value_valid(mg.inputs[i])) continue; /* global_attention_mask: read on the host */
      const void *p = i < IN_DECLARED ? (const void *)data[i] : d.data[i - IN_DECLARED];
      size_t size = i < IN_DECLARED ? (size_t)(b->rows * b->seq) * 4 : d.size[i - IN_DECLARED];
      in[n++] = (vkf_input_binding){mg.inputs[i], p, size};
    }
    st = vkf_interp_evaluate(mg.graph, in, n, out, (size_t)count);
  }
  if (mg.graph) vkf_graph_destroy(mg.graph);
  vkf_model_derived_release(&d);
  free(zeros);
  return st;
}

static vkf_status run(vkf_model *m, const batch *b, int with_global, float **hidden,
                      float **pooled) {
  static const char *const names[2] = {"last_hidden_state", "pooler_output"};
  float *outs[2] = {NULL, NULL};
  vkf_status st = run_outputs(m, b, with_global, names, 2, outs);
  *hidden = outs[0], *pooled = outs[1];
  return st;
}

static double max_diff_masked(const float *a, const float *b, const int32_t *mask, size_t rows_seq,
                              int64_t d) {
  double worst = 0;
  for (size_t t = 0; t < rows_seq; t++) {
    if (mask && !mask[t]) continue;
    for (int64_t k = 0; k < d; k++) {
      double e = fabs((double)a[t * (size_t)d + (size_t)k] - b[t * (size_t)d + (size_t)k]);
      if (e > worst || e != e) worst = e != e ? 1e30 : e;
    }
  }
  return worst;
}

static void check_model(const char *name) {
  char dir[256], gold[256];
  snprintf(dir, sizeof dir, "tests/models/data/%s", name);
  snprintf(gold, sizeof gold, "tests/models/golden/%s", name);
  vkf_model *m = NULL;
  CHECK_OK(vkf_model_open(dir, &m));
  if (!m) return;
  batch b = {0};
  b.in[IN_IDS] = load_ids(gold, "input_ids", &b.rows, &b.seq);
  b.in[IN_MASK] = load_ids(gold, "attention_mask", &b.rows, &b.seq);
  b.in[IN_GLOBAL] = load_ids(gold, "global_attention_mask", &b.rows, &b.seq);
  int64_t d = vkf_model_output(m, 0)->shape[2];
  for (int with_global = 1; with_global >= 0; with_global--) {
    size_t hn = 0, pn = 0;
    float *want_h =
        load_f32(gold, with_global ? "last_hidden_state" : "last_hidden_state_local", &hn);
    float *want_p = load_f32(gold, with_global ? "pooler_output" : "pooler_output_local", &pn);
    float *h = NULL, *p = NULL;
    CHECK_OK(run(m, &b, with_global, &h, &p));
    double eh = max_diff_masked(h, want_h, NULL, (size_t)(b.rows * b.seq), d);
    double ep = max_diff_masked(p, want_p, NULL, (size_t)b.rows, d);
    printf("%s%s: last_hidden_state max diff %.3g, pooler_output %.3g\n", name,
           with_global ? "" : " (no global tokens)", eh, ep);
    CHECK_MSG(eh < 1e-3, "%s last_hidden_state differs by %g", name, eh);
    CHECK_MSG(ep < 1e-3, "%s pooler_output differs by %g", name, ep);
    /* Each row alone (its own, smaller global prefix) equals its row of the batch. */
    for (int64_t r = 0; with_global && r < b.rows; r++) {
      batch one = {.rows = 1, .seq = b.seq};
      for (int i = 0; i < IN_DECLARED; i++) one.in[i] = b.in[i] ? b.in[i] + r * b.seq : NULL;
      float *h1 = NULL, *p1 = NULL;
      CHECK_OK(run(m, &one, 1, &h1, &p1));
      double e1 =
          max_diff_masked(h1, h + r * b.seq * d, b.in[IN_MASK] + r * b.seq, (size_t)b.seq, d);
      CHECK_MSG(e1 < 1e-5, "%s row %lld alone differs from the batch by %g", name, (long long)r,
                e1);
      free(h1), free(p1);
    }
    free(h), free(p), free(want_h), free(want_p);
  }
  for (int i = 0; i < IN_DECLARED; i++) free(b.in[i]);
  vkf_model_close(m);
}

/* The derived inputs for a hand-made batch: RoBERTa positions skip padding ids, global slots in
 * order, a global flag on padding ignored, padding rows point at the zero row. */
static void check_derive(void) {
  vkf_model *m = NULL;
  CHECK_OK(vkf_model_open("tests/models/data/longformer_tiny", &m));
  if (!m) return;
  const vkf_longformer_model *lm = vkf_model_impl(m);
  int32_t ids[2 * 5] = {0, 7, 1, 9, 1, /**/ 0, 5, 6, 1, 1};
  int32_t mask[2 * 5] = {1, 1, 1, 1, 0, /**/ 1, 1, 1, 0, 0};
  int32_t glob[2 * 5] = {0, 1, 0, 1, 1, /**/ 0, 0, 0, 0, 1};
  vkf_longformer_derived d;
  CHECK_OK(vkf_longformer_derive(lm, ids, mask, glob, 2, 5, &d));
  CHECK(d.global_tokens == 2 && d.count == 4);
  const int32_t *pos = d.data[VKF_LONGFORMER_POSITION_IDS];
  const int32_t want_pos[10] = {2, 3, 1, 4, 1, 2, 3, 4, 1, 1};
  CHECK(pos && !memcmp(pos, want_pos, sizeof want_pos));
  int64_t np = vkf_longformer_padded_len(lm, 5), p = vkf_longformer_prefix_len(2);
  CHECK(np == 8 && p == 32);
  const int32_t *gi = d.data[VKF_LONGFORMER_GLOBAL_INDEX];
  const float *kb = d.data[VKF_LONGFORMER_KEY_BIAS];
  const int32_t *sc = d.data[VKF_LONGFORMER_SCATTER_INDEX];
  CHECK(gi && gi[0] == 1 && gi[1] == 3 && gi[2] == 0 && gi[p] == 0);
  /* Row 0: prefix slots 0, 1 used; window part: tokens 0 and 2 local, 1 and 3 global, 4 padding
   * (a global flag on it), 5..7 window padding. */
  CHECK(kb && kb[0] == 0 && kb[1] == 0 && kb[2] < -1e29f && kb[p + 0] == 0 && kb[p + 2] == 0);
  CHECK(kb && kb[p + 1] < -1e29f && kb[p + 3] < -1e29f && kb[p + 4] < -1e29f && kb[p + 7] < -1e29f);
  CHECK(kb && kb[p + np] < -1e29f && kb[p + np + p + 2] == 0 && kb[p + np + p + 3] < -1e29f);
  const int32_t want_sc0[8] = {0, 8, 2, 9, 40, 40, 40, 40};
  CHECK(sc && !memcmp(sc, want_sc0, sizeof want_sc0));
  for (int k = 0; k < VKF_LONGFORMER_DERIVED_COUNT; k++) free(d.data[k]);
  vkf_model_close(m);
}

static void write_config(const char *dir, const char *window) {
  char src[512], dst[512], cmd[1200];
  snprintf(src, sizeof src, "tests/models/data/longformer_tiny");
  snprintf(cmd, sizeof cmd, "rm -rf %s && cp -r %s %s", dir, src, dir);
  CHECK(system(cmd) == 0);
  snprintf(dst, sizeof dst, "%s/config.json", dir);
  FILE *f = fopen(dst, "w");
  if (!f) return;
  fprintf(f,
          "{\"model_type\": \"longformer\", \"architectures\": [\"LongformerModel\"], "
          "\"vocab_size\": 50, \"hidden_size\": 30, \"num_hidden_layers\": 3, "
          "\"num_attention_heads\": 5, \"intermediate_size\": 37, \"max_position_embeddings\": 64, "
          "\"type_vocab_size\": 1, \"pad_token_id\": 1, \"attention_window\": %s}",
          window);
  fclose(f);
}

static void check_errors(void) {
  const char *dir = "build/longformer_bad";
  vkf_model *m = NULL;
  write_config(dir, "[4, 7, 4]");
  CHECK_STATUS(vkf_model_open(dir, &m), VKF_STATUS_INVALID_ARGUMENT,
               "\"attention_window\" of layer 1 is 7; it must be an even value");
  write_config(dir, "[4, 8]");
  CHECK_STATUS(vkf_model_open(dir, &m), VKF_STATUS_INVALID_ARGUMENT, "has 2 entries");
  write_config(dir, "[4, 2, 4]");
  CHECK_STATUS(vkf_model_open(dir, &m), VKF_STATUS_UNSUPPORTED, "of layer 1 is 2, which");
  write_config(dir, "0");
  CHECK_STATUS(vkf_model_open(dir, &m), VKF_STATUS_INVALID_ARGUMENT, "of layer 0 is 0");
  /* [4, 6, 4]: 5 tokens pad to 6, which the 4-token layers cannot chunk (HF asserts). */
  write_config(dir, "[4, 6, 4]");
  CHECK_OK(vkf_model_open(dir, &m));
  if (m) {
    vkf_model_build_options o = {.batch = 1, .seq_len = 5};
    vkf_model_graph mg;
    CHECK_STATUS(vkf_model_build(m, &o, &mg), VKF_STATUS_INVALID_ARGUMENT,
                 "layer 0's attention_window 4 does not divide the padded sequence length 6");
    o.seq_len = 12;
    CHECK_OK(vkf_model_build(m, &o, &mg));
    if (mg.graph) vkf_graph_destroy(mg.graph);
    /* A global_attention_mask of the wrong shape. */
    int32_t v[12] = {0};
    vkf_model_array in[2] = {
        {.name = "input_ids", .dtype = VKF_I32, .rank = 2, .shape = {2, 6}, .data = v},
        {.name = "global_attention_mask", .dtype = VKF_I32, .rank = 2, .shape = {2, 5}, .data = v}};
    int64_t rows, seq;
    CHECK_STATUS(vkf_model_check_inputs(m, in, 2, &rows, &seq, NULL), VKF_STATUS_SHAPE,
                 "input global_attention_mask has sequence length 5 but input_ids has 6");
    in[1].shape[1] = 6;
    v[3] = 2;
    CHECK_STATUS(vkf_model_check_inputs(m, in, 2, &rows, &seq, NULL), VKF_STATUS_INVALID_ARGUMENT,
                 "input global_attention_mask: value 2 at [0, 3] is outside [0, 2)");
    vkf_model_close(m);
  }
}

/* A task head: logits within 1e-3 of LongformerFor*Classification's, with the golden's global
 * tokens and without a global_attention_mask (sequence classification then makes the first
 * token global, as HF does). */
static void check_head(const char *name, const char *arch) {
  char dir[256], gold[256];
  snprintf(dir, sizeof dir, "tests/models/data/%s", name);
  snprintf(gold, sizeof gold, "tests/models/golden/%s", name);
  vkf_model *m = NULL;
  CHECK_OK(vkf_model_open(dir, &m));
  if (!m) return;
  CHECK(!strcmp(vkf_model_architecture(m), arch));
  CHECK(vkf_model_find_output(m, "pooler_output") < 0); /* heads are built without the pooler */
  batch b = {0};
  b.in[IN_IDS] = load_ids(gold, "input_ids", &b.rows, &b.seq);
  b.in[IN_MASK] = load_ids(gold, "attention_mask", &b.rows, &b.seq);
  b.in[IN_GLOBAL] = load_ids(gold, "global_attention_mask", &b.rows, &b.seq);
  for (int with_global = 1; with_global >= 0; with_global--) {
    size_t n = 0;
    float *want = load_f32(gold, with_global ? "logits" : "logits_local", &n);
    static const char *const names[1] = {"logits"};
    float *got = NULL;
    CHECK_OK(run_outputs(m, &b, with_global, names, 1, &got));
    double e = got && want ? max_diff_masked(got, want, NULL, n, 1) : 1e30;
    printf("%s%s: logits max diff %.3g\n", name, with_global ? "" : " (no global mask)", e);
    CHECK_MSG(e < 1e-3, "%s logits differ by %g", name, e);
    free(got), free(want);
  }
  for (int i = 0; i < IN_DECLARED; i++) free(b.in[i]);
  vkf_model_close(m);
}

/* LongformerForQuestionAnswering: start_logits and end_logits within 1e-3 of HF's with the
 * golden's global tokens and without a global mask (HF then makes the question global); HF's
 * question ends from the batch's sep tokens, its grouping quirk included, and the error when the
 * batch does not hold 3 per row. */
static void check_qa(void) {
  const char *name = "longformer_qa_tiny";
  char dir[256], gold[256];
  snprintf(dir, sizeof dir, "tests/models/data/%s", name);
  snprintf(gold, sizeof gold, "tests/models/golden/%s", name);
  vkf_model *m = NULL;
  CHECK_OK(vkf_model_open(dir, &m));
  if (!m) return;
  CHECK(!strcmp(vkf_model_architecture(m), "LongformerForQuestionAnswering"));
  CHECK(vkf_model_find_output(m, "logits") < 0);
  batch b = {0};
  b.in[IN_IDS] = load_ids(gold, "input_ids", &b.rows, &b.seq);
  b.in[IN_MASK] = load_ids(gold, "attention_mask", &b.rows, &b.seq);
  b.in[IN_GLOBAL] = load_ids(gold, "global_attention_mask", &b.rows, &b.seq);
  static const char *const names[2] = {"start_logits", "end_logits"};
  for (int with_global = 1; with_global >= 0; with_global--) {
    float *got[2] = {NULL, NULL};
    CHECK_OK(run_outputs(m, &b, with_global, names, 2, got));
    for (int k = 0; k < 2; k++) {
      char key[64];
      snprintf(key, sizeof key, "%s%s", names[k], with_global ? "" : "_local");
      size_t n = 0;
      float *want = load_f32(gold, key, &n);
      double e = got[k] && want && n == (size_t)(b.rows * b.seq)
                     ? max_diff_masked(got[k], want, b.in[IN_MASK], n, 1)
                     : 1e30;
      printf("%s: %s max diff %.3g\n", name, key, e);
      CHECK_MSG(e < 1e-3, "%s %s differ by %g", name, key, e);
      free(got[k]), free(want);
    }
  }
  /* HF counts the batch's seps in row-major order and takes every third as a question end: row 0
   * with 4 (at 1, 3, 4, 5) lends its last to row 1 (2 seps), whose question then ends at 5. */
  const vkf_longformer_model *lm = vkf_model_impl(m);
  int32_t ids[2 * 6] = {0, 2, 5, 2, 2, 2, /**/ 0, 7, 8, 2, 2, 6};
  vkf_longformer_derived d;
  CHECK_OK(vkf_longformer_derive(lm, ids, NULL, NULL, 2, 6, &d));
  CHECK(d.global_tokens == 5);
  const int32_t *gi = d.data[VKF_LONGFORMER_GLOBAL_INDEX];
  int64_t p = vkf_longformer_prefix_len(5);
  CHECK(gi && gi[0] == 0 && gi[p] == 0 && gi[p + 4] == 4);
  for (int k = 0; k < VKF_LONGFORMER_DERIVED_COUNT; k++) free(d.data[k]);
  ids[5] = 9; /* 5 seps for 2 rows: transformers' assertion */
  CHECK_STATUS(vkf_longformer_derive(lm, ids, NULL, NULL, 2, 6, &d), VKF_STATUS_INVALID_ARGUMENT,
               "input_ids: 2 rows hold 5 sep tokens (id 2); LongformerForQuestionAnswering needs "
               "exactly 3 in every row");
  int32_t glob[12] = {0};
  CHECK_OK(vkf_longformer_derive(lm, ids, NULL, glob, 2, 6, &d)); /* a given mask needs no seps */
  CHECK(d.global_tokens == 0);
  for (int k = 0; k < VKF_LONGFORMER_DERIVED_COUNT; k++) free(d.data[k]);
  for (int i = 0; i < IN_DECLARED; i++) free(b.in[i]);
  vkf_model_close(m);
}

/* f16 weights and activations (--fp16): the same graph, within f16's rounding. */
static void check_fp16(void) {
  vkf_model *m = NULL;
  CHECK_OK(vkf_model_open("tests/models/data/longformer_tiny", &m));
  if (!m) return;
  const char *gold = "tests/models/golden/longformer_tiny";
  batch b = {0};
  b.in[IN_IDS] = load_ids(gold, "input_ids", &b.rows, &b.seq);
  b.in[IN_MASK] = load_ids(gold, "attention_mask", &b.rows, &b.seq);
  b.in[IN_GLOBAL] = load_ids(gold, "global_attention_mask", &b.rows, &b.seq);
  size_t hn = 0;
  float *want = load_f32(gold, "last_hidden_state", &hn), *h = NULL, *p = NULL;
  run_dtype = VKF_F16;
  CHECK_OK(run(m, &b, 1, &h, &p));
  run_dtype = VKF_F32;
  double e =
      h && want ? max_diff_masked(h, want, b.in[IN_MASK], (size_t)(b.rows * b.seq), 30) : 1e30;
  printf("longformer_tiny f16: last_hidden_state max diff %.3g\n", e);
  CHECK_MSG(e < 5e-2, "f16 differs by %g", e);
  free(h), free(p), free(want);
  for (int i = 0; i < IN_DECLARED; i++) free(b.in[i]);
  vkf_model_close(m);
}

/* The local layout against the band's definition, token by token: key k of [prefix | np] is
 * visible to query q iff k is in the prefix or |k - prefix - q| <= one_sided; and every row lists
 * at most prefix/32 + 2·ceil(one_sided/32) + 1 blocks (linear cost). */
static void check_layout(void) {
  const int64_t cases[][3] = {{2, 24, 0},   {2, 24, 32},  {3, 18, 32},  {40, 160, 64},
                              {20, 150, 0}, {31, 96, 32}, {32, 100, 0}, {256, 1000, 96}};
  vkf_longformer_layouts *cache = NULL;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int64_t w = cases[c][0], np = cases[c][1], p = cases[c][2], bad = 0, widest = 0;
    vkf_status st = VKF_OK;
    const vkf_sparse_layout *l = vkf_longformer_layout(&cache, w, np, p, &st);
    CHECK_OK(st);
    if (!l) continue;
    const int64_t b = VKF_LONGFORMER_BLOCK;
    for (int64_t q = 0; q < np; q++) {
      int64_t row = q / b, lo = l->rows[row], hi = l->rows[row + 1];
      if (hi - lo > widest) widest = hi - lo;
      for (int64_t k = 0; k < p + np; k++) {
        int seen = 0;
        for (int64_t e = lo; e < hi; e++) {
          if (l->cols[2 * e] != k / b) continue;
          int32_t mask = l->cols[2 * e + 1];
          seen = mask < 0 || ((uint32_t)l->masks[(mask * b + q % b)] >> (k % b) & 1u);
        }
        int64_t d = k - p - q;
        int want = k < p || (d <= w && -d <= w);
        bad += seen != want;
      }
    }
    CHECK_MSG(bad == 0, "window %lld, %lld tokens, prefix %lld: %lld pairs differ", (long long)w,
              (long long)np, (long long)p, (long long)bad);
    CHECK(widest <= p / b + 2 * ((w + b - 1) / b) + 1);
  }
  vkf_longformer_layouts_free(&cache);
}

int main(void) {
  check_layout();
  check_derive();
  check_errors();
  check_model("longformer_tiny");
  check_model("longformer_tiny_bf16");
  check_model("longformer_wide_tiny");
  check_head("longformer_tokcls_tiny", "LongformerForTokenClassification");
  check_head("longformer_seqcls_tiny", "LongformerForSequenceClassification");
  check_qa();
  check_fp16();
  return test_report();
}
