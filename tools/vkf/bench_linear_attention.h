/* vkf bench attention --kind linear|performer|rfa: the linear-attention family beside the dense
 * fused kernel (tools/vkf/bench_linear_attention.c). */
#ifndef VKF_TOOLS_BENCH_LINEAR_ATTENTION_H
#define VKF_TOOLS_BENCH_LINEAR_ATTENTION_H

/* Whether `kind` is one of the linear family's kinds. */
int vkf_bench_linear_kind(const char *kind);
/* argv: the arguments after `vkf bench attention`, --kind included. Returns the exit status. */
int vkf_bench_linear_attention(int argc, char **argv);

#endif
