#!/usr/bin/env bash
# vkf dump on the committed tiny ViT: every stage produces its artefact, the DOT renders, the plan
# counts dispatches and barriers, kernels are real GLSL, and bad arguments fail with one line.
set -u
pass=0 fail=0
ok() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
model=tests/models/data/vit_tiny

"$VKF" dump --model $model >"$tmp/graph.txt"; rc=$?
ok "graph stage" '[ $rc -eq 0 ] && grep -q "^graph \"ViTForImageClassification\"" "$tmp/graph.txt"'
"$VKF" dump --model $model --format dot >"$tmp/graph.dot"
ok "DOT renders" 'dot -Tsvg "$tmp/graph.dot" >"$tmp/graph.svg" && grep -q "<svg" "$tmp/graph.svg"'
"$VKF" dump --model $model --format json >"$tmp/graph.json"
ok "JSON parses" 'python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/graph.json"'
"$VKF" dump --model $model --stage passes --out "$tmp/passes" 2>/dev/null
ok "one dump per pass" '[ "$(ls "$tmp/passes"/*.txt | wc -l)" -ge 5 ] && ls "$tmp/passes" | grep -q fuse_attention.dot'
ok "attention fused after passes" 'grep -q "attention" "$(ls "$tmp/passes"/*memory_plan.txt)"'
"$VKF" dump --model $model --stage plan >"$tmp/plan.txt"; rc=$?
ok "plan stage" '[ $rc -eq 0 ] && grep -Eq "^plan: [0-9]+ buffers, [0-9]+ dispatches, [0-9]+ barriers$" "$tmp/plan.txt"'
ok "plan has an attention dispatch" 'grep -q "attention" "$tmp/plan.txt"'
"$VKF" dump --model $model --stage kernels --out "$tmp/kernels" 2>/dev/null
ok "kernels written" 'grep -lq "void main" "$tmp"/kernels/*gemm*'
"$VKF" dump --model $model --stage nope >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "unknown stage fails with one line" '[ $rc -ne 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]'
"$VKF" dump --model "$tmp/none" >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "missing model fails with one line" '[ $rc -ne 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q config.json "$tmp/err"'
# --format is for the graph stage only: plan and kernels have one format, so asking for another
# is an error, not silently ignored.
for stage in plan kernels passes; do
  "$VKF" dump --model $model --stage $stage --format dot --out "$tmp/k-$stage" >"$tmp/out" 2>"$tmp/err"; rc=$?
  ok "--stage $stage --format dot rejected" '[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "--format dot applies only to --stage graph" "$tmp/err" && [ ! -s "$tmp/out" ]'
done
# A Nyströmformer whose segments fix the length dumps at that length without --seq-len.
"$VKF" dump --model tests/models/data/nys_conv >"$tmp/nys" 2>"$tmp/err"; rc=$?
ok "fixed-length Nystromformer without --seq-len" '[ $rc -eq 0 ] && grep -q "^input .*\"input_ids\" i32 \[1,16\]" "$tmp/nys"'
# Encoder–decoders dump without flags (one decoder token by default; --target-len sets it), and
# every stage works on them.
"$VKF" dump --model tests/models/data/bart_tiny >"$tmp/encdec" 2>"$tmp/err"; rc=$?
ok "encoder-decoder graph without flags" '[ $rc -eq 0 ] && grep -q "^input .*\"decoder_input_ids\" i32 \[1,1\]" "$tmp/encdec"'
"$VKF" dump --model tests/models/data/bart_tiny --target-len 4 --stage plan >"$tmp/encdec4" 2>"$tmp/err"; rc=$?
ok "encoder-decoder plan with --target-len 4" '[ $rc -eq 0 ] && grep -q "^plan: " "$tmp/encdec4"'
"$VKF" dump --model tests/models/data/bart_tiny --target-len 4 >"$tmp/encdec4g" 2>"$tmp/err"
ok "--target-len shapes decoder_input_ids" 'grep -q "^input .*\"decoder_input_ids\" i32 \[1,4\]" "$tmp/encdec4g"'
# --fp16: the f16 graph forward --fp16 runs (its GEMMs read f16 operands); f32 by default
"$VKF" dump --model tests/models/data/bert_tiny --stage plan --fp16 --seq-len 8 >"$tmp/plan16" 2>"$tmp/err"; rc=$?
ok "--fp16 plan: f16 GEMMs" '[ $rc -eq 0 ] && grep -q "gemm.comp.*A_F16" "$tmp/plan16"'
"$VKF" dump --model tests/models/data/bert_tiny --stage plan --seq-len 8 >"$tmp/plan32" 2>"$tmp/err"
ok "plan without --fp16: f32 GEMMs" '! grep -q "gemm.comp.*A_F16" "$tmp/plan32"'
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
