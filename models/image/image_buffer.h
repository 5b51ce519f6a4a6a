/* An 8-bit RGB image in memory and the size limits every decoder and resizer applies
 * (image_buffer.c); image.h builds decoding and processing on it. */
#ifndef VKF_MODELS_IMAGE_BUFFER_H
#define VKF_MODELS_IMAGE_BUFFER_H

#include <stdint.h>

#include "graph/base/status.h"

/* Largest image we decode: each side and the pixel count. Past these a file is taken as corrupt
 * or hostile (Pillow's decompression-bomb error fires at 178,956,970 pixels; we stop lower). */
#define VKF_IMAGE_MAX_SIDE 32768u
#define VKF_IMAGE_MAX_PIXELS (1u << 27)

/* An 8-bit RGB image; `pixels` is [height, width, 3], rows top to bottom, owned by the struct.
 * A zero struct is an empty image; vkf_image_destroy on it is a no-op. */
typedef struct vkf_image {
  uint32_t width;
  uint32_t height;
  uint8_t *pixels; /* [height, width, 3] */
} vkf_image;

/* INVALID_ARGUMENT naming `what` when a size is 0 or past the VKF_IMAGE_MAX_* limits. */
vkf_status vkf_image_check_size(uint32_t width, uint32_t height, const char *what);
/* The same limits for a file's declared size, as decoders report them: PARSE "NAME: empty
 * image" for a zero side, UNSUPPORTED "NAME: image is WxH, larger than the limits ...". */
vkf_status vkf_image_check_decoded_size(const char *name, uint32_t width, uint32_t height);
/* Allocates a zero-filled (black) image. Fails only on out of memory or a size of 0 or past the
 * VKF_IMAGE_MAX_* limits. `*out_image` is zeroed first. */
vkf_status vkf_image_create(uint32_t width, uint32_t height, vkf_image *out_image);
/* Frees the pixels and zeroes the struct. */
void vkf_image_destroy(vkf_image *image);

#endif
