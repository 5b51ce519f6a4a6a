#!/usr/bin/env bash
# vkf forward end to end: --list, every supported checkpoint family on named .npy inputs against
# Hugging Face's outputs (tools/goldens/make_forward_golden.py, tools/goldens/make_vit_golden.py), Hugging Face's
# defaults for optional inputs, and every bad input giving one "vkf: ..." line and exit status 1.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
npy="python3 tests/cli/npy_tool.py"
G=tests/models/golden/forward
V=tests/models/golden/vit
tiny=tests/models/data/bert_tiny

# --list names the inputs and outputs with shapes.
"$VKF" forward --model "$tiny" --list >"$tmp/list" 2>&1 && ok || bad "list: $(cat "$tmp/list")"
grep -q "^BertForMaskedLM" "$tmp/list" && grep -q "^input   input_ids .*\[batch, seq<=128\]  required" "$tmp/list" &&
  grep -q "^input   token_type_ids .*optional (default 0)" "$tmp/list" &&
  grep -q "^output  logits .*\[batch, seq, 219\]" "$tmp/list" && ok || bad "list content: $(cat "$tmp/list")"
"$VKF" forward --model tests/models/data/vit_tiny_bare --list >"$tmp/list" 2>&1 &&
  grep -q "^input   pixel_values .*\[batch, 3, 32, 32\]" "$tmp/list" &&
  grep -q "^output  pooler_output" "$tmp/list" && ok || bad "vit list: $(cat "$tmp/list")"

# compare NAME GOT WANT ATOL
compare() {
  if out=$($npy compare "$2" "$3" "$4"); then ok; else bad "$1: $out"; fi
}

# BERT (MaskedLM): right- and left-padded rows and a sentence pair, int64 ids as torch saves them.
if "$VKF" forward --model "$tiny" --in input_ids=$G/bert_tiny_input_ids.npy \
  --in attention_mask=$G/bert_tiny_attention_mask.npy --in token_type_ids=$G/bert_tiny_token_type_ids.npy \
  --out last_hidden_state="$tmp/h.npy" --out logits="$tmp/l.npy" 2>"$tmp/err"; then
  compare "bert_tiny last_hidden_state" "$tmp/h.npy" $G/bert_tiny_last_hidden_state.npy 1e-4
  compare "bert_tiny logits" "$tmp/l.npy" $G/bert_tiny_logits.npy 1e-4
else bad "bert_tiny forward: $(cat "$tmp/err")"; fi

# The same checkpoint split into three shards with model.safetensors.index.json.
python3 tests/cli/shard_checkpoint.py "$tiny" "$tmp/sharded" 3
if "$VKF" forward --model "$tmp/sharded" --in input_ids=$G/bert_tiny_input_ids.npy \
  --in attention_mask=$G/bert_tiny_attention_mask.npy --in token_type_ids=$G/bert_tiny_token_type_ids.npy \
  --out logits="$tmp/ls.npy" 2>"$tmp/err"; then
  compare "sharded bert_tiny logits" "$tmp/ls.npy" $G/bert_tiny_logits.npy 1e-4
else bad "sharded forward: $(cat "$tmp/err")"; fi

# Optional inputs left out: attention_mask all ones, token_type_ids all zeros (int32 ids).
$npy ints "$tmp/ids.npy" 1,12 2,218,5,113,218,65,3,212,183,57,61,3
if "$VKF" forward --model "$tiny" --in input_ids="$tmp/ids.npy" --out last_hidden_state="$tmp/h1.npy" 2>"$tmp/err"; then
  compare "bert_tiny defaults" "$tmp/h1.npy" $G/bert_tiny_default_last_hidden_state.npy 1e-4
else bad "bert_tiny default forward: $(cat "$tmp/err")"; fi

# f16 weights and activations: same outputs within f16's precision.
if "$VKF" forward --model "$tiny" --fp16 --in input_ids=$G/bert_tiny_input_ids.npy \
  --in attention_mask=$G/bert_tiny_attention_mask.npy --in token_type_ids=$G/bert_tiny_token_type_ids.npy \
  --out last_hidden_state="$tmp/h16.npy" 2>"$tmp/err"; then
  compare "bert_tiny fp16" "$tmp/h16.npy" $G/bert_tiny_last_hidden_state.npy 3e-2
else bad "bert_tiny fp16 forward: $(cat "$tmp/err")"; fi

# all-MiniLM-L6-v2 (real weights): last_hidden_state and pooler_output of a padded batch.
minilm=$("$VKF" tokenize --json x | python3 -c 'import json, sys; print(json.load(sys.stdin)["model"])')
if "$VKF" forward --model "$minilm" --in input_ids=$G/minilm_input_ids.npy \
  --in attention_mask=$G/minilm_attention_mask.npy \
  --out last_hidden_state="$tmp/mh.npy" --out pooler_output="$tmp/mp.npy" 2>"$tmp/err"; then
  compare "MiniLM last_hidden_state" "$tmp/mh.npy" $G/minilm_last_hidden_state.npy 1e-4
  compare "MiniLM pooler_output" "$tmp/mp.npy" $G/minilm_pooler_output.npy 1e-4
else bad "MiniLM forward: $(cat "$tmp/err")"; fi

# ViT / DeiT: logits of a classifier, a distilled (teacher) classifier, and a bare ViTModel.
run_vit() { # name model pixels output golden
  if "$VKF" forward --model "$2" --in pixel_values="$3" --out "$4"="$tmp/$1.npy" 2>"$tmp/err"; then
    compare "$1" "$tmp/$1.npy" "$5" 1e-4
  else bad "$1 forward: $(cat "$tmp/err")"; fi
}
run_vit vit_tiny tests/models/data/vit_tiny $V/vit_tiny_pixel_values.npy logits $V/vit_tiny_logits.npy
run_vit deit_tiny tests/models/data/deit_tiny $V/deit_tiny_pixel_values.npy logits $V/deit_tiny_logits.npy
run_vit vit_bare tests/models/data/vit_tiny_bare $V/vit_tiny_pixel_values.npy last_hidden_state \
  $V/vit_tiny_bare_last_hidden_state.npy
run_vit vit_pool tests/models/data/vit_tiny_bare $V/vit_tiny_pixel_values.npy pooler_output \
  $V/vit_tiny_bare_pooler_output.npy

# Bad inputs: exit 1, one stderr line naming the problem.
ids=$G/bert_tiny_input_ids.npy
expect_error forward "unknown input" 'no input "pixel_values"' --model "$tiny" --in pixel_values=$ids --out logits="$tmp/x.npy"
expect_error forward "unknown output" 'no output "pooler_output"' --model "$tiny" --in input_ids=$ids --out pooler_output="$tmp/x.npy"
expect_error forward "missing input" "needs input input_ids" --model "$tiny" --in attention_mask=$G/bert_tiny_attention_mask.npy --out logits="$tmp/x.npy"
$npy write "$tmp/float_ids.npy" 3,12 1
expect_error forward "float ids" "input input_ids: dtype float32" --model "$tiny" --in input_ids="$tmp/float_ids.npy" --out logits="$tmp/x.npy"
$npy ints "$tmp/ids3.npy" 1,2,2 1,2,3,4
expect_error forward "ids of rank 3" "input input_ids: shape \[1,2,2\]" --model "$tiny" --in input_ids="$tmp/ids3.npy" --out logits="$tmp/x.npy"
$npy ints "$tmp/oov.npy" 1,4 2,219,5,3
expect_error forward "id outside the vocabulary" "value 219 at \[0, 1\] is outside \[0, 219)" --model "$tiny" --in input_ids="$tmp/oov.npy" --out logits="$tmp/x.npy"
$npy ints64 "$tmp/neg.npy" 1,3 2,-1,3
expect_error forward "negative id" "value -1" --model "$tiny" --in input_ids="$tmp/neg.npy" --out logits="$tmp/x.npy"
$npy ints "$tmp/long.npy" 1,129 $(python3 -c 'print(",".join(["5"] * 129))')
expect_error forward "longer than the positions" "129 tokens, longer than the model's 128" --model "$tiny" --in input_ids="$tmp/long.npy" --out logits="$tmp/x.npy"
$npy ints "$tmp/mask2.npy" 2,12 $(python3 -c 'print(",".join(["1"] * 24))')
expect_error forward "batch mismatch" "batch 2 but input_ids has 3" --model "$tiny" --in input_ids=$ids --in attention_mask="$tmp/mask2.npy" --out logits="$tmp/x.npy"
$npy ints "$tmp/mask3.npy" 1,4 1,1,2,0
$npy ints "$tmp/ids4.npy" 1,4 2,7,8,3
expect_error forward "mask value 2" "input attention_mask: value 2" --model "$tiny" --in input_ids="$tmp/ids4.npy" --in attention_mask="$tmp/mask3.npy" --out logits="$tmp/x.npy"
$npy halves "$tmp/half.npy" 1,3,32,32 1
expect_error forward "f16 pixels" "float16 data" --model tests/models/data/vit_tiny --in pixel_values="$tmp/half.npy" --out logits="$tmp/x.npy"
# float64 pixels (numpy's default float) are read as float32: the same logits as the float32 file
$npy write "$tmp/px.npy" 1,3,32,32 1
python3 - "$tmp/px.npy" "$tmp/px64.npy" <<'PY' || bad "px64.npy"
import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack("<H", d[8:10])[0]
h = d[10:10 + n].decode().replace("<f4", "<f8")
vals = struct.unpack("<%df" % ((len(d) - 10 - n) // 4), d[10 + n:])
h = h.rstrip() + " " * (len(h) - len(h.rstrip()) - 1) + "\n"
open(sys.argv[2], "wb").write(d[:8] + struct.pack("<H", len(h)) + h.encode() + struct.pack("<%dd" % len(vals), *vals))
PY
"$VKF" forward --model tests/models/data/vit_tiny --in pixel_values="$tmp/px.npy" --out logits="$tmp/l32.npy" 2>"$tmp/err" &&
  "$VKF" forward --model tests/models/data/vit_tiny --in pixel_values="$tmp/px64.npy" --out logits="$tmp/l64.npy" 2>>"$tmp/err" &&
  $npy compare "$tmp/l32.npy" "$tmp/l64.npy" 0 && ok || bad "float64 pixels: $(cat "$tmp/err")"
$npy write "$tmp/small.npy" 1,3,16,16 1
expect_error forward "wrong image size" "input pixel_values: shape \[1,3,16,16\], expected \[-1,3,32,32\]" --model tests/models/data/vit_tiny --in pixel_values="$tmp/small.npy" --out logits="$tmp/x.npy"
mkdir "$tmp/xlnet"
echo '{"architectures": ["XLNetLMHeadModel"], "model_type": "xlnet"}' >"$tmp/xlnet/config.json"
# --list says what a checkpoint really takes: Nyströmformer segments of exactly 16 tokens when its
# landmarks are fewer, any length up to the positions when they are not; an encoder-decoder's
# decoder dims are the target's, and leaving decoder_input_ids out runs the encoder alone.
"$VKF" forward --model tests/models/data/nys_conv --list >"$tmp/l1" 2>&1
"$VKF" forward --model tests/models/data/nys_full --list >"$tmp/l2" 2>&1
"$VKF" forward --model tests/models/data/bart_tiny --list >"$tmp/l3" 2>&1
grep -q "^input   input_ids .*\[batch, seq=16\]" "$tmp/l1" && grep -q "^input   input_ids .*\[batch, seq<=40\]" "$tmp/l2" &&
  grep -q "^input   decoder_input_ids .*\[batch, target<=64\]  optional (absent: the encoder runs alone)" "$tmp/l3" &&
  grep -q "^output  logits .*\[batch, target, 512\]" "$tmp/l3" && ok || bad "--list shapes: $(cat "$tmp/l1" "$tmp/l2" "$tmp/l3")"
expect_error forward "unknown architecture" 'architecture "XLNetLMHeadModel" (model_type "xlnet") is not supported' --model "$tmp/xlnet" --list
expect_error forward "missing folder" "no-such-model" --model "$tmp/no-such-model" --list
mkdir "$tmp/dir_config" "$tmp/dir_config/config.json"
expect_error forward "config.json a directory" "config.json: is a directory, not a file" --model "$tmp/dir_config" --list
cp -r "$tmp/sharded" "$tmp/trunc_shard"
head -c 3000 "$tmp/sharded/model-00002-of-00003.safetensors" >"$tmp/trunc_shard/model-00002-of-00003.safetensors"
expect_error forward "truncated shard" "model-00002-of-00003.safetensors" --model "$tmp/trunc_shard" --list
cp -r "$tmp/sharded" "$tmp/lost_shard"
rm "$tmp/lost_shard/model-00003-of-00003.safetensors"
expect_error forward "missing shard" "model-00003-of-00003.safetensors" --model "$tmp/lost_shard" --list
cp -r "$tmp/sharded" "$tmp/bad_index"
python3 - "$tmp/bad_index/model.safetensors.index.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["weight_map"]["bert.no_such_tensor"] = "model-00001-of-00003.safetensors"
json.dump(doc, open(sys.argv[1], "w"))
PY
expect_error forward "index naming a missing tensor" "bert.no_such_tensor" --model "$tmp/bad_index" --list
rm "$tmp/lost_shard"/model*
expect_error forward "no weights at all" "model.safetensors" --model "$tmp/lost_shard" --list
expect_error forward "missing npy" "nope.npy" --model "$tiny" --in input_ids="$tmp/nope.npy" --out logits="$tmp/x.npy"
# Two outputs into one file, or an output over an input: refused before anything runs (exit 2).
"$VKF" forward --model tests/models/data/llama_tiny --in input_ids="$tmp/ids_dup.npy" --out logits="$tmp/o.npy" \
  --out last_hidden_state="$tmp/o.npy" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "outputs logits and last_hidden_state both go to $tmp/o.npy" "$tmp/err" && ok ||
  bad "one file for two outputs: $(cat "$tmp/err")"
"$VKF" forward --model tests/models/data/llama_tiny --in input_ids="$tmp/ids_dup.npy" --out logits="$tmp/ids_dup.npy" \
  >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "output logits would overwrite input input_ids" "$tmp/err" && ok ||
  bad "output over an input: $(cat "$tmp/err")"

vkf_summary
