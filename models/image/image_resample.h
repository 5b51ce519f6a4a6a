/* Pillow-exact resizing of an RGB image (image_resample.c); image.h's processors build on it. */
#ifndef VKF_MODELS_IMAGE_RESAMPLE_H
#define VKF_MODELS_IMAGE_RESAMPLE_H

#include <stdint.h>

#include "graph/base/status.h"
#include "models/image/image_buffer.h"

/* Resampling filters; the values are Pillow's (PIL.Image.Resampling), which is also what a
 * preprocessor_config.json's "resample" holds, so a parser can pass the integer through. */
typedef enum vkf_image_resample {
  VKF_IMAGE_RESAMPLE_NEAREST = 0,
  VKF_IMAGE_RESAMPLE_LANCZOS = 1,
  VKF_IMAGE_RESAMPLE_BILINEAR = 2,
  VKF_IMAGE_RESAMPLE_BICUBIC = 3,
  VKF_IMAGE_RESAMPLE_BOX = 4,
  VKF_IMAGE_RESAMPLE_HAMMING = 5,
  VKF_IMAGE_RESAMPLE_MKS2013 = 6, /* Magic Kernel Sharp, Pillow >= 13 */
  VKF_IMAGE_RESAMPLE_MKS2021 = 7,
  VKF_IMAGE_RESAMPLE_COUNT
} vkf_image_resample;

/* "bilinear", ...; NULL for a value out of range. */
const char *vkf_image_resample_name(vkf_image_resample resample);

/* PIL.Image.resize(size=(width, height), resample) on an RGB image, bit-exact with Pillow 13:
 * separable convolution, filter support widened by the downscale factor (antialiasing), 22-bit
 * fixed-point weights, rounding and clipping to uint8 after each pass; NEAREST samples pixel
 * centres. The horizontal pass runs first unless the height shrinks by more than twice as many
 * pixels as the width (Pillow 13's rule; Pillow <= 12 always went horizontal first, so tall
 * images shrunk mostly in height can differ from old Pillow by a level or so). Same size in and
 * out is a copy. `*out_image` is zeroed first and owned by the
 * caller. Errors: INVALID_ARGUMENT (zero or too large size, unknown filter), OUT_OF_MEMORY. */
vkf_status vkf_image_resize(const vkf_image *image, uint32_t width, uint32_t height,
                            vkf_image_resample resample, vkf_image *out_image);

#endif
