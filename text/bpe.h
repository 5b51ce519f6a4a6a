/* BPE tokenizers read from Hugging Face tokenizer.json: byte-level (GPT-2, Llama-3, Qwen2) and
 * SentencePiece-style with byte fallback (Llama-2, Mistral); added tokens, the post-processor's
 * special tokens, and decoding ids back to UTF-8 text. */
#ifndef VKF_MODELS_BPE_H
#define VKF_MODELS_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct vkf_bpe vkf_bpe;

/* Loads the tokenizer.json at `path`. When its model is not BPE, returns OK with *out_bpe NULL and
 * the model's "type" in out_model_type (so a caller can fall back to another tokenizer); otherwise
 * *out_bpe is a new immutable tokenizer (usable from several threads) the caller destroys.
 * Errors: NOT_FOUND/IO for the file; PARSE naming the field for malformed JSON, vocab or merges;
 * UNSUPPORTED quoting the type (or the regex) of a normalizer, pre-tokenizer, decoder or
 * post-processor this code does not reproduce. */
vkf_status vkf_bpe_load(const char *path, vkf_bpe **out_bpe, char out_model_type[32]);
/* The same from a parsed tokenizer.json document; `path` names it in messages (vkf_bpe_load_files
 * builds one from vocab.json + merges.txt). */
typedef struct cJSON cJSON;
vkf_status vkf_bpe_from_json(const cJSON *root, const char *path, vkf_bpe **out_bpe,
                             char out_model_type[32]);
/* BartTokenizer / RobertaTokenizer / GPT2Tokenizer files without tokenizer.json: `dir`/vocab.json
 * and merges.txt (its first line skipped and its last dropped, as the slow tokenizers read it),
 * with tokenizer_config.json's added_tokens_decoder (or the <s> <pad> </s> <unk> <mask> defaults,
 * <mask> taking the space before it) matched first, GPT-2's byte-level pre-tokenization without a
 * prefix space, cls_token ... sep_token around the sequence, and byte-level decoding. Errors:
 * NOT_FOUND naming a missing file; PARSE naming the file and entry for malformed content. */
vkf_status vkf_bpe_load_files(const char *dir, vkf_bpe **out_bpe);
void vkf_bpe_destroy(vkf_bpe *bpe);

size_t vkf_bpe_vocab_count(const vkf_bpe *bpe); /* largest id + 1 */
/* The vocabulary (or added-token) string of `id`, NUL-terminated and owned by the tokenizer; NULL
 * when no token has this id. */
const char *vkf_bpe_id_to_token(const vkf_bpe *bpe, int32_t id);
int32_t vkf_bpe_token_to_id(const vkf_bpe *bpe, const char *token); /* -1 when absent */
int32_t vkf_bpe_bos_id(const vkf_bpe *bpe); /* the template's first special token, or -1 */
int32_t vkf_bpe_eos_id(const vkf_bpe *bpe); /* the template's last special token, or -1 */
int vkf_bpe_is_special(const vkf_bpe *bpe, int32_t id);
int vkf_bpe_is_unigram(const vkf_bpe *bpe); /* a Unigram model (T5) rather than BPE */
/* model.type of the tokenizer.json: "BPE", "Unigram", "WordPiece" or "WordLevel". */
const char *vkf_bpe_model_name(const vkf_bpe *bpe);

/* Encodes `size` bytes of UTF-8 `text` as Hugging Face's tokenizer.encode(text,
 * add_special_tokens) does, with no truncation. *out_ids is a new array the caller frees.
 * A character with no token, no byte fallback and no unk token is dropped, as Hugging Face does.
 * Errors: INVALID_ARGUMENT naming the byte offset of invalid UTF-8. */
vkf_status vkf_bpe_encode(const vkf_bpe *bpe, const char *text, size_t size, int add_special,
                          int32_t **out_ids, size_t *out_count);

/* Decodes ids through the tokenizer's decoder, as tokenizer.decode(ids, skip_special_tokens).
 * *out_text is a new NUL-terminated UTF-8 string of *out_size bytes the caller frees. With
 * `hold_tail`, bytes at the end whose text more ids may change (an incomplete UTF-8 sequence, or a
 * trailing run of byte-fallback tokens, decoded only as a whole) are kept as raw bytes and
 * *out_held_from gives where they start (== *out_size when none); without it they become U+FFFD as
 * in Hugging Face. Errors: INVALID_ARGUMENT naming an id that is negative or past the vocabulary. */
vkf_status vkf_bpe_decode(const vkf_bpe *bpe, const int32_t *ids, size_t count, int skip_special,
                          int hold_tail, char **out_text, size_t *out_size, size_t *out_held_from);

#endif
