/* Chat templates: the Jinja subset that Hugging Face chat templates use (tokenizer_config.json's
 * chat_template, GGUF's tokenizer.chat_template), rendered byte for byte as transformers'
 * apply_chat_template renders them with jinja2 (ImmutableSandboxedEnvironment, trim_blocks,
 * lstrip_blocks, loopcontrols; its tojson, raise_exception and strftime_now).
 *
 * Supported: text with {{ }}, {% %}, {# #} and the -/+ whitespace controls; for (loop.*, `if`
 * filter, else, tuple unpacking), if/elif/else, set (names and namespace attributes), break,
 * continue, macro, generation (rendered as its body), raw. Expressions: literals, lists, dicts,
 * attribute/subscript/slice access, arithmetic, ~, comparisons, and/or/not, in, tests, filters,
 * conditional expressions, calls of macros, globals and string/dict methods. The tables at the
 * top of chat_template_filters.c and chat_template_calls.c list the filters, tests and methods. Anything else is a parse error
 * naming the construct and its line:col.
 *
 * Known differences from Python: JSON numbers with an integral value are ints (2.0 prints "2");
 * upper/lower/title/capitalize change ASCII letters only; strftime_now formats UTC. */
#ifndef VKF_MODELS_CHAT_TEMPLATE_H
#define VKF_MODELS_CHAT_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct cJSON cJSON;
typedef struct vkf_chat_template vkf_chat_template;

/* Parses `size` bytes of template source (not necessarily NUL-terminated) into an immutable
 * template (renderable from several threads). Errors: PARSE for malformed syntax, an unknown
 * filter or test, or nesting deeper than 200; UNSUPPORTED for Jinja statements outside the subset
 * (include, extends, call, ...); each names the construct and its line:col. */
vkf_status vkf_chat_template_parse(const char *source, size_t size, vkf_chat_template **out);
void vkf_chat_template_destroy(vkf_chat_template *t);

/* Renders the template. `messages` is the JSON array bound to `messages` (objects with "role",
 * "content" and whatever else the template reads); `vars` (may be NULL) is a JSON object whose
 * members become variables: bos_token, eos_token, add_generation_prompt, tools (pass null, as
 * apply_chat_template does), ... . *out_text is malloc'd and NUL-terminated; *out_size (may be
 * NULL) gets its length. Errors: INVALID_ARGUMENT carrying raise_exception's message, or naming
 * a type error, an undefined value used as an object, a range over 100000 items, output over
 * 64 MiB or a template that runs too long. */
vkf_status vkf_chat_template_render(const vkf_chat_template *t, const cJSON *messages,
                                    const cJSON *vars, char **out_text, size_t *out_size);
/* The same with strftime_now's clock pinned to `unix_time` (seconds, formatted as UTC), for
 * reproducible output. */
vkf_status vkf_chat_template_render_at(const vkf_chat_template *t, const cJSON *messages,
                                       const cJSON *vars, int64_t unix_time, char **out_text,
                                       size_t *out_size);

#endif
