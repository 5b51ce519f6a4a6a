#!/usr/bin/env bash
# vkf op: the device result equals the reference interpreter's (--cpu) on .npy inputs for a few
# ops with attributes, including attention with every attribute; bad input gives one line: every
# attribute is parsed strictly and range-checked, unknown keys list the op's, and gather ids and
# softmax valid lengths outside their range are refused on both paths.
set -u
. "$(dirname "$0")/lib.sh"
# check LABEL CONDITION: CONDITION is evaluated after the command it follows.
check() { if eval "$2"; then ok; else bad "$1"; fi; }
npy="python3 tests/cli/npy_tool.py"

# same_as_cpu LABEL TOL ARGS...: runs the op on the device and on the interpreter, compares.
same_as_cpu() {
  local label=$1 tol=$2; shift 2
  "$VKF" op "$@" --out "$tmp/gpu.npy" 2>"$tmp/err" && "$VKF" op "$@" --cpu --out "$tmp/cpu.npy" &&
    $npy compare "$tmp/gpu.npy" "$tmp/cpu.npy" "$tol"
  check "$label" '[ $? -eq 0 ]'
}

$npy write "$tmp/a.npy" 37,70 1
$npy write "$tmp/b.npy" 50,70 2
$npy write "$tmp/bias.npy" 50 3
same_as_cpu "matmul transpose_b + bias + gelu" 1e-4 matmul --in "$tmp/a.npy" --in "$tmp/b.npy" \
  --in bias="$tmp/bias.npy" --attr transpose_b=1 --attr activation=gelu
$npy write "$tmp/x.npy" 3,5,33 4
same_as_cpu "softmax causal scaled" 1e-6 softmax --in "$tmp/x.npy" --attr causal=1 --attr scale=0.5
same_as_cpu "layernorm" 1e-5 layernorm --in "$tmp/x.npy" --attr eps=1e-6
same_as_cpu "permute" 0 permute --in "$tmp/x.npy" --attr axes=2,0,1
# rotary: the interpreter, and Hugging Face's formula in numpy (x*cos + rotate_half(x)*sin) with
# cos and sin broadcast over the batch and heads.
$npy write "$tmp/rx.npy" 2,3,7,10 11
$npy write "$tmp/rc.npy" 7,10 12
$npy write "$tmp/rs.npy" 1,1,7,10 13
same_as_cpu "rotary" 1e-6 rotary --in "$tmp/rx.npy" --in "$tmp/rc.npy" --in "$tmp/rs.npy"
"$VKF" op rotary --in "$tmp/rx.npy" --in "$tmp/rc.npy" --in "$tmp/rs.npy" --out "$tmp/ry.npy" &&
  /usr/bin/python3 -c '
import sys, numpy as np
x, c, s, y = (np.load(p) for p in sys.argv[1:5])
h = x.shape[-1] // 2
rot = np.concatenate([-x[..., h:], x[..., :h]], axis=-1)
sys.exit(0 if np.abs(y - (x * c + rot * s)).max() <= 1e-6 else 1)' "$tmp/rx.npy" "$tmp/rc.npy" "$tmp/rs.npy" "$tmp/ry.npy"
check "rotary against numpy" '[ $? -eq 0 ]'
$npy halves "$tmp/rxh.npy" 1,4,5,16 15
$npy halves "$tmp/rch.npy" 5,16 16
$npy halves "$tmp/rsh.npy" 5,16 17
same_as_cpu "rotary f16" 1e-3 rotary --in "$tmp/rxh.npy" --in "$tmp/rch.npy" --in "$tmp/rsh.npy"
$npy write "$tmp/rodd.npy" 2,9 14
expect_error op "rotary odd head dim" "D even" rotary --in "$tmp/rodd.npy" --in "$tmp/rodd.npy" \
  --in "$tmp/rodd.npy" --out "$tmp/r.npy"
$npy write "$tmp/q.npy" 2,3,9,32 5
$npy write "$tmp/k.npy" 2,3,21,32 6
$npy write "$tmp/v.npy" 2,3,21,32 7
$npy write "$tmp/ab.npy" 1,3,9,21 8
same_as_cpu "attention plain" 1e-5 attention --in "$tmp/q.npy" --in "$tmp/k.npy" --in "$tmp/v.npy"
same_as_cpu "attention causal kv_len window bias" 1e-5 attention --in "$tmp/q.npy" \
  --in "$tmp/k.npy" --in "$tmp/v.npy" --in bias="$tmp/ab.npy" --attr causal=1 \
  --attr kv_len=17,21 --attr window=6,0 --attr scale=0.2
# kv_write: batch 1's second row lands past the end (skipped); the result differs from the cache.
$npy write "$tmp/kc.npy" 2,3,6,4 9
$npy write "$tmp/kr.npy" 2,3,2,4 10
$npy ints "$tmp/ks.npy" 2 1,5
same_as_cpu "kv_write" 0 kv_write --in "$tmp/kc.npy" --in "$tmp/kr.npy" --in "$tmp/ks.npy"
check "kv_write writes" '! $npy compare "$tmp/gpu.npy" "$tmp/kc.npy" 0 >/dev/null 2>&1'

"$VKF" op matmul --in "$tmp/a.npy" --in "$tmp/a.npy" --out "$tmp/o.npy" 2>"$tmp/err"; rc=$?
check "shape error: one line naming both shapes" '[ $rc -ne 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "\[37,70\] x \[37,70\]" "$tmp/err"'
echo "not an npy" >"$tmp/bad.npy"
"$VKF" op relu --in "$tmp/bad.npy" --out "$tmp/o.npy" 2>"$tmp/err"; rc=$?
check "malformed npy: one line naming the file" '[ $rc -ne 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "bad.npy" "$tmp/err"'
"$VKF" op frobnicate --in "$tmp/a.npy" --out "$tmp/o.npy" 2>"$tmp/err"; rc=$?
check "unknown op" '[ $rc -ne 0 ] && grep -q "unknown op \"frobnicate\"" "$tmp/err"'

# Strict attributes: one line naming the attribute and its value, on the device path and --cpu.
qkv=(--in "$tmp/q.npy" --in "$tmp/k.npy" --in "$tmp/v.npy" --out "$tmp/o.npy")
for path in "" --cpu; do
  expect_error op "kv_len past the keys $path" "attribute kv_len=100,21: entry 0 (100) is out of range \[0, 21\]" \
    attention "${qkv[@]}" --attr kv_len=100,21 $path
  expect_error op "negative kv_len $path" "attribute kv_len=-1,3: entry 0 (-1) is out of range \[0, 21\]" \
    attention "${qkv[@]}" --attr kv_len=-1,3 $path
  expect_error op "kv_len abc $path" "attribute kv_len=abc: entry 0 is not an integer" \
    attention "${qkv[@]}" --attr kv_len=abc $path
  expect_error op "kv_len 4x $path" "attribute kv_len=4x,3: entry 0 is not an integer" \
    attention "${qkv[@]}" --attr kv_len=4x,3 $path
  expect_error op "kv_len empty entry $path" "attribute kv_len=4,,3: entry 1 is not an integer" \
    attention "${qkv[@]}" --attr kv_len=4,,3 $path
  expect_error op "kv_len count $path" "kv_len shape \[3\], expected \[2\]" \
    attention "${qkv[@]}" --attr kv_len=1,2,3 $path
  expect_error op "scale abc $path" "attribute scale=abc is not a number" \
    attention "${qkv[@]}" --attr scale=abc $path
  expect_error op "scale nan $path" "attribute scale=nan is not finite" \
    softmax --in "$tmp/x.npy" --out "$tmp/o.npy" --attr scale=nan $path
  expect_error op "scale 1e40 $path" "attribute scale=1e40 is not finite" \
    softmax --in "$tmp/x.npy" --out "$tmp/o.npy" --attr scale=1e40 $path
  expect_error op "causal 2 $path" "attribute causal=2 is out of range \[0, 1\]" \
    attention "${qkv[@]}" --attr causal=2 $path
  expect_error op "causal yes $path" "attribute causal=yes is not an integer" \
    softmax --in "$tmp/x.npy" --out "$tmp/o.npy" --attr causal=yes $path
  expect_error op "window one entry $path" "attribute window=6 needs LEFT,RIGHT" \
    attention "${qkv[@]}" --attr window=6 $path
  expect_error op "window -2 $path" "attribute window=-2,0: entry 0 (-2) is out of range \[-1, " \
    attention "${qkv[@]}" --attr window=-2,0 $path
  expect_error op "cast dtype bogus $path" "attribute dtype=bogus is not one of: f32, f16, i32" \
    cast --in "$tmp/x.npy" --out "$tmp/o.npy" --attr dtype=bogus $path
  expect_error op "activation $path" "attribute activation=swish is not one of: none, gelu" \
    matmul --in "$tmp/a.npy" --in "$tmp/b.npy" --out "$tmp/o.npy" --attr activation=swish $path
  expect_error op "eps negative $path" "attribute eps=-1 is out of range \[0, inf\]" \
    layernorm --in "$tmp/x.npy" --out "$tmp/o.npy" --attr eps=-1 $path
  expect_error op "scale value empty $path" "attribute value= is not a number" \
    scale --in "$tmp/x.npy" --out "$tmp/o.npy" --attr value= $path
  expect_error op "permute axis $path" "attribute axes=0,1,3: entry 2 (3) is out of range \[0, 2\]" \
    permute --in "$tmp/x.npy" --out "$tmp/o.npy" --attr axes=0,1,3 $path
  expect_error op "slice axis $path" "attribute axis=-1 is out of range \[0, 2\]" \
    slice --in "$tmp/x.npy" --out "$tmp/o.npy" --attr axis=-1 --attr end=1 $path
  expect_error op "integer overflow $path" "attribute end=99999999999999999999 is not an integer" \
    slice --in "$tmp/x.npy" --out "$tmp/o.npy" --attr end=99999999999999999999 $path
  expect_error op "unknown key $path" "unknown attribute \"kvlen\" for op attention (valid: scale, causal, kv_len, window)" \
    attention "${qkv[@]}" --attr kvlen=3,3 $path
  expect_error op "key of another op $path" "unknown attribute \"causal\" for op layernorm (valid: eps)" \
    layernorm --in "$tmp/x.npy" --out "$tmp/o.npy" --attr causal=1 $path
  expect_error op "op without attributes $path" "unknown attribute \"alpha\": op relu takes no attributes" \
    relu --in "$tmp/x.npy" --out "$tmp/o.npy" --attr alpha=1 $path
  expect_error op "key twice $path" "attribute causal is given twice" \
    attention "${qkv[@]}" --attr causal=1 --attr causal=0 $path
done

# kv_len 0 is allowed (a fully padded batch entry: zero rows, as a fully masked row is defined),
# as are Nk itself and window -1 (unbounded); device equals the interpreter.
same_as_cpu "attention kv_len 0 and Nk" 1e-5 attention --in "$tmp/q.npy" --in "$tmp/k.npy" \
  --in "$tmp/v.npy" --attr kv_len=0,21 --attr window=-1,2
check "kv_len 0: batch 0 all zeros, batch 1 not" \
  '$npy zeros "$tmp/gpu.npy" 0 864 && ! $npy zeros "$tmp/gpu.npy" 864 1728'

# Softmax valid lengths count columns, [0, N]; gather ids index the table, [0, V): values outside
# are refused before the device (which would clamp them, or read zeros) or the interpreter runs.
$npy write "$tmp/sx.npy" 2,3,6 11
$npy ints "$tmp/vl_ok.npy" 2 0,6
same_as_cpu "softmax valid_lens 0 and N" 1e-6 softmax --in "$tmp/sx.npy" --in valid_lens="$tmp/vl_ok.npy"
$npy ints "$tmp/vl_big.npy" 2 3,1000
$npy ints "$tmp/vl_neg.npy" 2 -3,2
$npy write "$tmp/table.npy" 10,8 12
$npy ints "$tmp/ids_ok.npy" 2,3 0,9,3,3,1,2
$npy ints "$tmp/ids_big.npy" 2,3 0,9,3,10,1,2
$npy ints "$tmp/ids_neg.npy" 3 4,-1,2
same_as_cpu "gather" 0 gather --in "$tmp/table.npy" --in "$tmp/ids_ok.npy"
for path in "" --cpu; do
  expect_error op "valid_lens 1000 $path" "vl_big.npy: valid length 1000 at flat index 1 is outside \[0, 7)" \
    softmax --in "$tmp/sx.npy" --in valid_lens="$tmp/vl_big.npy" --out "$tmp/o.npy" $path
  expect_error op "valid_lens -3 $path" "vl_neg.npy: valid length -3 at flat index 0 is outside \[0, 7)" \
    softmax --in "$tmp/sx.npy" --in valid_lens="$tmp/vl_neg.npy" --out "$tmp/o.npy" $path
  expect_error op "gather id 10 of 10 $path" "ids_big.npy: id 10 at flat index 3 is outside \[0, 10)" \
    gather --in "$tmp/table.npy" --in "$tmp/ids_big.npy" --out "$tmp/o.npy" $path
  expect_error op "gather id -1 $path" "ids_neg.npy: id -1 at flat index 1 is outside \[0, 10)" \
    gather --in "$tmp/table.npy" --in "$tmp/ids_neg.npy" --out "$tmp/o.npy" $path
done
vkf_summary
