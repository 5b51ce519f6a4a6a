/* One tokenizer interface for the CLI and generation: a checkpoint folder's tokenizer.json (BPE:
 * GPT-2, Llama, Qwen2, Mistral, BART; Unigram: T5), Marian's source.spm/target.spm/vocab.json, the
 * slow byte-level BPE files vocab.json + merges.txt (BART), or vocab.txt (WordPiece, BERT), with
 * encode, decode and a streaming decoder that only ever returns complete UTF-8. */
#ifndef VKF_MODELS_TEXT_TOKENIZER_H
#define VKF_MODELS_TEXT_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct vkf_text_tokenizer vkf_text_tokenizer;

/* Loads, by the first file present: `model_dir`/tokenizer.json when its model is BPE or Unigram
 * (a WordPiece or other tokenizer.json falls back to vocab.txt when that is there); source.spm
 * (MarianTokenizer, see marian.h); vocab.json or merges.txt (BartTokenizer's files, bpe.h);
 * vocab.txt (WordPiece, wordpiece.h). tokenizer_config.json's clean_up_tokenization_spaces, when
 * true, applies transformers' clean-up to decoded text (all but WordPiece, which always does).
 * Errors: NOT_FOUND naming the files looked for when none exists; UNSUPPORTED naming the model
 * type of another tokenizer.json without a vocab.txt; the loaders' errors otherwise. *out_tok is
 * immutable and may be shared between threads. */
vkf_status vkf_text_tokenizer_load(const char *model_dir, vkf_text_tokenizer **out_tok);
void vkf_text_tokenizer_destroy(vkf_text_tokenizer *tok);

/* "BPE", "Unigram", "Marian" or "WordPiece" */
const char *vkf_text_tokenizer_kind(const vkf_text_tokenizer *tok);
size_t vkf_text_tokenizer_vocab_count(const vkf_text_tokenizer *tok);  /* largest id + 1 */
int32_t vkf_text_tokenizer_bos_id(const vkf_text_tokenizer *tok);      /* -1 when unknown */
int32_t vkf_text_tokenizer_eos_id(const vkf_text_tokenizer *tok);      /* -1 when unknown */
/* The vocabulary string of `id` (e.g. "Ġthe", "▁the", "##ing"), owned by the tokenizer; NULL when
 * out of range. */
const char *vkf_text_tokenizer_id_to_token(const vkf_text_tokenizer *tok, int32_t id);

/* The ids of NUL-terminated UTF-8 `text`, as Hugging Face's tokenizer(text, add_special_tokens)
 * ["input_ids"], without truncation. *out_ids is a new array the caller frees. Errors:
 * INVALID_ARGUMENT naming the offset of invalid UTF-8. */
vkf_status vkf_text_tokenizer_encode(const vkf_text_tokenizer *tok, const char *text,
                                     int add_special, int32_t **out_ids, size_t *out_count);

/* The text of `ids` as tokenizer.decode(ids, skip_special_tokens); *out_text is a new
 * NUL-terminated string the caller frees. Errors: INVALID_ARGUMENT naming an id outside the
 * vocabulary. */
vkf_status vkf_text_tokenizer_decode(const vkf_text_tokenizer *tok, const int32_t *ids,
                                     size_t count, int skip_special, char **out_text);

/* Streaming decoder for one generated sequence: push ids one at a time; each push returns the
 * text they complete. Bytes of a character still incomplete (a byte-level token ending inside a
 * UTF-8 sequence) are held until it completes; a run of byte-fallback <0xNN> tokens is held until
 * a token that is not a byte ends it, since Hugging Face turns a whole run into U+FFFDs when any
 * byte of it is invalid. The concatenated outputs plus flush() equal decode() of all ids. Not thread-safe; the tokenizer must outlive it. */
typedef struct vkf_text_decoder vkf_text_decoder;
vkf_status vkf_text_decoder_create(const vkf_text_tokenizer *tok, int skip_special,
                                   vkf_text_decoder **out_dec);
/* *out_text (owned by the decoder, valid until its next call) receives *out_size new bytes,
 * possibly none. Errors as decode, for `id` alone; the decoder is unchanged then. */
vkf_status vkf_text_decoder_push(vkf_text_decoder *dec, int32_t id, const char **out_text,
                                 size_t *out_size);
/* The held bytes at the end of the sequence, as decode() gives them (U+FFFD for invalid ones);
 * the decoder is then empty, ready for a new sequence. */
vkf_status vkf_text_decoder_flush(vkf_text_decoder *dec, const char **out_text, size_t *out_size);
void vkf_text_decoder_destroy(vkf_text_decoder *dec);

#endif
