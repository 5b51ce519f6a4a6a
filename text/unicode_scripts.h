/* The Unicode script of a code point as the tokenizers library's UnicodeScripts pre-tokenizer
 * classifies it (its own table, an older Unicode's Scripts.txt; generated into
 * unicode_scripts.c by tools/dev/gen_unicode_scripts.py). */
#ifndef VKF_MODELS_TEXT_UNICODE_SCRIPTS_H
#define VKF_MODELS_TEXT_UNICODE_SCRIPTS_H

#include <stddef.h>
#include <stdint.h>

/* The table's numbering (its enum order) of the scripts the pre-tokenizer treats specially. */
enum { VKF_SCRIPT_ANY = 0, VKF_SCRIPT_HAN = 42, VKF_SCRIPT_HIRAGANA = 47, VKF_SCRIPT_KATAKANA = 55 };

typedef struct vkf_unicode_script_range {
  uint32_t first, last;
  uint32_t script;
} vkf_unicode_script_range;

extern const vkf_unicode_script_range vkf_unicode_script_ranges[];
extern const size_t vkf_unicode_script_range_count;

/* get_script(c): the script of `cp`, VKF_SCRIPT_ANY where the table lists none. */
static inline uint32_t vkf_unicode_script(uint32_t cp) {
  size_t lo = 0, hi = vkf_unicode_script_range_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (vkf_unicode_script_ranges[mid].last < cp) lo = mid + 1;
    else hi = mid;
  }
  return lo < vkf_unicode_script_range_count && vkf_unicode_script_ranges[lo].first <= cp
             ? vkf_unicode_script_ranges[lo].script
             : VKF_SCRIPT_ANY;
}

#endif
