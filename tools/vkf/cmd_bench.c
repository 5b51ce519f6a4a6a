/* vkf bench: dispatches `vkf bench <what>` through one table, so each benchmark is one file
 * (cmd_bench_<what>.c) and one row here. */
#include <stdio.h>
#include <string.h>

#include "tools/vkf/cli.h"

typedef struct bench_command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *help;
} bench_command;

static const bench_command benches[] = {
    {"attention", vkf_cli_bench_attention,
     "fused vs unfused attention: ms ± sd, GFLOP/s, peak memory [--shape B,H,Nq,Nk,D] [--json]"},
    {"data", vkf_cli_bench_data,
     "elementwise / copy / gather / patch_embed / mean_pool kernels: ms ± sd, GB/s [--batch B]"},
    {"generate", vkf_cli_bench_generate,
     "decoder LM prefill and decode tokens/s, per-op GPU time of a step, memory: --model DIR "
     "[--prompt-len P] [--gen N] [--batch B]"},
    {"gemm", vkf_cli_bench_gemm,
     "GEMM GFLOP/s on the ViT-B/16 shapes vs a naive kernel [--json] [--runs N] [--shape MxKxN]"},
    {"model", vkf_cli_bench_model,
     "ViT/DeiT latency + per-op GPU time, BERT sentences/s (default all-MiniLM-L6-v2, batch 1 "
     "and 32 at 128 tokens): [--model DIR] [--batch N] [--fp16] [--json]"},
    {"seq2seq", vkf_cli_bench_seq2seq,
     "encoder-decoder translation speed: tokens/s, GPU time shares (encoder, self-attention, "
     "cross-attention, GEMMs): --model DIR [--src-len S] [--gen N] [--rows R]"},
    {"rows", vkf_cli_bench_rows,
     "softmax / layernorm kernels: ms ± sd, GB/s, variant [--softmax SHAPE] [--layernorm SHAPE]"},
};

static void bench_usage(FILE *f) {
  fprintf(f, "usage: vkf bench <what> [options]\n\nbenchmarks:\n");
  for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
    fprintf(f, "  %-10s %s\n", benches[i].name, benches[i].help); /* as vkf --help */
}

int vkf_cli_bench(int argc, char **argv) {
  if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
    bench_usage(argc < 1 ? stderr : stdout);
    return argc < 1 ? 2 : 0;
  }
  for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
    if (!strcmp(argv[0], benches[i].name)) return benches[i].run(argc - 1, argv + 1);
  fprintf(stderr, "vkf bench: unknown benchmark \"%s\" (try vkf bench --help)\n", argv[0]);
  return 2;
}
