/* The chat template interpreter's data, shared by the chat_template_*.c files: the arena, values,
 * the syntax tree, the render context, and the error helpers, all defined in chat_template_value.c
 * (or the JSON writer, chat_template_json.c) so that every other file depends on this one and none
 * back. Not part of the library's interface (text/chat_template.h is). */
#ifndef VKF_MODELS_CHAT_TEMPLATE_VALUE_H
#define VKF_MODELS_CHAT_TEMPLATE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct cJSON cJSON;

/* Limits that turn a hostile template into an error instead of a crash or a hang. */
enum {
  CT_MAX_DEPTH = 200,              /* nesting of statements and expressions (parse and eval) */
  CT_MAX_MACRO_DEPTH = 64,         /* macro calls within macro calls */
  CT_MAX_RANGE = 100000,           /* jinja2's sandbox MAX_RANGE */
  CT_MAX_OUTPUT = 64 << 20,        /* rendered bytes */
  CT_MAX_ARENA = 256 << 20,        /* bytes of values one render may allocate */
  CT_MAX_STEPS = 10 * 1000 * 1000, /* statements and expressions evaluated in one render */
};

/* ---- arena: everything a parse or a render allocates, freed in one call ---- */
typedef struct ct_chunk ct_chunk;
typedef struct ct_arena {
  ct_chunk *head;
  size_t used_total, limit;
} ct_arena;
/* NULL when the arena's limit is reached or malloc fails. */
void *ct_alloc(ct_arena *a, size_t size);
void ct_arena_free(ct_arena *a);

typedef struct ct_str {
  const char *s;
  size_t n;
} ct_str;

/* ---- values ---- */
typedef enum ct_kind {
  CT_UNDEF, /* jinja2's Undefined: prints "", is false, fails when used as an object */
  CT_NONE,
  CT_BOOL,
  CT_INT,
  CT_FLOAT,
  CT_STR,
  CT_LIST,   /* lists and tuples */
  CT_DICT,   /* insertion-ordered; namespaces are dicts with `ns` set */
  CT_LOOP,   /* the `loop` variable of a for */
  CT_FUNC,   /* a global function (raise_exception, range, ...) or a macro */
  CT_METHOD, /* obj.name of a str or dict method, waiting for its call */
} ct_kind;

typedef struct ct_list ct_list;
typedef struct ct_dict ct_dict;
typedef struct ct_loop ct_loop;
typedef struct ct_node ct_node;

typedef struct ct_value {
  ct_kind kind;
  union {
    bool b;
    int64_t i;
    double f;
    ct_str s;              /* CT_STR; CT_UNDEF: the name or attribute that was missing */
    ct_list *list;
    ct_dict *dict;
    ct_loop *loop;
    const ct_node *macro;  /* CT_FUNC: NULL for a builtin */
    struct ct_value *recv; /* CT_METHOD: the receiver */
  } u;
  ct_str name; /* CT_FUNC / CT_METHOD: the function or method name */
} ct_value;

struct ct_list {
  ct_value *items;
  size_t n, cap;
  bool tuple; /* prints as (a, b): a parenthesised literal or an items() pair */
};
struct ct_dict {
  ct_str *keys;
  ct_value *vals;
  size_t n, cap;
  bool ns; /* a namespace(): attributes may be assigned */
};
struct ct_loop {
  const ct_list *items;
  size_t index0;
};

static inline ct_value ct_undef(const char *name, size_t n) {
  ct_value v = {.kind = CT_UNDEF};
  v.u.s = (ct_str){name, n};
  return v;
}
static inline ct_value ct_none(void) { return (ct_value){.kind = CT_NONE}; }
static inline ct_value ct_bool(bool b) { return (ct_value){.kind = CT_BOOL, .u.b = b}; }
static inline ct_value ct_int(int64_t i) { return (ct_value){.kind = CT_INT, .u.i = i}; }
static inline ct_value ct_float(double f) { return (ct_value){.kind = CT_FLOAT, .u.f = f}; }
static inline ct_value ct_string(const char *s, size_t n) {
  ct_value v = {.kind = CT_STR};
  v.u.s = (ct_str){s, n};
  return v;
}

/* A growable byte buffer (heap, not arena) with a size cap; `failed` is sticky. */
typedef struct ct_buf {
  char *data;
  size_t size, cap, limit;
  bool failed;
} ct_buf;
void ct_buf_put(ct_buf *b, const char *s, size_t n);
void ct_buf_puts(ct_buf *b, const char *s);
void ct_buf_putc(ct_buf *b, char c);

ct_list *ct_list_new(ct_arena *a, size_t cap);
bool ct_list_push(ct_arena *a, ct_list *l, ct_value v);
ct_dict *ct_dict_new(ct_arena *a, size_t cap);
/* Sets or replaces `key` (keys are compared as bytes). */
bool ct_dict_set(ct_arena *a, ct_dict *d, ct_str key, ct_value v);
const ct_value *ct_dict_get(const ct_dict *d, const char *key, size_t n);

/* cJSON -> value (strings are copied into the arena; numbers with an integral value are ints). */
vkf_status ct_from_json(ct_arena *a, const cJSON *j, int depth, ct_value *out);
bool ct_truthy(ct_value v);
bool ct_equal(ct_value a, ct_value b);
const char *ct_kind_name(ct_kind k); /* Python's type name: "str", "dict", "NoneType", ... */
bool ct_is_number(ct_value v);       /* int, float (bool excluded) */
double ct_as_double(ct_value v);     /* bool, int, float */
/* Python str() and repr() of a value, appended to `b`. */
void ct_write_str(ct_buf *b, ct_value v);
void ct_write_repr(ct_buf *b, ct_value v);
void ct_write_float(ct_buf *b, double f); /* Python's repr(float) */
/* A value's str() as an arena string. */
bool ct_to_str(ct_arena *a, ct_value v, ct_str *out);
/* json.dumps(v, ensure_ascii, indent (<0: none), separators, sort_keys) */
vkf_status ct_write_json(ct_buf *b, ct_value v, bool ensure_ascii, int indent, ct_str item_sep,
                         ct_str key_sep, bool sort_keys, int depth);

/* Error helpers (chat_template_value.c): "line:col: message"; `n` may be NULL. */
vkf_status ct_error(const ct_node *n, vkf_status_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
vkf_status ct_oom(void);

/* UTF-8 helpers: code point count, the byte offset of code point `i` (i <= count). */
size_t ct_utf8_len(const char *s, size_t n);
size_t ct_utf8_offset(const char *s, size_t n, size_t i);

/* ---- syntax tree ---- */
typedef enum ct_node_kind {
  /* statements */
  N_TEXT,     /* str */
  N_OUTPUT,   /* a */
  N_IF,       /* a: condition, body, else_body (elif is a nested N_IF) */
  N_FOR,      /* names[0..n_names], a: iterable, b: filter or NULL, body, else_body */
  N_SET,      /* names[0] (and attr for ns.attr), a: value */
  N_BREAK,
  N_CONTINUE,
  N_MACRO,    /* names[0]: name, params: names[1..n_names] with defaults args[..], body */
  N_BLOCK,    /* body (generation) */
  /* expressions */
  N_LITERAL,  /* value */
  N_NAME,     /* str */
  N_LIST,     /* args */
  N_DICT,     /* args: key, value, key, value ... */
  N_ATTR,     /* a.str */
  N_INDEX,    /* a[b] */
  N_SLICE,    /* a[args[0]:args[1]:args[2]] (NULL members for omitted parts) */
  N_CALL,     /* a(args, kwargs) */
  N_FILTER,   /* a | str(args, kwargs) */
  N_TEST,     /* a is [not] str(args); negate */
  N_UNARY,    /* op a: "not", "-", "+" */
  N_BINARY,   /* a op b: + - * / // % ** ~ == != < <= > >= in "not in" and or */
  N_COND,     /* b if a else c (c may be NULL) */
} ct_node_kind;

typedef struct ct_node_list {
  ct_node **items;
  size_t n;
} ct_node_list;

struct ct_node {
  ct_node_kind kind;
  int line, col;
  ct_str str;     /* name / attribute / filter / test / operator / text */
  ct_str attr;    /* N_SET: ns.attr target */
  ct_node *a, *b, *c;
  ct_node_list body, else_body;
  ct_node_list args;
  ct_str *kw_names; /* keyword argument names, one per kwargs item */
  ct_node_list kwargs;
  ct_str *names;    /* N_FOR targets, N_MACRO name + params, N_SET target */
  size_t n_names;
  bool negate;      /* N_TEST: "is not" */
  bool tuple;       /* N_LIST: written with parentheses */
  ct_value value;   /* N_LITERAL */
};

struct vkf_chat_template {
  ct_arena arena;
  ct_node_list root;
};

/* ---- evaluation ---- */
typedef struct ct_frame {
  ct_dict *vars; /* a scope's names */
} ct_frame;
typedef struct ct_ctx {
  ct_arena *arena;
  ct_buf *out;
  const struct vkf_chat_template *tmpl;
  ct_frame *frames; /* innermost last */
  size_t n_frames, cap_frames;
  size_t macro_base;   /* frames below this (except the root) are hidden from a macro body */
  int depth, macro_depth;
  uint64_t steps;
  int64_t now;
} ct_ctx;

/* A call's `args`/`kwargs`, evaluated (the builtins: chat_template_filters.c, _calls.c). */
typedef struct ct_args {
  ct_value *pos;
  size_t n_pos;
  const ct_str *kw_names;
  ct_value *kw;
  size_t n_kw;
} ct_args;
/* The case conversions of chat_template_strings.c. */
typedef enum { CASE_UPPER, CASE_LOWER, CASE_TITLE_METHOD, CASE_TITLE_FILTER, CASE_CAPITALIZE } case_kind;
static inline bool ct_str_eq(ct_str s, const char *lit) {
  size_t n = 0;
  while (lit[n]) n++;
  return s.n == n && (n == 0 || __builtin_memcmp(s.s, lit, n) == 0);
}

#endif
