/* The one translation unit that compiles stb_image's implementation, limited to PNG: JPEG goes
 * through libjpeg-turbo (jpeg_decode.c), as in Pillow, and stb's JPEG decoder is not compiled
 * at all (2.27's overruns its tables on oversized Huffman tables, and it differs from Pillow).
 * stb_image 2.27 builds clean under our full warning set (gcc 12, clang 14), so no pragmas. */
#include <stdlib.h>

#include "models/image/stb_limit.h"

static _Thread_local size_t limit;
static _Thread_local int limit_hit;

void vkf_stb_limit_set(size_t max_allocation) {
  limit = max_allocation;
  limit_hit = 0;
}

int vkf_stb_limit_hit(void) {
  return limit_hit;
}

static int over_limit(size_t size) {
  if (!limit || size <= limit) return 0;
  limit_hit = 1;
  return 1;
}

static void *limited_malloc(size_t size) {
  return over_limit(size) ? NULL : malloc(size);
}

static void *limited_realloc(void *p, size_t size) {
  return over_limit(size) ? NULL : realloc(p, size);
}

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_NO_STDIO        /* models/image/image.c reads files itself so IO errors carry errno */
#define STBI_NO_LINEAR       /* no float/HDR paths: we only ever want 8-bit RGB */
#define STBI_FAILURE_USERMSG /* "Corrupt PNG" rather than terse internal codes */
/* models/image/image.c adopts stb's pixel buffers and frees them with free(): pin the allocator
 * (malloc / realloc under stb_limit.h's bound). */
#define STBI_MALLOC(size) limited_malloc(size)
#define STBI_REALLOC(ptr, size) limited_realloc(ptr, size)
#define STBI_FREE(ptr) free(ptr)
#include <stb/stb_image.h>
