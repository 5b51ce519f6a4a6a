#!/usr/bin/env bash
# vkf classify / vkf bench model end to end: output format, --json, VKF_CHECK=1, and every bad
# input giving exactly one "vkf: ..." line on stderr and exit status 1 (never a crash).
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
images=(assets/images/cat.jpg assets/images/rocket.jpg)

# Default model (the tiny checkpoint), text output: each image, then K labelled lines.
if "$VKF" classify --top 3 "${images[@]}" >"$tmp/out" 2>"$tmp/err"; then ok; else bad "classify exit $?"; fi
grep -q "random weights" "$tmp/err" && ok || bad "no random-weights notice: $(cat "$tmp/err")"
[ "$(grep -c '%' "$tmp/out")" -eq 6 ] && ok || bad "expected 6 label lines: $(cat "$tmp/out")"
grep -q "^assets/images/rocket.jpg$" "$tmp/out" && ok || bad "image name missing"

# JSON: valid, one entry per image, probabilities sorted and in (0, 1].
if "$VKF" classify --json --model tests/models/data/deit_tiny "${images[@]}" >"$tmp/json" 2>/dev/null; then ok; else bad "json exit"; fi
python3 - "$tmp/json" <<'EOF' && ok || bad "json content: $(cat "$tmp/json")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert len(doc) == 2 and doc[1]["image"].endswith("rocket.jpg"), doc
for entry in doc:
    p = [t["probability"] for t in entry["top"]]
    assert len(p) == 5 and p == sorted(p, reverse=True) and 0 < p[-1] and p[0] <= 1, p
EOF

# VKF_CHECK=1 compares every node with the interpreter and reports agreement.
if VKF_CHECK=1 "$VKF" classify --model tests/models/data/vit_tiny "${images[0]}" >/dev/null 2>"$tmp/err"; then ok; else bad "VKF_CHECK run: $(cat "$tmp/err")"; fi
grep -q "nodes agree with the interpreter" "$tmp/err" && ok || bad "no VKF_CHECK report"

if "$VKF" bench model --model tests/models/data/vit_tiny --runs 2 --warmup 1 >"$tmp/bench" 2>&1; then ok; else bad "bench model: $(cat "$tmp/bench")"; fi
grep -q "^latency: .* ± " "$tmp/bench" && grep -q "^| matmul |" "$tmp/bench" && ok || bad "bench output: $(cat "$tmp/bench")"

# Bad inputs: exit 1, one stderr line naming the problem.
mkdir "$tmp/empty"
expect_error classify "empty folder" "config.json" --model "$tmp/empty" "${images[0]}"
expect_error classify "missing folder" "no-such-model" --model "$tmp/no-such-model" "${images[0]}"
cp -r tests/models/data/vit_tiny "$tmp/trunc"
head -c 50000 tests/models/data/vit_tiny/model.safetensors >"$tmp/trunc/model.safetensors"
expect_error classify "truncated safetensors" "model.safetensors" --model "$tmp/trunc" "${images[0]}"
cp -r tests/models/data/vit_tiny "$tmp/hdr"
{ printf '\xff\xff\xff\x00\x00\x00\x00\x00'; tail -c +9 tests/models/data/vit_tiny/model.safetensors; } >"$tmp/hdr/model.safetensors"
expect_error classify "header past EOF" "header length" --model "$tmp/hdr" "${images[0]}"
expect_error classify "non-image file" "not a PNG or JPEG" tests/models/data/vit_tiny/config.json
expect_error classify "missing image" "nope.jpg" "$tmp/nope.jpg"
expect_error classify "bare model dir" "config.json" --model assets/images "${images[0]}"

vkf_summary
