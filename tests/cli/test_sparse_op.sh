#!/usr/bin/env bash
# vkf op sparse_attention against dense masked attention computed in Python from the patterns'
# definitions (tests/cli/sparse_ref.py), on the device and on the interpreter (--cpu): window +
# global tokens with causal, ragged kv_len and a key bias; the Sparse Transformer's strided and
# fixed patterns; dilated windows; random per-head block tables read from .npy; grouped-query heads.
# A window as wide as the sequence equals the dense attention op exactly. Bad layouts (block out of
# range, unsorted, repeated, bad offsets, a query block with no key block, a window wider than the
# sequence under strict_window, a malformed block table) and bad attributes are one-line errors.
set -u
. "$(dirname "$0")/lib.sh"
check() { if eval "$2"; then ok; else bad "$1"; fi; }
npy="python3 tests/cli/npy_tool.py"
ref="python3 tests/cli/sparse_ref.py"

# versus_ref LABEL TOL REF_ARGS -- VKF_ARGS: the device and --cpu both match the Python reference.
versus_ref() {
  local label=$1 tol=$2; shift 2
  local ref_args=()
  while [ "$1" != "--" ]; do ref_args+=("$1"); shift; done
  shift
  $ref ref "$tmp/ref.npy" "${ref_args[@]}" || { bad "$label: reference failed"; return; }
  for path in "" --cpu; do
    "$VKF" op sparse_attention "$@" $path --out "$tmp/y.npy" 2>"$tmp/err" &&
      $npy compare "$tmp/y.npy" "$tmp/ref.npy" "$tol" >"$tmp/cmp" 2>&1
    check "$label ${path:-device}" '[ $? -eq 0 ] || { cat "$tmp/err" "$tmp/cmp" >&2; false; }'
  done
}

$npy write "$tmp/q.npy" 2,4,45,16 1
$npy write "$tmp/k.npy" 2,2,45,16 2
$npy write "$tmp/v.npy" 2,2,45,12 3
$npy write "$tmp/kb.npy" 2,45 4
qkv=("$tmp/q.npy" "$tmp/k.npy" "$tmp/v.npy")
in_qkv=(--in "$tmp/q.npy" --in "$tmp/k.npy" --in "$tmp/v.npy")

versus_ref "window + global, blocks 8" 1e-5 "${qkv[@]}" --block 8 --pattern window:10,global:2 -- \
  "${in_qkv[@]}" --attr block=8 --attr pattern=window:10,global:2
versus_ref "window 7:3 + global, causal, kv_len, key bias, blocks 5x3" 1e-5 "${qkv[@]}" --block 5,3 \
  --pattern window:7:3,global:3 --causal --kv_len 30,45 --key_bias "$tmp/kb.npy" --scale 0.3 -- \
  "${in_qkv[@]}" --in key_bias="$tmp/kb.npy" --attr block=5,3 --attr pattern=window:7:3,global:3 \
  --attr causal=1 --attr kv_len=30,45 --attr scale=0.3
versus_ref "strided 6, causal, blocks 4" 1e-5 "${qkv[@]}" --block 4 --pattern strided:6 --causal -- \
  "${in_qkv[@]}" --attr block=4 --attr pattern=strided:6 --attr causal=1
versus_ref "fixed 8:2, causal, blocks 16" 1e-5 "${qkv[@]}" --block 16 --pattern fixed:8:2 --causal -- \
  "${in_qkv[@]}" --attr block=16 --attr pattern=fixed:8:2 --attr causal=1
versus_ref "dilated 12:3, blocks 1" 1e-5 "${qkv[@]}" --block 1 --pattern dilated:12:3 -- \
  "${in_qkv[@]}" --attr block=1 --attr pattern=dilated:12:3
$ref blocks "$tmp/layout.npy" 4,6,9 7 40
versus_ref "random per-head block table, blocks 8x5" 1e-5 "${qkv[@]}" --block 8,5 --layout "$tmp/layout.npy" -- \
  "${in_qkv[@]}" --attr block=8,5 --attr layout="$tmp/layout.npy"

# A window covering the sequence lists every block whole: the same numbers as dense attention.
$npy write "$tmp/q2.npy" 1,3,128,64 5
$npy write "$tmp/k2.npy" 1,3,128,64 6
$npy write "$tmp/v2.npy" 1,3,128,64 7
in2=(--in "$tmp/q2.npy" --in "$tmp/k2.npy" --in "$tmp/v2.npy")
"$VKF" op sparse_attention "${in2[@]}" --attr block=64 --attr pattern=window:256 --out "$tmp/s.npy" &&
  "$VKF" op attention "${in2[@]}" --out "$tmp/d.npy" && $npy compare "$tmp/s.npy" "$tmp/d.npy" 0
check "window >= N equals dense attention exactly" '[ $? -eq 0 ]'

# Bad layouts and attributes: one line naming what is wrong.
out=(--out "$tmp/o.npy")
base=("${in_qkv[@]}" --attr block=8 "${out[@]}")
$npy ints "$tmp/rows.npy" 1,7 0,1,2,3,4,5,6
tables() { $npy ints "$tmp/cols.npy" 1,6,2 "$1"; }
tables 0,-1,1,-1,2,-1,3,-1,4,-1,5,-1
for path in "" --cpu; do
  tables 0,-1,1,-1,2,-1,3,-1,4,-1,6,-1
  expect_error op "block out of range $path" "query block 5, entry 5: key block 6 out of range \[0, 6)" \
    sparse_attention "${base[@]}" --in rows="$tmp/rows.npy" --in cols="$tmp/cols.npy" $path
  $npy ints "$tmp/rows2.npy" 1,7 0,2,2,3,4,5,6
  tables 1,-1,0,-1,2,-1,3,-1,4,-1,5,-1
  expect_error op "unsorted $path" "query block 0, entry 1: key block 0 unsorted" \
    sparse_attention "${base[@]}" --in rows="$tmp/rows2.npy" --in cols="$tmp/cols.npy" $path
  tables 1,-1,1,-1,2,-1,3,-1,4,-1,5,-1
  expect_error op "repeated $path" "query block 0, entry 1: key block 1 repeated" \
    sparse_attention "${base[@]}" --in rows="$tmp/rows2.npy" --in cols="$tmp/cols.npy" $path
  $npy ints "$tmp/rows3.npy" 1,7 0,1,2,9,4,5,6
  expect_error op "bad offsets $path" "query block 2: bad row offsets 2..9" \
    sparse_attention "${base[@]}" --in rows="$tmp/rows3.npy" --in cols="$tmp/cols.npy" $path
  tables 0,3,1,-1,2,-1,3,-1,4,-1,5,-1
  expect_error op "mask id without masks $path" "entry 0: mask id 3 out of range" \
    sparse_attention "${base[@]}" --in rows="$tmp/rows.npy" --in cols="$tmp/cols.npy" $path
done
# 60 queries against 20 keys, the band around the bottom-right aligned diagonal: the first query
# blocks see nothing, which the pattern forbids.
$npy write "$tmp/qs.npy" 1,1,60,16 8
$npy write "$tmp/ks.npy" 1,1,20,16 9
expect_error op "empty row" "head 0, query block 0 lists no key block" \
  sparse_attention --in "$tmp/qs.npy" --in "$tmp/ks.npy" --in "$tmp/ks.npy" --attr block=4 \
  --attr pattern=window:2 "${out[@]}"
expect_error op "window wider than the sequence" "window 100/100 tokens is wider than the sequence (45 keys)" \
  sparse_attention "${base[@]}" --attr pattern=window:200 --attr strict_window=1
$npy ints "$tmp/bl.npy" 1,6,5 $(python3 -c 'print(",".join(["1"] * 30))')
expect_error op "block table of the wrong shape" "bl.npy: a block layout must be int32 or int64 \[L, 6, 6\]" \
  sparse_attention "${base[@]}" --attr layout="$tmp/bl.npy"
$npy ints "$tmp/bl2.npy" 6,6 $(python3 -c 'print(",".join(["1"] * 35 + ["2"]))')
expect_error op "block table not 0/1" "bl2.npy: entry 35 is 2; a block layout holds 0 or 1" \
  sparse_attention "${base[@]}" --attr layout="$tmp/bl2.npy"
expect_error op "two layouts" "needs exactly one layout" \
  sparse_attention "${base[@]}" --attr layout="$tmp/bl2.npy" --attr pattern=window:4
expect_error op "no block size" "needs --attr block=N" \
  sparse_attention "${in_qkv[@]}" --attr pattern=window:4 "${out[@]}"
expect_error op "bad pattern item" "bad item \"window:x\"" \
  sparse_attention "${base[@]}" --attr pattern=window:x
expect_error op "unknown attribute" "unknown attribute \"windw\" for op sparse_attention" \
  sparse_attention "${base[@]}" --attr windw=4

vkf_summary
