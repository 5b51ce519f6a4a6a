/* The safetensors reader: mapping, header validation (every offset is checked against the file
 * before any pointer is formed), name lookup, shape expectations and dtype conversion. */
#include "models/formats/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "graph/base/half.h"
#include "graph/base/quant.h"

/* JSON numbers are doubles: above 2^53 an offset can no longer be represented exactly, so such a
 * value cannot be trusted and is rejected rather than rounded. */
#define MAX_EXACT_JSON_INT 9007199254740992.0

struct vkf_safetensors {
  char *path;
  const uint8_t *bytes; /* whole file */
  size_t size;
  int mapped;        /* 1: bytes came from mmap and are unmapped at close; 2: freed at close */
  int allow_blocks;  /* the GGML_* dtypes are accepted (images vkformer made in memory) */
  size_t data_start; /* 8 + header length */
  size_t count;
  vkf_safetensors_info *tensors;        /* sorted by data offset */
  const vkf_safetensors_info **by_name; /* sorted by strcmp, for bsearch */
  char *names;                          /* one block holding every name */
};

static const struct {
  const char *name;
  size_t size;
} dtype_table[VKF_SAFETENSORS_DTYPE_COUNT] = {
    [VKF_SAFETENSORS_BOOL] = {"BOOL", 1},       [VKF_SAFETENSORS_U8] = {"U8", 1},
    [VKF_SAFETENSORS_I8] = {"I8", 1},           [VKF_SAFETENSORS_U16] = {"U16", 2},
    [VKF_SAFETENSORS_I16] = {"I16", 2},         [VKF_SAFETENSORS_F16] = {"F16", 2},
    [VKF_SAFETENSORS_BF16] = {"BF16", 2},       [VKF_SAFETENSORS_U32] = {"U32", 4},
    [VKF_SAFETENSORS_I32] = {"I32", 4},         [VKF_SAFETENSORS_F32] = {"F32", 4},
    [VKF_SAFETENSORS_U64] = {"U64", 8},         [VKF_SAFETENSORS_I64] = {"I64", 8},
    [VKF_SAFETENSORS_F64] = {"F64", 8},         [VKF_SAFETENSORS_F8_E4M3] = {"F8_E4M3", 1},
    [VKF_SAFETENSORS_F8_E5M2] = {"F8_E5M2", 1},
    /* blocks: element size 0, sizes from graph/base/quant.h */
    [VKF_SAFETENSORS_GGML_Q8_0] = {"GGML_Q8_0", 0}, [VKF_SAFETENSORS_GGML_Q4_0] = {"GGML_Q4_0", 0},
    [VKF_SAFETENSORS_GGML_Q4_1] = {"GGML_Q4_1", 0}, [VKF_SAFETENSORS_GGML_Q5_0] = {"GGML_Q5_0", 0},
    [VKF_SAFETENSORS_GGML_Q5_1] = {"GGML_Q5_1", 0}, [VKF_SAFETENSORS_GGML_Q4_K] = {"GGML_Q4_K", 0},
    [VKF_SAFETENSORS_GGML_Q5_K] = {"GGML_Q5_K", 0}, [VKF_SAFETENSORS_GGML_Q6_K] = {"GGML_Q6_K", 0},
};

int vkf_safetensors_quant_format(vkf_safetensors_dtype dtype) {
  return dtype >= VKF_SAFETENSORS_GGML_Q8_0 && dtype < VKF_SAFETENSORS_DTYPE_COUNT
             ? (int)(dtype - VKF_SAFETENSORS_GGML_Q8_0)
             : -1;
}

const char *vkf_safetensors_dtype_name(vkf_safetensors_dtype dtype) {
  VKF_ASSERT(dtype >= 0 && dtype < VKF_SAFETENSORS_DTYPE_COUNT);
  return dtype_table[dtype].name;
}

size_t vkf_safetensors_dtype_size(vkf_safetensors_dtype dtype) {
  VKF_ASSERT(dtype >= 0 && dtype < VKF_SAFETENSORS_DTYPE_COUNT);
  return dtype_table[dtype].size;
}

static int dtype_from_name(const char *name, vkf_safetensors_dtype *out_dtype) {
  for (int i = 0; i < VKF_SAFETENSORS_DTYPE_COUNT; i++) {
    if (strcmp(dtype_table[i].name, name) == 0) {
      *out_dtype = (vkf_safetensors_dtype)i;
      return 1;
    }
  }
  return 0;
}

/* A JSON value that is an integer in [0, max]; doubles are compared before any cast so a huge or
 * fractional value never reaches an integer conversion (which would be undefined). */
static int json_to_u64(const cJSON *item, uint64_t max, uint64_t *out_value) {
  if (!cJSON_IsNumber(item)) return 0;
  double d = item->valuedouble;
  if (!(d >= 0.0) || d > MAX_EXACT_JSON_INT || d != floor(d)) return 0;
  uint64_t v = (uint64_t)d;
  if (v > max) return 0;
  *out_value = v;
  return 1;
}

static uint64_t load_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static int by_offset_cmp(const void *a, const void *b) {
  const vkf_safetensors_info *x = a, *y = b;
  if (x->file_offset != y->file_offset) return x->file_offset < y->file_offset ? -1 : 1;
  if (x->data_size != y->data_size) return x->data_size < y->data_size ? -1 : 1;
  return 0;
}

static int by_name_cmp(const void *a, const void *b) {
  const vkf_safetensors_info *const *x = a, *const *y = b;
  return strcmp((*x)->name, (*y)->name);
}

static void format_shape(const int64_t *dims, int rank, char *buf, size_t buf_size) {
  size_t used = 0;
  buf[0] = '\0';
  used += (size_t)snprintf(buf, buf_size, "[");
  for (int i = 0; i < rank && used < buf_size; i++) {
    if (dims[i] < 0)
      used += (size_t)snprintf(buf + used, buf_size - used, "%s?", i ? "," : "");
    else
      used +=
          (size_t)snprintf(buf + used, buf_size - used, "%s%lld", i ? "," : "", (long long)dims[i]);
  }
  if (used < buf_size) snprintf(buf + used, buf_size - used, "]");
}

/* Fills one info from its header entry; the data pointer is formed only after every check. */
static vkf_status parse_entry(const vkf_safetensors *st, const cJSON *entry,
                              vkf_safetensors_info *info) {
  const char *path = st->path, *name = entry->string;
  size_t data_size = st->size - st->data_start;
  if (!cJSON_IsObject(entry))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%s\": header entry is not an object",
                           path, name);
  const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(entry, "shape");
  const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(entry, "data_offsets");
  if (!cJSON_IsString(dtype))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%s\": missing or non-string \"dtype\"",
                           path, name);
  if (!dtype_from_name(dtype->valuestring, &info->dtype) ||
      (vkf_safetensors_quant_format(info->dtype) >= 0 && !st->allow_blocks))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%s\": unknown dtype \"%s\"", path, name,
                           dtype->valuestring);
  if (!cJSON_IsArray(shape))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%s\": missing or non-array \"shape\"",
                           path, name);
  int rank = cJSON_GetArraySize(shape);
  if (rank > VKF_SAFETENSORS_MAX_RANK)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: tensor \"%s\": rank %d exceeds the supported maximum of %d", path,
                           name, rank, VKF_SAFETENSORS_MAX_RANK);
  info->rank = rank;
  uint64_t elements = 1;
  int overflow = 0, has_zero = 0;
  int i = 0;
  for (const cJSON *d = shape->child; d; d = d->next, i++) {
    uint64_t dim;
    if (!json_to_u64(d, (uint64_t)INT64_MAX, &dim))
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: tensor \"%s\": shape[%d] is not a non-negative integer", path,
                             name, i);
    info->shape[i] = (int64_t)dim;
    if (dim == 0)
      has_zero = 1;
    else if (elements > UINT64_MAX / dim)
      overflow = 1;
    elements *= dim;
  }
  /* A zero dim makes the product 0 however large the others are (and however they wrapped). */
  if (has_zero) {
    overflow = 0;
    elements = 0;
  }
  size_t esize = dtype_table[info->dtype].size;
  int qf = vkf_safetensors_quant_format(info->dtype);
  vkf_quant_layout ql = vkf_quant_layout_of((vkf_quant_format)(qf < 0 ? 0 : qf));
  if (overflow || elements > (uint64_t)INT64_MAX / (esize ? esize : ql.bytes))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%s\": shape has too many elements", path,
                           name);
  if (qf >= 0 && (rank == 0 || info->shape[rank - 1] % ql.block))
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: tensor \"%s\": %s rows must be whole blocks of %u", path, name,
                           dtype_table[info->dtype].name, ql.block);
  info->element_count = (int64_t)elements;
  /* bytes the shape needs: elements x size, or blocks x block bytes */
  uint64_t need = qf >= 0 ? elements / ql.block * ql.bytes : elements * esize;

  uint64_t begin, end;
  if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: tensor \"%s\": \"data_offsets\" must be an array of 2 integers",
                           path, name);
  if (!json_to_u64(offsets->child, UINT64_MAX, &begin) ||
      !json_to_u64(offsets->child->next, UINT64_MAX, &end))
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: tensor \"%s\": data_offsets are not non-negative integers", path,
                           name);
  if (begin > end)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: tensor \"%s\": data_offsets [%llu, %llu] begin after end", path,
                           name, (unsigned long long)begin, (unsigned long long)end);
  if (end > data_size)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: tensor \"%s\": data_offsets [%llu, %llu] past the end of the data "
                           "section (%zu bytes)",
                           path, name, (unsigned long long)begin, (unsigned long long)end,
                           data_size);
  if (end - begin != need) {
    char sbuf[160];
    format_shape(info->shape, rank, sbuf, sizeof sbuf);
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: tensor \"%s\": %llu data bytes but shape %s of %s needs %llu", path,
                           name, (unsigned long long)(end - begin), sbuf,
                           dtype_table[info->dtype].name, (unsigned long long)need);
  }
  info->file_offset = st->data_start + (size_t)begin;
  info->data_size = (size_t)(end - begin);
  info->data = st->bytes + info->file_offset;
  return VKF_OK;
}

/* Overlap and duplicate checks need the whole table, so they run after every entry parsed. */
static vkf_status check_table(vkf_safetensors *st) {
  qsort(st->tensors, st->count, sizeof *st->tensors, by_offset_cmp);
  const vkf_safetensors_info *widest = NULL; /* the non-empty tensor reaching furthest so far */
  for (size_t i = 0; i < st->count; i++) {
    const vkf_safetensors_info *t = &st->tensors[i];
    if (t->data_size == 0) continue; /* an empty range shares no byte with anything */
    if (widest && t->file_offset < widest->file_offset + widest->data_size) {
      size_t ds = st->data_start;
      return vkf_status_make(
          VKF_STATUS_PARSE, "%s: tensors \"%s\" [%zu, %zu) and \"%s\" [%zu, %zu) overlap", st->path,
          widest->name, widest->file_offset - ds, widest->file_offset - ds + widest->data_size,
          t->name, t->file_offset - ds, t->file_offset - ds + t->data_size);
    }
    if (!widest || t->file_offset + t->data_size > widest->file_offset + widest->data_size)
      widest = t;
  }
  for (size_t i = 0; i < st->count; i++) st->by_name[i] = &st->tensors[i];
  qsort(st->by_name, st->count, sizeof *st->by_name, by_name_cmp);
  for (size_t i = 1; i < st->count; i++) {
    if (strcmp(st->by_name[i - 1]->name, st->by_name[i]->name) == 0)
      return vkf_status_make(VKF_STATUS_PARSE, "%s: duplicate tensor name \"%s\" in the header",
                             st->path, st->by_name[i]->name);
  }
  return VKF_OK;
}

static vkf_status parse_header(vkf_safetensors *st) {
  const char *path = st->path;
  if (st->size == 0) return vkf_status_make(VKF_STATUS_PARSE, "%s: file is empty", path);
  if (st->size < 8)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: truncated: %zu bytes, shorter than the 8-byte header length", path,
                           st->size);
  uint64_t header_size = load_le64(st->bytes);
  if (header_size > st->size - 8)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: header length %llu runs past the end of the file (%zu bytes)", path,
                           (unsigned long long)header_size, st->size);
  st->data_start = 8 + (size_t)header_size;
  const char *text = (const char *)st->bytes + 8;
  const char *parse_end = NULL;
  /* The file is not NUL-terminated: parse with an explicit length, then allow only the trailing
   * spaces that writers use to pad the header to an aligned size. */
  cJSON *root = cJSON_ParseWithLengthOpts(text, (size_t)header_size, &parse_end, 0);
  if (!root) {
    size_t at = parse_end && parse_end >= text ? (size_t)(parse_end - text) : 0;
    return vkf_status_make(VKF_STATUS_PARSE, "%s: header is not valid JSON (near byte %zu of %llu)",
                           path, at, (unsigned long long)header_size);
  }
  vkf_status status = VKF_OK;
  for (const char *p = parse_end; p < text + header_size; p++) {
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
      status = vkf_status_make(VKF_STATUS_PARSE,
                               "%s: header has bytes after its JSON object (at byte %zu)", path,
                               (size_t)(p - text));
      break;
    }
  }
  if (!status && !cJSON_IsObject(root))
    status = vkf_status_make(VKF_STATUS_PARSE, "%s: header is JSON but not an object", path);
  size_t names_size = 0;
  if (!status) {
    for (const cJSON *e = root->child; e; e = e->next) {
      if (strcmp(e->string, "__metadata__") == 0) continue;
      st->count++;
      names_size += strlen(e->string) + 1;
    }
    st->tensors = calloc(st->count ? st->count : 1, sizeof *st->tensors);
    st->by_name = calloc(st->count ? st->count : 1, sizeof *st->by_name);
    st->names = malloc(names_size ? names_size : 1);
    if (!st->tensors || !st->by_name || !st->names)
      status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for %zu tensor entries",
                               path, st->count);
  }
  size_t n = 0, name_at = 0;
  for (const cJSON *e = status ? NULL : root->child; e; e = e->next) {
    if (strcmp(e->string, "__metadata__") == 0) continue;
    vkf_safetensors_info *info = &st->tensors[n++];
    size_t len = strlen(e->string) + 1;
    memcpy(st->names + name_at, e->string, len);
    info->name = st->names + name_at;
    name_at += len;
    status = parse_entry(st, e, info);
    if (status) break;
  }
  cJSON_Delete(root);
  if (!status) status = check_table(st);
  return status;
}

static vkf_status open_memory(const void *bytes, size_t size, const char *name, int allow_blocks,
                              vkf_safetensors **out_st) {
  VKF_ASSERT(out_st && name && (bytes || size == 0));
  *out_st = NULL;
  vkf_safetensors *st = calloc(1, sizeof *st);
  char *path_copy = strdup(name);
  if (!st || !path_copy) {
    free(st);
    free(path_copy);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for the reader", name);
  }
  st->path = path_copy;
  st->bytes = bytes;
  st->size = size;
  st->allow_blocks = allow_blocks;
  vkf_status status = parse_header(st);
  if (status) {
    vkf_safetensors_close(st);
    return status;
  }
  *out_st = st;
  return VKF_OK;
}

vkf_status vkf_safetensors_open_memory(const void *bytes, size_t size, const char *name,
                                       vkf_safetensors **out_st) {
  return open_memory(bytes, size, name, 0, out_st);
}

vkf_status vkf_safetensors_adopt_memory(void *bytes, size_t size, const char *name,
                                        vkf_safetensors **out_st) {
  vkf_status status = open_memory(bytes, size, name, 1, out_st);
  if (status) {
    free(bytes);
    return status;
  }
  (*out_st)->mapped = 2;
  return VKF_OK;
}

vkf_status vkf_safetensors_open(const char *path, vkf_safetensors **out_st) {
  VKF_ASSERT(out_st && path);
  *out_st = NULL;
  /* O_NONBLOCK: a FIFO named like the file must not hang the open (fstat then refuses it). */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    return vkf_status_make(err == ENOENT ? VKF_STATUS_NOT_FOUND : VKF_STATUS_IO,
                           "%s: cannot open: %s", path, strerror(err));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int err = errno;
    close(fd);
    return vkf_status_make(VKF_STATUS_IO, "%s: cannot stat: %s", path, strerror(err));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return vkf_status_make(VKF_STATUS_IO, "%s: not a regular file", path);
  }
  size_t size = (size_t)sb.st_size;
  const uint8_t *map = NULL;
  if (size > 0) {
    void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int err = errno;
      close(fd);
      return vkf_status_make(VKF_STATUS_IO, "%s: mmap of %zu bytes failed: %s", path, size,
                             strerror(err));
    }
    map = m;
  }
  close(fd); /* the mapping keeps the file alive */
  static const uint8_t empty[1];
  vkf_status status = vkf_safetensors_open_memory(map ? map : empty, size, path, out_st);
  if (status) {
    if (map) munmap((void *)map, size);
    return status;
  }
  (*out_st)->mapped = map != NULL;
  return VKF_OK;
}

void vkf_safetensors_close(vkf_safetensors *st) {
  if (!st) return;
  if (st->mapped == 1) munmap((void *)st->bytes, st->size);
  if (st->mapped == 2) free((void *)st->bytes);
  free(st->tensors);
  free(st->by_name);
  free(st->names);
  free(st->path);
  free(st);
}

const char *vkf_safetensors_path(const vkf_safetensors *st) {
  return st->path;
}

size_t vkf_safetensors_count(const vkf_safetensors *st) {
  return st->count;
}

const vkf_safetensors_info *vkf_safetensors_at(const vkf_safetensors *st, size_t index) {
  VKF_ASSERT(index < st->count);
  return &st->tensors[index];
}

const vkf_safetensors_info *vkf_safetensors_find(const vkf_safetensors *st, const char *name) {
  vkf_safetensors_info key = {.name = name};
  const vkf_safetensors_info *key_ptr = &key;
  const vkf_safetensors_info *const *hit =
      bsearch(&key_ptr, st->by_name, st->count, sizeof *st->by_name, by_name_cmp);
  return hit ? *hit : NULL;
}

vkf_status vkf_safetensors_get(const vkf_safetensors *st, const char *name,
                               const vkf_safetensors_info **out_info) {
  *out_info = NULL;
  const vkf_safetensors_info *info = vkf_safetensors_find(st, name);
  if (!info)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "tensor \"%s\" not found in %s", name, st->path);
  *out_info = info;
  return VKF_OK;
}

vkf_status vkf_safetensors_expect(const vkf_safetensors *st, const char *name, int rank,
                                  const int64_t *dims, const vkf_safetensors_info **out_info) {
  VKF_ASSERT(rank >= 0 && rank <= VKF_SAFETENSORS_MAX_RANK && (dims || rank == 0));
  *out_info = NULL;
  const vkf_safetensors_info *info;
  VKF_RETURN_IF_ERROR(vkf_safetensors_get(st, name, &info));
  int match = info->rank == rank;
  for (int i = 0; match && i < rank; i++) match = dims[i] < 0 || dims[i] == info->shape[i];
  if (!match) {
    char have[160], want[160];
    format_shape(info->shape, info->rank, have, sizeof have);
    format_shape(dims, rank, want, sizeof want);
    return vkf_status_make(VKF_STATUS_SHAPE, "tensor \"%s\" has shape %s, expected %s in %s", name,
                           have, want, st->path);
  }
  *out_info = info;
  return VKF_OK;
}

/* One element as a double (exact for every supported type but 64-bit integers beyond 2^53). */
static double load_element(vkf_safetensors_dtype dtype, const uint8_t *p) {
  uint64_t u = 0;
  size_t n = dtype_table[dtype].size;
  for (size_t i = n; i-- > 0;) u = (u << 8) | p[i];
  switch (dtype) {
    case VKF_SAFETENSORS_BOOL:
      return u != 0;
    case VKF_SAFETENSORS_U8:
      return (double)(uint8_t)u;
    case VKF_SAFETENSORS_I8:
      return (double)(int8_t)(uint8_t)u;
    case VKF_SAFETENSORS_U16:
      return (double)(uint16_t)u;
    case VKF_SAFETENSORS_I16:
      return (double)(int16_t)(uint16_t)u;
    case VKF_SAFETENSORS_F16:
      return vkf_half_to_float((uint16_t)u);
    case VKF_SAFETENSORS_BF16:
      return vkf_bf16_to_float((uint16_t)u);
    case VKF_SAFETENSORS_U32:
      return (double)(uint32_t)u;
    case VKF_SAFETENSORS_I32:
      return (double)(int32_t)(uint32_t)u;
    case VKF_SAFETENSORS_F32: {
      uint32_t b = (uint32_t)u;
      float f;
      memcpy(&f, &b, sizeof f);
      return f;
    }
    case VKF_SAFETENSORS_U64:
      return (double)u;
    case VKF_SAFETENSORS_I64:
      return (double)(int64_t)u;
    case VKF_SAFETENSORS_F64: {
      double d;
      memcpy(&d, &u, sizeof d);
      return d;
    }
    default:
      VKF_ASSERT(!"dtype without a conversion");
      return 0.0;
  }
}

static vkf_status check_convertible(const vkf_safetensors *st, const vkf_safetensors_info *info,
                                    size_t out_count, const char *target) {
  VKF_ASSERT(info->dtype >= 0 && info->dtype < VKF_SAFETENSORS_DTYPE_COUNT);
  if (info->dtype == VKF_SAFETENSORS_F8_E4M3 || info->dtype == VKF_SAFETENSORS_F8_E5M2)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: tensor \"%s\": no conversion from %s to %s",
                           st->path, info->name, dtype_table[info->dtype].name, target);
  if (out_count < (size_t)info->element_count)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: tensor \"%s\" has %lld elements but the %s buffer holds %zu",
                           st->path, info->name, (long long)info->element_count, target, out_count);
  return VKF_OK;
}

vkf_status vkf_safetensors_read_f32(const vkf_safetensors *st, const vkf_safetensors_info *info,
                                    size_t out_count, float *out_values) {
  VKF_RETURN_IF_ERROR(check_convertible(st, info, out_count, "F32"));
  const uint8_t *p = info->data;
  int qf = vkf_safetensors_quant_format(info->dtype);
  if (qf >= 0) {
    vkf_quant_dequantize((vkf_quant_format)qf, p, (size_t)info->element_count, out_values);
    return VKF_OK;
  }
  size_t n = (size_t)info->element_count, esize = dtype_table[info->dtype].size;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (info->dtype == VKF_SAFETENSORS_F32) {
    if (info->data_size) memcpy(out_values, p, info->data_size);
    return VKF_OK;
  }
#endif
  if (info->dtype == VKF_SAFETENSORS_F16 || info->dtype == VKF_SAFETENSORS_BF16) {
    float (*convert)(uint16_t) =
        info->dtype == VKF_SAFETENSORS_F16 ? vkf_half_to_float : vkf_bf16_to_float;
    for (size_t i = 0; i < n; i++)
      out_values[i] = convert((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
    return VKF_OK;
  }
  for (size_t i = 0; i < n; i++) out_values[i] = (float)load_element(info->dtype, p + i * esize);
  return VKF_OK;
}

vkf_status vkf_safetensors_read_f16(const vkf_safetensors *st, const vkf_safetensors_info *info,
                                    size_t out_count, uint16_t *out_values) {
  VKF_RETURN_IF_ERROR(check_convertible(st, info, out_count, "F16"));
  const uint8_t *p = info->data;
  int qf = vkf_safetensors_quant_format(info->dtype);
  if (qf >= 0) { /* dequantised in f32 (exact), rounded once */
    float *f = malloc((size_t)info->element_count * sizeof *f + 1);
    if (!f)
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: tensor \"%s\"", st->path, info->name);
    vkf_quant_dequantize((vkf_quant_format)qf, p, (size_t)info->element_count, f);
    for (size_t i = 0; i < (size_t)info->element_count; i++) out_values[i] = vkf_float_to_half(f[i]);
    free(f);
    return VKF_OK;
  }
  size_t n = (size_t)info->element_count, esize = dtype_table[info->dtype].size;
  if (info->dtype == VKF_SAFETENSORS_F16) {
    for (size_t i = 0; i < n; i++) out_values[i] = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
    return VKF_OK;
  }
  /* Through f32: exact for F32/BF16 sources, so the only rounding is the final one. */
  for (size_t i = 0; i < n; i++)
    out_values[i] = vkf_float_to_half((float)load_element(info->dtype, p + i * esize));
  return VKF_OK;
}
