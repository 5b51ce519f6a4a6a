/* A GGUF's tensors as a checkpoint under Hugging Face's names: llama.cpp's tensor names mapped
 * back (llama.cpp's LLM_TENSOR_NAMES), Q and K rows un-permuted where llama.cpp's converter
 * permuted them (Llama: rotary halves interleaved), all laid out as one safetensors image in
 * memory. Quantised tensors keep their blocks (the image's GGML_* dtypes, which the kernels decode
 * in place) except GPT-2's Conv1D weights, which are transposed and so dequantised to F32 exactly
 * as ggml does. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/formats/gguf_model.h"
#include "graph/base/env.h"
#include "graph/base/quant.h"
#include "models/formats/gguf_quant.h"

/* llama.cpp name (after "blk.N." for layer tensors) -> Hugging Face name. */
static const char *const k_globals[][2] = {
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
};
static const char *const k_layer[][2] = {
    {"attn_norm.weight", "input_layernorm.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_q.bias", "self_attn.q_proj.bias"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_k.bias", "self_attn.k_proj.bias"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_v.bias", "self_attn.v_proj.bias"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"attn_output.bias", "self_attn.o_proj.bias"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
};

/* GPT-2 (llama.cpp's LLM_ARCH_GPT2). The four Conv1D weights are stored [in, out] by Hugging Face;
 * llama.cpp's converter transposed them to [out, in] rows, so they are transposed back. */
static const char *const k_gpt2_globals[][2] = {
    {"token_embd.weight", "transformer.wte.weight"},
    {"position_embd.weight", "transformer.wpe.weight"},
    {"output_norm.weight", "transformer.ln_f.weight"},
    {"output_norm.bias", "transformer.ln_f.bias"},
    {"output.weight", "lm_head.weight"},
};
static const char *const k_gpt2_layer[][2] = {
    {"attn_norm.weight", "ln_1.weight"},        {"attn_norm.bias", "ln_1.bias"},
    {"attn_qkv.weight", "attn.c_attn.weight"},  {"attn_qkv.bias", "attn.c_attn.bias"},
    {"attn_output.weight", "attn.c_proj.weight"}, {"attn_output.bias", "attn.c_proj.bias"},
    {"ffn_norm.weight", "ln_2.weight"},         {"ffn_norm.bias", "ln_2.bias"},
    {"ffn_up.weight", "mlp.c_fc.weight"},       {"ffn_up.bias", "mlp.c_fc.bias"},
    {"ffn_down.weight", "mlp.c_proj.weight"},   {"ffn_down.bias", "mlp.c_proj.bias"},
};

typedef struct plan {
  const vkf_gguf_tensor *t;
  char name[160];
  int permute_heads; /* 0: rows as they are; else un-permute rows in this many heads */
  int keep_raw;      /* F16 / BF16 / ggml blocks: rows copied as they are, dtype kept */
  int transpose;     /* a GPT-2 Conv1D weight: [out, in] rows back to [in, out] */
  size_t offset, size;
} plan;

/* The Hugging Face name of `name`, which projection it is (1 q, 2 k, 0 other) and whether it is a
 * transposed Conv1D weight; 0 when the name is not one the mapping knows. */
static int map_name(const char *name, int gpt2, char out[160], int *proj, int *transpose) {
  *proj = *transpose = 0;
  const char *const(*globals)[2] = gpt2 ? k_gpt2_globals : k_globals;
  size_t nglobals = gpt2 ? sizeof k_gpt2_globals / sizeof *k_gpt2_globals
                         : sizeof k_globals / sizeof *k_globals;
  const char *const(*layer)[2] = gpt2 ? k_gpt2_layer : k_layer;
  size_t nlayer = gpt2 ? sizeof k_gpt2_layer / sizeof *k_gpt2_layer : sizeof k_layer / sizeof *k_layer;
  for (size_t i = 0; i < nglobals; i++)
    if (!strcmp(name, globals[i][0])) {
      snprintf(out, 160, "%s", globals[i][1]);
      return 1;
    }
  unsigned index;
  int used = 0;
  if (sscanf(name, "blk.%u.%n", &index, &used) != 1 || !used || index > 100000) return 0;
  for (size_t i = 0; i < nlayer; i++)
    if (!strcmp(name + used, layer[i][0])) {
      snprintf(out, 160, gpt2 ? "transformer.h.%u.%s" : "model.layers.%u.%s", index, layer[i][1]);
      if (!gpt2 && !strncmp(layer[i][0], "attn_q.", 7)) *proj = 1;
      if (!gpt2 && !strncmp(layer[i][0], "attn_k.", 7)) *proj = 2;
      *transpose = gpt2 && strstr(layer[i][0], ".weight") && !strstr(layer[i][0], "norm");
      return 1;
    }
  return 0;
}

/* Hugging Face row o of a head of `hd` rows is llama.cpp's row 2 * (o % (hd / 2)) + o / (hd / 2):
 * its converter moved the second rotary half to the odd rows. */
static int64_t source_row(int64_t o, int64_t rows, int heads) {
  if (!heads) return o;
  int64_t hd = rows / heads, h = o / hd, r = o % hd, half = hd / 2;
  return h * hd + 2 * (r % half) + r / half;
}

static vkf_status fill(const vkf_gguf *g, const plan *p, uint8_t *dst) {
  const vkf_gguf_tensor *t = p->t;
  vkf_gguf_type_info info = vkf_gguf_type_info_of(t->type);
  int64_t row_len = t->dims[0], rows = t->element_count / row_len;
  size_t src_row = (size_t)(row_len / info.block) * info.bytes;
  size_t dst_row = p->keep_raw ? src_row : (size_t)row_len * sizeof(float);
  size_t elem = p->keep_raw ? 2 : sizeof(float); /* (a transposed tensor is never blocks) */
  uint8_t *tmp = p->transpose ? malloc(dst_row) : NULL;
  if (p->transpose && !tmp)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: tensor \"%s\"", vkf_gguf_path(g), t->name);
  for (int64_t o = 0; o < rows; o++) {
    const uint8_t *src = t->data + (size_t)source_row(o, rows, p->permute_heads) * src_row;
    uint8_t *out = p->transpose ? tmp : dst + (size_t)o * dst_row;
    vkf_status s = VKF_OK;
    if (p->keep_raw) memcpy(out, src, dst_row);
    /* the image's data start and every offset are 4-aligned */
    else s = vkf_gguf_dequantize(t->type, src, (size_t)row_len, (float *)(void *)out);
    if (!s && p->transpose) /* row o of [out, in] is column o of [in, out] */
      for (int64_t k = 0; k < row_len; k++)
        memcpy(dst + ((size_t)k * (size_t)rows + (size_t)o) * elem, tmp + (size_t)k * elem, elem);
    if (s) {
      vkf_status named = vkf_status_make(vkf_status_code_of(s), "%s: tensor \"%s\": %s",
                                         vkf_gguf_path(g), t->name, vkf_status_message(s));
      vkf_status_free(s);
      free(tmp);
      return named;
    }
  }
  free(tmp);
  return VKF_OK;
}

static vkf_status build_plans(const vkf_gguf *g, plan *plans, size_t *out_total) {
  const char *path = vkf_gguf_path(g), *arch_s = "";
  size_t arch_n = 0;
  VKF_RETURN_IF_ERROR(vkf_gguf_get_string(g, "general.architecture", &arch_s, &arch_n));
  int permute = arch_n == 5 && !memcmp(arch_s, "llama", 5); /* qwen2: rotary halves kept */
  int gpt2 = arch_n == 4 && !memcmp(arch_s, "gpt2", 4);
  char key[96];
  uint64_t heads = 0, kv_heads = 0;
  snprintf(key, sizeof key, "%.*s.attention.head_count", (int)(arch_n < 32 ? arch_n : 32), arch_s);
  VKF_RETURN_IF_ERROR(vkf_gguf_get_uint_or(g, key, 1 << 20, 0, &heads));
  snprintf(key, sizeof key, "%.*s.attention.head_count_kv", (int)(arch_n < 32 ? arch_n : 32),
           arch_s);
  VKF_RETURN_IF_ERROR(vkf_gguf_get_uint_or(g, key, 1 << 20, heads, &kv_heads));
  size_t total = 0;
  for (size_t i = 0; i < vkf_gguf_tensor_count(g); i++) {
    plan *p = &plans[i];
    p->t = vkf_gguf_tensor_at(g, i);
    int proj;
    if (!map_name(p->t->name, gpt2, p->name, &proj, &p->transpose))
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s: tensor \"%s\" has no place in the architecture (not one of "
                             "llama.cpp's names for it)",
                             path, p->t->name);
    vkf_gguf_type_info info = vkf_gguf_type_info_of(p->t->type);
    if (!info.dequantizable)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s: tensor \"%s\" has type %s, which cannot be read yet (F32, F16, "
                             "BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K can)",
                             path, p->t->name, info.name);
    p->keep_raw = p->t->type == VKF_GGUF_F16 || p->t->type == VKF_GGUF_BF16 ||
                  (vkf_gguf_quant_format(p->t->type) >= 0 && !p->transpose &&
                   !vkf_env_get()->dequantize);
    if (permute && proj) {
      int64_t h = (int64_t)(proj == 1 ? heads : kv_heads);
      int64_t rows = p->t->element_count / p->t->dims[0];
      if (h <= 0 || rows % h || (rows / h) % 2)
        return vkf_status_make(VKF_STATUS_PARSE,
                               "%s: tensor \"%s\" has %" PRId64 " rows, not %" PRId64
                               " heads of an even size",
                               path, p->t->name, rows, h);
      p->permute_heads = (int)h;
    }
    size_t elem = p->keep_raw ? 2 : 4;
    if ((size_t)p->t->element_count > (SIZE_MAX - total) / elem / 2)
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: the dequantised tensors exceed memory",
                             path);
    p->offset = total;
    p->size = vkf_gguf_quant_format(p->t->type) >= 0 && p->keep_raw
                  ? (size_t)(p->t->element_count / info.block) * info.bytes
                  : (size_t)p->t->element_count * elem;
    /* every tensor 16-aligned (malloc's alignment): F32 rows stay aligned after 2-byte tensors,
     * and a device that binds weights in place from host memory can view any of them */
    total += (p->size + 15) / 16 * 16;
  }
  *out_total = total;
  return VKF_OK;
}

/* The safetensors header: {"NAME": {"dtype", "shape" (reversed ggml dims), "data_offsets"}}. */
static char *header_of(const plan *plans, size_t count) {
  cJSON *doc = cJSON_CreateObject();
  int ok = doc != NULL;
  for (size_t i = 0; ok && i < count; i++) {
    const plan *p = &plans[i];
    cJSON *e = cJSON_AddObjectToObject(doc, p->name);
    static const char *const blocks[VKF_QUANT_COUNT] = {
        "GGML_Q8_0", "GGML_Q4_0", "GGML_Q4_1", "GGML_Q5_0",
        "GGML_Q5_1", "GGML_Q4_K", "GGML_Q5_K", "GGML_Q6_K"};
    int qf = vkf_gguf_quant_format(p->t->type);
    const char *dtype = !p->keep_raw                  ? "F32"
                        : qf >= 0                     ? blocks[qf]
                        : p->t->type == VKF_GGUF_F16 ? "F16"
                                                      : "BF16";
    cJSON *shape = e ? cJSON_AddArrayToObject(e, "shape") : NULL;
    cJSON *offs = e ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
    ok = shape && offs && cJSON_AddStringToObject(e, "dtype", dtype);
    for (int k = 0; ok && k < p->t->n_dims; k++) /* reversed ggml dims; a transpose keeps them */
      ok = cJSON_AddItemToArray(
          shape, cJSON_CreateNumber((double)p->t->dims[p->transpose ? k : p->t->n_dims - 1 - k]));
    ok = ok && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)p->offset)) &&
         cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(p->offset + p->size)));
  }
  char *text = ok ? cJSON_PrintUnformatted(doc) : NULL;
  cJSON_Delete(doc);
  return text;
}

vkf_status vkf_gguf_model_checkpoint(const vkf_gguf *g, vkf_checkpoint **out_checkpoint) {
  *out_checkpoint = NULL;
  const char *path = vkf_gguf_path(g);
  size_t count = vkf_gguf_tensor_count(g), total = 0;
  plan *plans = calloc(count ? count : 1, sizeof *plans);
  if (!plans) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: tensor table", path);
  vkf_status s = build_plans(g, plans, &total);
  char *header = s ? NULL : header_of(plans, count);
  if (!s && !header) s = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: tensor table", path);
  uint8_t *image = NULL;
  size_t header_len = 0, data_start = 0;
  if (!s) {
    header_len = strlen(header);
    size_t padded = (header_len + 8 + 15) / 16 * 16 - 8; /* spaces: the data starts 16-aligned */
    data_start = 8 + padded;
    image = total <= SIZE_MAX - data_start ? malloc(data_start + total) : NULL;
    if (!image)
      s = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                          "%s: %zu bytes for the dequantised weights", path, total);
    else {
      uint64_t n = padded;
      memcpy(image, &n, 8);
      memcpy(image + 8, header, header_len);
      memset(image + 8 + header_len, ' ', padded - header_len);
    }
  }
  for (size_t i = 0; !s && i < count; i++) s = fill(g, &plans[i], image + data_start + plans[i].offset);
  free(header);
  free(plans);
  if (s) {
    free(image);
    return s;
  }
  vkf_safetensors *st = NULL;
  VKF_RETURN_IF_ERROR(vkf_safetensors_adopt_memory(image, data_start + total, path, &st));
  return vkf_checkpoint_from_file(st, out_checkpoint);
}

vkf_status vkf_gguf_model_checkpoint_at(const char *path, vkf_checkpoint **out_checkpoint) {
  *out_checkpoint = NULL;
  vkf_gguf *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_gguf_open(path, &g));
  vkf_status s = vkf_gguf_model_checkpoint(g, out_checkpoint);
  vkf_gguf_close(g);
  return s;
}
