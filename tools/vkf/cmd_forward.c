/* vkf forward: any supported checkpoint on named inputs from .npy files, its named outputs written
 * as float32 .npy; --list prints the declared inputs and outputs. Any batch: runs split to fit the
 * device (tools/vkf/batch_cli.h). VKF_CHECK=1 compares every node with the interpreter. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/npy.h"
#include "models/registry/model.h"
#include "tools/vkf/batch_cli.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"

enum { FORWARD_MAX_ARGS = 16 };

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: vkf forward --model DIR [--in NAME=FILE.npy]... --out NAME=FILE.npy... [--fp16]\n"
      "                   [--device N|NAME]\n"
      "       vkf forward --model DIR --list\n"
      "  --model DIR  a Hugging Face checkpoint folder (config.json + model.safetensors) of a\n"
      "               supported architecture: %s\n"
      "  --in         a named input, batch first (ids and masks int32 or int64, images float32);\n"
      "               optional inputs left out take Hugging Face's defaults\n"
      "  --out        a named output to compute, written as float32\n"
      "  --list       print the checkpoint's inputs and outputs with their shapes\n"
      "  --fp16       f16 weights and activations (inputs and outputs stay 32-bit)\n"
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

/* "[batch, seq<=512, 384]" */
static void print_shape(const vkf_model_io *io) {
  printf("[");
  for (uint32_t d = 0; d < io->rank; d++) {
    if (d) printf(", ");
    if (io->shape[d] >= 0)
      printf("%" PRId64, io->shape[d]);
    else if (d == 0)
      printf("batch");
    else
      io->max_seq ? printf("seq<=%" PRId64, io->max_seq) : printf("seq");
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

/* The caller's dims: the batch, the (source) sequence and an encoder–decoder's target sequence. */
typedef struct dims {
  int64_t batch, seq, target;
} dims;

/* A declared input's or output's shape with the caller's dims resolved (dim 0 the batch, any
 * other -1 the sequence, or the target sequence for target I/O); returns its element count. */
static size_t resolved_shape(const vkf_model_io *io, dims z, int64_t *shape) {
  size_t count = 1;
  for (uint32_t d = 0; d < io->rank; d++) {
    shape[d] = io->shape[d] >= 0 ? io->shape[d] : d == 0 ? z.batch : io->target ? z.target : z.seq;
    count *= (size_t)shape[d];
  }
  return count;
}

/* The whole batch of every declared input: given 32-bit data as it is, int64 ids narrowed (the
 * values were range-checked), absent optional inputs filled with their default. Narrowed and
 * filled arrays are allocated into owned[i]. */
static vkf_status gather_inputs(const vkf_model *m, dims z, const vkf_model_array *given,
                                int given_count, vkf_batch_input *out, void **owned) {
  for (uint32_t i = 0; i < vkf_model_input_count(m); i++) {
    const vkf_model_io *io = vkf_model_input(m, i);
    if (io->target && !z.target) continue; /* absent decoder inputs: the encoder alone */
    int64_t shape[VKF_MAX_DIMS];
    size_t count = resolved_shape(io, z, shape);
    const vkf_model_array *a = NULL;
    for (int k = 0; k < given_count; k++)
      if (!strcmp(given[k].name, io->name)) a = &given[k];
    out[i].size = count * 4; /* i32 or f32 */
    if (a && !a->int64) {
      out[i].data = a->data;
      continue;
    }
    int32_t *v = malloc(count * sizeof *v + 1);
    if (!v) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "input %s", io->name);
    for (size_t j = 0; j < count; j++) v[j] = a ? (int32_t)((const int64_t *)a->data)[j] : io->fill;
    owned[i] = v;
    out[i].data = v;
  }
  return VKF_OK;
}

/* The inputs the model derives from the values of the declared ones (vkf_model_derive; NULL for
 * those not given) go into the slots after the declared inputs. */
static vkf_status derive_inputs(const vkf_model *m, dims z, const vkf_model_array *given,
                                int given_count, vkf_batch_input *inputs, vkf_model_derived *out) {
  uint32_t declared = vkf_model_input_count(m);
  const int32_t *data[VKF_MODEL_MAX_IO] = {0};
  for (int k = 0; k < given_count; k++) {
    int i = vkf_model_find_input(m, given[k].name);
    if (i >= 0) data[i] = inputs[i].data;
  }
  VKF_RETURN_IF_ERROR(vkf_model_derive(m, data, z.batch, z.seq, out));
  if (declared + out->count > VKF_MODEL_MAX_IO)
    return vkf_status_make(VKF_STATUS_INTERNAL, "%u inputs, more than %d", declared + out->count,
                           VKF_MODEL_MAX_IO);
  for (uint32_t k = 0; k < out->count; k++)
    inputs[declared + k] = (vkf_batch_input){out->data[k], out->size[k]};
  return VKF_OK;
}

/* Host arrays for the requested outputs (others stay NULL: not read). */
static vkf_status alloc_outputs(const vkf_model *m, dims z, const named_path *out, int count,
                                vkf_batch_output *arrays) {
  for (int k = 0; k < count; k++) {
    int i = vkf_model_find_output(m, out[k].name);
    int64_t shape[VKF_MAX_DIMS];
    arrays[i].size = resolved_shape(vkf_model_output(m, (uint32_t)i), z, shape) * 4;
    arrays[i].data = malloc(arrays[i].size + 1);
    if (!arrays[i].data) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "output %s", out[k].name);
  }
  return VKF_OK;
}

static vkf_status write_outputs(const vkf_model *m, dims z, const vkf_batch_output *arrays,
                                const named_path *out, int count) {
  for (int k = 0; k < count; k++) {
    int i = vkf_model_find_output(m, out[k].name);
    const vkf_model_io *io = vkf_model_output(m, (uint32_t)i);
    int64_t shape[VKF_MAX_DIMS];
    resolved_shape(io, z, shape);
    VKF_RETURN_IF_ERROR(
        vkf_npy_save(out[k].path, VKF_NPY_F32, (int)io->rank, shape, arrays[i].data));
  }
  return VKF_OK;
}

static vkf_status run(const char *model_dir, named_path *in, int in_count, named_path *out,
                      int out_count, int do_list, vkf_dtype dtype, const char *device) {
  vkf_model *m = NULL;
  VKF_RETURN_IF_ERROR(vkf_model_open(model_dir, &m));
  if (do_list) {
    list(m);
    vkf_model_close(m);
    return VKF_OK;
  }
  vkf_npy_array arrays[FORWARD_MAX_ARGS] = {0};
  vkf_model_array given[FORWARD_MAX_ARGS] = {0};
  const char *names[FORWARD_MAX_ARGS];
  for (int k = 0; k < out_count; k++) names[k] = out[k].name;
  int64_t batch = 0, seq = 0, target = 0;
  vkf_cli_device dev = {0};
  vkf_batch_input inputs[VKF_MODEL_MAX_IO] = {{0}};
  vkf_batch_output outputs[VKF_MODEL_MAX_IO] = {{0}};
  void *owned[VKF_MODEL_MAX_IO] = {0};
  vkf_model_derived derived = {0};
  vkf_status st = load_inputs(in, in_count, arrays, given);
  if (!st) st = vkf_model_check_inputs(m, given, (uint32_t)in_count, &batch, &seq, &target);
  dims z = {batch, seq, target};
  /* An unknown output name is the builder's error (it lists the declared ones): build once. */
  vkf_cli_model_build mb = {.model = m,
                            .seq_len = seq,
                            .target_len = target,
                            .dtype = dtype,
                            .outputs = names,
                            .output_count = (uint32_t)out_count};
  vkf_batch_graph probe = {0};
  if (!st) st = vkf_cli_model_build_fn(&mb, 1, &probe);
  if (probe.graph) vkf_graph_destroy(probe.graph);
  if (!st) st = gather_inputs(m, z, given, in_count, inputs, owned);
  if (!st) st = derive_inputs(m, z, given, in_count, inputs, &derived);
  if (!st) mb.derived = &derived;
  if (!st) st = alloc_outputs(m, z, out, out_count, outputs);
  if (!st) st = vkf_cli_device_open(device, &dev);
  if (!st)
    st = vkf_cli_batch_run("vkf forward", dev.device, batch, vkf_cli_model_build_fn, &mb, inputs,
                           outputs);
  if (!st) st = write_outputs(m, z, outputs, out, out_count);
  int validation = vkf_cli_device_close(&dev);
  vkf_model_derived_release(&derived);
  for (int i = 0; i < VKF_MODEL_MAX_IO; i++) {
    free(owned[i]);
    free(outputs[i].data);
  }
  for (int i = 0; i < in_count; i++) vkf_npy_array_release(&arrays[i]);
  vkf_model_close(m);
  if (!st && validation)
    st = vkf_status_make(VKF_STATUS_INTERNAL, "the validation layer reported messages");
  return st;
}

int vkf_cli_forward(int argc, char **argv) {
  const char *model_dir = NULL, *device = NULL;
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
  vkf_status st = run(model_dir, in, in_count, out, out_count, do_list, dtype, device);
  return st ? vkf_cli_fail(st) : 0;
}
