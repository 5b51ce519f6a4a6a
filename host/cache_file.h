/* Self-checking disk cache entries (the SPIR-V and pipeline caches under VKF_CACHE_DIR). A file is
 * a 40-byte header, then the payload: magic "VKFC", format version, the 128-bit key the entry was
 * stored under, the payload size and a 64-bit hash of the payload. A reader trusts only an entry
 * whose header, key, size and hash all match, so a bit flip, a truncation, a file copied under
 * another name or garbage of the right size is discarded instead of reaching the driver. Writes go
 * to a temporary file renamed over the entry: readers never see a half-written one. */
#ifndef VKF_HOST_CACHE_FILE_H
#define VKF_HOST_CACHE_FILE_H

#include <stddef.h>
#include <stdint.h>

typedef enum vkf_cache_read_result {
  VKF_CACHE_MISS = 0, /* no entry (or unreadable): nothing to say */
  VKF_CACHE_HIT = 1,  /* *out_data holds the verified payload */
  VKF_CACHE_BAD = 2,  /* an entry exists but fails a check; `why` says which */
} vkf_cache_read_result;

enum { VKF_CACHE_HEADER_SIZE = 40 };

/* 64-bit FNV-1a of `size` bytes, chained through `seed`: the content hash of entries and the
 * cache keys of host/ (shader and pipeline keys). */
uint64_t vkf_hash64(uint64_t seed, const void *data, size_t size);

/* Reads and verifies the entry at `path` stored under key (key1, key2), payload at most
 * `max_size` bytes. On a hit *out_data is a malloc'ed copy of the payload (caller frees). */
vkf_cache_read_result vkf_cache_file_read(const char *path, uint64_t key1, uint64_t key2,
                                          size_t max_size, void **out_data, size_t *out_size,
                                          char *why, size_t why_size);

/* vkf_cache_file_read that handles a bad entry the one way every cache does: it is logged as a
 * warning naming `what`, the file and the failed check, and removed (the caller rebuilds and
 * rewrites it). Returns 1 on a hit. */
int vkf_cache_file_load(const char *what, const char *path, uint64_t key1, uint64_t key2,
                        size_t max_size, void **out_data, size_t *out_size);

/* Writes the entry atomically (temporary file + rename). Returns 0 on success; failure only
 * means the entry is not cached. */
int vkf_cache_file_write(const char *path, uint64_t key1, uint64_t key2, const void *data,
                         size_t size);

#endif
