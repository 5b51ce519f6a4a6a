/* SentencePiece's precompiled charsmap: the Darts-clone trie walk (common prefix search), base64,
 * Hugging Face's grapheme-wise Precompiled normalizer, and the grapheme clusters it needs. */
#include "text/charsmap.h"

#include <stdlib.h>
#include <string.h>

#include "text/unicode.h"

#define MAX_BLOB ((size_t)64 << 20) /* real charsmaps are ~240 KB */

vkf_status vkf_charsmap_parse(const uint8_t *blob, size_t size, const char *where,
                              vkf_charsmap *out) {
  memset(out, 0, sizeof *out);
  if (size == 0) return VKF_OK;
  if (size < 4 || size > MAX_BLOB)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: precompiled_charsmap of %zu bytes is truncated",
                           where, size);
  uint32_t trie = (uint32_t)blob[0] | (uint32_t)blob[1] << 8 | (uint32_t)blob[2] << 16 |
                  (uint32_t)blob[3] << 24;
  if (trie % 4 || trie == 0 || trie > size - 4)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: precompiled_charsmap: trie size %u does not fit "
                           "in %zu bytes",
                           where, trie, size);
  out->unit_count = trie / 4;
  out->normalized_size = size - 4 - trie;
  out->units = malloc(trie);
  out->normalized = malloc(out->normalized_size + 1);
  if (!out->units || !out->normalized) {
    vkf_charsmap_free(out);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: precompiled_charsmap", where);
  }
  for (size_t i = 0; i < out->unit_count; i++) {
    const uint8_t *u = blob + 4 + 4 * i;
    out->units[i] =
        (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
  }
  memcpy(out->normalized, blob + 4 + trie, out->normalized_size);
  out->normalized[out->normalized_size] = '\0'; /* a string running off the end stops here */
  return VKF_OK;
}

static int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

vkf_status vkf_charsmap_parse_base64(const char *text, const char *where, vkf_charsmap *out) {
  size_t n = strlen(text);
  uint8_t *blob = malloc(n / 4 * 3 + 3);
  if (!blob) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: precompiled_charsmap", where);
  size_t size = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    if (text[i] == '=') break;
    int v = b64_value(text[i]);
    if (v < 0) {
      free(blob);
      return vkf_status_make(VKF_STATUS_PARSE, "%s: precompiled_charsmap is not base64 (byte %zu)",
                             where, i);
    }
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      blob[size++] = (uint8_t)(acc >> bits);
    }
  }
  vkf_status st = vkf_charsmap_parse(blob, size, where, out);
  free(blob);
  return st;
}

void vkf_charsmap_free(vkf_charsmap *m) {
  free(m->units);
  free(m->normalized);
  memset(m, 0, sizeof *m);
}

/* Darts-clone unit fields */
static uint32_t unit_offset(uint32_t u) {
  return (u >> 10) << ((u & (1u << 9)) >> 6);
}
static uint32_t unit_label(uint32_t u) {
  return u & ((1u << 31) | 0xFF);
}
static int unit_has_leaf(uint32_t u) {
  return (u >> 8) & 1;
}
static uint32_t unit_value(uint32_t u) {
  return u & ((1u << 31) - 1);
}

int vkf_charsmap_match(const vkf_charsmap *m, const char *s, size_t n, int longest, size_t *out_len,
                       const char **out_repl) {
  if (!m->unit_count) return 0;
  size_t pos = unit_offset(m->units[0]);
  int found = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = (uint8_t)s[i];
    pos ^= c;
    if (pos >= m->unit_count) break;
    uint32_t u = m->units[pos];
    if (unit_label(u) != c) break;
    pos ^= unit_offset(u);
    if (pos >= m->unit_count) break;
    if (unit_has_leaf(u)) {
      uint32_t v = unit_value(m->units[pos]);
      if (v >= m->normalized_size) break; /* a corrupt value: treated as the end of the matches */
      *out_len = i + 1;
      *out_repl = m->normalized + v;
      found = 1;
      if (!longest) return 1;
    }
  }
  return found;
}

/* ---- grapheme clusters ------------------------------------------------------------------------
 */

enum { G_OTHER, G_CR, G_LF, G_CONTROL, G_EXTEND, G_ZWJ, G_RI, G_L, G_V, G_T, G_LV, G_LVT, G_PICTO };

static int gclass(uint32_t cp) {
  if (cp == '\r') return G_CR;
  if (cp == '\n') return G_LF;
  if (cp == 0x200D) return G_ZWJ;
  if (cp == 0x200C || (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0x1F3FB && cp <= 0x1F3FF) ||
      (cp >= 0xE0020 && cp <= 0xE007F) || (cp >= 0xE0100 && cp <= 0xE01EF))
    return G_EXTEND;
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 || cp == 0x200B ||
      cp == 0xFEFF)
    return G_CONTROL;
  if (cp >= 0x1F1E6 && cp <= 0x1F1FF) return G_RI;
  if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0xA960 && cp <= 0xA97C)) return G_L;
  if ((cp >= 0x1160 && cp <= 0x11A7) || (cp >= 0xD7B0 && cp <= 0xD7C6)) return G_V;
  if ((cp >= 0x11A8 && cp <= 0x11FF) || (cp >= 0xD7CB && cp <= 0xD7FB)) return G_T;
  if (cp >= 0xAC00 && cp <= 0xD7A3) return (cp - 0xAC00) % 28 ? G_LVT : G_LV;
  uint32_t props = vkf_unicode_props(cp);
  if ((props & VKF_UNICODE_MN) || vkf_unicode_ccc(props)) return G_EXTEND;
  if ((cp >= 0x1F000 && cp <= 0x1FAFF) || (cp >= 0x2600 && cp <= 0x27BF) || cp == 0x00A9 ||
      cp == 0x00AE || (cp >= 0x2190 && cp <= 0x21FF) || (cp >= 0x2B00 && cp <= 0x2BFF))
    return G_PICTO;
  return G_OTHER;
}

size_t vkf_grapheme_len(const char *s, size_t n) {
  uint32_t cp;
  size_t i = vkf_utf8_decode((const uint8_t *)s, n, &cp);
  if (!i) return 1;
  int prev = gclass(cp), ri_count = prev == G_RI, picto_seen = prev == G_PICTO;
  while (i < n) {
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
    if (!len) break;
    int c = gclass(cp), join;
    if (prev == G_CR)
      join = c == G_LF;
    else if (prev == G_LF || prev == G_CONTROL || c == G_CR || c == G_LF || c == G_CONTROL)
      join = 0;
    else if (prev == G_L)
      join = c == G_L || c == G_V || c == G_LV || c == G_LVT || c == G_EXTEND || c == G_ZWJ;
    else if (prev == G_LV || prev == G_V)
      join = c == G_V || c == G_T || c == G_EXTEND || c == G_ZWJ;
    else if (prev == G_LVT || prev == G_T)
      join = c == G_T || c == G_EXTEND || c == G_ZWJ;
    else if (c == G_EXTEND || c == G_ZWJ)
      join = 1;
    else if (prev == G_ZWJ)
      join = c == G_PICTO && picto_seen;
    else if (prev == G_RI)
      join = c == G_RI && ri_count % 2 == 1;
    else
      join = 0;
    if (!join) break;
    if (c == G_RI) ri_count++;
    if (c == G_PICTO) picto_seen = 1;
    prev = c;
    i += len;
  }
  return i;
}

/* ---- Hugging Face's Precompiled normalizer ----------------------------------------------------
 */

void vkf_charsmap_normalize_hf(const vkf_charsmap *m, const char *s, size_t n, char **out,
                               size_t *out_size) {
  /* a replacement is at most one string of the blob per input byte */
  size_t cap = n + 16, size = 0;
  char *buf = malloc(cap);
  for (size_t i = 0; buf && i < n;) {
    size_t g = vkf_grapheme_len(s + i, n - i), len;
    const char *repl;
    /* the grapheme whole: the *first* key prefixing it stands for all of it (Hugging Face's
     * spm_precompiled quirk, so "x" + mark can become x's replacement alone) */
    int whole = g < 6 && vkf_charsmap_match(m, s + i, g, 0, &len, &repl);
    size_t end = i + g;
    while (buf && i < end) {
      size_t c = whole ? g : vkf_utf8_decode((const uint8_t *)s + i, end - i, &(uint32_t){0});
      if (!c) c = 1;
      const char *piece = s + i;
      size_t piece_size = c;
      if (whole)
        piece = repl, piece_size = strlen(repl);
      else if (vkf_charsmap_match(m, s + i, c, 0, &len, &repl))
        piece = repl, piece_size = strlen(repl);
      if (size + piece_size + 1 > cap) {
        while (size + piece_size + 1 > cap) cap *= 2;
        char *grown = realloc(buf, cap);
        if (!grown) free(buf);
        buf = grown;
        if (!buf) break;
      }
      memcpy(buf + size, piece, piece_size);
      size += piece_size;
      i += c;
    }
  }
  *out = buf;
  *out_size = buf ? size : 0;
}
