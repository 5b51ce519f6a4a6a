#!/usr/bin/env bash
# config.json's "vkf_attention" kind adaptive_span (issue 33): tiny Llama (grouped-query heads,
# spans per head and per layer, bf16 weights) and GPT-2 (one span for all) checkpoints of
# tools/goldens/make_adaptive_span_golden.py against tools/goldens/adaptive_span_ref.py (the
# paper's soft mask patched into transformers 4.38.2): vkf forward within 1e-4 for a batch of two
# (row 1 right-padded) and for row 1 alone, the batch's row equal to the row alone, the mobile
# profile; vkf generate (the KV cache: prefill, chunked prefill, decode steps) against the
# reference's full forward per step (raw logits within 1e-4, ids of a batch of two prompts);
# --fp16 within 5e-2; the span is what runs (the same weights without it differ); bad
# configurations, each a one-line error naming the key.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
G=tests/models/golden/span
NPY=tests/cli/npy_tool.py
TOL=1e-4
CASES="span_llama span_llama_layer span_gpt2"

# forward CASE PREFIX OUT [ARGS...]: logits of PREFIX*.npy.
forward() {
  local m=$1 p=$2 out=$3
  shift 3
  "$VKF" forward --model "$D/$m" --in input_ids=$G/$m/${p}input_ids.npy \
    --in attention_mask=$G/$m/${p}attention_mask.npy --out logits="$out" "$@" 2>"$tmp/err"
}

for m in $CASES; do
  for p in "" row1_; do
    forward $m "$p" "$tmp/y.npy" && python3 $NPY compare "$tmp/y.npy" $G/$m/${p}logits.npy $TOL && ok ||
      bad "$m ${p:-batch}: $(cat "$tmp/err")"
  done
  if in_base_run; then
    VKF_DEVICE_PROFILE=mobile forward $m "" "$tmp/ym.npy" &&
      python3 $NPY compare "$tmp/ym.npy" $G/$m/logits.npy $TOL && ok || bad "$m mobile: $(cat "$tmp/err")"
  fi
  forward $m "" "$tmp/y16.npy" --fp16 && python3 $NPY compare "$tmp/y16.npy" $G/$m/logits.npy 5e-2 && ok ||
    bad "$m --fp16: $(cat "$tmp/err")"
done

# The batch's row 1 (its 15 kept tokens) is the row alone.
forward span_llama "" "$tmp/b.npy" && forward span_llama row1_ "$tmp/a.npy" &&
  python3 -c '
import sys
sys.path.insert(0, "tests/cli")
import npy_tool as t
shape_b, b = t.read(sys.argv[1])[:2]
shape_a, a = t.read(sys.argv[2])[:2]
n, w = shape_a[1], shape_b[2]
row = [b[(shape_b[1] + i) * w + j] for i in range(n) for j in range(w)]
sys.exit(0 if max(abs(x - y) for x, y in zip(row, a)) <= 1e-5 else 1)
' "$tmp/b.npy" "$tmp/a.npy" && ok || bad "span_llama batch row 1 vs alone"

# The span is what runs: without the key the same weights give plain softmax attention, far away.
rm -rf "$tmp/s" && cp -r "$D/span_llama" "$tmp/s" &&
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); del c["vkf_attention"]; json.dump(c, open(sys.argv[1], "w"))' "$tmp/s/config.json" &&
  "$VKF" forward --model "$tmp/s" --in input_ids=$G/span_llama/input_ids.npy --out logits="$tmp/soft.npy" 2>"$tmp/err" &&
  ! python3 $NPY compare "$tmp/soft.npy" $G/span_llama/logits.npy 1e-2 >/dev/null && ok || bad "plain softmax differs: $(cat "$tmp/err")"

# Generation: prefill, then decode steps against the cache (the query at kv_len - 1), against the
# reference's full forward of the whole sequence at every step.
P0=5,9,3,17,2,8,11,30,7,14,22
P1=4,4,21
same_ids() { # JSON CASE: rows 0 and 1 generated the golden ids
  python3 -c '
import json, sys
sys.path.insert(0, "tests/cli")
import npy_tool as t
rows = json.load(open(sys.argv[1]))
for i, row in enumerate(rows):
    want = list(t.read("%s/generate_%d.npy" % (sys.argv[2], i))[1])
    if row["generated_ids"] != want:
        sys.exit("row %d: %s, want %s" % (i, row["generated_ids"], want))
' "$1" "$G/$2"
}
for m in $CASES; do
  gen=("$VKF" generate --model "$D/$m" --greedy --ignore-eos --max-new-tokens 12 --json)
  "${gen[@]}" --ids $P0 --save-logits "$tmp/gl.npy" >"$tmp/g0.json" 2>"$tmp/err" &&
    python3 $NPY compare "$tmp/gl.npy" $G/$m/generate_0_logits.npy $TOL && ok ||
    bad "$m generate logits: $(cat "$tmp/err")"
  "${gen[@]}" --ids $P0 --ids $P1 >"$tmp/g.json" 2>"$tmp/err" && same_ids "$tmp/g.json" $m && ok ||
    bad "$m generate batch: $(cat "$tmp/err")"
  "${gen[@]}" --ids $P0 --ids $P1 --chunk 4 >"$tmp/g.json" 2>"$tmp/err" && same_ids "$tmp/g.json" $m && ok ||
    bad "$m generate chunked prefill: $(cat "$tmp/err")"
done
if in_base_run; then
  VKF_DEVICE_PROFILE=mobile "$VKF" generate --model $D/span_llama --greedy --ignore-eos --max-new-tokens 12 \
    --json --ids $P0 --ids $P1 >"$tmp/g.json" 2>"$tmp/err" && same_ids "$tmp/g.json" span_llama && ok ||
    bad "span_llama generate mobile: $(cat "$tmp/err")"
fi

# The bench: one row per N and span, the span's kernel beside dense causal; bad options refused.
"$VKF" bench attention --kind adaptive_span --n 256 --span 8 --runs 1 --warmup 0 >"$tmp/b.txt" 2>"$tmp/err" &&
  grep -q '^| 256 | 8 | [0-9.]* ± [0-9.]* | [0-9.]* ± [0-9.]* | [0-9.]* |$' "$tmp/b.txt" && ok ||
  bad "bench adaptive_span: $(cat "$tmp/b.txt" "$tmp/err")"
"$VKF" bench attention --kind adaptive_span --span -1 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'bad --span "-1"' "$tmp/err" && ok || bad "bench --span -1: $(cat "$tmp/err")"

# Bad configurations on a copy of a checkpoint: each a one-line error naming the key.
bad_config() { # CASE JSON NEEDLE
  rm -rf "$tmp/v" && cp -r "$D/$1" "$tmp/v" &&
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["vkf_attention"]=json.loads(sys.argv[2]); json.dump(c, open(sys.argv[1], "w"))' \
      "$tmp/v/config.json" "$2"
  expect_error forward "$1 $2" "$3" --model "$tmp/v" --in input_ids=$G/$1/row1_input_ids.npy \
    --out logits="$tmp/x.npy"
}
bad_config span_llama '{"kind": "adaptive_span"}' 'vkf_attention.spans" (z per layer and head) is missing'
bad_config span_llama '{"kind": "adaptive_span", "spans": -1}' 'spans" of layer 0 is -1; a span is in \[0, 16777216\]'
bad_config span_llama '{"kind": "adaptive_span", "spans": [1, [2, 3, -0.5, 1]]}' 'spans" of layer 1 head 2 is -0.5'
bad_config span_llama '{"kind": "adaptive_span", "spans": [1, 2, 3]}' 'spans" has 3 entries, expected one per layer (num_hidden_layers 2)'
bad_config span_llama '{"kind": "adaptive_span", "spans": [1, [2, 3]]}' 'spans" of layer 1 has 2 entries, expected one per head (num_attention_heads 4)'
bad_config span_llama '{"kind": "adaptive_span", "spans": [1, "2"]}' 'spans" of layer 1 is not a number'
bad_config span_llama '{"kind": "adaptive_span", "spans": 4, "ramp": 0}' 'ramp" is 0; the ramp R is in (0, 16777216\] tokens'
bad_config span_llama '{"kind": "adaptive_span", "spans": 4, "ramp": -2}' 'ramp" is -2'
bad_config span_llama '{"kind": "adaptive_span", "spans": 4, "span": 3}' 'vkf_attention.span" does not apply to kind adaptive_span'
bad_config span_gpt2 '{"kind": "adaptive_span", "spans": 1e300}' 'spans" of layer 0 is 1e+300'
bad_config span_gpt2 '{"kind": "linear"}' 'kind linear is supported for model_type bert and llama, not "gpt2"'
# Not on an encoder: the span is a distance into the past.
rm -rf "$tmp/v" && cp -r "$D/eff_bert_linear" "$tmp/v" &&
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["vkf_attention"]={"kind": "adaptive_span", "spans": 2}; json.dump(c, open(sys.argv[1], "w"))' "$tmp/v/config.json"
expect_error forward "bert adaptive_span" 'adaptive_span is supported for the decoders' --model "$tmp/v" \
  --in input_ids=tests/models/golden/efficient/eff_bert_linear/row1_input_ids.npy --out last_hidden_state="$tmp/x.npy"
vkf_summary
