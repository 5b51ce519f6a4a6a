/* Checkpoint tensors as graph constants for the architectures: checks at load, conversion and
 * joining at build, one cache entry per (key, dtype). */
#include "models/arch/arch_weights.h"

#include "graph/base/quant.h"
#include "graph/ir/builder.h"
#include "models/formats/gguf_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

vkf_status vkf_arch_files_open(const char *model_dir, vkf_arch_files *out) {
  memset(out, 0, sizeof *out);
  struct stat sb;
  if (stat(model_dir, &sb) != 0)
    return vkf_status_make(errno == ENOENT ? VKF_STATUS_NOT_FOUND : VKF_STATUS_IO,
                           "model directory %s: %s", model_dir, strerror(errno));
  if (!S_ISDIR(sb.st_mode) && !vkf_gguf_is_file(model_dir))
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "model %s: neither a directory nor a GGUF file", model_dir);
  out->dir = strdup(model_dir);
  if (!out->dir) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", model_dir);
  vkf_status s = vkf_hf_config_load(path, &out->config);
  if (s) {
    free(out->dir);
    memset(out, 0, sizeof *out);
  }
  return s;
}

vkf_status vkf_arch_files_open_weights(vkf_arch_files *f) {
  if (vkf_gguf_is_file(f->dir)) return vkf_gguf_model_checkpoint_at(f->dir, &f->ck);
  return vkf_checkpoint_open(f->dir, &f->ck);
}

void vkf_arch_files_close(vkf_arch_files *f) {
  if (!f->dir) return;
  vkf_weight_cache_free(&f->owned);
  vkf_checkpoint_close(f->ck);
  vkf_hf_config_release(&f->config);
  free(f->dir);
  memset(f, 0, sizeof *f);
}

static const struct {
  const char *name;
  vkf_dtype dtype;
} quant_names[] = {{"q8_0", VKF_Q8_0}, {"q4_0", VKF_Q4_0}, {"q4_1", VKF_Q4_1},
                   {"q5_0", VKF_Q5_0}, {"q5_1", VKF_Q5_1}, {"q4_k", VKF_Q4_K}};

const char *vkf_arch_quantize_formats(void) { return "q8_0, q4_0, q4_1, q5_0, q5_1, q4_k"; }

vkf_status vkf_arch_files_quantize(vkf_arch_files *f, const char *format) {
  if (!format || !*format || !strcasecmp(format, "none")) {
    f->quantize = VKF_F32;
    return VKF_OK;
  }
  for (size_t i = 0; i < sizeof quant_names / sizeof *quant_names; i++)
    if (!strcasecmp(format, quant_names[i].name)) {
      /* A quantised GGUF: its blocks are kept whatever is asked (vkf_arch_linear_weight quantises
       * float weights only), so refuse rather than run another format than the one named. */
      size_t blocks = 0;
      int first = -1;
      for (size_t t = 0; f->ck && t < vkf_checkpoint_count(f->ck); t++) {
        const vkf_safetensors_info *info = vkf_checkpoint_at(f->ck, t);
        if (info && vkf_safetensors_quant_format(info->dtype) >= 0) {
          if (first < 0) first = (int)info->dtype;
          blocks++;
        }
      }
      if (blocks)
        return vkf_status_make(
            VKF_STATUS_INVALID_ARGUMENT,
            "--quantize %s: %s is already quantised (%zu tensors in ggml blocks, %s the first); "
            "its blocks run as they are and are not re-quantised (a second rounding only loses "
            "accuracy): drop --quantize, or start from a float checkpoint",
            format, vkf_checkpoint_path(f->ck), blocks,
            vkf_safetensors_dtype_name((vkf_safetensors_dtype)first));
      f->quantize = quant_names[i].dtype;
      return VKF_OK;
    }
  return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "quantisation format \"%s\" is not one vkformer quantises into; "
                         "allowed: %s (or none)",
                         format, vkf_arch_quantize_formats());
}

/* A linear weight that --quantize left float (its rows are not whole blocks of any format it
 * may use) is noted in the cache under this dtype, data never read, so vkf_arch_files_quantized
 * can say how many stayed float: the cache is the one record that outlives the builds. */
#define KEPT_FLOAT VKF_DTYPE_COUNT

void vkf_arch_files_quantized(const vkf_arch_files *f, uint32_t out[VKF_DTYPE_COUNT],
                              uint32_t *kept_float) {
  int on = vkf_dtype_is_quant(f->quantize);
  for (int d = 0; d < VKF_DTYPE_COUNT; d++)
    out[d] = on && vkf_dtype_is_quant((vkf_dtype)d)
                 ? (uint32_t)vkf_weight_cache_count(f->owned, (vkf_dtype)d)
                 : 0;
  *kept_float = on ? (uint32_t)vkf_weight_cache_count(f->owned, KEPT_FLOAT) : 0;
}

vkf_status vkf_arch_expect(const vkf_checkpoint *ck, const char *prefix, const char *name, int rank,
                           const int64_t *dims) {
  char full[VKF_ARCH_NAME_MAX];
  VKF_NAME(full, "%s%s", prefix, name);
  const vkf_safetensors_info *info = NULL;
  VKF_RETURN_IF_ERROR(vkf_checkpoint_expect(ck, full, rank, dims, &info));
  if (info->dtype != VKF_SAFETENSORS_F32 && info->dtype != VKF_SAFETENSORS_F16 &&
      info->dtype != VKF_SAFETENSORS_BF16 && vkf_safetensors_quant_format(info->dtype) < 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "tensor \"%s\" has dtype %s in %s; F32, F16, BF16 or (in a GGUF) ggml "
                           "blocks expected",
                           full,
                           vkf_safetensors_dtype_name(info->dtype), vkf_checkpoint_path(ck));
  return VKF_OK;
}

vkf_status vkf_arch_expect2(const vkf_checkpoint *ck, const char *prefix, const char *name,
                            int64_t d0, int64_t d1) {
  const int64_t dims[2] = {d0, d1};
  return vkf_arch_expect(ck, prefix, name, d1 ? 2 : 1, dims);
}

int vkf_arch_has(const vkf_checkpoint *ck, const char *prefix, const char *name) {
  char full[VKF_ARCH_NAME_MAX];
  return vkf_checkpoint_find(ck, VKF_NAME(full, "%s%s", prefix, name)) != NULL;
}

vkf_value vkf_arch_weight_as(const vkf_arch_weights *w, vkf_graph *g, const char *name,
                             vkf_dtype dtype) {
  char full[VKF_ARCH_NAME_MAX];
  return vkf_weight_constant(w->cache, w->ck, g, VKF_NAME(full, "%s%s", w->prefix, name), dtype);
}

vkf_value vkf_arch_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name) {
  return vkf_arch_weight_as(w, g, name, w->dtype);
}

static vkf_value fail(vkf_graph *g, vkf_status s) {
  vkf_graph_set_error(g, s);
  return VKF_NO_VALUE;
}

/* The graph dtype that keeps `info`'s blocks (VKF_Q8_0 ...), or VKF_DTYPE_COUNT. */
static vkf_dtype block_dtype(const vkf_safetensors_info *info) {
  int qf = info ? vkf_safetensors_quant_format(info->dtype) : -1;
  return qf < 0 ? VKF_DTYPE_COUNT : (vkf_dtype)(VKF_Q8_0 + qf);
}

/* The 16-bit dtype a BF16 or F16 tensor keeps on the device (VKF_BF16, VKF_F16), or
 * VKF_DTYPE_COUNT. A linear weight stays in the file's 16 bits whatever the activations' dtype:
 * widened to f32 it would stream twice its bytes in every matmul, for the same values. */
static vkf_dtype half_dtype(const vkf_safetensors_info *info) {
  return !info                                  ? VKF_DTYPE_COUNT
         : info->dtype == VKF_SAFETENSORS_BF16 ? VKF_BF16
         : info->dtype == VKF_SAFETENSORS_F16  ? VKF_F16
                                                : VKF_DTYPE_COUNT;
}

/* The blocks a float weight whose rows hold `k` elements becomes under `quantize`, as
 * llama-quantize chooses (a Q4_K row that is not whole 256-blocks falls back to Q5_0), or
 * VKF_DTYPE_COUNT when it stays float. */
static vkf_dtype quant_for(vkf_dtype quantize, int64_t k) {
  if (!vkf_dtype_is_quant(quantize) || k < 1) return VKF_DTYPE_COUNT;
  if (k % vkf_dtype_block(quantize) == 0) return quantize;
  if (quantize == VKF_Q4_K && k % vkf_dtype_block(VKF_Q5_0) == 0) return VKF_Q5_0;
  return VKF_DTYPE_COUNT;
}

static int is_float(const vkf_safetensors_info *info) {
  return info && (info->dtype == VKF_SAFETENSORS_F32 || info->dtype == VKF_SAFETENSORS_F16 ||
                  info->dtype == VKF_SAFETENSORS_BF16);
}

/* f32 `values` [rows, k] (freed here) quantised to `q` and kept under (key, q); NULL when out of
 * memory. */
static const void *put_quantized(vkf_weight_cache **cache, const char *key, vkf_dtype q,
                                 float *values, int64_t rows, int64_t k) {
  size_t count = (size_t)rows * (size_t)k;
  uint8_t *blocks = values ? malloc(count / vkf_dtype_block(q) * vkf_dtype_size(q) + 1) : NULL;
  if (blocks) vkf_quant_quantize((vkf_quant_format)(q - VKF_Q8_0), values, count, blocks);
  free(values);
  return blocks ? vkf_weight_cache_put_raw(cache, key, q, blocks) : NULL;
}

static void note_kept_float(const vkf_arch_weights *w, const char *key) {
  if (!vkf_dtype_is_quant(w->quantize) || vkf_weight_cache_find(*w->cache, key, KEPT_FLOAT))
    return;
  /* out of memory: one weight goes uncounted in a message, nothing else */
  (void)vkf_weight_cache_put_raw(w->cache, key, KEPT_FLOAT, malloc(1));
}

vkf_value vkf_arch_linear_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name,
                                 int *in_out) {
  char full[VKF_ARCH_NAME_MAX];
  const vkf_safetensors_info *info =
      vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, name));
  int io = in_out && *in_out;
  vkf_dtype q = is_float(info) && info->rank == 2 ? quant_for(w->quantize, info->shape[io ? 0 : 1])
                                                  : VKF_DTYPE_COUNT;
  if (q == VKF_DTYPE_COUNT) {
    if (is_float(info) && info->rank == 2) note_kept_float(w, full);
    vkf_dtype blocks = block_dtype(info), half = half_dtype(info);
    return vkf_weight_constant(w->cache, w->ck, g, full,
                               blocks != VKF_DTYPE_COUNT ? blocks
                               : half != VKF_DTYPE_COUNT ? half
                                                         : w->dtype);
  }
  const int64_t n = info->shape[io ? 1 : 0], k = info->shape[io ? 0 : 1];
  const void *data = vkf_weight_cache_find(*w->cache, full, q);
  if (!data) {
    float *v = NULL;
    vkf_status s = vkf_weight_read_f32(w->ck, full, &v, NULL);
    if (s) return fail(g, s);
    if (io) { /* [k, n] -> [n, k]: the blocks run along the input features */
      float *t = malloc((size_t)n * (size_t)k * sizeof *t + 1);
      for (int64_t r = 0; t && r < k; r++)
        for (int64_t c = 0; c < n; c++) t[c * k + r] = v[r * n + c];
      free(v);
      v = t;
    }
    data = put_quantized(w->cache, full, q, v, n, k);
    if (!data) return fail(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "quantising %s", full));
  }
  if (in_out) *in_out = 0;
  const int64_t shape[2] = {n, k};
  return vkf_graph_constant(g, full, q, 2, shape, data);
}

vkf_value vkf_arch_matmul_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name) {
  return vkf_arch_linear_weight(w, g, name, NULL);
}

vkf_value vkf_arch_table_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name) {
  char full[VKF_ARCH_NAME_MAX];
  vkf_dtype q = block_dtype(vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, name)));
  return vkf_weight_constant(w->cache, w->ck, g, full, q != VKF_DTYPE_COUNT ? q : w->dtype);
}

vkf_value vkf_arch_tied_table_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name) {
  char full[VKF_ARCH_NAME_MAX];
  const vkf_safetensors_info *info = vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, name));
  if (half_dtype(info) == VKF_F16) return vkf_weight_constant(w->cache, w->ck, g, full, VKF_F16);
  return vkf_arch_table_weight(w, g, name);
}

/* Every tensor prefix + names[i] has the blocks of the first (a quantised dtype), or none. */
static vkf_dtype all_blocks(const vkf_arch_weights *w, const char *const *names, int count) {
  char full[VKF_ARCH_NAME_MAX];
  vkf_dtype first = VKF_DTYPE_COUNT;
  for (int i = 0; i < count; i++) {
    vkf_dtype q = block_dtype(vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, names[i])));
    if (q == VKF_DTYPE_COUNT || (i && q != first)) return VKF_DTYPE_COUNT;
    first = q;
  }
  return first;
}

/* The 16-bit dtype every tensor prefix + names[i] has (VKF_BF16 or VKF_F16), else VKF_DTYPE_COUNT
 * (a missing one has none: vkf_arch_joined reports it). */
static vkf_dtype all_half(const vkf_arch_weights *w, const char *const *names, int count) {
  char full[VKF_ARCH_NAME_MAX];
  vkf_dtype first = VKF_DTYPE_COUNT;
  for (int i = 0; i < count; i++) {
    vkf_dtype h = half_dtype(vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, names[i])));
    if (h == VKF_DTYPE_COUNT || (i && h != first)) return VKF_DTYPE_COUNT;
    first = h;
  }
  return first;
}

/* The bytes of a bf16 or f16 join: the files' values copied as they are, stacked or side by side. */
static uint16_t *join_half(const vkf_arch_weights *w, const char *const *names, int count,
                           vkf_arch_join join, size_t total, size_t cols) {
  uint16_t *all = malloc(total * sizeof *all + 1);
  size_t at = 0;
  for (int i = 0; all && i < count; i++) {
    char full[VKF_ARCH_NAME_MAX];
    const vkf_safetensors_info *info =
        vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, names[i]));
    size_t each = (size_t)info->element_count;
    const unsigned char *src = info->data;
    if (join == VKF_ARCH_STACK) {
      memcpy(all + at, src, each * 2);
    } else { /* row r of tensor i goes to columns [i·C, (i+1)·C) of joined row r */
      for (size_t r = 0; cols && r < each / cols; r++)
        memcpy(all + r * cols * (size_t)count + (size_t)i * cols, src + r * cols * 2, cols * 2);
    }
    at += each;
  }
  return all;
}

static vkf_value joined(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                        const char *const *names, int count, vkf_arch_join join, float scale,
                        vkf_dtype keep_half, vkf_dtype keep_blocks, int quantize) {
  char full[VKF_ARCH_NAME_MAX];
  const vkf_safetensors_info *first =
      vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, names[0]));
  if (!first)
    return fail(g, vkf_status_make(VKF_STATUS_NOT_FOUND, "tensor \"%s\" not found in %s", full,
                                   vkf_checkpoint_path(w->ck)));
  if (first->rank < 1 || first->rank > VKF_MAX_DIMS || (join == VKF_ARCH_SIDE && first->rank != 2))
    return fail(g, vkf_status_make(VKF_STATUS_SHAPE, "tensor \"%s\" has rank %d: cannot join it",
                                   full, first->rank));
  /* Every tensor must match the first in all dims but, when stacking, the first one (grouped-query
   * K and V projections have fewer rows than Q). */
  int64_t shape[VKF_MAX_DIMS];
  for (int i = 0; i < first->rank; i++) shape[i] = first->shape[i];
  size_t cols = first->shape[0] ? (size_t)first->element_count / (size_t)first->shape[0] : 0;
  size_t total = 0;
  for (int i = 0; i < count; i++) {
    const vkf_safetensors_info *info =
        vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, names[i]));
    int same = info && info->rank == first->rank;
    for (int d = join == VKF_ARCH_STACK ? 1 : 0; same && d < first->rank; d++)
      same = info->shape[d] == first->shape[d];
    if (!same)
      return fail(g, vkf_status_make(info ? VKF_STATUS_SHAPE : VKF_STATUS_NOT_FOUND,
                                     info ? "tensor \"%s\" and \"%s%s\" differ in shape"
                                          : "tensor \"%s\" not found (joining with \"%s%s\")",
                                     full, w->prefix, names[0]));
    total += join == VKF_ARCH_SUM && i ? 0 : (size_t)info->element_count;
    if (join == VKF_ARCH_STACK && i) shape[0] += info->shape[0];
  }
  if (join == VKF_ARCH_SIDE) shape[1] *= count;
  if (keep_blocks != VKF_DTYPE_COUNT) {
    /* ggml blocks stacked row after row: each row is whole blocks, so the bytes just follow */
    const void *data = vkf_weight_cache_find(*w->cache, key, keep_blocks);
    if (!data) {
      size_t bytes = 0;
      for (int i = 0; i < count; i++)
        bytes += vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, names[i]))->data_size;
      uint8_t *all = malloc(bytes + 1);
      for (size_t i = 0, at = 0; all && i < (size_t)count; i++) {
        const vkf_safetensors_info *info =
            vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, names[i]));
        memcpy(all + at, info->data, info->data_size);
        at += info->data_size;
      }
      data = vkf_weight_cache_put_raw(w->cache, key, keep_blocks, all);
    }
    if (!data) return fail(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "assembling %s", key));
    return vkf_graph_constant(g, key, keep_blocks, (uint32_t)first->rank, shape, data);
  }
  /* --quantize: a stack of [out, in] rows quantises as one weight would */
  vkf_dtype q = quantize && join == VKF_ARCH_STACK && first->rank == 2
                    ? quant_for(w->quantize, first->shape[1])
                    : VKF_DTYPE_COUNT;
  if (quantize && q == VKF_DTYPE_COUNT) note_kept_float(w, key);
  if (keep_half != VKF_DTYPE_COUNT && q == VKF_DTYPE_COUNT) {
    const void *data = vkf_weight_cache_find(*w->cache, key, keep_half);
    if (!data) data = vkf_weight_cache_put_raw(w->cache, key, keep_half,
                                               join_half(w, names, count, join, total, cols));
    if (!data) return fail(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "assembling %s", key));
    return vkf_graph_constant(g, key, keep_half, (uint32_t)first->rank, shape, data);
  }
  const vkf_dtype store = q != VKF_DTYPE_COUNT ? q : w->dtype;
  const void *data = vkf_weight_cache_find(*w->cache, key, store);
  if (!data) {
    float *all = calloc(total + 1, sizeof *all);
    if (!all) return fail(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "assembling %s", key));
    size_t at = 0; /* stack: where tensor i's rows start */
    for (int i = 0; i < count; i++) {
      float *v = NULL;
      const vkf_safetensors_info *info = NULL;
      VKF_NAME(full, "%s%s", w->prefix, names[i]);
      if (join == VKF_ARCH_STACK) {
        /* Straight into place (a fused QKV weight is tens of MB per layer: no staging copy). */
        info = vkf_checkpoint_find(w->ck, full);
        vkf_status s = vkf_checkpoint_read_f32(w->ck, info, (size_t)info->element_count, all + at);
        if (s) {
          free(all);
          return fail(g, s);
        }
        if (scale != 1.0f)
          for (size_t j = 0; j < (size_t)info->element_count; j++) all[at + j] *= scale;
        at += (size_t)info->element_count;
        continue;
      }
      vkf_status s = vkf_weight_read_f32(w->ck, full, &v, &info);
      if (s) {
        free(all);
        return fail(g, s);
      }
      size_t each = (size_t)info->element_count;
      for (size_t j = 0; j < each; j++) {
        if (join == VKF_ARCH_SUM)
          all[j] += scale * v[j];
        else if (join == VKF_ARCH_STACK)
          all[at + j] = scale * v[j];
        else /* row j / cols of the joined [R, count·C] */
          all[(j / cols) * cols * (size_t)count + (size_t)i * cols + j % cols] = scale * v[j];
      }
      at += each;
      free(v);
    }
    data = q != VKF_DTYPE_COUNT ? put_quantized(w->cache, key, q, all, shape[0], shape[1])
                                : vkf_weight_cache_put(w->cache, key, w->dtype, all, total);
    if (!data) return fail(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "assembling %s", key));
  }
  return vkf_graph_constant(g, key, store, (uint32_t)first->rank, shape, data);
}

vkf_value vkf_arch_joined(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                          const char *const *names, int count, vkf_arch_join join, float scale) {
  return joined(w, g, key, names, count, join, scale, VKF_DTYPE_COUNT, VKF_DTYPE_COUNT, 0);
}

int vkf_arch_same_storage(const vkf_arch_weights *w, const char *const *names, int count) {
  char full[VKF_ARCH_NAME_MAX];
  const vkf_safetensors_info *first = NULL;
  for (int i = 0; i < count; i++) {
    const vkf_safetensors_info *info =
        vkf_checkpoint_find(w->ck, VKF_NAME(full, "%s%s", w->prefix, names[i]));
    if (!info || (first && info->dtype != first->dtype)) return 0;
    if (!first) first = info;
  }
  return count > 0;
}

vkf_value vkf_arch_matmul_joined(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                                 const char *const *names, int count, vkf_arch_join join) {
  vkf_dtype keep = join != VKF_ARCH_SUM ? all_half(w, names, count) : VKF_DTYPE_COUNT;
  /* blocks only stack (rows); joined side by side or summed they are dequantised */
  vkf_dtype blocks = join == VKF_ARCH_STACK ? all_blocks(w, names, count) : VKF_DTYPE_COUNT;
  return joined(w, g, key, names, count, join, 1.0f, keep, blocks, 1);
}

vkf_value vkf_arch_computed(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                            vkf_dtype dtype, uint32_t rank, const int64_t *shape,
                            void (*fill)(float *values, size_t count, const void *user),
                            const void *user) {
  size_t count = 1;
  for (uint32_t i = 0; i < rank; i++) count *= (size_t)shape[i];
  const void *data = vkf_weight_cache_find(*w->cache, key, dtype);
  if (!data) {
    float *v = malloc(count * sizeof *v + 1);
    if (!v) return fail(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "computing %s", key));
    fill(v, count, user);
    data = vkf_weight_cache_put(w->cache, key, dtype, v, count);
    if (!data) return fail(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "computing %s", key));
  }
  return vkf_graph_constant(g, key, dtype, rank, shape, data);
}

vkf_value vkf_arch_f32_output(vkf_graph *g, vkf_value v, const char *name) {
  const vkf_tensor *t = vkf_value_valid(v) ? vkf_graph_tensor(g, v) : NULL;
  int cast = t && t->dtype != VKF_F32;
  if (cast) v = vkf_cast(g, name, v, VKF_F32);
  return vkf_graph_output(g, v, cast ? NULL : name);
}
