/* The tojson filter as transformers defines it: json.dumps(x, ensure_ascii=False, indent=None,
 * separators=None, sort_keys=False), Python's own encoder (not jinja2's HTML-safe one), so the
 * separators, escapes and float spellings are json.dumps's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/chat_template_value.h"

static void write_json_string(ct_buf *b, ct_str s, bool ensure_ascii) {
  ct_buf_putc(b, '"');
  for (size_t i = 0; i < s.n; i++) {
    unsigned char ch = (unsigned char)s.s[i];
    char esc[16];
    switch (ch) {
    case '"': ct_buf_puts(b, "\\\""); continue;
    case '\\': ct_buf_puts(b, "\\\\"); continue;
    case '\n': ct_buf_puts(b, "\\n"); continue;
    case '\r': ct_buf_puts(b, "\\r"); continue;
    case '\t': ct_buf_puts(b, "\\t"); continue;
    case '\b': ct_buf_puts(b, "\\b"); continue;
    case '\f': ct_buf_puts(b, "\\f"); continue;
    default: break;
    }
    if (ch < 0x20 || (ensure_ascii && ch == 0x7f)) {
      snprintf(esc, sizeof esc, "\\u%04x", ch);
      ct_buf_puts(b, esc);
    } else if (ch < 0x80 || !ensure_ascii) {
      ct_buf_putc(b, (char)ch);
    } else {
      /* decode one UTF-8 sequence; a malformed byte is written as its own code point */
      uint32_t cp = ch;
      size_t len = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc0 ? 2 : 1;
      if (len > 1 && i + len <= s.n) {
        cp = ch & (0x3f >> (len - 1));
        for (size_t k = 1; k < len; k++) cp = (cp << 6) | ((unsigned char)s.s[i + k] & 0x3f);
        i += len - 1;
      }
      if (cp >= 0x10000) {
        cp -= 0x10000;
        snprintf(esc, sizeof esc, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
      } else {
        snprintf(esc, sizeof esc, "\\u%04x", cp);
      }
      ct_buf_puts(b, esc);
    }
  }
  ct_buf_putc(b, '"');
}

static void newline_indent(ct_buf *b, int indent, int level) {
  ct_buf_putc(b, '\n');
  for (int i = 0; i < indent * level; i++) ct_buf_putc(b, ' ');
}

static int key_cmp(const void *x, const void *y) {
  const ct_str *a = *(const ct_str *const *)x, *b = *(const ct_str *const *)y;
  size_t n = a->n < b->n ? a->n : b->n;
  int c = n ? memcmp(a->s, b->s, n) : 0;
  return c ? c : (a->n > b->n) - (a->n < b->n);
}

static vkf_status write_json(ct_buf *b, ct_value v, bool ensure_ascii, int indent, ct_str item_sep,
                             ct_str key_sep, bool sort_keys, int level) {
  if (level > CT_MAX_DEPTH)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "tojson: value nests deeper than %d",
                           CT_MAX_DEPTH);
  char tmp[32];
  switch (v.kind) {
  case CT_NONE: ct_buf_puts(b, "null"); return VKF_OK;
  case CT_BOOL: ct_buf_puts(b, v.u.b ? "true" : "false"); return VKF_OK;
  case CT_INT:
    snprintf(tmp, sizeof tmp, "%lld", (long long)v.u.i);
    ct_buf_puts(b, tmp);
    return VKF_OK;
  case CT_FLOAT:
    if (v.u.f != v.u.f)
      ct_buf_puts(b, "NaN");
    else if (v.u.f > 1.7976931348623157e308)
      ct_buf_puts(b, "Infinity");
    else if (v.u.f < -1.7976931348623157e308)
      ct_buf_puts(b, "-Infinity");
    else
      ct_write_float(b, v.u.f);
    return VKF_OK;
  case CT_STR: write_json_string(b, v.u.s, ensure_ascii); return VKF_OK;
  case CT_LIST: {
    const ct_list *l = v.u.list;
    if (l->n == 0) return ct_buf_puts(b, "[]"), VKF_OK;
    ct_buf_putc(b, '[');
    for (size_t i = 0; i < l->n; i++) {
      if (i) ct_buf_put(b, item_sep.s, item_sep.n);
      if (indent >= 0) newline_indent(b, indent, level + 1);
      VKF_RETURN_IF_ERROR(write_json(b, l->items[i], ensure_ascii, indent, item_sep, key_sep,
                                     sort_keys, level + 1));
    }
    if (indent >= 0) newline_indent(b, indent, level);
    ct_buf_putc(b, ']');
    return VKF_OK;
  }
  case CT_DICT: {
    const ct_dict *d = v.u.dict;
    if (d->ns) break;
    if (d->n == 0) return ct_buf_puts(b, "{}"), VKF_OK;
    const ct_str **order = malloc(d->n * sizeof *order);
    if (!order) return ct_oom();
    for (size_t i = 0; i < d->n; i++) order[i] = &d->keys[i];
    if (sort_keys) qsort(order, d->n, sizeof *order, key_cmp);
    ct_buf_putc(b, '{');
    vkf_status s = VKF_OK;
    for (size_t i = 0; i < d->n && !s; i++) {
      if (i) ct_buf_put(b, item_sep.s, item_sep.n);
      if (indent >= 0) newline_indent(b, indent, level + 1);
      write_json_string(b, *order[i], ensure_ascii);
      ct_buf_put(b, key_sep.s, key_sep.n);
      size_t k = (size_t)(order[i] - d->keys);
      s = write_json(b, d->vals[k], ensure_ascii, indent, item_sep, key_sep, sort_keys, level + 1);
    }
    free(order);
    VKF_RETURN_IF_ERROR(s);
    if (indent >= 0) newline_indent(b, indent, level);
    ct_buf_putc(b, '}');
    return VKF_OK;
  }
  default: break;
  }
  return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "Object of type %s is not JSON serializable",
                         v.kind == CT_DICT ? "Namespace" : ct_kind_name(v.kind));
}

vkf_status ct_write_json(ct_buf *b, ct_value v, bool ensure_ascii, int indent, ct_str item_sep,
                         ct_str key_sep, bool sort_keys, int depth) {
  return write_json(b, v, ensure_ascii, indent, item_sep, key_sep, sort_keys, depth);
}
