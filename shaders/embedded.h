/* The table of GLSL sources embedded at build time (every .comp and .glsl file of shaders/). */
#ifndef VKF_SHADERS_EMBEDDED_H
#define VKF_SHADERS_EMBEDDED_H

typedef struct vkf_embedded_shader {
  const char *name;   /* file name, e.g. "gemm.comp" or "common.glsl" */
  const char *source; /* NUL-terminated GLSL text */
} vkf_embedded_shader;

extern const vkf_embedded_shader vkf_embedded_shaders[];
extern const unsigned vkf_embedded_shader_count;

/* Source of the embedded file `name`, or NULL when there is none. */
const char *vkf_embedded_shader_find(const char *name);

#endif
