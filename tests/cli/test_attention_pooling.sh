#!/usr/bin/env bash
# vkf op attention_pooling (D2L's Nadaraya-Watson kernel regression with a Gaussian kernel,
# run through the fused attention) against D2L's own form in numpy (tests/cli/pooling_ref.py:
# their 40-point regression at sigma 0.1 .. 1, and 3-d queries and keys with 300 keys), pooled
# values and attention weights, on the device and on the interpreter; bad inputs are one-line
# errors naming them.
set -u
. "$(dirname "$0")/lib.sh"
# /usr/bin/python3: the Debian python with python3-numpy (tools/dev/setup.sh).
if /usr/bin/python3 tests/cli/pooling_ref.py "$VKF" "$tmp" >"$tmp/log" 2>&1; then ok; else bad "numpy reference: $(grep -v '^ok' "$tmp/log")"; fi
grep -c '^ok' "$tmp/log" | grep -q '^20$' && ok || bad "expected 20 passing checks: $(cat "$tmp/log")"

NPY=tests/cli/npy_tool.py
python3 $NPY write "$tmp/q3.npy" 5,3 1 && python3 $NPY write "$tmp/k2.npy" 7,2 2 &&
  python3 $NPY write "$tmp/v.npy" 7 3 && python3 $NPY write "$tmp/k5.npy" 5000 4 &&
  python3 $NPY write "$tmp/v5.npy" 5000 5 && python3 $NPY write "$tmp/q1.npy" 4 6 && ok || bad "inputs"
for path in "" --cpu; do
  expect_error op "d mismatch $path" "queries \[5, 3\], keys \[7, 2\]" attention_pooling \
    --in "$tmp/q3.npy" --in "$tmp/k2.npy" --in "$tmp/v.npy" --out "$tmp/o.npy" $path
  expect_error op "missing values $path" "values (--in 3) must be f32 \[N\] or \[N, d\]" attention_pooling \
    --in "$tmp/q3.npy" --in "$tmp/k2.npy" --out "$tmp/o.npy" $path
  expect_error op "sigma 0 $path" "attribute sigma=0" attention_pooling \
    --in "$tmp/q1.npy" --in "$tmp/k5.npy" --in "$tmp/v5.npy" --attr sigma=0 --out "$tmp/o.npy" $path
  expect_error op "weights of many keys $path" "weights=1 with 5000 keys; at most 4096" attention_pooling \
    --in "$tmp/q1.npy" --in "$tmp/k5.npy" --in "$tmp/v5.npy" --attr weights=1 --out "$tmp/o.npy" $path
done
"$VKF" op attention_pooling --help | grep -q "composite: Nadaraya-Watson" && ok || bad "--help"
vkf_summary
