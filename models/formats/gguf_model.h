/* A GGUF file seen as a Hugging Face model folder: its metadata as config.json, tokenizer.json
 * and tokenizer_config.json text, and its tensors under Hugging Face's names as a checkpoint, so
 * every architecture, tokenizer and generation path reads a .gguf through the same parsers and
 * checks as a folder. The mapping follows llama.cpp's (tensor names, the Q/K row permutation its
 * converter applies, the tokenizer's pre-tokenizer types) and transformers' GGUF loader (the
 * config keys, tie_word_embeddings when output.weight is absent). */
#ifndef VKF_MODELS_GGUF_MODEL_H
#define VKF_MODELS_GGUF_MODEL_H

#include <stddef.h>

#include "graph/base/status.h"
#include "models/formats/checkpoint.h"
#include "models/formats/gguf.h"

/* Architectures read from GGUF (general.architecture). */
#define VKF_GGUF_ARCHITECTURES "llama, qwen2, gpt2"

/* The text of file `name` of the folder the GGUF stands for: "config.json",
 * "tokenizer.json", "tokenizer_config.json" (chat_template, bos/eos/pad tokens, add_bos_token).
 * NOT_FOUND for any other name (generation_config.json: generation reads config.json then, as for a
 * folder without one). UNSUPPORTED naming the architecture, tokenizer model or pre-tokenizer type
 * the mapping does not know. *out_text is malloc'd and NUL-terminated. */
vkf_status vkf_gguf_model_file(const vkf_gguf *g, const char *name, char **out_text,
                               size_t *out_size);

/* The tensors under Hugging Face's names, dequantised to F32 (F16 and BF16 tensors stay as they
 * are), Q and K rows un-permuted, as one in-memory checkpoint whose path is the GGUF's. */
vkf_status vkf_gguf_model_checkpoint(const vkf_gguf *g, vkf_checkpoint **out_checkpoint);

/* For callers holding a path: whether `path` is a GGUF file, and the two calls above on it. */
vkf_status vkf_gguf_model_file_at(const char *path, const char *name, char **out_text,
                                  size_t *out_size);
vkf_status vkf_gguf_model_checkpoint_at(const char *path, vkf_checkpoint **out_checkpoint);

#endif
