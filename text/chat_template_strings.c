/* Python's str semantics that chat templates rely on: str.isspace() (Unicode spaces included),
 * strip/lstrip/rstrip, split, replace, and the case changes (ASCII letters only), plus the small
 * helpers that turn C strings and buffers into arena values. */
#define _GNU_SOURCE /* memmem */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text/chat_template_internal.h"

vkf_status ct_str_value(ct_ctx *c, const char *s, size_t n, ct_value *out) {
  char *p = ct_alloc(c->arena, n + 1);
  if (!p) return ct_oom();
  if (n) memcpy(p, s, n);
  p[n] = 0;
  *out = ct_string(p, n);
  return VKF_OK;
}
vkf_status ct_buf_value(ct_ctx *c, ct_buf *b, ct_value *out) {
  if (b->failed) {
    free(b->data);
    return ct_error(NULL, VKF_STATUS_INVALID_ARGUMENT, "string longer than %d MiB", CT_MAX_OUTPUT >> 20);
  }
  vkf_status s = ct_str_value(c, b->data ? b->data : "", b->size, out);
  free(b->data);
  return s;
}

/* Python's str.isspace() for the code point starting at s[i]; *len gets its byte length. */
bool ct_space_at(const char *s, size_t n, size_t i, size_t *len) {
  unsigned char ch = (unsigned char)s[i];
  *len = 1;
  if (ch == ' ' || (ch >= 0x09 && ch <= 0x0d) || (ch >= 0x1c && ch <= 0x1f)) return true;
  if (ch == 0xc2 && i + 1 < n) {
    *len = 2;
    return (unsigned char)s[i + 1] == 0x85 || (unsigned char)s[i + 1] == 0xa0;
  }
  if (ch == 0xe1 && i + 2 < n && (unsigned char)s[i + 1] == 0x9a && (unsigned char)s[i + 2] == 0x80)
    return *len = 3, true;
  if (ch == 0xe2 && i + 2 < n) {
    unsigned char b1 = (unsigned char)s[i + 1], b2 = (unsigned char)s[i + 2];
    *len = 3;
    if (b1 == 0x80 && (b2 <= 0x8a || b2 == 0xa8 || b2 == 0xa9 || b2 == 0xaf)) return true;
    if (b1 == 0x81 && b2 == 0x9f) return true;
  }
  if (ch == 0xe3 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 && (unsigned char)s[i + 2] == 0x80)
    return *len = 3, true;
  *len = 1;
  return false;
}

/* The byte length of the code point that ends at s[end-1], and whether it is a space. */
static bool space_before(const char *s, size_t end, size_t *len) {
  size_t start = end - 1;
  while (start > 0 && ((unsigned char)s[start] & 0xc0) == 0x80 && end - start < 4) start--;
  size_t l;
  bool sp = ct_space_at(s, end, start, &l);
  if (sp && start + l == end) return *len = l, true;
  *len = end - start;
  return false;
}

static bool in_chars(ct_str chars, const char *s, size_t len) {
  for (size_t i = 0; i + len <= chars.n;) {
    size_t l = 1;
    unsigned char ch = (unsigned char)chars.s[i];
    if (ch >= 0xf0) l = 4; else if (ch >= 0xe0) l = 3; else if (ch >= 0xc0) l = 2;
    if (l == len && !memcmp(chars.s + i, s, len)) return true;
    i += l;
  }
  return false;
}

size_t ct_cp_len_at(const char *s, size_t n, size_t i) {
  size_t l = 1;
  while (i + l < n && ((unsigned char)s[i + l] & 0xc0) == 0x80 && l < 4) l++;
  return l;
}

/* str.strip([chars]) / lstrip / rstrip; chars NULL: whitespace. */
size_t ct_find(ct_str hay, ct_str needle, size_t from) {
  if (from > hay.n || needle.n > hay.n - from) return SIZE_MAX;
  if (needle.n == 0) return from;
  const char *hit = memmem(hay.s + from, hay.n - from, needle.s, needle.n);
  return hit ? (size_t)(hit - hay.s) : SIZE_MAX;
}

ct_str ct_strip(ct_str s, const ct_str *chars, bool left, bool right) {
  if (left)
    while (s.n) {
      size_t l;
      bool hit = chars ? (l = ct_cp_len_at(s.s, s.n, 0), in_chars(*chars, s.s, l)) : ct_space_at(s.s, s.n, 0, &l);
      if (!hit) break;
      s.s += l;
      s.n -= l;
    }
  if (right)
    while (s.n) {
      size_t l;
      bool hit = space_before(s.s, s.n, &l);
      if (chars) hit = in_chars(*chars, s.s + s.n - l, l);
      if (!hit) break;
      s.n -= l;
    }
  return s;
}

static char up(char ch) { return ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch; }
static char low(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch; }
static bool is_alpha(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }


vkf_status ct_change_case(ct_ctx *c, ct_str s, case_kind k, ct_value *out) {
  char *p = ct_alloc(c->arena, s.n + 1);
  if (!p) return ct_oom();
  bool word_start = true;
  for (size_t i = 0; i < s.n; i++) {
    char ch = s.s[i];
    switch (k) {
    case CASE_UPPER: p[i] = up(ch); break;
    case CASE_LOWER: p[i] = low(ch); break;
    case CASE_CAPITALIZE: p[i] = i == 0 ? up(ch) : low(ch); break;
    case CASE_TITLE_METHOD: /* str.title: a letter after a non-letter starts a word */
      p[i] = word_start ? up(ch) : low(ch);
      word_start = !is_alpha(ch) && !((unsigned char)ch & 0x80);
      break;
    case CASE_TITLE_FILTER: /* jinja2's title: words start after spaces, - ( { [ < */
      p[i] = word_start ? up(ch) : low(ch);
      word_start = ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
                   ch == '\v' || ch == '-' || ch == '(' || ch == '{' || ch == '[' || ch == '<';
      break;
    }
  }
  p[s.n] = 0;
  *out = ct_string(p, s.n);
  return VKF_OK;
}

vkf_status ct_replace(ct_ctx *c, ct_str s, ct_str old, ct_str new_, int64_t count, ct_value *out) {
  ct_buf b = {.limit = CT_MAX_OUTPUT};
  size_t i = 0;
  int64_t done = 0;
  if (old.n == 0) { /* Python inserts `new` between every character and at both ends */
    for (size_t k = 0; k <= s.n; k += k < s.n ? ct_cp_len_at(s.s, s.n, k) : 1) {
      if (count < 0 || done < count) ct_buf_put(&b, new_.s, new_.n), done++;
      if (k < s.n) ct_buf_put(&b, s.s + k, ct_cp_len_at(s.s, s.n, k));
      if (b.failed) break;
    }
    return ct_buf_value(c, &b, out);
  }
  while (i < s.n && !b.failed) {
    size_t hit = count < 0 || done < count ? ct_find(s, old, i) : SIZE_MAX;
    if (hit == SIZE_MAX) {
      ct_buf_put(&b, s.s + i, s.n - i);
      break;
    }
    ct_buf_put(&b, s.s + i, hit - i);
    ct_buf_put(&b, new_.s, new_.n);
    i = hit + old.n;
    done++;
  }
  return ct_buf_value(c, &b, out);
}

/* str.split(sep=None, maxsplit=-1) */
vkf_status ct_split(ct_ctx *c, ct_str s, const ct_value *sep, int64_t maxsplit, ct_value *out) {
  ct_list *l = ct_list_new(c->arena, 0);
  if (!l) return ct_oom();
  if (sep && sep->kind == CT_STR) {
    ct_str d = sep->u.s;
    size_t i = 0, start = 0;
    int64_t done = 0;
    while (maxsplit < 0 || done < maxsplit) {
      size_t hit = ct_find(s, d, i);
      if (hit == SIZE_MAX) break;
      if (!ct_list_push(c->arena, l, ct_string(s.s + start, hit - start))) return ct_oom();
      i = start = hit + d.n;
      done++;
    }
    if (!ct_list_push(c->arena, l, ct_string(s.s + start, s.n - start))) return ct_oom();
  } else {
    size_t i = 0;
    int64_t done = 0;
    for (;;) {
      size_t len;
      while (i < s.n && ct_space_at(s.s, s.n, i, &len)) i += len;
      if (i >= s.n) break;
      if (maxsplit >= 0 && done >= maxsplit) {
        ct_str rest = ct_strip((ct_str){s.s + i, s.n - i}, NULL, false, true);
        if (!ct_list_push(c->arena, l, ct_string(rest.s, rest.n))) return ct_oom();
        break;
      }
      size_t start = i;
      while (i < s.n && !ct_space_at(s.s, s.n, i, &len)) i += ct_cp_len_at(s.s, s.n, i);
      if (!ct_list_push(c->arena, l, ct_string(s.s + start, i - start))) return ct_oom();
      done++;
    }
  }
  *out = (ct_value){.kind = CT_LIST, .u.list = l};
  return VKF_OK;
}
