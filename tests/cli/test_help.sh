#!/usr/bin/env bash
# vkf explains itself: every command and subcommand (from `vkf --help` and `vkf bench --help`, the
# variants of `vkf bench attention`, every op of graph/ir/ops.def) answers --help and -h on stdout
# with a usage line and exit 0; an unknown option, a missing value and a rejected value are one
# stderr line naming the option, exit 2; `vkf --version` / `vkf version`; `vkf op --list` covers
# every op of the table with its inputs and attributes.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh

# expect_help NAME ARGS...: exit 0, "usage:" on stdout, nothing on stderr.
expect_help() {
  local name=$1
  shift
  "$VKF" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq 0 ] && grep -qi "usage: vkf" "$tmp/out" && [ ! -s "$tmp/err" ]; then
    ok
  else
    bad "$name: exit $rc, stdout: $(head -c 300 "$tmp/out"), stderr: $(cat "$tmp/err")"
  fi
}

# expect_usage_error NAME NEEDLE ARGS...: exit 2, exactly one stderr line containing NEEDLE (fixed
# string), nothing on stdout.
expect_usage_error() {
  local name=$1 needle=$2
  shift 2
  "$VKF" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$needle" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok
  else
    bad "$name: exit $rc, $lines line(s): $(cat "$tmp/err")"
  fi
}

# The commands, as `vkf --help` lists them (two-space indent, name, description).
"$VKF" --help >"$tmp/top" 2>&1 || bad "vkf --help exit $?"
mapfile -t commands < <(sed -n 's/^  \([a-z][a-z0-9-]*\) \+[^ ].*/\1/p' "$tmp/top")
[ "${#commands[@]}" -ge 10 ] && ok || bad "vkf --help lists ${#commands[@]} commands"
"$VKF" bench --help >"$tmp/bench" 2>&1 || bad "vkf bench --help exit $?"
mapfile -t benches < <(sed -n 's/^  \([a-z][a-z0-9-]*\) \+[^ ].*/\1/p' "$tmp/bench")
[ "${#benches[@]}" -ge 7 ] && ok || bad "vkf bench --help lists ${#benches[@]} benchmarks"
expect_help "vkf -h" -h
expect_usage_error "vkf alone" "usage: vkf"
expect_usage_error "unknown command" "unknown command \"nosuch\"" nosuch

# Each invocation: the words before --help. `bench model` with a ViT checkpoint parses its own
# options; `bench attention` has four more variants.
invocations=()
for c in "${commands[@]}"; do [ "$c" != bench ] && invocations+=("$c"); done
for b in "${benches[@]}"; do invocations+=("bench $b"); done
invocations+=("bench attention --kind nystrom" "bench attention --kind linear"
              "bench attention --pattern window:64" "bench attention --kind relative"
              "bench model --model tests/models/data/vit_tiny")

for inv in "${invocations[@]}"; do
  read -ra words <<<"$inv"
  expect_help "vkf $inv --help" "${words[@]}" --help
  expect_help "vkf $inv -h" "${words[@]}" -h
  [ "$inv" = version ] && continue
  expect_usage_error "vkf $inv --tpo" "unknown option '--tpo'" "${words[@]}" --tpo
  # A missing value: the first option of the usage text that takes a placeholder (--model DIR),
  # given last; the variants' selectors (--kind, --pattern, bench model's --model) come first.
  "$VKF" "${words[@]}" --help >"$tmp/usage"
  opt=$(grep -o -- '--[a-z][a-z0-9-]* [A-Z][A-Z0-9_,|.]*' "$tmp/usage" | grep -v -- "^--kind \|^--pattern " |
        head -1 | cut -d' ' -f1)
  if [ -n "$opt" ]; then
    expect_usage_error "vkf $inv $opt (no value)" "$opt needs a value" "${words[@]}" "$opt"
  else
    bad "vkf $inv --help names no option with a value"
  fi
done
expect_usage_error "vkf bench with no such benchmark" "unknown benchmark \"nosuch\"" bench nosuch
expect_usage_error "the brief's example" "vkf classify: unknown option '--tpo' (see vkf classify --help)" classify --tpo
expect_usage_error "generate --max-new-tokens last" "vkf generate: --max-new-tokens needs a value" generate --model x --max-new-tokens
expect_usage_error "a rejected value" "invalid value 'abc' for --max-new-tokens" generate --model x --max-new-tokens abc --prompt hi
expect_usage_error "dump --batch 0" "invalid value '0' for --batch" dump --model x --batch 0
expect_usage_error "bench gemm --shape" "invalid value '1x2' for --shape" bench gemm --shape 1x2
expect_usage_error "classify without inputs" "give IMAGE files" classify
expect_usage_error "embed without texts" "give at least one TEXT" embed
expect_usage_error "op without OP" "name an OP" op --out y.npy --in x.npy
expect_usage_error "op NAME --help of no op" "unknown op 'nosuch'" op nosuch --help
# Numbers are taken whole or refused: no clamping, no ignored tail or extra field.
D=tests/models/data
expect_usage_error "seed past 2^64 - 1" "invalid value '18446744073709551616' for --seed" generate --model $D/llama_tiny --ids 1 --seed 18446744073709551616
expect_usage_error "seed in exponent form" "invalid value '1e23' for --seed" generate --model $D/llama_tiny --ids 1 --seed 1e23
expect_usage_error "negative seed" "invalid value '-1' for --seed: want an integer in [0, 18446744073709551615]" generate --model $D/llama_tiny --ids 1 --seed -1
# An out-of-range value's error names the range.
expect_usage_error "num-beams past its range" "invalid value '10000' for --num-beams: want an integer in [1, 1024]" generate --model $D/llama_tiny --ids 1 --num-beams 10000
expect_usage_error "top-p past 1" "invalid value '2' for --top-p: want a number in (0, 1]" generate --model $D/llama_tiny --ids 1 --top-p 2
expect_usage_error "batch 0" "invalid value '0' for --batch: want an integer in [1, 2147483647]" dump --model $D/llama_tiny --batch 0
expect_usage_error "max-new-tokens past INT64_MAX" "invalid value '99999999999999999999' for --max-new-tokens" generate --model $D/llama_tiny --ids 1 --max-new-tokens 99999999999999999999
expect_usage_error "bench gemm shape with a tail" "invalid value '64x64x64junk' for --shape: want 3 integers in [1, 2147483647], 'x' or ',' between them" bench gemm --shape 64x64x64junk
expect_usage_error "bench gemm negative dim" "invalid value '64x64x-4' for --shape" bench gemm --shape 64x64x-4
expect_usage_error "bench rows shape with a tail" 'bad shape "4abc"' bench rows --softmax 4abc
expect_usage_error "bench rows shape with five dims" 'bad shape "2,2,2,2,2"' bench rows --softmax 2,2,2,2,2
expect_usage_error "bench attention shape with an extra field" 'bad --shape "1,1,8,8,8,9"' bench attention --shape 1,1,8,8,8,9
expect_usage_error "bench attention shape with a tail" 'bad --shape "1,1,8,8,8x"' bench attention --shape 1,1,8,8,8x
# The largest seed runs; x works as the separator of attention shapes too.
"$VKF" generate --model $D/llama_tiny --ids 1 --max-new-tokens 2 --temperature 0.5 --seed 18446744073709551615 >/dev/null 2>"$tmp/err" && ok || bad "seed 2^64 - 1: $(cat "$tmp/err")"
"$VKF" bench attention --shape 1x1x8x8x8 --runs 1 --warmup 0 >"$tmp/out" 2>"$tmp/err" && ok || bad "bench attention 1x1x8x8x8: $(cat "$tmp/err")"
# ... with each body's design intensity beside its time (the coopmat lane checks the figures).
grep -q '| FLOP/shared B | FLOP/global B |' "$tmp/out" && grep -q '^| 1,1,8,8,8 | .* | [0-9.-]* | [0-9.]* | [0-9.]* |' "$tmp/out" && ok || bad "bench attention: no intensity columns: $(cat "$tmp/out")"
# A shape whose operands exceed one binding is refused before its data is made (not GBs first),
# the error separated from the shape it names.
"$VKF" bench attention --shape 1,1,100000000,100000000,64 --runs 1 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "^vkf: shape 1,1,100000000,100000000,64: Q \[1, 1, 100000000, 64\] takes more than the device's maxStorageBufferRange" "$tmp/err" && ok || bad "huge attention shape: $(cat "$tmp/err")"

# One spelling: --fp16 everywhere a precision flag exists (bench gemm keeps --f16 as an alias).
for inv in classify embed forward generate "bench gemm" "bench attention" "bench rows" "bench model"; do
  read -ra words <<<"$inv"
  "$VKF" "${words[@]}" --help | grep -q -- "--fp16" && ok || bad "vkf $inv --help has no --fp16"
done

# Every op of the table: its own --help, and a block in --list.
mapfile -t ops < <(sed -n 's/^VKF_OP([A-Z0-9_]*, *"\([a-z0-9_]*\)".*/\1/p' graph/ir/ops.def)
[ "${#ops[@]}" -ge 30 ] && ok || bad "ops.def gave ${#ops[@]} ops"
"$VKF" op --list >"$tmp/list" 2>"$tmp/err" && [ ! -s "$tmp/err" ] && ok || bad "op --list failed"
for op in "${ops[@]}"; do
  grep -q "^$op (graph inputs [0-9]" "$tmp/list" && ok || bad "op --list lacks $op"
  "$VKF" op "$op" --help >"$tmp/one" 2>&1 && grep -q "^$op (graph inputs" "$tmp/one" && ok ||
    bad "vkf op $op --help: $(head -2 "$tmp/one")"
done
[ "$(grep -c '^[a-z0-9_]* (graph inputs' "$tmp/list")" -eq "${#ops[@]}" ] && ok ||
  bad "op --list has other ops than ops.def"
# Runnable ops list inputs; attributes come with type, range and default. Matmul's are exact.
grep -A3 '^matmul ' "$tmp/list" >"$tmp/matmul"
grep -q '^  inputs: a f32|f16' "$tmp/matmul" && ok || bad "matmul inputs: $(cat "$tmp/matmul")"
grep -qF -- '--attr transpose_b=int  [0, 1]; default 0' "$tmp/matmul" && ok || bad "transpose_b: $(cat "$tmp/matmul")"
grep -qF -- '--attr activation=choice  none|gelu|gelu_tanh|relu|silu; default none' "$tmp/matmul" && ok ||
  bad "activation: $(cat "$tmp/matmul")"
grep -q '^reshape .*graph-internal' "$tmp/list" && ok || bad "reshape is not marked graph-internal"
# Every attribute key op_attrs.c accepts for an op is one --list shows for it (an unknown one
# is refused with the list of valid keys, which must equal --list's).
python3 tests/cli/npy_tool.py write "$tmp/x.npy" 1,2,4,4 1
for op in matmul attention sparse_attention slice linear_attention; do
  listed=$(awk -v op="$op" '$1 == op {on = 1; next} /^[a-z]/ {on = 0} on && /--attr/ {sub(/=.*/, "", $2); printf "%s%s", sep, $2; sep = ", "}' "$tmp/list")
  "$VKF" op "$op" --cpu --in "$tmp/x.npy" --out "$tmp/o.npy" --attr nosuch=1 >/dev/null 2>"$tmp/err"
  grep -qF "(valid: $listed)" "$tmp/err" && ok || bad "$op: --list keys '$listed' vs $(cat "$tmp/err")"
done

# Version: project(VERSION) of the top CMakeLists.txt, a commit, the loader and shaderc.
version=$(sed -n 's/^project(vkformer VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
for form in --version version; do
  "$VKF" $form >"$tmp/v" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 0 ] && grep -q "^vkf $version (commit [0-9a-f]\{7,\}\(-dirty\)\?\|^vkf $version (commit unknown" "$tmp/v" &&
     grep -q "Vulkan loader .*volk [0-9]*; shaderc SPIR-V 1\.[0-9]" "$tmp/v"; then
    ok
  else
    bad "vkf $form: exit $rc: $(cat "$tmp/v" "$tmp/err")"
  fi
done

# Output that cannot be written is a failure, not exit 0 with the text lost (stdout on a full disk).
if [ -w /dev/full ]; then
  for inv in "--help" "op --list" "tokenize --model tests/models/data/bert_tiny --json hello" \
             "forward --model tests/models/data/bert_tiny --list"; do
    # shellcheck disable=SC2086
    "$VKF" $inv >/dev/full 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "^vkf: writing the standard output failed: No space left" "$tmp/err"; then
      ok
    else
      bad "vkf $inv >/dev/full: exit $rc: $(cat "$tmp/err")"
    fi
  done
fi

vkf_summary
