#!/usr/bin/env bash
# tools/dev/gpu_report.sh end to end at toy sizes (--quick) on whatever device this is: every
# benchmark step runs and lands in report.md (GEMV/GEMM with the copy-bandwidth share, attention,
# ViT, the decode of both Llamas at f32 and f16, vkf serve at 1, 4 and 16 clients and its time to
# the first token at --parallel 1 and 4), no step fails, and the PyTorch half says what it did
# (measured, or why not).
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
build=${VKF_BUILD_DIR:-$(dirname "$(dirname "$VKF")")}
if TMPDIR=$tmp bash tools/dev/gpu_report.sh --quick --no-tests --build "$build" --out "$tmp/out" \
  >"$tmp/stdout" 2>"$tmp/stderr"; then ok; else bad "gpu_report.sh exit $?: $(tail -5 "$tmp/stderr")"; fi
report=$tmp/out/report.md
for f in report.md raw.tar.gz; do [ -s "$tmp/out/$f" ] && ok || bad "no $f"; done
for section in "## GEMV and GEMM" "## Fused attention" "## ViT-B/16 forward" "## Decoding" "## Serving"; do
  grep -q "^$section" "$report" && ok || bad "report.md lacks $section"
done
grep -q "Steps that failed" "$report" && bad "a step failed: $(grep 'Steps that failed' "$report")" || ok
grep -q '^| llama-1b-bf16 | bf16 |' "$report" && ok || bad "no bf16 decode row"
[ "$(grep -c '^| llama-' "$report")" -eq 5 ] && ok || bad "expected 5 decode rows (1B and 135M at f32 and f16, 1B bf16): $(grep '^| llama-' "$report")"
grep -q "^| 1×256×256 | f32 × q4_k | " "$report" && ok || bad "no q4_k GEMV row"
[ "$(grep -c '^| [1-8]×256×' "$report")" -eq 56 ] && ok || bad "expected 56 GEMV rows (M 1..8: 2 shapes in f32 and f16, one in q8_0, q4_0 and q4_k)"
# serving: a row per client level with its steps, and the batch at 4 clients above one sequence
[ "$(grep -cE '^\| (1|4|16) \| [0-9.]+ \| [0-9.]+x \| [0-9.]+ \| [0-9]+ \| [0-9.]+ \|$' "$report")" -eq 3 ] && ok ||
  bad "expected 3 serving rows (1, 4 and 16 clients, with steps and mean batch): $(grep -A6 '^## Serving' "$report")"
awk -F' [|] ' '/^[|] 4 [|]/ { exit !($6 + 0 > 1.5) }' "$report" && ok ||
  bad "4 clients did not batch (mean batch): $(grep '^| 4 |' "$report")"
grep -qE '^Time to the first streamed token.*--parallel 1: [0-9.]+ s, --parallel 4: [0-9.]+ s \([0-9.]+x\)' "$report" && ok ||
  bad "no TTFT line: $(grep '^Time to the first' "$report")"
grep -q "^- PyTorch: " "$report" && ok || bad "report.md does not say whether PyTorch was measured"
python3 -m py_compile tools/dev/gpu_report.py tools/dev/make_bench_checkpoints.py && ok || bad "py_compile"
vkf_summary
