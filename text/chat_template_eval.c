/* Chat template evaluation: statements write to the output buffer, expressions produce values,
 * with jinja2's scoping (a for body starts every iteration from the enclosing scope; set inside
 * it does not leak out, which is why templates use namespace()), its Undefined (missing names and
 * attributes are undefined; using an undefined as an object is an error) and Python's operators. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "text/chat_template_internal.h"

/* The error of using an undefined value as an object (jinja2's UndefinedError). */
static vkf_status undefined_error(const ct_node *n, ct_value v) {
  return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "%.*s", (int)v.u.s.n, v.u.s.s);
}

static ct_value make_undef(ct_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static ct_value make_undef(ct_ctx *c, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof msg) n = sizeof msg - 1;
  char *s = ct_alloc(c->arena, (size_t)n + 1);
  if (!s) return ct_undef("undefined", 9);
  memcpy(s, msg, (size_t)n + 1);
  return ct_undef(s, (size_t)n);
}

static vkf_status push_frame(ct_ctx *c) {
  if (c->n_frames == c->cap_frames) return ct_error(NULL, VKF_STATUS_INTERNAL, "frame overflow");
  ct_dict *d = ct_dict_new(c->arena, 0);
  if (!d) return ct_oom();
  c->frames[c->n_frames++].vars = d;
  return VKF_OK;
}

static ct_value lookup(ct_ctx *c, ct_str name) {
  for (size_t i = c->n_frames; i-- > 0;) {
    if (i < c->macro_base && i > 0) continue;
    const ct_value *v = ct_dict_get(c->frames[i].vars, name.s, name.n);
    if (v) return *v;
  }
  if (ct_is_global_func(name)) return (ct_value){.kind = CT_FUNC, .name = name};
  return make_undef(c, "'%.*s' is undefined", (int)(name.n > 64 ? 64 : name.n), name.s);
}

static vkf_status set_var(ct_ctx *c, ct_str name, ct_value v) {
  if (!ct_dict_set(c->arena, c->frames[c->n_frames - 1].vars, name, v)) return ct_oom();
  return VKF_OK;
}

static const char *obj_name(ct_value v) {
  switch (v.kind) {
  case CT_STR: return "'str object'";
  case CT_LIST: return "'list object'";
  case CT_DICT: return v.u.dict->ns ? "'Namespace object'" : "'dict object'";
  case CT_INT: return "'int object'";
  case CT_FLOAT: return "'float object'";
  case CT_BOOL: return "'bool object'";
  case CT_NONE: return "None";
  default: return "'object'";
  }
}

static ct_value loop_attr(ct_ctx *c, const ct_loop *l, ct_str name) {
  size_t n = l->items->n, i = l->index0;
  if (ct_str_eq(name, "index")) return ct_int((int64_t)i + 1);
  if (ct_str_eq(name, "index0")) return ct_int((int64_t)i);
  if (ct_str_eq(name, "revindex")) return ct_int((int64_t)(n - i));
  if (ct_str_eq(name, "revindex0")) return ct_int((int64_t)(n - i - 1));
  if (ct_str_eq(name, "first")) return ct_bool(i == 0);
  if (ct_str_eq(name, "last")) return ct_bool(i + 1 == n);
  if (ct_str_eq(name, "length")) return ct_int((int64_t)n);
  if (ct_str_eq(name, "depth")) return ct_int(1);
  if (ct_str_eq(name, "depth0")) return ct_int(0);
  if (ct_str_eq(name, "previtem"))
    return i > 0 ? l->items->items[i - 1] : make_undef(c, "there is no previous item");
  if (ct_str_eq(name, "nextitem"))
    return i + 1 < n ? l->items->items[i + 1] : make_undef(c, "there is no next item");
  return make_undef(c, "'LoopContext object' has no attribute '%.*s'", (int)name.n, name.s);
}

/* obj.name: a method of the type first (Python's getattr), then a dict key. */
static vkf_status get_attr(ct_ctx *c, const ct_node *n, ct_value obj, ct_str name, ct_value *out) {
  if (obj.kind == CT_UNDEF) return undefined_error(n, obj);
  if (obj.kind == CT_LOOP) return *out = loop_attr(c, obj.u.loop, name), VKF_OK;
  if (ct_has_method(obj, name)) {
    ct_value *recv = ct_alloc(c->arena, sizeof *recv);
    if (!recv) return ct_oom();
    *recv = obj;
    *out = (ct_value){.kind = CT_METHOD, .u.recv = recv, .name = name};
    return VKF_OK;
  }
  if (obj.kind == CT_DICT) {
    const ct_value *v = ct_dict_get(obj.u.dict, name.s, name.n);
    if (v) return *out = *v, VKF_OK;
  }
  *out = make_undef(c, "%s has no attribute '%.*s'", obj_name(obj), (int)(name.n > 64 ? 64 : name.n),
                    name.s);
  return VKF_OK;
}

/* obj[key]: the item first, then (for a string key) the attribute, as jinja2's getitem. */
static vkf_status get_item(ct_ctx *c, const ct_node *n, ct_value obj, ct_value key, ct_value *out) {
  if (obj.kind == CT_UNDEF) return undefined_error(n, obj);
  if (obj.kind == CT_DICT && key.kind == CT_STR) {
    const ct_value *v = ct_dict_get(obj.u.dict, key.u.s.s, key.u.s.n);
    if (v) return *out = *v, VKF_OK;
  }
  if ((obj.kind == CT_LIST || obj.kind == CT_STR) && (key.kind == CT_INT || key.kind == CT_BOOL)) {
    int64_t i = key.kind == CT_BOOL ? key.u.b : key.u.i;
    size_t len = obj.kind == CT_LIST ? obj.u.list->n : ct_utf8_len(obj.u.s.s, obj.u.s.n);
    if (i < 0) i += (int64_t)len;
    if (i >= 0 && (uint64_t)i < len) {
      if (obj.kind == CT_LIST) return *out = obj.u.list->items[i], VKF_OK;
      size_t a = ct_utf8_offset(obj.u.s.s, obj.u.s.n, (size_t)i);
      size_t b = ct_utf8_offset(obj.u.s.s, obj.u.s.n, (size_t)i + 1);
      return *out = ct_string(obj.u.s.s + a, b - a), VKF_OK;
    }
  }
  if (obj.kind == CT_LOOP && key.kind == CT_STR) return get_attr(c, n, obj, key.u.s, out);
  if (key.kind == CT_STR && obj.kind != CT_DICT) return get_attr(c, n, obj, key.u.s, out);
  if (key.kind == CT_STR)
    *out = make_undef(c, "%s has no attribute '%.*s'", obj_name(obj),
                      (int)(key.u.s.n > 64 ? 64 : key.u.s.n), key.u.s.s);
  else if (key.kind == CT_INT && obj.kind == CT_LIST)
    *out = make_undef(c, "list object has no element %lld", (long long)key.u.i);
  else if (key.kind == CT_INT)
    *out = make_undef(c, "%s has no attribute %lld", obj_name(obj), (long long)key.u.i);
  else
    *out = make_undef(c, "%s has no such item", obj_name(obj));
  return VKF_OK;
}

/* Python slice indices (None omitted) over `len` items. */
static void slice_indices(int64_t len, const ct_value *sv, int64_t step, int64_t *start,
                          int64_t *stop) {
  for (int k = 0; k < 2; k++) {
    int64_t *dst = k == 0 ? start : stop;
    if (sv[k].kind != CT_INT) {
      *dst = step > 0 ? (k == 0 ? 0 : len) : (k == 0 ? len - 1 : -1);
      continue;
    }
    int64_t v = sv[k].u.i;
    if (v < 0) {
      v += len;
      if (v < 0) v = step > 0 ? 0 : -1;
    } else if (v >= len) {
      v = step > 0 ? len : len - 1;
    }
    *dst = v;
  }
}

static vkf_status eval_slice(ct_ctx *c, const ct_node *n, ct_value *out) {
  ct_value obj, sv[3];
  VKF_RETURN_IF_ERROR(ct_eval(c, n->a, &obj));
  for (int k = 0; k < 3; k++) {
    sv[k] = ct_none();
    if (n->args.items[k]) VKF_RETURN_IF_ERROR(ct_eval(c, n->args.items[k], &sv[k]));
    if (sv[k].kind == CT_BOOL) sv[k] = ct_int(sv[k].u.b);
    if (sv[k].kind != CT_INT && sv[k].kind != CT_NONE)
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT,
                      "slice indices must be integers or None, not %s", ct_kind_name(sv[k].kind));
  }
  if (obj.kind == CT_UNDEF) return undefined_error(n, obj);
  int64_t step = sv[2].kind == CT_INT ? sv[2].u.i : 1;
  if (step == 0) return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "slice step cannot be zero");
  if (obj.kind != CT_LIST && obj.kind != CT_STR)
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "%s is not subscriptable by a slice",
                    obj_name(obj));
  int64_t len = obj.kind == CT_LIST ? (int64_t)obj.u.list->n
                                    : (int64_t)ct_utf8_len(obj.u.s.s, obj.u.s.n);
  int64_t start, stop;
  slice_indices(len, sv, step, &start, &stop);
  if (obj.kind == CT_LIST) {
    ct_list *l = ct_list_new(c->arena, 0);
    if (!l) return ct_oom();
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      if (!ct_list_push(c->arena, l, obj.u.list->items[i])) return ct_oom();
    *out = (ct_value){.kind = CT_LIST, .u.list = l};
    return VKF_OK;
  }
  /* byte offsets of every code point (and the end), so the slice is linear in the string */
  size_t *at = malloc(((size_t)len + 1) * sizeof *at);
  if (!at) return ct_oom();
  for (size_t i = 0, k = 0; i <= obj.u.s.n; i++)
    if (i == obj.u.s.n || ((unsigned char)obj.u.s.s[i] & 0xc0) != 0x80) {
      if (k <= (size_t)len) at[k++] = i;
    }
  at[len] = obj.u.s.n;
  ct_buf b = {.limit = CT_MAX_OUTPUT};
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
    ct_buf_put(&b, obj.u.s.s + at[i], at[i + 1] - at[i]);
  free(at);
  char *s = ct_alloc(c->arena, b.size + 1);
  if (s && b.size) memcpy(s, b.data, b.size);
  free(b.data);
  if (!s) return ct_oom();
  s[b.size] = 0;
  *out = ct_string(s, b.size);
  return VKF_OK;
}

static vkf_status concat_str(ct_ctx *c, ct_str a, ct_str b, ct_value *out) {
  if (a.n + b.n > CT_MAX_OUTPUT)
    return ct_error(NULL, VKF_STATUS_INVALID_ARGUMENT, "string longer than %d MiB",
                    CT_MAX_OUTPUT >> 20);
  char *s = ct_alloc(c->arena, a.n + b.n + 1);
  if (!s) return ct_oom();
  if (a.n) memcpy(s, a.s, a.n);
  if (b.n) memcpy(s + a.n, b.s, b.n);
  s[a.n + b.n] = 0;
  *out = ct_string(s, a.n + b.n);
  return VKF_OK;
}

static vkf_status type_error(const ct_node *n, ct_value a, ct_value b) {
  if (ct_str_eq(n->str, "+") && (a.kind == CT_STR || a.kind == CT_LIST))
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "can only concatenate %s (not \"%s\") to %s",
                    ct_kind_name(a.kind), ct_kind_name(b.kind), ct_kind_name(a.kind));
  return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "unsupported operand type(s) for %.*s: '%s' and '%s'",
                  (int)n->str.n, n->str.s, ct_kind_name(a.kind), ct_kind_name(b.kind));
}

static bool as_int(ct_value v, int64_t *out) {
  if (v.kind == CT_INT) return *out = v.u.i, true;
  if (v.kind == CT_BOOL) return *out = v.u.b, true;
  return false;
}

static vkf_status arith(ct_ctx *c, const ct_node *n, ct_value a, ct_value b, ct_value *out) {
  char op0 = n->str.s[0];
  bool two = n->str.n == 2;
  if (a.kind == CT_UNDEF) return undefined_error(n, a);
  if (b.kind == CT_UNDEF) return undefined_error(n, b);
  if (op0 == '+' && a.kind == CT_STR && b.kind == CT_STR) return concat_str(c, a.u.s, b.u.s, out);
  if (op0 == '+' && a.kind == CT_LIST && b.kind == CT_LIST) {
    ct_list *l = ct_list_new(c->arena, a.u.list->n + b.u.list->n);
    if (!l) return ct_oom();
    for (size_t i = 0; i < a.u.list->n; i++) ct_list_push(c->arena, l, a.u.list->items[i]);
    for (size_t i = 0; i < b.u.list->n; i++) ct_list_push(c->arena, l, b.u.list->items[i]);
    *out = (ct_value){.kind = CT_LIST, .u.list = l};
    return VKF_OK;
  }
  int64_t x, y;
  if (op0 == '*' && !two && ((a.kind == CT_STR && as_int(b, &y)) || (b.kind == CT_STR && as_int(a, &y)))) {
    ct_str s = a.kind == CT_STR ? a.u.s : b.u.s;
    if (y < 0) y = 0;
    if (s.n && (uint64_t)y > (uint64_t)CT_MAX_OUTPUT / s.n)
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "string repetition longer than %d MiB",
                      CT_MAX_OUTPUT >> 20);
    char *p = ct_alloc(c->arena, s.n * (size_t)y + 1);
    if (!p) return ct_oom();
    for (int64_t i = 0; i < y; i++) memcpy(p + s.n * (size_t)i, s.s, s.n);
    p[s.n * (size_t)y] = 0;
    *out = ct_string(p, s.n * (size_t)y);
    return VKF_OK;
  }
  bool an = a.kind == CT_BOOL || ct_is_number(a), bn = b.kind == CT_BOOL || ct_is_number(b);
  if (!an || !bn) return type_error(n, a, b);
  if (op0 == '/' && !two) {
    double d = ct_as_double(b);
    if (d == 0) return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "division by zero");
    return *out = ct_float(ct_as_double(a) / d), VKF_OK;
  }
  if (as_int(a, &x) && as_int(b, &y)) {
    int64_t r = 0;
    bool overflow = false;
    if (op0 == '+') overflow = __builtin_add_overflow(x, y, &r);
    else if (op0 == '-') overflow = __builtin_sub_overflow(x, y, &r);
    else if (op0 == '*' && two) {
      if (y < 0) return *out = ct_float(pow((double)x, (double)y)), VKF_OK;
      r = 1;
      if (x == 0 || x == 1) r = y == 0 ? 1 : x;
      else if (x == -1) r = y % 2 ? -1 : 1;
      else /* |x| >= 2 overflows within 63 steps */
        for (int64_t i = 0; i < y && !overflow; i++) overflow = __builtin_mul_overflow(r, x, &r);
    } else if (op0 == '*') overflow = __builtin_mul_overflow(x, y, &r);
    else {
      if (y == 0) return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) overflow = true;
      else {
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) q--, m += y;
        r = op0 == '%' ? m : q;
      }
    }
    if (overflow) return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "integer overflow");
    return *out = ct_int(r), VKF_OK;
  }
  double fx = ct_as_double(a), fy = ct_as_double(b), r;
  if (op0 == '+') r = fx + fy;
  else if (op0 == '-') r = fx - fy;
  else if (op0 == '*' && two) r = pow(fx, fy);
  else if (op0 == '*') r = fx * fy;
  else {
    if (fy == 0) return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "float division or modulo by zero");
    double m = fmod(fx, fy);
    if (m != 0 && ((m < 0) != (fy < 0))) m += fy;
    r = op0 == '%' ? m : floor(fx / fy);
  }
  *out = ct_float(r);
  return VKF_OK;
}

/* <, <=, >, >= as Python orders numbers, strings (by code point: UTF-8 byte order) and lists. */
static vkf_status compare(const ct_node *n, ct_value a, ct_value b, int depth, int *out) {
  if (depth > CT_MAX_DEPTH)
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "lists nest too deeply to compare");
  bool an = a.kind == CT_BOOL || ct_is_number(a), bn = b.kind == CT_BOOL || ct_is_number(b);
  if (an && bn) {
    int64_t x, y;
    if (as_int(a, &x) && as_int(b, &y)) return *out = (x > y) - (x < y), VKF_OK;
    double fx = ct_as_double(a), fy = ct_as_double(b);
    return *out = (fx > fy) - (fx < fy), VKF_OK;
  }
  if (a.kind == CT_STR && b.kind == CT_STR) {
    size_t m = a.u.s.n < b.u.s.n ? a.u.s.n : b.u.s.n;
    int r = m ? memcmp(a.u.s.s, b.u.s.s, m) : 0;
    if (!r) r = (a.u.s.n > b.u.s.n) - (a.u.s.n < b.u.s.n);
    return *out = (r > 0) - (r < 0), VKF_OK;
  }
  if (a.kind == CT_LIST && b.kind == CT_LIST) {
    for (size_t i = 0; i < a.u.list->n && i < b.u.list->n; i++) {
      if (ct_equal(a.u.list->items[i], b.u.list->items[i])) continue;
      return compare(n, a.u.list->items[i], b.u.list->items[i], depth + 1, out);
    }
    return *out = (a.u.list->n > b.u.list->n) - (a.u.list->n < b.u.list->n), VKF_OK;
  }
  if (a.kind == CT_UNDEF) return undefined_error(n, a);
  if (b.kind == CT_UNDEF) return undefined_error(n, b);
  return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "'%.*s' not supported between instances of '%s' and '%s'",
                  (int)n->str.n, n->str.s, ct_kind_name(a.kind), ct_kind_name(b.kind));
}

static vkf_status contains(const ct_node *n, ct_value item, ct_value box, bool *out) {
  *out = false;
  switch (box.kind) {
  case CT_UNDEF: return VKF_OK; /* iterating an Undefined yields nothing */
  case CT_STR:
    if (item.kind != CT_STR)
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "'in <string>' requires string as left operand, not %s",
                      ct_kind_name(item.kind));
    *out = ct_find(box.u.s, item.u.s, 0) != SIZE_MAX;
    return VKF_OK;
  case CT_LIST:
    for (size_t i = 0; i < box.u.list->n; i++)
      if (ct_equal(item, box.u.list->items[i])) return *out = true, VKF_OK;
    return VKF_OK;
  case CT_DICT:
    if (item.kind == CT_STR) *out = ct_dict_get(box.u.dict, item.u.s.s, item.u.s.n) != NULL;
    return VKF_OK;
  default:
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "argument of type '%s' is not iterable",
                    ct_kind_name(box.kind));
  }
}

static vkf_status eval_binary(ct_ctx *c, const ct_node *n, ct_value *out) {
  ct_value a, b;
  VKF_RETURN_IF_ERROR(ct_eval(c, n->a, &a));
  ct_str op = n->str;
  if (ct_str_eq(op, "and") || ct_str_eq(op, "or")) {
    bool t = ct_truthy(a);
    if (ct_str_eq(op, "and") ? !t : t) return *out = a, VKF_OK;
    return ct_eval(c, n->b, out);
  }
  VKF_RETURN_IF_ERROR(ct_eval(c, n->b, &b));
  if (ct_str_eq(op, "==")) return *out = ct_bool(ct_equal(a, b)), VKF_OK;
  if (ct_str_eq(op, "!=")) return *out = ct_bool(!ct_equal(a, b)), VKF_OK;
  if (ct_str_eq(op, "in") || ct_str_eq(op, "not in")) {
    bool r;
    VKF_RETURN_IF_ERROR(contains(n, a, b, &r));
    return *out = ct_bool(op.n == 2 ? r : !r), VKF_OK;
  }
  if (op.s[0] == '<' || op.s[0] == '>') {
    int r;
    VKF_RETURN_IF_ERROR(compare(n, a, b, 0, &r));
    bool v = op.s[0] == '<' ? (op.n == 2 ? r <= 0 : r < 0) : (op.n == 2 ? r >= 0 : r > 0);
    return *out = ct_bool(v), VKF_OK;
  }
  if (ct_str_eq(op, "~")) {
    ct_str x, y;
    if (!ct_to_str(c->arena, a, &x) || !ct_to_str(c->arena, b, &y)) return ct_oom();
    return concat_str(c, x, y, out);
  }
  return arith(c, n, a, b, out);
}

static vkf_status eval_args(ct_ctx *c, const ct_node *n, ct_args *args) {
  memset(args, 0, sizeof *args);
  if (n->args.n) {
    args->pos = ct_alloc(c->arena, n->args.n * sizeof *args->pos);
    if (!args->pos) return ct_oom();
    for (size_t i = 0; i < n->args.n; i++) VKF_RETURN_IF_ERROR(ct_eval(c, n->args.items[i], &args->pos[i]));
    args->n_pos = n->args.n;
  }
  if (n->kwargs.n) {
    args->kw = ct_alloc(c->arena, n->kwargs.n * sizeof *args->kw);
    if (!args->kw) return ct_oom();
    for (size_t i = 0; i < n->kwargs.n; i++) VKF_RETURN_IF_ERROR(ct_eval(c, n->kwargs.items[i], &args->kw[i]));
    args->n_kw = n->kwargs.n;
    args->kw_names = n->kw_names;
  }
  return VKF_OK;
}

/* A macro call renders its body into a string, with its parameters as the only locals (plus the
 * template's top-level names), as jinja2's macros see them. */
static vkf_status call_macro(ct_ctx *c, const ct_node *call, ct_value fn, ct_args *args,
                             ct_value *out) {
  const ct_node *m = fn.u.macro;
  size_t n_params = m->n_names - 1;
  if (args->n_pos > n_params)
    return ct_error(call, VKF_STATUS_INVALID_ARGUMENT, "macro '%.*s' takes not more than %zu argument(s)",
                    (int)m->names[0].n, m->names[0].s, n_params);
  if (c->macro_depth >= CT_MAX_MACRO_DEPTH)
    return ct_error(call, VKF_STATUS_INVALID_ARGUMENT, "macro calls nest deeper than %d",
                    CT_MAX_MACRO_DEPTH);
  size_t saved_base = c->macro_base, saved_frames = c->n_frames;
  ct_buf *saved_out = c->out;
  ct_buf body = {.limit = CT_MAX_OUTPUT};
  VKF_RETURN_IF_ERROR(push_frame(c));
  c->macro_base = c->n_frames - 1;
  vkf_status s = VKF_OK;
  for (size_t i = 0; i < n_params && !s; i++) {
    ct_str pname = m->names[i + 1];
    ct_value v = make_undef(c, "'%.*s' is undefined", (int)pname.n, pname.s);
    bool given = false;
    if (i < args->n_pos) v = args->pos[i], given = true;
    for (size_t k = 0; k < args->n_kw; k++)
      if (args->kw_names[k].n == pname.n && !memcmp(args->kw_names[k].s, pname.s, pname.n))
        v = args->kw[k], given = true;
    if (!given && m->args.items[i]) s = ct_eval(c, m->args.items[i], &v);
    if (!s) s = set_var(c, pname, v);
  }
  c->out = &body;
  c->macro_depth++;
  int control = 0;
  if (!s) s = ct_render_body(c, &m->body, &control);
  c->macro_depth--;
  c->out = saved_out;
  c->n_frames = saved_frames;
  c->macro_base = saved_base;
  if (!s && body.failed)
    s = ct_error(call, VKF_STATUS_INVALID_ARGUMENT, "output longer than %d MiB", CT_MAX_OUTPUT >> 20);
  if (!s) {
    char *p = ct_alloc(c->arena, body.size + 1);
    if (!p) s = ct_oom();
    else {
      if (body.size) memcpy(p, body.data, body.size);
      p[body.size] = 0;
      *out = ct_string(p, body.size);
    }
  }
  free(body.data);
  return s;
}

static vkf_status eval_call(ct_ctx *c, const ct_node *n, ct_value *out) {
  ct_value fn;
  VKF_RETURN_IF_ERROR(ct_eval(c, n->a, &fn));
  ct_args args;
  VKF_RETURN_IF_ERROR(eval_args(c, n, &args));
  if (fn.kind == CT_METHOD) return ct_call_method(c, n, *fn.u.recv, fn.name, &args, out);
  if (fn.kind == CT_FUNC && fn.u.macro) return call_macro(c, n, fn, &args, out);
  if (fn.kind == CT_FUNC) return ct_call_global(c, n, fn.name, &args, out);
  if (fn.kind == CT_UNDEF) return undefined_error(n, fn);
  return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "'%s' object is not callable", ct_kind_name(fn.kind));
}

vkf_status ct_eval(ct_ctx *c, const ct_node *n, ct_value *out) {
  if (++c->steps > CT_MAX_STEPS)
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "template runs longer than %d steps", CT_MAX_STEPS);
  if (++c->depth > 4 * CT_MAX_DEPTH) {
    c->depth--;
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "evaluation nests deeper than %d", 4 * CT_MAX_DEPTH);
  }
  vkf_status s = VKF_OK;
  ct_value a, b;
  switch (n->kind) {
  case N_LITERAL: *out = n->value; break;
  case N_NAME: *out = lookup(c, n->str); break;
  case N_LIST:
  case N_DICT: {
    bool dict = n->kind == N_DICT;
    ct_list *l = dict ? NULL : ct_list_new(c->arena, n->args.n);
    ct_dict *d = dict ? ct_dict_new(c->arena, n->args.n / 2) : NULL;
    if (!l && !d) { s = ct_oom(); break; }
    for (size_t i = 0; i < n->args.n && !s; i++) {
      s = ct_eval(c, n->args.items[i], &a);
      if (s) break;
      if (!dict) {
        if (!ct_list_push(c->arena, l, a)) s = ct_oom();
        continue;
      }
      s = ct_eval(c, n->args.items[++i], &b);
      if (s) break;
      if (a.kind != CT_STR) {
        s = ct_error(n, VKF_STATUS_UNSUPPORTED, "dict keys must be strings, not %s", ct_kind_name(a.kind));
        break;
      }
      if (!ct_dict_set(c->arena, d, a.u.s, b)) s = ct_oom();
    }
    if (!s && l) l->tuple = n->tuple;
    if (!s) *out = dict ? (ct_value){.kind = CT_DICT, .u.dict = d} : (ct_value){.kind = CT_LIST, .u.list = l};
    break;
  }
  case N_ATTR:
    s = ct_eval(c, n->a, &a);
    if (!s) s = get_attr(c, n, a, n->str, out);
    break;
  case N_INDEX:
    s = ct_eval(c, n->a, &a);
    if (!s) s = ct_eval(c, n->b, &b);
    if (!s) s = get_item(c, n, a, b, out);
    break;
  case N_SLICE: s = eval_slice(c, n, out); break;
  case N_CALL: s = eval_call(c, n, out); break;
  case N_FILTER: {
    ct_args args;
    s = ct_eval(c, n->a, &a);
    if (!s) s = eval_args(c, n, &args);
    if (!s) s = ct_apply_filter(c, n, a, &args, out);
    break;
  }
  case N_TEST: {
    ct_args args;
    bool r = false;
    s = ct_eval(c, n->a, &a);
    if (!s) s = eval_args(c, n, &args);
    if (!s) s = ct_apply_test(c, n, a, &args, &r);
    if (!s) *out = ct_bool(n->negate ? !r : r);
    break;
  }
  case N_UNARY:
    s = ct_eval(c, n->a, &a);
    if (s) break;
    if (n->str.s[0] == 'n') {
      *out = ct_bool(!ct_truthy(a));
    } else if (a.kind == CT_UNDEF) {
      s = undefined_error(n, a);
    } else if (a.kind == CT_FLOAT) {
      *out = ct_float(n->str.s[0] == '-' ? -a.u.f : a.u.f);
    } else if (a.kind == CT_INT || a.kind == CT_BOOL) {
      int64_t v = a.kind == CT_BOOL ? a.u.b : a.u.i;
      if (n->str.s[0] == '-' && v == INT64_MIN) s = ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "integer overflow");
      else *out = ct_int(n->str.s[0] == '-' ? -v : v);
    } else {
      s = ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "bad operand type for unary %.*s: '%s'",
                   (int)n->str.n, n->str.s, ct_kind_name(a.kind));
    }
    break;
  case N_BINARY: s = eval_binary(c, n, out); break;
  case N_COND:
    s = ct_eval(c, n->a, &a);
    if (s) break;
    if (ct_truthy(a)) s = ct_eval(c, n->b, out);
    else if (n->c) s = ct_eval(c, n->c, out);
    else *out = make_undef(c, "the inline if-expression on line %d evaluated to false and no else section was defined", n->line);
    break;
  default: s = ct_error(n, VKF_STATUS_INTERNAL, "not an expression"); break;
  }
  c->depth--;
  return s;
}

/* The items a for iterates: a list, a dict's keys, a string's characters; Undefined is empty. */
static vkf_status iter_items(ct_ctx *c, const ct_node *n, ct_value v, const ct_list **out) {
  static const ct_list empty = {0};
  if (v.kind == CT_UNDEF) return *out = &empty, VKF_OK;
  if (v.kind == CT_LIST) return *out = v.u.list, VKF_OK;
  if (v.kind == CT_DICT && !v.u.dict->ns) {
    ct_list *l = ct_list_new(c->arena, v.u.dict->n);
    if (!l) return ct_oom();
    for (size_t i = 0; i < v.u.dict->n; i++)
      ct_list_push(c->arena, l, ct_string(v.u.dict->keys[i].s, v.u.dict->keys[i].n));
    return *out = l, VKF_OK;
  }
  if (v.kind == CT_STR) {
    size_t len = ct_utf8_len(v.u.s.s, v.u.s.n);
    ct_list *l = ct_list_new(c->arena, len);
    if (!l) return ct_oom();
    for (size_t a = 0; a < v.u.s.n;) {
      size_t b = a + ct_cp_len_at(v.u.s.s, v.u.s.n, a);
      ct_list_push(c->arena, l, ct_string(v.u.s.s + a, b - a));
      a = b;
    }
    return *out = l, VKF_OK;
  }
  return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "'%s' object is not iterable", ct_kind_name(v.kind));
}

static vkf_status bind_targets(ct_ctx *c, const ct_node *n, ct_value item) {
  if (n->n_names == 1) return set_var(c, n->names[0], item);
  if (item.kind != CT_LIST || item.u.list->n != n->n_names)
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "cannot unpack %s into %zu names",
                    ct_kind_name(item.kind), n->n_names);
  for (size_t k = 0; k < n->n_names; k++) VKF_RETURN_IF_ERROR(set_var(c, n->names[k], item.u.list->items[k]));
  return VKF_OK;
}

static vkf_status exec_for(ct_ctx *c, const ct_node *n) {
  ct_value seq;
  VKF_RETURN_IF_ERROR(ct_eval(c, n->a, &seq));
  const ct_list *items = NULL;
  VKF_RETURN_IF_ERROR(iter_items(c, n, seq, &items));
  if (n->b) { /* for x in xs if cond: the loop sees only the items that pass */
    ct_list *kept = ct_list_new(c->arena, 0);
    if (!kept) return ct_oom();
    size_t saved = c->n_frames;
    VKF_RETURN_IF_ERROR(push_frame(c));
    ct_dict *scope = c->frames[c->n_frames - 1].vars;
    for (size_t i = 0; i < items->n; i++) {
      if (++c->steps > CT_MAX_STEPS) {
        c->n_frames = saved;
        return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "template runs longer than %d steps", CT_MAX_STEPS);
      }
      scope->n = 0; /* a fresh scope per item, reusing the frame's storage */
      vkf_status s = bind_targets(c, n, items->items[i]);
      ct_value keep = ct_bool(false);
      if (!s) s = ct_eval(c, n->b, &keep);
      if (!s && ct_truthy(keep) && !ct_list_push(c->arena, kept, items->items[i])) s = ct_oom();
      if (s) c->n_frames = saved;
      VKF_RETURN_IF_ERROR(s);
    }
    c->n_frames = saved;
    items = kept;
  }
  if (items->n == 0) {
    int control = 0;
    return ct_render_body(c, &n->else_body, &control);
  }
  ct_loop *loop = ct_alloc(c->arena, sizeof *loop);
  if (!loop) return ct_oom();
  loop->items = items;
  /* Every iteration starts from the enclosing scope (jinja2 does not carry a `set` in the body
   * over to the next iteration): one frame, emptied per iteration, so long loops reuse it. */
  size_t saved = c->n_frames;
  VKF_RETURN_IF_ERROR(push_frame(c));
  ct_dict *scope = c->frames[c->n_frames - 1].vars;
  vkf_status s = VKF_OK;
  for (size_t i = 0; i < items->n && !s; i++) {
    if (++c->steps > CT_MAX_STEPS) {
      s = ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "template runs longer than %d steps", CT_MAX_STEPS);
      break;
    }
    loop->index0 = i;
    scope->n = 0;
    s = set_var(c, (ct_str){"loop", 4}, (ct_value){.kind = CT_LOOP, .u.loop = loop});
    if (!s) s = bind_targets(c, n, items->items[i]);
    int control = 0;
    if (!s) s = ct_render_body(c, &n->body, &control);
    if (control == 1) break;
  }
  c->n_frames = saved;
  return s;
}

static vkf_status exec_set(ct_ctx *c, const ct_node *n) {
  ct_value v;
  VKF_RETURN_IF_ERROR(ct_eval(c, n->a, &v));
  if (!n->attr.s) return set_var(c, n->names[0], v);
  ct_value ns = lookup(c, n->names[0]);
  if (ns.kind != CT_DICT || !ns.u.dict->ns)
    return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "cannot assign attribute on non-namespace object");
  if (!ct_dict_set(c->arena, ns.u.dict, n->attr, v)) return ct_oom();
  return VKF_OK;
}

/* Runs statements; *control becomes 1 after break, 2 after continue. */
vkf_status ct_render_body(ct_ctx *c, const ct_node_list *body, int *control) {
  for (size_t i = 0; i < body->n; i++) {
    const ct_node *n = body->items[i];
    if (++c->steps > CT_MAX_STEPS)
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "template runs longer than %d steps", CT_MAX_STEPS);
    if (++c->depth > 4 * CT_MAX_DEPTH) {
      c->depth--;
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "evaluation nests deeper than %d", 4 * CT_MAX_DEPTH);
    }
    vkf_status s = VKF_OK;
    ct_value v;
    switch (n->kind) {
    case N_TEXT: ct_buf_put(c->out, n->str.s, n->str.n); break;
    case N_OUTPUT:
      s = ct_eval(c, n->a, &v);
      if (!s) ct_write_str(c->out, v);
      break;
    case N_IF:
      s = ct_eval(c, n->a, &v);
      if (!s) s = ct_render_body(c, ct_truthy(v) ? &n->body : &n->else_body, control);
      break;
    case N_FOR: s = exec_for(c, n); break;
    case N_SET: s = exec_set(c, n); break;
    case N_BREAK: *control = 1; break;
    case N_CONTINUE: *control = 2; break;
    case N_MACRO:
      s = set_var(c, n->names[0], (ct_value){.kind = CT_FUNC, .u.macro = n, .name = n->names[0]});
      break;
    case N_BLOCK: s = ct_render_body(c, &n->body, control); break;
    default: s = ct_error(n, VKF_STATUS_INTERNAL, "not a statement"); break;
    }
    c->depth--;
    VKF_RETURN_IF_ERROR(s);
    if (c->out->failed)
      return ct_error(n, VKF_STATUS_INVALID_ARGUMENT, "output longer than %d MiB", CT_MAX_OUTPUT >> 20);
    if (*control) return VKF_OK;
  }
  return VKF_OK;
}
