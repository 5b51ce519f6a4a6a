/* Lookups into the generated Unicode tables, strict UTF-8 decoding, and the small algorithmic parts
 * of NFD and NFC (Hangul syllables, canonical ordering, composition) the tokenizers need. */
#include "text/unicode.h"

#define HANGUL_S_BASE 0xAC00u
#define HANGUL_L_BASE 0x1100u
#define HANGUL_V_BASE 0x1161u
#define HANGUL_T_BASE 0x11A7u
#define HANGUL_V_COUNT 21u
#define HANGUL_T_COUNT 28u
#define HANGUL_L_COUNT 19u
#define HANGUL_S_COUNT 11172u

uint32_t vkf_unicode_props(uint32_t cp) {
  /* Last run whose start <= cp; runs[0].start is 0, so there always is one. */
  size_t lo = 0, hi = vkf_unicode_run_count;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (vkf_unicode_runs[mid].start <= cp) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return vkf_unicode_runs[lo].props;
}

static const vkf_unicode_map *map_find(const vkf_unicode_map *map, size_t count, uint32_t cp) {
  size_t lo = 0, hi = count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (map[mid].cp == cp) return &map[mid];
    if (map[mid].cp < cp) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return NULL;
}

size_t vkf_utf8_decode(const uint8_t *s, size_t size, uint32_t *out_cp) {
  *out_cp = 0;
  uint8_t b0 = s[0];
  if (b0 < 0x80) {
    *out_cp = b0;
    return 1;
  }
  size_t len;
  uint32_t cp, min;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, cp = b0 & 0x1Fu, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, cp = b0 & 0x0Fu, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, cp = b0 & 0x07u, min = 0x10000;
  } else {
    return 0; /* stray continuation byte, C0/C1 overlong lead, or F5..FF */
  }
  if (size < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *out_cp = cp;
  return len;
}

size_t vkf_utf8_encode(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

size_t vkf_unicode_lower_cp(uint32_t cp, uint32_t out[3]) {
  if (cp < 0x80) {
    out[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    return 1;
  }
  const vkf_unicode_map *m = map_find(vkf_unicode_lower, vkf_unicode_lower_count, cp);
  if (!m) {
    out[0] = cp;
    return 1;
  }
  for (uint32_t i = 0; i < m->count; i++) out[i] = m->out[i];
  return m->count;
}

size_t vkf_unicode_decompose_cp(uint32_t cp, uint32_t out[4]) {
  if (cp < 0xC0) {
    out[0] = cp;
    return 1;
  }
  if (cp >= HANGUL_S_BASE && cp < HANGUL_S_BASE + HANGUL_S_COUNT) {
    uint32_t s = cp - HANGUL_S_BASE;
    out[0] = HANGUL_L_BASE + s / (HANGUL_V_COUNT * HANGUL_T_COUNT);
    out[1] = HANGUL_V_BASE + (s % (HANGUL_V_COUNT * HANGUL_T_COUNT)) / HANGUL_T_COUNT;
    if (s % HANGUL_T_COUNT == 0) return 2;
    out[2] = HANGUL_T_BASE + s % HANGUL_T_COUNT;
    return 3;
  }
  const vkf_unicode_map *m = map_find(vkf_unicode_decomp, vkf_unicode_decomp_count, cp);
  if (!m) {
    out[0] = cp;
    return 1;
  }
  for (uint32_t i = 0; i < m->count; i++) out[i] = m->out[i];
  return m->count;
}

size_t vkf_unicode_decompose_compat_cp(uint32_t cp, uint32_t out[VKF_UNICODE_MAX_DECOMP]) {
  size_t lo = 0, hi = vkf_unicode_compat_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const vkf_unicode_span *sp = &vkf_unicode_compat[mid];
    if (sp->cp == cp) {
      for (uint32_t i = 0; i < sp->count; i++) out[i] = vkf_unicode_compat_data[sp->start + i];
      return sp->count;
    }
    if (sp->cp < cp) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return vkf_unicode_decompose_cp(cp, out); /* the same as the canonical one */
}

void vkf_unicode_canonical_order(uint32_t *cps, size_t count) {
  /* Insertion sort keyed on combining class, never moving a mark across a starter (class 0);
   * runs of marks are short, so this is linear in practice. */
  for (size_t i = 1; i < count; i++) {
    uint32_t c = cps[i];
    uint32_t cc = vkf_unicode_ccc(vkf_unicode_props(c));
    if (cc == 0) continue;
    size_t j = i;
    while (j > 0) {
      uint32_t prev_cc = vkf_unicode_ccc(vkf_unicode_props(cps[j - 1]));
      if (prev_cc == 0 || prev_cc <= cc) break;
      cps[j] = cps[j - 1];
      j--;
    }
    cps[j] = c;
  }
}

uint32_t vkf_unicode_compose_pair(uint32_t first, uint32_t second) {
  if (first >= HANGUL_L_BASE && first < HANGUL_L_BASE + HANGUL_L_COUNT && second >= HANGUL_V_BASE &&
      second < HANGUL_V_BASE + HANGUL_V_COUNT)
    return HANGUL_S_BASE +
           ((first - HANGUL_L_BASE) * HANGUL_V_COUNT + (second - HANGUL_V_BASE)) * HANGUL_T_COUNT;
  /* LV syllable + trailing consonant (T_BASE itself is not a consonant) */
  if (first >= HANGUL_S_BASE && first < HANGUL_S_BASE + HANGUL_S_COUNT &&
      (first - HANGUL_S_BASE) % HANGUL_T_COUNT == 0 && second > HANGUL_T_BASE &&
      second < HANGUL_T_BASE + HANGUL_T_COUNT)
    return first + (second - HANGUL_T_BASE);
  size_t lo = 0, hi = vkf_unicode_comp_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const vkf_unicode_pair *p = &vkf_unicode_comp[mid];
    if (p->first == first && p->second == second) return p->composite;
    if (p->first < first || (p->first == first && p->second < second)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return 0;
}

size_t vkf_unicode_compose(uint32_t *cps, size_t count) {
  /* UAX #15's composition: `last_cc` is the class of the last character kept after the starter, 0
   * when that is the starter itself; a character is blocked from the starter when one kept between
   * them has class 0 or >= its own. Non-starters before the first starter are kept as they are. */
  size_t starter = 0, out = 0;
  int have_starter = 0;
  uint32_t last_cc = 0;
  for (size_t i = 0; i < count; i++) {
    uint32_t c = cps[i];
    uint32_t cc = vkf_unicode_ccc(vkf_unicode_props(c));
    if (have_starter && (last_cc == 0 || last_cc < cc)) {
      uint32_t composite = vkf_unicode_compose_pair(cps[starter], c);
      if (composite) {
        cps[starter] = composite;
        continue;
      }
    }
    if (cc == 0) {
      starter = out;
      have_starter = 1;
    }
    last_cc = cc;
    cps[out++] = c;
  }
  return out;
}
