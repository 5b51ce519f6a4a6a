/* Chat templates: part 1 of the input is the template source, part 2 the messages JSON (or a
 * fixed system/user/assistant conversation when missing or not a JSON array); rendered with
 * transformers' usual variables. A template may fail (parse errors, raise_exception, limits), but
 * only with a one-line status, and a success is a NUL-terminated text of the size reported. */
#include <cjson/cJSON.h>

#include "text/chat_template.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char FIXED[] =
    "[{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"Hi \\u00e9 "
    "\\ud83d\\ude00\"}, {\"role\": \"assistant\", \"content\": \"  Hello  \", \"tool_calls\": [{\"function\": "
    "{\"name\": \"f\", \"arguments\": {\"a\": [1, 2.5, null]}}}]}, {\"role\": \"user\", \"content\": \"\"}]";
static const char VARS[] =
    "{\"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"add_generation_prompt\": true, \"tools\": null, "
    "\"documents\": null}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_part parts[2];
  fuzz_split(data, size, parts, 2);
  vkf_chat_template *t = NULL;
  vkf_status s = vkf_chat_template_parse((const char *)parts[0].data, parts[0].size, &t);
  if (s) {
    FUZZ_ASSERT(t == NULL);
    fuzz_check_status(s);
    return 0;
  }
  FUZZ_ASSERT(t != NULL);
  char *json = fuzz_strdup(parts[1]);
  cJSON *messages = cJSON_Parse(json);
  free(json);
  if (!cJSON_IsArray(messages)) {
    cJSON_Delete(messages);
    messages = cJSON_Parse(FIXED);
  }
  cJSON *vars = cJSON_Parse(VARS);
  FUZZ_ASSERT(messages && vars);
  char *out = NULL;
  size_t out_size = 0;
  s = vkf_chat_template_render_at(t, messages, vars, 1721952000, &out, &out_size);
  if (s) {
    FUZZ_ASSERT(out == NULL);
    fuzz_check_status(s);
  } else {
    FUZZ_ASSERT(out && out[out_size] == 0 && strlen(out) <= out_size);
  }
  free(out);
  cJSON_Delete(messages);
  cJSON_Delete(vars);
  vkf_chat_template_destroy(t);
  return 0;
}
