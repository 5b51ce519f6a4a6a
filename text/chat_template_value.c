/* Chat template values: the render arena, lists and dicts, conversion from cJSON, and the Python
 * semantics the output depends on (truthiness, ==, str() and repr(), repr(float)). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/chat_template_value.h"

/* Error helpers, here with the values every other chat_template_*.c file already depends on, so
 * that no file calls back up into the evaluator. */
vkf_status ct_oom(void) {
  return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "chat template: out of memory (limit %d MiB)",
                         CT_MAX_ARENA >> 20);
}

vkf_status ct_error(const ct_node *n, vkf_status_code code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!n) return vkf_status_make(code, "chat template: %s", msg);
  return vkf_status_make(code, "chat template %d:%d: %s", n->line, n->col, msg);
}

struct ct_chunk {
  ct_chunk *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
};

void *ct_alloc(ct_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  if (a->head && a->head->size - a->head->used >= size) {
    void *p = a->head->data + a->head->used;
    a->head->used += size;
    return p;
  }
  size_t chunk = size > 64 * 1024 ? size : 64 * 1024;
  if (a->limit && a->used_total + chunk > a->limit) return NULL;
  ct_chunk *c = malloc(sizeof *c + chunk);
  if (!c) return NULL;
  c->size = chunk;
  c->used = size;
  a->used_total += chunk;
  /* a big block goes behind the head so the head's free space is not lost */
  if (a->head && size == chunk) {
    c->next = a->head->next;
    a->head->next = c;
  } else {
    c->next = a->head;
    a->head = c;
  }
  return c->data;
}

void ct_arena_free(ct_arena *a) {
  for (ct_chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  a->head = NULL;
  a->used_total = 0;
}

void ct_buf_put(ct_buf *b, const char *s, size_t n) {
  if (b->failed || n == 0) return;
  if (b->size + n + 1 > b->cap) {
    if (b->limit && b->size + n > b->limit) {
      b->failed = true;
      return;
    }
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->size + n + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
      b->failed = true;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->size, s, n);
  b->size += n;
  b->data[b->size] = 0;
}
void ct_buf_puts(ct_buf *b, const char *s) { ct_buf_put(b, s, strlen(s)); }
void ct_buf_putc(ct_buf *b, char c) { ct_buf_put(b, &c, 1); }

ct_list *ct_list_new(ct_arena *a, size_t cap) {
  ct_list *l = ct_alloc(a, sizeof *l);
  if (!l) return NULL;
  l->n = 0;
  l->cap = cap;
  l->tuple = false;
  l->items = cap ? ct_alloc(a, cap * sizeof *l->items) : NULL;
  if (cap && !l->items) return NULL;
  return l;
}

bool ct_list_push(ct_arena *a, ct_list *l, ct_value v) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 4;
    ct_value *items = ct_alloc(a, cap * sizeof *items);
    if (!items) return false;
    if (l->n) memcpy(items, l->items, l->n * sizeof *items);
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = v;
  return true;
}

ct_dict *ct_dict_new(ct_arena *a, size_t cap) {
  ct_dict *d = ct_alloc(a, sizeof *d);
  if (!d) return NULL;
  memset(d, 0, sizeof *d);
  if (cap) {
    d->keys = ct_alloc(a, cap * sizeof *d->keys);
    d->vals = ct_alloc(a, cap * sizeof *d->vals);
    if (!d->keys || !d->vals) return NULL;
    d->cap = cap;
  }
  return d;
}

const ct_value *ct_dict_get(const ct_dict *d, const char *key, size_t n) {
  for (size_t i = 0; i < d->n; i++)
    if (d->keys[i].n == n && (n == 0 || memcmp(d->keys[i].s, key, n) == 0)) return &d->vals[i];
  return NULL;
}

bool ct_dict_set(ct_arena *a, ct_dict *d, ct_str key, ct_value v) {
  ct_value *old = (ct_value *)ct_dict_get(d, key.s, key.n);
  if (old) {
    *old = v;
    return true;
  }
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 4;
    ct_str *keys = ct_alloc(a, cap * sizeof *keys);
    ct_value *vals = ct_alloc(a, cap * sizeof *vals);
    if (!keys || !vals) return false;
    if (d->n) {
      memcpy(keys, d->keys, d->n * sizeof *keys);
      memcpy(vals, d->vals, d->n * sizeof *vals);
    }
    d->keys = keys;
    d->vals = vals;
    d->cap = cap;
  }
  d->keys[d->n] = key;
  d->vals[d->n++] = v;
  return true;
}

static bool copy_str(ct_arena *a, const char *s, ct_str *out) {
  size_t n = strlen(s);
  char *p = ct_alloc(a, n + 1);
  if (!p) return false;
  memcpy(p, s, n + 1);
  *out = (ct_str){p, n};
  return true;
}

vkf_status ct_from_json(ct_arena *a, const cJSON *j, int depth, ct_value *out) {
  if (depth > CT_MAX_DEPTH)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "chat template input nests deeper than %d",
                           CT_MAX_DEPTH);
  if (!j || cJSON_IsNull(j)) {
    *out = ct_none();
  } else if (cJSON_IsBool(j)) {
    *out = ct_bool(cJSON_IsTrue(j));
  } else if (cJSON_IsNumber(j)) {
    double f = j->valuedouble;
    if (f == floor(f) && fabs(f) < 9007199254740992.0)
      *out = ct_int((int64_t)f);
    else
      *out = ct_float(f);
  } else if (cJSON_IsString(j)) {
    ct_str s;
    if (!copy_str(a, j->valuestring ? j->valuestring : "", &s)) return ct_oom();
    *out = ct_string(s.s, s.n);
  } else if (cJSON_IsArray(j)) {
    ct_list *l = ct_list_new(a, (size_t)cJSON_GetArraySize(j));
    if (!l) return ct_oom();
    for (const cJSON *e = j->child; e; e = e->next) {
      ct_value v;
      VKF_RETURN_IF_ERROR(ct_from_json(a, e, depth + 1, &v));
      if (!ct_list_push(a, l, v)) return ct_oom();
    }
    *out = (ct_value){.kind = CT_LIST, .u.list = l};
  } else if (cJSON_IsObject(j)) {
    ct_dict *d = ct_dict_new(a, (size_t)cJSON_GetArraySize(j));
    if (!d) return ct_oom();
    for (const cJSON *e = j->child; e; e = e->next) {
      ct_value v;
      ct_str key;
      VKF_RETURN_IF_ERROR(ct_from_json(a, e, depth + 1, &v));
      if (!copy_str(a, e->string ? e->string : "", &key)) return ct_oom();
      if (!ct_dict_set(a, d, key, v)) return ct_oom();
    }
    *out = (ct_value){.kind = CT_DICT, .u.dict = d};
  } else {
    *out = ct_none();
  }
  return VKF_OK;
}

bool ct_truthy(ct_value v) {
  switch (v.kind) {
  case CT_UNDEF:
  case CT_NONE: return false;
  case CT_BOOL: return v.u.b;
  case CT_INT: return v.u.i != 0;
  case CT_FLOAT: return v.u.f != 0.0;
  case CT_STR: return v.u.s.n != 0;
  case CT_LIST: return v.u.list->n != 0;
  case CT_DICT: return v.u.dict->ns || v.u.dict->n != 0;
  default: return true;
  }
}

bool ct_is_number(ct_value v) { return v.kind == CT_INT || v.kind == CT_FLOAT; }

double ct_as_double(ct_value v) {
  switch (v.kind) {
  case CT_BOOL: return v.u.b;
  case CT_INT: return (double)v.u.i;
  case CT_FLOAT: return v.u.f;
  default: return 0;
  }
}

/* Values nest at most this deep for ==, str() and repr() (a template can build deeper lists in a
 * loop; Python would raise RecursionError, this answers "not equal" / prints "..."). */
static bool equal_at(ct_value a, ct_value b, int depth);
bool ct_equal(ct_value a, ct_value b) { return equal_at(a, b, 0); }

static bool equal_at(ct_value a, ct_value b, int depth) {
  if (depth > CT_MAX_DEPTH) return false;
  bool an = a.kind == CT_BOOL || ct_is_number(a), bn = b.kind == CT_BOOL || ct_is_number(b);
  if (an && bn) {
    if (a.kind != CT_FLOAT && b.kind != CT_FLOAT) {
      int64_t x = a.kind == CT_BOOL ? a.u.b : a.u.i, y = b.kind == CT_BOOL ? b.u.b : b.u.i;
      return x == y;
    }
    return ct_as_double(a) == ct_as_double(b);
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
  case CT_UNDEF:
  case CT_NONE: return true;
  case CT_STR: return a.u.s.n == b.u.s.n && (a.u.s.n == 0 || !memcmp(a.u.s.s, b.u.s.s, a.u.s.n));
  case CT_LIST:
    if (a.u.list == b.u.list) return true; /* Python compares items by identity first */
    if (a.u.list->n != b.u.list->n) return false;
    for (size_t i = 0; i < a.u.list->n; i++)
      if (!equal_at(a.u.list->items[i], b.u.list->items[i], depth + 1)) return false;
    return true;
  case CT_DICT:
    if (a.u.dict == b.u.dict) return true;
    if (a.u.dict->ns || b.u.dict->ns || a.u.dict->n != b.u.dict->n) return false;
    for (size_t i = 0; i < a.u.dict->n; i++) {
      const ct_value *o = ct_dict_get(b.u.dict, a.u.dict->keys[i].s, a.u.dict->keys[i].n);
      if (!o || !equal_at(a.u.dict->vals[i], *o, depth + 1)) return false;
    }
    return true;
  case CT_LOOP: return a.u.loop == b.u.loop;
  case CT_FUNC: return a.u.macro == b.u.macro && a.name.n == b.name.n &&
                       !memcmp(a.name.s, b.name.s, a.name.n);
  default: return false;
  }
}

const char *ct_kind_name(ct_kind k) {
  static const char *names[] = {"Undefined", "NoneType", "bool", "int",  "float",  "str",
                                "list",      "dict",     "LoopContext", "function", "method"};
  return names[k];
}

/* repr(float): the shortest digits that read back to the same double, in fixed notation when
 * the decimal exponent is in [-4, 16), else as d.ddde+XX, as Python's float_repr_style 'short'. */
void ct_write_float(ct_buf *b, double f) {
  if (isnan(f)) return ct_buf_puts(b, "nan");
  if (isinf(f)) return ct_buf_puts(b, f < 0 ? "-inf" : "inf");
  char tmp[64];
  int prec;
  for (prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, f);
    if (strtod(tmp, NULL) == f) break;
  }
  /* tmp: [-]d[.ddd]e[+-]XX */
  char digits[32];
  size_t nd = 0;
  const char *p = tmp;
  bool neg = *p == '-';
  if (neg) p++;
  for (; *p && *p != 'e'; p++)
    if (*p != '.') digits[nd++] = *p;
  int exp = atoi(p + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  if (neg) ct_buf_putc(b, '-');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      ct_buf_puts(b, "0.");
      for (int i = 0; i < -exp - 1; i++) ct_buf_putc(b, '0');
      ct_buf_put(b, digits, nd);
    } else {
      for (int i = 0; i <= exp; i++) ct_buf_putc(b, (size_t)i < nd ? digits[i] : '0');
      ct_buf_putc(b, '.');
      if ((size_t)exp + 1 < nd)
        ct_buf_put(b, digits + exp + 1, nd - (size_t)exp - 1);
      else
        ct_buf_putc(b, '0');
    }
  } else {
    ct_buf_putc(b, digits[0]);
    if (nd > 1) {
      ct_buf_putc(b, '.');
      ct_buf_put(b, digits + 1, nd - 1);
    }
    snprintf(tmp, sizeof tmp, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    ct_buf_puts(b, tmp);
  }
}

/* repr(str): single quotes unless the text has ' and no ", backslash escapes for the quote,
 * backslash and control characters (Python's isprintable, for the ASCII and C1 ranges). */
static void write_str_repr(ct_buf *b, ct_str s) {
  bool has_sq = memchr(s.s, '\'', s.n) != NULL, has_dq = memchr(s.s, '"', s.n) != NULL;
  char q = has_sq && !has_dq ? '"' : '\'';
  ct_buf_putc(b, q);
  for (size_t i = 0; i < s.n; i++) {
    unsigned char ch = (unsigned char)s.s[i];
    char esc[8];
    if (ch == (unsigned char)q || ch == '\\') {
      ct_buf_putc(b, '\\');
      ct_buf_putc(b, (char)ch);
    } else if (ch == '\n') {
      ct_buf_puts(b, "\\n");
    } else if (ch == '\r') {
      ct_buf_puts(b, "\\r");
    } else if (ch == '\t') {
      ct_buf_puts(b, "\\t");
    } else if (ch < 0x20 || ch == 0x7f) {
      snprintf(esc, sizeof esc, "\\x%02x", ch);
      ct_buf_puts(b, esc);
    } else if (ch == 0xc2 && i + 1 < s.n && (unsigned char)s.s[i + 1] >= 0x80 &&
               (unsigned char)s.s[i + 1] <= 0xa0 && (unsigned char)s.s[i + 1] != 0xa0 + 1) {
      /* U+0080..U+00A0 are not printable: \x80 ... \xa0 */
      snprintf(esc, sizeof esc, "\\x%02x", (unsigned char)s.s[i + 1]);
      ct_buf_puts(b, esc);
      i++;
    } else {
      ct_buf_putc(b, (char)ch);
    }
  }
  ct_buf_putc(b, q);
}

static void write_value(ct_buf *b, ct_value v, bool repr, int depth) {
  char tmp[32];
  if (depth > CT_MAX_DEPTH) return ct_buf_puts(b, "...");
  switch (v.kind) {
  case CT_UNDEF: break;
  case CT_NONE: ct_buf_puts(b, "None"); break;
  case CT_BOOL: ct_buf_puts(b, v.u.b ? "True" : "False"); break;
  case CT_INT:
    snprintf(tmp, sizeof tmp, "%lld", (long long)v.u.i);
    ct_buf_puts(b, tmp);
    break;
  case CT_FLOAT: ct_write_float(b, v.u.f); break;
  case CT_STR:
    if (repr)
      write_str_repr(b, v.u.s);
    else
      ct_buf_put(b, v.u.s.s, v.u.s.n);
    break;
  case CT_LIST:
    ct_buf_putc(b, v.u.list->tuple ? '(' : '[');
    for (size_t i = 0; i < v.u.list->n; i++) {
      if (i) ct_buf_puts(b, ", ");
      write_value(b, v.u.list->items[i], true, depth + 1);
    }
    if (v.u.list->tuple && v.u.list->n == 1) ct_buf_putc(b, ',');
    ct_buf_putc(b, v.u.list->tuple ? ')' : ']');
    break;
  case CT_DICT:
    if (v.u.dict->ns) ct_buf_puts(b, "<Namespace ");
    ct_buf_putc(b, '{');
    for (size_t i = 0; i < v.u.dict->n; i++) {
      if (i) ct_buf_puts(b, ", ");
      write_str_repr(b, v.u.dict->keys[i]);
      ct_buf_puts(b, ": ");
      write_value(b, v.u.dict->vals[i], true, depth + 1);
    }
    ct_buf_putc(b, '}');
    if (v.u.dict->ns) ct_buf_putc(b, '>');
    break;
  case CT_LOOP: ct_buf_puts(b, "<LoopContext>"); break;
  case CT_FUNC:
  case CT_METHOD:
    ct_buf_puts(b, "<function ");
    ct_buf_put(b, v.name.s, v.name.n);
    ct_buf_putc(b, '>');
    break;
  }
}

void ct_write_str(ct_buf *b, ct_value v) { write_value(b, v, false, 0); }
void ct_write_repr(ct_buf *b, ct_value v) { write_value(b, v, true, 0); }

bool ct_to_str(ct_arena *a, ct_value v, ct_str *out) {
  if (v.kind == CT_STR) {
    *out = v.u.s;
    return true;
  }
  ct_buf b = {.limit = CT_MAX_OUTPUT};
  ct_write_str(&b, v);
  if (b.failed) {
    free(b.data);
    return false;
  }
  char *p = ct_alloc(a, b.size + 1);
  if (p) {
    if (b.size) memcpy(p, b.data, b.size);
    p[b.size] = 0;
  }
  free(b.data);
  *out = (ct_str){p ? p : "", p ? b.size : 0};
  return p != NULL;
}

size_t ct_utf8_len(const char *s, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xc0) != 0x80) count++;
  return count;
}

size_t ct_utf8_offset(const char *s, size_t n, size_t i) {
  size_t at = 0, seen = 0;
  while (at < n) {
    if (((unsigned char)s[at] & 0xc0) != 0x80) {
      if (seen == i) return at;
      seen++;
    }
    at++;
  }
  return n;
}
