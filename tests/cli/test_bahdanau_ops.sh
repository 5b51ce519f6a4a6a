#!/usr/bin/env bash
# Bahdanau's ops through vkf op. additive_attention (D2L's AdditiveAttention, fused over the
# keys) against D2L's own form in numpy (tests/cli/additive_ref.py: their toy example, valid
# lengths per row and per query, 300 keys, 300 value dims, no lengths), the context and the
# weights, on the device (f32 and f16) and on the interpreter, also under the mobile and nvidia
# profiles (shared-memory reductions; 256-wide workgroups).
# gru_scan against torch.nn.GRU's documented recurrence in numpy (tests/cli/gru_ref.py). Bad
# inputs are one-line errors naming them.
set -u
. "$(dirname "$0")/lib.sh"
# /usr/bin/python3: the Debian python with python3-numpy (tools/dev/setup.sh).
for profile in "" mobile nvidia; do
  if VKF_DEVICE_PROFILE=$profile /usr/bin/python3 tests/cli/additive_ref.py "$VKF" "$tmp" >"$tmp/log" 2>&1; then
    ok
  else
    bad "numpy reference ${profile:-default}: $(grep -v '^ok' "$tmp/log")"
  fi
  grep -c '^ok' "$tmp/log" | grep -q '^30$' && ok || bad "expected 30 passing checks: $(cat "$tmp/log")"
done

for profile in "" mobile nvidia; do
  if VKF_DEVICE_PROFILE=$profile /usr/bin/python3 tests/cli/gru_ref.py "$VKF" "$tmp" >"$tmp/log" 2>&1; then
    ok
  else
    bad "GRU numpy reference ${profile:-default}: $(grep -v '^ok' "$tmp/log")"
  fi
  grep -c '^ok' "$tmp/log" | grep -q '^8$' && ok || bad "expected 8 passing GRU checks: $(cat "$tmp/log")"
done

NPY=tests/cli/npy_tool.py
python3 $NPY write "$tmp/q.npy" 2,3,4 1 && python3 $NPY write "$tmp/k.npy" 2,5,4 2 &&
  python3 $NPY write "$tmp/w.npy" 4 3 && python3 $NPY write "$tmp/v.npy" 2,5,6 4 &&
  python3 $NPY write "$tmp/w3.npy" 3 5 && python3 $NPY write "$tmp/k3.npy" 2,5,3 6 && ok || bad "inputs"
for path in "" --cpu; do
  expect_error op "hidden mismatch $path" "queries \[2,3,4\], keys \[2,5,3\], w_v \[4\], values \[2,5,6\]" \
    additive_attention --in "$tmp/q.npy" --in "$tmp/k3.npy" --in "$tmp/w.npy" --in "$tmp/v.npy" \
    --out "$tmp/o.npy" $path
  expect_error op "w_v mismatch $path" "w_v \[3\]" additive_attention --in "$tmp/q.npy" \
    --in "$tmp/k.npy" --in "$tmp/w3.npy" --in "$tmp/v.npy" --out "$tmp/o.npy" $path
  expect_error op "float lengths $path" "valid_lens f32 \[3\]: expected i32" additive_attention --in "$tmp/q.npy" \
    --in "$tmp/k.npy" --in "$tmp/w.npy" --in "$tmp/v.npy" --in "valid_lens=$tmp/w3.npy" \
    --out "$tmp/o.npy" $path
  expect_error op "weights=2 $path" "weights=2" additive_attention --in "$tmp/q.npy" \
    --in "$tmp/k.npy" --in "$tmp/w.npy" --in "$tmp/v.npy" --attr weights=2 --out "$tmp/o.npy" $path
done
python3 $NPY write "$tmp/g.npy" 2,4,12 1 && python3 $NPY write "$tmp/whh.npy" 12,4 2 &&
  python3 $NPY write "$tmp/bhh.npy" 12 3 && python3 $NPY write "$tmp/whh5.npy" 15,5 4 && ok || bad "GRU inputs"
for path in "" --cpu; do
  expect_error op "gru hidden mismatch $path" "gates \[2,4,12\], w_hh \[15,5\], b_hh \[12\], h0 none" \
    gru_scan --in "$tmp/g.npy" --in "$tmp/whh5.npy" --in "$tmp/bhh.npy" --out "$tmp/o.npy" $path
  expect_error op "gru h0 mismatch $path" "h0 \[12\]" gru_scan --in "$tmp/g.npy" \
    --in "$tmp/whh.npy" --in "$tmp/bhh.npy" --in "h0=$tmp/bhh.npy" --out "$tmp/o.npy" $path
done
vkf_summary
