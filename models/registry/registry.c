/* The registry of architectures and the model interface over them: picking an entry from
 * config.json, the declared inputs and outputs, checking host inputs against them, building. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "models/arch/arch_weights.h"
#include "models/formats/gguf.h"
#include "models/formats/json_fields.h"
#include "models/registry/arch_entry.h"
#include "models/registry/model.h"

static const vkf_arch_entry *const k_entries[] = {&vkf_entry_vit,     &vkf_entry_bert,
                                                  &vkf_entry_decoder, &vkf_entry_encdec,
                                                  &vkf_entry_nystromformer, &vkf_entry_bigbird,
                                                   &vkf_entry_longformer,
                                                   &vkf_entry_seq2seq_attention,
                                                   &vkf_entry_reformer,
                                                   &vkf_entry_transfo_xl};
enum { ENTRY_COUNT = sizeof k_entries / sizeof k_entries[0] };

struct vkf_model {
  char *dir;
  const vkf_arch_entry *entry;
  void *impl;
  vkf_model_io inputs[VKF_MODEL_MAX_IO], outputs[VKF_MODEL_MAX_IO];
  uint32_t input_count, output_count;
};

const char *vkf_model_supported(void) {
  static char list[1024];
  if (!list[0]) {
    size_t used = 0;
    for (int e = 0; e < ENTRY_COUNT; e++)
      for (const char *const *a = k_entries[e]->architectures; *a; a++)
        used += (size_t)snprintf(list + used, used < sizeof list ? sizeof list - used : 0, "%s%s",
                                 used ? ", " : "", *a);
  }
  return list;
}

/* config.json as a cJSON tree (bounded, regular-file read; one JSON object). */
static vkf_status read_config(const char *path, cJSON **out_root) {
  *out_root = NULL;
  char *text = NULL;
  size_t size = 0;
  VKF_RETURN_IF_ERROR(vkf_json_read_file(path, &text, &size));
  vkf_status s = vkf_json_parse_object(text, size, path, out_root);
  free(text);
  return s;
}

static int listed(const char *const *names, const char *name) {
  for (; *names; names++)
    if (!strcmp(*names, name)) return 1;
  return 0;
}

/* The entry for config.json: the first listed architecture that an entry knows, else the
 * model_type. */
static vkf_status pick_entry(const char *path, const vkf_arch_entry **out_entry) {
  *out_entry = NULL;
  cJSON *root = NULL;
  VKF_RETURN_IF_ERROR(read_config(path, &root));
  const cJSON *archs = cJSON_GetObjectItemCaseSensitive(root, "architectures");
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "model_type"));
  const char *first = NULL;
  const cJSON *a = NULL;
  const cJSON *list = cJSON_IsArray(archs) ? archs : NULL;
  cJSON_ArrayForEach(a, list) {
    const char *name = cJSON_GetStringValue(a);
    if (!name) continue;
    if (!first) first = name;
    for (int e = 0; e < ENTRY_COUNT && !*out_entry; e++)
      if (listed(k_entries[e]->architectures, name)) *out_entry = k_entries[e];
  }
  for (int e = 0; e < ENTRY_COUNT && !*out_entry && type; e++)
    if (listed(k_entries[e]->model_types, type)) *out_entry = k_entries[e];
  vkf_status s = VKF_OK;
  if (!*out_entry)
    s = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                        "%s: architecture \"%s\" (model_type \"%s\") is not supported; supported: "
                        "%s",
                        path, first ? first : "none given", type ? type : "none given",
                        vkf_model_supported());
  cJSON_Delete(root);
  return s;
}

vkf_status vkf_model_open(const char *model_dir, vkf_model **out_model) {
  *out_model = NULL;
  struct stat sb;
  if (stat(model_dir, &sb) != 0)
    return vkf_status_make(errno == ENOENT ? VKF_STATUS_NOT_FOUND : VKF_STATUS_IO,
                           "%s/config.json: %s (model directory)", model_dir, strerror(errno));
  if (!S_ISDIR(sb.st_mode) && !vkf_gguf_is_file(model_dir))
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "model %s: neither a directory nor a GGUF file", model_dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", model_dir);
  const vkf_arch_entry *entry = NULL;
  VKF_RETURN_IF_ERROR(pick_entry(path, &entry));
  vkf_model *m = calloc(1, sizeof *m);
  if (!m || !(m->dir = strdup(model_dir))) {
    free(m);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "opening %s", model_dir);
  }
  m->entry = entry;
  vkf_status s = vkf_arch_load(entry->loader, model_dir, &m->impl);
  if (s) {
    vkf_model_close(m);
    return s;
  }
  entry->declare(m->impl, m->inputs, &m->input_count, m->outputs, &m->output_count);
  *out_model = m;
  return VKF_OK;
}

void vkf_model_close(vkf_model *m) {
  if (!m) return;
  vkf_arch_unload(m->entry->loader, m->impl);
  free(m->dir);
  free(m);
}

vkf_status vkf_model_quantize(vkf_model *m, const char *format) {
  return vkf_arch_quantize(m->entry->loader, m->impl, format);
}

void vkf_model_quantized(const vkf_model *m, uint32_t out[VKF_DTYPE_COUNT],
                         uint32_t *kept_float) {
  memset(out, 0, VKF_DTYPE_COUNT * sizeof *out);
  *kept_float = 0;
  /* every architecture's files sit where its loader says (arch_loader.h) */
  const vkf_arch_loader *l = m->entry->loader;
  if (l) vkf_arch_files_quantized((const vkf_arch_files *)((const char *)m->impl + l->files_at), out,
                                  kept_float);
}

const char *vkf_model_dir(const vkf_model *m) {
  return m->dir;
}
const char *vkf_model_architecture(const vkf_model *m) {
  const vkf_arch_entry *e = m->entry;
  return e->architecture ? e->architecture(m->impl) : e->architectures[0];
}
void *vkf_model_impl(const vkf_model *m) {
  return m->impl;
}
const vkf_arch_entry *vkf_model_entry(const vkf_model *m) {
  return m->entry;
}
const char *vkf_model_family(const vkf_model *m) {
  return m->entry->family;
}
uint32_t vkf_model_input_count(const vkf_model *m) {
  return m->input_count;
}
const vkf_model_io *vkf_model_input(const vkf_model *m, uint32_t i) {
  return i < m->input_count ? &m->inputs[i] : NULL;
}
uint32_t vkf_model_output_count(const vkf_model *m) {
  return m->output_count;
}
const vkf_model_io *vkf_model_output(const vkf_model *m, uint32_t i) {
  return i < m->output_count ? &m->outputs[i] : NULL;
}

static int find(const vkf_model_io *table, uint32_t count, const char *name) {
  for (uint32_t i = 0; i < count; i++)
    if (!strcmp(table[i].name, name)) return (int)i;
  return -1;
}
int vkf_model_find_input(const vkf_model *m, const char *name) {
  return find(m->inputs, m->input_count, name);
}
int vkf_model_find_output(const vkf_model *m, const char *name) {
  return find(m->outputs, m->output_count, name);
}

/* "input_ids, attention_mask" for messages. */
static const char *names_of(const vkf_model_io *table, uint32_t count, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = 0;
  for (uint32_t i = 0; i < count && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", table[i].name);
  return buf;
}

static vkf_status check_values(const vkf_model_io *io, const vkf_model_array *a) {
  if (!io->value_bound) return VKF_OK;
  int64_t count = 1;
  for (uint32_t d = 0; d < a->rank; d++) count *= a->shape[d];
  for (int64_t i = 0; i < count; i++) {
    int64_t v = a->int64 ? ((const int64_t *)a->data)[i] : ((const int32_t *)a->data)[i];
    if (v < 0 || v >= io->value_bound) {
      int64_t row = a->rank > 1 ? i / a->shape[a->rank - 1] : 0;
      int64_t col = a->rank > 1 ? i % a->shape[a->rank - 1] : i;
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "input %s: value %" PRId64 " at [%" PRId64 ", %" PRId64
                             "] is outside [0, %" PRId64 ")",
                             io->name, v, row, col, io->value_bound);
    }
  }
  return VKF_OK;
}

vkf_status vkf_model_check_inputs(const vkf_model *m, const vkf_model_array *inputs, uint32_t count,
                                  int64_t *out_batch, int64_t *out_seq_len,
                                  int64_t *out_target_len) {
  *out_batch = 0;
  *out_seq_len = 0;
  if (out_target_len) *out_target_len = 0;
  int64_t target = -1;
  const char *target_from = NULL;
  char list[512];
  int seen[VKF_MODEL_MAX_IO] = {0};
  int64_t batch = -1, seq = -1, memory = -1;
  const char *batch_from = NULL, *seq_from = NULL, *memory_from = NULL;
  for (uint32_t k = 0; k < count; k++) {
    const vkf_model_array *a = &inputs[k];
    int i = vkf_model_find_input(m, a->name);
    if (i < 0)
      return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s has no input \"%s\" (inputs: %s)",
                             vkf_model_architecture(m), a->name,
                             names_of(m->inputs, m->input_count, list, sizeof list));
    const vkf_model_io *io = &m->inputs[i];
    if (seen[i]++)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "input %s is given twice", io->name);
    int ok_dtype = io->dtype == VKF_F32 ? (a->dtype == VKF_F32 && !a->int64)
                                        : (a->dtype == VKF_I32 || a->int64);
    if (!ok_dtype)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "input %s: dtype %s, expected %s",
                             io->name,
                             a->int64              ? "int64"
                             : a->dtype == VKF_F32 ? "float32"
                                                   : "int32",
                             io->dtype == VKF_F32 ? "float32" : "int32 or int64");
    char want[64], got[64];
    int64_t shown[VKF_MAX_DIMS];
    for (uint32_t d = 0; d < io->rank; d++) shown[d] = io->shape[d];
    if (a->rank != io->rank)
      return vkf_status_make(VKF_STATUS_SHAPE, "input %s: shape %s, expected rank %u %s", io->name,
                             vkf_shape_format(a->rank, a->shape, got, sizeof got), io->rank,
                             vkf_shape_format(io->rank, shown, want, sizeof want));
    for (uint32_t d = 0; d < io->rank; d++) {
      int64_t v = a->shape[d];
      int is_seq = d == 1 && io->max_seq;
      int is_mem = d == 1 && io->memory;
      if (is_mem) {
        if (memory >= 0 && v != memory)
          return vkf_status_make(VKF_STATUS_SHAPE,
                                 "input %s has %" PRId64 " memory rows but %s has %" PRId64,
                                 io->name, v, memory_from, memory);
        memory = v, memory_from = io->name;
        continue; /* any length, 0 included */
      }
      if (v < 1)
        return vkf_status_make(VKF_STATUS_SHAPE, "input %s: dim %u is %" PRId64 " (empty)",
                               io->name, d, v);
      if (io->shape[d] >= 0 && v != io->shape[d])
        return vkf_status_make(VKF_STATUS_SHAPE, "input %s: shape %s, expected %s (-1: any)",
                               io->name, vkf_shape_format(a->rank, a->shape, got, sizeof got),
                               vkf_shape_format(io->rank, shown, want, sizeof want));
      if (d == io->batch_dim) {
        if (batch >= 0 && v != batch)
          return vkf_status_make(VKF_STATUS_SHAPE,
                                 "input %s has batch %" PRId64 " but %s has %" PRId64, io->name, v,
                                 batch_from, batch);
        batch = v, batch_from = io->name;
      }
      if (is_seq && io->target) {
        if (v > io->max_seq)
          return vkf_status_make(VKF_STATUS_SHAPE,
                                 "input %s: sequence of %" PRId64
                                 " tokens, longer than the model's %" PRId64 " positions",
                                 io->name, v, io->max_seq);
        if (target >= 0 && v != target)
          return vkf_status_make(VKF_STATUS_SHAPE,
                                 "input %s has sequence length %" PRId64 " but %s has %" PRId64,
                                 io->name, v, target_from, target);
        target = v, target_from = io->name;
      } else if (is_seq) {
        if (v > io->max_seq)
          return vkf_status_make(VKF_STATUS_SHAPE,
                                 "input %s: sequence of %" PRId64
                                 " tokens, longer than the model's %" PRId64 " positions",
                                 io->name, v, io->max_seq);
        if (seq >= 0 && v != seq)
          return vkf_status_make(VKF_STATUS_SHAPE,
                                 "input %s has sequence length %" PRId64 " but %s has %" PRId64,
                                 io->name, v, seq_from, seq);
        seq = v, seq_from = io->name;
      }
    }
    VKF_RETURN_IF_ERROR(check_values(io, a));
  }
  for (uint32_t i = 0; i < m->input_count; i++)
    if (m->inputs[i].required && !seen[i])
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s needs input %s",
                             vkf_model_architecture(m), m->inputs[i].name);
  *out_batch = batch > 0 ? batch : 1;
  *out_seq_len = seq > 0 ? seq : 0;
  if (out_target_len) *out_target_len = target > 0 ? target : 0;
  return VKF_OK;
}

int64_t vkf_model_memory_len(const vkf_model *m, const vkf_model_array *inputs, uint32_t count) {
  for (uint32_t i = 0; i < m->input_count; i++) {
    if (!m->inputs[i].memory) continue;
    for (uint32_t k = 0; k < count; k++)
      if (!strcmp(inputs[k].name, m->inputs[i].name) && inputs[k].rank > 1)
        return inputs[k].shape[1];
    return m->inputs[i].memory_default;
  }
  return 0;
}

vkf_status vkf_model_build(vkf_model *m, const vkf_model_build_options *options,
                           vkf_model_graph *out) {
  memset(out, 0, sizeof *out);
  vkf_model_build_options o = options ? *options : (vkf_model_build_options){0};
  int want[VKF_MODEL_MAX_IO] = {0};
  if (!o.outputs) {
    for (uint32_t i = 0; i < m->output_count; i++) want[i] = 1;
  } else {
    char list[512];
    for (uint32_t k = 0; k < o.output_count; k++) {
      int i = vkf_model_find_output(m, o.outputs[k]);
      if (i < 0)
        return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s has no output \"%s\" (outputs: %s)",
                               vkf_model_architecture(m), o.outputs[k],
                               names_of(m->outputs, m->output_count, list, sizeof list));
      want[i] = 1;
    }
  }
  if (o.attentions && !vkf_model_attention_layers(m))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s (%s) has no attention probabilities to output (output_attentions: "
                           "ViT, DeiT and BERT checkpoints)",
                           vkf_model_architecture(m), m->dir);
  /* No length asked for (vkf dump): the one the checkpoint fixes, else up to 128. */
  if (!o.seq_len && m->input_count && m->inputs[0].exact_seq) o.seq_len = m->inputs[0].exact_seq;
  if (!o.seq_len && m->input_count && m->inputs[0].max_seq)
    o.seq_len = m->inputs[0].max_seq < 128 ? m->inputs[0].max_seq : 128;
  VKF_RETURN_IF_ERROR(m->entry->build(m->impl, &o, want, out));
  if (!out->input_count) out->input_count = m->input_count;
  return VKF_OK;
}

int64_t vkf_model_attention_layers(const vkf_model *m) {
  return m->entry->attention_layers ? m->entry->attention_layers(m->impl) : 0;
}

vkf_status vkf_model_derive(const vkf_model *m, const int32_t *const *inputs, int64_t batch,
                            int64_t seq_len, vkf_model_derived *out) {
  memset(out, 0, sizeof *out);
  if (!m->entry->derive) return VKF_OK;
  vkf_status st = m->entry->derive(m->impl, inputs, batch, seq_len, out);
  if (st) vkf_model_derived_release(out);
  return st;
}

void vkf_model_derived_release(vkf_model_derived *d) {
  if (!d) return;
  for (uint32_t i = 0; i < VKF_MODEL_MAX_DERIVED; i++) free(d->data[i]);
  memset(d, 0, sizeof *d);
}
