/* BPE decoding: ids to token strings, then the tokenizer.json decoder steps (ByteLevel, Replace,
 * ByteFallback, Fuse, Strip, Metaspace) over the token list, as Hugging Face's decode() runs them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/bpe_model.h"
#include "text/unicode.h"

/* Length of the UTF-8 sequence at s[0..n): *out_complete tells a whole valid character from the
 * maximal invalid subpart (which one U+FFFD replaces, as Rust's from_utf8_lossy and Python do). */
static size_t utf8_unit(const uint8_t *s, size_t n, int *out_complete) {
  uint8_t c = s[0];
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c < 0x80) need = 0;
  else if (c >= 0xC2 && c <= 0xDF) need = 1;
  else if (c >= 0xE0 && c <= 0xEF) need = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) need = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else {
    *out_complete = 0;
    return 1;
  }
  size_t k = 0;
  while (k < need && 1 + k < n && s[1 + k] >= (k ? 0x80 : lo) && s[1 + k] <= (k ? 0xBF : hi)) k++;
  *out_complete = k == need;
  return 1 + k;
}

/* 1 when s[0..n) is valid UTF-8 but for an incomplete character cut off by its end. */
static int incomplete_tail(const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n;) {
    int complete;
    size_t len = utf8_unit(s + i, n - i, &complete);
    if (!complete) return i + len == n && s[i] >= 0xC2;
    i += len;
  }
  return 0;
}

/* Lossy UTF-8 of s[0..n) appended to *out; with hold, a cut-off last character is kept raw and
 * *held set to its length. */
static void lossy(const uint8_t *s, size_t n, int hold, vkf_bpe_words *out, size_t *held) {
  for (size_t i = 0; i < n;) {
    int complete;
    size_t len = utf8_unit(s + i, n - i, &complete);
    if (complete || (hold && i + len == n && s[i] >= 0xC2)) vkf_bpe_put(out, s + i, len);
    else vkf_bpe_put(out, "\xEF\xBF\xBD", 3);
    if (!complete && hold && i + len == n && s[i] >= 0xC2) *held = len;
    i += len;
  }
}

static int byte_token(const char *t, size_t n, uint8_t *out) {
  if (n != 6 || memcmp(t, "<0x", 3) || t[5] != '>') return 0;
  unsigned v = 0;
  for (int i = 3; i < 5; i++) {
    char c = t[i];
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                            : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (d < 0) return 0;
    v = v * 16 + (unsigned)d;
  }
  *out = (uint8_t)v;
  return 1;
}

static void replace_all(const char *s, size_t n, const char *from, const char *to,
                        vkf_bpe_words *out) {
  size_t fn = strlen(from), tn = strlen(to);
  for (size_t i = 0; i < n;) {
    if (i + fn <= n && !memcmp(s + i, from, fn)) {
      vkf_bpe_put(out, to, tn);
      i += fn;
    } else {
      vkf_bpe_put(out, s + i, 1);
      i++;
    }
  }
}

/* tokenizers' decoders::wordpiece::cleanup: the spaces a word-per-token join leaves before
 * punctuation and English contractions, removed in this order, each over the whole token. */
static void cleanup(const char *s, size_t n, vkf_bpe_words *out) {
  static const char *const rules[][2] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},   {" ,", ","},   {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"},
      {" 're", "'re"}};
  vkf_bpe_words a = {0}, b = {0};
  vkf_bpe_put(&a, s, n);
  for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
    b.size = 0;
    replace_all(a.data, a.size, rules[r][0], rules[r][1], &b);
    vkf_bpe_words t = a;
    a = b, b = t;
  }
  vkf_bpe_put(out, a.data, a.size);
  out->failed |= a.failed | b.failed;
  vkf_bpe_words_free(&a);
  vkf_bpe_words_free(&b);
}

/* The decoders that change each token on its own: WordPiece, BPEDecoder, CTC. */
static void per_token(const vkf_bpe_dec *d, const vkf_bpe_words *in, vkf_bpe_words *out) {
  vkf_bpe_words tmp = {0};
  for (size_t t = 0; t < in->count; t++) {
    const char *s = in->data + vkf_bpe_word_start(in, t);
    size_t n = in->ends[t] - vkf_bpe_word_start(in, t);
    tmp.size = 0;
    if (d->kind == VKF_BPE_DEC_WORD_PIECE) {
      size_t p = strlen(d->from);
      if (t && n >= p && !memcmp(s, d->from, p)) s += p, n -= p; /* glued to the previous one */
      else if (t) vkf_bpe_put(&tmp, " ", 1);
      vkf_bpe_put(&tmp, s, n);
    } else if (d->kind == VKF_BPE_DEC_BPE) {
      replace_all(s, n, d->from, t + 1 == in->count ? "" : " ", &tmp);
    } else { /* CTC: a repeat of the previous token is dropped, then the pad token removed */
      const char *ps = t ? in->data + vkf_bpe_word_start(in, t - 1) : NULL;
      if (ps && (size_t)(in->ends[t - 1] - vkf_bpe_word_start(in, t - 1)) == n && !memcmp(ps, s, n))
        continue;
      if (*d->from) replace_all(s, n, d->from, "", &tmp);
      else vkf_bpe_put(&tmp, s, n);
    }
    if (d->cleanup) {
      vkf_bpe_words clean = {0};
      cleanup(tmp.data ? tmp.data : "", tmp.size, &clean);
      tmp.size = 0;
      /* CTC's word delimiter becomes a space only with cleanup, as in tokenizers */
      if (d->kind == VKF_BPE_DEC_CTC) replace_all(clean.data ? clean.data : "", clean.size, d->to, " ", &tmp);
      else vkf_bpe_put(&tmp, clean.data, clean.size);
      tmp.failed |= clean.failed;
      vkf_bpe_words_free(&clean);
    }
    vkf_bpe_put(out, tmp.data, tmp.size);
    vkf_bpe_end_word(out); /* an empty token is gone: CTC drops them, the others never make one */
  }
  out->failed |= tmp.failed;
  vkf_bpe_words_free(&tmp);
}

/* One decoder step from `in` to `out`; *held is the count of raw bytes held at the list's end. */
static void step(const vkf_bpe_dec *d, const vkf_bpe_words *in, int hold, vkf_bpe_words *out,
                 size_t *held) {
  if (d->kind == VKF_BPE_DEC_BYTE_LEVEL) { /* one token: all bytes, lossily decoded */
    vkf_bpe_words bytes = {0};
    for (size_t t = 0; t < in->count; t++) {
      const char *s = in->data + vkf_bpe_word_start(in, t);
      size_t n = in->ends[t] - vkf_bpe_word_start(in, t), start = bytes.size;
      for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
        int byte = len ? vkf_bpe_cp_to_byte(cp) : -1;
        if (byte < 0) { /* a token with a character outside the map keeps its own bytes */
          bytes.size = start;
          vkf_bpe_put(&bytes, s, n);
          break;
        }
        uint8_t c = (uint8_t)byte;
        vkf_bpe_put(&bytes, &c, 1);
        i += len;
      }
    }
    *held = 0;
    lossy((const uint8_t *)bytes.data, bytes.size, hold, out, held);
    out->failed |= bytes.failed;
    vkf_bpe_end_word(out);
    vkf_bpe_words_free(&bytes);
    return;
  }
  if (d->kind == VKF_BPE_DEC_WORD_PIECE || d->kind == VKF_BPE_DEC_BPE || d->kind == VKF_BPE_DEC_CTC) {
    per_token(d, in, out);
    return;
  }
  if (d->kind == VKF_BPE_DEC_FUSE) {
    vkf_bpe_put(out, in->data, in->size);
    vkf_bpe_end_word(out);
    return;
  }
  vkf_bpe_words run = {0}; /* ByteFallback: bytes of consecutive <0xNN> tokens */
  size_t new_held = 0;
  for (size_t t = 0; t <= in->count; t++) {
    const char *s = t < in->count ? in->data + vkf_bpe_word_start(in, t) : "";
    size_t n = t < in->count ? in->ends[t] - vkf_bpe_word_start(in, t) : 0;
    uint8_t byte;
    if (d->kind == VKF_BPE_DEC_BYTE_FALLBACK && t < in->count && byte_token(s, n, &byte)) {
      vkf_bpe_put(&run, &byte, 1);
      continue;
    }
    if (run.size) {
      const uint8_t *r = (const uint8_t *)run.data;
      int valid = 1;
      for (size_t i = 0; i < run.size && valid;) {
        int complete;
        i += utf8_unit(r + i, run.size - i, &complete);
        valid = complete;
      }
      /* A run's bytes become text only as a whole (one invalid byte turns every byte of it into
       * U+FFFD), so a run at the end, which more ids may extend, is held whole. */
      if (hold && t == in->count && (valid || incomplete_tail(r, run.size))) {
        vkf_bpe_put(out, r, run.size);
        vkf_bpe_end_word(out);
        new_held = run.size;
      } else if (valid) {
        vkf_bpe_put(out, r, run.size);
        vkf_bpe_end_word(out);
      } else {
        for (size_t i = 0; i < run.size; i++) {
          vkf_bpe_put(out, "\xEF\xBF\xBD", 3);
          vkf_bpe_end_word(out);
        }
      }
      run.size = 0;
    }
    if (t == in->count) break;
    if (d->kind == VKF_BPE_DEC_BYTE_FALLBACK) {
      vkf_bpe_put(out, s, n);
    } else if (d->kind == VKF_BPE_DEC_REPLACE && d->re) {
      /* decoders::Replace with a Regex: every match becomes the content */
      vkf_regex_piece *ps;
      size_t count, tn = strlen(d->to);
      vkf_status st = vkf_regex_find_matches(d->re, s, n, &ps, &count);
      if (st) {
        out->failed |= vkf_status_code_of(st) == VKF_STATUS_OUT_OF_MEMORY ? 1 : VKF_BPE_FAILED_REGEX;
        vkf_status_free(st);
      }
      for (size_t i = 0; !st && i < count; i++) {
        if (ps[i].match) vkf_bpe_put(out, d->to, tn);
        else vkf_bpe_put(out, s + ps[i].start, ps[i].end - ps[i].start);
      }
      if (!st) free(ps);
    } else if (d->kind == VKF_BPE_DEC_REPLACE) {
      replace_all(s, n, d->from, d->to, out);
    } else if (d->kind == VKF_BPE_DEC_METASPACE) {
      size_t before = out->size;
      replace_all(s, n, d->from, d->to, out);
      if (t == 0 && d->add_prefix_space && out->size > before && out->data[before] == ' ') {
        memmove(out->data + before, out->data + before + 1, out->size - before - 1);
        out->size--;
      }
    } else { /* Strip: up to `start` leading and `stop` trailing copies of one character */
      size_t cn = strlen(d->strip), a = 0, z = n;
      for (size_t k = 0; k < d->start && a + cn <= z && !memcmp(s + a, d->strip, cn); k++) a += cn;
      for (size_t k = 0; k < d->stop && z >= a + cn && !memcmp(s + z - cn, d->strip, cn); k++) z -= cn;
      vkf_bpe_put(out, s + a, z - a);
    }
    vkf_bpe_end_word(out);
  }
  out->failed |= run.failed;
  vkf_bpe_words_free(&run);
  if (d->kind == VKF_BPE_DEC_BYTE_FALLBACK) *held = new_held ? new_held : *held;
}

vkf_status vkf_bpe_decode(const vkf_bpe *b, const int32_t *ids, size_t count, int skip_special,
                          int hold_tail, char **out_text, size_t *out_size, size_t *out_held_from) {
  *out_text = NULL;
  *out_size = 0;
  if (out_held_from) *out_held_from = 0;
  for (size_t i = 0; i < count; i++)
    if (ids[i] < 0 || (size_t)ids[i] >= b->token_count || !b->tokens[ids[i]])
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: id %d (position %zu) is not in the "
                             "vocabulary of %zu tokens", b->path, ids[i], i, b->token_count);
  vkf_bpe_words cur = {0};
  size_t kept = 0;
  for (size_t i = 0; i < count; i++) {
    if (skip_special && b->special[ids[i]]) continue;
    if (!b->dec_count && kept++) vkf_bpe_put(&cur, " ", 1); /* no decoder: joined by spaces */
    vkf_bpe_put(&cur, b->tokens[ids[i]], b->token_sizes[ids[i]]);
    if (b->dec_count) vkf_bpe_end_word(&cur);
  }
  vkf_bpe_end_word(&cur);
  size_t held = 0;
  for (size_t k = 0; k < b->dec_count && !cur.failed; k++) {
    vkf_bpe_words next = {0};
    step(&b->decs[k], &cur, hold_tail, &next, &held);
    next.failed |= cur.failed;
    vkf_bpe_words_free(&cur);
    cur = next;
  }
  vkf_bpe_put(&cur, "", 1);
  if (cur.failed) {
    vkf_bpe_words_free(&cur);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "decoding %zu ids", count);
  }
  free(cur.ends);
  *out_text = cur.data;
  *out_size = cur.size - 1;
  /* A later decoder can remove held bytes (Llama 2's Strip drops a leading space that a held
   * <0x20> run produced): never hold more than the text, or held_from wraps (found by fuzzing). */
  if (held > *out_size) held = *out_size;
  if (out_held_from) *out_held_from = *out_size - held;
  return VKF_OK;
}
