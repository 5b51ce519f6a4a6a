/* The functions the chat_template_*.c files call in each other: parse, evaluate, the builtins.
 * Their data (values, the syntax tree, the context) is chat_template_value.h. Not part of the
 * library's interface (text/chat_template.h is). */
#ifndef VKF_MODELS_CHAT_TEMPLATE_INTERNAL_H
#define VKF_MODELS_CHAT_TEMPLATE_INTERNAL_H

#include "text/chat_template_lex.h"
#include "text/chat_template_value.h"

/* ---- parsing (chat_template_parse.c) ---- */
vkf_status ct_parse(ct_arena *a, const ct_token *toks, size_t count, ct_node_list *out);

/* Filters and tests the parser accepts (and the evaluator implements). */
bool ct_filter_known(ct_str name);
bool ct_test_known(ct_str name);

/* ---- evaluation (chat_template_eval.c) ---- */
vkf_status ct_eval(ct_ctx *c, const ct_node *n, ct_value *out);
vkf_status ct_render_body(ct_ctx *c, const ct_node_list *body, int *control);

/* ---- builtins (chat_template_filters.c, _calls.c): `args`/`kwargs` evaluated ---- */
vkf_status ct_apply_filter(ct_ctx *c, const ct_node *n, ct_value v, ct_args *args, ct_value *out);
vkf_status ct_apply_test(ct_ctx *c, const ct_node *n, ct_value v, ct_args *args, bool *out);
vkf_status ct_call_method(ct_ctx *c, const ct_node *n, ct_value recv, ct_str name, ct_args *args,
                          ct_value *out);
vkf_status ct_call_global(ct_ctx *c, const ct_node *n, ct_str name, ct_args *args, ct_value *out);
/* Does a value of this kind have a method `name` (str and dict methods)? */
bool ct_has_method(ct_value recv, ct_str name);
bool ct_is_global_func(ct_str name);

/* Shared by the builtins (chat_template_filters.c, _calls.c, _strings.c). */
vkf_status ct_str_value(ct_ctx *c, const char *s, size_t n, ct_value *out); /* copies into the arena */
vkf_status ct_buf_value(ct_ctx *c, ct_buf *b, ct_value *out);               /* frees b */
bool ct_space_at(const char *s, size_t n, size_t i, size_t *len);          /* Python isspace() */
size_t ct_cp_len_at(const char *s, size_t n, size_t i);
/* The offset of `needle` in `hay` at or after `from` (memmem: linear time), or SIZE_MAX. */
size_t ct_find(ct_str hay, ct_str needle, size_t from);
ct_str ct_strip(ct_str s, const ct_str *chars, bool left, bool right);
vkf_status ct_change_case(ct_ctx *c, ct_str s, case_kind k, ct_value *out);
vkf_status ct_replace(ct_ctx *c, ct_str s, ct_str old, ct_str new_, int64_t count, ct_value *out);
vkf_status ct_split(ct_ctx *c, ct_str s, const ct_value *sep, int64_t maxsplit, ct_value *out);
/* Positional argument `i` or keyword `name` (either may be absent: 99 / NULL), else NULL. */
const ct_value *ct_arg(const ct_args *a, size_t i, const char *name);
vkf_status ct_bad_arg(ct_ctx *c, const ct_node *n, const char *what);
vkf_status ct_check_str(const ct_node *n, const ct_value *v, const char *what);
vkf_status ct_to_list(ct_ctx *c, const ct_node *n, ct_value v, const ct_list **out);
vkf_status ct_items(ct_ctx *c, const ct_node *n, ct_value v, ct_value *out); /* [[key, value]...] */
vkf_status ct_join(ct_ctx *c, const ct_node *n, const ct_list *items, ct_str sep,
                   const ct_value *attr, ct_value *out);

#endif
