/* Character classes of the tokenizers library's Whitespace pre-tokenizer and StripAccents
 * normalizer (unicode_word.c). */
#ifndef VKF_MODELS_UNICODE_WORD_H
#define VKF_MODELS_UNICODE_WORD_H

#include <stddef.h>
#include <stdint.h>

typedef struct vkf_unicode_range {
  uint32_t first, last; /* inclusive */
} vkf_unicode_range;

extern const vkf_unicode_range vkf_unicode_word_ranges[]; /* sorted, disjoint */
extern const size_t vkf_unicode_word_ranges_count;
extern const vkf_unicode_range vkf_unicode_mark_ranges[];
extern const size_t vkf_unicode_mark_ranges_count;

/* The regex crate's Unicode \w: Alphabetic, general category M*, Nd, Pc, Join_Control. */
int vkf_unicode_is_word(uint32_t cp);
/* General category M* (Mn, Mc, Me): unicode-normalization's is_combining_mark. */
int vkf_unicode_is_mark(uint32_t cp);

#endif
