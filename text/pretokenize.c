/* Hand-written matchers for the GPT-2, Llama-3 and Qwen2 pre-tokenizer regexes: each alternative in
 * the regex's order, so the first that matches wins as in a backtracking engine. */
#include "text/pretokenize.h"

#include <string.h>

#include "text/unicode.h"

#define GPT2_SOURCE "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
#define LLAMA3_HEAD "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
#define LLAMA3_TAIL "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

vkf_pretok_pattern vkf_pretok_pattern_of(const char *regex) {
  if (!strcmp(regex, GPT2_SOURCE)) return VKF_PRETOK_GPT2;
  if (!strcmp(regex, LLAMA3_HEAD "\\p{N}{1,3}" LLAMA3_TAIL)) return VKF_PRETOK_LLAMA3;
  if (!strcmp(regex, LLAMA3_HEAD "\\p{N}" LLAMA3_TAIL)) return VKF_PRETOK_QWEN2;
  return VKF_PRETOK_NONE;
}

static int is_letter(uint32_t cp) { return (vkf_unicode_props(cp) & VKF_UNICODE_LETTER) != 0; }
static int is_number(uint32_t cp) { return (vkf_unicode_props(cp) & VKF_UNICODE_NUMBER) != 0; }
static int is_space(uint32_t cp) { return (vkf_unicode_props(cp) & VKF_UNICODE_WHITE_SPACE) != 0; }
static int is_other(uint32_t cp) { return !(vkf_unicode_props(cp) &
                                            (VKF_UNICODE_LETTER | VKF_UNICODE_NUMBER |
                                             VKF_UNICODE_WHITE_SPACE)); }
static int is_newline(uint32_t cp) { return cp == '\r' || cp == '\n'; }

static uint32_t fold(uint32_t cp) { return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp; }

/* 's|'t|'re|'ve|'m|'ll|'d at cps[i] (case-insensitively for Llama-3's (?i:...)): its length or 0. */
static size_t contraction(const uint32_t *cps, size_t n, size_t i, int fold_case) {
  if (cps[i] != '\'' || i + 1 >= n) return 0;
  uint32_t a = fold_case ? fold(cps[i + 1]) : cps[i + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 >= n) return 0;
  uint32_t b = fold_case ? fold(cps[i + 2]) : cps[i + 2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

static size_t run_of(int (*in)(uint32_t), const uint32_t *cps, size_t n, size_t i) {
  while (i < n && in(cps[i])) i++;
  return i;
}

/* \s+(?!\S)|\s+ at a whitespace character: a run followed by non-space gives back its last
 * character (so " word" keeps its space), unless that would leave nothing. */
static size_t space_run(const uint32_t *cps, size_t n, size_t i) {
  size_t j = run_of(is_space, cps, n, i);
  return (j < n && j - i > 1) ? j - 1 : j;
}

static size_t match_gpt2(const uint32_t *cps, size_t n, size_t i) {
  size_t k = contraction(cps, n, i, 0);
  if (k) return i + k;
  size_t s = (cps[i] == ' ' && i + 1 < n) ? i + 1 : i; /* the optional leading " " */
  if (is_letter(cps[s])) return run_of(is_letter, cps, n, s);
  if (is_number(cps[s])) return run_of(is_number, cps, n, s);
  if (is_other(cps[s])) return run_of(is_other, cps, n, s);
  if (is_space(cps[i])) return space_run(cps, n, i);
  return i;
}

static size_t match_llama3(const uint32_t *cps, size_t n, size_t i, size_t max_digits) {
  size_t k = contraction(cps, n, i, 1);
  if (k) return i + k;
  uint32_t c = cps[i];
  /* [^\r\n\p{L}\p{N}]?\p{L}+ */
  if (!is_newline(c) && !is_letter(c) && !is_number(c) && i + 1 < n && is_letter(cps[i + 1]))
    return run_of(is_letter, cps, n, i + 1);
  if (is_letter(c)) return run_of(is_letter, cps, n, i);
  if (is_number(c)) { /* \p{N}{1,3} or \p{N} */
    size_t j = i;
    while (j < n && j - i < max_digits && is_number(cps[j])) j++;
    return j;
  }
  /* ?[^\s\p{L}\p{N}]+[\r\n]* */
  size_t s = (c == ' ' && i + 1 < n) ? i + 1 : i;
  if (is_other(cps[s])) return run_of(is_newline, cps, n, run_of(is_other, cps, n, s));
  if (is_space(c)) {
    /* \s*[\r\n]+: the whitespace run up to and including its last newline */
    size_t j = run_of(is_space, cps, n, i), last = j;
    for (size_t p = i; p < j; p++)
      if (is_newline(cps[p])) last = p;
    if (last < j) return last + 1;
    return space_run(cps, n, i);
  }
  return i;
}

size_t vkf_pretok_match(vkf_pretok_pattern pattern, const uint32_t *cps, size_t count, size_t start) {
  switch (pattern) {
    case VKF_PRETOK_GPT2: return match_gpt2(cps, count, start);
    case VKF_PRETOK_LLAMA3: return match_llama3(cps, count, start, 3);
    case VKF_PRETOK_QWEN2: return match_llama3(cps, count, start, 1);
    default: return start;
  }
}
