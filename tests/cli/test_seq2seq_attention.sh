#!/usr/bin/env bash
# D2L's Bahdanau attention encoder-decoder (model_type d2l_seq2seq_attention) against the
# PyTorch module written from D2L (tools/goldens/seeds_seq2seq_attention.py; checkpoint and
# goldens from tools/goldens/make_seq2seq_attention_golden.py): vkf forward's time-major encoder
# outputs, teacher-forced logits and every step's attention weights within 1e-4; one source with
# every valid length 1 .. 5; each row of the batch alone equal to its row of the batch; vkf
# generate's greedy ids equal predict_step's (each source alone and both as one batch); beams run
# and a batch of beams equals each source alone; vkf attn's weights per greedy step equal the
# reference's; then bad configurations and inputs, one line each.
set -u
. "$(dirname "$0")/lib.sh"
D=tests/models/data/d2l_attn_tiny
G=tests/models/golden/d2l_attn_tiny
PY=/usr/bin/python3 # the Debian python with python3-numpy (tools/dev/setup.sh)

# close NAME GOT WANT: max |got - want| <= 1e-4 and the shapes equal.
close() {
  $PY - "$2" "$3" <<'PY' || { bad "$1: $(cat "$tmp/cmp")"; return; }
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.shape == b.shape, (a.shape, b.shape)
err = float(np.abs(a - b).max())
assert err <= 1e-4, err
PY
  ok
}

run_forward() { # PREFIX OUTDIR: vkf forward over $G/PREFIX{input_ids,valid_lens,decoder_input_ids}
  "$VKF" forward --model "$D" --in input_ids="$G/$1input_ids.npy" --in valid_lens="$G/$1valid_lens.npy" \
    --in decoder_input_ids="$G/$1decoder_input_ids.npy" --out logits="$2/logits.npy" \
    --out attention_weights="$2/weights.npy" --out encoder_outputs="$2/enc.npy" 2>"$tmp/err"
}

mkdir -p "$tmp/full" "$tmp/lens"
if run_forward "" "$tmp/full"; then
  close "encoder outputs" "$tmp/full/enc.npy" "$G/encoder_outputs.npy"
  close "logits" "$tmp/full/logits.npy" "$G/logits.npy"
  close "attention weights" "$tmp/full/weights.npy" "$G/attention_weights.npy"
else
  bad "forward: $(cat "$tmp/err")"
fi
if run_forward lens_ "$tmp/lens"; then
  close "valid lengths 1..5 logits" "$tmp/lens/logits.npy" "$G/lens_logits.npy"
  close "valid lengths 1..5 weights" "$tmp/lens/weights.npy" "$G/lens_attention_weights.npy"
else
  bad "forward lens: $(cat "$tmp/err")"
fi
# --list declares each output's shape as forward writes it (attention_weights is [batch, target,
# seq]: one row a target step, one column a source token), batch, seq and target read from the
# inputs given.
"$VKF" forward --model "$D" --list >"$tmp/list" 2>&1 || bad "list: $(cat "$tmp/list")"
$PY - "$tmp/list" "$G" "$tmp/full" <<'PY' && ok || bad "--list shapes differ from the written ones: $(cat "$tmp/list")"
import re, sys
import numpy as np
listing, g, out = sys.argv[1:]
b, s = np.load(g + "/input_ids.npy").shape
t = np.load(g + "/decoder_input_ids.npy").shape[1]
dims = {"batch": b, "seq": s, "target": t}
files = {"logits": "logits", "attention_weights": "weights", "encoder_outputs": "enc"}
seen = 0
for line in open(listing):
    m = re.match(r"output\s+(\S+)\s+\S+\s+\[(.*)\]", line)
    if not m:
        continue
    declared = tuple(dims[d] if d in dims else int(d) for d in m.group(2).split(", "))
    written = np.load(out + "/" + files[m.group(1)] + ".npy").shape
    assert declared == written, (m.group(1), m.group(2), written)
    seen += 1
assert seen == 3, seen
PY
# The encoder alone (no decoder_input_ids) gives the same outputs.
"$VKF" forward --model "$D" --in input_ids="$G/input_ids.npy" --out encoder_outputs="$tmp/enc1.npy" 2>"$tmp/err" &&
  close "encoder alone" "$tmp/enc1.npy" "$G/encoder_outputs.npy" || bad "encoder alone: $(cat "$tmp/err")"

# Each row alone equals its row of the batch.
for r in 0 1 2; do
  $PY - "$G" "$tmp/row" "$r" <<'PY'
import os, sys
import numpy as np
g, out, r = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(out, exist_ok=True)
for n in ("input_ids", "valid_lens", "decoder_input_ids"):
    np.save(os.path.join(out, "row_" + n + ".npy"), np.load(os.path.join(g, n + ".npy"))[r:r + 1])
PY
  if "$VKF" forward --model "$D" --in input_ids="$tmp/row/row_input_ids.npy" \
    --in valid_lens="$tmp/row/row_valid_lens.npy" --in decoder_input_ids="$tmp/row/row_decoder_input_ids.npy" \
    --out logits="$tmp/row/logits.npy" --out attention_weights="$tmp/row/weights.npy" 2>"$tmp/err"; then
    $PY -c 'import sys, numpy as np; r = int(sys.argv[3])
for a, b in ((sys.argv[1] + "/logits.npy", sys.argv[2] + "/logits.npy"), (sys.argv[1] + "/weights.npy", sys.argv[2] + "/weights.npy")):
    x, y = np.load(a), np.load(b)[r:r + 1]
    assert x.shape == y.shape and np.abs(x - y).max() <= 1e-5, (a, np.abs(x - y).max())' "$tmp/row" "$tmp/full" "$r" &&
      ok || bad "row $r alone differs from the batch"
  else
    bad "row $r: $(cat "$tmp/err")"
  fi
done

# Greedy: each source alone, then both as one batch (each gets what it gets alone).
ids() { $PY -c 'import sys, numpy as np; print(",".join(map(str, np.load(sys.argv[1]).tolist())))' "$1"; }
for i in 0 1; do
  if "$VKF" generate --model "$D" --ids "$(ids "$G/greedy_${i}_src.npy")" --max-new-tokens 10 --json \
    >"$tmp/g$i.json" 2>"$tmp/err"; then
    $PY -c 'import json, sys, numpy as np; got = json.load(open(sys.argv[1]))["generated_ids"]; want = np.load(sys.argv[2]).tolist(); assert got == want, (got, want)' \
      "$tmp/g$i.json" "$G/greedy_${i}_ids.npy" && ok || bad "greedy $i: $(cat "$tmp/g$i.json")"
  else
    bad "greedy $i: $(cat "$tmp/err")"
  fi
done
"$VKF" generate --model "$D" --ids "$(ids "$G/greedy_0_src.npy")" --ids "$(ids "$G/greedy_1_src.npy")" \
  --max-new-tokens 10 --json >"$tmp/gb.json" 2>"$tmp/err" &&
  $PY -c 'import json, sys; rows = json.load(open(sys.argv[1])); a = [json.load(open(f))["generated_ids"] for f in sys.argv[2:]]; assert [r["generated_ids"] for r in rows] == a, (rows, a)' \
    "$tmp/gb.json" "$tmp/g0.json" "$tmp/g1.json" && ok || bad "greedy batch: $(cat "$tmp/err")"

# Beams: each source alone and both as one batch give the same sequences.
for i in 0 1; do
  "$VKF" generate --model "$D" --ids "$(ids "$G/greedy_${i}_src.npy")" --max-new-tokens 8 --num-beams 3 \
    --json >"$tmp/b$i.json" 2>"$tmp/err" && ok || bad "beams $i: $(cat "$tmp/err")"
done
"$VKF" generate --model "$D" --ids "$(ids "$G/greedy_0_src.npy")" --ids "$(ids "$G/greedy_1_src.npy")" \
  --max-new-tokens 8 --num-beams 3 --json >"$tmp/bb.json" 2>"$tmp/err" &&
  $PY -c 'import json, sys; rows = json.load(open(sys.argv[1])); a = [json.load(open(f))["generated_ids"] for f in sys.argv[2:]]; assert [r["generated_ids"] for r in rows] == a and all(a), (rows, a)' \
    "$tmp/bb.json" "$tmp/b0.json" "$tmp/b1.json" && ok || bad "beam batch: $(cat "$tmp/err")"

# vkf attn: each greedy step's weights over the source (D2L's heatmaps) equal the reference's,
# the chosen ids equal predict_step's, and the figure is a PNG of a [steps, S] map.
for i in 0 1; do
  if "$VKF" attn --model "$D" --max-new-tokens 10 --out "$tmp/attn$i" --npy "$tmp/attn$i" \
    "$(ids "$G/greedy_${i}_src.npy")" >"$tmp/attn.out" 2>"$tmp/err"; then
    close "attn weights $i" "$tmp/attn$i/attn_0.npy" "$G/greedy_${i}_weights.npy"
    $PY -c 'import sys, numpy as np; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); assert a.tolist() == b.tolist(), (a, b)' \
      "$tmp/attn$i/attn_0_ids.npy" "$G/greedy_${i}_ids.npy" && ok || bad "attn ids $i"
    grep -qx "$tmp/attn$i/attn_0_steps.png" "$tmp/attn.out" &&
      [ "$(head -c 8 "$tmp/attn$i/attn_0_steps.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] &&
      ok || bad "attn figure $i: $(cat "$tmp/attn.out")"
  else
    bad "attn $i: $(cat "$tmp/err")"
  fi
done
# Fewer steps than the reference took: its first rows.
"$VKF" attn --model "$D" --max-new-tokens 4 --out "$tmp/attn4" --npy "$tmp/attn4" \
  "$(ids "$G/greedy_1_src.npy")" >/dev/null 2>"$tmp/err" &&
  $PY -c 'import sys, numpy as np; a, b = np.load(sys.argv[1]), np.load(sys.argv[2])[:4]; assert a.shape == b.shape and np.abs(a - b).max() <= 1e-4' \
    "$tmp/attn4/attn_0.npy" "$G/greedy_1_weights.npy" && ok || bad "attn 4 steps: $(cat "$tmp/err")"
expect_error attn "attn source id past the vocabulary" "source id 23 at 1 is not an id in \[0, 23)" \
  --model "$D" --out "$tmp/attnx" 5,23
expect_error attn "attn bad ids" 'source "5,x": entry 1 is not a non-negative integer' \
  --model "$D" --out "$tmp/attnx" 5,x
expect_error attn "attn --layer" "do not apply" --model "$D" --layer 0 --out "$tmp/attnx" 5,6

# Bad configurations: one line naming the field or tensor.
bad_case() { # NAME NEEDLE PYTHON-EDIT (of `c`, the config dict) [TENSOR-TO-DROP]
  edit_checkpoint "$D" "$tmp/bad" "$3" "${4:-}"
  expect_error forward "$1" "$2" --model "$tmp/bad" --in input_ids="$G/input_ids.npy" --out encoder_outputs="$tmp/o.npy"
}
bad_case "missing num_layers" 'missing field "num_layers" (D2L.* needs src_vocab_size' 'del c["num_layers"]'
bad_case "num_layers 0" 'field "num_layers" is 0, must be > 0' 'c["num_layers"] = 0'
bad_case "negative embed_size" 'field "embed_size" is -6, must be > 0' 'c["embed_size"] = -6'
bad_case "dropout 1" 'field "dropout" 1 is outside \[0, 1)' 'c["dropout"] = 1'
bad_case "num_hiddens mismatch" "decoder.attention.W_q.weight" 'c["num_hiddens"] = 10'
bad_case "embed mismatch" "encoder.embedding.weight" 'c["embed_size"] = 7'
bad_case "fewer layers" "more layers than num_layers 1" 'c["num_layers"] = 1'
bad_case "more layers" "weight_ih_l2" 'c["num_layers"] = 3'
bad_case "missing tensor" "decoder.dense.bias" 'pass' decoder.dense.bias
bad_case "missing GRU" "encoder's GRU is missing" 'pass' encoder.rnn.rnn.weight_ih_l0

# Bad inputs.
$PY -c 'import numpy as np, sys; np.save(sys.argv[1], np.array([2, 0, 1])); np.save(sys.argv[2], np.array([1, 2]))' \
  "$tmp/zero.npy" "$tmp/two.npy"
expect_error forward "valid length 0" "input valid_lens: value 0 at \[1\] is below 1" --model "$D" \
  --in input_ids="$G/input_ids.npy" --in valid_lens="$tmp/zero.npy" --out encoder_outputs="$tmp/o.npy"
expect_error forward "valid_lens batch" "valid_lens has batch 2 but input_ids has 3" --model "$D" \
  --in input_ids="$G/input_ids.npy" --in valid_lens="$tmp/two.npy" --out encoder_outputs="$tmp/o.npy"
expect_error forward "logits without target" "output logits needs input decoder_input_ids" --model "$D" \
  --in input_ids="$G/input_ids.npy" --out logits="$tmp/o.npy"
expect_error forward "f16" "runs in f32 only" --model "$D" --fp16 \
  --in input_ids="$G/input_ids.npy" --out encoder_outputs="$tmp/o.npy"
expect_error generate "source id past the vocabulary" "not an id in \[0, 23)" --model "$D" --ids 5,23 --max-new-tokens 2
vkf_summary
