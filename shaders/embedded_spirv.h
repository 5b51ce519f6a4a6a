/* The SPIR-V of every fixed kernel variant (each row of variants.txt), compiled by glslc at build
 * time with the run-time compiler's options, so those kernels start without shaderc. */
#ifndef VKF_SHADERS_EMBEDDED_SPIRV_H
#define VKF_SHADERS_EMBEDDED_SPIRV_H

typedef struct vkf_embedded_spirv {
  const char *shader;  /* template file name, e.g. "gemm.comp" */
  const char *defines; /* the row's defines, "NAME" or "NAME=VALUE", sorted by strcmp and joined
                        * with single spaces ("" when none) */
  const unsigned char *code; /* 4-byte aligned SPIR-V module */
  unsigned size;             /* bytes */
} vkf_embedded_spirv;

extern const vkf_embedded_spirv vkf_embedded_spirvs[];
extern const unsigned vkf_embedded_spirv_count;

/* The entry of template `shader` with canonical define list `defines`, or NULL. */
const vkf_embedded_spirv *vkf_embedded_spirv_find(const char *shader, const char *defines);

/* 1 when this build embeds the cooperative-matrix GEMM kernels of tile `tile` (8 or 16): they
 * need a glslang that knows GL_KHR_cooperative_matrix at build time (shaders/CMakeLists.txt) and
 * have no run-time compile fallback. */
int vkf_shaders_have_coopmat(unsigned tile);

#endif
