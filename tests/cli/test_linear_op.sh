#!/usr/bin/env bash
# vkf op for the linear-attention family against a numpy implementation of the papers' equations
# (tests/cli/linear_ref.py: elu+1, FAVOR+ and RFF features given the same omega, the non-causal
# product, the causal RNN with and without RFA's gate and an initial state, the final state), on
# the device and on the interpreter; FAVOR+ with 2048 orthogonal features approximates softmax
# attention. Bad attributes and shapes are one-line errors naming them.
set -u
. "$(dirname "$0")/lib.sh"
# /usr/bin/python3: the Debian python with python3-numpy (tools/dev/setup.sh), whatever python3 PATH finds.
if /usr/bin/python3 tests/cli/linear_ref.py "$VKF" "$tmp" >"$tmp/log" 2>&1; then ok; else bad "numpy reference: $(grep -v '^ok' "$tmp/log")"; fi
grep -c '^ok' "$tmp/log" | grep -q '^17$' && ok || bad "expected 17 passing checks: $(cat "$tmp/log")"

qkv=(--in "$tmp/pq.npy" --in "$tmp/pk.npy" --in "$tmp/v.npy" --out "$tmp/o.npy")
for path in "" --cpu; do
  expect_error op "unknown feature map $path" "attribute kind=relu" \
    linear_features --in "$tmp/x.npy" --attr kind=relu --out "$tmp/o.npy" $path
  expect_error op "favor without omega $path" "favor needs omega \[M, 7\]" \
    linear_features --in "$tmp/x.npy" --attr kind=favor --out "$tmp/o.npy" $path
  expect_error op "negative scale $path" "attribute scale=-1" \
    linear_features --in "$tmp/x.npy" --in "$tmp/omega.npy" --attr kind=rff --attr scale=-1 --out "$tmp/o.npy" $path
  expect_error op "chunk out of range $path" "attribute chunk=2000" \
    linear_attention "${qkv[@]}" --attr causal=1 --attr chunk=2000 $path
  expect_error op "unknown key $path" 'unknown attribute "gate" for op linear_attention (valid: causal, eps, chunk)' \
    linear_attention "${qkv[@]}" --attr gate=1 $path
  expect_error op "gate without causal $path" "a gate or a state needs causal=1" \
    linear_attention "${qkv[@]}" --in gate="$tmp/gate.npy" $path
  expect_error op "state of the wrong shape $path" "state \[2,3,45,7\], expected \[2,3,7,6\]" \
    linear_state_write --in "$tmp/pk.npy" --in "$tmp/pk.npy" --in "$tmp/v.npy" --out "$tmp/o.npy" $path
done
vkf_summary
