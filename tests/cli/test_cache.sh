#!/usr/bin/env bash
# The SPIR-V and pipeline disk caches (VKF_CACHE_DIR) survive corrupt entries: a byte flipped in
# the middle, a truncation, garbage of the right size (whole file, or behind an intact header), an
# empty file and an entry stored under another key are each discarded with one warning naming the
# file, the run still succeeds with the validation layer on and gives the same result, and the
# entry is rewritten byte for byte as a clean run wrote it. No temporary file is left behind.
set -u
. "$(dirname "$0")/lib.sh"
check() { if eval "$2"; then ok; else bad "$1"; fi; }
npy="python3 tests/cli/npy_tool.py"
cache="$tmp/cache"
$npy write "$tmp/x.npy" 3,5,33 4

# run NAME: the op with the test's cache and validation on; output NAME.npy, stderr NAME.err.
# relu is a generated kernel: fixed variants come from the binary's build-time SPIR-V and never
# reach the disk cache.
run() {
  VKF_CACHE_DIR="$cache" VKF_VALIDATE=1 "$VKF" op relu --in "$tmp/x.npy" \
    --out "$tmp/$1.npy" 2>"$tmp/$1.err"
}

# corrupt MODE FILE [OTHER]
corrupt() {
  python3 - "$@" <<'PY'
import os, random, sys
mode, path = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
rng = random.Random(len(data))
if mode == "flip":
    data[len(data) // 2] ^= 0x10
elif mode == "truncate":
    data = data[: len(data) // 2]
elif mode == "garbage":
    data = bytearray(rng.getrandbits(8) for _ in data)
elif mode == "garbage_body":  # our header and SPIR-V's first words intact, the rest random
    data = data[:60] + bytearray(rng.getrandbits(8) for _ in data[60:])
elif mode == "empty":
    data = b""
elif mode == "other_key":  # a valid entry of another key under this name
    data = open(sys.argv[3], "rb").read()
open(path, "wb").write(data)
PY
}

run ref
rc=$?
check "cold run succeeds silently" '[ $rc -eq 0 ] && [ ! -s "$tmp/ref.err" ]'
shopt -s nullglob
entries=("$cache"/*.spv*)
pipes=("$cache"/pipelines-*)
shopt -u nullglob
check "SPIR-V and pipeline entries written" '[ ${#entries[@]} -ge 1 ] && [ ${#pipes[@]} -eq 1 ]'
mkdir "$tmp/good"
cp "${entries[@]}" "$tmp/good/"

for mode in flip truncate garbage garbage_body empty other_key; do
  for f in "${entries[@]}"; do corrupt "$mode" "$f" "${pipes[0]}"; done
  run "$mode"
  rc=$?
  check "$mode: the run succeeds with validation on ($(head -c 300 "$tmp/$mode.err"))" '[ $rc -eq 0 ]'
  check "$mode: same result" '$npy compare "$tmp/$mode.npy" "$tmp/ref.npy" 0'
  warned=$(grep -c "SPIR-V cache entry $cache/.* is corrupt (.*): discarded, rebuilding it" "$tmp/$mode.err")
  check "$mode: one warning per entry, nothing else (${warned} of ${#entries[@]})" \
    '[ "$warned" -eq ${#entries[@]} ] && [ "$(wc -l <"$tmp/$mode.err")" -eq ${#entries[@]} ]'
  for f in "${entries[@]}"; do
    check "$mode: $(basename "$f") rewritten as a clean run wrote it" 'cmp -s "$f" "$tmp/good/$(basename "$f")"'
  done
  check "$mode: no temporary files" '[ -z "$(ls "$cache" | grep -v "\.vkfc$")" ]'
done

# The pipeline cache file gets the same check (a corrupt blob can crash a driver).
corrupt flip "${pipes[0]}"
run pipe
rc=$?
check "pipeline flip: run succeeds" '[ $rc -eq 0 ] && $npy compare "$tmp/pipe.npy" "$tmp/ref.npy" 0'
check "pipeline flip: one warning" \
  '[ "$(wc -l <"$tmp/pipe.err")" -eq 1 ] && grep -q "pipeline cache entry .*pipelines-.* is corrupt (content hash mismatch)" "$tmp/pipe.err"'
run again
rc=$?
check "then a clean run: every entry verifies, no warning" '[ $rc -eq 0 ] && [ ! -s "$tmp/again.err" ]'
vkf_summary
