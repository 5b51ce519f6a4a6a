/* One model interface over every supported architecture: a registry maps config.json's
 * "architectures" / "model_type" to a loader and builder, and each model declares its named inputs
 * and outputs with Hugging Face's names (input_ids, attention_mask, token_type_ids, pixel_values;
 * last_hidden_state, pooler_output, logits, ...). No device here: the caller runs the graph. */
#ifndef VKF_MODELS_REGISTRY_MODEL_H
#define VKF_MODELS_REGISTRY_MODEL_H

#include <stdint.h>

#include "graph/ir/graph.h"

enum { VKF_MODEL_MAX_IO = 8 };

/* One named input or output as the caller sees it (host arrays, batch first). */
typedef struct vkf_model_io {
  const char *name;
  vkf_dtype dtype; /* VKF_I32 (ids, masks; int64 host data is accepted by the checks) or VKF_F32 */
  uint32_t rank;
  /* -1 marks a dim the caller chooses: the batch (dim 0) and, for text, the sequence (dim 1), which
   * all inputs must share; other dims are fixed by the checkpoint. */
  int64_t shape[VKF_MAX_DIMS];
  int64_t max_seq;     /* largest sequence length the checkpoint has positions for (0: not text) */
  int64_t exact_seq;   /* text inputs whose length the checkpoint fixes (Nyströmformer's segments
                          when landmarks are fewer than them); 0: any length up to max_seq. For
                          listings: the build checks it with its own message */
  int required;        /* inputs: must be given; absent optional ones are filled with `fill` */
  int32_t fill;        /* attention_mask 1, token_type_ids 0 */
  const char *fill_note; /* a default that is not one value, in words (NULL: `fill`) */
  int64_t value_bound; /* integer inputs: every value must lie in [0, value_bound) (0: unchecked) */
  /* Encoder–decoders: 1 when dim 1 is the decoder's (target) sequence (inputs and outputs), shared
   * by the target inputs and independent of the source's; an absent optional target input (decoder_input_ids) means
   * "run the encoder alone" and is not filled. */
  int target;
  /* Outputs only: dims 0 and 1 are the sequence and the batch, as the module returns them (the
   * D2L's encoder outputs [S, B, H]). The graph computes it batch first; vkf_rt_forward swaps the
   * two dims after the run. */
  int time_major;
  /* Memory I/O (Transformer-XL's mems [n_layer, M, batch, d_model]): `batch_dim` is the dim that
   * holds the batch when it is not dim 0, and with `memory` dim 1 is the memory length M: any
   * M >= 0 (0 rows: an empty memory), shared by the memory inputs, independent of the sequence;
   * an absent memory input is `memory_default` rows of `fill`. The graph sees these arrays batch
   * first (the batch dim moved to the front, the others in order), and vkf_rt_forward moves it;
   * an output's memory length is the one its build gives (the graph output's shape). */
  uint32_t batch_dim;
  int memory;
  int64_t memory_default;
} vkf_model_io;

typedef struct vkf_model vkf_model;

/* Reads DIR/config.json, picks the architecture (the first of "architectures" that is registered,
 * else "model_type"), and loads the checkpoint with that architecture's loader. Errors name the
 * directory and the file, field or tensor at fault; an unknown architecture is UNSUPPORTED and
 * lists the supported ones. The model is not thread-safe (builds cache converted weights). */
vkf_status vkf_model_open(const char *model_dir, vkf_model **out_model);
void vkf_model_close(vkf_model *model);
/* `--quantize FORMAT`: the linear weights of every build that follows are quantised into ggml's
 * blocks as llama-quantize does without an importance matrix ("q8_0", "q4_0", "q4_1", "q5_0",
 * "q5_1", "q4_k"; "none" keeps the file's dtypes). Embeddings, norms, biases and heads that are
 * not linear layers keep theirs. An unknown name is UNSUPPORTED listing the allowed ones. */
vkf_status vkf_model_quantize(vkf_model *model, const char *format);
/* What `--quantize` made in the builds so far (it quantises as they read the weights, so ask after
 * one): out[d] linear weights became blocks of dtype d (a "q4_k" weight whose rows are not whole
 * 256-blocks is counted under VKF_Q5_0, llama-quantize's fallback), *kept_float stayed float
 * (rows not whole 32-blocks); all 0 without --quantize. */
void vkf_model_quantized(const vkf_model *model, uint32_t out[VKF_DTYPE_COUNT],
                         uint32_t *kept_float);

const char *vkf_model_dir(const vkf_model *model);
/* The Hugging Face class the checkpoint is, e.g. "ViTForImageClassification", "BertModel". */
const char *vkf_model_architecture(const vkf_model *model);
/* The registry entry's name ("vit", "bert"), for listings and messages: what a model can do is
 * its facets (below), never a comparison of this name. */
const char *vkf_model_family(const vkf_model *model);

uint32_t vkf_model_input_count(const vkf_model *model);
const vkf_model_io *vkf_model_input(const vkf_model *model, uint32_t index);
uint32_t vkf_model_output_count(const vkf_model *model);
const vkf_model_io *vkf_model_output(const vkf_model *model, uint32_t index);
/* Index of the input / output called `name`, or -1. */
int vkf_model_find_input(const vkf_model *model, const char *name);
int vkf_model_find_output(const vkf_model *model, const char *name);

/* A host array given for a named input. `dtype` VKF_I32 or VKF_F32, or VKF_DTYPE_COUNT for int64
 * data (as numpy saves ids); data is row-major. */
typedef struct vkf_model_array {
  const char *name;
  vkf_dtype dtype;
  int int64; /* data holds int64 values (dtype is then VKF_I32) */
  uint32_t rank;
  int64_t shape[VKF_MAX_DIMS];
  const void *data;
} vkf_model_array;

/* Checks a set of inputs against the declaration: every name known and given once, every required
 * input present, dtype and rank right, fixed dims equal, batch and sequence dims shared by all and
 * within max_seq, integer values inside [0, value_bound). On success *out_batch and *out_seq_len
 * (0 for models without a sequence) are what vkf_model_build needs, and *out_target_len (may be
 * NULL) the target inputs' sequence length (0 when none is given). One-line errors name the input,
 * the dim or the first bad value and its position. */
vkf_status vkf_model_check_inputs(const vkf_model *model, const vkf_model_array *inputs,
                                  uint32_t count, int64_t *out_batch, int64_t *out_seq_len,
                                  int64_t *out_target_len);

/* Rows of memory the checked `inputs` give (vkf_model_io.memory): the given memory input's dim 1,
 * else the absent one's memory_default; 0 for models without memory. */
int64_t vkf_model_memory_len(const vkf_model *model, const vkf_model_array *inputs,
                             uint32_t count);

/* Inputs an architecture derives on the host from the values of the declared ones, because they
 * change what the graph is (Longformer: RoBERTa position ids, where the global tokens are, which
 * output rows their global attention replaces). They follow the declared inputs in
 * vkf_model_graph.inputs, each batch-first, so that a batch split into runs slices them as it
 * slices the declared inputs; `build_param` is what the graph's shapes take from the values
 * (Longformer: the most global tokens in a row of the whole batch, so every run has one shape). */
enum { VKF_MODEL_MAX_DERIVED = 4 };
typedef struct vkf_model_derived {
  int64_t build_param;
  uint32_t count;
  void *data[VKF_MODEL_MAX_DERIVED]; /* whole batch, row-major i32 / f32, owned */
  size_t size[VKF_MODEL_MAX_DERIVED]; /* bytes */
} vkf_model_derived;

/* Derives them from the whole batch: inputs[i] is declared input i's data (int32, `batch` rows of
 * `seq_len`), or NULL for an optional input the caller did not give, whose default is then the
 * architecture's (LongformerForSequenceClassification's global_attention_mask puts the first
 * token global, as Hugging Face does when it is None). Models without derived inputs give count
 * 0. *out is zeroed first; release with vkf_model_derived_release. */
vkf_status vkf_model_derive(const vkf_model *model, const int32_t *const *inputs, int64_t batch,
                            int64_t seq_len, vkf_model_derived *out);
void vkf_model_derived_release(vkf_model_derived *derived);

typedef struct vkf_model_build_options {
  int64_t batch;   /* 0: 1 */
  int64_t seq_len; /* text models: tokens per sequence; 0: 128 (clamped to the model's maximum) */
  int64_t target_len; /* encoder–decoders: decoder tokens per sequence; 0: the encoder alone */
  int64_t memory_len; /* rows of the memory inputs (vkf_model_memory_len; 0: none) */
  vkf_dtype dtype; /* VKF_F32 (default) or VKF_F16: weights and activations; I/O stays f32/i32 */
  const char *const *outputs; /* names of the outputs to compute; NULL: every declared output */
  uint32_t output_count;
  /* vkf_model_derive's result for the inputs this build will run; NULL (a probe without data, a
   * dump) builds as for inputs without any data-dependent feature (Longformer: no global token).
   * The derived inputs are in the graph either way. */
  const vkf_model_derived *derived;
  /* Hugging Face's output_attentions: when non-NULL (vkf_model_attention_layers entries),
   * attentions[l] is layer l's softmax probabilities, f32 [B, H, N, N], a graph output
   * "attentions.l", beside the declared outputs; those layers' attention is built unfused (matmul,
   * masked softmax, matmul) so the probabilities exist. An architecture without them refuses it
   * (UNSUPPORTED). NULL: the usual build. */
  vkf_value *attentions;
} vkf_model_build_options;

/* The graph of one build: inputs[i] / outputs[i] follow the declaration's order; an output not
 * asked for is VKF_NO_VALUE. Inputs are i32 or f32 graph inputs of the declared shape with the
 * batch and sequence dims resolved. */
typedef struct vkf_model_graph {
  vkf_graph *graph; /* owned by the caller: vkf_graph_destroy; the model must outlive it */
  uint32_t input_count; /* the declared inputs, then the derived ones */
  vkf_value inputs[VKF_MODEL_MAX_IO];
  vkf_value outputs[VKF_MODEL_MAX_IO];
} vkf_model_graph;

/* Builds the forward pass with Hugging Face's semantics for every declared input (e.g. any
 * attention_mask pattern). An unknown output name is NOT_FOUND naming it and listing the declared
 * ones. *out is zeroed first. */
vkf_status vkf_model_build(vkf_model *model, const vkf_model_build_options *options,
                           vkf_model_graph *out);

/* Layers whose attention probabilities a build can output (vkf_model_build_options.attentions):
 * the encoder's layer count for ViT, DeiT and BERT; 0 for architectures that cannot. */
int64_t vkf_model_attention_layers(const vkf_model *model);

/* ---- What a model can do: the facets its registry entry declares. The API, the CLI, the server
 * and the runtime ask these; the architecture object is handed over by a facet, typed by the
 * runtime part that runs it (an engine, the embedder), never cast out of the model. ---- */
typedef enum vkf_model_task {
  VKF_TASK_FORWARD = 1 << 0,    /* vkf_model_build over the declared inputs and outputs: all */
  VKF_TASK_TOKENIZE = 1 << 1,   /* its inputs are a text tokenizer's ids (text_tokenizer.h) */
  VKF_TASK_EMBED = 1 << 2,      /* sentence embeddings: vkf_model_embed_facet */
  VKF_TASK_CLASSIFY = 1 << 3,   /* labelled image classification: vkf_model_classify_facet */
  VKF_TASK_GENERATE = 1 << 4,   /* token generation: vkf_model_generate_facet */
  VKF_TASK_CHAT = 1 << 5,       /* generation through the tokenizer's chat template */
  VKF_TASK_ATTENTIONS = 1 << 6, /* attention maps: vkf_model_attention_maps */
  VKF_TASK_ALL = (1 << 7) - 1,
} vkf_model_task;
/* The tasks this checkpoint can do (a family's facet that this checkpoint lacks, such as a
 * generator without a language-model head, is not set). */
unsigned vkf_model_tasks(const vkf_model *model);
/* "forward", "tokenize", "embed", "classify", "generate", "chat", "attentions" (one bit). */
const char *vkf_model_task_name(unsigned task);

/* The generation engines of runtime/gen_backend.h, one per way of stepping a model. */
typedef enum vkf_gen_engine_kind {
  VKF_GEN_ENGINE_NONE,
  VKF_GEN_ENGINE_DECODER,    /* decoder-only LMs with a KV cache (runtime/generate_engine.h) */
  VKF_GEN_ENGINE_SEQ2SEQ,    /* Transformer encoder–decoders (runtime/seq2seq_engine.h) */
  VKF_GEN_ENGINE_BAHDANAU,   /* the GRU encoder–decoder with additive attention */
  VKF_GEN_ENGINE_TRANSFO_XL, /* Transformer-XL's memory (runtime/transfo_xl_engine.h) */
  VKF_GEN_ENGINE_REFORMER,   /* Reformer's recomputed rows (runtime/reformer_engine.h) */
  VKF_GEN_ENGINE_COUNT,
} vkf_gen_engine_kind;

typedef struct vkf_model_generate {
  vkf_gen_engine_kind engine;
  void *engine_model;   /* what the engine opens: the architecture's own model object */
  int64_t vocab;        /* logits per step */
  int64_t prompt_vocab; /* ids a prompt may hold (an encoder–decoder's: its source vocabulary) */
  int64_t max_ctx;      /* the most decoder positions the engine runs */
  int64_t config_ctx;   /* config.json's max_position_embeddings (0: none): the default context */
  /* Encoder–decoders: the longest source; the prompt is the source and the decoder starts from
   * decoder_start_id (else bos_id). 0: the prompt is the decoder's own. */
  int64_t max_source;
  int64_t decoder_start_id, bos_id, pad_id; /* config.json's (-1: none) */
  int text_prompts;     /* a text prompt goes through the checkpoint's tokenizer */
  int continuous;       /* rows join and leave between steps (runtime/serve_slots.h) */
} vkf_model_generate;
/* UNSUPPORTED naming why when the model does not generate (not a language model, or one without
 * a language-model head). */
vkf_status vkf_model_generate_facet(const vkf_model *model, vkf_model_generate *out);

/* Chat (runtime/chat_session.h): the generate facet of a model whose prompts a chat template
 * writes; UNSUPPORTED naming why otherwise. */
vkf_status vkf_model_chat_facet(const vkf_model *model, vkf_model_generate *out);

/* Sentence embeddings (runtime/text_embed.h): the encoder and how its tokens are pooled. */
typedef enum vkf_embed_pooling { VKF_POOL_MEAN = 1, VKF_POOL_CLS } vkf_embed_pooling;
typedef struct vkf_model_embed {
  void *encoder;       /* the BERT encoder of sentence-transformers' pipeline (runtime/text_embed.h's
                          vkf_rt_embed); NULL: the forward pass's last_hidden_state, pooled
                          (vkf_rt_embed_pooled) */
  vkf_embed_pooling pooling;
  int64_t dims;        /* floats per embedding */
} vkf_model_embed;
vkf_status vkf_model_embed_facet(const vkf_model *model, vkf_model_embed *out);

/* Labelled image classification (models/arch/vit_classify.h). */
typedef struct vkf_model_classify {
  const void *classifier; /* the ViT with its head */
  int64_t labels;
} vkf_model_classify;
vkf_status vkf_model_classify_facet(const vkf_model *model, vkf_model_classify *out);

/* Attention maps: per-layer self-attention probabilities from the build
 * (vkf_model_attention_layers), or an additive attention's weights over the source read from its
 * generation engine (the Bahdanau encoder–decoder; `additive` is its model). */
typedef struct vkf_model_attention_maps {
  int64_t layers;   /* self-attention layers the build outputs (0: none) */
  void *image;      /* over an image's patches: the ViT whose processor reads it (vit.h); NULL:
                       over tokens */
  void *additive;   /* the additive-attention model, else NULL */
} vkf_model_attention_maps;
vkf_status vkf_model_attention_maps_facet(const vkf_model *model, vkf_model_attention_maps *out);

/* Names of every registered architecture, comma separated (for messages and --help). */
const char *vkf_model_supported(void);

#endif
