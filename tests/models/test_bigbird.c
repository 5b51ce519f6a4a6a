/* BigBird without a GPU: config.json (BigBirdConfig's defaults and rejections), the eval-mode
 * block layout, and every golden case of tools/goldens/make_bigbird_golden.py built through the model
 * registry and run by the CPU reference interpreter against transformers 4.38.2's
 * last_hidden_state and pooler_output (block-sparse with 1..3 random blocks, an odd head dim,
 * BF16 storage, the fallback to original_full, original_full, the 1024-token "old plan" length,
 * BigBirdForMaskedLM's and BigBirdForSequenceClassification's logits);
 * then the build errors. The GPU runs are tests/cli/test_bigbird.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "models/arch/bigbird.h"
#include "models/arch/bigbird_layout.h"
#include "models/formats/npy.h"
#include "models/registry/arch_entry.h" /* vkf_model_impl: the architecture object, white-box */
#include "models/registry/model.h"
#include "tests/test_util.h"

#define GOLDEN "tests/models/golden/bigbird/"
#define DATA "tests/models/data/"
#define TOL 1e-3

static vkf_status parse(const char *json, vkf_hf_config *out) {
  return vkf_hf_config_parse(json, strlen(json), "config.json", out);
}

static void test_config(void) {
  vkf_hf_config c;
  CHECK_OK(parse("{\"model_type\": \"big_bird\"}", &c));
  CHECK(c.family == VKF_HF_FAMILY_TEXT);
  CHECK(c.hidden_act == VKF_HF_ACT_GELU_TANH); /* BigBirdConfig: "gelu_new" */
  CHECK(c.max_position_embeddings == 4096 && c.vocab_size == 50358 && c.pad_token_id == 0);
  CHECK(c.block_sparse && c.block_size == 64 && c.num_random_blocks == 3);
  CHECK(c.qkv_bias && !c.rescale_embeddings);
  vkf_hf_config_release(&c);
  CHECK_OK(
      parse("{\"model_type\": \"big_bird\", \"attention_type\": \"original_full\", "
            "\"hidden_act\": \"gelu\", \"max_position_embeddings\": 128, \"block_size\": 16, "
            "\"num_random_blocks\": 0, \"use_bias\": false, \"rescale_embeddings\": true}",
            &c));
  CHECK(!c.block_sparse && c.hidden_act == VKF_HF_ACT_GELU && c.max_position_embeddings == 128);
  CHECK(c.block_size == 16 && c.num_random_blocks == 0 && !c.qkv_bias && c.rescale_embeddings);
  vkf_hf_config_release(&c);
  CHECK_STATUS(parse("{\"model_type\": \"big_bird\", \"attention_type\": \"sparse\"}", &c),
               VKF_STATUS_UNSUPPORTED, "\"attention_type\" value \"sparse\"");
  CHECK_STATUS(parse("{\"model_type\": \"big_bird\", \"num_random_blocks\": -1}", &c),
               VKF_STATUS_INVALID_ARGUMENT, "\"num_random_blocks\" -1");
  CHECK_STATUS(parse("{\"model_type\": \"big_bird\", \"max_position_embeddings\": 64, "
                     "\"block_size\": 65}",
                     &c),
               VKF_STATUS_INVALID_ARGUMENT, "block_size");
  CHECK_STATUS(parse("{\"model_type\": \"big_bird\", \"is_decoder\": true}", &c),
               VKF_STATUS_UNSUPPORTED, "\"is_decoder\" true");
  CHECK_STATUS(parse("{\"model_type\": \"big_bird\", \"use_bias\": 1}", &c), VKF_STATUS_PARSE,
               "use_bias");
}

/* Row `q` of a layout as block indices. */
static int row_is(const vkf_sparse_layout *l, uint32_t q, const int32_t *want, int count) {
  if (l->rows[q + 1] - l->rows[q] != count) return 0;
  for (int i = 0; i < count; i++)
    if (l->cols[2 * (l->rows[q] + i)] != want[i] || l->cols[2 * (l->rows[q] + i) + 1] != -1)
      return 0;
  return 1;
}

static void test_layout(void) {
  vkf_sparse_layout l;
  CHECK_OK(vkf_bigbird_layout(9, 2, 4, &l)); /* key blocks 9, 10: copies of block 0 */
  CHECK(l.heads == 1 && l.q_blocks == 9 && l.k_blocks == 11 && l.block_q == 4 && l.block_k == 4);
  const int32_t all[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  const int32_t second[6] = {0, 1, 2, 8, 9, 10}, middle[7] = {0, 3, 4, 5, 8, 9, 10},
                third[7] = {0, 1, 2, 3, 8, 9, 10}, second_last[6] = {0, 6, 7, 8, 9, 10};
  CHECK(row_is(&l, 0, all, 9) && row_is(&l, 8, all, 9));
  CHECK(row_is(&l, 1, second, 6) && row_is(&l, 7, second_last, 6));
  CHECK(row_is(&l, 2, third, 7) && row_is(&l, 4, middle, 7));
  vkf_sparse_layout_free(&l);
  CHECK_OK(vkf_bigbird_layout(5, 0, 1, &l));
  vkf_sparse_layout_free(&l);
  CHECK_STATUS(vkf_bigbird_layout(4, 1, 4, &l), VKF_STATUS_INVALID_ARGUMENT, "at least 5 blocks");
}

typedef struct golden {
  vkf_npy_array ids, mask, types, hidden, pooled, logits; /* logits: heads only */
} golden;

static int load_golden(const char *name, golden *g) {
  char p[256];
  memset(g, 0, sizeof *g);
  vkf_npy_array *a[5] = {&g->ids, &g->mask, &g->types, &g->hidden, &g->pooled};
  const char *f[5] = {"input_ids", "attention_mask", "token_type_ids", "last_hidden_state",
                      "pooler_output"};
  for (int i = 0; i < 5; i++) {
    snprintf(p, sizeof p, GOLDEN "%s/%s.npy", name, f[i]);
    vkf_status s = vkf_npy_load(p, a[i]);
    CHECK_MSG(!s, "%s", vkf_status_message(s));
    if (s) {
      vkf_status_free(s);
      return 0;
    }
  }
  snprintf(p, sizeof p, GOLDEN "%s/logits.npy", name);
  vkf_status_free(vkf_npy_load(p, &g->logits)); /* absent for BigBirdModel cases */
  return 1;
}

static void release_golden(golden *g) {
  vkf_npy_array_release(&g->ids);
  vkf_npy_array_release(&g->mask);
  vkf_npy_array_release(&g->types);
  vkf_npy_array_release(&g->hidden);
  vkf_npy_array_release(&g->pooled);
  vkf_npy_array_release(&g->logits);
}

static int32_t *as_i32(const vkf_npy_array *a) {
  int32_t *v = malloc(a->element_count * sizeof *v);
  for (size_t i = 0; i < a->element_count; i++) v[i] = (int32_t)((const int64_t *)a->data)[i];
  return v;
}

/* One golden case through the registry and the interpreter: last_hidden_state at unmasked
 * positions (every position where HF's value does not depend on padding: all of them here, which
 * is checked too) and pooler_output within TOL. */
static void run_case(const char *model_name, const char *case_name, int expect_sparse) {
  golden g;
  if (!load_golden(case_name, &g)) return;
  char dir[256];
  snprintf(dir, sizeof dir, DATA "%s", model_name);
  vkf_model *model = NULL;
  vkf_status s = vkf_model_open(dir, &model);
  CHECK_MSG(!s, "%s", vkf_status_message(s));
  vkf_status_free(s);
  if (!model) {
    release_golden(&g);
    return;
  }
  int64_t b = g.ids.shape[0], t = g.ids.shape[1], d = g.hidden.shape[2];
  const char *arch = vkf_model_architecture(model);
  CHECK(strcmp(arch, strstr(model_name, "mlm")   ? "BigBirdForMaskedLM"
                     : strstr(model_name, "cls") ? "BigBirdForSequenceClassification"
                                                 : "BigBirdModel") == 0);
  CHECK(vkf_bigbird_runs_sparse(vkf_model_impl(model), t) == expect_sparse);
  vkf_model_build_options o = {.batch = b, .seq_len = t};
  vkf_model_graph mg;
  s = vkf_model_build(model, &o, &mg);
  CHECK_MSG(!s, "%s: %s", case_name, vkf_status_message(s));
  vkf_status_free(s);
  if (!s) {
    int32_t *ids = as_i32(&g.ids), *mask = as_i32(&g.mask), *types = as_i32(&g.types);
    size_t bt = (size_t)(b * t) * sizeof(int32_t);
    float *h = malloc(g.hidden.data_size), *p = malloc(g.pooled.data_size);
    float *lg = g.logits.data ? malloc(g.logits.data_size) : NULL;
    vkf_input_binding in[3] = {
        {mg.inputs[0], ids, bt}, {mg.inputs[1], mask, bt}, {mg.inputs[2], types, bt}};
    int li = vkf_model_find_output(model, "logits");
    CHECK(li == (lg ? 2 : -1));
    vkf_output_binding out[3] = {{mg.outputs[0], h, g.hidden.data_size},
                                 {mg.outputs[1], p, g.pooled.data_size},
                                 {li >= 0 ? mg.outputs[li] : VKF_NO_VALUE, lg, g.logits.data_size}};
    s = vkf_interp_evaluate(mg.graph, in, 3, out, lg && li >= 0 ? 3 : 2);
    CHECK_MSG(!s, "%s: %s", case_name, vkf_status_message(s));
    vkf_status_free(s);
    const float *gh = g.hidden.data, *gp = g.pooled.data;
    double worst = 0, worst_masked = 0;
    for (int64_t i = 0; i < b * t; i++)
      for (int64_t k = 0; k < d; k++) {
        double e = fabs(h[i * d + k] - gh[i * d + k]);
        if (mask[i] && e > worst) worst = e;
        if (!mask[i] && e > worst_masked) worst_masked = e;
      }
    double worst_pool = 0;
    for (size_t i = 0; i < g.pooled.element_count; i++)
      if (fabs(p[i] - gp[i]) > worst_pool) worst_pool = fabs(p[i] - gp[i]);
    double worst_logit = 0; /* every position: masked ones match too */
    for (size_t i = 0; lg && i < g.logits.element_count; i++) {
      double e = fabs(lg[i] - ((const float *)g.logits.data)[i]);
      if (e > worst_logit) worst_logit = e;
    }
    printf("%-15s %s: max |diff| %.2e unmasked, %.2e masked, pooler %.2e, logits %.2e\n", case_name,
           expect_sparse ? "block_sparse" : "original_full", worst, worst_masked, worst_pool,
           worst_logit);
    CHECK_MSG(worst <= TOL && worst_masked <= TOL && worst_pool <= TOL && worst_logit <= TOL, "%s",
              case_name);
    free(lg);
    free(ids);
    free(mask);
    free(types);
    free(h);
    free(p);
    vkf_graph_destroy(mg.graph);
  }
  vkf_model_close(model);
  release_golden(&g);
}

static void test_build_errors(void) {
  vkf_bigbird_model *m = NULL;
  CHECK_OK(vkf_bigbird_load(DATA "bigbird_tiny_r3", &m));
  if (!m) return;
  vkf_bigbird_graph g;
  /* 64 tokens pad to 66 (block_size 3) past the 64 positions. */
  vkf_bigbird_build_options o = {.batch = 1, .seq_len = 64};
  CHECK_STATUS(vkf_bigbird_build(m, &o, &g), VKF_STATUS_INVALID_ARGUMENT,
               "64 tokens padded to 66 (a multiple of block_size 3) exceed "
               "max_position_embeddings 64");
  CHECK(g.graph == NULL);
  o.seq_len = 65;
  CHECK_STATUS(vkf_bigbird_build(m, &o, &g), VKF_STATUS_INVALID_ARGUMENT, "seq_len 65 (max 64)");
  o.seq_len = 63;
  CHECK_OK(vkf_bigbird_build(m, &o, &g));
  vkf_graph_destroy(g.graph);
  vkf_bigbird_destroy(m);
  CHECK_STATUS(vkf_bigbird_load(DATA "bert_tiny", &m), VKF_STATUS_UNSUPPORTED,
               "model_type \"bert\" is not supported (big_bird)");
}

int main(void) {
  test_config();
  test_layout();
  run_case("bigbird_tiny", "sparse_r2", 1);
  run_case("bigbird_tiny", "fallback", 0);
  run_case("bigbird_tiny_r1", "sparse_r1_odd", 1);
  run_case("bigbird_tiny_r3", "sparse_r3_bf16", 1);
  run_case("bigbird_full_tiny", "full", 0);
  run_case("bigbird_tiny", "len1024", 1);
  run_case("bigbird_mlm_tiny", "mlm", 1);
  run_case("bigbird_cls_tiny", "cls", 1);
  test_build_errors();
  return test_report();
}
