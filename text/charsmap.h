/* SentencePiece's precompiled normaliser (`precompiled_charsmap`): a Darts-clone double-array trie
 * from UTF-8 sequences to offsets in a blob of NUL-terminated replacement strings. Serves both the
 * tokenizer.json "Precompiled" normalizer (Hugging Face's per-grapheme, first-match semantics) and
 * SentencePiece's own longest-prefix normalisation of .model files. */
#ifndef VKF_MODELS_TEXT_CHARSMAP_H
#define VKF_MODELS_TEXT_CHARSMAP_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct vkf_charsmap {
  uint32_t *units; /* the double array */
  size_t unit_count;
  char *normalized; /* replacement strings, NUL-terminated, with a NUL appended after the blob */
  size_t normalized_size;
} vkf_charsmap;

/* Parses the serialized form (uint32 trie size in bytes, little-endian, the trie, the strings).
 * An empty blob is a map with no entries. Errors: PARSE naming `where` for a truncated blob. */
vkf_status vkf_charsmap_parse(const uint8_t *blob, size_t size, const char *where,
                              vkf_charsmap *out);
/* The same from base64 text (tokenizer.json's "precompiled_charsmap"). */
vkf_status vkf_charsmap_parse_base64(const char *text, const char *where, vkf_charsmap *out);
void vkf_charsmap_free(vkf_charsmap *m);

/* The first (shortest, `longest` 0) or longest (`longest` 1) key that prefixes s[0..n): its
 * length in *out_len and its replacement (NUL-terminated, owned by the map). 0 when none. */
int vkf_charsmap_match(const vkf_charsmap *m, const char *s, size_t n, int longest, size_t *out_len,
                       const char **out_repl);

/* Hugging Face's Precompiled normalizer on valid UTF-8 s[0..n): each grapheme shorter than 6
 * bytes whose first prefix match exists is replaced whole by that match's string; otherwise each
 * of its characters is replaced by its own match or kept. *out is a new buffer (NULL on OOM). */
void vkf_charsmap_normalize_hf(const vkf_charsmap *m, const char *s, size_t n, char **out,
                               size_t *out_size);

/* Length in bytes of the extended grapheme cluster at s[0..n) (n > 0, valid UTF-8), following
 * UAX #29 for CR LF, controls, Hangul syllables, combining marks (non-zero combining class or
 * Mn), ZWJ and emoji modifiers, variation selectors and regional-indicator pairs. */
size_t vkf_grapheme_len(const char *s, size_t n);

#endif
