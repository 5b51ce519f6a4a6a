/* Owns the on-disk format of cache entries: header + payload, verified on read, written through a
 * temporary file and rename. */
#include "host/cache_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/log.h"

enum { MAGIC = 0x43464b56u /* "VKFC" little-endian */, FORMAT = 1 };
/* A payload hash seed of its own: an entry's hash never equals a key hashed the same way. */
static const uint64_t PAYLOAD_SEED = 0x5bd1e9955bd1e995ull;

uint64_t vkf_hash64(uint64_t seed, const void *data, size_t size) {
  /* FNV-1a: every step is a bijection of the state, so any single changed byte changes the hash;
   * that is what the entry check needs (it guards against corruption, not against an attacker). */
  uint64_t h = seed ^ 0xcbf29ce484222325ull;
  const unsigned char *p = data;
  for (size_t i = 0; i < size; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* The header as bytes, little-endian whatever the host (a cache dir may be shared over NFS). */
static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void make_header(unsigned char *h, uint64_t key1, uint64_t key2, const void *data,
                        size_t size) {
  put_u32(h, MAGIC);
  put_u32(h + 4, FORMAT);
  put_u64(h + 8, key1);
  put_u64(h + 16, key2);
  put_u64(h + 24, (uint64_t)size);
  put_u64(h + 32, vkf_hash64(PAYLOAD_SEED, data, size));
}

static vkf_cache_read_result bad(char *why, size_t why_size, const char *fmt, unsigned long long a,
                                 unsigned long long b) {
  snprintf(why, why_size, fmt, a, b);
  return VKF_CACHE_BAD;
}

/* Reads exactly `size` bytes (short reads retried); 0 on success. */
static int read_all(int fd, void *dst, size_t size) {
  unsigned char *p = dst;
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n, size -= (size_t)n;
  }
  return 0;
}

vkf_cache_read_result vkf_cache_file_read(const char *path, uint64_t key1, uint64_t key2,
                                          size_t max_size, void **out_data, size_t *out_size,
                                          char *why, size_t why_size) {
  *out_data = NULL;
  *out_size = 0;
  if (why_size) why[0] = 0;
  /* Non-blocking: a FIFO planted in the cache directory must not hang the process. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return VKF_CACHE_MISS;
  struct stat st;
  vkf_cache_read_result r = VKF_CACHE_BAD;
  unsigned char header[VKF_CACHE_HEADER_SIZE];
  void *data = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(why, why_size, "not a regular file");
  } else if ((uint64_t)st.st_size < VKF_CACHE_HEADER_SIZE) {
    r = bad(why, why_size, "%llu bytes, shorter than the %llu-byte header",
            (unsigned long long)st.st_size, VKF_CACHE_HEADER_SIZE);
  } else if (read_all(fd, header, sizeof header) != 0) {
    snprintf(why, why_size, "read error");
  } else if (get_u32(header) != MAGIC || get_u32(header + 4) != FORMAT) {
    r = bad(why, why_size, "no vkformer cache header (magic %08llx, format %llu)", get_u32(header),
            get_u32(header + 4));
  } else if (get_u64(header + 8) != key1 || get_u64(header + 16) != key2) {
    snprintf(why, why_size, "stored under another key");
  } else if (get_u64(header + 24) > max_size ||
             get_u64(header + 24) != (uint64_t)st.st_size - VKF_CACHE_HEADER_SIZE) {
    r = bad(why, why_size, "payload of %llu bytes in a file of %llu", get_u64(header + 24),
            (unsigned long long)st.st_size);
  } else {
    size_t size = (size_t)get_u64(header + 24);
    data = malloc(size ? size : 1);
    if (!data) {
      r = VKF_CACHE_MISS; /* out of memory is not the entry's fault */
    } else if (read_all(fd, data, size) != 0) {
      snprintf(why, why_size, "read error");
    } else if (vkf_hash64(PAYLOAD_SEED, data, size) != get_u64(header + 32)) {
      snprintf(why, why_size, "content hash mismatch");
    } else {
      *out_data = data;
      *out_size = size;
      data = NULL;
      r = VKF_CACHE_HIT;
    }
  }
  free(data);
  close(fd);
  return r;
}

int vkf_cache_file_load(const char *what, const char *path, uint64_t key1, uint64_t key2,
                        size_t max_size, void **out_data, size_t *out_size) {
  char why[160];
  vkf_cache_read_result r =
      vkf_cache_file_read(path, key1, key2, max_size, out_data, out_size, why, sizeof why);
  if (r == VKF_CACHE_BAD) {
    /* Removed now so that a rebuild that fails to write it back cannot be served it again. */
    int removed = unlink(path) == 0;
    vkf_log(VKF_LOG_WARN, "%s cache entry %s is corrupt (%s): %s, rebuilding it", what, path, why,
            removed ? "discarded" : "ignored (cannot remove it)");
  }
  return r == VKF_CACHE_HIT;
}

int vkf_cache_file_write(const char *path, uint64_t key1, uint64_t key2, const void *data,
                         size_t size) {
  unsigned char header[VKF_CACHE_HEADER_SIZE];
  make_header(header, key1, key2, data, size);
  char tmp[4200];
  if (snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof tmp) return -1;
  FILE *f = fopen(tmp, "wb");
  if (!f) return -1;
  int ok = fwrite(header, 1, sizeof header, f) == sizeof header && fwrite(data, 1, size, f) == size;
  ok = (fclose(f) == 0) && ok;
  /* rename() is atomic: a reader (another process, or this one after a crash) sees the old entry
   * or the whole new one; a torn file from a power loss still fails the size or hash check. */
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    return -1;
  }
  return 0;
}
