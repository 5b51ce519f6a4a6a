#!/usr/bin/env bash
# NystromformerModel (tiny checkpoints of tools/goldens/make_nystromformer_golden.py) against transformers
# 4.38.2: vkf forward's last_hidden_state within 1e-3 for a batch of two (one row right-padded),
# and batch row 0 run alone against Hugging Face's row 0 alone (the original pseudo-inverse
# scaling takes one max over the whole batch, so a row alone differs from the row in a batch, in
# Hugging Face as here); landmarks with the conv skip (head dim 9), the per-head scaling without
# conv (F16 storage), full attention (num_landmarks == segment_means_seq_len, BF16 storage); the
# mobile device profile; --fp16 within 6e-2; then bad input, each a one-line error.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
G=tests/models/golden/nystromformer
NPY=tests/cli/npy_tool.py

# forward MODEL PREFIX OUT [ENV...]: last_hidden_state of the golden's inputs PREFIX*.npy.
forward() {
  local m=$1 p=$2 out=$3
  shift 3
  env "$@" "$VKF" forward --model "$D/$m" --in input_ids=$G/$m/${p}input_ids.npy \
    --in attention_mask=$G/$m/${p}attention_mask.npy --in token_type_ids=$G/$m/${p}token_type_ids.npy \
    --out last_hidden_state="$out" 2>"$tmp/err"
}

for m in nys_conv nys_perhead nys_full; do
  if forward $m "" "$tmp/h.npy"; then
    python3 $NPY compare "$tmp/h.npy" $G/$m/last_hidden_state.npy 1e-3 && ok || bad "$m batch"
  else
    bad "$m batch: $(cat "$tmp/err")"
  fi
  if forward $m row0_ "$tmp/h0.npy"; then
    python3 $NPY compare "$tmp/h0.npy" $G/$m/row0_last_hidden_state.npy 1e-3 && ok || bad "$m row 0 alone"
  else
    bad "$m row 0 alone: $(cat "$tmp/err")"
  fi
done
# Rows are independent with the per-head scaling: the batch's row 0 is the row alone.
forward nys_perhead "" "$tmp/hb.npy" && forward nys_perhead row0_ "$tmp/h0.npy" &&
  python3 $NPY rows "$tmp/hb.npy" 0 1 "$tmp/hb0.npy" &&
  python3 $NPY compare "$tmp/hb0.npy" "$tmp/h0.npy" 1e-5 && ok || bad "nys_perhead batch row 0 vs alone"
forward nys_conv "" "$tmp/hm.npy" VKF_DEVICE_PROFILE=mobile &&
  python3 $NPY compare "$tmp/hm.npy" $G/nys_conv/last_hidden_state.npy 1e-3 && ok ||
  bad "nys_conv mobile: $(cat "$tmp/err")"
# f16 weights and activations (the reductions, the conv and the pseudo-inverse in f16 storage).
for m in nys_conv nys_perhead; do
  "$VKF" forward --fp16 --model "$D/$m" --in input_ids=$G/$m/input_ids.npy \
    --in attention_mask=$G/$m/attention_mask.npy --in token_type_ids=$G/$m/token_type_ids.npy \
    --out last_hidden_state="$tmp/h16.npy" 2>"$tmp/err" &&
    python3 $NPY compare "$tmp/h16.npy" $G/$m/last_hidden_state.npy 6e-2 && ok || bad "$m --fp16: $(cat "$tmp/err")"
done

# Bad input.
m=$D/nys_conv
python3 $NPY ints64 "$tmp/ids8.npy" 1,8 5,6,7,8,9,10,11,12
expect_error forward "length other than segment_means_seq_len" "segment_means_seq_len = 16" \
  --model $m --in input_ids="$tmp/ids8.npy" --out last_hidden_state="$tmp/x.npy"
python3 $NPY ints64 "$tmp/oov.npy" 1,16 5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,97
expect_error forward "id outside the vocabulary" "input_ids: value 97" \
  --model $m --in input_ids="$tmp/oov.npy" --out last_hidden_state="$tmp/x.npy"
python3 $NPY ints64 "$tmp/tt.npy" 1,16 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2
expect_error forward "token type outside type_vocab_size" "token_type_ids: value 2" --model $m \
  --in input_ids=$G/nys_conv/row0_input_ids.npy --in token_type_ids="$tmp/tt.npy" --out last_hidden_state="$tmp/x.npy"
# config.json variants on a copy of the checkpoint.
variant() {
  rm -rf "$tmp/v" && cp -r $m "$tmp/v" &&
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c.update(json.loads(sys.argv[2])); json.dump(c, open(sys.argv[1], "w"))' \
      "$tmp/v/config.json" "$1"
}
variant '{"conv_kernel_size": 4}'
expect_error forward "even conv_kernel_size" 'field "conv_kernel_size" 4 is even' \
  --model "$tmp/v" --in input_ids=$G/nys_conv/row0_input_ids.npy --out last_hidden_state="$tmp/x.npy"
variant '{"conv_kernel_size": 7}'
expect_error forward "conv weight of another kernel size" 'attention.self.conv.weight' \
  --model "$tmp/v" --in input_ids=$G/nys_conv/row0_input_ids.npy --out last_hidden_state="$tmp/x.npy"
variant '{"num_landmarks": 5}'
expect_error forward "landmarks not dividing the segment" '"segment_means_seq_len" 16 is not a multiple of "num_landmarks" 5' \
  --model "$tmp/v" --in input_ids=$G/nys_conv/row0_input_ids.npy --out last_hidden_state="$tmp/x.npy"
variant '{"inv_coeff_init_option": "yes"}'
expect_error forward "inv_coeff_init_option not a bool" 'inv_coeff_init_option' \
  --model "$tmp/v" --in input_ids=$G/nys_conv/row0_input_ids.npy --out last_hidden_state="$tmp/x.npy"
vkf_summary
