#!/usr/bin/env bash
# LongformerModel through vkf forward against transformers 4.38.2 (tools/goldens/make_longformer_golden.py):
# last_hidden_state (real positions) and pooler_output within 1e-3 with and without global tokens,
# per-layer windows and a BF16 checkpoint; left padding at every position; --fp16 within f16 rounding; the token and sequence classification heads' logits
# (an F16 checkpoint) and the question-answering head's start/end logits (with and without a
# global mask; a row without 3 sep tokens is an error); each row alone equals its row of the batch, also when
# the tiny-buffers profile splits the batch into runs; the mobile profile; then bad input as one
# line (a global_attention_mask of the wrong shape, an odd attention_window, a window that does
# not divide the padded length).
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
G=tests/models/golden
NPY="python3 tests/cli/npy_tool.py"

for m in longformer_tiny longformer_tiny_bf16 longformer_wide_tiny; do
  g=$G/$m
  in="--in input_ids=$g/input_ids.npy --in attention_mask=$g/attention_mask.npy"
  if "$VKF" forward --model "$D/$m" $in --in global_attention_mask=$g/global_attention_mask.npy \
    --out last_hidden_state=$tmp/h.npy --out pooler_output=$tmp/p.npy 2>"$tmp/err"; then
    python3 tests/cli/longformer_check.py "$g" "" "$tmp/h.npy" "$tmp/p.npy" && ok || bad "$m global"
  else
    bad "$m global: $(cat "$tmp/err")"
  fi
  if "$VKF" forward --model "$D/$m" $in --out last_hidden_state=$tmp/hl.npy \
    --out pooler_output=$tmp/pl.npy 2>"$tmp/err"; then
    python3 tests/cli/longformer_check.py "$g" _local "$tmp/hl.npy" "$tmp/pl.npy" && ok || bad "$m local"
  else
    bad "$m local: $(cat "$tmp/err")"
  fi
  # Each row alone (its own global tokens) equals its row of the batch.
  for r in 0 1; do
    for k in input_ids attention_mask global_attention_mask; do $NPY rows $g/$k.npy $r 1 $tmp/$k$r.npy; done
    $NPY rows $tmp/h.npy $r 1 $tmp/h_batch$r.npy
    "$VKF" forward --model "$D/$m" --in input_ids=$tmp/input_ids$r.npy \
      --in attention_mask=$tmp/attention_mask$r.npy --in global_attention_mask=$tmp/global_attention_mask$r.npy \
      --out last_hidden_state=$tmp/h$r.npy 2>"$tmp/err" &&
      $NPY compare $tmp/h$r.npy $tmp/h_batch$r.npy 1e-5 && ok || bad "$m row $r alone: $(cat "$tmp/err")"
  done
  # Runs of fewer rows (64 KiB buffers split the batch) give the same batch (a row of the wide
  # model alone needs more than 64 KiB).
  if [ $m != longformer_wide_tiny ]; then
    VKF_DEVICE_PROFILE=tiny-buffers "$VKF" forward --model "$D/$m" $in \
      --in global_attention_mask=$g/global_attention_mask.npy --out last_hidden_state=$tmp/hs.npy 2>"$tmp/err" &&
      $NPY compare $tmp/hs.npy $tmp/h.npy 1e-5 && ok || bad "$m split batch: $(cat "$tmp/err")"
  fi
  VKF_DEVICE_PROFILE=mobile "$VKF" forward --model "$D/$m" $in \
    --in global_attention_mask=$g/global_attention_mask.npy --out last_hidden_state=$tmp/hm.npy \
    --out pooler_output=$tmp/pm.npy 2>"$tmp/err" &&
    python3 tests/cli/longformer_check.py "$g" "" "$tmp/hm.npy" "$tmp/pm.npy" && ok || bad "$m mobile: $(cat "$tmp/err")"
done
# Left padding, every position (HF zeroes the attention output of padding rows, and so does the
# scatter): the pooler reads a padding position.
g=$G/longformer_tiny
"$VKF" forward --model "$D/longformer_tiny" --in input_ids=$g/input_ids_leftpad.npy \
  --in attention_mask=$g/attention_mask_leftpad.npy --in global_attention_mask=$g/global_attention_mask_leftpad.npy \
  --out last_hidden_state=$tmp/hlp.npy --out pooler_output=$tmp/plp.npy 2>"$tmp/err" &&
  $NPY compare $tmp/hlp.npy $g/last_hidden_state_leftpad.npy 1e-3 &&
  $NPY compare $tmp/plp.npy $g/pooler_output_leftpad.npy 1e-3 && ok || bad "left padding: $(cat "$tmp/err")"
# f16 weights and activations: within f16's rounding over three layers (measured 0.08 where
# values reach 3.2; the goldens with and without global tokens differ by 3.4).
g=$G/longformer_tiny
"$VKF" forward --fp16 --model "$D/longformer_tiny" --in input_ids=$g/input_ids.npy \
  --in attention_mask=$g/attention_mask.npy --in global_attention_mask=$g/global_attention_mask.npy \
  --out last_hidden_state=$tmp/h16.npy --out pooler_output=$tmp/p16.npy 2>"$tmp/err" &&
  python3 tests/cli/longformer_check.py "$g" "" "$tmp/h16.npy" "$tmp/p16.npy" 0.15 && ok || bad "fp16: $(cat "$tmp/err")"

# Task heads: logits within 1e-3, with the golden's global tokens and without a global mask
# (sequence classification then makes the first token global, as transformers does).
for m in longformer_tokcls_tiny longformer_seqcls_tiny; do
  g=$G/$m
  in="--in input_ids=$g/input_ids.npy --in attention_mask=$g/attention_mask.npy"
  "$VKF" forward --model "$D/$m" $in --in global_attention_mask=$g/global_attention_mask.npy \
    --out logits=$tmp/l.npy 2>"$tmp/err" && $NPY compare $tmp/l.npy $g/logits.npy 1e-3 &&
    ok || bad "$m logits: $(cat "$tmp/err")"
  "$VKF" forward --model "$D/$m" $in --out logits=$tmp/ll.npy 2>"$tmp/err" &&
    $NPY compare $tmp/ll.npy $g/logits_local.npy 1e-3 && ok || bad "$m logits without a global mask: $(cat "$tmp/err")"
done

# Question answering: start_logits and end_logits within 1e-3 with the golden's global tokens and
# without a global mask (transformers then makes the question global: the tokens before the first
# of the row's 3 sep tokens); each row alone equals its row of the batch, in both cases.
m=longformer_qa_tiny
g=$G/$m
in="--in input_ids=$g/input_ids.npy --in attention_mask=$g/attention_mask.npy"
for suffix in "" _local; do
  glob=""
  [ -z "$suffix" ] && glob="--in global_attention_mask=$g/global_attention_mask.npy"
  "$VKF" forward --model "$D/$m" $in $glob --out start_logits=$tmp/qs.npy --out end_logits=$tmp/qe.npy 2>"$tmp/err" &&
    $NPY compare $tmp/qs.npy $g/start_logits$suffix.npy 1e-3 && $NPY compare $tmp/qe.npy $g/end_logits$suffix.npy 1e-3 &&
    ok || bad "$m start/end logits$suffix: $(cat "$tmp/err")"
  for r in 0 1; do
    for k in input_ids attention_mask global_attention_mask; do $NPY rows $g/$k.npy $r 1 $tmp/q$k$r.npy; done
    $NPY rows $tmp/qs.npy $r 1 $tmp/qs_batch$r.npy
    $NPY rows $tmp/qe.npy $r 1 $tmp/qe_batch$r.npy
    glob1=""
    [ -z "$suffix" ] && glob1="--in global_attention_mask=$tmp/qglobal_attention_mask$r.npy"
    "$VKF" forward --model "$D/$m" --in input_ids=$tmp/qinput_ids$r.npy --in attention_mask=$tmp/qattention_mask$r.npy \
      $glob1 --out start_logits=$tmp/qs$r.npy --out end_logits=$tmp/qe$r.npy 2>"$tmp/err" &&
      $NPY compare $tmp/qs$r.npy $tmp/qs_batch$r.npy 1e-5 && $NPY compare $tmp/qe$r.npy $tmp/qe_batch$r.npy 1e-5 &&
      ok || bad "$m$suffix row $r alone: $(cat "$tmp/err")"
  done
done
# Without a global mask transformers asserts 3 sep tokens per row (in the batch's total): row 0
# alone with its last sep replaced has 2.
python3 - "$tmp/qinput_ids0.npy" "$tmp/q_twosep.npy" <<'PY'
import sys
sys.path.insert(0, "tests/cli")
from npy_tool import read, write
s, v = read(sys.argv[1]); v = list(v); v[-1] = 5; write(sys.argv[2], s, v, "<i8", "q")
PY
expect_error forward "QA without 3 seps" "input_ids: 1 rows hold 2 sep tokens (id 2); LongformerForQuestionAnswering needs exactly 3" \
  --model $D/$m --in input_ids=$tmp/q_twosep.npy --out start_logits=$tmp/x.npy

# Bad input.
g=$G/longformer_tiny
$NPY ints64 $tmp/glob_short.npy 2,18 "$(python3 -c 'print(",".join(["0"] * 36))')"
expect_error forward "global mask shape" "input global_attention_mask has sequence length 18 but input_ids has 19" \
  --model $D/longformer_tiny --in input_ids=$g/input_ids.npy --in global_attention_mask=$tmp/glob_short.npy \
  --out last_hidden_state=$tmp/x.npy
$NPY ints64 $tmp/glob_two.npy 2,19 "$(python3 -c 'print(",".join(["2"] + ["0"] * 37))')"
expect_error forward "global mask value" "input global_attention_mask: value 2 at \[0, 0\] is outside \[0, 2)" \
  --model $D/longformer_tiny --in input_ids=$g/input_ids.npy --in global_attention_mask=$tmp/glob_two.npy \
  --out last_hidden_state=$tmp/x.npy
config() { # config NAME WINDOW: longformer_tiny with attention_window WINDOW
  rm -rf "$tmp/$1" && cp -r "$D/longformer_tiny" "$tmp/$1" &&
    python3 - "$tmp/$1/config.json" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["attention_window"] = json.loads(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
}
config odd "[4, 5, 4]"
expect_error forward "odd window" "\"attention_window\" of layer 1 is 5; it must be an even value" \
  --model $tmp/odd --in input_ids=$g/input_ids.npy --out last_hidden_state=$tmp/x.npy
config undivided "[4, 6, 4]"
# 19 tokens pad to 24 (a multiple of 6), which the 4-token layers split; 5 tokens pad to 6, which they cannot.
$NPY rows $g/input_ids.npy 0 1 $tmp/ids1.npy
python3 - "$tmp/ids1.npy" "$tmp/ids5.npy" <<'PY'
import sys
sys.path.insert(0, "tests/cli")
from npy_tool import read, write
_, v = read(sys.argv[1]); write(sys.argv[2], [1, 5], list(v[:5]), "<i8", "q")
PY
expect_error forward "window not dividing" "layer 0's attention_window 4 does not divide the padded sequence length 6" \
  --model $tmp/undivided --in input_ids=$tmp/ids5.npy --out last_hidden_state=$tmp/x.npy
vkf_summary
