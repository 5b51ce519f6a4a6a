/* Shared declarations of the vkf command-line tool: one function per subcommand. */
#ifndef VKF_TOOLS_CLI_H
#define VKF_TOOLS_CLI_H

#include "graph/base/status.h"

/* Each subcommand gets argv after the subcommand name and returns the process exit code. */
int vkf_cli_devices(int argc, char **argv);
int vkf_cli_version(int argc, char **argv); /* cmd_version.c */
int vkf_cli_op(int argc, char **argv);
int vkf_cli_dump(int argc, char **argv);
int vkf_cli_classify(int argc, char **argv);
int vkf_cli_embed(int argc, char **argv); /* cmd_embed.c */
int vkf_cli_forward(int argc, char **argv);  /* cmd_forward.c */
int vkf_cli_tokenize(int argc, char **argv); /* cmd_tokenize.c */
int vkf_cli_generate(int argc, char **argv); /* cmd_generate.c */
int vkf_cli_chat(int argc, char **argv);     /* cmd_chat.c */
int vkf_cli_serve(int argc, char **argv);    /* cmd_serve.c */
int vkf_cli_attn(int argc, char **argv);     /* cmd_attn.c */
int vkf_cli_bench_model(int argc, char **argv); /* `vkf bench model` (cmd_bench_model.c) */
int vkf_cli_bench_bert(int argc, char **argv);  /* BERT branch of bench model (bench_bert.c) */
int vkf_cli_bench_is_bert(int argc, char **argv); /* no --model, or its model_type is "bert" */
int vkf_cli_bench(int argc, char **argv);      /* dispatches `vkf bench <what>` (cmd_bench.c) */
int vkf_cli_bench_gemm(int argc, char **argv);
int vkf_cli_bench_attention(int argc, char **argv); /* cmd_bench_attention.c */
/* --kind nystrom|linformer of vkf bench attention (bench_attention_lowrank.c). */
int vkf_cli_bench_attention_lowrank(int argc, char **argv);
/* --kind adaptive_span of vkf bench attention (bench_attention_span.c). */
int vkf_cli_bench_attention_span(int argc, char **argv);
int vkf_cli_bench_attention_long_short(int argc, char **argv);
/* --kind relative: Transformer-XL's relative attention (bench_attention_relative.c). */
int vkf_cli_bench_attention_relative(int argc, char **argv);
/* --pattern P of vkf bench attention: the block-sparse kernel (bench_attention_sparse.c). */
int vkf_cli_bench_attention_sparse(int argc, char **argv);
int vkf_cli_bench_rows(int argc, char **argv);      /* cmd_bench_rows.c */
int vkf_cli_bench_generate(int argc, char **argv);  /* cmd_bench_generate.c */
int vkf_cli_bench_seq2seq(int argc, char **argv);   /* cmd_bench_seq2seq.c */
int vkf_cli_bench_data(int argc, char **argv);      /* cmd_bench_data.c */

/* Prints "vkf: <message>" on stderr as one line and returns 1 (frees the status). */
int vkf_cli_fail(vkf_status status);

#endif
