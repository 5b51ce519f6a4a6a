/* Chat template calls: the str and dict methods templates call (message.content.strip(),
 * tool.items(), ...) and the globals: jinja2's range (bounded as its sandbox bounds it),
 * namespace and dict, transformers' raise_exception and strftime_now. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text/chat_template_internal.h"

static const char *const STR_METHODS[] = {"strip", "lstrip", "rstrip", "split", "startswith",
                                          "endswith", "upper", "lower", "title", "capitalize",
                                          "replace", "find", "count", "join", NULL};
static const char *const DICT_METHODS[] = {"items", "keys", "values", "get", NULL};
static const char *const GLOBALS[] = {"raise_exception", "range", "namespace", "strftime_now",
                                      "dict", NULL};

static bool in_table(const char *const *t, ct_str name) {
  for (; *t; t++)
    if (ct_str_eq(name, *t)) return true;
  return false;
}
bool ct_is_global_func(ct_str name) { return in_table(GLOBALS, name); }
bool ct_has_method(ct_value recv, ct_str name) {
  if (recv.kind == CT_STR) return in_table(STR_METHODS, name);
  if (recv.kind == CT_DICT && !recv.u.dict->ns) return in_table(DICT_METHODS, name);
  return false;
}

vkf_status ct_call_method(ct_ctx *c, const ct_node *n, ct_value recv, ct_str name, ct_args *a,
                          ct_value *out) {
  ct_node mn = *n;
  mn.str = name;
  if (recv.kind == CT_DICT) {
    const ct_dict *d = recv.u.dict;
    if (ct_str_eq(name, "items")) return ct_items(c, &mn, recv, out);
    if (ct_str_eq(name, "get")) {
      const ct_value *k = ct_arg(a, 0, NULL), *def = ct_arg(a, 1, NULL);
      if (!k) return ct_bad_arg(c, &mn, "needs a key");
      const ct_value *v = k->kind == CT_STR ? ct_dict_get(d, k->u.s.s, k->u.s.n) : NULL;
      *out = v ? *v : def ? *def : ct_none();
      return VKF_OK;
    }
    ct_list *l = ct_list_new(c->arena, d->n);
    if (!l) return ct_oom();
    for (size_t i = 0; i < d->n; i++)
      ct_list_push(c->arena, l, name.s[0] == 'k' ? ct_string(d->keys[i].s, d->keys[i].n) : d->vals[i]);
    *out = (ct_value){.kind = CT_LIST, .u.list = l};
    return VKF_OK;
  }
  ct_str s = recv.u.s;
  const ct_value *x = ct_arg(a, 0, NULL), *y = ct_arg(a, 1, NULL);
  if (ct_str_eq(name, "strip") || ct_str_eq(name, "lstrip") || ct_str_eq(name, "rstrip")) {
    if (x && x->kind != CT_STR && x->kind != CT_NONE) return ct_bad_arg(c, &mn, "chars must be a string");
    ct_str r = ct_strip(s, x && x->kind == CT_STR ? &x->u.s : NULL, name.s[0] != 'r', name.s[0] != 'l');
    return *out = ct_string(r.s, r.n), VKF_OK;
  }
  if (ct_str_eq(name, "split")) {
    const ct_value *sep = ct_arg(a, 0, "sep"), *maxs = ct_arg(a, 1, "maxsplit");
    if (sep && sep->kind == CT_STR && sep->u.s.n == 0) return ct_bad_arg(c, &mn, "empty separator");
    if (sep && sep->kind != CT_STR && sep->kind != CT_NONE) return ct_bad_arg(c, &mn, "sep must be a string");
    return ct_split(c, s, sep, maxs && maxs->kind == CT_INT ? maxs->u.i : -1, out);
  }
  if (ct_str_eq(name, "startswith") || ct_str_eq(name, "endswith")) {
    bool start = name.s[0] == 's';
    if (!x) return ct_bad_arg(c, &mn, "needs an argument");
    const ct_value *cands = x;
    size_t nc = 1;
    if (x->kind == CT_LIST) cands = x->u.list->items, nc = x->u.list->n;
    *out = ct_bool(false);
    for (size_t i = 0; i < nc; i++) {
      if (cands[i].kind != CT_STR) return ct_bad_arg(c, &mn, "the prefix must be a string");
      ct_str p = cands[i].u.s;
      if (p.n <= s.n && (p.n == 0 || !memcmp(start ? s.s : s.s + s.n - p.n, p.s, p.n))) *out = ct_bool(true);
    }
    return VKF_OK;
  }
  if (ct_str_eq(name, "upper")) return ct_change_case(c, s, CASE_UPPER, out);
  if (ct_str_eq(name, "lower")) return ct_change_case(c, s, CASE_LOWER, out);
  if (ct_str_eq(name, "title")) return ct_change_case(c, s, CASE_TITLE_METHOD, out);
  if (ct_str_eq(name, "capitalize")) return ct_change_case(c, s, CASE_CAPITALIZE, out);
  if (ct_str_eq(name, "replace")) {
    VKF_RETURN_IF_ERROR(ct_check_str(&mn, x, "old"));
    VKF_RETURN_IF_ERROR(ct_check_str(&mn, y, "new"));
    const ct_value *count = ct_arg(a, 2, "count");
    return ct_replace(c, s, x->u.s, y->u.s, count && count->kind == CT_INT ? count->u.i : -1, out);
  }
  if (ct_str_eq(name, "find") || ct_str_eq(name, "count")) {
    VKF_RETURN_IF_ERROR(ct_check_str(&mn, x, "the substring"));
    ct_str p = x->u.s;
    int64_t found = -1, count = 0;
    if (p.n == 0) {
      found = 0;
      count = (int64_t)ct_utf8_len(s.s, s.n) + 1;
    } else {
      for (size_t i = ct_find(s, p, 0); i != SIZE_MAX; i = ct_find(s, p, i + p.n)) {
        if (found < 0) found = (int64_t)ct_utf8_len(s.s, i);
        count++;
      }
    }
    return *out = ct_int(name.s[0] == 'f' ? found : count), VKF_OK;
  }
  if (ct_str_eq(name, "join")) {
    if (!x) return ct_bad_arg(c, &mn, "needs an iterable");
    const ct_list *l;
    VKF_RETURN_IF_ERROR(ct_to_list(c, &mn, *x, &l));
    for (size_t i = 0; i < l->n; i++)
      if (l->items[i].kind != CT_STR) return ct_bad_arg(c, &mn, "sequence item is not a string");
    return ct_join(c, &mn, l, s, NULL, out);
  }
  return ct_error(n, VKF_STATUS_INTERNAL, "method '%.*s' has no implementation", (int)name.n, name.s);
}

vkf_status ct_call_global(ct_ctx *c, const ct_node *n, ct_str name, ct_args *a, ct_value *out) {
  if (ct_str_eq(name, "raise_exception")) {
    const ct_value *m = ct_arg(a, 0, "message");
    ct_str msg = {"", 0};
    if (m && !ct_to_str(c->arena, *m, &msg)) return ct_oom();
    /* a status message is one line: control characters are written as \n, \x01, ... */
    ct_buf b = {.limit = 4096};
    for (size_t i = 0; i < msg.n && i < 1024; i++) {
      unsigned char ch = (unsigned char)msg.s[i];
      char esc[8];
      if (ch == '\n') ct_buf_puts(&b, "\\n");
      else if (ch < 0x20 || ch == 0x7f) snprintf(esc, sizeof esc, "\\x%02x", ch), ct_buf_puts(&b, esc);
      else ct_buf_putc(&b, (char)ch);
    }
    vkf_status e = ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "raise_exception: %.*s", (int)b.size,
                            b.data ? b.data : "");
    free(b.data);
    return e;
  }
  if (ct_str_eq(name, "range")) {
    int64_t v[3] = {0, 0, 1};
    if (a->n_pos < 1 || a->n_pos > 3 || a->n_kw) return ct_bad_arg(c, n, "range takes 1 to 3 integers");
    for (size_t i = 0; i < a->n_pos; i++) {
      ct_value x = a->pos[i];
      if (x.kind != CT_INT && x.kind != CT_BOOL) return ct_bad_arg(c, n, "range takes integers");
      v[a->n_pos == 1 ? 1 : i] = x.kind == CT_INT ? x.u.i : x.u.b;
    }
    if (v[2] == 0) return ct_bad_arg(c, n, "range() arg 3 must not be zero");
    long double count = v[2] > 0 ? ((long double)v[1] - v[0] + v[2] - 1) / v[2]
                                 : ((long double)v[0] - v[1] - v[2] - 1) / -v[2];
    if (count < 0) count = 0;
    if (count > CT_MAX_RANGE)
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT,
                      "range too big: the sandbox blocks ranges larger than MAX_RANGE (%d)", CT_MAX_RANGE);
    ct_list *l = ct_list_new(c->arena, (size_t)count);
    if (!l) return ct_oom();
    for (int64_t i = v[0]; v[2] > 0 ? i < v[1] : i > v[1]; i += v[2]) ct_list_push(c->arena, l, ct_int(i));
    *out = (ct_value){.kind = CT_LIST, .u.list = l};
    return VKF_OK;
  }
  if (ct_str_eq(name, "namespace") || ct_str_eq(name, "dict")) {
    ct_dict *d = ct_dict_new(c->arena, a->n_kw);
    if (!d) return ct_oom();
    d->ns = name.s[0] == 'n';
    for (size_t i = 0; i < a->n_pos; i++) { /* namespace({'a': 1}) / dict({...}) */
      if (a->pos[i].kind != CT_DICT) return ct_bad_arg(c, n, "positional arguments must be mappings");
      const ct_dict *src = a->pos[i].u.dict;
      for (size_t k = 0; k < src->n; k++)
        if (!ct_dict_set(c->arena, d, src->keys[k], src->vals[k])) return ct_oom();
    }
    for (size_t i = 0; i < a->n_kw; i++)
      if (!ct_dict_set(c->arena, d, a->kw_names[i], a->kw[i])) return ct_oom();
    *out = (ct_value){.kind = CT_DICT, .u.dict = d};
    return VKF_OK;
  }
  if (ct_str_eq(name, "strftime_now")) {
    const ct_value *fmt = ct_arg(a, 0, "format");
    VKF_RETURN_IF_ERROR(ct_check_str(n, fmt, "the format"));
    char f[256], buf[512];
    if (fmt->u.s.n >= sizeof f) return ct_bad_arg(c, n, "format too long");
    memcpy(f, fmt->u.s.s, fmt->u.s.n);
    f[fmt->u.s.n] = 0;
    time_t t = (time_t)c->now;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) return ct_bad_arg(c, n, "time out of range");
    size_t len = f[0] ? strftime(buf, sizeof buf, f, &tm) : 0;
    return ct_str_value(c, buf, len, out);
  }
  return ct_error(n, VKF_STATUS_INTERNAL, "global '%.*s' has no implementation", (int)name.n, name.s);
}
