/* models/hf_config: config.json and preprocessor_config.json as Hugging Face writes them (ViT,
 * DeiT, BERT, RoBERTa), the class defaults for absent fields, and every rejection naming the file
 * and the field. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/formats/hf_config.h"
#include "tests/test_util.h"

static char tmp_dir[64];
static char written[32][160];
static int written_count;

static const char *write_tmp(const char *name, const char *text) {
  VKF_ASSERT(written_count < 32);
  char *path = written[written_count++];
  snprintf(path, sizeof written[0], "%s/%s", tmp_dir, name);
  FILE *f = fopen(path, "wb");
  VKF_ASSERT(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* Parses `json` under the name "config.json" (the name every message must carry). */
static vkf_status parse(const char *json, vkf_hf_config *out) {
  return vkf_hf_config_parse(json, strlen(json), "config.json", out);
}

static vkf_status parse_pre(const char *json, vkf_hf_preprocessor *out) {
  return vkf_hf_preprocessor_parse(json, strlen(json), "preprocessor_config.json", out);
}

/* google/vit-base-patch16-224's config.json, with id2label cut to 3 classes. */
static const char vit_config[] =
    "{\n"
    "  \"_name_or_path\": \"google/vit-base-patch16-224\",\n"
    "  \"architectures\": [\"ViTForImageClassification\"],\n"
    "  \"attention_probs_dropout_prob\": 0.0,\n"
    "  \"encoder_stride\": 16,\n"
    "  \"hidden_act\": \"gelu\",\n"
    "  \"hidden_dropout_prob\": 0.0,\n"
    "  \"hidden_size\": 768,\n"
    "  \"id2label\": {\"0\": \"tench, Tinca tinca\", \"2\": \"great white shark\",\n"
    "               \"1\": \"goldfish, Carassius auratus\"},\n"
    "  \"image_size\": 224,\n"
    "  \"initializer_range\": 0.02,\n"
    "  \"intermediate_size\": 3072,\n"
    "  \"label2id\": {\"tench, Tinca tinca\": 0},\n"
    "  \"layer_norm_eps\": 1e-12,\n"
    "  \"model_type\": \"vit\",\n"
    "  \"num_attention_heads\": 12,\n"
    "  \"num_channels\": 3,\n"
    "  \"num_hidden_layers\": 12,\n"
    "  \"patch_size\": 16,\n"
    "  \"qkv_bias\": true,\n"
    "  \"torch_dtype\": \"float32\",\n"
    "  \"transformers_version\": \"4.40.0\"\n"
    "}\n";

static void test_vit(void) {
  const char *path = write_tmp("config.json", vit_config);
  vkf_hf_config c;
  CHECK_OK(vkf_hf_config_load(path, &c));
  CHECK(c.model_type && strcmp(c.model_type, "vit") == 0);
  CHECK(c.family == VKF_HF_FAMILY_VISION);
  CHECK(c.architecture_count == 1 && strcmp(c.architectures[0], "ViTForImageClassification") == 0);
  CHECK(c.hidden_size == 768 && c.num_hidden_layers == 12 && c.num_attention_heads == 12);
  CHECK(c.head_dim == 64 && c.intermediate_size == 3072);
  CHECK(c.hidden_act == VKF_HF_ACT_GELU && c.layer_norm_eps == 1e-12);
  CHECK(c.image_size == 224 && c.patch_size == 16 && c.num_channels == 3 && c.qkv_bias);
  CHECK(c.num_patches == 196);
  CHECK(c.vocab_size == 0 && c.pad_token_id == -1);
  CHECK(c.num_labels == 3);
  CHECK(vkf_hf_config_label(&c, 1) &&
        strcmp(vkf_hf_config_label(&c, 1), "goldfish, Carassius auratus") == 0);
  CHECK(vkf_hf_config_label(&c, 2) && strcmp(vkf_hf_config_label(&c, 2), "great white shark") == 0);
  CHECK(vkf_hf_config_label(&c, 3) == NULL && vkf_hf_config_label(&c, -1) == NULL);
  vkf_hf_config_release(&c);
  CHECK(c.arena == NULL && c.id2label == NULL);
  vkf_hf_config_release(&c); /* twice is harmless */
}

static void test_defaults(void) {
  vkf_hf_config c;
  /* ViTConfig() defaults; PretrainedConfig's two generic labels. */
  CHECK_OK(parse("{\"model_type\": \"vit\"}", &c));
  CHECK(c.hidden_size == 768 && c.num_hidden_layers == 12 && c.num_attention_heads == 12 &&
        c.intermediate_size == 3072 && c.hidden_act == VKF_HF_ACT_GELU &&
        c.layer_norm_eps == 1e-12 && c.image_size == 224 && c.patch_size == 16 &&
        c.num_channels == 3 && c.qkv_bias == true && c.architecture_count == 0);
  CHECK(c.num_labels == 2 && strcmp(c.id2label[0], "LABEL_0") == 0 &&
        strcmp(c.id2label[1], "LABEL_1") == 0);
  vkf_hf_config_release(&c);

  /* A tiny DeiT as the golden scripts make them; null fields read as absent. */
  CHECK_OK(
      parse("{\"model_type\": \"deit\", \"hidden_size\": 192, \"num_attention_heads\": 3,"
            " \"num_hidden_layers\": 2, \"intermediate_size\": 768, \"image_size\": 32,"
            " \"patch_size\": 8, \"qkv_bias\": false, \"num_labels\": 4,"
            " \"hidden_act\": \"gelu_new\", \"layer_norm_eps\": 1e-6,"
            " \"pooler_output_size\": null}",
            &c));
  CHECK(c.family == VKF_HF_FAMILY_VISION && c.head_dim == 64 && c.num_patches == 16);
  CHECK(!c.qkv_bias && c.hidden_act == VKF_HF_ACT_GELU_TANH && c.layer_norm_eps == 1e-6);
  CHECK(c.num_labels == 4 && strcmp(c.id2label[3], "LABEL_3") == 0);
  vkf_hf_config_release(&c);

  /* BertConfig() defaults. */
  CHECK_OK(parse("{\"model_type\": \"bert\"}", &c));
  CHECK(c.family == VKF_HF_FAMILY_TEXT && c.vocab_size == 30522 &&
        c.max_position_embeddings == 512 && c.type_vocab_size == 2 && c.pad_token_id == 0 &&
        c.layer_norm_eps == 1e-12 && c.hidden_size == 768 && c.hidden_act == VKF_HF_ACT_GELU);
  CHECK(c.image_size == 0 && c.patch_size == 0 && c.num_patches == 0);
  vkf_hf_config_release(&c);

  /* RobertaConfig() differs in vocabulary and padding id. */
  CHECK_OK(parse("{\"model_type\": \"roberta\"}", &c));
  CHECK(c.vocab_size == 50265 && c.pad_token_id == 1);
  vkf_hf_config_release(&c);

  /* sentence-transformers/all-MiniLM-L6-v2's config.json. */
  CHECK_OK(
      parse("{\"_name_or_path\": \"nreimers/MiniLM-L6-H384-uncased\","
            " \"architectures\": [\"BertModel\"], \"attention_probs_dropout_prob\": 0.1,"
            " \"gradient_checkpointing\": false, \"hidden_act\": \"gelu\","
            " \"hidden_dropout_prob\": 0.1, \"hidden_size\": 384,"
            " \"initializer_range\": 0.02, \"intermediate_size\": 1536,"
            " \"layer_norm_eps\": 1e-12, \"max_position_embeddings\": 512,"
            " \"model_type\": \"bert\", \"num_attention_heads\": 12,"
            " \"num_hidden_layers\": 6, \"pad_token_id\": 0,"
            " \"position_embedding_type\": \"absolute\", \"transformers_version\": \"4.8.2\","
            " \"type_vocab_size\": 2, \"use_cache\": true, \"vocab_size\": 30522}",
            &c));
  CHECK(c.hidden_size == 384 && c.head_dim == 32 && c.num_hidden_layers == 6 &&
        c.intermediate_size == 1536 && c.vocab_size == 30522 && c.pad_token_id == 0);
  CHECK(c.architecture_count == 1 && strcmp(c.architectures[0], "BertModel") == 0);
  vkf_hf_config_release(&c);

  CHECK_OK(parse("{\"model_type\": \"bert\", \"pad_token_id\": null}", &c));
  CHECK(c.pad_token_id == -1);
  vkf_hf_config_release(&c);

  /* Every activation spelling. */
  static const struct {
    const char *name;
    vkf_hf_act act;
  } acts[] = {{"gelu", VKF_HF_ACT_GELU},           {"gelu_python", VKF_HF_ACT_GELU},
              {"gelu_new", VKF_HF_ACT_GELU_TANH},  {"gelu_pytorch_tanh", VKF_HF_ACT_GELU_TANH},
              {"gelu_fast", VKF_HF_ACT_GELU_TANH}, {"relu", VKF_HF_ACT_RELU},
              {"silu", VKF_HF_ACT_SILU},           {"swish", VKF_HF_ACT_SILU}};
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) {
    char json[128];
    snprintf(json, sizeof json, "{\"model_type\": \"vit\", \"hidden_act\": \"%s\"}", acts[i].name);
    CHECK_OK(parse(json, &c));
    CHECK_MSG(c.hidden_act == acts[i].act, "%s", acts[i].name);
    vkf_hf_config_release(&c);
  }
  CHECK(strcmp(vkf_hf_act_name(VKF_HF_ACT_GELU_TANH), "gelu_tanh") == 0);

  /* num_labels disagreeing with id2label: id2label wins, as in Hugging Face (a warning only). */
  CHECK_OK(
      parse("{\"model_type\": \"vit\", \"num_labels\": 5, \"id2label\": {\"0\": \"cat\"}}", &c));
  CHECK(c.num_labels == 1 && strcmp(c.id2label[0], "cat") == 0);
  vkf_hf_config_release(&c);
  CHECK_OK(parse("{\"model_type\": \"vit\", \"id2label\": {}}", &c));
  CHECK(c.num_labels == 0 && vkf_hf_config_label(&c, 0) == NULL);
  vkf_hf_config_release(&c);
}

static void test_config_errors(void) {
  vkf_hf_config c;
  char missing[128];
  snprintf(missing, sizeof missing, "%s/nope/config.json", tmp_dir);
  CHECK_STATUS(vkf_hf_config_load(missing, &c), VKF_STATUS_NOT_FOUND, "nope/config.json");
  const char *bad = write_tmp("bad.json", "{\n  \"model_type\": \"vit\",\n  \"hidden_size\": ,\n}");
  CHECK_STATUS(vkf_hf_config_load(bad, &c), VKF_STATUS_PARSE, "bad.json: not valid JSON (line 3");
  /* A directory in a JSON file's place: named as one before any allocation. */
  char sub[128], dir_path[160];
  snprintf(sub, sizeof sub, "%s/d", tmp_dir);
  VKF_ASSERT(mkdir(sub, 0700) == 0);
  snprintf(dir_path, sizeof dir_path, "%s/config.json", sub);
  VKF_ASSERT(mkdir(dir_path, 0700) == 0);
  CHECK_STATUS(vkf_hf_config_load(dir_path, &c), VKF_STATUS_IO,
               "d/config.json: is a directory, not a file");
  rmdir(dir_path);
  vkf_hf_preprocessor pre;
  snprintf(dir_path, sizeof dir_path, "%s/preprocessor_config.json", sub);
  VKF_ASSERT(mkdir(dir_path, 0700) == 0);
  CHECK_STATUS(vkf_hf_preprocessor_load(dir_path, &pre), VKF_STATUS_IO,
               "d/preprocessor_config.json: is a directory, not a file");
  rmdir(dir_path);
  rmdir(sub);
  CHECK(c.arena == NULL);

  static const struct {
    const char *json;
    vkf_status_code code;
    const char *needle;
  } cases[] = {
      {"", VKF_STATUS_PARSE, "config.json: not valid JSON"},
      {"{} {}", VKF_STATUS_PARSE, "config.json: not valid JSON"},
      {"[1]", VKF_STATUS_PARSE, "config.json: top level is not a JSON object"},
      {"{\"hidden_size\": 768}", VKF_STATUS_NOT_FOUND,
       "config.json: missing required field \"model_type\""},
      {"{\"model_type\": 3}", VKF_STATUS_PARSE,
       "config.json: field \"model_type\" must be a string"},
      {"{\"model_type\": \"xlnet\"}", VKF_STATUS_UNSUPPORTED,
       "config.json: field \"model_type\" value \"xlnet\" is not supported"},
      {"{\"model_type\": \"vit\", \"hidden_act\": \"swiglu\"}", VKF_STATUS_UNSUPPORTED,
       "config.json: field \"hidden_act\" value \"swiglu\" is not supported"},
      {"{\"model_type\": \"vit\", \"hidden_act\": 1}", VKF_STATUS_PARSE,
       "field \"hidden_act\" must be a string"},
      {"{\"model_type\": \"vit\", \"hidden_size\": 100}", VKF_STATUS_INVALID_ARGUMENT,
       "config.json: field \"hidden_size\" 100 is not divisible by \"num_attention_heads\" 12"},
      {"{\"model_type\": \"vit\", \"image_size\": 225}", VKF_STATUS_INVALID_ARGUMENT,
       "config.json: field \"image_size\" 225 is not divisible by \"patch_size\" 16"},
      {"{\"model_type\": \"vit\", \"hidden_size\": 0}", VKF_STATUS_INVALID_ARGUMENT,
       "config.json: field \"hidden_size\" is 0, must be > 0"},
      {"{\"model_type\": \"vit\", \"num_hidden_layers\": -2}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"num_hidden_layers\" is -2"},
      {"{\"model_type\": \"vit\", \"num_attention_heads\": 0}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"num_attention_heads\" is 0"},
      {"{\"model_type\": \"vit\", \"patch_size\": 0}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"patch_size\" is 0"},
      {"{\"model_type\": \"vit\", \"intermediate_size\": -1}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"intermediate_size\" is -1"},
      {"{\"model_type\": \"vit\", \"hidden_size\": \"768\"}", VKF_STATUS_PARSE,
       "config.json: field \"hidden_size\" must be an integer"},
      {"{\"model_type\": \"vit\", \"hidden_size\": 768.5}", VKF_STATUS_PARSE,
       "field \"hidden_size\" must be an integer"},
      {"{\"model_type\": \"vit\", \"hidden_size\": 1e300}", VKF_STATUS_PARSE,
       "field \"hidden_size\" must be an integer"},
      {"{\"model_type\": \"vit\", \"layer_norm_eps\": -1e-5}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"layer_norm_eps\""},
      {"{\"model_type\": \"vit\", \"layer_norm_eps\": \"1e-5\"}", VKF_STATUS_PARSE,
       "field \"layer_norm_eps\" must be a number"},
      {"{\"model_type\": \"vit\", \"qkv_bias\": 1}", VKF_STATUS_PARSE,
       "field \"qkv_bias\" must be true or false"},
      {"{\"model_type\": \"vit\", \"architectures\": \"ViTModel\"}", VKF_STATUS_PARSE,
       "field \"architectures\" must be an array"},
      {"{\"model_type\": \"vit\", \"architectures\": [1]}", VKF_STATUS_PARSE,
       "field \"architectures\" must hold only strings"},
      {"{\"model_type\": \"vit\", \"id2label\": [\"a\"]}", VKF_STATUS_PARSE,
       "field \"id2label\" must be an object"},
      {"{\"model_type\": \"vit\", \"id2label\": {\"0\": \"a\", \"x\": \"b\"}}",
       VKF_STATUS_INVALID_ARGUMENT, "config.json: field \"id2label\" has key \"x\""},
      {"{\"model_type\": \"vit\", \"id2label\": {\"0\": \"a\", \"5\": \"b\"}}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"id2label\" has key \"5\", expected an id in [0, 2)"},
      {"{\"model_type\": \"vit\", \"id2label\": {\"-1\": \"a\"}}", VKF_STATUS_INVALID_ARGUMENT,
       "has key \"-1\""},
      {"{\"model_type\": \"vit\", \"id2label\": {\"1\": \"a\", \"01\": \"b\"}}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"id2label\" lists id 1 twice"},
      {"{\"model_type\": \"vit\", \"id2label\": {\"0\": 7}}", VKF_STATUS_PARSE,
       "field \"id2label\" entry \"0\" is not a string"},
      {"{\"model_type\": \"vit\", \"num_labels\": -1}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"num_labels\" is -1"},
      {"{\"model_type\": \"bert\", \"vocab_size\": 0}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"vocab_size\" is 0"},
      {"{\"model_type\": \"bert\", \"max_position_embeddings\": 0}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"max_position_embeddings\" is 0"},
      {"{\"model_type\": \"bert\", \"type_vocab_size\": -3}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"type_vocab_size\" is -3"},
      {"{\"model_type\": \"bert\", \"pad_token_id\": 30522}", VKF_STATUS_INVALID_ARGUMENT,
       "config.json: field \"pad_token_id\" 30522 is outside the vocabulary of 30522"},
      {"{\"model_type\": \"bert\", \"pad_token_id\": true}", VKF_STATUS_PARSE,
       "field \"pad_token_id\" must be an integer"},
      /* Sizes are bounded before anything is allocated or multiplied from them. */
      {"{\"model_type\": \"vit\", \"num_labels\": 100000000}", VKF_STATUS_INVALID_ARGUMENT,
       "config.json: field \"num_labels\" is 100000000, more than the 1048576 a model can use"},
      {"{\"model_type\": \"vit\", \"num_labels\": 48000000000}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"num_labels\" is 48000000000, more than the 1048576"},
      {"{\"model_type\": \"vit\", \"image_size\": 25000000000, \"patch_size\": 1}",
       VKF_STATUS_INVALID_ARGUMENT,
       "config.json: field \"image_size\" is 25000000000, more than the 65536 a model can use"},
      {"{\"model_type\": \"vit\", \"image_size\": 65536, \"patch_size\": 1}",
       VKF_STATUS_INVALID_ARGUMENT,
       "\"image_size\" 65536 with \"patch_size\" 1 gives 4294967296 patches, more than the "
       "16777215 positions"},
      {"{\"model_type\": \"vit\", \"patch_size\": 65537}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"patch_size\" is 65537, more than the 65536"},
      {"{\"model_type\": \"vit\", \"num_channels\": 1000000}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"num_channels\" is 1000000, more than the 4"},
      {"{\"model_type\": \"vit\", \"hidden_size\": 1048576, \"num_attention_heads\": 1}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"hidden_size\" is 1048576, more than the 65536"},
      {"{\"model_type\": \"vit\", \"num_attention_heads\": 100000}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"num_attention_heads\" is 100000, more than the 65536"},
      {"{\"model_type\": \"vit\", \"intermediate_size\": 1000000000}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"intermediate_size\" is 1000000000, more than the 262144"},
      {"{\"model_type\": \"vit\", \"num_hidden_layers\": 5000}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"num_hidden_layers\" is 5000, more than the 4096"},
      {"{\"model_type\": \"bert\", \"vocab_size\": 4000000000}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"vocab_size\" is 4000000000, more than the 16777216"},
      {"{\"model_type\": \"bert\", \"type_vocab_size\": 4000000000}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"type_vocab_size\" is 4000000000, more than the"},
      {"{\"model_type\": \"bert\", \"max_position_embeddings\": 100000000}",
       VKF_STATUS_INVALID_ARGUMENT,
       "field \"max_position_embeddings\" is 100000000, more than the 16777216"},
      {"{\"model_type\": \"gpt2\", \"n_embd\": 1000000, \"n_head\": 1}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"n_embd\" is 1000000, more than the 65536"},
      {"{\"model_type\": \"gpt2\", \"n_layer\": 100000}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"n_layer\" is 100000, more than the 4096"},
      {"{\"model_type\": \"gpt2\", \"n_positions\": 100000000}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"n_positions\" is 100000000"},
      {"{\"model_type\": \"gpt2\", \"n_inner\": 100000000}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"n_inner\" is 100000000"},
      {"{\"model_type\": \"llama\", \"vocab_size\": 100000000}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"vocab_size\" is 100000000"},
      {"{\"model_type\": \"llama\", \"num_key_value_heads\": 100000}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"num_key_value_heads\" is 100000"},
      {"{\"model_type\": \"mistral\", \"max_position_embeddings\": 100000000}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"max_position_embeddings\" is 100000000"},
      {"{\"model_type\": \"vit\", \"id2label\": {\"0\": \"a\"}, \"num_labels\": 48000000000}",
       VKF_STATUS_INVALID_ARGUMENT, "field \"num_labels\" is 48000000000"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    vkf_status s = parse(cases[i].json, &c);
    CHECK_MSG(
        vkf_status_code_of(s) == cases[i].code && strstr(vkf_status_message(s), cases[i].needle),
        "case %zu %s: got %s: %s", i, cases[i].json, vkf_status_code_name(vkf_status_code_of(s)),
        vkf_status_message(s));
    CHECK(c.arena == NULL && c.model_type == NULL);
    vkf_status_free(s);
  }
  /* The JSON is not NUL-terminated in general: parse exactly `size` bytes. */
  const char *json = "{\"model_type\": \"vit\"}GARBAGE";
  CHECK_OK(vkf_hf_config_parse(json, 21, "config.json", &c));
  vkf_hf_config_release(&c);
}

/* GPT2Config's own field names and defaults, LlamaConfig / MistralConfig / Qwen2Config defaults,
 * rope_scaling, eos lists, and the decoder checks. */
static void test_decoders(void) {
  vkf_hf_config c;
  CHECK_OK(
      parse("{\"model_type\": \"gpt2\", \"n_embd\": 48, \"n_head\": 3, \"n_inner\": null}", &c));
  CHECK(c.family == VKF_HF_FAMILY_DECODER && c.hidden_size == 48 && c.head_dim == 16);
  CHECK(c.intermediate_size == 192 && c.num_hidden_layers == 12 && c.vocab_size == 50257);
  CHECK(c.max_position_embeddings == 1024 && c.hidden_act == VKF_HF_ACT_GELU_TANH);
  CHECK(c.layer_norm_eps == 1e-5 && c.tie_word_embeddings && c.num_key_value_heads == 3);
  CHECK(c.eos_token_id == 50256 && c.rope_theta == 0 && c.attention_bias);
  vkf_hf_config_release(&c);
  CHECK_OK(
      parse("{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
            "\"num_key_value_heads\": 2, \"eos_token_id\": [128001, 128009], "
            "\"vocab_size\": 128256, \"rope_scaling\": {\"rope_type\": \"llama3\", "
            "\"factor\": 8.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
            "\"original_max_position_embeddings\": 8192}}",
            &c));
  CHECK(c.num_key_value_heads == 2 && c.head_dim == 16 && c.hidden_act == VKF_HF_ACT_SILU);
  CHECK(c.eos_token_id == 128001 && c.rope_type == VKF_HF_ROPE_LLAMA3 && c.rope_factor == 8.0);
  CHECK(c.rope_original_max_positions == 8192 && c.layer_norm_eps == 1e-6 && !c.attention_bias);
  CHECK(c.rope_theta == 10000.0 && !c.tie_word_embeddings && c.sliding_window == 0);
  vkf_hf_config_release(&c);
  CHECK_OK(parse("{\"model_type\": \"mistral\"}", &c));
  CHECK(c.sliding_window == 4096 && c.num_key_value_heads == 8 && c.intermediate_size == 14336);
  vkf_hf_config_release(&c);
  CHECK_OK(parse("{\"model_type\": \"mistral\", \"sliding_window\": null}", &c));
  CHECK(c.sliding_window == 0);
  vkf_hf_config_release(&c);
  CHECK_OK(parse("{\"model_type\": \"qwen2\", \"tie_word_embeddings\": true}", &c));
  CHECK(c.attention_bias && !c.o_proj_bias && c.tie_word_embeddings && c.vocab_size == 151936);
  vkf_hf_config_release(&c);
  static const struct {
    const char *json;
    const char *needle;
  } bad[] = {
      {"{\"model_type\": \"llama\", \"num_key_value_heads\": 5}", "not a multiple of 5"},
      {"{\"model_type\": \"llama\", \"rope_scaling\": {\"type\": \"yarn\"}}", "\"yarn\""},
      {"{\"model_type\": \"llama\", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 0.5}}",
       "factor 0.5"},
      {"{\"model_type\": \"llama\", \"rope_theta\": -1}", "rope_theta"},
      {"{\"model_type\": \"gpt2\", \"scale_attn_by_inverse_layer_idx\": true}",
       "scale_attn_by_inverse_layer_idx"},
      {"{\"model_type\": \"gpt2\", \"activation_function\": \"mish\"}", "\"mish\""},
      {"{\"model_type\": \"qwen2\", \"eos_token_id\": 200000}", "outside the vocabulary"},
      {"{\"model_type\": \"mistral\", \"sliding_window\": -2}", "sliding_window"},
      {"{\"model_type\": \"qwen2\", \"sliding_window\": 0}", "\"sliding_window\" is 0, must be > 0"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vkf_status s = parse(bad[i].json, &c);
    CHECK_MSG(s && strstr(vkf_status_message(s), bad[i].needle), "decoder case %zu: %s", i,
              s ? vkf_status_message(s) : "ok");
    vkf_status_free(s);
  }
}

static void test_preprocessor(void) {
  vkf_hf_preprocessor p;
  /* google/vit-base-patch16-224 (legacy feature extractor, int size). */
  const char *path = write_tmp("preprocessor_config.json",
                               "{\n  \"do_normalize\": true,\n  \"do_resize\": true,\n"
                               "  \"feature_extractor_type\": \"ViTFeatureExtractor\",\n"
                               "  \"image_mean\": [0.5, 0.5, 0.5],\n"
                               "  \"image_std\": [0.5, 0.5, 0.5],\n  \"resample\": 2,\n"
                               "  \"size\": 224\n}\n");
  CHECK_OK(vkf_hf_preprocessor_load(path, &p));
  CHECK(strcmp(p.processor_type, "ViTFeatureExtractor") == 0);
  CHECK(p.do_resize && p.size_mode == VKF_HF_SIZE_HEIGHT_WIDTH && p.size_height == 224 &&
        p.size_width == 224 && p.resample == VKF_HF_RESAMPLE_BILINEAR && !p.do_center_crop);
  CHECK(p.do_rescale && p.rescale_factor == 1.0 / 255.0 && p.do_normalize);
  CHECK(p.channel_count == 3 && p.image_mean[2] == 0.5f && p.image_std[0] == 0.5f);

  /* facebook/deit-base-distilled-patch16-224. */
  CHECK_OK(
      parse_pre("{\"crop_size\": 224, \"do_center_crop\": true, \"do_normalize\": true,"
                " \"do_resize\": true, \"feature_extractor_type\": \"DeiTFeatureExtractor\","
                " \"image_mean\": [0.485, 0.456, 0.406], \"image_std\": [0.229, 0.224, 0.225],"
                " \"resample\": 3, \"size\": 256}",
                &p));
  CHECK(p.size_height == 256 && p.size_width == 256 && p.resample == VKF_HF_RESAMPLE_BICUBIC);
  CHECK(p.do_center_crop && p.crop_height == 224 && p.crop_width == 224);
  CHECK(p.image_mean[0] == 0.485f && p.image_std[2] == 0.225f);

  /* The modern image processor spelling. */
  CHECK_OK(
      parse_pre("{\"image_processor_type\": \"ViTImageProcessor\","
                " \"size\": {\"height\": 384, \"width\": 320}, \"do_rescale\": true,"
                " \"rescale_factor\": 0.00392156862745098, \"do_normalize\": false}",
                &p));
  CHECK(p.size_height == 384 && p.size_width == 320 && !p.do_normalize);
  CHECK_NEAR(p.rescale_factor, 1.0 / 255.0, 1e-15);

  /* Defaults: ViTImageProcessor, and DeiTImageProcessor when the type names it. */
  CHECK_OK(parse_pre("{}", &p));
  CHECK(p.do_resize && p.size_height == 224 && p.resample == VKF_HF_RESAMPLE_BILINEAR &&
        !p.do_center_crop && p.do_rescale && p.do_normalize && p.processor_type[0] == '\0');
  CHECK_OK(parse_pre("{\"image_processor_type\": \"DeiTImageProcessor\"}", &p));
  CHECK(p.size_height == 256 && p.resample == VKF_HF_RESAMPLE_BICUBIC && p.do_center_crop &&
        p.crop_height == 224 && p.image_mean[0] == 0.5f);

  CHECK_OK(
      parse_pre("{\"size\": {\"shortest_edge\": 256}, \"crop_size\": {\"height\": 224,"
                " \"width\": 224}, \"do_center_crop\": true, \"resample\": 0,"
                " \"image_mean\": 0.4, \"image_std\": 0.2}",
                &p));
  CHECK(p.size_mode == VKF_HF_SIZE_SHORTEST_EDGE && p.shortest_edge == 256 && p.longest_edge == 0);
  CHECK(p.resample == VKF_HF_RESAMPLE_NEAREST && p.channel_count == 3 && p.image_mean[1] == 0.4f &&
        p.image_std[2] == 0.2f);
  CHECK_OK(
      parse_pre("{\"size\": {\"shortest_edge\": 224, \"longest_edge\": 1333},"
                " \"image_mean\": [0.5], \"image_std\": [0.25]}",
                &p));
  CHECK(p.longest_edge == 1333 && p.channel_count == 1 && p.image_std[0] == 0.25f);

  static const struct {
    const char *json;
    vkf_status_code code;
    const char *needle;
  } cases[] = {
      {"{\"resample\": 7}", VKF_STATUS_UNSUPPORTED,
       "preprocessor_config.json: field \"resample\" value 7 is not a PIL resampling filter"},
      {"{\"resample\": \"bilinear\"}", VKF_STATUS_PARSE, "field \"resample\" must be an integer"},
      {"{\"size\": \"big\"}", VKF_STATUS_PARSE,
       "preprocessor_config.json: field \"size\" must be an integer or an object"},
      {"{\"size\": {\"height\": 0, \"width\": 3}}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"size\" is 0x3, sizes must be > 0"},
      {"{\"size\": {\"height\": 2.5, \"width\": 3}}", VKF_STATUS_PARSE,
       "field \"size\" height and width must be integers"},
      {"{\"size\": {\"shortest_edge\": -1}}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"size\" has a non-positive edge length"},
      {"{\"size\": 25000000000}", VKF_STATUS_INVALID_ARGUMENT,
       "preprocessor_config.json: field \"size\" is 25000000000x25000000000, more than the 65536"},
      {"{\"crop_size\": {\"height\": 224, \"width\": 70000}}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"crop_size\" is 224x70000, more than the 65536"},
      {"{\"size\": {\"shortest_edge\": 100000}}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"size\" edge 100000 is more than the 65536"},
      {"{\"crop_size\": {\"shortest_edge\": 224}}", VKF_STATUS_PARSE,
       "field \"crop_size\" must be an integer or an object with \"height\" and \"width\""},
      {"{\"crop_size\": -224}", VKF_STATUS_INVALID_ARGUMENT, "field \"crop_size\" is -224x-224"},
      {"{\"image_std\": [0.5, 0, 0.5]}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"image_std\"[1] is 0, must be > 0"},
      {"{\"image_mean\": [0.5, \"a\", 0.5]}", VKF_STATUS_PARSE,
       "field \"image_mean\"[1] is not a number"},
      {"{\"image_mean\": [0.1, 0.2, 0.3, 0.4, 0.5]}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"image_mean\" has 5 entries, expected 1 to 4"},
      {"{\"image_mean\": [0.5], \"image_std\": [0.5, 0.5, 0.5]}", VKF_STATUS_INVALID_ARGUMENT,
       "field \"image_mean\" has 1 entries but \"image_std\" has 3"},
      {"{\"image_std\": \"0.5\"}", VKF_STATUS_PARSE,
       "field \"image_std\" must be a number or a list"},
      {"{\"rescale_factor\": 0}", VKF_STATUS_INVALID_ARGUMENT, "field \"rescale_factor\" is 0"},
      {"{\"do_resize\": \"yes\"}", VKF_STATUS_PARSE, "field \"do_resize\" must be true or false"},
      {"{\"image_processor_type\": 5}", VKF_STATUS_PARSE,
       "field \"image_processor_type\" must be a string"},
      {"{\"size\": 224,}", VKF_STATUS_PARSE, "preprocessor_config.json: not valid JSON (line 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    vkf_status s = parse_pre(cases[i].json, &p);
    CHECK_MSG(
        vkf_status_code_of(s) == cases[i].code && strstr(vkf_status_message(s), cases[i].needle),
        "case %zu %s: got %s: %s", i, cases[i].json, vkf_status_code_name(vkf_status_code_of(s)),
        vkf_status_message(s));
    vkf_status_free(s);
  }
  char missing[128];
  snprintf(missing, sizeof missing, "%s/none.json", tmp_dir);
  CHECK_STATUS(vkf_hf_preprocessor_load(missing, &p), VKF_STATUS_NOT_FOUND, "none.json");
}

int main(void) {
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/vkf_test_hf_config_XXXXXX");
  if (!mkdtemp(tmp_dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_vit();
  test_defaults();
  test_config_errors();
  test_decoders();
  test_preprocessor();
  for (int i = 0; i < written_count; i++) unlink(written[i]);
  rmdir(tmp_dir);
  return test_report();
}
