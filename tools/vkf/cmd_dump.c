/* vkf dump: what vkformer makes of a model, stage by stage, for debugging:
 *   graph   the graph as built (text, DOT or JSON)
 *   passes  the graph after every pass, three files per pass, into --out DIR
 *   plan    how the batch splits into runs on the chosen device, and the lowered plan of one run
 *           (dispatches, bindings, barriers)
 *   kernels the GLSL of every distinct kernel in the plan, one file each, into --out DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/ir/dump.h"
#include "graph/lower/lower.h"
#include "graph/passes/passes.h"
#include "host/instance.h"
#include "models/registry/model.h"
#include "shaders/embedded.h"
#include "runtime/model_batch.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/quantize_note.h"

typedef struct dump_args {
  const char *model, *stage, *format, *out, *device, *quantize;
  int64_t batch, seq_len, target_len;
  int fp16; /* --fp16: the graph vkf forward --fp16 runs */
} dump_args;

/* Decoder tokens the graph of a model with target inputs (an encoder–decoder's
 * decoder_input_ids) is built for: --target-len, else 1 (one decode step's shape; with none the
 * logits would have no decoder_input_ids); 0 for other models. */
static int64_t target_len_of(const dump_args *a, const vkf_model *m) {
  int target = 0;
  for (uint32_t i = 0; i < vkf_model_input_count(m); i++) target |= vkf_model_input(m, i)->target;
  if (!target) return 0;
  return a->target_len ? a->target_len : 1;
}

static void usage(FILE *f) {
  fprintf(f, "usage: vkf dump --model DIR [--stage graph|passes|plan|kernels] [--format "
             "text|dot|json] [--out DIR] [--batch N] [--seq-len N] [--target-len N]\n"
             "                [--quantize FORMAT] [--fp16] [--device N|NAME]\n"
             "  graph (default) and plan print to stdout; passes and kernels write files into\n"
             "  --out (default: vkf-dump). --format is for --stage graph only (passes writes\n"
             "  text, DOT and JSON; plan is text; kernels are GLSL). The plan is lowered for\n"
             "  the chosen device's caps (VKF_DEVICE_PROFILE applies); a batch too big for one\n"
             "  run is split as classify/embed/forward split it: plan prints the split first\n"
             "  (\"batch split: ...\": runs, rows, and the limit the whole batch exceeds) and the\n"
             "  plan of one run. --seq-len: tokens of the input (default: the model's own or\n"
             "  its maximum); --target-len: decoder tokens of an encoder-decoder (default 1).\n"
             "  --quantize: the linear weights as vkf forward --quantize makes them.\n"
             "  --fp16: f16 weights and activations, as vkf forward --fp16 runs them.\n");
}

static vkf_status dump_graph(vkf_graph *g, const char *format) {
  if (!strcmp(format, "dot")) return vkf_dump_dot(g, stdout);
  if (!strcmp(format, "json")) return vkf_dump_json(g, stdout);
  if (!strcmp(format, "text")) return vkf_dump_text(g, stdout);
  return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "unknown format \"%s\" (text, dot, json)",
                         format);
}

static vkf_status device_caps(const char *selector, vkf_device_caps *out) {
  vkf_instance *instance = NULL;
  VKF_RETURN_IF_ERROR(vkf_instance_create(NULL, &instance));
  uint32_t index = 0;
  vkf_status st = vkf_instance_choose_device(instance, selector, &index);
  if (!st) *out = *vkf_instance_device_caps(instance, index);
  vkf_instance_destroy(instance);
  return st;
}

/* Writes GLSL with every #include "x" replaced by the embedded file, so a dumped kernel is the
 * complete text the compiler sees (shaderc resolves the same names from the same table). */
static void write_expanded(FILE *f, const char *src, int depth) {
  while (*src) {
    const char *nl = strchr(src, '\n');
    size_t len = nl ? (size_t)(nl - src + 1) : strlen(src);
    char name[128];
    const char *inc = NULL;
    if (depth < 8 && sscanf(src, " #include \"%127[^\"]\"", name) == 1)
      inc = vkf_embedded_shader_find(name);
    if (inc) {
      fprintf(f, "// ---- begin %s ----\n", name);
      write_expanded(f, inc, depth + 1);
      fprintf(f, "// ---- end %s ----\n", name);
    } else {
      fwrite(src, 1, len, f);
    }
    src += len;
  }
}

/* Writes each distinct kernel once: generated GLSL as is, templates with their defines. */
static vkf_status dump_kernels(const vkf_plan *plan, const char *dir) {
  uint32_t written = 0;
  for (uint32_t i = 0; i < vkf_plan_dispatch_count(plan); i++) {
    const vkf_plan_dispatch *d = vkf_plan_dispatch_get(plan, i);
    int seen = 0;
    for (uint32_t j = 0; j < i && !seen; j++) {
      const vkf_plan_dispatch *e = vkf_plan_dispatch_get(plan, j);
      seen = !strcmp(e->shader, d->shader) && e->define_count == d->define_count &&
             ((e->source == NULL) == (d->source == NULL)) &&
             (!e->source || !strcmp(e->source, d->source));
      for (uint32_t k = 0; seen && k < d->define_count; k++)
        seen = !strcmp(e->defines[k], d->defines[k]);
    }
    if (seen) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%03u_%s%s", dir, written, d->shader,
             strstr(d->shader, ".comp") ? "" : ".comp");
    FILE *f = fopen(path, "w");
    if (!f) return vkf_status_make(VKF_STATUS_IO, "cannot write %s", path);
    fprintf(f, "// kernel of node \"%s\"; specialization constants:", d->node ? d->node : "");
    for (uint32_t k = 0; k < d->spec_count; k++) fprintf(f, " %u", d->spec[k]);
    fprintf(f, "\n");
    const char *src = d->source ? d->source : vkf_embedded_shader_find(d->shader);
    if (!d->source) {
      /* shaderc receives the defines as -D options; shown here as lines after #version. */
      const char *nl = src ? strchr(src, '\n') : NULL;
      if (nl) fprintf(f, "%.*s", (int)(nl - src + 1), src), src = nl + 1;
      for (uint32_t k = 0; k < d->define_count; k++) {
        char def[160];
        snprintf(def, sizeof def, "%s", d->defines[k]);
        char *eq = strchr(def, '=');
        if (eq) *eq = ' ';
        fprintf(f, "#define %s\n", def);
      }
    }
    write_expanded(f, src ? src : "// (source not found)\n", 0);
    if (fclose(f) != 0) return vkf_status_make(VKF_STATUS_IO, "cannot write %s", path);
    written++;
  }
  fprintf(stderr, "vkf dump: %u kernels written to %s\n", written, dir);
  return VKF_OK;
}

/* The plan and kernels stages: the batch is split as the runner would split it on this device
 * (runtime/model_batch.h); the split goes first ("batch split: ..."), then the plan of one run of
 * the first run's rows (the runs' plans differ only in their row count). */
static vkf_status dump_lowered(const dump_args *a, vkf_model *m) {
  vkf_device_caps caps;
  vkf_rt_model_build mb = {.model = m, .seq_len = a->seq_len, .target_len = target_len_of(a, m),
                           .dtype = a->fp16 ? VKF_F16 : VKF_F32};
  vkf_batch_split split;
  char line[512];
  vkf_batch_graph bg = {0};
  vkf_lowered low = {0};
  vkf_status st = device_caps(a->device, &caps);
  if (!st) st = vkf_rt_batch_split(&caps, a->batch, vkf_rt_model_build_fn, &mb, &split);
  if (!st) {
    vkf_batch_split_describe(&split, line, sizeof line);
    if (a->stage[0] == 'p')
      printf("batch split: %s\n", line);
    else
      fprintf(stderr, "vkf dump: %s\n", line);
  }
  if (!st) st = vkf_rt_model_build_fn(&mb, split.rows_per_run, &bg);
  if (!st) st = vkf_passes_run(bg.graph, NULL, NULL);
  if (!st) st = vkf_lower_graph(bg.graph, &caps, NULL, &low);
  if (!st && a->stage[0] == 'p') vkf_plan_dump_text(low.plan, stdout);
  if (!st && a->stage[0] == 'k') {
    mkdir(a->out, 0755);
    st = dump_kernels(low.plan, a->out);
  }
  vkf_lowered_free(&low);
  if (bg.graph) vkf_graph_destroy(bg.graph);
  return st;
}

static vkf_status run(const dump_args *a) {
  vkf_model *m = NULL;
  VKF_RETURN_IF_ERROR(vkf_model_open(a->model, &m));
  vkf_status st = a->quantize ? vkf_model_quantize(m, a->quantize) : VKF_OK;
  if (st) {
    vkf_model_close(m);
    return st;
  }
  if (!strcmp(a->stage, "plan") || !strcmp(a->stage, "kernels")) {
    st = dump_lowered(a, m);
    if (!st) vkf_cli_quantize_note("vkf dump", m, a->quantize);
    vkf_model_close(m);
    return st;
  }
  vkf_model_graph mg = {0};
  vkf_model_build_options mo = {
      .batch = a->batch, .seq_len = a->seq_len, .target_len = target_len_of(a, m),
      .dtype = a->fp16 ? VKF_F16 : VKF_F32};
  st = vkf_model_build(m, &mo, &mg);
  if (st) {
    vkf_model_close(m);
    return st;
  }
  if (!strcmp(a->stage, "graph")) {
    st = dump_graph(mg.graph, a->format);
  } else if (!strcmp(a->stage, "passes")) {
    mkdir(a->out, 0755);
    vkf_pass_options po = {.dump = "passes", .dump_dir = a->out};
    vkf_pass_report report;
    st = vkf_passes_run(mg.graph, &po, &report);
    if (!st)
      fprintf(stderr, "vkf dump: %u passes written to %s (arena peak %zu bytes, naive %zu)\n",
              report.count, a->out, report.peak_size, report.naive_size);
  } else {
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                         "unknown stage \"%s\" (graph, passes, plan, kernels)", a->stage);
  }
  vkf_graph_destroy(mg.graph);
  if (!st) vkf_cli_quantize_note("vkf dump", m, a->quantize);
  vkf_model_close(m);
  return st;
}

int vkf_cli_dump(int argc, char **argv) {
  dump_args a = {.stage = "graph", .format = "text", .out = "vkf-dump", .batch = 1};
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int v = i + 1 < argc;
    if (!strcmp(s, "--model") && v) a.model = argv[++i];
    else if (!strcmp(s, "--stage") && v) a.stage = argv[++i];
    else if (!strcmp(s, "--format") && v) a.format = argv[++i];
    else if (!strcmp(s, "--out") && v) a.out = argv[++i];
    else if (!strcmp(s, "--device") && v) a.device = argv[++i];
    else if (!strcmp(s, "--quantize") && v && vkf_cli_quantize_ok(argv[i + 1])) a.quantize = argv[++i];
    else if (!strcmp(s, "--fp16")) a.fp16 = 1;
    else if (!strcmp(s, "--batch") && v && vkf_cli_parse_i64(argv[i + 1], 1, INT32_MAX, &a.batch))
      i++;
    else if (!strcmp(s, "--seq-len") && v &&
             vkf_cli_parse_i64(argv[i + 1], 1, INT32_MAX, &a.seq_len))
      i++;
    else if (!strcmp(s, "--target-len") && v &&
             vkf_cli_parse_i64(argv[i + 1], 1, INT32_MAX, &a.target_len))
      i++;
    else if (vkf_cli_is_help(s)) return usage(stdout), 0;
    else return vkf_cli_bad_arg("vkf dump", usage, argc, argv, i);
  }
  if (!a.model) return vkf_cli_usage_error("vkf dump", "--model DIR is required");
  /* Only the graph stage has formats; passes writes all three, plan and kernels are text/GLSL. */
  if (strcmp(a.stage, "graph") && strcmp(a.format, "text")) {
    fprintf(stderr,
            "vkf dump: --format %s applies only to --stage graph (--stage %s has one format)\n",
            a.format, a.stage);
    return 2;
  }
  vkf_status st = run(&a);
  return st ? vkf_cli_fail(st) : 0;
}
