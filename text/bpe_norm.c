/* The character-by-character normalizers of the tokenizers library: BertNormalizer
 * (normalizers/bert.rs), Lowercase and StripAccents. The Unicode classes are the fast tokenizer's
 * own as unicode.h records them (its clean_text drop list, punctuation, CJK ranges, non-spacing
 * marks, char::to_lowercase). */
#include <stdlib.h>

#include "text/bpe_model.h"
#include "text/unicode.h"
#include "text/unicode_word.h"

/* Code points of the valid UTF-8 s[0..n) into a new array with room for `grow` times as many. */
static uint32_t *decode_all(const char *s, size_t n, size_t grow, size_t *out_count) {
  uint32_t *cps = malloc((n * grow + 1) * sizeof *cps);
  size_t count = 0;
  for (size_t i = 0; cps && i < n;) {
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cps[count]);
    if (!len) cps[count] = 0xFFFD, len = 1; /* not reached: the text was checked as UTF-8 */
    count++;
    i += len;
  }
  *out_count = count;
  return cps;
}

/* BertNormalizer::normalize but its lowercase (done while encoding): clean_text,
 * handle_chinese_chars, strip_accents (NFD, then the non-spacing marks dropped), in that order,
 * each over the whole text. CJK padding triples the count and NFD at most quadruples it, so the
 * caller's buffer of 12 n holds every step. */
static size_t bert(const vkf_bpe_norm *nm, uint32_t *cps, size_t count) {
  size_t k = 0;
  if (nm->clean_text) {
    for (size_t i = 0; i < count; i++) {
      uint32_t props = vkf_unicode_props(cps[i]);
      if (props & VKF_UNICODE_REMOVE) continue;
      cps[k++] = (props & VKF_UNICODE_WHITE_SPACE) ? ' ' : cps[i];
    }
    count = k;
  }
  if (nm->chinese) { /* from the back, so the padding never overwrites what is still to be read */
    size_t extra = 0;
    for (size_t i = 0; i < count; i++) extra += (vkf_unicode_props(cps[i]) & VKF_UNICODE_CJK) ? 2 : 0;
    size_t w = count + extra;
    for (size_t i = count; i-- > 0;) {
      int cjk = (vkf_unicode_props(cps[i]) & VKF_UNICODE_CJK) != 0;
      if (cjk) cps[--w] = ' ';
      cps[--w] = cps[i];
      if (cjk) cps[--w] = ' ';
    }
    count += extra;
  }
  if (nm->strip_accents) {
    uint32_t *tmp = malloc((count * 4 + 1) * sizeof *tmp);
    if (!tmp) return SIZE_MAX;
    size_t t = 0;
    for (size_t i = 0; i < count; i++) t += vkf_unicode_decompose_cp(cps[i], tmp + t);
    vkf_unicode_canonical_order(tmp, t);
    k = 0;
    for (size_t i = 0; i < t; i++)
      if (!(vkf_unicode_props(tmp[i]) & VKF_UNICODE_STRIP)) cps[k++] = tmp[i];
    free(tmp);
    count = k; /* never more than the 4 count the caller's buffer holds past the CJK padding */
  }
  return count;
}

void vkf_bpe_norm_chars(const vkf_bpe_norm *nm, const char *s, size_t n, vkf_bpe_words *out) {
  size_t count;
  uint32_t *cps = decode_all(s, n, 12, &count);
  if (!cps) {
    out->failed = 1;
    return;
  }
  int lower = nm->kind == VKF_BPE_NORM_LOWERCASE || (nm->kind == VKF_BPE_NORM_BERT && nm->lowercase);
  if (nm->kind == VKF_BPE_NORM_BERT) count = bert(nm, cps, count);
  if (count == SIZE_MAX) {
    out->failed = 1;
    count = 0;
  }
  for (size_t i = 0; i < count; i++) {
    uint32_t low[3];
    size_t m = 1;
    if (lower) m = vkf_unicode_lower_cp(cps[i], low);
    else low[0] = cps[i];
    if (nm->kind == VKF_BPE_NORM_STRIP_ACCENTS && vkf_unicode_is_mark(cps[i])) continue;
    for (size_t j = 0; j < m; j++) {
      char utf8[4];
      vkf_bpe_put(out, utf8, vkf_utf8_encode(low[j], utf8));
    }
  }
  free(cps);
}
