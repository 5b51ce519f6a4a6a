/* WordPiece tokenizer reproducing Hugging Face's (slow, Python) BertTokenizer for uncased models:
 * cleaning, lower-casing, accent stripping, whitespace/punctuation/CJK splits, greedy WordPiece,
 * [CLS]/[SEP], truncation, and padded batches with an attention mask. */
#ifndef VKF_TEXT_WORDPIECE_H
#define VKF_TEXT_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct vkf_wordpiece vkf_wordpiece;

/* Loads `model_dir`/vocab.txt (one token per line, id = line number) and, when present,
 * `model_dir`/tokenizer_config.json (do_lower_case, strip_accents, tokenize_chinese_chars,
 * model_max_length, and the unk/sep/pad/cls/mask token strings). Without a tokenizer_config.json
 * the defaults are BERT's: uncased, 512 tokens. Errors: VKF_STATUS_NOT_FOUND naming the vocab path
 * when it is missing, VKF_STATUS_PARSE for a malformed config or a vocab lacking a special token,
 * VKF_STATUS_UNSUPPORTED for cased or accent-keeping configs (do_lower_case, strip_accents or
 * do_basic_tokenize false), which this tokenizer does not reproduce. Special tokens may be strings
 * or {"content": ...} objects; model_max_length above 1e6 (HF's "no limit") means 512.
 * On success *out_tok is a new tokenizer owned by the caller; it is immutable and may be used from
 * several threads at once. */
vkf_status vkf_wordpiece_load(const char *model_dir, vkf_wordpiece **out_tok);
void vkf_wordpiece_destroy(vkf_wordpiece *tok);

/* The model's maximum sequence length in tokens, [CLS] and [SEP] included (model_max_length). */
size_t vkf_wordpiece_max_length(const vkf_wordpiece *tok);
size_t vkf_wordpiece_vocab_count(const vkf_wordpiece *tok);
int32_t vkf_wordpiece_pad_id(const vkf_wordpiece *tok);
/* Id of an exact vocabulary entry, or -1. */
int32_t vkf_wordpiece_token_to_id(const vkf_wordpiece *tok, const char *token);
/* The vocabulary entry for `id` (NUL-terminated, owned by the tokenizer), or NULL when out of
 * range. */
const char *vkf_wordpiece_id_to_token(const vkf_wordpiece *tok, int32_t id);

/* Encodes NUL-terminated UTF-8 `text` as [CLS] tokens... [SEP], the ids of tokenizer.encode(text,
 * truncation=True, max_length=max_len). `max_len` counts the special tokens; 0 means the model's
 * maximum, and larger values are clamped to it, since the model has no positions beyond it. Longer
 * texts are cut at the end, keeping [SEP] last. Special-token strings in the text ("[SEP]", ...)
 * map to their ids, as in Hugging Face. `out_ids` has room for the effective max_len entries;
 * *out_count receives the number written (>= 2). Errors: VKF_STATUS_INVALID_ARGUMENT for max_len ==
 * 1 or for text that is not valid UTF-8 (the message names the byte offset). */
vkf_status vkf_wordpiece_encode(const vkf_wordpiece *tok, const char *text, size_t max_len,
                                int32_t *out_ids, size_t *out_count);

/* Encodes the whole of `text` as [CLS] tokens... [SEP] without truncation, as Hugging Face's
 * tokenizer(text)["input_ids"] does (it only warns past model_max_length). *out_ids is a new array
 * of *out_count ids the caller frees. Errors as vkf_wordpiece_encode. */
vkf_status vkf_wordpiece_encode_all(const vkf_wordpiece *tok, const char *text,
                                    int32_t **out_ids, size_t *out_count);

/* Encodes `count` texts as one padded batch, like tokenizer(texts, padding=True, truncation=True,
 * max_length=max_len): every row is padded with [PAD] to *out_len, the longest row's length.
 * `out_ids` and `out_mask` are [count, *out_len] row-major on return (mask 1 for tokens, 0 for
 * padding) but must have room for count * effective max_len entries each. Fails as
 * vkf_wordpiece_encode does, naming the text's index. */
vkf_status vkf_wordpiece_encode_batch(const vkf_wordpiece *tok, const char *const *texts,
                                      size_t count, size_t max_len, int32_t *out_ids,
                                      int32_t *out_mask, size_t *out_len);

#endif
