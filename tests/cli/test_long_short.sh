#!/usr/bin/env bash
# config.json's "vkf_attention" kind long_short (issue 33): tiny Llama (grouped-query heads,
# DualLN, 45 tokens over two sparse blocks; an odd window, no DualLN, a partial last segment),
# GPT-2 (a segment shorter than the window) and BERT (bidirectional, 70 tokens over three blocks)
# checkpoints of tools/goldens/make_long_short_golden.py against tools/goldens/long_short_ref.py (the paper's
# equations patched into transformers 4.38.2, dense float64): vkf forward within 1e-4 for a batch
# of two (row 1 right-padded) and for row 1 alone, the batch's row equal to the row alone, the
# mobile profile; vkf generate (the KV cache: prefill, chunked prefill, decode steps recomputing the
# segments from the cache) against the reference's full forward per step (raw logits within 1e-4,
# ids of a batch of two prompts); --fp16 within 5e-2; long-short is what runs (the same weights
# without it differ); bad configurations and tensors, each a one-line error naming the key.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
G=tests/models/golden/long_short
NPY=tests/cli/npy_tool.py
TOL=1e-4

# forward CASE PREFIX OUT WHAT [ARGS...]: WHAT (logits, last_hidden_state) of PREFIX*.npy.
forward() {
  local m=$1 p=$2 out=$3 what=$4
  shift 4
  "$VKF" forward --model "$D/$m" --in input_ids=$G/$m/${p}input_ids.npy \
    --in attention_mask=$G/$m/${p}attention_mask.npy --out $what="$out" "$@" 2>"$tmp/err"
}

for c in ls_llama:logits ls_llama_odd:logits ls_gpt2:logits ls_bert:last_hidden_state; do
  m=${c%%:*} what=${c#*:}
  for p in "" row1_; do
    forward $m "$p" "$tmp/y.npy" $what && python3 $NPY compare "$tmp/y.npy" $G/$m/${p}$what.npy $TOL && ok ||
      bad "$m ${p:-batch}: $(cat "$tmp/err")"
  done
  if in_base_run; then
    VKF_DEVICE_PROFILE=mobile forward $m "" "$tmp/ym.npy" $what &&
      python3 $NPY compare "$tmp/ym.npy" $G/$m/$what.npy $TOL && ok || bad "$m mobile: $(cat "$tmp/err")"
  fi
  forward $m "" "$tmp/y16.npy" $what --fp16 && python3 $NPY compare "$tmp/y16.npy" $G/$m/$what.npy 5e-2 && ok ||
    bad "$m --fp16: $(cat "$tmp/err")"
done

# The batch's row 1 (its kept tokens) is the row alone.
for c in ls_llama:logits ls_bert:last_hidden_state; do
  m=${c%%:*} what=${c#*:}
  forward $m "" "$tmp/b.npy" $what && forward $m row1_ "$tmp/a.npy" $what &&
    python3 -c '
import sys
sys.path.insert(0, "tests/cli")
import npy_tool as t
shape_b, b = t.read(sys.argv[1])[:2]
shape_a, a = t.read(sys.argv[2])[:2]
n, w = shape_a[1], shape_b[2]
row = [b[(shape_b[1] + i) * w + j] for i in range(n) for j in range(w)]
sys.exit(0 if max(abs(x - y) for x, y in zip(row, a)) <= 1e-5 else 1)
' "$tmp/b.npy" "$tmp/a.npy" && ok || bad "$m batch row 1 vs alone"
done

# Long-short is what runs: without the key the same weights give plain softmax attention.
rm -rf "$tmp/s" && cp -r "$D/ls_llama" "$tmp/s" &&
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); del c["vkf_attention"]; json.dump(c, open(sys.argv[1], "w"))' "$tmp/s/config.json" &&
  "$VKF" forward --model "$tmp/s" --in input_ids=$G/ls_llama/input_ids.npy --out logits="$tmp/soft.npy" 2>"$tmp/err" &&
  ! python3 $NPY compare "$tmp/soft.npy" $G/ls_llama/logits.npy 1e-2 >/dev/null && ok || bad "plain softmax differs: $(cat "$tmp/err")"

# Generation: prefill, then decode steps against the cache, against the reference's full forward
# of the whole sequence at every step.
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
for m in ls_llama ls_llama_odd ls_gpt2; do
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
  VKF_DEVICE_PROFILE=mobile "$VKF" generate --model $D/ls_llama --greedy --ignore-eos --max-new-tokens 12 \
    --json --ids $P0 --ids $P1 >"$tmp/g.json" 2>"$tmp/err" && same_ids "$tmp/g.json" ls_llama && ok ||
    bad "ls_llama generate mobile: $(cat "$tmp/err")"
fi

# The bench: one row per N, long-short beside dense (both forms); bad options refused.
for form in "" --causal; do
  "$VKF" bench attention --kind long_short $form --n 256 --window 16 --rank 4 --runs 1 --warmup 0 \
    >"$tmp/b.txt" 2>"$tmp/err" &&
    grep -q '^| 256 | [0-9.]* ± [0-9.]* | [0-9.]* ± [0-9.]* | [0-9.]* |$' "$tmp/b.txt" && ok ||
    bad "bench long_short $form: $(cat "$tmp/b.txt" "$tmp/err")"
done
"$VKF" bench attention --kind long_short --window 0 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'bad --window "0"' "$tmp/err" && ok || bad "bench --window 0: $(cat "$tmp/err")"

# Bad configurations on a copy of a checkpoint: each a one-line error naming the key.
bad_config() { # CASE JSON NEEDLE
  rm -rf "$tmp/v" && cp -r "$D/$1" "$tmp/v" &&
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["vkf_attention"]=json.loads(sys.argv[2]); json.dump(c, open(sys.argv[1], "w"))' \
      "$tmp/v/config.json" "$2"
  expect_error forward "$1 $2" "$3" --model "$tmp/v" --in input_ids=$G/$1/row1_input_ids.npy \
    --out logits="$tmp/x.npy"
}
bad_config ls_llama '{"kind": "long_short", "rank": 2}' 'vkf_attention.window" is missing'
bad_config ls_llama '{"kind": "long_short", "window": 4}' 'vkf_attention.rank" is missing'
bad_config ls_llama '{"kind": "long_short", "window": 0, "rank": 2}' 'window'
bad_config ls_llama '{"kind": "long_short", "window": 4, "rank": -1}' 'rank'
bad_config ls_llama '{"kind": "long_short", "window": 4, "rank": 2, "segment": 0}' 'segment'
bad_config ls_llama '{"kind": "long_short", "window": 4, "rank": 2, "segment": 1e12}' 'segment'
bad_config ls_llama '{"kind": "long_short", "window": 4, "rank": 2, "dual_ln": 1}' 'dual_ln'
bad_config ls_llama '{"kind": "long_short", "window": 4, "rank": 2, "spans": 3}' 'vkf_attention.spans" does not apply to kind long_short'
# A rank the checkpoint's projections do not have, and DualLN without its norms.
bad_config ls_llama '{"kind": "long_short", "window": 4, "rank": 3, "segment": 5}' 'vkf_long_short.proj'
bad_config ls_llama_odd '{"kind": "long_short", "window": 3, "rank": 7, "segment": 4}' 'vkf_long_short.norm_local.weight'
vkf_summary
