/* The GGUF reader: a cursor over the mapped bytes that never reads past the end, the metadata and
 * tensor-table parsers, and the layout check against ggml's (see gguf.h for the contract). */
#include "models/formats/gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/formats/gguf_quant.h"

#define DEFAULT_ALIGNMENT 32 /* GGUF_DEFAULT_ALIGNMENT */

struct vkf_gguf {
  char *path;
  const uint8_t *bytes;
  size_t size;
  int mapped;
  uint32_t version;
  size_t kv_count, tensor_count;
  vkf_gguf_kv *kvs;
  vkf_gguf_tensor *tensors;
  uint64_t *str_offsets; /* every string array's element offsets, one block */
  char *names;           /* every key and tensor name, NUL-terminated, one block */
};

typedef struct cursor {
  const vkf_gguf *g;
  size_t at;
} cursor;

static size_t left(const cursor *c) {
  return c->g->size - c->at;
}

static vkf_status truncated(const cursor *c, const char *what) {
  return vkf_status_make(VKF_STATUS_PARSE, "%s: truncated at byte %zu of %zu reading %s",
                         c->g->path, c->at, c->g->size, what);
}

static vkf_status read_bytes(cursor *c, void *out, size_t n, const char *what) {
  if (left(c) < n) return truncated(c, what);
  memcpy(out, c->g->bytes + c->at, n);
  c->at += n;
  return VKF_OK;
}

static vkf_status read_u32(cursor *c, uint32_t *out, const char *what) {
  return read_bytes(c, out, 4, what); /* little-endian host: checked at open */
}

static vkf_status read_u64(cursor *c, uint64_t *out, const char *what) {
  return read_bytes(c, out, 8, what);
}

/* A string: u64 length then bytes; the length is checked against what is left and `max`. */
static vkf_status read_string(cursor *c, size_t max, const char **out, size_t *out_len,
                              const char *what) {
  uint64_t n = 0;
  VKF_RETURN_IF_ERROR(read_u64(c, &n, what));
  if (n > left(c))
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: %s claims %llu bytes at byte %zu, but only %zu are left",
                           c->g->path, what, (unsigned long long)n, c->at, left(c));
  if (n > max)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: %s is %llu bytes long, more than %zu",
                           c->g->path, what, (unsigned long long)n, max);
  *out = (const char *)c->g->bytes + c->at;
  *out_len = (size_t)n;
  c->at += (size_t)n;
  return VKF_OK;
}

static size_t scalar_size(vkf_gguf_value_type t) {
  static const size_t sizes[VKF_GGUF_VALUE_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  return (unsigned)t < VKF_GGUF_VALUE_TYPE_COUNT ? sizes[t] : 0;
}

const char *vkf_gguf_value_type_name(vkf_gguf_value_type t) {
  static const char *const names[VKF_GGUF_VALUE_TYPE_COUNT] = {
      "UINT8", "INT8",  "UINT16", "INT16", "UINT32", "INT32",  "FLOAT32",
      "BOOL",  "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64"};
  return (unsigned)t < VKF_GGUF_VALUE_TYPE_COUNT ? names[t] : "unknown";
}

/* A scalar of type t at p, widened into kv->value. */
static void decode_scalar(vkf_gguf_value_type t, const uint8_t *p, vkf_gguf_kv *kv) {
  uint64_t u = 0;
  memcpy(&u, p, scalar_size(t));
  switch (t) {
  case VKF_GGUF_INT8: kv->value.i = (int8_t)u; break;
  case VKF_GGUF_INT16: kv->value.i = (int16_t)u; break;
  case VKF_GGUF_INT32: kv->value.i = (int32_t)u; break;
  case VKF_GGUF_INT64: kv->value.i = (int64_t)u; break;
  case VKF_GGUF_FLOAT32: {
    float f;
    memcpy(&f, p, 4);
    kv->value.f = f;
    break;
  }
  case VKF_GGUF_FLOAT64: memcpy(&kv->value.f, p, 8); break;
  default: kv->value.u = u; break;
  }
}

static int is_int_type(vkf_gguf_value_type t) {
  return t <= VKF_GGUF_INT32 || t == VKF_GGUF_UINT64 || t == VKF_GGUF_INT64;
}
static int is_signed(vkf_gguf_value_type t) {
  return t == VKF_GGUF_INT8 || t == VKF_GGUF_INT16 || t == VKF_GGUF_INT32 || t == VKF_GGUF_INT64;
}

/* Pass 1 sizes the string arrays (so one block holds their offsets); pass 2 fills them. */
static vkf_status read_kv(cursor *c, vkf_gguf_kv *kv, size_t *key_len_out, uint64_t *offsets,
                          size_t *offsets_used, size_t index) {
  const char *key;
  size_t key_len;
  VKF_RETURN_IF_ERROR(read_string(c, VKF_GGUF_MAX_KEY, &key, &key_len, "a metadata key"));
  if (key_len == 0)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: metadata entry %zu has an empty key",
                           c->g->path, index);
  if (memchr(key, 0, key_len))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: metadata key %zu holds a NUL byte", c->g->path,
                           index);
  kv->key = key; /* replaced by a NUL-terminated copy once every entry is read */
  *key_len_out = key_len;
  uint32_t type;
  VKF_RETURN_IF_ERROR(read_u32(c, &type, "a metadata type"));
  if (type >= VKF_GGUF_VALUE_TYPE_COUNT)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: metadata \"%.*s\" has unknown value type %u",
                           c->g->path, (int)(key_len > 200 ? 200 : key_len), key, type);
  kv->type = (vkf_gguf_value_type)type;
  if (kv->type == VKF_GGUF_STRING) {
    const char *s;
    size_t n;
    VKF_RETURN_IF_ERROR(read_string(c, SIZE_MAX, &s, &n, "a metadata string"));
    kv->str = s;
    kv->str_len = n;
    return VKF_OK;
  }
  if (kv->type != VKF_GGUF_ARRAY) {
    const uint8_t *p = c->g->bytes + c->at;
    uint8_t tmp[8];
    VKF_RETURN_IF_ERROR(read_bytes(c, tmp, scalar_size(kv->type), "a metadata value"));
    decode_scalar(kv->type, p, kv);
    if (kv->type == VKF_GGUF_BOOL && kv->value.u > 1)
      return vkf_status_make(VKF_STATUS_PARSE, "%s: metadata \"%.*s\" is a BOOL of value %u",
                             c->g->path, (int)(key_len > 200 ? 200 : key_len), key,
                             (unsigned)kv->value.u);
    return VKF_OK;
  }
  uint32_t elem;
  uint64_t count;
  VKF_RETURN_IF_ERROR(read_u32(c, &elem, "an array's element type"));
  VKF_RETURN_IF_ERROR(read_u64(c, &count, "an array's length"));
  if (elem >= VKF_GGUF_VALUE_TYPE_COUNT || elem == VKF_GGUF_ARRAY)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: metadata \"%.*s\" is an array of %s element type %u", c->g->path,
                           (int)(key_len > 200 ? 200 : key_len), key,
                           elem == VKF_GGUF_ARRAY ? "the unsupported nested" : "unknown", elem);
  kv->array_type = (vkf_gguf_value_type)elem;
  kv->count = count;
  if (elem == VKF_GGUF_STRING) {
    /* each element takes at least its 8-byte length: a count beyond that cannot be in the file */
    if (count > left(c) / 8)
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: metadata \"%.*s\" claims %llu strings, more than the %zu bytes "
                             "left can hold",
                             c->g->path, (int)(key_len > 200 ? 200 : key_len), key,
                             (unsigned long long)count, left(c));
    if (offsets) kv->str_offset = offsets + *offsets_used;
    for (uint64_t i = 0; i < count; i++) {
      const char *s;
      size_t n;
      size_t at = c->at;
      VKF_RETURN_IF_ERROR(read_string(c, SIZE_MAX, &s, &n, "an array string"));
      if (offsets) offsets[*offsets_used + i] = at;
    }
    *offsets_used += (size_t)count;
    return VKF_OK;
  }
  size_t es = scalar_size(kv->array_type);
  if (count > left(c) / es)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: metadata \"%.*s\" claims %llu %s elements, more than the %zu "
                           "bytes left hold",
                           c->g->path, (int)(key_len > 200 ? 200 : key_len), key,
                           (unsigned long long)count, vkf_gguf_value_type_name(kv->array_type),
                           left(c));
  kv->array = c->g->bytes + c->at;
  if (kv->array_type == VKF_GGUF_BOOL)
    for (uint64_t i = 0; i < count; i++)
      if (kv->array[i] > 1)
        return vkf_status_make(VKF_STATUS_PARSE,
                               "%s: metadata \"%.*s\"[%llu] is a BOOL of value %u", c->g->path,
                               (int)(key_len > 200 ? 200 : key_len), key, (unsigned long long)i,
                               kv->array[i]);
  c->at += (size_t)count * es;
  return VKF_OK;
}

static vkf_status read_tensor_info(cursor *c, vkf_gguf_tensor *t, size_t *name_len, size_t index) {
  const char *name;
  size_t len;
  VKF_RETURN_IF_ERROR(read_string(c, VKF_GGUF_MAX_NAME, &name, &len, "a tensor name"));
  if (memchr(name, 0, len))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor %zu's name holds a NUL byte", c->g->path,
                           index);
  t->name = name;
  *name_len = len;
  uint32_t n_dims;
  VKF_RETURN_IF_ERROR(read_u32(c, &n_dims, "a tensor's dimension count"));
  if (n_dims < 1 || n_dims > VKF_GGUF_MAX_DIMS)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%.*s\" has %u dims; 1 to %d allowed",
                           c->g->path, (int)len, name, n_dims, VKF_GGUF_MAX_DIMS);
  t->n_dims = (int)n_dims;
  int64_t elements = 1;
  for (int d = 0; d < VKF_GGUF_MAX_DIMS; d++) {
    uint64_t v = 1;
    if (d < (int)n_dims) VKF_RETURN_IF_ERROR(read_u64(c, &v, "a tensor dim"));
    if (v < 1 || v > (uint64_t)INT64_MAX / (uint64_t)elements)
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: tensor \"%.*s\" dim %d is %llu (positive, and the element "
                             "count within 2^63, allowed)",
                             c->g->path, (int)len, name, d, (unsigned long long)v);
    t->dims[d] = (int64_t)v;
    elements *= (int64_t)v;
  }
  t->element_count = elements;
  uint32_t type;
  VKF_RETURN_IF_ERROR(read_u32(c, &type, "a tensor type"));
  vkf_gguf_type_info info = vkf_gguf_type_info_of(type);
  if (!info.name)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%.*s\" has unknown type %u",
                           c->g->path, (int)len, name, type);
  t->type = (vkf_gguf_type)type;
  if (t->dims[0] % info.block)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: tensor \"%.*s\" has rows of %lld elements, not a multiple of "
                           "%s's block of %u",
                           c->g->path, (int)len, name, (long long)t->dims[0], info.name,
                           info.block);
  /* bytes = elements / block * block bytes; the quotient is below 2^63 / 1, so check the product */
  uint64_t blocks = (uint64_t)elements / info.block;
  if (blocks > SIZE_MAX / info.bytes)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%.*s\" is larger than memory",
                           c->g->path, (int)len, name);
  t->size = (size_t)(blocks * info.bytes);
  return read_u64(c, &t->offset, "a tensor offset");
}

/* Copies keys and tensor names into one NUL-terminated block and points the entries at it. */
static vkf_status copy_names(vkf_gguf *g, const size_t *key_lens, const size_t *name_lens) {
  size_t total = 0;
  for (size_t i = 0; i < g->kv_count; i++) total += key_lens[i] + 1;
  for (size_t i = 0; i < g->tensor_count; i++) total += name_lens[i] + 1;
  g->names = malloc(total ? total : 1);
  if (!g->names) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: names", g->path);
  char *p = g->names;
  for (size_t i = 0; i < g->kv_count; i++) {
    memcpy(p, g->kvs[i].key, key_lens[i]);
    p[key_lens[i]] = 0;
    g->kvs[i].key = p;
    p += key_lens[i] + 1;
  }
  for (size_t i = 0; i < g->tensor_count; i++) {
    memcpy(p, g->tensors[i].name, name_lens[i]);
    p[name_lens[i]] = 0;
    g->tensors[i].name = p;
    p += name_lens[i] + 1;
  }
  return VKF_OK;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int kv_key_cmp(const void *a, const void *b) {
  return strcmp(((const vkf_gguf_kv *)a)->key, ((const vkf_gguf_kv *)b)->key);
}

/* Duplicate keys and tensor names are refused, as ggml refuses them (quadratic only in the
 * tensor count, which the file size bounds; the keys are checked on a sorted copy). */
static vkf_status check_unique(const vkf_gguf *g) {
  if (g->kv_count > 1) {
    vkf_gguf_kv *sorted = malloc(g->kv_count * sizeof *sorted);
    if (!sorted) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: keys", g->path);
    memcpy(sorted, g->kvs, g->kv_count * sizeof *sorted);
    qsort(sorted, g->kv_count, sizeof *sorted, kv_key_cmp);
    for (size_t i = 1; i < g->kv_count; i++)
      if (!strcmp(sorted[i].key, sorted[i - 1].key)) {
        vkf_status s = vkf_status_make(VKF_STATUS_PARSE, "%s: metadata key \"%s\" appears twice",
                                       g->path, sorted[i].key);
        free(sorted);
        return s;
      }
    free(sorted);
  }
  const char **names = malloc((g->tensor_count ? g->tensor_count : 1) * sizeof *names);
  if (!names) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: names", g->path);
  for (size_t i = 0; i < g->tensor_count; i++) names[i] = g->tensors[i].name;
  qsort(names, g->tensor_count, sizeof *names, name_cmp);
  vkf_status s = VKF_OK;
  for (size_t i = 1; i < g->tensor_count && !s; i++)
    if (!strcmp(names[i], names[i - 1]))
      s = vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%s\" appears twice", g->path, names[i]);
  free(names);
  return s;
}

/* general.alignment: a UINT32 power of two when present (ggml's check). */
static vkf_status alignment_of(const vkf_gguf *g, size_t *out) {
  *out = DEFAULT_ALIGNMENT;
  const vkf_gguf_kv *kv = vkf_gguf_find_kv(g, "general.alignment");
  if (!kv) return VKF_OK;
  if (kv->type != VKF_GGUF_UINT32)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: general.alignment is a %s, UINT32 expected",
                           g->path, vkf_gguf_value_type_name(kv->type));
  uint64_t a = kv->value.u;
  if (a == 0 || (a & (a - 1)))
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: general.alignment is %llu, not a power of two", g->path,
                           (unsigned long long)a);
  *out = (size_t)a;
  return VKF_OK;
}

/* The data section starts at the aligned end of the tensor table; each tensor sits where the
 * previous one's padded end is, as ggml's writer puts it and its reader requires. */
static vkf_status check_layout(vkf_gguf *g, size_t table_end) {
  size_t align;
  VKF_RETURN_IF_ERROR(alignment_of(g, &align));
  size_t data_start = table_end + (align - table_end % align) % align;
  if (g->tensor_count && data_start > g->size)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: the data section starts at byte %zu, past the end of the %zu-byte "
                           "file",
                           g->path, data_start, g->size);
  uint64_t expected = 0;
  for (size_t i = 0; i < g->tensor_count; i++) {
    vkf_gguf_tensor *t = &g->tensors[i];
    if (t->offset != expected)
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: tensor \"%s\" has offset %llu; %llu expected (the previous "
                             "tensor's end padded to %zu bytes)",
                             g->path, t->name, (unsigned long long)t->offset,
                             (unsigned long long)expected, align);
    if (t->size > g->size - data_start || t->offset > g->size - data_start - t->size)
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: tensor \"%s\" (%zu bytes at data offset %llu) runs past the end "
                             "of the %zu-byte file",
                             g->path, t->name, t->size, (unsigned long long)t->offset, g->size);
    t->data = g->bytes + data_start + t->offset;
    uint64_t end = t->offset + t->size;
    expected = end + (align - end % align) % align;
  }
  return VKF_OK;
}

static vkf_status parse(vkf_gguf *g) {
  cursor c = {g, 0};
  char magic[4];
  VKF_RETURN_IF_ERROR(read_bytes(&c, magic, 4, "the magic"));
  if (memcmp(magic, "GGUF", 4))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: not a GGUF file (it does not start with \"GGUF\")",
                           g->path);
  VKF_RETURN_IF_ERROR(read_u32(&c, &g->version, "the version"));
  if (g->version == 1)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: GGUF version 1 is not supported (nor by llama.cpp); convert it "
                           "again",
                           g->path);
  if ((g->version & 0xFFFF) == 0 && g->version)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: a big-endian GGUF file (version %u byte-swapped); only "
                           "little-endian files are read",
                           g->path, __builtin_bswap32(g->version));
  if (g->version != 2 && g->version != 3)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: GGUF version %u; 2 and 3 are read",
                           g->path, g->version);
  uint64_t n_tensors, n_kv;
  VKF_RETURN_IF_ERROR(read_u64(&c, &n_tensors, "the tensor count"));
  VKF_RETURN_IF_ERROR(read_u64(&c, &n_kv, "the metadata count"));
  /* the smallest entry: a tensor takes 8 + 1 + 4 + 8 + 4 + 8 bytes, a key/value 8 + 1 + 4 + 1 */
  if (n_tensors > left(&c) / 33 || n_kv > left(&c) / 14)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: it claims %llu tensors and %llu metadata entries, more than its "
                           "%zu bytes can hold",
                           g->path, (unsigned long long)n_tensors, (unsigned long long)n_kv,
                           g->size);
  g->kv_count = (size_t)n_kv;
  g->tensor_count = (size_t)n_tensors;
  g->kvs = calloc(g->kv_count + 1, sizeof *g->kvs);
  g->tensors = calloc(g->tensor_count + 1, sizeof *g->tensors);
  size_t *key_lens = calloc(g->kv_count + 1, sizeof *key_lens);
  size_t *name_lens = calloc(g->tensor_count + 1, sizeof *name_lens);
  vkf_status s = VKF_OK;
  if (!g->kvs || !g->tensors || !key_lens || !name_lens)
    s = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: tables", g->path);
  /* pass 1 counts the string-array elements, pass 2 records their offsets */
  size_t kv_start = c.at, strings = 0;
  for (size_t i = 0; i < g->kv_count && !s; i++)
    s = read_kv(&c, &g->kvs[i], &key_lens[i], NULL, &strings, i);
  if (!s && !(g->str_offsets = malloc((strings ? strings : 1) * sizeof *g->str_offsets)))
    s = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: %zu strings", g->path, strings);
  c.at = kv_start;
  size_t used = 0;
  for (size_t i = 0; i < g->kv_count && !s; i++)
    s = read_kv(&c, &g->kvs[i], &key_lens[i], g->str_offsets, &used, i);
  for (size_t i = 0; i < g->tensor_count && !s; i++)
    s = read_tensor_info(&c, &g->tensors[i], &name_lens[i], i);
  if (!s) s = copy_names(g, key_lens, name_lens);
  free(key_lens);
  free(name_lens);
  if (!s) s = check_unique(g);
  if (!s) s = check_layout(g, c.at);
  return s;
}

vkf_status vkf_gguf_open_memory(const void *bytes, size_t size, const char *name, vkf_gguf **out) {
  VKF_ASSERT(out && name && (bytes || !size));
  *out = NULL;
  vkf_gguf *g = calloc(1, sizeof *g);
  if (!g || !(g->path = strdup(name))) {
    free(g);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for the reader", name);
  }
  static const uint8_t empty[1];
  g->bytes = bytes ? bytes : empty;
  g->size = size;
  vkf_status s = parse(g);
  if (s) {
    vkf_gguf_close(g);
    return s;
  }
  *out = g;
  return VKF_OK;
}

/* Opens without blocking (a FIFO named like the file must not hang) and refuses non-files. */
static vkf_status open_regular(const char *path, int *out_fd, size_t *out_size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    return vkf_status_make(err == ENOENT ? VKF_STATUS_NOT_FOUND : VKF_STATUS_IO,
                           "%s: cannot open: %s", path, strerror(err));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return vkf_status_make(VKF_STATUS_IO, "%s: not a regular file", path);
  }
  *out_fd = fd;
  *out_size = (size_t)sb.st_size;
  return VKF_OK;
}

int vkf_gguf_is_file(const char *path) {
  int fd;
  size_t size;
  vkf_status s = open_regular(path, &fd, &size);
  if (s) {
    vkf_status_free(s);
    return 0;
  }
  char magic[4];
  int yes = size >= 4 && read(fd, magic, 4) == 4 && !memcmp(magic, "GGUF", 4);
  close(fd);
  return yes;
}

vkf_status vkf_gguf_open(const char *path, vkf_gguf **out) {
  VKF_ASSERT(out && path);
  *out = NULL;
  int fd;
  size_t size;
  VKF_RETURN_IF_ERROR(open_regular(path, &fd, &size));
  const uint8_t *map = NULL;
  if (size) {
    void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int err = errno;
      close(fd);
      return vkf_status_make(VKF_STATUS_IO, "%s: mmap of %zu bytes failed: %s", path, size,
                             strerror(err));
    }
    map = m;
  }
  close(fd);
  vkf_status s = vkf_gguf_open_memory(map, size, path, out);
  if (s) {
    if (map) munmap((void *)map, size);
    return s;
  }
  (*out)->mapped = map != NULL;
  return VKF_OK;
}

void vkf_gguf_close(vkf_gguf *g) {
  if (!g) return;
  if (g->mapped) munmap((void *)g->bytes, g->size);
  free(g->kvs);
  free(g->tensors);
  free(g->str_offsets);
  free(g->names);
  free(g->path);
  free(g);
}

const char *vkf_gguf_path(const vkf_gguf *g) { return g->path; }
uint32_t vkf_gguf_version(const vkf_gguf *g) { return g->version; }
size_t vkf_gguf_kv_count(const vkf_gguf *g) { return g->kv_count; }
const vkf_gguf_kv *vkf_gguf_kv_at(const vkf_gguf *g, size_t i) {
  return i < g->kv_count ? &g->kvs[i] : NULL;
}
size_t vkf_gguf_tensor_count(const vkf_gguf *g) { return g->tensor_count; }
const vkf_gguf_tensor *vkf_gguf_tensor_at(const vkf_gguf *g, size_t i) {
  return i < g->tensor_count ? &g->tensors[i] : NULL;
}

/* Linear lookups: a file holds a few dozen keys and a few hundred tensors, looked up once each. */
const vkf_gguf_kv *vkf_gguf_find_kv(const vkf_gguf *g, const char *key) {
  for (size_t i = 0; i < g->kv_count; i++)
    if (!strcmp(g->kvs[i].key, key)) return &g->kvs[i];
  return NULL;
}
const vkf_gguf_tensor *vkf_gguf_find_tensor(const vkf_gguf *g, const char *name) {
  for (size_t i = 0; i < g->tensor_count; i++)
    if (!strcmp(g->tensors[i].name, name)) return &g->tensors[i];
  return NULL;
}

static vkf_status wrong_type(const vkf_gguf *g, const vkf_gguf_kv *kv, const char *expected) {
  return vkf_status_make(VKF_STATUS_PARSE, "%s: metadata \"%s\" is a %s, %s expected", g->path,
                         kv->key, vkf_gguf_value_type_name(kv->type), expected);
}

vkf_status vkf_gguf_get_uint_or(const vkf_gguf *g, const char *key, uint64_t max, uint64_t def,
                                uint64_t *out) {
  *out = def;
  const vkf_gguf_kv *kv = vkf_gguf_find_kv(g, key);
  if (!kv) return VKF_OK;
  if (!is_int_type(kv->type)) return wrong_type(g, kv, "an integer");
  if ((is_signed(kv->type) && kv->value.i < 0) || kv->value.u > max)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: metadata \"%s\" is %lld; 0 to %llu allowed",
                           g->path, key,
                           (long long)(is_signed(kv->type) ? kv->value.i : (int64_t)kv->value.u),
                           (unsigned long long)max);
  *out = kv->value.u;
  return VKF_OK;
}

vkf_status vkf_gguf_get_uint(const vkf_gguf *g, const char *key, uint64_t max, uint64_t *out) {
  if (!vkf_gguf_find_kv(g, key))
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: metadata \"%s\" is missing", g->path, key);
  return vkf_gguf_get_uint_or(g, key, max, 0, out);
}

vkf_status vkf_gguf_get_float_or(const vkf_gguf *g, const char *key, double def, double *out) {
  *out = def;
  const vkf_gguf_kv *kv = vkf_gguf_find_kv(g, key);
  if (!kv) return VKF_OK;
  if (kv->type == VKF_GGUF_FLOAT32 || kv->type == VKF_GGUF_FLOAT64) *out = kv->value.f;
  else if (is_int_type(kv->type))
    *out = is_signed(kv->type) ? (double)kv->value.i : (double)kv->value.u;
  else return wrong_type(g, kv, "a number");
  return VKF_OK;
}

vkf_status vkf_gguf_get_bool_or(const vkf_gguf *g, const char *key, int def, int *out) {
  *out = def;
  const vkf_gguf_kv *kv = vkf_gguf_find_kv(g, key);
  if (!kv) return VKF_OK;
  if (kv->type != VKF_GGUF_BOOL) return wrong_type(g, kv, "BOOL");
  *out = (int)kv->value.u;
  return VKF_OK;
}

vkf_status vkf_gguf_get_string(const vkf_gguf *g, const char *key, const char **out,
                               size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  const vkf_gguf_kv *kv = vkf_gguf_find_kv(g, key);
  if (!kv) return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: metadata \"%s\" is missing", g->path, key);
  if (kv->type != VKF_GGUF_STRING) return wrong_type(g, kv, "STRING");
  *out = kv->str;
  *out_len = kv->str_len;
  return VKF_OK;
}

vkf_status vkf_gguf_get_array(const vkf_gguf *g, const char *key, vkf_gguf_value_type type,
                              const vkf_gguf_kv **out) {
  *out = NULL;
  const vkf_gguf_kv *kv = vkf_gguf_find_kv(g, key);
  if (!kv) return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: metadata \"%s\" is missing", g->path, key);
  if (kv->type != VKF_GGUF_ARRAY || kv->array_type != type)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: metadata \"%s\" is %s%s, an array of %s expected",
                           g->path, key, kv->type == VKF_GGUF_ARRAY ? "an array of " : "a ",
                           vkf_gguf_value_type_name(kv->type == VKF_GGUF_ARRAY ? kv->array_type
                                                                               : kv->type),
                           vkf_gguf_value_type_name(type));
  *out = kv;
  return VKF_OK;
}

void vkf_gguf_array_string(const vkf_gguf *g, const vkf_gguf_kv *kv, uint64_t i, const char **out,
                           size_t *out_len) {
  VKF_ASSERT(kv->type == VKF_GGUF_ARRAY && kv->array_type == VKF_GGUF_STRING && i < kv->count);
  uint64_t at = kv->str_offset[i], n;
  memcpy(&n, g->bytes + at, 8); /* validated at open */
  *out = (const char *)g->bytes + at + 8;
  *out_len = (size_t)n;
}

int64_t vkf_gguf_array_int(const vkf_gguf_kv *kv, uint64_t i) {
  VKF_ASSERT(kv->type == VKF_GGUF_ARRAY && i < kv->count && is_int_type(kv->array_type));
  vkf_gguf_kv one = {0};
  decode_scalar(kv->array_type, kv->array + i * scalar_size(kv->array_type), &one);
  return is_signed(kv->array_type) ? one.value.i : (int64_t)one.value.u;
}

double vkf_gguf_array_float(const vkf_gguf_kv *kv, uint64_t i) {
  VKF_ASSERT(kv->type == VKF_GGUF_ARRAY && i < kv->count);
  vkf_gguf_kv one = {0};
  decode_scalar(kv->array_type, kv->array + i * scalar_size(kv->array_type), &one);
  if (kv->array_type == VKF_GGUF_FLOAT32 || kv->array_type == VKF_GGUF_FLOAT64) return one.value.f;
  return is_signed(kv->array_type) ? (double)one.value.i : (double)one.value.u;
}
