/* The chat template lexer (chat_template_lex.c): tokens, for the parser. */
#ifndef VKF_MODELS_CHAT_TEMPLATE_LEX_H
#define VKF_MODELS_CHAT_TEMPLATE_LEX_H

#include "text/chat_template_value.h"

typedef enum ct_tok_kind {
  TK_EOF,
  TK_TEXT,
  TK_VAR_BEGIN,
  TK_VAR_END,
  TK_BLOCK_BEGIN,
  TK_BLOCK_END,
  TK_NAME,
  TK_STRING, /* text holds the unescaped value */
  TK_INT,
  TK_FLOAT,
  TK_OP, /* text holds the operator: + - * / // % ** ~ ( ) [ ] { } . , : | = == != < <= > >= */
  TK_RAW, /* the body of {% raw %}...{% endraw %} */
} ct_tok_kind;

typedef struct ct_token {
  ct_tok_kind kind;
  ct_str text;
  int64_t i;
  double f;
  int line, col;
} ct_token;

/* Splits the source into tokens applying trim_blocks, lstrip_blocks and the -/+ controls; strings
 * of the tokens live in `a`. The last token is TK_EOF. */
vkf_status ct_lex(ct_arena *a, const char *source, size_t size, ct_token **out, size_t *out_count);
/* Does `tok` hold operator `op` / name `name`? */
bool ct_tok_is(const ct_token *tok, const char *op);
bool ct_tok_name(const ct_token *tok, const char *name);

#endif
