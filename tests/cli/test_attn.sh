#!/usr/bin/env bash
# vkf attn end to end: the attention probabilities the device computes (every layer, --npy) within
# 1e-4 of Hugging Face's output_attentions for BERT (bert_tiny, MiniLM) and ViT / DeiT, rollout
# within 1e-5 of the Python reference (tools/goldens/make_attention_golden.py), the PNGs valid (decoded by
# vkf's own image reader) and of the layout's size, and bad input giving one "vkf: ..." line.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
npy="python3 tests/cli/npy_tool.py"
G=tests/models/golden/attention
D=tests/models/data
img=assets/images/cat.jpg

compare() {
  if out=$($npy compare "$2" "$3" "$4"); then ok; else bad "$1: $out"; fi
}

# png_check NAME FILE WIDTH HEIGHT: a PNG of that size that vkf's own reader decodes (classify
# runs it through the PNG decoder and the ViT processor; any decode error fails it).
png_check() {
  local size
  size=$(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read(24)
assert d[:8] == b"\x89PNG\r\n\x1a\n" and d[12:16] == b"IHDR", "not a PNG"
print("%dx%d" % struct.unpack(">II", d[16:24]))' "$2" 2>&1)
  [ "$size" = "$3x$4" ] && ok || bad "$1: $2 is $size, expected $3x$4"
  "$VKF" classify --model $D/vit_tiny "$2" >/dev/null 2>"$tmp/err" && ok ||
    bad "$1: vkf's reader: $(cat "$tmp/err")"
}

# run NAME ARGS...: vkf attn succeeds (stdout: the PNG paths).
run() {
  local name=$1
  shift
  "$VKF" attn "$@" >"$tmp/paths" 2>"$tmp/err" && ok || bad "$name: $(cat "$tmp/err")"
}

# BERT: the tokens of the golden's text (HF: [CLS] the quick brown fox ... dog [SEP], 11 tokens).
run bert_tiny --model $D/bert_tiny --out "$tmp/png" --npy "$tmp/npy" \
  "the quick brown fox jumps over the lazy dog"
compare "bert_tiny attentions" "$tmp/npy/attn_0.npy" $G/bert_tiny_attentions.npy 1e-4
grep -qx "$tmp/png/attn_0_layer1_mean.png" "$tmp/paths" && ok || bad "bert paths: $(cat "$tmp/paths")"
# 11 tokens: 40-pixel cells, 5-character labels (58 px at scale 2); see tools/vkf/attn_figure.c.
png_check "bert_tiny mean" "$tmp/png/attn_0_layer1_mean.png" 668 582
# 5 tokens: the same cells, the layout narrower.
run "bert_tiny head" --model $D/bert_tiny --layer 0 --head 3 --out "$tmp/png" "the lazy dog"
png_check "bert_tiny head" "$tmp/png/attn_0_layer0_head3.png" 428 342

# MiniLM (real weights; installed by tools/dev/setup.sh), as test_forward finds it.
minilm=$("$VKF" tokenize --json x | python3 -c 'import json, sys; print(json.load(sys.stdin)["model"])')
run minilm --model "$minilm" --out "$tmp/png" --npy "$tmp/npy" \
  "The cat sat on the mat because it was warm."
compare "MiniLM attentions" "$tmp/npy/attn_0.npy" $G/minilm_attentions.npy 1e-4
# Without --model: the same default model as embed and tokenize.
run "MiniLM by default" --out "$tmp/png_default" --npy "$tmp/npy_default" \
  "The cat sat on the mat because it was warm."
compare "default model attentions" "$tmp/npy_default/attn_0.npy" $G/minilm_attentions.npy 1e-4

# ViT: every head and the mean over the image, and rollout.
run vit_tiny --model $D/vit_tiny --rollout --out "$tmp/png" --npy "$tmp/npy" "$img"
compare "vit_tiny attentions" "$tmp/npy/attn_0.npy" $G/vit_tiny_attentions.npy 1e-4
compare "vit_tiny rollout" "$tmp/npy/attn_0_rollout.npy" $G/vit_tiny_rollout.npy 1e-5
# Two heads + mean: three 192-pixel panels (the 32-pixel input enlarged 6x), one colour bar.
png_check "vit_tiny heads" "$tmp/png/attn_0_layer1_heads.png" 744 264
png_check "vit_tiny rollout" "$tmp/png/attn_0_rollout.png" 346 264
# One panel: the title sets the width.
run "vit_tiny head" --model $D/vit_tiny --layer 0 --head 1 --out "$tmp/png" "$img"
png_check "vit_tiny head" "$tmp/png/attn_0_layer0_head1.png" 394 264

# DeiT with a distillation token: two special tokens before the patches.
run deit_tiny --model $D/deit_tiny --rollout --out "$tmp/png" --npy "$tmp/npy" "$img"
compare "deit_tiny attentions" "$tmp/npy/attn_0.npy" $G/deit_tiny_attentions.npy 1e-4
compare "deit_tiny rollout" "$tmp/npy/attn_0_rollout.npy" $G/deit_tiny_rollout.npy 1e-5

# Bad input: one line naming what is wrong.
expect_error attn "layer out of range" "--layer 2: .* has 2 layers (0..1)" \
  --model $D/bert_tiny --layer 2 --out "$tmp/png" "a dog"
expect_error attn "head out of range" "--head 4: .* has 4 heads (0..3)" \
  --model $D/bert_tiny --head 4 --out "$tmp/png" "a dog"
expect_error attn "vit head out of range" "--head 2: .* has 2 heads" \
  --model $D/vit_tiny --head 2 --out "$tmp/png" "$img"
expect_error attn "decoder model" "GPT2LMHeadModel .* has no attention maps" \
  --model $D/gpt2_tiny --out "$tmp/png" "a dog"
expect_error attn "efficient attention kind" "has no attention maps" \
  --model $D/eff_bert_linear --out "$tmp/png" "a dog"
expect_error attn "rollout of a text" "--rollout: .* is a text model" \
  --model $D/bert_tiny --rollout --out "$tmp/png" "a dog"
expect_error attn "missing image" "no_such.png" \
  --model $D/vit_tiny --out "$tmp/png" "$tmp/no_such.png"
expect_error attn "out is a file" "not a directory" \
  --model $D/vit_tiny --out "$img" "$img"

# --help: usage on stdout, exit 0; usage errors: exit 2.
"$VKF" attn --help >"$tmp/help" 2>&1 && grep -q "^usage: vkf attn" "$tmp/help" && ok ||
  bad "--help: $(cat "$tmp/help")"
"$VKF" attn --model $D/bert_tiny --out "$tmp/png" >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "no INPUT: expected exit 2"
"$VKF" attn --model $D/bert_tiny --out "$tmp/png" --head x "a" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- '--head takes a non-negative integer, got "x"' "$tmp/err" && ok ||
  bad "--head x: $(cat "$tmp/err")"
vkf_summary
