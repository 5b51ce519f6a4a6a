/* The checkpoint reader: choosing model.safetensors or its index, validating the index, opening
 * each shard once, and one name-sorted table over the tensors of every shard. */
#include "models/formats/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "models/formats/file_read.h"
#include "models/formats/json_fields.h"

#define SINGLE_FILE_NAME "model.safetensors"
#define INDEX_FILE_NAME "model.safetensors.index.json"

typedef struct entry {
  const vkf_safetensors_info *info;
  size_t file; /* index into files */
} entry;

struct vkf_checkpoint {
  char *path;
  vkf_safetensors **files; /* strcmp order of their file names */
  size_t file_count;
  size_t count;
  const vkf_safetensors_info **all; /* file by file, each file's in offset order */
  entry *by_name;                   /* strcmp order of the tensor names */
};

/* "dir/name" in a new buffer, or NULL when out of memory; "" stands for the current folder. */
static char *join_path(const char *dir, const char *name) {
  if (!dir[0]) dir = ".";
  size_t dir_len = strlen(dir), name_len = strlen(name);
  int slash = dir[dir_len - 1] != '/';
  char *path = malloc(dir_len + (size_t)slash + name_len + 1);
  if (!path) return NULL;
  memcpy(path, dir, dir_len);
  if (slash) path[dir_len] = '/';
  memcpy(path + dir_len + (size_t)slash, name, name_len + 1);
  return path;
}

/* A shard must be a plain file name inside the model folder: no path separator and no ".." can
 * reach outside it, and the length is bounded before it is joined to the folder. */
static vkf_status check_shard_name(const char *path, const cJSON *item) {
  const char *tensor = item->string;
  if (!cJSON_IsString(item))
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: weight_map[\"%s\"] is not a string (a shard file name)", path,
                           tensor);
  const char *name = item->valuestring;
  size_t len = strlen(name);
  if (len == 0)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: weight_map[\"%s\"] is an empty shard name", path,
                           tensor);
  if (len > VKF_CHECKPOINT_MAX_SHARD_NAME)
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: weight_map[\"%s\"] is a shard name of %zu bytes, more than %d",
                           path, tensor, len, VKF_CHECKPOINT_MAX_SHARD_NAME);
  if (strchr(name, '/') || strstr(name, ".."))
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: weight_map[\"%s\"] is \"%s\": a shard must be a file name in the "
                           "model folder, without '/' or \"..\"",
                           path, tensor, name);
  return VKF_OK;
}

static int str_ptr_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int str_key_cmp(const void *key, const void *elem) {
  return strcmp(key, *(const char *const *)elem);
}

static int entry_cmp(const void *a, const void *b) {
  const entry *x = a, *y = b;
  int c = strcmp(x->info->name, y->info->name);
  if (c) return c;
  return x->file < y->file ? -1 : x->file > y->file;
}

static int entry_key_cmp(const void *key, const void *elem) {
  return strcmp(key, ((const entry *)elem)->info->name);
}

/* Fills `all` and `by_name` from the open files and refuses a tensor held by two of them. */
static vkf_status build_tables(vkf_checkpoint *ck) {
  size_t count = 0;
  for (size_t f = 0; f < ck->file_count; f++) {
    size_t n = vkf_safetensors_count(ck->files[f]);
    if (n > SIZE_MAX / sizeof(entry) - count)
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: too many tensors", ck->path);
    count += n;
  }
  ck->all = calloc(count ? count : 1, sizeof *ck->all);
  ck->by_name = calloc(count ? count : 1, sizeof *ck->by_name);
  if (!ck->all || !ck->by_name)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for %zu tensor entries",
                           ck->path, count);
  size_t at = 0;
  for (size_t f = 0; f < ck->file_count; f++) {
    for (size_t i = 0, n = vkf_safetensors_count(ck->files[f]); i < n; i++, at++) {
      ck->all[at] = vkf_safetensors_at(ck->files[f], i);
      ck->by_name[at] = (entry){ck->all[at], f};
    }
  }
  ck->count = count;
  qsort(ck->by_name, count, sizeof *ck->by_name, entry_cmp);
  for (size_t i = 1; i < count; i++) {
    const entry *a = &ck->by_name[i - 1], *b = &ck->by_name[i];
    if (strcmp(a->info->name, b->info->name) == 0)
      return vkf_status_make(VKF_STATUS_PARSE, "%s: tensor \"%s\" is in both %s and %s", ck->path,
                             a->info->name, vkf_safetensors_path(ck->files[a->file]),
                             vkf_safetensors_path(ck->files[b->file]));
  }
  return VKF_OK;
}

/* Validates the index in `root`, opens every shard it names and checks each mapping. */
static vkf_status open_shards(vkf_checkpoint *ck, const char *model_dir, const cJSON *root) {
  const char *path = ck->path;
  const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
  if (!map) return vkf_status_make(VKF_STATUS_PARSE, "%s: no \"weight_map\"", path);
  if (!cJSON_IsObject(map))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: \"weight_map\" is not an object", path);
  size_t n = 0;
  for (const cJSON *e = map->child; e; e = e->next) {
    VKF_RETURN_IF_ERROR(check_shard_name(path, e));
    n++;
  }
  if (n == 0) return vkf_status_make(VKF_STATUS_PARSE, "%s: \"weight_map\" is empty", path);

  /* Distinct shard names, sorted; they point into `root`, which outlives this function's use. */
  const char **names = malloc(n * sizeof *names);
  if (!names)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for %zu entries", path, n);
  size_t k = 0;
  for (const cJSON *e = map->child; e; e = e->next) names[k++] = e->valuestring;
  qsort(names, n, sizeof *names, str_ptr_cmp);
  size_t distinct = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || strcmp(names[i], names[distinct - 1]) != 0) names[distinct++] = names[i];
  vkf_status status = VKF_OK;
  if (distinct > VKF_CHECKPOINT_MAX_SHARDS)
    status = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: names %zu shard files, more than %d",
                             path, distinct, VKF_CHECKPOINT_MAX_SHARDS);
  if (!status && !(ck->files = calloc(distinct, sizeof *ck->files)))
    status =
        vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for %zu shards", path, distinct);
  for (size_t i = 0; !status && i < distinct; i++) {
    char *shard_path = join_path(model_dir, names[i]);
    if (!shard_path) {
      status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for a path", path);
      break;
    }
    status = vkf_safetensors_open(shard_path, &ck->files[i]);
    free(shard_path);
    if (status)
      status = vkf_status_annotate(status, "%s: ", path);
    else
      ck->file_count = i + 1;
  }
  /* Every mapping must point at a shard that really holds the tensor. */
  for (const cJSON *e = status ? NULL : map->child; e; e = e->next) {
    const char **hit = bsearch(e->valuestring, names, distinct, sizeof *names, str_key_cmp);
    VKF_ASSERT(hit);
    if (!vkf_safetensors_find(ck->files[hit - names], e->string))
      status = vkf_status_make(VKF_STATUS_PARSE,
                               "%s: tensor \"%s\": the index maps it to %s but %s lacks it", path,
                               e->string, e->valuestring, e->valuestring);
    if (status) break;
  }
  free(names);
  return status;
}

static vkf_checkpoint *checkpoint_new(const char *path) {
  vkf_checkpoint *ck = calloc(1, sizeof *ck);
  if (ck && !(ck->path = strdup(path))) {
    free(ck);
    ck = NULL;
  }
  return ck;
}

static vkf_status open_index(const char *model_dir, const char *index_path, const char *text,
                             size_t size, vkf_checkpoint **out_checkpoint) {
  cJSON *root = NULL;
  VKF_RETURN_IF_ERROR(vkf_json_parse_object(text, size, index_path, &root));
  vkf_checkpoint *ck = checkpoint_new(index_path);
  vkf_status status =
      ck ? open_shards(ck, model_dir, root)
         : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for the reader", index_path);
  cJSON_Delete(root);
  if (!status) status = build_tables(ck);
  if (status) {
    vkf_checkpoint_close(ck);
    return status;
  }
  *out_checkpoint = ck;
  return VKF_OK;
}

/* A PyTorch weight file in `dir`: pytorch_model.bin, else the first file named .bin, .pt, .pth or
 * .ckpt; its name is copied into `out`; false when there is none. Only for the NOT_FOUND message.
 */
static int find_torch_weights(const char *dir, char *out, size_t out_size) {
  static const char *const exts[] = {".bin", ".pt", ".pth", ".ckpt"};
  struct stat sb;
  char *preferred = join_path(dir, "pytorch_model.bin");
  int found = preferred && stat(preferred, &sb) == 0;
  free(preferred);
  if (found) {
    snprintf(out, out_size, "pytorch_model.bin");
    return 1;
  }
  DIR *d = opendir(dir);
  if (!d) return 0;
  for (struct dirent *e; !found && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    for (size_t i = 0; i < sizeof exts / sizeof exts[0] && !found; i++) {
      size_t m = strlen(exts[i]);
      if (n > m && !strcmp(e->d_name + n - m, exts[i])) {
        snprintf(out, out_size, "%s", e->d_name);
        found = 1;
      }
    }
  }
  closedir(d);
  return found;
}

vkf_status vkf_checkpoint_open(const char *model_dir, vkf_checkpoint **out_checkpoint) {
  VKF_ASSERT(model_dir && out_checkpoint);
  *out_checkpoint = NULL;
  char *single = join_path(model_dir, SINGLE_FILE_NAME);
  char *index = join_path(model_dir, INDEX_FILE_NAME);
  vkf_status status = VKF_OK;
  if (!single || !index) {
    status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for a path", model_dir);
  } else {
    vkf_safetensors *st = NULL;
    status = vkf_safetensors_open(single, &st);
    if (!status) {
      status = vkf_checkpoint_from_file(st, out_checkpoint);
    } else if (vkf_status_code_of(status) == VKF_STATUS_NOT_FOUND) {
      /* Only a missing model.safetensors sends us to the index; a broken one is its own error. */
      vkf_status_free(status);
      char *text = NULL;
      size_t size = 0;
      status = vkf_file_read_bounded(index, VKF_CHECKPOINT_MAX_INDEX_SIZE, "an index", &text, &size);
      if (vkf_status_code_of(status) == VKF_STATUS_NOT_FOUND) {
        vkf_status_free(status);
        char torch[256];
        if (find_torch_weights(model_dir, torch, sizeof torch))
          status = vkf_status_make(
              VKF_STATUS_NOT_FOUND,
              "neither %s nor %s exists; %s/%s is PyTorch weights, but only safetensors is read: "
              "convert every tensor (task heads included) with python -c \"import torch; "
              "from safetensors.torch import save_file; sd = torch.load('%s/%s', "
              "map_location='cpu'); save_file({k: v.clone().contiguous() for k, v in sd.items()}, "
              "'%s')\"",
              single, index, model_dir, torch, model_dir, torch, single);
        else
          status = vkf_status_make(VKF_STATUS_NOT_FOUND, "neither %s nor %s exists", single, index);
      } else if (!status) {
        status = open_index(model_dir, index, text, size, out_checkpoint);
      }
      free(text);
    }
  }
  free(single);
  free(index);
  return status;
}

vkf_status vkf_checkpoint_from_file(vkf_safetensors *st, vkf_checkpoint **out_checkpoint) {
  VKF_ASSERT(st && out_checkpoint);
  *out_checkpoint = NULL;
  vkf_checkpoint *ck = checkpoint_new(vkf_safetensors_path(st));
  if (ck) ck->files = calloc(1, sizeof *ck->files);
  if (!ck || !ck->files) {
    vkf_status status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory for the reader",
                                        vkf_safetensors_path(st));
    vkf_safetensors_close(st);
    vkf_checkpoint_close(ck);
    return status;
  }
  ck->files[0] = st;
  ck->file_count = 1;
  vkf_status status = build_tables(ck);
  if (status) {
    vkf_checkpoint_close(ck);
    return status;
  }
  *out_checkpoint = ck;
  return VKF_OK;
}

void vkf_checkpoint_close(vkf_checkpoint *ck) {
  if (!ck) return;
  for (size_t f = 0; f < ck->file_count; f++) vkf_safetensors_close(ck->files[f]);
  free(ck->files);
  free(ck->all);
  free(ck->by_name);
  free(ck->path);
  free(ck);
}

const char *vkf_checkpoint_path(const vkf_checkpoint *ck) {
  return ck->path;
}

size_t vkf_checkpoint_count(const vkf_checkpoint *ck) {
  return ck->count;
}

const vkf_safetensors_info *vkf_checkpoint_at(const vkf_checkpoint *ck, size_t index) {
  VKF_ASSERT(index < ck->count);
  return ck->all[index];
}

static const entry *find_entry(const vkf_checkpoint *ck, const char *name) {
  return bsearch(name, ck->by_name, ck->count, sizeof *ck->by_name, entry_key_cmp);
}

const vkf_safetensors_info *vkf_checkpoint_find(const vkf_checkpoint *ck, const char *name) {
  const entry *e = find_entry(ck, name);
  return e ? e->info : NULL;
}

const vkf_safetensors *vkf_checkpoint_file_of(const vkf_checkpoint *ck,
                                              const vkf_safetensors_info *info) {
  /* By name, then by identity: an info of another handle with the same name is not ours. */
  const entry *e = info ? find_entry(ck, info->name) : NULL;
  return e && e->info == info ? ck->files[e->file] : NULL;
}

size_t vkf_checkpoint_file_count(const vkf_checkpoint *ck) {
  return ck->file_count;
}

const vkf_safetensors *vkf_checkpoint_file_at(const vkf_checkpoint *ck, size_t index) {
  VKF_ASSERT(index < ck->file_count);
  return ck->files[index];
}

vkf_status vkf_checkpoint_expect(const vkf_checkpoint *ck, const char *name, int rank,
                                 const int64_t *dims, const vkf_safetensors_info **out_info) {
  VKF_ASSERT(out_info);
  *out_info = NULL;
  const entry *e = find_entry(ck, name);
  if (!e)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "tensor \"%s\" not found in %s", name, ck->path);
  /* The shard's own check, so a shape message names the file that holds the tensor. */
  return vkf_safetensors_expect(ck->files[e->file], name, rank, dims, out_info);
}

vkf_status vkf_checkpoint_read_f32(const vkf_checkpoint *ck, const vkf_safetensors_info *info,
                                   size_t out_count, float *out_values) {
  const vkf_safetensors *st = vkf_checkpoint_file_of(ck, info);
  VKF_ASSERT(st);
  return vkf_safetensors_read_f32(st, info, out_count, out_values);
}

vkf_status vkf_checkpoint_read_f16(const vkf_checkpoint *ck, const vkf_safetensors_info *info,
                                   size_t out_count, uint16_t *out_values) {
  const vkf_safetensors *st = vkf_checkpoint_file_of(ck, info);
  VKF_ASSERT(st);
  return vkf_safetensors_read_f16(st, info, out_count, out_values);
}
