/* Typed readers of JSON fields that name the file and the field on every error, and the bounded
 * read of a whole JSON file; shared by the config.json readers. */
#include "models/formats/json_fields.h"

#include "models/formats/file_read.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integers above 2^53 are not exact in a JSON double; no real size gets near that. */
#define MAX_JSON_INT 9007199254740992.0

vkf_status vkf_json_read_file(const char *path, char **out_text, size_t *out_size) {
  return vkf_file_read_bounded(path, VKF_JSON_MAX_FILE_SIZE, "a model's JSON file",
                               out_text, out_size);
}

/* Parses a whole document that must be one JSON object (trailing whitespace allowed). */
vkf_status vkf_json_parse_object(const char *json, size_t size, const char *name,
                                 cJSON **out_root) {
  *out_root = NULL;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, size, &end, 0);
  const char *bad = NULL;
  if (!root) {
    bad = end && end >= json && end <= json + size ? end : json;
  } else {
    for (const char *p = end; p < json + size; p++) {
      if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
        bad = p;
        break;
      }
    }
  }
  if (bad) {
    int line = 1;
    for (const char *p = json; p < bad; p++) line += *p == '\n';
    cJSON_Delete(root);
    return vkf_status_make(VKF_STATUS_PARSE, "%s: not valid JSON (line %d, byte %zu)", name, line,
                           (size_t)(bad - json));
  }
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return vkf_status_make(VKF_STATUS_PARSE, "%s: top level is not a JSON object", name);
  }
  *out_root = root;
  return VKF_OK;
}

/* A field that is absent or JSON null reads as "use the default". */
const cJSON *vkf_json_field(const cJSON *obj, const char *key) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  return item && !cJSON_IsNull(item) ? item : NULL;
}

int vkf_json_is_int(const cJSON *item) {
  if (!cJSON_IsNumber(item)) return 0;
  double d = item->valuedouble;
  return d == floor(d) && fabs(d) <= MAX_JSON_INT;
}

vkf_status vkf_json_get_int(const char *file, const cJSON *obj, const char *key, int64_t def,
                            int64_t *out_value) {
  *out_value = def;
  const cJSON *item = vkf_json_field(obj, key);
  if (!item) return VKF_OK;
  if (!vkf_json_is_int(item))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\" must be an integer", file, key);
  *out_value = (int64_t)item->valuedouble;
  return VKF_OK;
}

vkf_status vkf_json_get_positive_int(const char *file, const cJSON *obj, const char *key,
                                     int64_t def, int64_t *out_value) {
  VKF_RETURN_IF_ERROR(vkf_json_get_int(file, obj, key, def, out_value));
  if (*out_value <= 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: field \"%s\" is %lld, must be > 0",
                           file, key, (long long)*out_value);
  return VKF_OK;
}

vkf_status vkf_json_get_size(const char *file, const cJSON *obj, const char *key, int64_t def,
                             int64_t max, int64_t *out_value) {
  VKF_RETURN_IF_ERROR(vkf_json_get_positive_int(file, obj, key, def, out_value));
  if (*out_value > max)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"%s\" is %lld, more than the %lld a model can use", file,
                           key, (long long)*out_value, (long long)max);
  return VKF_OK;
}

vkf_status vkf_json_get_double(const char *file, const cJSON *obj, const char *key, double def,
                               double *out_value) {
  *out_value = def;
  const cJSON *item = vkf_json_field(obj, key);
  if (!item) return VKF_OK;
  if (!cJSON_IsNumber(item))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\" must be a number", file, key);
  *out_value = item->valuedouble;
  return VKF_OK;
}

vkf_status vkf_json_get_bool(const char *file, const cJSON *obj, const char *key, bool def,
                             bool *out_value) {
  *out_value = def;
  const cJSON *item = vkf_json_field(obj, key);
  if (!item) return VKF_OK;
  if (!cJSON_IsBool(item))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\" must be true or false", file, key);
  *out_value = cJSON_IsTrue(item);
  return VKF_OK;
}

vkf_status vkf_json_get_string(const char *file, const cJSON *obj, const char *key,
                               const char **out_value) {
  *out_value = NULL;
  const cJSON *item = vkf_json_field(obj, key);
  if (!item) return VKF_OK;
  if (!cJSON_IsString(item))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\" must be a string", file, key);
  *out_value = item->valuestring;
  return VKF_OK;
}

vkf_status vkf_json_parse_with(const char *json, size_t size, const char *name,
                               vkf_json_object_reader read, void *out, size_t out_size) {
  memset(out, 0, out_size);
  cJSON *root;
  VKF_RETURN_IF_ERROR(vkf_json_parse_object(json, size, name, &root));
  vkf_status s = read(name, root, out);
  cJSON_Delete(root);
  if (s) memset(out, 0, out_size);
  return s;
}

vkf_status vkf_json_load_with(const char *path, vkf_json_object_reader read, void *out,
                              size_t out_size) {
  memset(out, 0, out_size);
  char *text;
  size_t size;
  VKF_RETURN_IF_ERROR(vkf_json_read_file(path, &text, &size));
  vkf_status s = vkf_json_parse_with(text, size, path, read, out, out_size);
  free(text);
  return s;
}

size_t vkf_json_mark_nuls(char *json, size_t size) {
  size_t marked = 0;
  int in_string = 0;
  for (size_t i = 0; i < size; i++) {
    if (!in_string) {
      in_string = json[i] == '"';
    } else if (json[i] == '"') {
      in_string = 0;
    } else if (json[i] == '\\' && i + 1 < size) {
      if (i + 5 < size && json[i + 1] == 'u' && !memcmp(json + i + 2, "0000", 4)) {
        memset(json + i, 0xFF, 6);
        marked++;
        i += 5;
      } else {
        i++; /* the escaped character, a quote or backslash included */
      }
    }
  }
  return marked;
}

int vkf_json_has_nul(const char *s) {
  return s && strstr(s, "\xff\xff\xff\xff\xff\xff") != NULL;
}
