/* A per-thread bound on each allocation stb_image makes while it decodes one PNG: its inflate
 * buffer grows by doubling for as long as the IDAT stream yields bytes, so without a bound a
 * 1 MB file declaring 64x64 can inflate to a gigabyte. image.c sets the bound from the size the
 * header declares; an allocation above it fails, which stb reports as out of memory. */
#ifndef VKF_MODELS_IMAGE_STB_LIMIT_H
#define VKF_MODELS_IMAGE_STB_LIMIT_H

#include <stddef.h>

/* The bound for the calling thread's next decodes (0: none); clears the "hit" flag. */
void vkf_stb_limit_set(size_t max_allocation);
/* Whether an allocation was refused since the last vkf_stb_limit_set. */
int vkf_stb_limit_hit(void);

#endif
