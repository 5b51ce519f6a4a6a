/* How an architecture reads its checkpoint: load-time checks of a tensor's shape and dtype, and
 * graph constants made from one tensor or from several joined (fused QKV, stacked tokens, summed
 * heads), converted to the run dtype once and kept in the model's weight cache. */
#ifndef VKF_MODELS_ARCH_WEIGHTS_H
#define VKF_MODELS_ARCH_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/formats/checkpoint.h"
#include "models/formats/hf_config.h"
#include "models/formats/weight_cache.h"

enum { VKF_ARCH_NAME_MAX = 256 };

/* The additive score of a masked key, for every builder's attention mask. Hugging Face adds
 * finfo(float32).min; any value whose magnitude absorbs every score does the same (masked keys get
 * weight 0, and a row with every key masked becomes uniform over all keys, as in transformers),
 * and this one stays finite after the attention kernel's scaling by log2(e). */
#define VKF_MASKED_SCORE 1e30f

/* What every loaded checkpoint owns: its folder, config.json, the (possibly sharded) weights, which
 * graph constants point into, and the weights converted or assembled for builds. */
typedef struct vkf_arch_files {
  char *dir;
  vkf_hf_config config;
  vkf_checkpoint *ck;
  vkf_weight_cache *owned;
  /* `--quantize`: the blocks linear weights are quantised into at build time (VKF_Q8_0, VKF_Q4_0,
   * VKF_Q4_1, VKF_Q5_0, VKF_Q5_1, VKF_Q4_K); any other dtype (0) keeps the file's dtypes. */
  vkf_dtype quantize;
} vkf_arch_files;

/* Checks that `model_dir` is a directory and reads its config.json into out->config (the weights
 * are opened by vkf_arch_files_open_weights once the architecture accepts the config). On failure
 * *out owns nothing. */
vkf_status vkf_arch_files_open(const char *model_dir, vkf_arch_files *out);
vkf_status vkf_arch_files_open_weights(vkf_arch_files *files);
void vkf_arch_files_close(vkf_arch_files *files);
/* Sets files->quantize from a format name as the CLI spells it ("q8_0", "q4_0", "q4_1", "q5_0",
 * "q5_1", "q4_k"; case does not matter; "none" or "" keeps the file's dtypes). Any other name is
 * UNSUPPORTED listing the allowed ones. A file that already holds ggml blocks (a quantised GGUF)
 * is INVALID_ARGUMENT naming its block format: its blocks would stay as they are (only float
 * weights are quantised), so the format asked for would not be the one that runs, and a second
 * rounding of a quantised grid only loses accuracy. Builds after the call quantise; weights
 * already in the model's cache for earlier builds stay as they were made. */
vkf_status vkf_arch_files_quantize(vkf_arch_files *files, const char *format);
/* How many linear weights the builds so far quantised into each block dtype (out[VKF_Q8_0] ...;
 * a q4_k weight whose rows are not whole 256-blocks is counted under VKF_Q5_0, its fallback);
 * every other entry 0; *kept_float: how many it left float (rows not whole 32-blocks). All 0
 * without vkf_arch_files_quantize; after it the cache's blocks are all ones it made (a file with
 * blocks of its own is refused there). */
void vkf_arch_files_quantized(const vkf_arch_files *files, uint32_t out[VKF_DTYPE_COUNT],
                              uint32_t *kept_float);
/* The allowed names, for --help: "q8_0, q4_0, q4_1, q5_0, q5_1, q4_k". */
const char *vkf_arch_quantize_formats(void);

/* Small printf into a stack buffer for node and weight names. */
#define VKF_NAME(buf, ...) (snprintf(buf, sizeof buf, __VA_ARGS__), buf)

/* The checkpoint a build reads and where converted weights go. `prefix` is prepended to every
 * tensor name ("vit.", "bert.", ""); the cache outlives every graph built from it. */
typedef struct vkf_arch_weights {
  const vkf_checkpoint *ck;
  vkf_weight_cache **cache;
  const char *prefix;
  vkf_dtype dtype; /* the run dtype of weights: VKF_F32 or VKF_F16 */
  vkf_dtype quantize; /* vkf_arch_files.quantize: the blocks float linear weights become */
} vkf_arch_weights;

/* Load-time check of prefix + name: rank dims equal to `dims` (rank <= 4) and a float dtype (F32,
 * F16, BF16). NOT_FOUND, SHAPE or UNSUPPORTED naming the tensor and the file. */
vkf_status vkf_arch_expect(const vkf_checkpoint *ck, const char *prefix, const char *name, int rank,
                           const int64_t *dims);
/* As vkf_arch_expect for a [d0] (d1 == 0) or [d0, d1] tensor. */
vkf_status vkf_arch_expect2(const vkf_checkpoint *ck, const char *prefix, const char *name,
                            int64_t d0, int64_t d1);
/* Whether prefix + name is in the file. */
int vkf_arch_has(const vkf_checkpoint *ck, const char *prefix, const char *name);

/* A graph constant for checkpoint tensor prefix + `name` in w->dtype (errors go to the graph's
 * sticky status). */
vkf_value vkf_arch_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name);
/* The same in an explicit dtype (e.g. f32 for a table read by an f32 node of an f16 model). */
vkf_value vkf_arch_weight_as(const vkf_arch_weights *w, vkf_graph *g, const char *name,
                             vkf_dtype dtype);

/* The weight of a linear layer, read only as a matmul's B: a bf16 or f16 checkpoint tensor stays
 * bf16 or f16 whatever the activations' dtype (--fp16 changes the activations only), the mapped
 * bytes themselves (half of f32's bytes on the device and in every decode step's reads; the
 * matmul kernels widen them exactly, so f32 results are unchanged); ggml blocks (a
 * GGUF's quantised tensors, [out, in] rows) stay blocks, decoded by the kernels; any other dtype
 * as vkf_arch_weight. With w->quantize, a float [out, in] weight whose rows are whole blocks is
 * quantised as ggml's reference quantiser does (see vkf_arch_linear_weight). */
vkf_value vkf_arch_matmul_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name);
/* vkf_arch_matmul_weight for a linear layer a file may store [in, out] (*in_out 1, GPT-2's
 * Conv1D). With w->quantize the weight becomes ggml blocks along `in` (llama.cpp's choice per row
 * length: the format asked for when `in` is whole blocks of it, Q5_0 for a Q4_K whose rows are not
 * whole 256-blocks but 32-blocks, the file's float otherwise); an [in, out] weight is transposed
 * first and *in_out set to 0, so the caller's matmul transposes B. */
vkf_value vkf_arch_linear_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name,
                                 int *in_out);
/* An embedding table, read by gathers (and as a tied head's B): ggml blocks stay blocks (the
 * gather then yields f32), any other dtype as vkf_arch_weight. */
vkf_value vkf_arch_table_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name);
/* vkf_arch_table_weight for a table that may also be a tied head's B: an f16 table stays f16 (as a
 * linear weight does), so its gathers yield f16 rows, which the caller casts to its dtype. */
vkf_value vkf_arch_tied_table_weight(const vkf_arch_weights *w, vkf_graph *g, const char *name);

/* How vkf_arch_joined combines `count` checkpoint tensors of one shape [R, ...] (C elements after
 * the first dim). */
typedef enum vkf_arch_join {
  VKF_ARCH_STACK, /* rows after rows: [count·R, ...] (fused QKV, CLS tokens over a batch) */
  VKF_ARCH_SUM,   /* elementwise sum: [R, ...] (a head averaged from two) */
  VKF_ARCH_SIDE,  /* rank 2, side by side: [R, count·C] */
} vkf_arch_join;

/* One constant cached under `key` (prefix not added) made of tensors prefix + names[i] joined as
 * `join`, every value multiplied by `scale`. Tensors must agree in shape, except in their first
 * dim when stacked. */
vkf_value vkf_arch_joined(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                          const char *const *names, int count, vkf_arch_join join, float scale);

/* 1 when every tensor prefix + names[i] exists with one dtype (F32, F16, BF16 or one ggml block
 * type), so vkf_arch_matmul_joined keeps their storage: joined weights of different block types
 * would be dequantised. */
int vkf_arch_same_storage(const vkf_arch_weights *w, const char *const *names, int count);

/* vkf_arch_joined for a matmul weight (a fused QKV): when every tensor is bf16 (or every one f16),
 * joined as bf16 (f16) (STACK or SIDE; no scale); stacked ggml blocks stay blocks; with w->quantize, stacked float
 * tensors are quantised as vkf_arch_linear_weight does; otherwise vkf_arch_joined with scale 1. */
vkf_value vkf_arch_matmul_joined(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                                 const char *const *names, int count, vkf_arch_join join);

/* A constant computed by the architecture (cached under `key`): `fill` writes `count` fp32 values,
 * given `user`. f32 or f16 per `dtype`. */
vkf_value vkf_arch_computed(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                            vkf_dtype dtype, uint32_t rank, const int64_t *shape,
                            void (*fill)(float *values, size_t count, const void *user),
                            const void *user);

/* Marks `v` as output `name` in f32 (one cast when the build runs in f16). */
vkf_value vkf_arch_f32_output(vkf_graph *g, vkf_value v, const char *name);

#endif
