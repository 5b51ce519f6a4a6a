/* vkf forward: any supported checkpoint on named inputs from .npy files, its named outputs written
 * as float32 .npy; --list prints the declared inputs and outputs. Any batch: runs split to fit the
 * device (runtime/model_batch.h). VKF_CHECK=1 compares every node with the interpreter. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/npy.h"
#include "models/registry/model.h"
#include "runtime/model_forward.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"
#include "tools/vkf/quantize_note.h"

enum { FORWARD_MAX_ARGS = 16 };

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: vkf forward --model DIR [--in NAME=FILE.npy]... --out NAME=FILE.npy... [--fp16]\n"
      "                   [--quantize FORMAT] [--device N|NAME]\n"
      "       vkf forward --model DIR --list\n"
      "  --model DIR  a Hugging Face checkpoint folder (config.json + model.safetensors) of a\n"
      "               supported architecture: %s\n"
      "  --in         a named input, batch first (ids and masks int32 or int64, images float32);\n"
      "               optional inputs left out take Hugging Face's defaults\n"
      "  --out        a named output to compute, written as float32\n"
      "  --list       print the checkpoint's inputs and outputs with their shapes, and its tasks\n"
      "  --fp16       f16 weights and activations (inputs and outputs stay 32-bit)\n"
      "  --quantize F the linear weights quantised at load into ggml's blocks as llama-quantize\n"
      "               does: q8_0, q4_0, q4_1, q5_0, q5_1 or q4_k (docs/models.md)\n"
      "  --device N|NAME  Vulkan device by index or name (default: VKF_DEVICE, else the best)\n",
      vkf_model_supported());
}

typedef struct named_path {
  const char *name; /* points into argv (the '=' replaced) */
  const char *path;
} named_path;

static int parse_named(char *arg, named_path *out) {
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) return 0;
  *eq = 0;
  out->name = arg;
  out->path = eq + 1;
  return 1;
}

/* "[batch, seq<=512, 384]". Only dim 1 of target I/O is the target sequence: any other free dim
 * is the source's (the Bahdanau attention_weights [batch, target, seq]), as vkf_rt_forward
 * resolves them. */
static void print_shape(const vkf_model_io *io) {
  printf("[");
  for (uint32_t d = 0; d < io->rank; d++) {
    const char *seq = io->target && d == 1 ? "target" : "seq";
    if (d) printf(", ");
    if (io->shape[d] >= 0)
      printf("%" PRId64, io->shape[d]);
    else if (d == (io->batch_dim ? io->batch_dim : io->time_major ? 1 : 0))
      printf("batch");
    else if (d == 1 && io->memory)
      printf("memory");
    else if (io->exact_seq)
      printf("%s=%" PRId64, seq, io->exact_seq);
    else if (io->max_seq)
      printf("%s<=%" PRId64, seq, io->max_seq);
    else
      printf("%s", seq);
  }
  printf("]");
}

static void list(const vkf_model *m) {
  printf("%s (%s)\n", vkf_model_architecture(m), vkf_model_dir(m));
  for (uint32_t i = 0; i < vkf_model_input_count(m); i++) {
    const vkf_model_io *io = vkf_model_input(m, i);
    printf("input   %-20s %-8s ", io->name, io->dtype == VKF_F32 ? "float32" : "int");
    print_shape(io);
    if (io->required)
      printf("  required");
    else if (io->target) /* an absent target input is not filled: the encoder runs alone */
      printf("  optional (absent: the encoder runs alone)");
    else if (io->fill_note)
      printf("  optional (default: %s)", io->fill_note);
    else
      printf("  optional (default %d)", io->fill);
    if (io->value_bound) printf("  values in [0, %" PRId64 ")", io->value_bound);
    printf("\n");
  }
  for (uint32_t i = 0; i < vkf_model_output_count(m); i++) {
    const vkf_model_io *io = vkf_model_output(m, i);
    printf("output  %-20s %-8s ", io->name, "float32");
    print_shape(io);
    printf("\n");
  }
  unsigned tasks = vkf_model_tasks(m);
  printf("tasks  ");
  for (unsigned t = 1, first = 1; t & VKF_TASK_ALL; t <<= 1)
    if (tasks & t) printf("%s %s", first ? "" : ",", vkf_model_task_name(t)), first = 0;
  printf("\n");
}

/* Loads every --in file as a model array (f16 files are refused: inputs are 32-bit). */
static vkf_status load_inputs(const named_path *in, int count, vkf_npy_array *arrays,
                              vkf_model_array *out) {
  for (int i = 0; i < count; i++) {
    VKF_RETURN_IF_ERROR(vkf_npy_load(in[i].path, &arrays[i]));
    const vkf_npy_array *a = &arrays[i];
    if (a->dtype == VKF_NPY_F16)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "input %s (%s): float16 data; inputs are float32 or int32/int64",
                             in[i].name, in[i].path);
    out[i] = (vkf_model_array){.name = in[i].name,
                               .dtype = a->dtype == VKF_NPY_F32 ? VKF_F32 : VKF_I32,
                               .int64 = a->dtype == VKF_NPY_I64,
                               .rank = (uint32_t)a->rank,
                               .data = a->data};
    for (int d = 0; d < a->rank; d++) out[i].shape[d] = a->shape[d];
  }
  return VKF_OK;
}

/* Writes every requested output as float32 .npy. */
static vkf_status write_outputs(const vkf_rt_forward *f, const named_path *out, int count) {
  for (int k = 0; k < count; k++) {
    uint32_t rank = 0;
    int64_t shape[VKF_MAX_DIMS];
    const float *data = vkf_rt_forward_output(f, (uint32_t)k, &rank, shape);
    VKF_RETURN_IF_ERROR(vkf_npy_save(out[k].path, VKF_NPY_F32, (int)rank, shape, data));
  }
  return VKF_OK;
}

static vkf_status run(const char *model_dir, named_path *in, int in_count, named_path *out,
                      int out_count, int do_list, vkf_dtype dtype, const char *quantize,
                      const char *device) {
  vkf_model *m = NULL;
  VKF_RETURN_IF_ERROR(vkf_model_open(model_dir, &m));
  vkf_status qs = quantize ? vkf_model_quantize(m, quantize) : VKF_OK;
  if (qs) {
    vkf_model_close(m);
    return qs;
  }
  if (do_list) {
    list(m);
    vkf_model_close(m);
    return VKF_OK;
  }
  vkf_npy_array arrays[FORWARD_MAX_ARGS] = {0};
  vkf_model_array given[FORWARD_MAX_ARGS] = {0};
  const char *names[FORWARD_MAX_ARGS];
  for (int k = 0; k < out_count; k++) names[k] = out[k].name;
  vkf_cli_device dev = {0};
  vkf_rt_forward f = {0};
  vkf_status st = load_inputs(in, in_count, arrays, given);
  if (!st)
    st =
        vkf_rt_forward_prepare(&f, m, dtype, given, (uint32_t)in_count, names, (uint32_t)out_count);
  if (!st) st = vkf_cli_device_open(device, &dev);
  if (!st) st = vkf_rt_forward_run(&f, "vkf forward", dev.device);
  if (!st) st = write_outputs(&f, out, out_count);
  if (!st) vkf_cli_quantize_note("vkf forward", m, quantize);
  int validation = vkf_cli_device_close(&dev);
  vkf_rt_forward_release(&f);
  for (int i = 0; i < in_count; i++) vkf_npy_array_release(&arrays[i]);
  vkf_model_close(m);
  if (!st && validation)
    st = vkf_status_make(VKF_STATUS_INTERNAL, "the validation layer reported messages");
  return st;
}

int vkf_cli_forward(int argc, char **argv) {
  const char *model_dir = NULL, *device = NULL, *quantize = NULL;
  named_path in[FORWARD_MAX_ARGS], out[FORWARD_MAX_ARGS];
  int in_count = 0, out_count = 0, do_list = 0;
  vkf_dtype dtype = VKF_F32;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (vkf_cli_is_help(a)) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--model") && has_value) {
      model_dir = argv[++i];
    } else if (!strcmp(a, "--device") && has_value) {
      device = argv[++i];
    } else if (!strcmp(a, "--quantize") && has_value && vkf_cli_quantize_ok(argv[i + 1])) {
      quantize = argv[++i];
    } else if ((!strcmp(a, "--in") || !strcmp(a, "--out")) && has_value) {
      int is_in = !strcmp(a, "--in");
      int *count = is_in ? &in_count : &out_count;
      if (*count == FORWARD_MAX_ARGS) {
        fprintf(stderr, "vkf forward: at most %d %s arguments\n", FORWARD_MAX_ARGS, a);
        return 2;
      }
      if (!parse_named(argv[++i], is_in ? &in[*count] : &out[*count])) {
        fprintf(stderr, "vkf forward: %s takes NAME=FILE.npy, got \"%s\"\n", a, argv[i]);
        return 2;
      }
      ++*count;
    } else if (!strcmp(a, "--list")) {
      do_list = 1;
    } else if (!strcmp(a, "--fp16")) {
      dtype = VKF_F16;
    } else {
      return vkf_cli_bad_arg("vkf forward", usage, argc, argv, i);
    }
  }
  if (!model_dir || (!do_list && out_count == 0))
    return vkf_cli_usage_error(
        "vkf forward", "%s",
        !model_dir ? "--model DIR is required" : "name at least one --out NAME=FILE.npy");
  for (int k = 0; k < out_count; k++)
    for (int j = 0; j < k; j++)
      if (!strcmp(out[j].name, out[k].name)) {
        fprintf(stderr, "vkf forward: output %s is named twice\n", out[k].name);
        return 2;
      }
  /* One file per output, and never an input's: the second write would replace the first. */
  for (int k = 0; k < out_count; k++) {
    for (int j = 0; j < k; j++)
      if (!strcmp(out[j].path, out[k].path))
        return vkf_cli_usage_error("vkf forward", "outputs %s and %s both go to %s", out[j].name,
                                   out[k].name, out[k].path);
    for (int j = 0; j < in_count; j++)
      if (!strcmp(in[j].path, out[k].path))
        return vkf_cli_usage_error("vkf forward", "output %s would overwrite input %s (%s)",
                                   out[k].name, in[j].name, out[k].path);
  }
  vkf_status st = run(model_dir, in, in_count, out, out_count, do_list, dtype, quantize, device);
  return st ? vkf_cli_fail(st) : 0;
}
