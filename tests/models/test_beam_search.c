/* models/generate/beam_search against transformers 4.38.2's generate(num_beams > 1) on logits
 * tables (tests/models/golden/beam from tools/goldens/make_beam_golden.py): every step's beam reordering
 * and rows, the returned sequences and their scores; torch.topk's tie order; bad options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "models/formats/json_fields.h"
#include "models/formats/npy.h"
#include "models/generate/beam_search.h"
#include "models/generate/generation_config.h"
#include "models/generate/torch_topk.h"
#include "tests/test_util.h"

#define GOLDEN "tests/models/golden/beam"

enum { MAX_IDS = 64 };

/* An int or a list of ints ("eos_token_id": 2 or [2, 7]) into ids[MAX_IDS]; absent: 0 ids. */
static size_t int_list(const cJSON *item, int64_t *ids) {
  if (!item) return 0;
  if (cJSON_IsNumber(item)) {
    ids[0] = (int64_t)item->valuedouble;
    return 1;
  }
  size_t n = 0;
  for (const cJSON *e = item->child; e && n < MAX_IDS; e = e->next)
    ids[n++] = (int64_t)e->valuedouble;
  return n;
}

static int64_t get_int(const cJSON *obj, const char *key, int64_t def) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : def;
}

/* The generate() settings of a case as beam options (prompt_len, batch and vocab set by the
 * caller). */
static vkf_beam_options options_of(const cJSON *settings, int64_t *eos, int64_t *forced_eos) {
  vkf_beam_options o = {
      .num_beams = get_int(settings, "num_beams", 1),
      .max_length = get_int(settings, "max_length", 20),
      .length_penalty = 1.0,
      .num_return_sequences = get_int(settings, "num_return_sequences", 1),
      .pad_token_id = get_int(settings, "pad_token_id", -1),
      .no_repeat_ngram_size = get_int(settings, "no_repeat_ngram_size", 0),
      .min_length = get_int(settings, "min_length", 0),
      .min_new_tokens = get_int(settings, "min_new_tokens", 0),
      .forced_bos_token_id = get_int(settings, "forced_bos_token_id", -1),
  };
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(settings, "length_penalty");
  if (cJSON_IsNumber(lp)) o.length_penalty = lp->valuedouble;
  const cJSON *rp = cJSON_GetObjectItemCaseSensitive(settings, "repetition_penalty");
  if (cJSON_IsNumber(rp)) o.repetition_penalty = rp->valuedouble;
  const cJSON *es = cJSON_GetObjectItemCaseSensitive(settings, "early_stopping");
  if (cJSON_IsTrue(es)) o.early_stopping = VKF_EARLY_STOPPING_TRUE;
  if (cJSON_IsString(es) && !strcmp(es->valuestring, "never"))
    o.early_stopping = VKF_EARLY_STOPPING_NEVER;
  o.eos_id_count = int_list(cJSON_GetObjectItemCaseSensitive(settings, "eos_token_id"), eos);
  o.eos_ids = eos;
  o.forced_eos_id_count =
      int_list(cJSON_GetObjectItemCaseSensitive(settings, "forced_eos_token_id"), forced_eos);
  o.forced_eos_ids = forced_eos;
  return o;
}

/* Row `r` of a JSON matrix equals ids [n]. */
static bool row_equals(const cJSON *matrix, int64_t r, const int64_t *ids, int64_t n) {
  const cJSON *row = cJSON_GetArrayItem(matrix, (int)r);
  if (!row || cJSON_GetArraySize(row) != n) return false;
  int64_t i = 0;
  for (const cJSON *e = row->child; e; e = e->next, i++)
    if ((int64_t)e->valuedouble != ids[i]) return false;
  return true;
}

static void run_case(const cJSON *c) {
  const char *name = cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring;
  const cJSON *prompts = cJSON_GetObjectItemCaseSensitive(c, "prompts");
  const cJSON *steps_rows = cJSON_GetObjectItemCaseSensitive(c, "beam_rows");
  const cJSON *step_ids = cJSON_GetObjectItemCaseSensitive(c, "rows");
  const cJSON *want_seq = cJSON_GetObjectItemCaseSensitive(c, "sequences");
  const cJSON *want_scores = cJSON_GetObjectItemCaseSensitive(c, "scores");
  int64_t eos[MAX_IDS], forced_eos[MAX_IDS], prompt_ids[MAX_IDS];
  vkf_beam_options o = options_of(cJSON_GetObjectItemCaseSensitive(c, "settings"), eos, forced_eos);
  o.vocab_size = get_int(c, "vocab", 0);
  o.batch = cJSON_GetArraySize(prompts);
  o.prompt_len = cJSON_GetArraySize(cJSON_GetArrayItem(prompts, 0));
  int64_t n = 0;
  for (const cJSON *p = prompts->child; p; p = p->next)
    for (const cJSON *e = p->child; e && n < MAX_IDS; e = e->next)
      prompt_ids[n++] = (int64_t)e->valuedouble;

  char path[256];
  snprintf(path, sizeof path, GOLDEN "/%s_table.npy", name);
  vkf_npy_array table = {0};
  vkf_status s = vkf_npy_load(path, &table);
  CHECK_MSG(!s, "%s", vkf_status_message(s));
  vkf_status_free(s);
  if (s) return;
  /* table [steps, table rows, vocab]: a row's logits are table[step][last token % table rows]. */
  const int64_t steps = table.shape[0], trows = table.shape[1], vocab = table.shape[2];
  CHECK(table.dtype == VKF_NPY_F32 && table.rank == 3 && vocab == o.vocab_size);
  const float *t = (const float *)table.data;

  vkf_beam_search *bs = NULL;
  CHECK_OK(vkf_beam_search_create(&o, prompt_ids, &bs));
  const int64_t rows = o.batch * o.num_beams;
  float *logits = malloc((size_t)(rows * vocab) * sizeof *logits);
  bool finished = false;
  int64_t step = 0, bad_steps = 0;
  while (bs && !finished) {
    int64_t len = 0;
    const int64_t *ids = vkf_beam_search_ids(bs, &len);
    const int64_t k = len - o.prompt_len;
    CHECK_MSG(k < steps, "%s: step %lld past the table", name, (long long)k);
    if (k >= steps) break;
    for (int64_t r = 0; r < rows; r++)
      memcpy(logits + r * vocab, t + (k * trows + ids[r * o.max_length + len - 1] % trows) * vocab,
             (size_t)vocab * sizeof *logits);
    vkf_status st = vkf_beam_search_step(bs, logits, &finished);
    CHECK_MSG(!st, "%s step %lld: %s", name, (long long)step, vkf_status_message(st));
    vkf_status_free(st);
    if (st) break;
    const int64_t *beam_rows = NULL, *tokens = NULL;
    vkf_beam_search_next(bs, &beam_rows, &tokens);
    ids = vkf_beam_search_ids(bs, &len);
    bool same = row_equals(steps_rows, step, beam_rows, rows);
    /* HF's next forward sees the reordered rows: the last step's are only in the sequences. */
    for (int64_t r = 0; same && step < cJSON_GetArraySize(step_ids) && r < rows; r++)
      same = row_equals(cJSON_GetArrayItem(step_ids, (int)step), r, ids + r * o.max_length, len);
    if (!same && bad_steps++ < 2) {
      fprintf(stderr, "%s step %lld: beam rows", name, (long long)step);
      for (int64_t r = 0; r < rows; r++)
        fprintf(stderr, " %lld/%lld", (long long)beam_rows[r], (long long)tokens[r]);
      fprintf(stderr, "\n");
    }
    CHECK_MSG(same, "%s step %lld: beams or rows differ from Hugging Face's", name,
              (long long)step);
    step++;
  }
  CHECK_MSG(step == cJSON_GetArraySize(steps_rows), "%s: %lld steps, Hugging Face ran %d", name,
            (long long)step, cJSON_GetArraySize(steps_rows));
  vkf_beam_result res = {0};
  if (bs) CHECK_OK(vkf_beam_search_finalize(bs, &res));
  CHECK_MSG(res.count == cJSON_GetArraySize(want_seq), "%s: %lld sequences", name,
            (long long)res.count);
  for (int64_t i = 0; i < res.count && i < cJSON_GetArraySize(want_seq); i++) {
    CHECK_MSG(row_equals(want_seq, i, res.sequences + i * res.length, res.length),
              "%s: sequence %lld differs from Hugging Face's", name, (long long)i);
    double want = cJSON_GetArrayItem(want_scores, (int)i)->valuedouble;
    CHECK_MSG(fabs(res.scores[i] - want) <= 1e-5 * (1 + fabs(want)), "%s: score %lld %.9g, HF %.9g",
              name, (long long)i, (double)res.scores[i], want);
    /* The length covers the tokens before the padding. */
    const int64_t *row = res.sequences + i * res.length;
    CHECK(res.lengths[i] >= 1 && res.lengths[i] <= res.length);
    for (int64_t j = res.lengths[i]; j < res.length; j++) CHECK(row[j] == o.pad_token_id);
  }
  bool again = false;
  if (bs)
    CHECK_STATUS(vkf_beam_search_step(bs, logits, &again), VKF_STATUS_INVALID_ARGUMENT,
                 "after the last");
  vkf_beam_search_destroy(bs);
  free(logits);
  vkf_npy_array_release(&table);
}

static void test_golden(void) {
  char *text = NULL;
  size_t size = 0;
  vkf_status s = vkf_json_read_file(GOLDEN "/cases.json", &text, &size);
  CHECK_MSG(!s, "%s", vkf_status_message(s));
  vkf_status_free(s);
  cJSON *root = text ? cJSON_ParseWithLength(text, size) : NULL;
  CHECK_MSG(cJSON_IsArray(root), GOLDEN "/cases.json is not a list");
  int count = 0;
  for (const cJSON *c = root ? root->child : NULL; c; c = c->next, count++) run_case(c);
  CHECK_MSG(count >= 12, "%d cases", count);
  cJSON_Delete(root);
  free(text);
}

/* Ties: beam search meets rows of equal scores (forced tokens, the -1e9 start scores); torch's
 * order on a row of ties, taken from torch 1.13 (torch.topk(torch.zeros(n), k)). */
static void test_topk_ties(void) {
  float v[200];
  vkf_topk_item scratch[200];
  float vals[8];
  int64_t idx[8];
  for (int i = 0; i < 200; i++) v[i] = i % 3 ? 0.0f : 1.0f;
  v[100] = NAN;
  vkf_torch_topk(v, 200, 3, scratch, vals, idx); /* partial_sort: 3 · 64 <= 200 */
  CHECK(idx[0] == 100 && isnan(vals[0]) && vals[1] == 1.0f && vals[2] == 1.0f);
  for (int i = 0; i < 8; i++) v[i] = (float)(i % 2);
  vkf_torch_topk(v, 8, 5, scratch, vals, idx); /* nth_element then sort */
  CHECK(vals[0] == 1 && vals[3] == 1 && vals[4] == 0);
  int64_t want[5] = {1, 7, 5, 3, 2}; /* torch.topk(torch.tensor([0.,1,0,1,0,1,0,1]), 5) */
  for (int i = 0; i < 5; i++) CHECK_MSG(idx[i] == want[i], "index %d: %lld", i, (long long)idx[i]);
}

static void test_errors(void) {
  int64_t prompt[2] = {1, 2}, eos = 2, bad_eos = 30;
  vkf_beam_options o = {.batch = 1,
                        .num_beams = 1,
                        .vocab_size = 24,
                        .prompt_len = 2,
                        .max_length = 6,
                        .length_penalty = 1.0,
                        .pad_token_id = 0,
                        .eos_ids = &eos,
                        .eos_id_count = 1};
  vkf_beam_search *bs = NULL;
  CHECK_STATUS(vkf_beam_search_create(&o, prompt, &bs), VKF_STATUS_INVALID_ARGUMENT, "num_beams 1");
  o.num_beams = 2;
  o.max_length = 2;
  CHECK_STATUS(vkf_beam_search_create(&o, prompt, &bs), VKF_STATUS_INVALID_ARGUMENT,
               "max_length 2 must exceed the prompt length 2");
  o.max_length = 6;
  o.eos_ids = &bad_eos;
  CHECK_STATUS(vkf_beam_search_create(&o, prompt, &bs), VKF_STATUS_INVALID_ARGUMENT,
               "eos_token_id 30 is outside the vocabulary of 24");
  o.eos_ids = &eos;
  o.num_return_sequences = 3;
  CHECK_STATUS(vkf_beam_search_create(&o, prompt, &bs), VKF_STATUS_INVALID_ARGUMENT,
               "num_return_sequences 3");
  o.num_return_sequences = 1;
  prompt[1] = 24;
  CHECK_STATUS(vkf_beam_search_create(&o, prompt, &bs), VKF_STATUS_INVALID_ARGUMENT,
               "prompt 0, position 1: id 24");
  CHECK(bs == NULL);
  /* A source that finishes before max_length fills its beams with pad_token_id: none is an
   * error, as in Hugging Face. Vocabulary of 3; the first source's beams close at once, the
   * second's never. */
  int64_t prompts2[4] = {1, 1, 1, 1};
  o.batch = 2;
  o.vocab_size = 3;
  o.pad_token_id = -1;
  o.early_stopping = VKF_EARLY_STOPPING_TRUE;
  CHECK_OK(vkf_beam_search_create(&o, prompts2, &bs));
  float logits[12] = {-50, -50, 0, -50, -50, 0, 0, 0, -50, 0, 0, -50};
  bool finished = false;
  vkf_status st = VKF_OK;
  for (int i = 0; bs && i < 4 && !st && !finished; i++)
    st = vkf_beam_search_step(bs, logits, &finished);
  CHECK_MSG(st && strstr(vkf_status_message(st), "no pad_token_id"), "%s", vkf_status_message(st));
  vkf_status_free(st);
  vkf_beam_search_destroy(bs);
}

/* The beam fields of generation_config.json: BART-style settings, defaults, wrong types and
 * ranges, and config.json's nested decoder filling what the top level leaves at its default. */
static vkf_status parse(const char *json, vkf_generation_config *c) {
  return vkf_generation_config_parse(json, strlen(json), "g.json", 100, c);
}

static void test_config(void) {
  vkf_generation_config c;
  CHECK_OK(parse("{}", &c));
  CHECK(c.num_beams == 1 && c.length_penalty == 1.0 &&
        c.early_stopping == VKF_EARLY_STOPPING_FALSE);
  CHECK(c.min_length == 0 && c.min_new_tokens == -1 && c.forced_bos_token_id == -1);
  CHECK(c.forced_eos_token_id_count == 0 && c.decoder_start_token_id == -1);
  CHECK_OK(
      parse("{\"num_beams\": 4, \"length_penalty\": 2, \"early_stopping\": true, "
            "\"min_length\": 56, \"min_new_tokens\": null, \"forced_bos_token_id\": 0, "
            "\"forced_eos_token_id\": 2, \"decoder_start_token_id\": 2, "
            "\"no_repeat_ngram_size\": 3}",
            &c));
  CHECK(c.num_beams == 4 && c.length_penalty == 2.0 && c.early_stopping == VKF_EARLY_STOPPING_TRUE);
  CHECK(c.min_length == 56 && c.min_new_tokens == -1 && c.forced_bos_token_id == 0);
  CHECK(c.forced_eos_token_id_count == 1 && c.forced_eos_token_ids[0] == 2);
  CHECK(c.decoder_start_token_id == 2 && c.no_repeat_ngram_size == 3);
  CHECK_OK(
      parse("{\"early_stopping\": \"never\", \"forced_eos_token_id\": [2, 7], "
            "\"min_new_tokens\": 0, \"length_penalty\": -0.5}",
            &c));
  CHECK(c.early_stopping == VKF_EARLY_STOPPING_NEVER && c.forced_eos_token_id_count == 2);
  CHECK(c.forced_eos_token_ids[1] == 7 && c.min_new_tokens == 0 && c.length_penalty == -0.5);
  CHECK_STATUS(parse("{\"early_stopping\": \"always\"}", &c), VKF_STATUS_PARSE,
               "g.json: field \"early_stopping\" must be true, false or \"never\"");
  CHECK_STATUS(parse("{\"early_stopping\": 1}", &c), VKF_STATUS_PARSE, "early_stopping");
  CHECK_STATUS(parse("{\"num_beams\": 0}", &c), VKF_STATUS_INVALID_ARGUMENT,
               "field \"num_beams\" is 0, must be in 1..1024");
  CHECK_STATUS(parse("{\"num_beams\": 2.5}", &c), VKF_STATUS_PARSE,
               "\"num_beams\" must be an integer");
  CHECK_STATUS(parse("{\"length_penalty\": \"x\"}", &c), VKF_STATUS_PARSE, "length_penalty");
  CHECK_STATUS(parse("{\"min_length\": -1}", &c), VKF_STATUS_INVALID_ARGUMENT,
               "\"min_length\" is -1");
  CHECK_STATUS(parse("{\"min_new_tokens\": -3}", &c), VKF_STATUS_INVALID_ARGUMENT,
               "min_new_tokens");
  CHECK_STATUS(parse("{\"forced_bos_token_id\": 100}", &c), VKF_STATUS_INVALID_ARGUMENT,
               "\"forced_bos_token_id\" 100 is outside the vocabulary of 100");
  CHECK_STATUS(parse("{\"forced_eos_token_id\": [2, 100]}", &c), VKF_STATUS_INVALID_ARGUMENT,
               "forced_eos_token_id");
  CHECK_STATUS(parse("{\"forced_eos_token_id\": [2, \"x\"]}", &c), VKF_STATUS_PARSE,
               "\"forced_eos_token_id\"[1] is not an integer");
  CHECK_STATUS(parse("{\"decoder_start_token_id\": -2}", &c), VKF_STATUS_INVALID_ARGUMENT,
               "decoder_start_token_id");

  /* config.json (no generation_config.json): top level, then "decoder" for fields still at their
   * defaults. */
  char dir[] = "/tmp/vkf_beam_config_XXXXXX";
  VKF_ASSERT(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof path, "%s/config.json", dir);
  FILE *f = fopen(path, "w");
  VKF_ASSERT(f);
  fputs(
      "{\"num_beams\": 5, \"early_stopping\": \"never\", \"decoder\": {\"num_beams\": 2, "
      "\"length_penalty\": 0.6, \"forced_bos_token_id\": 3}}",
      f);
  fclose(f);
  CHECK_OK(vkf_generation_config_load(dir, 100, &c));
  CHECK(c.source == VKF_GENERATION_FROM_MODEL_CONFIG && c.num_beams == 5);
  CHECK(c.early_stopping == VKF_EARLY_STOPPING_NEVER && c.length_penalty == 0.6);
  CHECK(c.forced_bos_token_id == 3);
  remove(path);
  rmdir(dir);
}

int main(void) {
  test_golden();
  test_config();
  test_topk_ties();
  test_errors();
  return test_report();
}
