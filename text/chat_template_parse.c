/* Chat template parser: tokens -> statement and expression trees, following jinja2's grammar and
 * operator precedence (parser.py): conditional < or < and < not < comparisons < + - < ~ <
 * * / // % < ** < unary minus < postfix (. [] ()) and filters / tests. Unknown filters and tests
 * are rejected here, as jinja2 rejects them when it compiles. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "text/chat_template_internal.h"

typedef struct parser {
  ct_arena *a;
  const ct_token *t;
  size_t n, i;
  int depth, loops;
} parser;

static const ct_token *cur(parser *p) { return &p->t[p->i]; }

static vkf_status perr(const ct_token *t, vkf_status_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static vkf_status perr(const ct_token *t, vkf_status_code code, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return vkf_status_make(code, "chat template %d:%d: %s", t->line, t->col, msg);
}

static const char *tok_desc(const ct_token *t, char *buf, size_t size) {
  switch (t->kind) {
  case TK_EOF: return "end of template";
  case TK_TEXT: return "template text";
  case TK_VAR_BEGIN: return "'{{'";
  case TK_VAR_END: return "'}}'";
  case TK_BLOCK_BEGIN: return "'{%'";
  case TK_BLOCK_END: return "'%}'";
  case TK_STRING: return "a string";
  default: break;
  }
  snprintf(buf, size, "'%.*s'", (int)(t->text.n > 40 ? 40 : t->text.n), t->text.s);
  return buf;
}

static vkf_status unexpected(parser *p, const char *wanted) {
  char buf[64];
  return perr(cur(p), VKF_STATUS_PARSE, "expected %s, got %s", wanted,
              tok_desc(cur(p), buf, sizeof buf));
}

static vkf_status expect_op(parser *p, const char *op) {
  if (!ct_tok_is(cur(p), op)) {
    char want[16];
    snprintf(want, sizeof want, "'%s'", op);
    return unexpected(p, want);
  }
  p->i++;
  return VKF_OK;
}

static vkf_status expect_kind(parser *p, ct_tok_kind kind, const char *wanted) {
  if (cur(p)->kind != kind) return unexpected(p, wanted);
  p->i++;
  return VKF_OK;
}

static vkf_status new_node(parser *p, ct_node_kind kind, const ct_token *at, ct_node **out) {
  ct_node *n = ct_alloc(p->a, sizeof *n);
  if (!n) return ct_oom();
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->line = at->line;
  n->col = at->col;
  *out = n;
  return VKF_OK;
}

/* Growable node lists and name lists, built in the arena. */
typedef struct nodes_b {
  ct_node **items;
  size_t n, cap;
} nodes_b;
static vkf_status nodes_push(parser *p, nodes_b *b, ct_node *n) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 4;
    ct_node **items = ct_alloc(p->a, cap * sizeof *items);
    if (!items) return ct_oom();
    if (b->n) memcpy(items, b->items, b->n * sizeof *items);
    b->items = items;
    b->cap = cap;
  }
  b->items[b->n++] = n;
  return VKF_OK;
}
static ct_node_list nodes_done(nodes_b *b) { return (ct_node_list){b->items, b->n}; }

static vkf_status parse_expr(parser *p, ct_node **out);
static vkf_status parse_or(parser *p, ct_node **out);
static vkf_status parse_unary(parser *p, bool with_filter, ct_node **out);

static vkf_status enter(parser *p) {
  if (++p->depth > CT_MAX_DEPTH)
    return perr(cur(p), VKF_STATUS_PARSE, "nesting deeper than %d", CT_MAX_DEPTH);
  return VKF_OK;
}

/* ( args ) with name=value keywords; the '(' is current. */
static vkf_status parse_call_args(parser *p, ct_node *n) {
  VKF_RETURN_IF_ERROR(expect_op(p, "("));
  nodes_b pos = {0}, kw = {0};
  ct_str *names = NULL;
  size_t names_cap = 0;
  while (!ct_tok_is(cur(p), ")")) {
    if (pos.n || kw.n) VKF_RETURN_IF_ERROR(expect_op(p, ","));
    if (ct_tok_is(cur(p), ")")) break;
    if (ct_tok_is(cur(p), "*") || ct_tok_is(cur(p), "**"))
      return perr(cur(p), VKF_STATUS_UNSUPPORTED, "*args and **kwargs are not supported");
    if (cur(p)->kind == TK_NAME && ct_tok_is(&p->t[p->i + 1], "=")) {
      if (kw.n == names_cap) {
        size_t cap = names_cap ? names_cap * 2 : 4;
        ct_str *nn = ct_alloc(p->a, cap * sizeof *nn);
        if (!nn) return ct_oom();
        if (kw.n) memcpy(nn, names, kw.n * sizeof *nn);
        names = nn;
        names_cap = cap;
      }
      names[kw.n] = cur(p)->text;
      p->i += 2;
      ct_node *v = NULL;
      VKF_RETURN_IF_ERROR(parse_expr(p, &v));
      VKF_RETURN_IF_ERROR(nodes_push(p, &kw, v));
    } else {
      if (kw.n) return perr(cur(p), VKF_STATUS_PARSE, "positional argument after a keyword");
      ct_node *v = NULL;
      VKF_RETURN_IF_ERROR(parse_expr(p, &v));
      VKF_RETURN_IF_ERROR(nodes_push(p, &pos, v));
    }
  }
  p->i++;
  n->args = nodes_done(&pos);
  n->kwargs = nodes_done(&kw);
  n->kw_names = names;
  return VKF_OK;
}

static vkf_status parse_primary(parser *p, ct_node **out) {
  const ct_token *t = cur(p);
  ct_node *n = NULL;
  VKF_RETURN_IF_ERROR(enter(p));
  if (t->kind == TK_NAME) {
    VKF_RETURN_IF_ERROR(new_node(p, N_LITERAL, t, &n));
    if (ct_str_eq(t->text, "true") || ct_str_eq(t->text, "True"))
      n->value = ct_bool(true);
    else if (ct_str_eq(t->text, "false") || ct_str_eq(t->text, "False"))
      n->value = ct_bool(false);
    else if (ct_str_eq(t->text, "none") || ct_str_eq(t->text, "None"))
      n->value = ct_none();
    else
      n->kind = N_NAME, n->str = t->text;
    p->i++;
  } else if (t->kind == TK_STRING) {
    /* adjacent literals join: "a" "b" */
    size_t total = 0, j = p->i;
    for (; p->t[j].kind == TK_STRING; j++) total += p->t[j].text.n;
    char *s = ct_alloc(p->a, total + 1);
    if (!s) return ct_oom();
    size_t k = 0;
    for (; p->i < j; p->i++) {
      if (cur(p)->text.n) memcpy(s + k, cur(p)->text.s, cur(p)->text.n);
      k += cur(p)->text.n;
    }
    s[k] = 0;
    VKF_RETURN_IF_ERROR(new_node(p, N_LITERAL, t, &n));
    n->value = ct_string(s, k);
  } else if (t->kind == TK_INT || t->kind == TK_FLOAT) {
    VKF_RETURN_IF_ERROR(new_node(p, N_LITERAL, t, &n));
    n->value = t->kind == TK_INT ? ct_int(t->i) : ct_float(t->f);
    p->i++;
  } else if (ct_tok_is(t, "(")) {
    p->i++;
    nodes_b items = {0};
    bool tuple = false;
    while (!ct_tok_is(cur(p), ")")) {
      if (items.n) {
        VKF_RETURN_IF_ERROR(expect_op(p, ","));
        tuple = true;
        if (ct_tok_is(cur(p), ")")) break;
      }
      ct_node *e = NULL;
      VKF_RETURN_IF_ERROR(parse_expr(p, &e));
      VKF_RETURN_IF_ERROR(nodes_push(p, &items, e));
    }
    p->i++;
    if (items.n == 1 && !tuple) {
      n = items.items[0];
    } else {
      VKF_RETURN_IF_ERROR(new_node(p, N_LIST, t, &n));
      n->args = nodes_done(&items);
      n->tuple = true;
    }
  } else if (ct_tok_is(t, "[") || ct_tok_is(t, "{")) {
    bool dict = ct_tok_is(t, "{");
    p->i++;
    nodes_b items = {0};
    const char *close = dict ? "}" : "]";
    while (!ct_tok_is(cur(p), close)) {
      if (items.n) {
        VKF_RETURN_IF_ERROR(expect_op(p, ","));
        if (ct_tok_is(cur(p), close)) break;
      }
      ct_node *e = NULL;
      VKF_RETURN_IF_ERROR(parse_expr(p, &e));
      VKF_RETURN_IF_ERROR(nodes_push(p, &items, e));
      if (dict) {
        VKF_RETURN_IF_ERROR(expect_op(p, ":"));
        VKF_RETURN_IF_ERROR(parse_expr(p, &e));
        VKF_RETURN_IF_ERROR(nodes_push(p, &items, e));
      }
    }
    p->i++;
    VKF_RETURN_IF_ERROR(new_node(p, dict ? N_DICT : N_LIST, t, &n));
    n->args = nodes_done(&items);
  } else {
    p->depth--;
    return unexpected(p, "an expression");
  }
  p->depth--;
  *out = n;
  return VKF_OK;
}

static vkf_status parse_subscript(parser *p, ct_node *obj, const ct_token *at, ct_node **out) {
  ct_node *parts[3] = {NULL, NULL, NULL};
  int k = 0;
  bool slice = false;
  for (;;) {
    if (ct_tok_is(cur(p), ":")) {
      if (k == 2) return unexpected(p, "']'");
      slice = true;
      k++;
      p->i++;
      continue;
    }
    if (ct_tok_is(cur(p), "]")) break;
    if (parts[k]) return unexpected(p, "']' or ':'");
    VKF_RETURN_IF_ERROR(parse_expr(p, &parts[k]));
  }
  p->i++;
  ct_node *n = NULL;
  if (!slice) {
    if (!parts[0]) return perr(at, VKF_STATUS_PARSE, "empty subscript");
    VKF_RETURN_IF_ERROR(new_node(p, N_INDEX, at, &n));
    n->a = obj;
    n->b = parts[0];
  } else {
    VKF_RETURN_IF_ERROR(new_node(p, N_SLICE, at, &n));
    n->a = obj;
    ct_node **args = ct_alloc(p->a, 3 * sizeof *args);
    if (!args) return ct_oom();
    memcpy(args, parts, sizeof parts);
    n->args = (ct_node_list){args, 3};
  }
  *out = n;
  return VKF_OK;
}

static vkf_status parse_postfix(parser *p, ct_node *n, ct_node **out) {
  for (;;) {
    const ct_token *t = cur(p);
    ct_node *m = NULL;
    if (ct_tok_is(t, ".")) {
      p->i++;
      const ct_token *name = cur(p);
      if (name->kind == TK_NAME) {
        VKF_RETURN_IF_ERROR(new_node(p, N_ATTR, t, &m));
        m->a = n;
        m->str = name->text;
      } else if (name->kind == TK_INT) {
        ct_node *lit = NULL;
        VKF_RETURN_IF_ERROR(new_node(p, N_LITERAL, name, &lit));
        lit->value = ct_int(name->i);
        VKF_RETURN_IF_ERROR(new_node(p, N_INDEX, t, &m));
        m->a = n;
        m->b = lit;
      } else {
        return unexpected(p, "an attribute name");
      }
      p->i++;
    } else if (ct_tok_is(t, "[")) {
      p->i++;
      VKF_RETURN_IF_ERROR(parse_subscript(p, n, t, &m));
    } else if (ct_tok_is(t, "(")) {
      VKF_RETURN_IF_ERROR(new_node(p, N_CALL, t, &m));
      m->a = n;
      VKF_RETURN_IF_ERROR(parse_call_args(p, m));
    } else {
      break;
    }
    n = m;
  }
  *out = n;
  return VKF_OK;
}

static vkf_status parse_filters(parser *p, ct_node *n, ct_node **out) {
  for (;;) {
    const ct_token *t = cur(p);
    ct_node *m = NULL;
    if (ct_tok_is(t, "|")) {
      p->i++;
      const ct_token *name = cur(p);
      if (name->kind != TK_NAME) return unexpected(p, "a filter name");
      if (!ct_filter_known(name->text))
        return perr(name, VKF_STATUS_PARSE, "no filter named '%.*s'", (int)name->text.n,
                    name->text.s);
      p->i++;
      VKF_RETURN_IF_ERROR(new_node(p, N_FILTER, name, &m));
      m->a = n;
      m->str = name->text;
      if (ct_tok_is(cur(p), "(")) VKF_RETURN_IF_ERROR(parse_call_args(p, m));
    } else if (ct_tok_name(t, "is")) {
      p->i++;
      VKF_RETURN_IF_ERROR(new_node(p, N_TEST, t, &m));
      if (ct_tok_name(cur(p), "not")) {
        m->negate = true;
        p->i++;
      }
      const ct_token *name = cur(p);
      if (name->kind != TK_NAME) return unexpected(p, "a test name");
      if (!ct_test_known(name->text))
        return perr(name, VKF_STATUS_PARSE, "no test named '%.*s'", (int)name->text.n,
                    name->text.s);
      p->i++;
      m->a = n;
      m->str = name->text;
      const ct_token *nx = cur(p);
      if (ct_tok_is(nx, "(")) {
        VKF_RETURN_IF_ERROR(parse_call_args(p, m));
      } else if ((nx->kind == TK_NAME || nx->kind == TK_STRING || nx->kind == TK_INT ||
                  nx->kind == TK_FLOAT || ct_tok_is(nx, "[") || ct_tok_is(nx, "{")) &&
                 !ct_tok_name(nx, "else") && !ct_tok_name(nx, "or") && !ct_tok_name(nx, "and")) {
        if (ct_tok_name(nx, "is")) return perr(nx, VKF_STATUS_PARSE, "tests cannot be chained");
        ct_node *arg = NULL;
        VKF_RETURN_IF_ERROR(parse_primary(p, &arg));
        VKF_RETURN_IF_ERROR(parse_postfix(p, arg, &arg));
        ct_node **args = ct_alloc(p->a, sizeof *args);
        if (!args) return ct_oom();
        args[0] = arg;
        m->args = (ct_node_list){args, 1};
      }
    } else if (ct_tok_is(t, "(")) {
      VKF_RETURN_IF_ERROR(new_node(p, N_CALL, t, &m));
      m->a = n;
      VKF_RETURN_IF_ERROR(parse_call_args(p, m));
    } else {
      break;
    }
    n = m;
  }
  *out = n;
  return VKF_OK;
}

static vkf_status parse_unary(parser *p, bool with_filter, ct_node **out) {
  const ct_token *t = cur(p);
  ct_node *n = NULL;
  VKF_RETURN_IF_ERROR(enter(p));
  if (ct_tok_is(t, "-") || ct_tok_is(t, "+")) {
    p->i++;
    VKF_RETURN_IF_ERROR(new_node(p, N_UNARY, t, &n));
    n->str = t->text;
    VKF_RETURN_IF_ERROR(parse_unary(p, false, &n->a));
  } else {
    VKF_RETURN_IF_ERROR(parse_primary(p, &n));
  }
  VKF_RETURN_IF_ERROR(parse_postfix(p, n, &n));
  if (with_filter) VKF_RETURN_IF_ERROR(parse_filters(p, n, &n));
  p->depth--;
  *out = n;
  return VKF_OK;
}

static vkf_status binary(parser *p, const ct_token *op, ct_str name, ct_node *l, ct_node *r,
                         ct_node **out) {
  ct_node *n = NULL;
  VKF_RETURN_IF_ERROR(new_node(p, N_BINARY, op, &n));
  n->str = name;
  n->a = l;
  n->b = r;
  *out = n;
  return VKF_OK;
}

/* One precedence level of left-associative operators; `next` parses the level above. */
typedef vkf_status (*level_fn)(parser *p, ct_node **out);
static vkf_status parse_level(parser *p, const char *const *ops, level_fn next, ct_node **out) {
  ct_node *l = NULL;
  VKF_RETURN_IF_ERROR(enter(p));
  VKF_RETURN_IF_ERROR(next(p, &l));
  for (;;) {
    const ct_token *t = cur(p);
    bool hit = false;
    for (const char *const *o = ops; *o && !hit; o++)
      hit = (*o[0] >= 'a' && *o[0] <= 'z') ? ct_tok_name(t, *o) : ct_tok_is(t, *o);
    if (!hit) break;
    p->i++;
    ct_node *r = NULL;
    VKF_RETURN_IF_ERROR(next(p, &r));
    VKF_RETURN_IF_ERROR(binary(p, t, t->text, l, r, &l));
  }
  p->depth--;
  *out = l;
  return VKF_OK;
}

static vkf_status parse_unary_f(parser *p, ct_node **out) { return parse_unary(p, true, out); }
static vkf_status parse_pow(parser *p, ct_node **out) {
  static const char *const ops[] = {"**", NULL};
  return parse_level(p, ops, parse_unary_f, out);
}
static vkf_status parse_math2(parser *p, ct_node **out) {
  static const char *const ops[] = {"*", "/", "//", "%", NULL};
  return parse_level(p, ops, parse_pow, out);
}
static vkf_status parse_concat(parser *p, ct_node **out) {
  static const char *const ops[] = {"~", NULL};
  return parse_level(p, ops, parse_math2, out);
}
static vkf_status parse_math1(parser *p, ct_node **out) {
  static const char *const ops[] = {"+", "-", NULL};
  return parse_level(p, ops, parse_concat, out);
}

/* a op b op c: a chain is (a op b) and (b op c), as Python compares (b evaluated twice). */
static vkf_status parse_compare(parser *p, ct_node **out) {
  static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">=", NULL};
  ct_node *l = NULL, *result = NULL;
  VKF_RETURN_IF_ERROR(parse_math1(p, &l));
  for (;;) {
    const ct_token *t = cur(p);
    ct_str name = t->text;
    bool hit = false;
    for (const char *const *o = ops; *o && !hit; o++) hit = ct_tok_is(t, *o);
    if (!hit && ct_tok_name(t, "in")) hit = true;
    if (!hit && ct_tok_name(t, "not") && ct_tok_name(&p->t[p->i + 1], "in")) {
      hit = true;
      name = (ct_str){"not in", 6};
      p->i++;
    }
    if (!hit) break;
    p->i++;
    ct_node *r = NULL, *cmp = NULL;
    VKF_RETURN_IF_ERROR(parse_math1(p, &r));
    VKF_RETURN_IF_ERROR(binary(p, t, name, l, r, &cmp));
    if (result)
      VKF_RETURN_IF_ERROR(binary(p, t, (ct_str){"and", 3}, result, cmp, &result));
    else
      result = cmp;
    l = r;
  }
  *out = result ? result : l;
  return VKF_OK;
}

static vkf_status parse_not(parser *p, ct_node **out) {
  const ct_token *t = cur(p);
  if (ct_tok_name(t, "not")) {
    p->i++;
    ct_node *n = NULL;
    VKF_RETURN_IF_ERROR(enter(p));
    VKF_RETURN_IF_ERROR(new_node(p, N_UNARY, t, &n));
    n->str = t->text;
    VKF_RETURN_IF_ERROR(parse_not(p, &n->a));
    p->depth--;
    *out = n;
    return VKF_OK;
  }
  return parse_compare(p, out);
}
static vkf_status parse_and(parser *p, ct_node **out) {
  static const char *const ops[] = {"and", NULL};
  return parse_level(p, ops, parse_not, out);
}
static vkf_status parse_or(parser *p, ct_node **out) {
  static const char *const ops[] = {"or", NULL};
  return parse_level(p, ops, parse_and, out);
}

/* a if cond [else b] */
static vkf_status parse_expr(parser *p, ct_node **out) {
  ct_node *n = NULL;
  VKF_RETURN_IF_ERROR(enter(p));
  VKF_RETURN_IF_ERROR(parse_or(p, &n));
  while (ct_tok_name(cur(p), "if")) {
    const ct_token *t = cur(p);
    p->i++;
    ct_node *c = NULL;
    VKF_RETURN_IF_ERROR(new_node(p, N_COND, t, &c));
    c->b = n;
    VKF_RETURN_IF_ERROR(parse_or(p, &c->a));
    if (ct_tok_name(cur(p), "else")) {
      p->i++;
      VKF_RETURN_IF_ERROR(parse_expr(p, &c->c));
    }
    n = c;
  }
  p->depth--;
  *out = n;
  return VKF_OK;
}

/* ---- statements ---- */

static vkf_status parse_body(parser *p, const char *const *ends, ct_node_list *out);

static bool at_end_tag(parser *p, const char *const *ends) {
  if (cur(p)->kind != TK_BLOCK_BEGIN) return false;
  const ct_token *name = &p->t[p->i + 1];
  for (; ends && *ends; ends++)
    if (ct_tok_name(name, *ends)) return true;
  return false;
}

static vkf_status block_end(parser *p) { return expect_kind(p, TK_BLOCK_END, "'%}'"); }

static vkf_status parse_if(parser *p, const ct_token *at, ct_node **out) {
  static const char *const ends[] = {"elif", "else", "endif", NULL};
  ct_node *n = NULL;
  VKF_RETURN_IF_ERROR(new_node(p, N_IF, at, &n));
  VKF_RETURN_IF_ERROR(parse_expr(p, &n->a));
  VKF_RETURN_IF_ERROR(block_end(p));
  VKF_RETURN_IF_ERROR(parse_body(p, ends, &n->body));
  if (cur(p)->kind == TK_EOF) return perr(at, VKF_STATUS_PARSE, "{%% if %%} without {%% endif %%}");
  p->i++; /* {% */
  const ct_token *kw = cur(p);
  p->i++;
  if (ct_str_eq(kw->text, "elif")) {
    ct_node *elif = NULL;
    VKF_RETURN_IF_ERROR(enter(p));
    VKF_RETURN_IF_ERROR(parse_if(p, kw, &elif));
    p->depth--;
    ct_node **items = ct_alloc(p->a, sizeof *items);
    if (!items) return ct_oom();
    items[0] = elif;
    n->else_body = (ct_node_list){items, 1};
  } else if (ct_str_eq(kw->text, "else")) {
    static const char *const else_ends[] = {"endif", NULL};
    VKF_RETURN_IF_ERROR(block_end(p));
    VKF_RETURN_IF_ERROR(parse_body(p, else_ends, &n->else_body));
    if (cur(p)->kind == TK_EOF)
      return perr(at, VKF_STATUS_PARSE, "{%% if %%} without {%% endif %%}");
    p->i += 2;
    VKF_RETURN_IF_ERROR(block_end(p));
  } else {
    VKF_RETURN_IF_ERROR(block_end(p));
  }
  *out = n;
  return VKF_OK;
}

static vkf_status parse_name_list(parser *p, ct_node *n, size_t max) {
  ct_str *names = ct_alloc(p->a, max * sizeof *names);
  if (!names) return ct_oom();
  size_t k = 0;
  for (;;) {
    if (cur(p)->kind != TK_NAME) return unexpected(p, "a name");
    if (k == max) return perr(cur(p), VKF_STATUS_UNSUPPORTED, "too many targets");
    names[k++] = cur(p)->text;
    p->i++;
    if (!ct_tok_is(cur(p), ",")) break;
    p->i++;
  }
  n->names = names;
  n->n_names = k;
  return VKF_OK;
}

static vkf_status parse_for(parser *p, const ct_token *at, ct_node **out) {
  static const char *const ends[] = {"else", "endfor", NULL};
  static const char *const else_ends[] = {"endfor", NULL};
  ct_node *n = NULL;
  VKF_RETURN_IF_ERROR(new_node(p, N_FOR, at, &n));
  bool paren = ct_tok_is(cur(p), "(");
  if (paren) p->i++;
  VKF_RETURN_IF_ERROR(parse_name_list(p, n, 8));
  if (paren) VKF_RETURN_IF_ERROR(expect_op(p, ")"));
  if (!ct_tok_name(cur(p), "in")) return unexpected(p, "'in'");
  p->i++;
  VKF_RETURN_IF_ERROR(parse_or(p, &n->a)); /* no conditional: its `if` filters the loop */
  if (ct_tok_name(cur(p), "if")) {
    p->i++;
    VKF_RETURN_IF_ERROR(parse_expr(p, &n->b));
  }
  if (ct_tok_name(cur(p), "recursive"))
    return perr(cur(p), VKF_STATUS_UNSUPPORTED, "recursive loops are not supported");
  VKF_RETURN_IF_ERROR(block_end(p));
  p->loops++;
  VKF_RETURN_IF_ERROR(parse_body(p, ends, &n->body));
  p->loops--;
  if (cur(p)->kind == TK_EOF) return perr(at, VKF_STATUS_PARSE, "{%% for %%} without {%% endfor %%}");
  p->i++;
  if (ct_tok_name(cur(p), "else")) {
    p->i++;
    VKF_RETURN_IF_ERROR(block_end(p));
    VKF_RETURN_IF_ERROR(parse_body(p, else_ends, &n->else_body));
    if (cur(p)->kind == TK_EOF)
      return perr(at, VKF_STATUS_PARSE, "{%% for %%} without {%% endfor %%}");
    p->i++;
  }
  p->i++; /* endfor */
  VKF_RETURN_IF_ERROR(block_end(p));
  *out = n;
  return VKF_OK;
}

static vkf_status parse_set(parser *p, const ct_token *at, ct_node **out) {
  ct_node *n = NULL;
  VKF_RETURN_IF_ERROR(new_node(p, N_SET, at, &n));
  if (cur(p)->kind != TK_NAME) return unexpected(p, "a name");
  n->names = ct_alloc(p->a, sizeof *n->names);
  if (!n->names) return ct_oom();
  n->names[0] = cur(p)->text;
  n->n_names = 1;
  p->i++;
  if (ct_tok_is(cur(p), ".")) {
    p->i++;
    if (cur(p)->kind != TK_NAME) return unexpected(p, "an attribute name");
    n->attr = cur(p)->text;
    p->i++;
  }
  if (cur(p)->kind == TK_BLOCK_END)
    return perr(at, VKF_STATUS_UNSUPPORTED, "block assignment ({%% set x %%}...{%% endset %%}) is not supported");
  if (ct_tok_is(cur(p), ","))
    return perr(cur(p), VKF_STATUS_UNSUPPORTED, "tuple assignment is not supported");
  VKF_RETURN_IF_ERROR(expect_op(p, "="));
  VKF_RETURN_IF_ERROR(parse_expr(p, &n->a));
  VKF_RETURN_IF_ERROR(block_end(p));
  *out = n;
  return VKF_OK;
}

static vkf_status parse_macro(parser *p, const ct_token *at, ct_node **out) {
  static const char *const ends[] = {"endmacro", NULL};
  ct_node *n = NULL;
  VKF_RETURN_IF_ERROR(new_node(p, N_MACRO, at, &n));
  if (cur(p)->kind != TK_NAME) return unexpected(p, "a macro name");
  nodes_b defaults = {0};
  ct_str *names = ct_alloc(p->a, 33 * sizeof *names);
  if (!names) return ct_oom();
  names[0] = cur(p)->text;
  size_t k = 1;
  p->i++;
  VKF_RETURN_IF_ERROR(expect_op(p, "("));
  while (!ct_tok_is(cur(p), ")")) {
    if (k > 1) VKF_RETURN_IF_ERROR(expect_op(p, ","));
    if (cur(p)->kind != TK_NAME) return unexpected(p, "a parameter name");
    if (k == 33) return perr(cur(p), VKF_STATUS_UNSUPPORTED, "more than 32 macro parameters");
    names[k++] = cur(p)->text;
    p->i++;
    ct_node *def = NULL;
    if (ct_tok_is(cur(p), "=")) {
      p->i++;
      VKF_RETURN_IF_ERROR(parse_expr(p, &def));
    } else if (defaults.n && defaults.items[defaults.n - 1]) {
      return perr(cur(p), VKF_STATUS_PARSE, "non-default parameter after a default one");
    }
    VKF_RETURN_IF_ERROR(nodes_push(p, &defaults, def));
  }
  p->i++;
  VKF_RETURN_IF_ERROR(block_end(p));
  n->names = names;
  n->n_names = k;
  n->args = nodes_done(&defaults);
  int loops = p->loops;
  p->loops = 0;
  VKF_RETURN_IF_ERROR(parse_body(p, ends, &n->body));
  p->loops = loops;
  if (cur(p)->kind == TK_EOF)
    return perr(at, VKF_STATUS_PARSE, "{%% macro %%} without {%% endmacro %%}");
  p->i += 2;
  VKF_RETURN_IF_ERROR(block_end(p));
  *out = n;
  return VKF_OK;
}

static vkf_status parse_statement(parser *p, ct_node **out) {
  const ct_token *at = cur(p);
  if (at->kind != TK_NAME) return unexpected(p, "a statement name");
  p->i++;
  ct_str s = at->text;
  if (ct_str_eq(s, "if")) return parse_if(p, at, out);
  if (ct_str_eq(s, "for")) return parse_for(p, at, out);
  if (ct_str_eq(s, "set")) return parse_set(p, at, out);
  if (ct_str_eq(s, "macro")) return parse_macro(p, at, out);
  if (ct_str_eq(s, "break") || ct_str_eq(s, "continue")) {
    if (!p->loops)
      return perr(at, VKF_STATUS_PARSE, "'%.*s' outside a loop", (int)s.n, s.s);
    VKF_RETURN_IF_ERROR(new_node(p, ct_str_eq(s, "break") ? N_BREAK : N_CONTINUE, at, out));
    return block_end(p);
  }
  if (ct_str_eq(s, "generation")) { /* transformers' assistant-mask marker: renders its body */
    static const char *const ends[] = {"endgeneration", NULL};
    ct_node *n = NULL;
    VKF_RETURN_IF_ERROR(new_node(p, N_BLOCK, at, &n));
    VKF_RETURN_IF_ERROR(block_end(p));
    VKF_RETURN_IF_ERROR(parse_body(p, ends, &n->body));
    if (cur(p)->kind == TK_EOF)
      return perr(at, VKF_STATUS_PARSE, "{%% generation %%} without {%% endgeneration %%}");
    p->i += 2;
    VKF_RETURN_IF_ERROR(block_end(p));
    *out = n;
    return VKF_OK;
  }
  static const char *const unsupported[] = {"include", "import", "from", "extends", "block",
                                            "call", "filter", "with", "autoescape", "do", "trans",
                                            "pluralize", NULL};
  for (const char *const *u = unsupported; *u; u++)
    if (ct_str_eq(s, *u))
      return perr(at, VKF_STATUS_UNSUPPORTED, "statement '%s' is not supported", *u);
  return perr(at, VKF_STATUS_PARSE, "unknown statement '%.*s'", (int)(s.n > 40 ? 40 : s.n), s.s);
}

static vkf_status parse_body(parser *p, const char *const *ends, ct_node_list *out) {
  nodes_b body = {0};
  VKF_RETURN_IF_ERROR(enter(p));
  for (;;) {
    const ct_token *t = cur(p);
    ct_node *n = NULL;
    if (t->kind == TK_EOF) {
      if (ends) break; /* the caller reports the missing end tag */
      break;
    }
    if (at_end_tag(p, ends)) break;
    if (t->kind == TK_TEXT) {
      VKF_RETURN_IF_ERROR(new_node(p, N_TEXT, t, &n));
      n->str = t->text;
      p->i++;
    } else if (t->kind == TK_VAR_BEGIN) {
      p->i++;
      VKF_RETURN_IF_ERROR(new_node(p, N_OUTPUT, t, &n));
      VKF_RETURN_IF_ERROR(parse_expr(p, &n->a));
      VKF_RETURN_IF_ERROR(expect_kind(p, TK_VAR_END, "'}}'"));
    } else if (t->kind == TK_BLOCK_BEGIN) {
      p->i++;
      const ct_token *name = cur(p);
      if (name->kind == TK_NAME && name->text.n > 3 && !memcmp(name->text.s, "end", 3))
        return perr(name, VKF_STATUS_PARSE, "unexpected '%.*s'", (int)(name->text.n > 40 ? 40 : name->text.n), name->text.s);
      if (ct_tok_name(name, "elif") || ct_tok_name(name, "else"))
        return perr(name, VKF_STATUS_PARSE, "unexpected '%.*s'", (int)name->text.n, name->text.s);
      VKF_RETURN_IF_ERROR(parse_statement(p, &n));
    } else {
      return unexpected(p, "template text or a tag");
    }
    VKF_RETURN_IF_ERROR(nodes_push(p, &body, n));
  }
  p->depth--;
  *out = nodes_done(&body);
  return VKF_OK;
}

vkf_status ct_parse(ct_arena *a, const ct_token *toks, size_t count, ct_node_list *out) {
  parser p = {.a = a, .t = toks, .n = count};
  VKF_RETURN_IF_ERROR(parse_body(&p, NULL, out));
  if (cur(&p)->kind != TK_EOF) return unexpected(&p, "end of template");
  return VKF_OK;
}
