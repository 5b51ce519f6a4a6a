/* The splitting pre-tokenizers of the tokenizers library (BertPreTokenizer, Whitespace,
 * Punctuation, CharDelimiterSplit, Split with a String or a Regex pattern), as
 * NormalizedString::split does
 * them: the pattern cuts the word into pieces flagged match or not (Pattern::find_matches), the
 * behavior merges or removes pieces, and empty pieces are dropped. */
#include <stdlib.h>
#include <string.h>

#include "text/bpe_model.h"
#include "text/unicode.h"
#include "text/unicode_scripts.h"
#include "text/unicode_word.h"

typedef struct piece {
  size_t start, end;
  int match; /* find_matches' flag; after the behavior: removed */
} piece;
_Static_assert(sizeof(piece) == sizeof(vkf_regex_piece), "piece mirrors vkf_regex_piece");

/* char::is_ascii_punctuation || unicode_categories' is_punctuation: unicode.h's PUNCT is exactly
 * that but for ASCII, where it also holds controls and space. */
static int is_punct(uint32_t cp) {
  if (cp < 128) return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
                       (cp >= 123 && cp <= 126);
  return (vkf_unicode_props(cp) & VKF_UNICODE_PUNCT) != 0;
}
static int is_space(uint32_t cp) { return (vkf_unicode_props(cp) & VKF_UNICODE_WHITE_SPACE) != 0; }

static void add(piece *ps, size_t *count, size_t start, size_t end, int match) {
  if (*count && !match && !ps[*count - 1].match && ps[*count - 1].end == start) {
    ps[*count - 1].end = end; /* a run of characters that do not match is one piece */
    return;
  }
  ps[(*count)++] = (piece){start, end, match};
}

/* The pieces of s[0..n) for the pre-tokenizer's pattern; at most 2 per character, plus one. */
static size_t find_matches(const vkf_bpe_pre *p, const char *s, size_t n, piece *ps) {
  size_t count = 0, lit = strlen(p->literal);
  for (size_t i = 0; i < n;) {
    if (p->kind == VKF_BPE_PRE_SPLIT_STRING || p->kind == VKF_BPE_PRE_CHAR_DELIMITER) {
      /* a literal: leftmost non-overlapping occurrences (the regex of regex::escape(pattern)) */
      if (lit && i + lit <= n && !memcmp(s + i, p->literal, lit)) {
        add(ps, &count, i, i + lit, 1);
        i += lit;
        continue;
      }
    }
    uint32_t cp = 0;
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
    if (!len) len = 1, cp = 0xFFFD; /* not reached: the text was checked as UTF-8 */
    if (p->kind == VKF_BPE_PRE_WHITESPACE && !is_space(cp)) {
      /* \w+|[^\w\s]+: a run of word characters or a run of the others but spaces */
      int word = vkf_unicode_is_word(cp);
      size_t j = i + len;
      while (j < n) {
        size_t l2 = vkf_utf8_decode((const uint8_t *)s + j, n - j, &cp);
        if (!l2 || is_space(cp) || vkf_unicode_is_word(cp) != word) break;
        j += l2;
      }
      add(ps, &count, i, j, 1);
      i = j;
      continue;
    }
    int match = p->kind == VKF_BPE_PRE_PUNCTUATION ? is_punct(cp) : 0;
    add(ps, &count, i, i + len, match);
    i += len;
  }
  return count;
}

/* NormalizedString::split's fold for `behavior`, in place; afterwards `match` means removed. */
static size_t apply_behavior(vkf_bpe_behavior behavior, piece *ps, size_t count) {
  size_t k = 0;
  int prev = 0;
  if (behavior == VKF_BPE_MERGED_WITH_NEXT) { /* the fold runs from the end */
    for (size_t i = count; i-- > 0;) {
      piece c = ps[i];
      if (c.match && !prev && k) ps[count - k].start = c.start; /* the last kept, stored reversed */
      else ps[count - ++k] = (piece){c.start, c.end, 0};
      prev = c.match;
    }
    memmove(ps, ps + count - k, k * sizeof *ps);
    return k;
  }
  for (size_t i = 0; i < count; i++) {
    piece c = ps[i];
    int merge = (behavior == VKF_BPE_CONTIGUOUS && c.match == prev) ||
                (behavior == VKF_BPE_MERGED_WITH_PREVIOUS && c.match && !prev);
    if (behavior == VKF_BPE_REMOVED) ps[k++] = c;
    else if (behavior == VKF_BPE_ISOLATED || !merge || !k) ps[k++] = (piece){c.start, c.end, 0};
    else ps[k - 1].end = c.end;
    prev = c.match;
  }
  return k;
}

/* UnicodeScripts' fixed_script: U+30FC and Hiragana and Katakana count as Han, a space as any. */
static uint32_t fixed_script(uint32_t cp) {
  if (cp == 0x30FC) return VKF_SCRIPT_HAN;
  if (cp == ' ') return VKF_SCRIPT_ANY;
  uint32_t s = vkf_unicode_script(cp);
  return s == VKF_SCRIPT_HIRAGANA || s == VKF_SCRIPT_KATAKANA ? VKF_SCRIPT_HAN : s;
}

/* UnicodeScripts: a piece starts at each character of a script (not "any") other than the last
 * such character's, and the pieces run from one start to the next. As in tokenizers, what comes
 * before the first start (leading spaces, characters of no script) is in no piece at all. */
static void unicode_scripts(const char *s, size_t n, vkf_bpe_words *out) {
  uint32_t last = UINT32_MAX; /* None */
  size_t start = SIZE_MAX;
  for (size_t i = 0; i < n;) {
    uint32_t cp = 0;
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
    if (!len) len = 1, cp = 0xFFFD; /* not reached: the text was checked as UTF-8 */
    uint32_t script = fixed_script(cp);
    if (script != VKF_SCRIPT_ANY && last != VKF_SCRIPT_ANY && last != script) {
      if (start != SIZE_MAX && i > start) {
        vkf_bpe_end_word(out);
        vkf_bpe_put(out, s + start, i - start);
        vkf_bpe_end_word(out);
      }
      start = i;
    }
    if (script != VKF_SCRIPT_ANY) last = script;
    i += len;
  }
  if (start != SIZE_MAX && n > start) {
    vkf_bpe_end_word(out);
    vkf_bpe_put(out, s + start, n - start);
    vkf_bpe_end_word(out);
  }
}

void vkf_bpe_pre_split(const vkf_bpe_pre *p, const char *s, size_t n, vkf_bpe_words *out) {
  if (p->kind == VKF_BPE_PRE_UNICODE_SCRIPTS) {
    unicode_scripts(s, n, out);
    return;
  }
  if (p->kind == VKF_BPE_PRE_BERT) { /* spaces removed, then each punctuation character alone */
    for (size_t i = 0; i < n;) {
      uint32_t cp = 0;
      size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
      if (!len) len = 1, cp = 0xFFFD;
      int space = is_space(cp), punct = !space && is_punct(cp);
      if (space || punct) vkf_bpe_end_word(out);
      if (!space) vkf_bpe_put(out, s + i, len);
      if (punct) vkf_bpe_end_word(out);
      i += len;
    }
    vkf_bpe_end_word(out);
    return;
  }
  piece *ps;
  size_t count;
  if (p->kind == VKF_BPE_PRE_SPLIT_REGEX) {
    vkf_regex_piece *rp;
    vkf_status st = vkf_regex_find_matches(p->re, s, n, &rp, &count);
    if (st) {
      out->failed |= vkf_status_code_of(st) == VKF_STATUS_OUT_OF_MEMORY ? 1 : VKF_BPE_FAILED_REGEX;
      vkf_status_free(st);
      return;
    }
    ps = (piece *)rp; /* the same three fields */
  } else {
    ps = malloc((2 * n + 1) * sizeof *ps);
    if (!ps) {
      out->failed = 1;
      return;
    }
    count = find_matches(p, s, n, ps);
  }
  vkf_bpe_behavior behavior = p->behavior;
  int invert = p->invert;
  if (p->kind == VKF_BPE_PRE_WHITESPACE) behavior = VKF_BPE_REMOVED, invert = 1;
  if (p->kind == VKF_BPE_PRE_CHAR_DELIMITER) behavior = VKF_BPE_REMOVED, invert = 0;
  for (size_t i = 0; invert && i < count; i++) ps[i].match = !ps[i].match;
  count = apply_behavior(behavior, ps, count);
  for (size_t i = 0; i < count; i++) {
    if (ps[i].match) continue;
    vkf_bpe_end_word(out);
    vkf_bpe_put(out, s + ps[i].start, ps[i].end - ps[i].start);
    vkf_bpe_end_word(out);
  }
  free(ps);
}
