/* The pre-tokenizer regexes of byte-level BPE tokenizers (GPT-2, Llama-3, Qwen2), as hand-written
 * matchers chosen by the exact pattern string of tokenizer.json: no general regex engine. */
#ifndef VKF_MODELS_PRETOKENIZE_H
#define VKF_MODELS_PRETOKENIZE_H

#include <stddef.h>
#include <stdint.h>

typedef enum vkf_pretok_pattern {
  VKF_PRETOK_NONE = 0, /* not a known pattern */
  VKF_PRETOK_GPT2,     /* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
  VKF_PRETOK_LLAMA3,   /* (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|... */
  VKF_PRETOK_QWEN2,    /* Llama-3's with \p{N} (one digit) in place of \p{N}{1,3} */
} vkf_pretok_pattern;

/* The pattern whose regex source is exactly `regex` (as stored in tokenizer.json), or
 * VKF_PRETOK_NONE. */
vkf_pretok_pattern vkf_pretok_pattern_of(const char *regex);

/* The end (exclusive) of the leftmost-first match of `pattern` starting at cps[start], start <
 * count, as the Oniguruma regex Hugging Face uses would find it; start when nothing matches there
 * (never for these patterns, which cover every character). */
size_t vkf_pretok_match(vkf_pretok_pattern pattern, const uint32_t *cps, size_t count, size_t start);

#endif
