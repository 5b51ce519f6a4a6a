/* Lookup into the generated table of embedded shader sources. */
#include "shaders/embedded.h"

#include <string.h>

const char *vkf_embedded_shader_find(const char *name) {
  for (unsigned i = 0; i < vkf_embedded_shader_count; i++)
    if (strcmp(vkf_embedded_shaders[i].name, name) == 0) return vkf_embedded_shaders[i].source;
  return 0;
}
