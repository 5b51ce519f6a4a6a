/* Pillow's Python-side JPEG header walk, which decides whether Pillow opens a JPEG at all and in
 * which mode (internal to models/image). */
#ifndef VKF_MODELS_IMAGE_JPEG_HEADER_H
#define VKF_MODELS_IMAGE_JPEG_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct vkf_jpeg_pillow_info {
  uint32_t width, height; /* from the last frame header (SOF) before the first scan */
  int components;         /* 1 ("L"), 3 ("RGB") or 4 ("CMYK", read as Adobe-inverted) */
} vkf_jpeg_pillow_info;

/* Walks the markers from the SOI to the first SOS as JpegImageFile._open does (Pillow 13) and
 * returns true where Pillow would open the file; else false with the reason in `why` (one line,
 * no file name). `data` must hold `size` bytes. */
bool vkf_jpeg_pillow_header(const uint8_t *data, size_t size, vkf_jpeg_pillow_info *info, char *why,
                            size_t why_size);

#endif
