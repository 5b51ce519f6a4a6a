/* Typed, bounded access to Hugging Face's JSON files (config.json, preprocessor_config.json,
 * generation_config.json): every error is one line naming the file and the field. */
#ifndef VKF_MODELS_JSON_FIELDS_H
#define VKF_MODELS_JSON_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "graph/base/status.h"

/* No configuration file a model ships comes near this; past it a file is refused before reading. */
#define VKF_JSON_MAX_FILE_SIZE (16 << 20)

/* Reads a regular file of at most VKF_JSON_MAX_FILE_SIZE bytes, NUL-terminated (caller frees).
 * NOT_FOUND for a missing file, IO for a directory, FIFO or unreadable file, UNSUPPORTED past the
 * size. */
vkf_status vkf_json_read_file(const char *path, char **out_text, size_t *out_size);
/* Parses a whole document that must be one JSON object (trailing whitespace allowed); PARSE names
 * the line and byte of the first error. */
vkf_status vkf_json_parse_object(const char *json, size_t size, const char *name,
                                 cJSON **out_root);
/* A reader of one configuration object: fills *out from root, errors naming `name`. */
typedef vkf_status (*vkf_json_object_reader)(const char *name, const cJSON *root, void *out);
/* vkf_json_parse_object then read(name, root, out); out (out_size bytes) is zeroed first and
 * again on failure, so a failed parse leaves no half-read configuration. */
vkf_status vkf_json_parse_with(const char *json, size_t size, const char *name,
                               vkf_json_object_reader read, void *out, size_t out_size);
/* vkf_json_read_file then vkf_json_parse_with, `path` naming the file in errors. */
vkf_status vkf_json_load_with(const char *path, vkf_json_object_reader read, void *out,
                              size_t out_size);
/* The field `key`, or NULL when absent or JSON null ("use the default"). */
const cJSON *vkf_json_field(const cJSON *obj, const char *key);
/* A number with an integral value exactly representable in a double. */
int vkf_json_is_int(const cJSON *item);
/* Each reads `key` into *out_value, or leaves `def` when the field is absent or null; a value of the
 * wrong type is PARSE naming `file` and `key`; positive_int also rejects values <= 0. */
vkf_status vkf_json_get_int(const char *file, const cJSON *obj, const char *key, int64_t def,
                            int64_t *out_value);
vkf_status vkf_json_get_positive_int(const char *file, const cJSON *obj, const char *key,
                                     int64_t def, int64_t *out_value);
/* A positive integer of at most `max`: a size read from a file is bounded by what a model can use
 * before anything is allocated or multiplied from it (INVALID_ARGUMENT naming field, value, bound). */
vkf_status vkf_json_get_size(const char *file, const cJSON *obj, const char *key, int64_t def,
                             int64_t max, int64_t *out_value);
vkf_status vkf_json_get_double(const char *file, const cJSON *obj, const char *key, double def,
                               double *out_value);
vkf_status vkf_json_get_bool(const char *file, const cJSON *obj, const char *key, bool def,
                             bool *out_value);
vkf_status vkf_json_get_string(const char *file, const cJSON *obj, const char *key,
                               const char **out_value);

/* cJSON ends a string at a "\u0000" escape, silently dropping the rest. This replaces each such
 * escape inside a string of json[0, size) by six 0xFF bytes (never valid UTF-8, so a document
 * checked to be UTF-8 cannot hold them otherwise), which the parsed strings keep: a caller finds
 * the fields that held a NUL with vkf_json_has_nul and refuses them by name. Returns the number
 * replaced. */
size_t vkf_json_mark_nuls(char *json, size_t size);
int vkf_json_has_nul(const char *parsed_string);

#endif
