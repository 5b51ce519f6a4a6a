/* JPEG decoding with libjpeg-turbo, as Pillow does it (internal to models/image; image.c calls
 * it for data that starts with FF D8 FF, the only JPEGs Pillow identifies). */
#ifndef VKF_MODELS_IMAGE_JPEG_DECODE_H
#define VKF_MODELS_IMAGE_JPEG_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"
#include "models/image/image.h"

/* Image.open(f).convert("RGB") of Pillow 13, pixel for pixel: Pillow's own header walk decides
 * what it accepts (8-bit, 1, 3 or 4 components, known markers) and the mode; libjpeg-turbo
 * decodes with Pillow's settings (default islow IDCT, fancy upsampling, out_color_space
 * GRAYSCALE, RGB or CMYK by the mode); CMYK is read as Adobe-inverted and converted with
 * Pillow's cmyk2rgb; grey is replicated. libjpeg's warnings (corrupt entropy data) are ignored
 * as Pillow ignores them; data ending before the last scanline is an error ("image file is
 * truncated"), ending after it is not. Errors: PARSE (not a JPEG Pillow reads, corrupt,
 * truncated), UNSUPPORTED (past VKF_IMAGE_MAX_*), OUT_OF_MEMORY; messages start with `name`. */
vkf_status vkf_image_decode_jpeg(const uint8_t *data, size_t size, const char *name,
                                 vkf_image *out_image);

#endif
