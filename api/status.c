/* Version, statuses and the one free of vkformer.h. */
#include <stdlib.h>

#include "api/handles.h"

_Static_assert((int)VKFORMER_INTERNAL == (int)VKF_STATUS_INTERNAL &&
                   (int)VKFORMER_INVALID_ARGUMENT == (int)VKF_STATUS_INVALID_ARGUMENT &&
                   (int)VKFORMER_MISMATCH == (int)VKF_STATUS_MISMATCH &&
                   (int)VKFORMER_INTERNAL + 1 == (int)VKF_STATUS_CODE_COUNT,
               "vkformer_code mirrors vkf_status_code");

#define VKF_API_STR2(x) #x
#define VKF_API_STR(x) VKF_API_STR2(x)

const char *vkformer_version(void) {
  return VKF_API_STR(VKFORMER_VERSION_MAJOR) "." VKF_API_STR(
      VKFORMER_VERSION_MINOR) "." VKF_API_STR(VKFORMER_VERSION_PATCH);
}

vkformer_code vkformer_status_code(vkformer_status status) {
  return (vkformer_code)vkf_status_code_of(vkf_api_internal(status));
}

const char *vkformer_status_message(vkformer_status status) {
  return vkf_status_message(vkf_api_internal(status));
}

const char *vkformer_code_name(vkformer_code code) {
  return vkf_status_code_name((vkf_status_code)code);
}

void vkformer_status_free(vkformer_status status) {
  vkf_status_free(vkf_api_internal(status));
}

void vkformer_free(void *p) {
  free(p);
}
