/* A GGUF file (the whole input): the reader's validation, every metadata value and array element,
 * every tensor dequantised, and what the model layer makes of it: config.json, tokenizer.json
 * (then loaded and used to encode a text) and tokenizer_config.json, and the checkpoint under
 * Hugging Face names. */
#include <cjson/cJSON.h>

#include "models/formats/gguf.h"
#include "models/formats/gguf_model.h"
#include "models/formats/gguf_quant.h"
#include "text/bpe.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void use_tokenizer(const char *json, size_t size) {
  cJSON *root = cJSON_ParseWithLength(json, size);
  FUZZ_ASSERT(root); /* the model layer prints valid JSON */
  vkf_bpe *bpe = NULL;
  char type[32];
  vkf_status s = vkf_bpe_from_json(root, "fuzz.gguf/tokenizer.json", &bpe, type);
  cJSON_Delete(root);
  fuzz_check_status(s);
  if (!bpe) return;
  static const char text[] = "Hello 123 <|im_start|>user caf\xC3\xA9 \xF0\x9F\x98\x80  x";
  int32_t *ids = NULL;
  size_t count = 0;
  s = vkf_bpe_encode(bpe, text, sizeof text - 1, 1, &ids, &count);
  fuzz_check_status(s);
  for (size_t i = 0; !s && i < count; i++)
    FUZZ_ASSERT(ids[i] >= 0 && (size_t)ids[i] < vkf_bpe_vocab_count(bpe));
  free(ids);
  vkf_bpe_destroy(bpe);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkf_gguf *g = NULL;
  vkf_status s = vkf_gguf_open_memory(data, size, "fuzz.gguf", &g);
  if (s) {
    FUZZ_ASSERT(g == NULL);
    fuzz_check_status(s);
    return 0;
  }
  for (size_t i = 0; i < vkf_gguf_kv_count(g); i++) {
    const vkf_gguf_kv *kv = vkf_gguf_kv_at(g, i);
    FUZZ_ASSERT(vkf_gguf_find_kv(g, kv->key) == kv);
    if (kv->type != VKF_GGUF_ARRAY) continue;
    for (uint64_t k = 0; k < kv->count && k < 4096; k++) {
      if (kv->array_type == VKF_GGUF_STRING) {
        const char *str;
        size_t n;
        vkf_gguf_array_string(g, kv, k, &str, &n);
        FUZZ_ASSERT(str >= (const char *)data && str + n <= (const char *)data + size);
      } else {
        (void)vkf_gguf_array_float(kv, k);
      }
    }
  }
  for (size_t i = 0; i < vkf_gguf_tensor_count(g); i++) {
    const vkf_gguf_tensor *t = vkf_gguf_tensor_at(g, i);
    FUZZ_ASSERT(t->data >= data && t->data + t->size <= data + size);
    vkf_gguf_type_info info = vkf_gguf_type_info_of(t->type);
    if (!info.dequantizable || t->element_count > (1 << 20)) continue;
    float *out = malloc((size_t)t->element_count * sizeof *out);
    FUZZ_ASSERT(out);
    fuzz_check_status(vkf_gguf_dequantize(t->type, t->data, (size_t)t->element_count, out));
    free(out);
  }
  static const char *const files[] = {"config.json", "tokenizer.json", "tokenizer_config.json"};
  for (int f = 0; f < 3; f++) {
    char *text = NULL;
    size_t n = 0;
    s = vkf_gguf_model_file(g, files[f], &text, &n);
    FUZZ_ASSERT(!s == (text != NULL));
    fuzz_check_status(s);
    if (text && f == 1) use_tokenizer(text, n);
    free(text);
  }
  if (size < (1 << 20)) { /* the dequantised image grows ~8x: small inputs only */
    vkf_checkpoint *ck = NULL;
    s = vkf_gguf_model_checkpoint(g, &ck);
    FUZZ_ASSERT(!s == (ck != NULL));
    fuzz_check_status(s);
    vkf_checkpoint_close(ck);
  }
  vkf_gguf_close(g);
  return 0;
}
