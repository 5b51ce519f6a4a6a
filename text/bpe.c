/* BPE and Unigram encoding as Hugging Face tokenizers does it: added tokens split the text first,
 * then each remaining segment is normalized, pre-tokenized into vkf_bpe_words, and each word merged
 * by rank (BPE) or segmented by Viterbi (Unigram, unigram.c). */
#include <stdlib.h>
#include <string.h>

#include "text/bpe_model.h"
#include "text/unicode.h"
#include "text/unigram.h"

size_t vkf_bpe_vocab_count(const vkf_bpe *b) { return b->token_count; }
const char *vkf_bpe_id_to_token(const vkf_bpe *b, int32_t id) {
  return id >= 0 && (size_t)id < b->token_count ? b->tokens[id] : NULL;
}
int32_t vkf_bpe_token_to_id(const vkf_bpe *b, const char *token) {
  return vkf_bpe_find(b, token, strlen(token));
}
int32_t vkf_bpe_bos_id(const vkf_bpe *b) { return b->bos_id; }
int32_t vkf_bpe_eos_id(const vkf_bpe *b) { return b->eos_id; }
int vkf_bpe_is_unigram(const vkf_bpe *b) { return b->scores != NULL; }
const char *vkf_bpe_model_name(const vkf_bpe *b) {
  static const char *const names[] = {"BPE", "Unigram", "WordPiece", "WordLevel"};
  return names[b->model];
}
int vkf_bpe_is_special(const vkf_bpe *b, int32_t id) {
  return id >= 0 && (size_t)id < b->token_count && b->special[id];
}

/* ---- growable buffers ------------------------------------------------------------------------ */

typedef struct ids {
  int32_t *data;
  size_t count, cap;
  int failed;
} ids;

static void push_id(ids *v, int32_t id) {
  if (v->count == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 64;
    int32_t *d = realloc(v->data, cap * sizeof *d);
    if (!d) {
      v->failed = 1;
      return;
    }
    v->data = d;
    v->cap = cap;
  }
  v->data[v->count++] = id;
}

/* ---- normalizers and pre-tokenizers ---------------------------------------------------------- */

static size_t utf8_len(const char *s) {
  uint32_t cp;
  size_t n = vkf_utf8_decode((const uint8_t *)s, 4, &cp);
  return n ? n : 1;
}

/* NFD, NFC, NFKD or NFKC of the valid UTF-8 s[0..n), appended to *out: full canonical (or
 * compatibility) decomposition, canonical ordering, then (NFC, NFKC) canonical composition, as
 * unicode-normalization does for Hugging Face's normalizers of those names. */
static void normalize_unicode(const char *s, size_t n, vkf_bpe_norm_kind kind, vkf_bpe_words *out) {
  int compat = kind == VKF_BPE_NORM_NFKD || kind == VKF_BPE_NORM_NFKC;
  uint32_t *cps = malloc((VKF_UNICODE_MAX_DECOMP * n + 1) * sizeof *cps);
  if (!cps) {
    out->failed = 1;
    return;
  }
  size_t count = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
    if (!len) cp = 0xFFFD, len = 1; /* not reached: the text was checked before it was split */
    count += compat ? vkf_unicode_decompose_compat_cp(cp, cps + count)
                    : vkf_unicode_decompose_cp(cp, cps + count);
    i += len;
  }
  vkf_unicode_canonical_order(cps, count);
  if (kind == VKF_BPE_NORM_NFC || kind == VKF_BPE_NORM_NFKC)
    count = vkf_unicode_compose(cps, count);
  for (size_t i = 0; i < count; i++) {
    char utf8[4];
    vkf_bpe_put(out, utf8, vkf_utf8_encode(cps[i], utf8));
  }
  free(cps);
}

static int is_space_at(const char *s, size_t n, size_t i, size_t *len) {
  uint32_t cp;
  *len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
  return *len && (vkf_unicode_props(cp) & VKF_UNICODE_WHITE_SPACE);
}

/* tokenizers' Nmt normalizer (normalizers/unicode.rs, do_nmt): ASCII control characters but
 * \t \n \f \r (and U+0000) dropped, and those four, U+1680, U+200B..U+200F, U+2028, U+2029,
 * U+2581, U+FEFF and U+FFFD each become a space. */
static void nmt(const char *s, size_t n, vkf_bpe_words *out) {
  for (size_t i = 0; i < n;) {
    uint32_t cp = 0;
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
    if (!len) len = 1, cp = (uint8_t)s[i]; /* not reached: the text was checked as UTF-8 */
    int drop = (cp >= 0x01 && cp <= 0x08) || cp == 0x0B || (cp >= 0x0E && cp <= 0x1F) ||
               cp == 0x7F || cp == 0x8F || cp == 0x9F;
    int space = cp == 0x09 || cp == 0x0A || cp == 0x0C || cp == 0x0D || cp == 0x1680 ||
                (cp >= 0x200B && cp <= 0x200F) || cp == 0x2028 || cp == 0x2029 || cp == 0x2581 ||
                cp == 0xFEFF || cp == 0xFFFD;
    if (space) vkf_bpe_put(out, " ", 1);
    else if (!drop) vkf_bpe_put(out, s + i, len);
    i += len;
  }
}

/* `failed` bit for text the normalizers grew past NORM_GROWTH (a chain of Replace steps can
 * multiply it: 8 steps of "a" -> 10 "a"s make 53 bytes into 5 GB). No real normalizer comes
 * near: NFKD's longest expansion is 18 code points, a Prepend or Replace adds a few bytes. */
enum { FAILED_GREW = 2, FAILED_NO_UNK = 4, FAILED_NO_UNK_TOKEN = 8 };
#define NORM_GROWTH(n) ((n) * 64 + ((size_t)1 << 20))

/* The segment after every normalizer step, as one word in *out. */
static void normalize(const vkf_bpe *b, const char *s, size_t n, vkf_bpe_words *out) {
  vkf_bpe_words cur = {0};
  vkf_bpe_put(&cur, s, n);
  for (size_t k = 0; k < b->norm_count && !cur.failed; k++) {
    const vkf_bpe_norm *nm = &b->norms[k];
    vkf_bpe_words next = {0};
    if (nm->kind == VKF_BPE_NORM_PRECOMPILED) {
      char *text;
      size_t size;
      vkf_charsmap_normalize_hf(&nm->map, cur.data, cur.size, &text, &size);
      if (!text) next.failed = 1;
      vkf_bpe_put(&next, text, size);
      free(text);
    } else if (nm->kind == VKF_BPE_NORM_STRIP) {
      size_t start = 0, end = cur.size, len;
      while (nm->strip_left && start < end && is_space_at(cur.data, end, start, &len)) start += len;
      while (nm->strip_right && end > start) {
        size_t back = end - 1;
        while (back > start && ((uint8_t)cur.data[back] & 0xC0) == 0x80) back--;
        if (!is_space_at(cur.data, end, back, &len)) break;
        end = back;
      }
      vkf_bpe_put(&next, cur.data + start, end - start);
    } else if (nm->kind == VKF_BPE_NORM_SPACE_RUNS) {
      size_t to = strlen(nm->to);
      for (size_t i = 0; i < cur.size;) {
        size_t j = i;
        while (j < cur.size && cur.data[j] == ' ') j++;
        if (j - i >= 2) vkf_bpe_put(&next, nm->to, to), i = j;
        else vkf_bpe_put(&next, cur.data + i, 1), i++;
      }
    } else if (nm->kind == VKF_BPE_NORM_REPLACE_REGEX) {
      /* NormalizedString::replace: every match (an empty one too) becomes the content */
      vkf_regex_piece *ps;
      size_t count, to = strlen(nm->to);
      vkf_status st = vkf_regex_find_matches(nm->re, cur.data, cur.size, &ps, &count);
      if (st) {
        next.failed |= vkf_status_code_of(st) == VKF_STATUS_OUT_OF_MEMORY ? 1 : VKF_BPE_FAILED_REGEX;
        vkf_status_free(st);
      }
      for (size_t i = 0; !st && i < count && next.size <= NORM_GROWTH(n); i++) {
        if (ps[i].match) vkf_bpe_put(&next, nm->to, to);
        else vkf_bpe_put(&next, cur.data + ps[i].start, ps[i].end - ps[i].start);
      }
      if (!st) free(ps);
    } else if (nm->kind == VKF_BPE_NORM_BYTE_LEVEL) {
      for (size_t i = 0; i < cur.size; i++) {
        char utf8[4];
        vkf_bpe_put(&next, utf8, vkf_utf8_encode(vkf_bpe_byte_to_cp((uint8_t)cur.data[i]), utf8));
      }
    } else if (nm->kind == VKF_BPE_NORM_NMT) {
      nmt(cur.data, cur.size, &next);
    } else if (nm->kind == VKF_BPE_NORM_BERT || nm->kind == VKF_BPE_NORM_LOWERCASE ||
               nm->kind == VKF_BPE_NORM_STRIP_ACCENTS) {
      vkf_bpe_norm_chars(nm, cur.data, cur.size, &next);
    } else if (nm->kind != VKF_BPE_NORM_PREPEND && nm->kind != VKF_BPE_NORM_REPLACE &&
               nm->kind != VKF_BPE_NORM_REPLACE_REGEX && nm->kind != VKF_BPE_NORM_BYTE_LEVEL) {
      normalize_unicode(cur.data, cur.size, nm->kind, &next);
    } else if (nm->kind == VKF_BPE_NORM_PREPEND) {
      if (cur.size) vkf_bpe_put(&next, nm->to, strlen(nm->to)); /* an empty segment stays empty */
      vkf_bpe_put(&next, cur.data, cur.size);
    } else {
      size_t from = strlen(nm->from), to = strlen(nm->to);
      for (size_t i = 0; i < cur.size;) {
        if (i + from <= cur.size && !memcmp(cur.data + i, nm->from, from)) {
          vkf_bpe_put(&next, nm->to, to);
          i += from;
        } else {
          vkf_bpe_put(&next, cur.data + i, 1);
          i++;
        }
        if (next.size > NORM_GROWTH(n)) break; /* refused below; stop growing it now */
      }
    }
    next.failed |= cur.failed;
    if (next.size > NORM_GROWTH(n)) next.failed |= FAILED_GREW;
    vkf_bpe_words_free(&cur);
    cur = next;
  }
  vkf_bpe_put(out, cur.data, cur.size);
  out->failed |= cur.failed;
  vkf_bpe_end_word(out);
  vkf_bpe_words_free(&cur);
}

/* Splits s[0..n) at the matches of `pattern` (each match is a word: Split's Isolated behavior). */
static void split_pattern(vkf_pretok_pattern pattern, const char *s, size_t n, vkf_bpe_words *out,
                          uint32_t *cps, size_t *offs) {
  size_t count = 0;
  for (size_t i = 0; i < n; count++) {
    offs[count] = i;
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cps[count]);
    i += len ? len : 1;
  }
  offs[count] = n;
  for (size_t i = 0; i < count;) {
    size_t j = vkf_pretok_match(pattern, cps, count, i);
    if (j <= i) j = i + 1; /* unmatched text is a word of its own */
    vkf_bpe_put(out, s + offs[i], offs[j] - offs[i]);
    vkf_bpe_end_word(out);
    i = j;
  }
}

static void byte_level(const vkf_bpe_pre *p, const char *s, size_t n, vkf_bpe_words *out, uint32_t *cps,
                       size_t *offs) {
  vkf_bpe_words tmp = {0};
  if (p->add_prefix_space && (n == 0 || s[0] != ' ')) vkf_bpe_put(&tmp, " ", 1);
  vkf_bpe_put(&tmp, s, n);
  vkf_bpe_end_word(&tmp);
  vkf_bpe_words split = {0};
  if (p->pattern && !tmp.failed) split_pattern(p->pattern, tmp.data, tmp.size, &split, cps, offs);
  else split = tmp, tmp = (vkf_bpe_words){0};
  for (size_t w = 0; w < split.count; w++) {
    for (size_t i = vkf_bpe_word_start(&split, w); i < split.ends[w]; i++) {
      char utf8[4];
      vkf_bpe_put(out, utf8, vkf_utf8_encode(vkf_bpe_byte_to_cp((uint8_t)split.data[i]), utf8));
    }
    vkf_bpe_end_word(out);
  }
  out->failed |= tmp.failed | split.failed;
  vkf_bpe_words_free(&tmp);
  vkf_bpe_words_free(&split);
}

/* WhitespaceSplit: the runs between White_Space characters, which are dropped. */
static void whitespace_split(const char *s, size_t n, vkf_bpe_words *out) {
  for (size_t i = 0, len; i < n;) {
    if (is_space_at(s, n, i, &len)) {
      vkf_bpe_end_word(out);
      i += len;
    } else {
      len = utf8_len(s + i);
      vkf_bpe_put(out, s + i, len);
      i += len;
    }
  }
  vkf_bpe_end_word(out);
}

/* tokenizers' Digits: splits at char::is_numeric (general category N*), each numeric character
 * Isolated (individual_digits) or each run of them Contiguous; the text between stays one word. */
static void digits(const vkf_bpe_pre *p, const char *s, size_t n, vkf_bpe_words *out) {
  int in_run = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp = 0;
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
    if (!len) len = 1, cp = 0xFFFD;
    int num = (vkf_unicode_props(cp) & VKF_UNICODE_NUMBER) != 0;
    if (num != in_run || (num && p->individual_digits)) vkf_bpe_end_word(out);
    vkf_bpe_put(out, s + i, len);
    in_run = num;
    i += len;
  }
  vkf_bpe_end_word(out);
}

static void metaspace(const vkf_bpe_pre *p, const char *s, size_t n, int first, vkf_bpe_words *out) {
  size_t rep = strlen(p->replacement);
  int prepend = p->prepend == VKF_BPE_PREPEND_ALWAYS || (p->prepend == VKF_BPE_PREPEND_FIRST && first);
  if (prepend && n && s[0] != ' ' && !(n >= rep && !memcmp(s, p->replacement, rep)))
    vkf_bpe_put(out, p->replacement, rep);
  for (size_t i = 0; i < n; i++) {
    int is_rep = s[i] == ' ' || (i + rep <= n && !memcmp(s + i, p->replacement, rep));
    if (is_rep && p->split) vkf_bpe_end_word(out); /* the replacement opens the next word */
    if (s[i] == ' ') {
      vkf_bpe_put(out, p->replacement, rep);
    } else {
      size_t len = is_rep ? rep : 1;
      vkf_bpe_put(out, s + i, len);
      i += len - 1;
    }
  }
  vkf_bpe_end_word(out);
}

/* ---- the BPE merge --------------------------------------------------------------------------- */

typedef struct cand {
  uint32_t rank;
  uint32_t pos; /* left symbol */
  int32_t left, right;
} cand;

static int cand_less(const cand *a, const cand *b) {
  return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(cand *h, size_t *n, cand c) {
  size_t i = (*n)++;
  while (i && cand_less(&c, &h[(i - 1) / 2])) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = c;
}

static cand heap_pop(cand *h, size_t *n) {
  cand top = h[0], last = h[--*n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && cand_less(&h[c + 1], &h[c])) c++;
    if (!cand_less(&h[c], &last)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = last;
  return top;
}

typedef struct scratch {
  int32_t *sym;
  uint32_t *prev, *next;
  cand *heap;
  size_t cap;
  int failed;
} scratch;

static int reserve(scratch *s, size_t n) {
  if (n <= s->cap) return 1;
  size_t cap = s->cap ? s->cap : 64;
  while (cap < n) cap *= 2;
  int32_t *sym = realloc(s->sym, cap * sizeof *sym);
  if (sym) s->sym = sym;
  uint32_t *prev = realloc(s->prev, cap * sizeof *prev);
  if (prev) s->prev = prev;
  uint32_t *next = realloc(s->next, cap * sizeof *next);
  if (next) s->next = next;
  cand *heap = realloc(s->heap, 3 * cap * sizeof *heap); /* stale entries stay queued */
  if (heap) s->heap = heap;
  if (!sym || !prev || !next || !heap) return !(s->failed = 1);
  s->cap = cap;
  return 1;
}

static void try_pair(const vkf_bpe *b, scratch *s, size_t *heap_n, uint32_t pos) {
  uint32_t r = s->next[pos];
  if (r == UINT32_MAX) return;
  uint32_t rank;
  int32_t id;
  if (vkf_bpe_merge_find(b, s->sym[pos], s->sym[r], &rank, &id))
    heap_push(s->heap, heap_n, (cand){rank, pos, s->sym[pos], s->sym[r]});
}

/* One word: its characters' ids (byte fallback or unk for unknown ones), then the lowest-ranked
 * adjacent pair merged until none is left; a heap of candidates keeps long vkf_bpe_words O(n log n). */
static void bpe_word(const vkf_bpe *b, const char *w, size_t n, scratch *s, ids *out) {
  if (b->ignore_merges) {
    int32_t whole = vkf_bpe_find(b, w, n);
    if (whole >= 0) {
      push_id(out, whole);
      return;
    }
  }
  if (!reserve(s, n + 1)) return;
  size_t count = 0;
  int last_unk = 0;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_len(w + i);
    if (len > n - i) len = n - i;
    /* the character as the vocabulary spells it: continuing_subword_prefix past the first,
     * end_of_word_suffix on the last (byte fallback spells those bytes too, as tokenizers does) */
    char spelled[4 + 2 * VKF_BPE_MAX_AFFIX];
    const char *c = w + i;
    size_t c_len = len;
    if (b->prefix || b->suffix) {
      size_t p = i && b->prefix ? strlen(b->prefix) : 0;
      size_t q = i + len == n && b->suffix ? strlen(b->suffix) : 0;
      memcpy(spelled, b->prefix ? b->prefix : "", p);
      memcpy(spelled + p, w + i, len);
      memcpy(spelled + p + len, b->suffix ? b->suffix : "", q);
      c = spelled;
      c_len = p + len + q;
    }
    int32_t id = vkf_bpe_find(b, c, c_len);
    int fell_back = 0;
    if (id < 0 && b->byte_fallback) {
      fell_back = 1;
      for (size_t k = 0; k < c_len; k++) fell_back &= b->byte_ids[(uint8_t)c[k]] >= 0;
      for (size_t k = 0; fell_back && k < c_len; k++) {
        if (!reserve(s, count + 2)) return;
        s->sym[count++] = b->byte_ids[(uint8_t)c[k]];
      }
    }
    i += len;
    if (fell_back) {
      last_unk = 0;
    } else if (id >= 0) {
      s->sym[count++] = id;
      last_unk = 0;
    } else if (b->unk_id >= 0) { /* no unk token: the character is dropped, as in Hugging Face */
      if (!(b->fuse_unk && last_unk)) s->sym[count++] = b->unk_id;
      last_unk = 1;
    }
  }
  size_t heap_n = 0;
  for (size_t i = 0; i < count; i++) {
    s->prev[i] = i ? (uint32_t)i - 1 : UINT32_MAX;
    s->next[i] = i + 1 < count ? (uint32_t)i + 1 : UINT32_MAX;
  }
  for (size_t i = 0; i + 1 < count; i++) try_pair(b, s, &heap_n, (uint32_t)i);
  while (heap_n) {
    cand c = heap_pop(s->heap, &heap_n);
    uint32_t r = s->next[c.pos];
    /* stale: a symbol of the pair was merged away or changed since it was queued */
    if (s->sym[c.pos] != c.left || r == UINT32_MAX || s->sym[r] != c.right) continue;
    uint32_t rank = 0;
    int32_t id = -1;
    vkf_bpe_merge_find(b, c.left, c.right, &rank, &id);
    s->sym[c.pos] = id;
    s->sym[r] = -1;
    s->next[c.pos] = s->next[r];
    if (s->next[r] != UINT32_MAX) s->prev[s->next[r]] = c.pos;
    if (s->prev[c.pos] != UINT32_MAX) try_pair(b, s, &heap_n, s->prev[c.pos]);
    try_pair(b, s, &heap_n, c.pos);
  }
  for (uint32_t i = 0; count && i != UINT32_MAX; i = s->next[i]) push_id(out, s->sym[i]);
}

/* ---- added tokens ---------------------------------------------------------------------------- */


static int is_word_char(uint32_t cp) {
  return cp == '_' || (vkf_unicode_props(cp) & (VKF_UNICODE_LETTER | VKF_UNICODE_NUMBER));
}

/* The longest added token at text[i], honouring single_word; its index or -1. */
static long added_at(const vkf_bpe *b, const char *text, size_t n, size_t i) {
  long best = -1;
  for (size_t k = 0; k < b->added_count; k++) {
    const vkf_bpe_added *a = &b->added[k];
    if (a->size > n - i || (best >= 0 && a->size <= b->added[best].size) ||
        memcmp(text + i, a->content, a->size))
      continue;
    if (a->single_word) {
      uint32_t cp;
      size_t back = i;
      while (back > 0 && ((uint8_t)text[back - 1] & 0xC0) == 0x80) back--;
      if (i > 0 && back > 0) back--;
      while (back > 0 && ((uint8_t)text[back] & 0xC0) == 0x80) back--;
      if (i > 0 && vkf_utf8_decode((const uint8_t *)text + back, i - back, &cp) && is_word_char(cp))
        continue;
      size_t end = i + a->size;
      if (end < n && vkf_utf8_decode((const uint8_t *)text + end, n - end, &cp) && is_word_char(cp))
        continue;
    }
    best = (long)k;
  }
  return best;
}

static void encode_segment(const vkf_bpe *b, const char *s, size_t n, int first, scratch *sc,
                           ids *out) {
  if (!n) return;
  vkf_bpe_words cur = {0};
  normalize(b, s, n, &cur);
  uint32_t *cps = NULL;
  size_t *offs = NULL;
  for (size_t k = 0; k < b->pre_count && !cur.failed; k++) {
    const vkf_bpe_pre *p = &b->pres[k];
    free(cps);
    free(offs);
    cps = malloc((cur.size + 2) * sizeof *cps);
    offs = malloc((cur.size + 2) * sizeof *offs);
    if (!cps || !offs) {
      cur.failed = 1;
      break;
    }
    vkf_bpe_words next = {0};
    for (size_t w = 0; w < cur.count; w++) {
      const char *ws = cur.data + vkf_bpe_word_start(&cur, w);
      size_t wn = cur.ends[w] - vkf_bpe_word_start(&cur, w);
      if (p->kind == VKF_BPE_PRE_SPLIT) split_pattern(p->pattern, ws, wn, &next, cps, offs);
      else if (p->kind == VKF_BPE_PRE_BYTE_LEVEL) byte_level(p, ws, wn, &next, cps, offs);
      else if (p->kind == VKF_BPE_PRE_WHITESPACE_SPLIT) whitespace_split(ws, wn, &next);
      else if (p->kind == VKF_BPE_PRE_DIGITS) digits(p, ws, wn, &next);
      else if (p->kind >= VKF_BPE_PRE_BERT) vkf_bpe_pre_split(p, ws, wn, &next);
      else metaspace(p, ws, wn, first && w == 0, &next);
    }
    next.failed |= cur.failed;
    vkf_bpe_words_free(&cur);
    cur = next;
  }
  free(cps);
  free(offs);
  for (size_t w = 0; w < cur.count && !cur.failed; w++) {
    const char *ws = cur.data + vkf_bpe_word_start(&cur, w);
    size_t wn = cur.ends[w] - vkf_bpe_word_start(&cur, w);
    if (b->model == VKF_BPE_MODEL_BPE) {
      bpe_word(b, ws, wn, sc, out);
      continue;
    }
    int32_t *got = malloc((wn + 1) * sizeof *got);
    size_t k = SIZE_MAX;
    if (got && b->model == VKF_BPE_MODEL_UNIGRAM) k = vkf_unigram_encode(b, ws, wn, got);
    else if (got) k = vkf_bpe_word_model_encode(b, ws, wn, got);
    if (!got) out->failed |= 1;
    else if (b->model == VKF_BPE_MODEL_UNIGRAM && k == VKF_UNIGRAM_NO_UNK) out->failed |= FAILED_NO_UNK;
    else if (b->model != VKF_BPE_MODEL_UNIGRAM && k == SIZE_MAX) out->failed |= FAILED_NO_UNK_TOKEN;
    else if (k > wn) out->failed |= 1; /* out of memory */
    for (size_t i = 0; k < VKF_UNIGRAM_NO_UNK && i < k; i++) push_id(out, got[i]);
    free(got);
  }
  out->failed |= cur.failed;
  vkf_bpe_words_free(&cur);
}

vkf_status vkf_bpe_encode(const vkf_bpe *b, const char *text, size_t n, int add_special,
                          int32_t **out_ids, size_t *out_count) {
  *out_ids = NULL;
  *out_count = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = vkf_utf8_decode((const uint8_t *)text + i, n - i, &cp);
    if (!len)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "text is not valid UTF-8: byte 0x%02X at byte offset %zu",
                             (uint8_t)text[i], i);
    i += len;
  }
  ids body = {0};
  scratch sc = {0};
  size_t seg = 0; /* start of the text not yet encoded */
  /* Metaspace's prepend_scheme "first" prefixes the first piece of text the pre-tokenizer sees,
   * an added token before it or not (tokenizers 0.15's first_split) */
  int encoded = 0;
  for (size_t i = 0; i < n;) {
    long k = added_at(b, text, n, i);
    if (k < 0) {
      i += utf8_len(text + i);
      continue;
    }
    const vkf_bpe_added *a = &b->added[k];
    size_t start = i, end = i + a->size, len;
    /* lstrip/rstrip: the token takes the whitespace beside it out of the neighbouring text */
    while (a->lstrip && start > seg) {
      size_t back = start - 1;
      while (back > seg && ((uint8_t)text[back] & 0xC0) == 0x80) back--;
      if (!is_space_at(text, n, back, &len)) break;
      start = back;
    }
    while (a->rstrip && end < n && is_space_at(text, n, end, &len)) end += len;
    encode_segment(b, text + seg, start - seg, !encoded, &sc, &body);
    encoded |= start > seg;
    push_id(&body, a->id);
    seg = i = end;
  }
  encode_segment(b, text + seg, n - seg, !encoded, &sc, &body);
  free(sc.sym);
  free(sc.prev);
  free(sc.next);
  free(sc.heap);
  ids all = {0};
  for (size_t t = 0; add_special && t < b->template_count; t++) {
    if (b->template_ids[t] >= 0) push_id(&all, b->template_ids[t]);
    for (size_t j = 0; b->template_ids[t] < 0 && j < body.count; j++) push_id(&all, body.data[j]);
  }
  if (!add_special || !b->template_count) {
    all = body;
    body = (ids){0};
  }
  free(body.data);
  if (all.failed || body.failed || sc.failed) {
    free(all.data);
    if ((all.failed | body.failed) & FAILED_GREW)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: the normalizer makes more than 64 times a piece of the %zu bytes "
                             "of text plus 1 MiB (its steps multiply the text)",
                             b->path, n);
    if ((all.failed | body.failed) & VKF_BPE_FAILED_REGEX)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: a regular expression of the tokenizer backtracks past its limit "
                             "on this text of %zu bytes (Oniguruma's retry limit; tokenizers "
                             "fails on it too)",
                             b->path, n);
    if ((all.failed | body.failed) & FAILED_NO_UNK)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: the text has a character no Unigram piece covers and model.unk_id "
                             "is missing (Hugging Face fails the same: \"Encountered an unknown "
                             "token but `unk_id` is missing\")",
                             b->path);
    if ((all.failed | body.failed) & FAILED_NO_UNK_TOKEN)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: a word needs model.unk_token, which the vocabulary lacks (Hugging "
                             "Face fails the same: MissingUnkToken)", b->path);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "encoding %zu bytes of text", n);
  }
  *out_ids = all.data;
  *out_count = all.count;
  if (!all.data && !(*out_ids = malloc(sizeof(int32_t))))
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "encoding");
  return VKF_OK;
}
