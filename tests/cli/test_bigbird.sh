#!/usr/bin/env bash
# BigBirdModel through vkf forward against transformers 4.38.2 (goldens from
# tools/goldens/make_bigbird_golden.py): last_hidden_state at unmasked positions and pooler_output within
# 1e-3 for block_sparse with 1..3 random blocks (an odd head dim, BF16 storage), the fallback to
# original_full for a short sequence, original_full, the 1024-token length, BigBirdForMaskedLM's
# and BigBirdForSequenceClassification's logits; a batch of two equal
# to each row alone; the mobile device profile; --fp16; then bad input, one line each.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
G=tests/models/golden/bigbird
npy="python3 tests/cli/npy_tool.py"

# run MODEL CASE OUT_PREFIX [ENV...]: vkf forward on the case's inputs (and logits for a head).
run() {
  local m=$1 c=$2 o=$3 logits=()
  shift 3
  [ -f "$G/$c/logits.npy" ] && logits=(--out logits=$o.l.npy)
  env "$@" "$VKF" forward --model "$D/$m" --in input_ids=$G/$c/input_ids.npy \
    --in attention_mask=$G/$c/attention_mask.npy --in token_type_ids=$G/$c/token_type_ids.npy \
    --out last_hidden_state=$o.h.npy --out pooler_output=$o.p.npy "${logits[@]}" 2>"$tmp/err"
}

cases="bigbird_tiny:sparse_r2 bigbird_tiny:fallback bigbird_tiny_r1:sparse_r1_odd
  bigbird_tiny_r3:sparse_r3_bf16 bigbird_full_tiny:full bigbird_tiny:len1024 bigbird_mlm_tiny:mlm
  bigbird_cls_tiny:cls"
for mc in $cases; do
  m=${mc%%:*} c=${mc#*:} logits=()
  [ -f "$G/$c/logits.npy" ] && logits=("$tmp/$c.l.npy")
  if run "$m" "$c" "$tmp/$c"; then
    python3 tests/cli/bigbird_check.py "$G/$c" "$tmp/$c.h.npy" "$tmp/$c.p.npy" 1e-3 "${logits[@]}" &&
      ok || bad "$c"
  else
    bad "$c: $(cat "$tmp/err")"
  fi
done

# Each row alone gives what it gets in the batch of two.
for mc in bigbird_tiny:sparse_r2 bigbird_tiny:fallback bigbird_tiny_r1:sparse_r1_odd; do
  m=${mc%%:*} c=${mc#*:}
  for r in 0 1; do
    mkdir -p "$tmp/$c.row$r"
    for f in input_ids attention_mask token_type_ids; do
      $npy rows "$G/$c/$f.npy" $r 1 "$tmp/$c.row$r/$f.npy"
    done
    "$VKF" forward --model "$D/$m" --in input_ids=$tmp/$c.row$r/input_ids.npy \
      --in attention_mask=$tmp/$c.row$r/attention_mask.npy \
      --in token_type_ids=$tmp/$c.row$r/token_type_ids.npy \
      --out last_hidden_state=$tmp/$c.row$r.h.npy 2>"$tmp/err" || bad "$c row $r: $(cat "$tmp/err")"
  done
  out=
  $npy stack "$tmp/$c.rows.h.npy" "$tmp/$c.row0.h.npy" "$tmp/$c.row1.h.npy" &&
    out=$($npy compare "$tmp/$c.rows.h.npy" "$tmp/$c.h.npy" 1e-6) && ok || bad "$c: batch vs rows alone: $out"
done

# The small-device variants, and f16 weights and activations (looser: f16 rounding).
if run bigbird_tiny sparse_r2 "$tmp/mobile" VKF_DEVICE_PROFILE=mobile; then
  python3 tests/cli/bigbird_check.py "$G/sparse_r2" "$tmp/mobile.h.npy" "$tmp/mobile.p.npy" 1e-3 &&
    ok || bad "sparse_r2 mobile"
else
  bad "sparse_r2 mobile: $(cat "$tmp/err")"
fi
c=sparse_r2
if "$VKF" forward --model "$D/bigbird_tiny" --fp16 --in input_ids=$G/$c/input_ids.npy \
  --in attention_mask=$G/$c/attention_mask.npy --in token_type_ids=$G/$c/token_type_ids.npy \
  --out last_hidden_state=$tmp/f16.h.npy --out pooler_output=$tmp/f16.p.npy 2>"$tmp/err"; then
  python3 tests/cli/bigbird_check.py "$G/$c" "$tmp/f16.h.npy" "$tmp/f16.p.npy" 5e-2 && ok || bad "$c fp16"
else
  bad "$c fp16: $(cat "$tmp/err")"
fi

# Bad input: one line each.
ids=$G/sparse_r2/input_ids.npy
$npy ints "$tmp/oov.npy" 1,3 5,99,7
expect_error forward "id outside the vocabulary" "value 99 at \[0, 1\] is outside \[0, 99)" \
  --model $D/bigbird_tiny --in input_ids="$tmp/oov.npy" --out last_hidden_state="$tmp/x.npy"
$npy ints "$tmp/ids3.npy" 1,3 5,6,7
$npy ints "$tmp/types3.npy" 1,3 0,3,1
expect_error forward "token type outside type_vocab_size" "value 3 at \[0, 1\] is outside \[0, 3)" \
  --model $D/bigbird_tiny_r1 --in input_ids="$tmp/ids3.npy" --in token_type_ids="$tmp/types3.npy" \
  --out last_hidden_state="$tmp/x.npy"
$npy ints "$tmp/ids64.npy" 1,64 "$(seq -s, 1 64 | sed 's/[0-9]\+/5/g')"
expect_error forward "padded past the positions" \
  "64 tokens padded to 66 (a multiple of block_size 3) exceed max_position_embeddings 64" \
  --model $D/bigbird_tiny_r3 --in input_ids="$tmp/ids64.npy" --out last_hidden_state="$tmp/x.npy"
expect_error forward "unknown output" 'no output "logits"' \
  --model $D/bigbird_tiny --in input_ids=$ids --out logits="$tmp/x.npy"
# A damaged copy of bigbird_tiny: config.json edited by SED.
damaged() {
  rm -rf "$tmp/bad" && cp -r $D/bigbird_tiny "$tmp/bad" && sed -i "$1" "$tmp/bad/config.json"
}
damaged 's/"block_sparse"/"sparse"/'
expect_error forward "unknown attention_type" '"attention_type" value "sparse" is not supported' \
  --model "$tmp/bad" --in input_ids=$ids --out last_hidden_state="$tmp/x.npy"
damaged 's/"block_size": 4/"block_size": 0/'
expect_error forward "block_size 0" '"block_size"' \
  --model "$tmp/bad" --in input_ids=$ids --out last_hidden_state="$tmp/x.npy"
damaged 's/"num_random_blocks": 2/"num_random_blocks": -2/'
expect_error forward "negative num_random_blocks" '"num_random_blocks" -2 is outside' \
  --model "$tmp/bad" --in input_ids=$ids --out last_hidden_state="$tmp/x.npy"
damaged 's/"num_hidden_layers": 2/"num_hidden_layers": 3/'
expect_error forward "a layer missing from the file" 'encoder.layer.2.attention.self.query.weight.* not found' \
  --model "$tmp/bad" --in input_ids=$ids --out last_hidden_state="$tmp/x.npy"
damaged 's/"hidden_size": 32/"hidden_size": 36/'
expect_error forward "hidden_size not matching the file" 'embeddings.word_embeddings.weight' \
  --model "$tmp/bad" --in input_ids=$ids --out last_hidden_state="$tmp/x.npy"

vkf_summary
