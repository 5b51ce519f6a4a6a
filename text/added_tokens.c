/* tokenizer_config.json's added_tokens_decoder copied as added_tokens (see added_tokens.h). */
#include "text/added_tokens.h"

#include <stdlib.h>

vkf_status vkf_added_tokens_from_decoder(cJSON *added, const cJSON *decoder, const char *where) {
  if (!cJSON_IsObject(decoder))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: added_tokens_decoder is not an object", where);
  const cJSON *item;
  cJSON_ArrayForEach(item, decoder) {
    char *end;
    long id = strtol(item->string, &end, 10);
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(item, "content");
    if (end == item->string || *end || id < 0 || id >= (1L << 24) || !cJSON_IsString(content))
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: added_tokens_decoder[\"%s\"] is not an id with a content", where,
                             item->string);
    cJSON *t = cJSON_Duplicate(item, 1);
    if (!t || !cJSON_AddItemToArray(added, t)) {
      cJSON_Delete(t);
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", where);
    }
    if (!cJSON_AddNumberToObject(t, "id", (double)id))
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", where);
  }
  return VKF_OK;
}
