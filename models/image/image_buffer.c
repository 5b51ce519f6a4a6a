/* The vkf_image type itself: allocation within the size limits and release. Decoding (image.c,
 * jpeg_decode.c) and resizing (image_resample.c) both build on it, so neither calls into the other
 * for it. */
#include <stdlib.h>
#include <string.h>

#include "models/image/image_buffer.h"

vkf_status vkf_image_check_size(uint32_t width, uint32_t height, const char *what) {
  if (width == 0 || height == 0 || width > VKF_IMAGE_MAX_SIDE || height > VKF_IMAGE_MAX_SIDE ||
      (uint64_t)width * height > VKF_IMAGE_MAX_PIXELS) {
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: image size %ux%u is empty or exceeds the limits (%u per side, %u "
                           "pixels)",
                           what, width, height, VKF_IMAGE_MAX_SIDE, VKF_IMAGE_MAX_PIXELS);
  }
  return VKF_OK;
}

vkf_status vkf_image_check_decoded_size(const char *name, uint32_t width, uint32_t height) {
  if (width == 0 || height == 0)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: empty image (%ux%u pixels)", name, width, height);
  if (width > VKF_IMAGE_MAX_SIDE || height > VKF_IMAGE_MAX_SIDE ||
      (uint64_t)width * height > VKF_IMAGE_MAX_PIXELS)
    return vkf_status_make(
        VKF_STATUS_UNSUPPORTED,
        "%s: image is %ux%u, larger than the limits of %u per side and %u pixels", name, width,
        height, VKF_IMAGE_MAX_SIDE, VKF_IMAGE_MAX_PIXELS);
  return VKF_OK;
}

vkf_status vkf_image_create(uint32_t width, uint32_t height, vkf_image *out_image) {
  memset(out_image, 0, sizeof *out_image);
  VKF_RETURN_IF_ERROR(vkf_image_check_size(width, height, "vkf_image_create"));
  uint8_t *pixels = calloc((size_t)width * height, 3);
  if (!pixels) {
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "image of %ux%u: out of memory", width,
                           height);
  }
  out_image->width = width;
  out_image->height = height;
  out_image->pixels = pixels;
  return VKF_OK;
}

void vkf_image_destroy(vkf_image *image) {
  if (!image) return;
  free(image->pixels);
  memset(image, 0, sizeof *image);
}
