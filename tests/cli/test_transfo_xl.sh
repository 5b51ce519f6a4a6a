#!/usr/bin/env bash
# Transformer-XL (model_type transfo-xl) against Hugging Face's TransfoXLLMHeadModel /
# TransfoXLModel (transformers 4.36.2; checkpoints and goldens from
# tools/goldens/make_transfo_xl_golden.py): for each tiny checkpoint (adaptive input and softmax
# with div_val 2; no clusters with projections, pre_lnorm and shared biases; same_length with
# clamp_len) three consecutive segments through vkf forward, the mems carried between the calls
# (--in mems / --out mems, [n_layer, M, batch, d_model]), the first without mems (Hugging Face's
# mem_len zero rows), each segment's log-probabilities or hidden states and mems within 1e-3; one
# segment from an empty (0-row) memory; each row of the batch alone equal to its row of the
# batch; vkf generate's greedy ids equal generate()'s for 16 tokens, a batch of prompts equal to
# each alone; then bad configurations and inputs, one line each.
set -u
. "$(dirname "$0")/lib.sh"
G=tests/models/golden/transfo_xl
PY=/usr/bin/python3 # the Debian python with python3-numpy (tools/dev/setup.sh)

# close NAME GOT WANT: max |got - want| <= 1e-3 and the shapes equal.
close() {
  $PY - "$2" "$3" 2>"$tmp/cmp" <<'PY' || { bad "$1: $(cat "$tmp/cmp")"; return; }
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.shape == b.shape, (a.shape, b.shape)
err = float(np.abs(a - b).max()) if a.size else 0.0
assert err <= 1e-3, err
PY
  ok
}

for name in txl_adaptive txl_plain txl_same; do
  D=tests/models/data/$name
  out=prediction_scores
  [ -f "$G/${name}_seg0_last_hidden_state.npy" ] && out=last_hidden_state
  mems=()
  for k in 0 1 2; do
    if "$VKF" forward --model "$D" --in input_ids="$G/${name}_seg${k}_input_ids.npy" "${mems[@]}" \
      --out $out="$tmp/${name}_$k.npy" --out mems="$tmp/${name}_mems$k.npy" 2>"$tmp/err"; then
      close "$name segment $k $out" "$tmp/${name}_$k.npy" "$G/${name}_seg${k}_$out.npy"
      close "$name segment $k mems" "$tmp/${name}_mems$k.npy" "$G/${name}_seg${k}_mems.npy"
    else
      bad "$name segment $k: $(cat "$tmp/err")"
    fi
    mems=(--in mems="$tmp/${name}_mems$k.npy")
  done
  if "$VKF" forward --model "$D" --in input_ids="$G/${name}_empty_input_ids.npy" \
    --in mems="$G/${name}_empty_mems_in.npy" --out $out="$tmp/${name}_e.npy" \
    --out mems="$tmp/${name}_emems.npy" 2>"$tmp/err"; then
    close "$name empty memory $out" "$tmp/${name}_e.npy" "$G/${name}_empty_$out.npy"
    close "$name empty memory mems" "$tmp/${name}_emems.npy" "$G/${name}_empty_mems.npy"
  else
    bad "$name empty memory: $(cat "$tmp/err")"
  fi
  # Each row alone (segment 1 on segment 0's mems) equals its row of the batch.
  for r in 0 1; do
    $PY - "$G/${name}_seg1_input_ids.npy" "$tmp/${name}_mems0.npy" "$tmp/row" "$r" <<'PY'
import os, sys
import numpy as np
ids, mems, out, r = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
os.makedirs(out, exist_ok=True)
np.save(os.path.join(out, "ids.npy"), np.load(ids)[r:r + 1])
np.save(os.path.join(out, "mems.npy"), np.ascontiguousarray(np.load(mems)[:, :, r:r + 1]))
PY
    if "$VKF" forward --model "$D" --in input_ids="$tmp/row/ids.npy" --in mems="$tmp/row/mems.npy" \
      --out $out="$tmp/row/out.npy" --out mems="$tmp/row/next.npy" 2>"$tmp/err"; then
      $PY -c 'import sys, numpy as np; r = int(sys.argv[5])
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])[r:r + 1]
m, n = np.load(sys.argv[3]), np.load(sys.argv[4])[:, :, r:r + 1]
assert a.shape == b.shape and np.abs(a - b).max() <= 1e-5, np.abs(a - b).max()
assert m.shape == n.shape and np.abs(m - n).max() <= 1e-5, np.abs(m - n).max()' \
        "$tmp/row/out.npy" "$tmp/${name}_1.npy" "$tmp/row/next.npy" "$tmp/${name}_mems1.npy" "$r" &&
        ok || bad "$name row $r alone differs from the batch"
    else
      bad "$name row $r: $(cat "$tmp/err")"
    fi
  done
done

# Greedy generation: the memory replaces the KV cache as generate() feeds it (the prompt on
# mem_len zero rows, then the last token and the mems); 16 tokens equal Hugging Face's; two
# prompts as one batch each get what they get alone.
ids() { $PY -c 'import sys, numpy as np; print(",".join(map(str, np.load(sys.argv[1]).reshape(-1).tolist())))' "$1"; }
for name in txl_adaptive txl_plain; do
  D=tests/models/data/$name
  if "$VKF" generate --model "$D" --ids "$(ids "$G/${name}_greedy_prompt.npy")" --max-new-tokens 16 \
    --json >"$tmp/$name.json" 2>"$tmp/err"; then
    $PY -c 'import json, sys, numpy as np; got = json.load(open(sys.argv[1]))["generated_ids"]; want = np.load(sys.argv[2]).tolist(); assert got == want, (got, want)' \
      "$tmp/$name.json" "$G/${name}_greedy_ids.npy" 2>"$tmp/cmp" && ok || bad "$name greedy: $(cat "$tmp/cmp")"
  else
    bad "$name greedy: $(cat "$tmp/err")"
  fi
done
D=tests/models/data/txl_plain
"$VKF" generate --model "$D" --ids 3,1,4 --max-new-tokens 6 --json >"$tmp/a.json" 2>"$tmp/err" &&
  "$VKF" generate --model "$D" --ids "$(ids "$G/txl_plain_greedy_prompt.npy")" --max-new-tokens 6 --json \
    >"$tmp/b.json" 2>>"$tmp/err" &&
  "$VKF" generate --model "$D" --ids 3,1,4 --ids "$(ids "$G/txl_plain_greedy_prompt.npy")" --max-new-tokens 6 \
    --json >"$tmp/ab.json" 2>>"$tmp/err" &&
  $PY -c 'import json, sys; rows = json.load(open(sys.argv[1])); a = [json.load(open(f))["generated_ids"] for f in sys.argv[2:]]; assert [r["generated_ids"] for r in rows] == a, (rows, a)' \
    "$tmp/ab.json" "$tmp/a.json" "$tmp/b.json" && ok || bad "greedy batch: $(cat "$tmp/err")"
expect_error generate "base model generates nothing" "has no language-model head" \
  --model tests/models/data/txl_same --ids 1,2 --max-new-tokens 2

# The declared inputs and outputs.
"$VKF" forward --model tests/models/data/txl_adaptive --list >"$tmp/list" 2>&1 &&
  grep -q "mems .*\[2, memory, batch, 12\]" "$tmp/list" &&
  grep -q "prediction_scores .*\[batch, seq, 37\]" "$tmp/list" && ok || bad "--list: $(cat "$tmp/list")"

# Bad configurations and inputs: one line naming the key or tensor.
D=tests/models/data/txl_adaptive
bad_case() { # NAME NEEDLE PYTHON-EDIT (of `c`, the config dict) [TENSOR-TO-DROP]
  edit_checkpoint "$D" "$tmp/bad" "$3" "${4:-}"
  expect_error forward "$1" "$2" --model "$tmp/bad" --in input_ids="$G/txl_adaptive_seg0_input_ids.npy" \
    --out prediction_scores="$tmp/o.npy"
}
bad_case "mem_len negative" 'field "mem_len" is -1' 'c["mem_len"] = -1'
bad_case "cutoffs not increasing" 'field "cutoffs" is not increasing' 'c["cutoffs"] = [23, 11]'
bad_case "cutoff past the vocabulary" 'field "cutoffs" is not increasing' 'c["cutoffs"] = [11, 37]'
bad_case "div_val 0" 'field "div_val" is 0' 'c["div_val"] = 0'
bad_case "attn_type 1" 'field "attn_type" is 1' 'c["attn_type"] = 1'
bad_case "sample_softmax" 'field "sample_softmax" is 8' 'c["sample_softmax"] = 8'
bad_case "width mismatch" "word_emb.emb_layers.1.weight" 'c["div_val"] = 3'
bad_case "missing tensor" "transformer.layers.1.dec_attn.r_net.weight" 'pass' transformer.layers.1.dec_attn.r_net.weight
bad_case "missing head tensor" "crit.cluster_bias" 'pass' crit.cluster_bias
$PY -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros((2, 3, 1, 12), np.float32)); np.save(sys.argv[2], np.zeros((3, 3, 2, 12), np.float32))' \
  "$tmp/mb.npy" "$tmp/ml.npy"
expect_error forward "mems batch" "mems has batch 1 but input_ids has 2" --model "$D" \
  --in input_ids="$G/txl_adaptive_seg0_input_ids.npy" --in mems="$tmp/mb.npy" --out prediction_scores="$tmp/o.npy"
# Memory + segment past the keys' limit: the message names the rows and the limit, not a batch
# (it said "batch 1" for a batch of 2: the one-row probe build's).
$PY -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros((2, 65535, 2, 12), np.float32))' "$tmp/mbig.npy"
expect_error forward "mems too long" "a segment of 4 tokens on 65535 memory rows (mems dim 1): expected 1 .. 16384 tokens and at most 65536 memory rows + tokens" \
  --model "$D" --in input_ids="$G/txl_adaptive_seg0_input_ids.npy" --in mems="$tmp/mbig.npy" --out prediction_scores="$tmp/o.npy"
rm -f "$tmp/mbig.npy"
expect_error forward "mems layers" "input mems: shape \[3,3,2,12\], expected" --model "$D" \
  --in input_ids="$G/txl_adaptive_seg0_input_ids.npy" --in mems="$tmp/ml.npy" --out prediction_scores="$tmp/o.npy"
expect_error forward "base model has no head" 'has no output "prediction_scores"' --model tests/models/data/txl_same \
  --in input_ids="$G/txl_same_seg0_input_ids.npy" --out prediction_scores="$tmp/o.npy"
# The bench: the model's relative attention beside dense causal over the same keys, one row per
# segment length; a bad option refused.
"$VKF" bench attention --kind relative --n 48 --mem 20 --heads 2 --dim 16 --runs 1 --warmup 0 \
  >"$tmp/b.txt" 2>"$tmp/err" &&
  grep -q '^| 48 | 20 | [0-9.]* ± [0-9.]* | [0-9.]* ± [0-9.]* | [0-9.]*× |$' "$tmp/b.txt" && ok ||
  bad "bench relative: $(cat "$tmp/b.txt" "$tmp/err")"
"$VKF" bench attention --kind relative --n 0 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'bad --n "0"' "$tmp/err" && ok || bad "bench relative --n 0: $(cat "$tmp/err")"
vkf_summary
