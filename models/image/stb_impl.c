/* The one translation unit that compiles stb_image's implementation, limited to PNG: JPEG goes
 * through libjpeg-turbo (jpeg_decode.c), as in Pillow, and stb's JPEG decoder is not compiled
 * at all (2.27's overruns its tables on oversized Huffman tables, and it differs from Pillow).
 * stb_image 2.27 builds clean under our full warning set (gcc 12, clang 14), so no pragmas. */
#include <stdlib.h>

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_NO_STDIO        /* models/image/image.c reads files itself so IO errors carry errno */
#define STBI_NO_LINEAR       /* no float/HDR paths: we only ever want 8-bit RGB */
#define STBI_FAILURE_USERMSG /* "Corrupt PNG" rather than terse internal codes */
/* models/image/image.c adopts stb's pixel buffers and frees them with free(): pin the allocator. */
#define STBI_MALLOC(size) malloc(size)
#define STBI_REALLOC(ptr, size) realloc(ptr, size)
#define STBI_FREE(ptr) free(ptr)
#include <stb/stb_image.h>
