/* Chat template filters and tests, as jinja2 defines them (transformers' tojson included); the
 * two tables are the subset's contract, checked by the parser. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text/chat_template_internal.h"

static const char *const FILTERS[] = {
    "trim",  "upper",      "lower",  "length",     "count", "tojson", "string",  "first",
    "last",  "join",       "default", "d",         "replace", "list", "items",   "capitalize",
    "title", "int",        "float",  "selectattr", "rejectattr", "map", "indent", "safe",
    "abs",   "reverse",    "round",  "unique",     "min",   "max",    "sum",     "select",
    "reject", NULL};
static const char *const TESTS[] = {
    "defined", "undefined", "none",   "string", "mapping", "iterable", "number", "sequence",
    "boolean", "true",      "false",  "integer", "float",  "equalto",  "eq",     "ne",
    "lt",      "gt",        "ge",     "le",     "in",      "odd",      "even",   "divisibleby",
    "callable", "lower",    "upper",  "sameas", NULL};
static bool in_table(const char *const *t, ct_str name) {
  for (; *t; t++)
    if (ct_str_eq(name, *t)) return true;
  return false;
}
bool ct_filter_known(ct_str name) { return in_table(FILTERS, name); }
bool ct_test_known(ct_str name) { return in_table(TESTS, name); }
/* ---- helpers ---- */

vkf_status ct_bad_arg(ct_ctx *c, const ct_node *n, const char *what) {
  (void)c;
  return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "%.*s: %s", (int)n->str.n, n->str.s, what);
}

/* Positional `i` or keyword `name`, else NULL. */
const ct_value *ct_arg(const ct_args *a, size_t i, const char *name) {
  if (i < a->n_pos) return &a->pos[i];
  for (size_t k = 0; k < a->n_kw; k++)
    if (name && ct_str_eq(a->kw_names[k], name)) return &a->kw[k];
  return NULL;
}

vkf_status ct_to_list(ct_ctx *c, const ct_node *n, ct_value v, const ct_list **out) {
  if (v.kind == CT_LIST) return *out = v.u.list, VKF_OK;
  ct_list *l = ct_list_new(c->arena, 0);
  if (!l) return ct_oom();
  if (v.kind == CT_UNDEF) return *out = l, VKF_OK;
  if (v.kind == CT_DICT && !v.u.dict->ns) {
    for (size_t i = 0; i < v.u.dict->n; i++)
      if (!ct_list_push(c->arena, l, ct_string(v.u.dict->keys[i].s, v.u.dict->keys[i].n))) return ct_oom();
    return *out = l, VKF_OK;
  }
  if (v.kind == CT_STR) {
    for (size_t i = 0; i < v.u.s.n;) {
      size_t len = ct_cp_len_at(v.u.s.s, v.u.s.n, i);
      if (!ct_list_push(c->arena, l, ct_string(v.u.s.s + i, len))) return ct_oom();
      i += len;
    }
    return *out = l, VKF_OK;
  }
  return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "'%s' object is not iterable", ct_kind_name(v.kind));
}

vkf_status ct_items(ct_ctx *c, const ct_node *n, ct_value v, ct_value *out) {
  if (v.kind == CT_UNDEF) {
    ct_list *l = ct_list_new(c->arena, 0);
    if (!l) return ct_oom();
    return *out = (ct_value){.kind = CT_LIST, .u.list = l}, VKF_OK;
  }
  if (v.kind != CT_DICT || v.u.dict->ns)
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "items: expected a mapping, got %s", ct_kind_name(v.kind));
  const ct_dict *d = v.u.dict;
  ct_list *l = ct_list_new(c->arena, d->n);
  if (!l) return ct_oom();
  for (size_t i = 0; i < d->n; i++) {
    ct_list *pair = ct_list_new(c->arena, 2);
    if (!pair) return ct_oom();
    pair->tuple = true;
    ct_list_push(c->arena, pair, ct_string(d->keys[i].s, d->keys[i].n));
    ct_list_push(c->arena, pair, d->vals[i]);
    ct_list_push(c->arena, l, (ct_value){.kind = CT_LIST, .u.list = pair});
  }
  *out = (ct_value){.kind = CT_LIST, .u.list = l};
  return VKF_OK;
}

/* Reads the dotted attribute path `attr` ("a.b", digits index lists) of `v`, as jinja2's
 * make_attrgetter. */
static ct_value attr_path(ct_value v, ct_str attr) {
  size_t i = 0;
  while (i <= attr.n) {
    size_t e = i;
    while (e < attr.n && attr.s[e] != '.') e++;
    ct_str part = {attr.s + i, e - i};
    if (v.kind == CT_DICT) {
      const ct_value *x = ct_dict_get(v.u.dict, part.s, part.n);
      v = x ? *x : ct_undef("missing attribute", 17);
    } else if (v.kind == CT_LIST && part.n && part.s[0] >= '0' && part.s[0] <= '9') {
      size_t k = (size_t)strtoull(part.s, NULL, 10);
      v = k < v.u.list->n ? v.u.list->items[k] : ct_undef("missing item", 12);
    } else {
      v = ct_undef("missing attribute", 17);
    }
    i = e + 1;
  }
  return v;
}

vkf_status ct_check_str(const ct_node *n, const ct_value *v, const char *what) {
  if (!v || v->kind != CT_STR)
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "%.*s: %s must be a string", (int)n->str.n, n->str.s, what);
  return VKF_OK;
}

static vkf_status do_tojson(ct_ctx *c, const ct_node *n, ct_value v, const ct_args *a, ct_value *out) {
  const ct_value *ea = ct_arg(a, 0, "ensure_ascii"), *ind = ct_arg(a, 1, "indent"),
                 *sep = ct_arg(a, 2, "separators"), *sk = ct_arg(a, 3, "sort_keys");
  int indent = -1;
  if (ind && ind->kind == CT_INT) {
    if (ind->u.i < 0 || ind->u.i > 64) return ct_bad_arg(c, n, "indent must be 0..64");
    indent = (int)ind->u.i;
  } else if (ind && ind->kind == CT_STR) {
    return ct_bad_arg(c, n, "a string indent is not supported");
  }
  ct_str item_sep = indent >= 0 ? (ct_str){",", 1} : (ct_str){", ", 2}, key_sep = {": ", 2};
  if (sep && sep->kind == CT_LIST) {
    if (sep->u.list->n != 2 || sep->u.list->items[0].kind != CT_STR || sep->u.list->items[1].kind != CT_STR)
      return ct_bad_arg(c, n, "separators must be two strings");
    item_sep = sep->u.list->items[0].u.s;
    key_sep = sep->u.list->items[1].u.s;
  }
  ct_buf b = {.limit = CT_MAX_OUTPUT};
  vkf_status s = ct_write_json(&b, v, ea && ct_truthy(*ea), indent, item_sep, key_sep,
                               sk && ct_truthy(*sk), 0);
  if (s) {
    free(b.data);
    vkf_status e = ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "tojson: %s", vkf_status_message(s));
    vkf_status_free(s);
    return e;
  }
  return ct_buf_value(c, &b, out);
}

static vkf_status to_int(ct_ctx *c, const ct_node *n, ct_value v, const ct_args *a, ct_value *out) {
  const ct_value *def = ct_arg(a, 0, "default");
  int64_t d = def && def->kind == CT_INT ? def->u.i : 0;
  (void)c;
  switch (v.kind) {
  case CT_INT: *out = v; return VKF_OK;
  case CT_BOOL: *out = ct_int(v.u.b); return VKF_OK;
  case CT_FLOAT:
    *out = ct_int(isfinite(v.u.f) && fabs(v.u.f) < 9.2e18 ? (int64_t)v.u.f : d);
    return VKF_OK;
  case CT_STR: {
    ct_str s = ct_strip(v.u.s, NULL, true, true);
    char buf[64];
    if (s.n == 0 || s.n >= sizeof buf) return *out = ct_int(d), VKF_OK;
    size_t k = 0;
    for (size_t i = 0; i < s.n; i++)
      if (s.s[i] != '_') buf[k++] = s.s[i];
    buf[k] = 0;
    char *end;
    long long x = strtoll(buf, &end, 10);
    if (*end == 0) return *out = ct_int(x), VKF_OK;
    double f = strtod(buf, &end);
    *out = ct_int(*end == 0 && isfinite(f) && fabs(f) < 9.2e18 ? (int64_t)f : d);
    return VKF_OK;
  }
  default: *out = ct_int(d); return VKF_OK;
  }
  (void)n;
}

static vkf_status to_float(ct_value v, const ct_args *a, ct_value *out) {
  const ct_value *def = ct_arg(a, 0, "default");
  double d = def ? ct_as_double(*def) : 0.0;
  switch (v.kind) {
  case CT_INT: case CT_BOOL: case CT_FLOAT: *out = ct_float(ct_as_double(v)); return VKF_OK;
  case CT_STR: {
    ct_str s = ct_strip(v.u.s, NULL, true, true);
    char buf[64];
    if (s.n == 0 || s.n >= sizeof buf) return *out = ct_float(d), VKF_OK;
    memcpy(buf, s.s, s.n);
    buf[s.n] = 0;
    char *end;
    double f = strtod(buf, &end);
    *out = ct_float(*end == 0 ? f : d);
    return VKF_OK;
  }
  default: *out = ct_float(d); return VKF_OK;
  }
}

static vkf_status indent_filter(ct_ctx *c, const ct_node *n, ct_str s, const ct_args *a, ct_value *out) {
  const ct_value *w = ct_arg(a, 0, "width"), *first = ct_arg(a, 1, "first"), *blank = ct_arg(a, 2, "blank");
  ct_str pad = {"    ", 4};
  ct_value padv;
  if (w && w->kind == CT_INT) {
    if (w->u.i < 0 || w->u.i > 256) return ct_bad_arg(c, n, "width must be 0..256");
    char *p = ct_alloc(c->arena, (size_t)w->u.i + 1);
    if (!p) return ct_oom();
    memset(p, ' ', (size_t)w->u.i);
    pad = (ct_str){p, (size_t)w->u.i};
  } else if (w && w->kind == CT_STR) {
    pad = w->u.s;
  }
  (void)padv;
  ct_buf b = {.limit = CT_MAX_OUTPUT};
  bool at_line_start = true, first_line = true;
  for (size_t i = 0; i < s.n; i++) {
    if (at_line_start) {
      /* the line's content: blank lines get no indent unless blank=True */
      size_t e = i;
      while (e < s.n && s.s[e] != '\n') e++;
      bool is_blank = e == i;
      bool want = first_line ? (first && ct_truthy(*first)) : (!is_blank || (blank && ct_truthy(*blank)));
      if (want) ct_buf_put(&b, pad.s, pad.n);
      at_line_start = false;
    }
    ct_buf_putc(&b, s.s[i]);
    if (s.s[i] == '\n') at_line_start = true, first_line = false;
  }
  if (at_line_start && s.n && !first_line && blank && ct_truthy(*blank)) ct_buf_put(&b, pad.s, pad.n);
  if (s.n == 0 && first && ct_truthy(*first)) ct_buf_put(&b, pad.s, pad.n);
  return ct_buf_value(c, &b, out);
}

static vkf_status select_filter(ct_ctx *c, const ct_node *n, ct_value v, ct_args *a, bool reject,
                                ct_value *out) {
  const ct_list *items;
  VKF_RETURN_IF_ERROR(ct_to_list(c, n, v, &items));
  const ct_value *attr = ct_arg(a, 0, NULL);
  VKF_RETURN_IF_ERROR(ct_check_str(n, attr, "the attribute"));
  const ct_value *test = a->n_pos > 1 ? &a->pos[1] : NULL;
  if (test && test->kind != CT_STR) return ct_bad_arg(c, n, "the test name must be a string");
  if (test && !ct_test_known(test->u.s))
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "no test named '%.*s'", (int)test->u.s.n, test->u.s.s);
  ct_list *l = ct_list_new(c->arena, 0);
  if (!l) return ct_oom();
  ct_node tn = *n;
  if (test) tn.str = test->u.s;
  ct_args targs = {.pos = a->n_pos > 2 ? a->pos + 2 : NULL, .n_pos = a->n_pos > 2 ? a->n_pos - 2 : 0};
  for (size_t i = 0; i < items->n; i++) {
    ct_value x = attr_path(items->items[i], attr->u.s);
    bool r;
    if (test)
      VKF_RETURN_IF_ERROR(ct_apply_test(c, &tn, x, &targs, &r));
    else
      r = ct_truthy(x);
    if (r != reject && !ct_list_push(c->arena, l, items->items[i])) return ct_oom();
  }
  *out = (ct_value){.kind = CT_LIST, .u.list = l};
  return VKF_OK;
}

/* select / reject: the items that pass (fail) a test, or are truthy without one. */
static vkf_status test_filter(ct_ctx *c, const ct_node *n, ct_value v, ct_args *a, bool reject,
                              ct_value *out) {
  const ct_list *items;
  VKF_RETURN_IF_ERROR(ct_to_list(c, n, v, &items));
  const ct_value *test = a->n_pos ? &a->pos[0] : NULL;
  if (test && test->kind != CT_STR) return ct_bad_arg(c, n, "the test name must be a string");
  if (test && !ct_test_known(test->u.s))
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "no test named '%.*s'", (int)test->u.s.n, test->u.s.s);
  ct_list *l = ct_list_new(c->arena, 0);
  if (!l) return ct_oom();
  ct_node tn = *n;
  if (test) tn.str = test->u.s;
  ct_args targs = {.pos = a->n_pos ? a->pos + 1 : NULL, .n_pos = a->n_pos ? a->n_pos - 1 : 0};
  for (size_t i = 0; i < items->n; i++) {
    bool r;
    if (test)
      VKF_RETURN_IF_ERROR(ct_apply_test(c, &tn, items->items[i], &targs, &r));
    else
      r = ct_truthy(items->items[i]);
    if (r != reject && !ct_list_push(c->arena, l, items->items[i])) return ct_oom();
  }
  *out = (ct_value){.kind = CT_LIST, .u.list = l};
  return VKF_OK;
}

static vkf_status map_filter(ct_ctx *c, const ct_node *n, ct_value v, ct_args *a, ct_value *out) {
  const ct_list *items;
  VKF_RETURN_IF_ERROR(ct_to_list(c, n, v, &items));
  const ct_value *attr = ct_arg(a, 99, "attribute"), *def = ct_arg(a, 99, "default");
  const ct_value *fname = a->n_pos ? &a->pos[0] : NULL;
  ct_list *l = ct_list_new(c->arena, items->n);
  if (!l) return ct_oom();
  ct_node fn = *n;
  if (!attr) {
    if (!fname || fname->kind != CT_STR) return ct_bad_arg(c, n, "needs attribute= or a filter name");
    if (!ct_filter_known(fname->u.s))
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "no filter named '%.*s'", (int)fname->u.s.n, fname->u.s.s);
    fn.str = fname->u.s;
  } else {
    VKF_RETURN_IF_ERROR(ct_check_str(n, attr, "attribute"));
  }
  ct_args fargs = {.pos = a->n_pos ? a->pos + 1 : NULL, .n_pos = a->n_pos ? a->n_pos - 1 : 0};
  for (size_t i = 0; i < items->n; i++) {
    ct_value x;
    if (attr) {
      x = attr_path(items->items[i], attr->u.s);
      if (x.kind == CT_UNDEF && def) x = *def;
    } else {
      VKF_RETURN_IF_ERROR(ct_apply_filter(c, &fn, items->items[i], &fargs, &x));
    }
    if (!ct_list_push(c->arena, l, x)) return ct_oom();
  }
  *out = (ct_value){.kind = CT_LIST, .u.list = l};
  return VKF_OK;
}

vkf_status ct_join(ct_ctx *c, const ct_node *n, const ct_list *items, ct_str sep,
                       const ct_value *attr, ct_value *out) {
  ct_buf b = {.limit = CT_MAX_OUTPUT};
  for (size_t i = 0; i < items->n; i++) {
    if (i) ct_buf_put(&b, sep.s, sep.n);
    ct_value x = attr && attr->kind == CT_STR ? attr_path(items->items[i], attr->u.s) : items->items[i];
    ct_write_str(&b, x);
  }
  (void)n;
  return ct_buf_value(c, &b, out);
}

vkf_status ct_apply_filter(ct_ctx *c, const ct_node *n, ct_value v, ct_args *a, ct_value *out) {
  ct_str f = n->str;
  ct_str sv;
  if (ct_str_eq(f, "default") || ct_str_eq(f, "d")) {
    const ct_value *def = ct_arg(a, 0, "default_value"), *boolean = ct_arg(a, 1, "boolean");
    bool use = v.kind == CT_UNDEF || (boolean && ct_truthy(*boolean) && !ct_truthy(v));
    *out = use ? (def ? *def : ct_string("", 0)) : v;
    return VKF_OK;
  }
  if (ct_str_eq(f, "tojson")) return do_tojson(c, n, v, a, out);
  if (ct_str_eq(f, "safe")) return *out = v, VKF_OK;
  if (ct_str_eq(f, "selectattr") || ct_str_eq(f, "rejectattr"))
    return select_filter(c, n, v, a, f.s[0] == 'r', out);
  if (ct_str_eq(f, "map")) return map_filter(c, n, v, a, out);
  if (ct_str_eq(f, "select") || ct_str_eq(f, "reject"))
    return test_filter(c, n, v, a, f.s[0] == 'r', out);
  if (ct_str_eq(f, "items")) return ct_items(c, n, v, out);
  if (ct_str_eq(f, "int")) return to_int(c, n, v, a, out);
  if (ct_str_eq(f, "float")) return to_float(v, a, out);
  if (ct_str_eq(f, "length") || ct_str_eq(f, "count")) {
    switch (v.kind) {
    case CT_STR: *out = ct_int((int64_t)ct_utf8_len(v.u.s.s, v.u.s.n)); return VKF_OK;
    case CT_LIST: *out = ct_int((int64_t)v.u.list->n); return VKF_OK;
    case CT_DICT: *out = ct_int((int64_t)v.u.dict->n); return VKF_OK;
    case CT_UNDEF: *out = ct_int(0); return VKF_OK;
    default:
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "object of type '%s' has no len()", ct_kind_name(v.kind));
    }
  }
  if (ct_str_eq(f, "list")) {
    const ct_list *l;
    VKF_RETURN_IF_ERROR(ct_to_list(c, n, v, &l));
    ct_list *copy = ct_list_new(c->arena, l->n);
    if (!copy) return ct_oom();
    for (size_t i = 0; i < l->n; i++) ct_list_push(c->arena, copy, l->items[i]);
    return *out = (ct_value){.kind = CT_LIST, .u.list = copy}, VKF_OK;
  }
  if (ct_str_eq(f, "first") || ct_str_eq(f, "last")) {
    const ct_list *l;
    VKF_RETURN_IF_ERROR(ct_to_list(c, n, v, &l));
    if (!l->n) *out = ct_undef("No first item, sequence was empty.", 34);
    else *out = l->items[f.s[0] == 'f' ? 0 : l->n - 1];
    return VKF_OK;
  }
  if (ct_str_eq(f, "reverse")) {
    if (v.kind == CT_STR) {
      ct_buf b = {.limit = CT_MAX_OUTPUT};
      for (size_t e = v.u.s.n; e > 0;) {
        size_t s0 = e - 1;
        while (s0 > 0 && ((unsigned char)v.u.s.s[s0] & 0xc0) == 0x80) s0--;
        ct_buf_put(&b, v.u.s.s + s0, e - s0);
        e = s0;
      }
      return ct_buf_value(c, &b, out);
    }
    const ct_list *l;
    VKF_RETURN_IF_ERROR(ct_to_list(c, n, v, &l));
    ct_list *r = ct_list_new(c->arena, l->n);
    if (!r) return ct_oom();
    for (size_t i = l->n; i-- > 0;) ct_list_push(c->arena, r, l->items[i]);
    return *out = (ct_value){.kind = CT_LIST, .u.list = r}, VKF_OK;
  }
  if (ct_str_eq(f, "unique")) {
    const ct_list *l;
    VKF_RETURN_IF_ERROR(ct_to_list(c, n, v, &l));
    ct_list *r = ct_list_new(c->arena, 0);
    if (!r) return ct_oom();
    for (size_t i = 0; i < l->n; i++) {
      bool seen = false;
      for (size_t k = 0; k < r->n && !seen; k++) seen = ct_equal(r->items[k], l->items[i]);
      if (!seen && !ct_list_push(c->arena, r, l->items[i])) return ct_oom();
    }
    return *out = (ct_value){.kind = CT_LIST, .u.list = r}, VKF_OK;
  }
  if (ct_str_eq(f, "sum") || ct_str_eq(f, "min") || ct_str_eq(f, "max")) {
    const ct_list *l;
    VKF_RETURN_IF_ERROR(ct_to_list(c, n, v, &l));
    bool sum = f.s[1] == 'u';
    ct_value acc = sum ? ct_int(0) : ct_undef("No aggregated item, sequence was empty.", 39);
    for (size_t i = 0; i < l->n; i++) {
      ct_value x = l->items[i];
      if (!ct_is_number(x) && x.kind != CT_BOOL && !(x.kind == CT_STR && !sum))
        return ct_bad_arg(c, n, "items must be numbers");
      if (sum) {
        if (acc.kind == CT_INT && x.kind != CT_FLOAT) acc = ct_int(acc.u.i + (x.kind == CT_BOOL ? x.u.b : x.u.i));
        else acc = ct_float(ct_as_double(acc) + ct_as_double(x));
      } else if (acc.kind == CT_UNDEF) {
        acc = x;
      } else {
        bool less;
        if (x.kind == CT_STR || acc.kind == CT_STR) {
          if (x.kind != acc.kind) return ct_bad_arg(c, n, "items of mixed types");
          size_t m = x.u.s.n < acc.u.s.n ? x.u.s.n : acc.u.s.n;
          int r = m ? memcmp(x.u.s.s, acc.u.s.s, m) : 0;
          less = r < 0 || (r == 0 && x.u.s.n < acc.u.s.n);
        } else {
          less = ct_as_double(x) < ct_as_double(acc);
        }
        bool greater = !less && !ct_equal(x, acc);
        if (f.s[1] == 'i' ? less : greater) acc = x;
      }
    }
    return *out = acc, VKF_OK;
  }
  if (ct_str_eq(f, "abs")) {
    if (v.kind == CT_INT) return *out = ct_int(v.u.i < 0 && v.u.i != INT64_MIN ? -v.u.i : v.u.i), VKF_OK;
    if (v.kind == CT_BOOL) return *out = ct_int(v.u.b), VKF_OK;
    if (v.kind == CT_FLOAT) return *out = ct_float(fabs(v.u.f)), VKF_OK;
    return ct_bad_arg(c, n, "bad operand type for abs()");
  }
  if (ct_str_eq(f, "round")) {
    const ct_value *prec = ct_arg(a, 0, "precision"), *method = ct_arg(a, 1, "method");
    if (!ct_is_number(v) && v.kind != CT_BOOL) return ct_bad_arg(c, n, "needs a number");
    int64_t p = prec && prec->kind == CT_INT ? prec->u.i : 0;
    if (p < 0 || p > 15) return ct_bad_arg(c, n, "precision must be 0..15");
    double x = ct_as_double(v), m = pow(10, (double)p), r;
    if (method && method->kind == CT_STR && ct_str_eq(method->u.s, "floor")) r = floor(x * m) / m;
    else if (method && method->kind == CT_STR && ct_str_eq(method->u.s, "ceil")) r = ceil(x * m) / m;
    else r = nearbyint(x * m) / m; /* Python's round: half to even */
    return *out = ct_float(r), VKF_OK;
  }
  if (ct_str_eq(f, "join")) {
    const ct_list *l;
    VKF_RETURN_IF_ERROR(ct_to_list(c, n, v, &l));
    const ct_value *sep = ct_arg(a, 0, "d");
    if (sep && sep->kind != CT_STR) return ct_bad_arg(c, n, "the separator must be a string");
    return ct_join(c, n, l, sep ? sep->u.s : (ct_str){"", 0}, ct_arg(a, 1, "attribute"), out);
  }
  /* the rest take the value's string */
  if (!ct_to_str(c->arena, v, &sv)) return ct_oom();
  if (ct_str_eq(f, "string")) return *out = ct_string(sv.s, sv.n), VKF_OK;
  if (ct_str_eq(f, "trim")) {
    const ct_value *chars = ct_arg(a, 0, "chars");
    if (chars && chars->kind != CT_STR && chars->kind != CT_NONE) return ct_bad_arg(c, n, "chars must be a string");
    ct_str r = ct_strip(sv, chars && chars->kind == CT_STR ? &chars->u.s : NULL, true, true);
    return *out = ct_string(r.s, r.n), VKF_OK;
  }
  if (ct_str_eq(f, "upper")) return ct_change_case(c, sv, CASE_UPPER, out);
  if (ct_str_eq(f, "lower")) return ct_change_case(c, sv, CASE_LOWER, out);
  if (ct_str_eq(f, "capitalize")) return ct_change_case(c, sv, CASE_CAPITALIZE, out);
  if (ct_str_eq(f, "title")) return ct_change_case(c, sv, CASE_TITLE_FILTER, out);
  if (ct_str_eq(f, "replace")) {
    const ct_value *old = ct_arg(a, 0, "old"), *new_ = ct_arg(a, 1, "new"), *count = ct_arg(a, 2, "count");
    VKF_RETURN_IF_ERROR(ct_check_str(n, old, "old"));
    VKF_RETURN_IF_ERROR(ct_check_str(n, new_, "new"));
    return ct_replace(c, sv, old->u.s, new_->u.s, count && count->kind == CT_INT ? count->u.i : -1, out);
  }
  if (ct_str_eq(f, "indent")) return indent_filter(c, n, sv, a, out);
  return ct_error(n, VKF_STATUS_INTERNAL, "filter '%.*s' has no implementation", (int)f.n, f.s);
}

vkf_status ct_apply_test(ct_ctx *c, const ct_node *n, ct_value v, ct_args *a, bool *out) {
  ct_str t = n->str;
  const ct_value *x = ct_arg(a, 0, NULL);
  (void)c;
  if (ct_str_eq(t, "defined")) return *out = v.kind != CT_UNDEF, VKF_OK;
  if (ct_str_eq(t, "undefined")) return *out = v.kind == CT_UNDEF, VKF_OK;
  if (ct_str_eq(t, "none")) return *out = v.kind == CT_NONE, VKF_OK;
  if (ct_str_eq(t, "string")) return *out = v.kind == CT_STR, VKF_OK;
  if (ct_str_eq(t, "mapping")) return *out = v.kind == CT_DICT && !v.u.dict->ns, VKF_OK;
  if (ct_str_eq(t, "iterable"))
    return *out = v.kind == CT_STR || v.kind == CT_LIST || (v.kind == CT_DICT && !v.u.dict->ns) || v.kind == CT_UNDEF, VKF_OK;
  if (ct_str_eq(t, "sequence"))
    return *out = v.kind == CT_STR || v.kind == CT_LIST || (v.kind == CT_DICT && !v.u.dict->ns), VKF_OK;
  if (ct_str_eq(t, "number")) return *out = ct_is_number(v) || v.kind == CT_BOOL, VKF_OK;
  if (ct_str_eq(t, "integer")) return *out = v.kind == CT_INT, VKF_OK;
  if (ct_str_eq(t, "float")) return *out = v.kind == CT_FLOAT, VKF_OK;
  if (ct_str_eq(t, "boolean")) return *out = v.kind == CT_BOOL, VKF_OK;
  if (ct_str_eq(t, "true")) return *out = v.kind == CT_BOOL && v.u.b, VKF_OK;
  if (ct_str_eq(t, "false")) return *out = v.kind == CT_BOOL && !v.u.b, VKF_OK;
  if (ct_str_eq(t, "callable")) return *out = v.kind == CT_FUNC || v.kind == CT_METHOD, VKF_OK;
  if (ct_str_eq(t, "lower") || ct_str_eq(t, "upper")) {
    if (v.kind != CT_STR) return *out = false, VKF_OK;
    bool cased = false, ok = true;
    for (size_t i = 0; i < v.u.s.n; i++) {
      char ch = v.u.s.s[i];
      if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) cased = true;
      if (t.s[0] == 'l' ? (ch >= 'A' && ch <= 'Z') : (ch >= 'a' && ch <= 'z')) ok = false;
    }
    return *out = cased && ok, VKF_OK;
  }
  if (ct_str_eq(t, "odd") || ct_str_eq(t, "even")) {
    int64_t i;
    if (v.kind == CT_INT) i = v.u.i;
    else if (v.kind == CT_BOOL) i = v.u.b;
    else return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "%.*s: needs an integer", (int)t.n, t.s);
    return *out = (i % 2 != 0) == (t.s[0] == 'o'), VKF_OK;
  }
  if (!x) return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "test '%.*s' needs an argument", (int)t.n, t.s);
  if (ct_str_eq(t, "equalto") || ct_str_eq(t, "eq")) return *out = ct_equal(v, *x), VKF_OK;
  if (ct_str_eq(t, "ne")) return *out = !ct_equal(v, *x), VKF_OK;
  if (ct_str_eq(t, "sameas"))
    return *out = (v.kind == x->kind && (v.kind == CT_NONE || v.kind == CT_UNDEF ||
                                         (v.kind == CT_BOOL && v.u.b == x->u.b))),
           VKF_OK;
  if (ct_str_eq(t, "divisibleby")) {
    if (v.kind != CT_INT || x->kind != CT_INT || x->u.i == 0)
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "divisibleby: needs nonzero integers");
    return *out = v.u.i % x->u.i == 0, VKF_OK;
  }
  if (ct_str_eq(t, "in")) {
    if (x->kind == CT_STR && v.kind == CT_STR) {
      *out = ct_find(x->u.s, v.u.s, 0) != SIZE_MAX;
      return VKF_OK;
    }
    if (x->kind == CT_LIST) {
      *out = false;
      for (size_t i = 0; i < x->u.list->n; i++)
        if (ct_equal(v, x->u.list->items[i])) *out = true;
      return VKF_OK;
    }
    if (x->kind == CT_DICT) return *out = v.kind == CT_STR && ct_dict_get(x->u.dict, v.u.s.s, v.u.s.n), VKF_OK;
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "in: '%s' is not a container", ct_kind_name(x->kind));
  }
  /* lt gt ge le */
  bool an = ct_is_number(v) || v.kind == CT_BOOL, bn = ct_is_number(*x) || x->kind == CT_BOOL;
  int r;
  if (an && bn) {
    double p = ct_as_double(v), q = ct_as_double(*x);
    r = (p > q) - (p < q);
  } else if (v.kind == CT_STR && x->kind == CT_STR) {
    size_t m = v.u.s.n < x->u.s.n ? v.u.s.n : x->u.s.n;
    r = m ? memcmp(v.u.s.s, x->u.s.s, m) : 0;
    if (!r) r = (v.u.s.n > x->u.s.n) - (v.u.s.n < x->u.s.n);
  } else {
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "test '%.*s': cannot compare '%s' and '%s'", (int)t.n,
                    t.s, ct_kind_name(v.kind), ct_kind_name(x->kind));
  }
  if (ct_str_eq(t, "lt")) *out = r < 0;
  else if (ct_str_eq(t, "le")) *out = r <= 0;
  else if (ct_str_eq(t, "gt")) *out = r > 0;
  else *out = r >= 0;
  return VKF_OK;
}
