/* Chat template lexer: source -> text and expression tokens, with jinja2's whitespace rules as
 * transformers configures them: newlines normalised to "\n" and one trailing newline dropped
 * (keep_trailing_newline=False), trim_blocks (the "\n" after %} or #} goes), lstrip_blocks (spaces
 * and tabs before {% or {# on their own line go), and the -/+ markers on tags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/chat_template_lex.h"

typedef struct lexer {
  ct_arena *a;
  const char *src;
  size_t n, pos;
  size_t line_pos; /* position up to which `line`/`line_start` are counted */
  int line;
  size_t line_start;
  ct_token *toks;
  size_t count, cap;
} lexer;

static void where(lexer *lx, size_t pos, int *line, int *col) {
  for (; lx->line_pos < pos; lx->line_pos++)
    if (lx->src[lx->line_pos] == '\n') {
      lx->line++;
      lx->line_start = lx->line_pos + 1;
    }
  *line = lx->line;
  *col = (int)(pos - lx->line_start) + 1;
}

static vkf_status lex_error(lexer *lx, size_t pos, const char *what) {
  int line, col;
  where(lx, pos, &line, &col);
  return vkf_status_make(VKF_STATUS_PARSE, "chat template %d:%d: %s", line, col, what);
}

static vkf_status push(lexer *lx, ct_tok_kind kind, size_t pos, ct_str text, ct_token **out) {
  if (lx->count == lx->cap) {
    size_t cap = lx->cap ? lx->cap * 2 : 256;
    ct_token *t = ct_alloc(lx->a, cap * sizeof *t);
    if (!t) return ct_oom();
    if (lx->count) memcpy(t, lx->toks, lx->count * sizeof *t);
    lx->toks = t;
    lx->cap = cap;
  }
  ct_token *t = &lx->toks[lx->count++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->text = text;
  where(lx, pos, &t->line, &t->col);
  if (out) *out = t;
  return VKF_OK;
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* The text before a tag after its -/lstrip rule; `line_starting`: the previous tag's end
 * consumed a newline (jinja2's lexer tracks the same). */
static ct_str strip_text(ct_str text, char sign, bool lstrip, bool line_starting) {
  if (sign == '-') {
    while (text.n && is_space(text.s[text.n - 1])) text.n--;
  } else if (sign != '+' && lstrip) {
    size_t l = text.n;
    while (l > 0 && text.s[l - 1] != '\n') l--;
    if (l > 0 || line_starting) {
      bool blank = true;
      for (size_t i = l; i < text.n; i++)
        if (!is_space(text.s[i])) blank = false;
      if (blank) text.n = l;
    }
  }
  return text;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static size_t put_utf8(char *o, uint32_t cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xc0 | (cp >> 6)), o[1] = (char)(0x80 | (cp & 0x3f)), 2;
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* A string literal starting at lx->pos (a quote): Python's unicode-escape rules, as jinja2
 * decodes them. */
static vkf_status lex_string(lexer *lx, ct_str *out) {
  size_t start = lx->pos;
  char q = lx->src[lx->pos++];
  size_t end = lx->pos;
  while (end < lx->n && lx->src[end] != q) end += lx->src[end] == '\\' ? 2 : 1;
  if (end >= lx->n) return lex_error(lx, start, "unterminated string");
  char *o = ct_alloc(lx->a, end - lx->pos + 1);
  if (!o) return ct_oom();
  size_t k = 0;
  for (size_t i = lx->pos; i < end; i++) {
    char c = lx->src[i];
    if (c != '\\') {
      o[k++] = c;
      continue;
    }
    char e = lx->src[++i];
    switch (e) {
    case '\n': break;
    case '\\': o[k++] = '\\'; break;
    case '\'': o[k++] = '\''; break;
    case '"': o[k++] = '"'; break;
    case 'a': o[k++] = '\a'; break;
    case 'b': o[k++] = '\b'; break;
    case 'f': o[k++] = '\f'; break;
    case 'n': o[k++] = '\n'; break;
    case 'r': o[k++] = '\r'; break;
    case 't': o[k++] = '\t'; break;
    case 'v': o[k++] = '\v'; break;
    case 'x':
    case 'u':
    case 'U': {
      int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      uint32_t cp = 0;
      for (int d = 0; d < digits; d++) {
        int h = i + 1 + (size_t)d < end ? hexval(lx->src[i + 1 + (size_t)d]) : -1;
        if (h < 0) return lex_error(lx, start, "malformed \\x, \\u or \\U escape in a string");
        cp = cp * 16 + (uint32_t)h;
      }
      if (cp > 0x10ffff) return lex_error(lx, start, "\\U escape out of range in a string");
      i += (size_t)digits;
      k += put_utf8(o + k, cp); /* at most 4 bytes for 4+ escape characters */
      break;
    }
    default:
      if (e >= '0' && e <= '7') {
        uint32_t cp = (uint32_t)(e - '0');
        for (int d = 0; d < 2 && i + 1 < end && lx->src[i + 1] >= '0' && lx->src[i + 1] <= '7'; d++)
          cp = cp * 8 + (uint32_t)(lx->src[++i] - '0');
        k += put_utf8(o + k, cp);
      } else {
        o[k++] = '\\';
        o[k++] = e;
      }
    }
  }
  o[k] = 0;
  lx->pos = end + 1;
  *out = (ct_str){o, k};
  return VKF_OK;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* digits with single underscores between them, as jinja2's integer and float rules */
static size_t scan_digits(const char *s, size_t n, size_t at) {
  size_t i = at;
  while (i < n && is_digit(s[i])) {
    i++;
    if (i + 1 < n && s[i] == '_' && is_digit(s[i + 1])) i++;
  }
  return i;
}

static vkf_status lex_number(lexer *lx) {
  const char *s = lx->src;
  size_t start = lx->pos, i = scan_digits(s, lx->n, start);
  bool is_float = false;
  if (i + 1 < lx->n && s[i] == '.' && is_digit(s[i + 1])) {
    is_float = true;
    i = scan_digits(s, lx->n, i + 1);
  }
  if (i < lx->n && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < lx->n && (s[j] == '+' || s[j] == '-')) j++;
    if (j < lx->n && is_digit(s[j])) {
      is_float = true;
      i = scan_digits(s, lx->n, j);
    }
  }
  char buf[128];
  size_t k = 0;
  for (size_t p = start; p < i && k + 1 < sizeof buf; p++)
    if (s[p] != '_') buf[k++] = s[p];
  buf[k] = 0;
  if (i - start >= sizeof buf) return lex_error(lx, start, "number literal too long");
  ct_token *t;
  VKF_RETURN_IF_ERROR(push(lx, is_float ? TK_FLOAT : TK_INT, start, (ct_str){s + start, i - start},
                           &t));
  if (is_float) {
    t->f = strtod(buf, NULL);
  } else {

    char *endp;
    unsigned long long v = strtoull(buf, &endp, 10);
    if (v > INT64_MAX || k > 19) return lex_error(lx, start, "integer literal too large");
    t->i = (int64_t)v;
  }
  lx->pos = i;
  return VKF_OK;
}

static const char *const OPS2[] = {"//", "**", "==", "!=", ">=", "<="};
static const char OPS1[] = "+-/*%~[](){}<>=.:|,;";

/* Expression tokens up to the tag's end (%} or }}), with brackets balanced first so that a dict
 * literal's }} does not end the tag. Returns the end marker's sign ('-', '+' or 0). */
static vkf_status lex_tag(lexer *lx, bool block, size_t tag_pos, char *end_sign) {
  const char *s = lx->src;
  char stack[CT_MAX_DEPTH];
  int depth = 0;
  for (;;) {
    while (lx->pos < lx->n && is_space(s[lx->pos])) lx->pos++;
    if (lx->pos >= lx->n)
      return lex_error(lx, tag_pos, block ? "unterminated {% tag" : "unterminated {{ tag");
    size_t p = lx->pos;
    char c = s[p];
    if (depth == 0) {
      char sign = (c == '-' || (c == '+' && block)) ? c : 0;
      size_t q = p + (sign ? 1 : 0);
      if (q + 1 < lx->n && s[q] == (block ? '%' : '}') && s[q + 1] == '}') {
        VKF_RETURN_IF_ERROR(push(lx, block ? TK_BLOCK_END : TK_VAR_END, p, (ct_str){s + p, 2}, NULL));
        lx->pos = q + 2;
        *end_sign = sign;
        return VKF_OK;
      }
    }
    if (is_digit(c)) {
      VKF_RETURN_IF_ERROR(lex_number(lx));
    } else if (is_name_start(c)) {
      size_t e = p;
      while (e < lx->n && (is_name_start(s[e]) || is_digit(s[e]))) e++;
      VKF_RETURN_IF_ERROR(push(lx, TK_NAME, p, (ct_str){s + p, e - p}, NULL));
      lx->pos = e;
    } else if (c == '\'' || c == '"') {
      ct_str v;
      size_t at = lx->pos;
      VKF_RETURN_IF_ERROR(lex_string(lx, &v));
      ct_token *t;
      VKF_RETURN_IF_ERROR(push(lx, TK_STRING, at, v, &t));
    } else {
      size_t len = 0;
      for (size_t k = 0; k < sizeof OPS2 / sizeof *OPS2; k++)
        if (p + 1 < lx->n && s[p] == OPS2[k][0] && s[p + 1] == OPS2[k][1]) len = 2;
      if (!len && c && strchr(OPS1, c)) len = 1;
      if (!len) {
        char msg[64];
        snprintf(msg, sizeof msg, "unexpected character '%c' in a tag", c);
        if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
          snprintf(msg, sizeof msg, "unexpected byte 0x%02x in a tag", (unsigned char)c);
        return lex_error(lx, p, msg);
      }
      if (len == 1 && (c == '(' || c == '[' || c == '{')) {
        if (depth == CT_MAX_DEPTH) return lex_error(lx, p, "brackets nest too deeply");
        stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
      } else if (len == 1 && (c == ')' || c == ']' || c == '}')) {
        if (depth == 0 || stack[depth - 1] != c) {
          char msg[32];
          snprintf(msg, sizeof msg, "unexpected '%c'", c);
          return lex_error(lx, p, msg);
        }
        depth--;
      }
      VKF_RETURN_IF_ERROR(push(lx, TK_OP, p, (ct_str){s + p, len}, NULL));
      lx->pos = p + len;
    }
  }
}

/* {% raw %} at `p` (just after "{%" and its sign)? Returns the position after its %} or 0. */
static size_t match_raw_begin(const lexer *lx, size_t p, char *end_sign) {
  const char *s = lx->src;
  while (p < lx->n && is_space(s[p])) p++;
  if (p + 3 > lx->n || memcmp(s + p, "raw", 3) != 0) return 0;
  p += 3;
  while (p < lx->n && is_space(s[p])) p++;
  *end_sign = 0;
  if (p < lx->n && s[p] == '-') *end_sign = '-', p++;
  if (p + 2 <= lx->n && s[p] == '%' && s[p + 1] == '}') return p + 2;
  return 0;
}

static vkf_status lex_raw(lexer *lx, size_t tag_pos, size_t after, char begin_sign,
                          bool *line_starting) {
  const char *s = lx->src;
  size_t p = after;
  if (begin_sign == '-')
    while (p < lx->n && is_space(s[p])) p++;
  for (size_t q = p; q + 1 < lx->n; q++) {
    if (s[q] != '{' || s[q + 1] != '%') continue;
    size_t r = q + 2;
    char sign = (r < lx->n && (s[r] == '-' || s[r] == '+')) ? s[r++] : 0;
    while (r < lx->n && is_space(s[r])) r++;
    if (r + 6 > lx->n || memcmp(s + r, "endraw", 6) != 0) continue;
    r += 6;
    while (r < lx->n && is_space(s[r])) r++;
    char esign = (r < lx->n && (s[r] == '-' || s[r] == '+')) ? s[r++] : 0;
    if (r + 2 > lx->n || s[r] != '%' || s[r + 1] != '}') continue;
    r += 2;
    ct_str text = strip_text((ct_str){s + p, q - p}, sign, true, false);
    if (text.n) VKF_RETURN_IF_ERROR(push(lx, TK_TEXT, p, text, NULL));
    if (esign == '-')
      while (r < lx->n && is_space(s[r])) r++;
    else if (esign != '+' && r < lx->n && s[r] == '\n')
      r++;
    *line_starting = r > 0 && s[r - 1] == '\n';
    lx->pos = r;
    return VKF_OK;
  }
  return lex_error(lx, tag_pos, "{% raw %} without {% endraw %}");
}

vkf_status ct_lex(ct_arena *a, const char *source, size_t size, ct_token **out, size_t *out_count) {
  /* newlines -> "\n", then one trailing newline dropped */
  char *src = ct_alloc(a, size + 1);
  if (!src) return ct_oom();
  size_t n = 0;
  for (size_t i = 0; i < size; i++) {
    if (source[i] == '\r') {
      src[n++] = '\n';
      if (i + 1 < size && source[i + 1] == '\n') i++;
    } else {
      src[n++] = source[i];
    }
  }
  if (n && src[n - 1] == '\n') n--;
  src[n] = 0;
  lexer lx = {.a = a, .src = src, .n = n, .line = 1};
  bool line_starting = true;
  while (lx.pos < n) {
    size_t t = lx.pos;
    while (t + 1 < n && !(src[t] == '{' && (src[t + 1] == '{' || src[t + 1] == '%' || src[t + 1] == '#')))
      t++;
    if (t + 1 >= n) t = n;
    char kind = t < n ? src[t + 1] : 0;
    char sign = (t + 2 < n && (src[t + 2] == '-' || src[t + 2] == '+')) ? src[t + 2] : 0;
    ct_str text = {src + lx.pos, t - lx.pos};
    if (kind) text = strip_text(text, sign, kind != '{', line_starting);
    if (text.n) VKF_RETURN_IF_ERROR(push(&lx, TK_TEXT, lx.pos, text, NULL));
    if (!kind) break;
    size_t body = t + 2 + (sign ? 1 : 0);
    if (kind == '#') {
      size_t e = body;
      while (e + 1 < n && !(src[e] == '#' && src[e + 1] == '}')) e++;
      if (e + 1 >= n) return lex_error(&lx, t, "unterminated comment");
      char esign = e > body && (src[e - 1] == '-' || src[e - 1] == '+') ? src[e - 1] : 0;
      size_t r = e + 2;
      if (esign == '-')
        while (r < n && is_space(src[r])) r++;
      else if (esign != '+' && r < n && src[r] == '\n')
        r++;
      line_starting = src[r - 1] == '\n';
      lx.pos = r;
      continue;
    }
    char raw_sign;
    size_t raw_end = kind == '%' ? match_raw_begin(&lx, body, &raw_sign) : 0;
    if (raw_end) {
      VKF_RETURN_IF_ERROR(lex_raw(&lx, t, raw_end, raw_sign, &line_starting));
      continue;
    }
    VKF_RETURN_IF_ERROR(push(&lx, kind == '%' ? TK_BLOCK_BEGIN : TK_VAR_BEGIN, t,
                             (ct_str){src + t, 2}, NULL));
    lx.pos = body;
    char esign = 0;
    VKF_RETURN_IF_ERROR(lex_tag(&lx, kind == '%', t, &esign));
    size_t r = lx.pos;
    if (esign == '-')
      while (r < n && is_space(src[r])) r++;
    else if (kind == '%' && esign != '+' && r < n && src[r] == '\n')
      r++;
    line_starting = src[r - 1] == '\n';
    lx.pos = r;
  }
  VKF_RETURN_IF_ERROR(push(&lx, TK_EOF, n, (ct_str){src + n, 0}, NULL));
  *out = lx.toks;
  *out_count = lx.count;
  return VKF_OK;
}

bool ct_tok_is(const ct_token *tok, const char *op) {
  return tok->kind == TK_OP && ct_str_eq(tok->text, op);
}
bool ct_tok_name(const ct_token *tok, const char *name) {
  return tok->kind == TK_NAME && ct_str_eq(tok->text, name);
}
