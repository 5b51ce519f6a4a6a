/* The regular expressions of tokenizer.json (Split pre-tokenizers, Replace normalizers and
 * decoders) through Oniguruma, the engine the tokenizers library runs them with (its SysRegex is
 * the onig crate): compiled as onig::Regex::new compiles them (UTF-8, the default syntax, no
 * options), searched as the crate's find_iter walks a text, and cut into pieces as
 * Pattern::find_matches does. Every search is bounded by retry limits, so a pattern that
 * backtracks catastrophically is an error naming it, never a hang. */
#ifndef VKF_MODELS_TEXT_REGEX_H
#define VKF_MODELS_TEXT_REGEX_H

#include <stddef.h>

#include "graph/base/status.h"

typedef struct vkf_regex vkf_regex;

/* One piece of a text: [start, end) in bytes, and whether the pattern matched it. */
typedef struct vkf_regex_piece {
  size_t start, end;
  int match;
} vkf_regex_piece;

/* Compiles `pattern` (UTF-8). `where` names it in errors ("tokenizer.json: pre_tokenizer Split"). */
vkf_status vkf_regex_compile(const char *pattern, const char *where, vkf_regex **out);
void vkf_regex_free(vkf_regex *re);

/* Pattern::find_matches of tokenizers for the regex over s[0..n) (valid UTF-8): the matches in
 * order (empty ones included), with the text between them as non-matching pieces; an empty text
 * is one empty non-matching piece. *out (malloc'd, at most 2n + 2 pieces) is freed by the caller.
 * Returns VKF_OK, or an error naming the pattern when a search passes its retry limit. */
vkf_status vkf_regex_find_matches(const vkf_regex *re, const char *s, size_t n,
                                  vkf_regex_piece **out, size_t *count);

#endif
