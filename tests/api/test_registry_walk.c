/* The registry walk through the C API: one committed tiny checkpoint of every registered family,
 * vkformer_model_tasks as each family declares it, then every declared task run through
 * vkformer.h: forward on generated inputs (batch 1, 4 tokens), the tokenizer, a text-prompted
 * greedy generation with a stop string (a text prompt on the Bahdanau, Transformer-XL and Reformer
 * checkpoints included), embed, classify, a chat reply. The tiny checkpoints ship no tokenizer:
 * each is copied with a WordPiece vocab.txt (and, for chat, a chat template). Attention maps have
 * no C API: tests/cli/test_registry_walk.sh walks them, and these checkpoints, through the CLI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/vkformer.h"
#include "tests/test_util.h"

#define D "tests/models/data/"

#define CHECK_API(expr)                                                         \
  do {                                                                          \
    vkformer_status api_status_ = (expr);                                       \
    CHECK_MSG(api_status_ == NULL, "%s", vkformer_status_message(api_status_)); \
    vkformer_status_free(api_status_);                                          \
  } while (0)

enum {
  F = VKFORMER_TASK_FORWARD,
  T = VKFORMER_TASK_TOKENIZE,
  E = VKFORMER_TASK_EMBED,
  C = VKFORMER_TASK_CLASSIFY,
  G = VKFORMER_TASK_GENERATE,
  H = VKFORMER_TASK_CHAT,
  A = VKFORMER_TASK_ATTENTIONS,
};

static const struct {
  const char *name;
  uint32_t tasks;
} k_walk[] = {
    {"vit_tiny", F | C | A},        {"bert_tiny", F | T | E | A},     {"gpt2_tiny", F | T | G | H},
    {"bart_tiny", F | T | G},       {"nys_full", F | T | E},          {"bigbird_tiny", F | T | E},
    {"longformer_tiny", F | T | E}, {"d2l_attn_tiny", F | T | G | A}, {"txl_plain", F | T | G},
    {"rf_lm", F | T | G},
};

static int copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  if (!in) return 0; /* an optional file the checkpoint does not have */
  FILE *out = fopen(to, "wb");
  char buf[1 << 16];
  size_t n;
  while (out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  if (out) fclose(out);
  return out != NULL;
}

/* DIR/name copied to a folder of its own under `tmp` with a WordPiece vocab.txt of 512 entries
 * ("a b c" are ids 5..7; every tiny vocabulary fits) and a plain chat template. */
static void text_copy(const char *tmp, const char *name, char *dir, size_t size) {
  snprintf(dir, size, "%s/%s", tmp, name);
  CHECK(mkdir(dir, 0700) == 0);
  static const char *const files[] = {"config.json", "model.safetensors", "generation_config.json",
                                      "preprocessor_config.json"};
  char from[1024], to[1024];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(from, sizeof from, D "%s/%s", name, files[i]);
    snprintf(to, sizeof to, "%s/%s", dir, files[i]);
    copy_file(from, to);
  }
  snprintf(to, sizeof to, "%s/vocab.txt", dir);
  FILE *v = fopen(to, "w");
  CHECK(v != NULL);
  if (!v) return;
  fputs("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\nc\nd\ne\n", v);
  for (int i = 10; i < 512; i++) fprintf(v, "w%d\n", i);
  fclose(v);
  snprintf(to, sizeof to, "%s/tokenizer_config.json", dir);
  FILE *t = fopen(to, "w");
  CHECK(t != NULL);
  if (!t) return;
  fputs("{\"chat_template\": \"{% for m in messages %}{{ m.content }} {% endfor %}\"}\n", t);
  fclose(t);
}

/* The required inputs (and an encoder–decoder's decoder inputs), batch 1 and 4 tokens: ids 1,
 * floats 0.5. */
static void forward(vkformer_model *m, const char *name) {
  vkformer_tensor in[8];
  size_t n = 0;
  memset(in, 0, sizeof in);
  for (uint32_t i = 0; i < vkformer_model_input_count(m) && n < 8; i++) {
    vkformer_io_info io;
    CHECK_API(vkformer_model_input_info(m, i, &io));
    if (!io.required && !io.target) continue; /* an encoder–decoder's decoder inputs too */
    vkformer_tensor *t = &in[n++];
    t->name = io.name;
    t->dtype = io.dtype;
    t->rank = io.rank;
    size_t count = 1;
    for (uint32_t d = 0; d < io.rank; d++) {
      t->shape[d] = io.shape[d] >= 0 ? io.shape[d] : d == 0 ? 1 : 4;
      count *= (size_t)t->shape[d];
    }
    t->data = malloc(count * 4);
    for (size_t k = 0; t->data && k < count; k++) {
      if (io.dtype == VKFORMER_F32)
        ((float *)t->data)[k] = 0.5f;
      else
        ((int32_t *)t->data)[k] = 1;
    }
  }
  vkformer_io_info first;
  CHECK_API(vkformer_model_output_info(m, 0, &first));
  vkformer_tensor out = {.name = first.name};
  vkformer_status s = vkformer_model_forward(m, in, n, &out, 1);
  CHECK_MSG(s == NULL && out.data, "%s forward: %s", name, vkformer_status_message(s));
  vkformer_status_free(s);
  vkformer_tensor_release(&out);
  for (size_t k = 0; k < n; k++) free(in[k].data);
}

static void generate(vkformer_model *m, const char *name) {
  const char *stops[] = {"never here"};
  vkformer_generate_options o = {.max_new_tokens = 3,
                                 .decoding = VKFORMER_DECODING_GREEDY,
                                 .stop_strings = stops,
                                 .stop_string_count = 1};
  vkformer_generation g = {0};
  vkformer_status s = vkformer_generate(m, "a b c", NULL, 0, &o, NULL, NULL, &g);
  CHECK_MSG(s == NULL && g.count >= 1 && g.text, "%s generate from text: %s", name,
            vkformer_status_message(s));
  vkformer_status_free(s);
  vkformer_generation_release(&g);
}

static void walk_one(vkformer_device *dev, const char *tmp, const char *name, uint32_t want) {
  char dir[512];
  text_copy(tmp, name, dir, sizeof dir);
  vkformer_model *m = NULL;
  vkformer_status s = vkformer_model_load(dev, dir, NULL, &m);
  CHECK_MSG(s == NULL, "%s: %s", name, vkformer_status_message(s));
  vkformer_status_free(s);
  if (!m) return;
  uint32_t got = vkformer_model_tasks(m);
  CHECK_MSG(got == want, "%s: tasks 0x%x, declared 0x%x", name, got, want);
  if (got & F) forward(m, name);
  if (got & T) {
    const vkformer_tokenizer *tok = NULL;
    vkformer_tokens ids = {0};
    CHECK_API(vkformer_model_tokenizer(m, &tok));
    if (tok) CHECK_API(vkformer_tokenize(tok, "a b c", 1, &ids));
    CHECK_MSG(ids.count == 5 && ids.ids[1] == 5, "%s tokenize: %zu ids", name, ids.count);
    vkformer_tokens_release(&ids);
  }
  if (got & G) generate(m, name);
  if (got & E) {
    const char *texts[] = {"a b", "c d"};
    vkformer_tensor e = {0};
    CHECK_API(vkformer_embed(m, texts, 2, &e));
    CHECK_MSG(e.rank == 2 && e.shape[0] == 2 && e.data, "%s embed", name);
    vkformer_tensor_release(&e);
  }
  if (got & C) {
    const char *paths[] = {"assets/images/fashion-mnist/0000_ankle-boot.png"};
    vkformer_class top = {0};
    CHECK_API(vkformer_classify(m, paths, 1, 1, &top));
    CHECK_MSG(top.label != NULL, "%s classify", name);
  }
  if (got & H) {
    vkformer_generate_options o = {.max_new_tokens = 2, .decoding = VKFORMER_DECODING_GREEDY};
    vkformer_chat *chat = NULL;
    vkformer_generation g = {0};
    CHECK_API(vkformer_chat_open(m, &o, &chat));
    if (chat)
      CHECK_API(vkformer_chat_reply(chat, "[{\"role\": \"user\", \"content\": \"a b\"}]", NULL,
                                    NULL, &g));
    CHECK_MSG(g.count >= 1, "%s chat", name);
    vkformer_generation_release(&g);
    vkformer_chat_close(chat);
  }
  vkformer_model_free(m);
}

int main(void) {
  char tmp[] = "/tmp/vkf_registry_walk_XXXXXX";
  CHECK(mkdtemp(tmp) != NULL);
  vkformer_device *dev = NULL;
  vkformer_device_options o = {.validate = 1};
  CHECK_API(vkformer_device_open(&o, &dev));
  if (dev) {
    for (size_t i = 0; i < sizeof k_walk / sizeof k_walk[0]; i++)
      walk_one(dev, tmp, k_walk[i].name, k_walk[i].tasks);
    uint32_t messages = vkformer_device_validation_messages(dev);
    CHECK_MSG(messages == 0, "%u validation messages", messages);
    vkformer_device_close(dev);
  }
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  CHECK(system(cmd) == 0);
  return test_report();
}
