/* Unicode for the tokenizers: strict UTF-8 decoding/encoding, the character properties,
 * lower-casing and canonical decomposition that BertTokenizer uses, canonical composition (NFC),
 * and the classes the BPE patterns use (generated from Python's unicodedata by
 * tools/gen_unicode_tables.py into models/text/unicode_tables.c). */
#ifndef VKF_MODELS_UNICODE_H
#define VKF_MODELS_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* Property bits; tools/gen_unicode_tables.py writes the same values. */
enum {
  VKF_UNICODE_REMOVE = 1u << 0, /* dropped when cleaning: U+0000, U+FFFD, category C* but Cn
                                   (unassigned, kept as the fast tokenizer keeps it) and \t\n\r */
  VKF_UNICODE_SPACE = 1u << 1,  /* ' ', \t, \n, \r or category Zs: cleaned to ' ' */
  VKF_UNICODE_SPLIT = 1u << 2,  /* other separators Python's str.split() honours (U+2028/9) */
  VKF_UNICODE_PUNCT = 1u << 3,  /* ASCII non-alphanumeric or category P* */
  VKF_UNICODE_MN = 1u << 4,     /* non-spacing mark: removed by accent stripping */
  /* bits 5 and 6: unused */
  VKF_UNICODE_CJK = 1u << 7,       /* a CJK ideograph as BERT defines it: a token of its own */
  /* bits 8..15: canonical combining class */
  VKF_UNICODE_LETTER = 1u << 16,      /* general category L*: the patterns' \p{L} */
  VKF_UNICODE_NUMBER = 1u << 17,      /* general category N*: \p{N} */
  VKF_UNICODE_WHITE_SPACE = 1u << 18, /* White_Space: the patterns' \s, Rust's char::is_whitespace */
};
#define VKF_UNICODE_CCC_SHIFT 8 /* canonical combining class in bits 8..15 of the properties */

/* From `start` up to the next run's start, every code point has properties `props`. */
typedef struct vkf_unicode_run {
  uint32_t start;
  uint32_t props;
} vkf_unicode_run;

/* One code point mapped to 1..4 code points (lower-case form or full canonical decomposition). */
typedef struct vkf_unicode_map {
  uint32_t cp;
  uint32_t count;
  uint32_t out[4];
} vkf_unicode_map;

/* A canonical composition: `first` followed by `second` composes to `composite`. */
typedef struct vkf_unicode_pair {
  uint32_t first;
  uint32_t second;
  uint32_t composite;
} vkf_unicode_pair;

/* Code point `cp` maps to data[start .. start + count) of a flat table. */
typedef struct vkf_unicode_span {
  uint32_t cp;
  uint32_t start;
  uint32_t count;
} vkf_unicode_span;

#define VKF_UNICODE_MAX_DECOMP 18 /* longest full compatibility decomposition (U+FDFA) */

extern const char vkf_unicode_version[]; /* Unicode version of the tables, e.g. "14.0.0" */
extern const vkf_unicode_run vkf_unicode_runs[];
extern const size_t vkf_unicode_run_count;
extern const vkf_unicode_map
    vkf_unicode_lower[]; /* sorted by cp; code points whose lower() differs */
extern const size_t vkf_unicode_lower_count;
extern const vkf_unicode_map
    vkf_unicode_decomp[]; /* sorted by cp; Hangul syllables are algorithmic */
extern const size_t vkf_unicode_decomp_count;
extern const vkf_unicode_pair
    vkf_unicode_comp[]; /* sorted by (first, second); excludes the full composition exclusions */
extern const size_t vkf_unicode_comp_count;
extern const vkf_unicode_span
    vkf_unicode_compat[]; /* sorted by cp; NFKD where it differs from NFD, in _compat_data */
extern const size_t vkf_unicode_compat_count;
extern const uint32_t vkf_unicode_compat_data[];

/* Property bits of `cp` (<= 0x10FFFF). */
uint32_t vkf_unicode_props(uint32_t cp);
static inline uint32_t vkf_unicode_ccc(uint32_t props) {
  return (props >> VKF_UNICODE_CCC_SHIFT) & 0xFF;
}

/* Decodes one code point from `s[0..size)` (size >= 1). Returns the number of bytes used (1..4) and
 * sets *out_cp, or returns 0 when the bytes at `s` are not valid UTF-8 (overlong forms, surrogates,
 * values above U+10FFFF, truncated or stray continuation bytes are all invalid). */
size_t vkf_utf8_decode(const uint8_t *s, size_t size, uint32_t *out_cp);
/* Writes the UTF-8 form of `cp` to `out` (room for 4 bytes); returns its length. */
size_t vkf_utf8_encode(uint32_t cp, char *out);

/* Writes the lower-case form of `cp` alone (1..3 code points; no context rule: a capital sigma is
 * always σ, as Rust's char::to_lowercase in the tokenizers library) to `out`; returns the count. */
size_t vkf_unicode_lower_cp(uint32_t cp, uint32_t out[3]);
/* Writes the full canonical decomposition of `cp` (1..4 code points; Hangul: 2..3) to `out`. */
size_t vkf_unicode_decompose_cp(uint32_t cp, uint32_t out[4]);
/* Writes the full compatibility decomposition of `cp` (NFKD of the one character: 1 to
 * VKF_UNICODE_MAX_DECOMP code points) to `out`. */
size_t vkf_unicode_decompose_compat_cp(uint32_t cp, uint32_t out[VKF_UNICODE_MAX_DECOMP]);
/* Stable sort of each run of non-starters by combining class (the canonical ordering step of NFD).
 */
void vkf_unicode_canonical_order(uint32_t *cps, size_t count);
/* The primary composite of `first` followed by `second` (Hangul LV and LVT algorithmically), or 0
 * when the two do not compose. */
uint32_t vkf_unicode_compose_pair(uint32_t first, uint32_t second);
/* Canonical composition in place (the last step of NFC): `cps[0..count)` must be canonically
 * decomposed and ordered; each character not blocked from the last starter is composed with it.
 * Returns the new count (<= count). */
size_t vkf_unicode_compose(uint32_t *cps, size_t count);

#endif
