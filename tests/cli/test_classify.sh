#!/usr/bin/env bash
# vkf classify / vkf bench model end to end: output format, --json, VKF_CHECK=1, and every bad
# input giving exactly one "vkf: ..." line on stderr and exit status 1 (never a crash).
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
images=(assets/images/cat.jpg assets/images/rocket.jpg)

# Text output: each image, then K labelled lines (the default model: cli/test_default_vit).
if "$VKF" classify --top 3 --model tests/models/data/vit_tiny "${images[@]}" >"$tmp/out" 2>"$tmp/err"; then ok; else bad "classify exit $?"; fi
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

# --top beyond the label count (vit_tiny has 7, deit_cls_tiny 5: the default --top 5 is not less)
# gives exactly the label count, in JSON and in text, never a crash or "(null)" rows.
if "$VKF" classify --json --top 10 --model tests/models/data/vit_tiny "${images[0]}" >"$tmp/top.json" 2>"$tmp/err"; then ok; else bad "--top 10 --json exit $?: $(cat "$tmp/err")"; fi
python3 - "$tmp/top.json" <<'EOF2' && ok || bad "--top 10 json: $(cat "$tmp/top.json")"
import json, sys
top = json.load(open(sys.argv[1]))[0]["top"]
assert len(top) == 7 and len({t["id"] for t in top}) == 7 and all(t["label"] for t in top), top
assert abs(sum(t["probability"] for t in top) - 1) < 1e-4, top
EOF2
if "$VKF" classify --top 10 --model tests/models/data/vit_tiny "${images[0]}" >"$tmp/top.txt" 2>/dev/null; then ok; else bad "--top 10 text exit $?"; fi
[ "$(grep -c '%' "$tmp/top.txt")" -eq 7 ] && ! grep -q "(null)" "$tmp/top.txt" && ok || bad "--top 10 text: $(cat "$tmp/top.txt")"
if "$VKF" classify --json --model tests/models/data/deit_cls_tiny "${images[0]}" >"$tmp/top5.json" 2>/dev/null; then ok; else bad "deit_cls_tiny --json exit $?"; fi

# --compare-logits is a check: the run's own logits pass, other logits exit 1 with one line naming
# the difference and the tolerance; --tolerance takes a number.
if "$VKF" classify --model tests/models/data/vit_tiny --save-logits "$tmp/logits.npy" "${images[@]}" >/dev/null 2>&1 &&
  "$VKF" classify --model tests/models/data/vit_tiny --compare-logits "$tmp/logits.npy" "${images[@]}" >/dev/null 2>"$tmp/err"; then ok; else bad "self compare: $(cat "$tmp/err")"; fi
grep -q "top-1 agrees 2/2" "$tmp/err" && ok || bad "self compare report: $(cat "$tmp/err")"
python3 tests/cli/npy_tool.py write "$tmp/other.npy" 2,7 5
expect_error classify "compare-logits mismatch" "max |logit diff| .* (tolerance 0.001)" --model tests/models/data/vit_tiny --compare-logits "$tmp/other.npy" "${images[@]}"
expect_error classify "compare-logits mismatch, loose tolerance" "tolerance 5" --model tests/models/data/vit_tiny --tolerance 5 --compare-logits "$tmp/other.npy" "${images[@]}"
"$VKF" classify --model tests/models/data/vit_tiny --tolerance abc --compare-logits "$tmp/logits.npy" "${images[0]}" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--tolerance" "$tmp/err" && ok || bad "--tolerance abc: $(cat "$tmp/err")"

# VKF_CHECK=1 compares every node with the interpreter and reports agreement.
if VKF_CHECK=1 "$VKF" classify --model tests/models/data/vit_tiny "${images[0]}" >/dev/null 2>"$tmp/err"; then ok; else bad "VKF_CHECK run: $(cat "$tmp/err")"; fi
grep -q "nodes agree with the interpreter" "$tmp/err" && ok || bad "no VKF_CHECK report"

if "$VKF" bench model --model tests/models/data/vit_tiny --runs 2 --warmup 1 >"$tmp/bench" 2>&1; then ok; else bad "bench model: $(cat "$tmp/bench")"; fi
grep -q "^latency: .* ± " "$tmp/bench" && grep -q "^| matmul |" "$tmp/bench" && ok || bad "bench output: $(cat "$tmp/bench")"

# Bad inputs: exit 1, one stderr line naming the problem.
mkdir "$tmp/empty"
expect_error classify "empty folder" "config.json" --model "$tmp/empty" "${images[0]}"
# A 250 KB PNG declaring 64x64 RGB whose IDAT inflates to 256 MiB: refused, within bounded memory
# (stb's inflate buffer may not grow past what the header allows).
python3 - "$tmp/bomb.png" <<'PY'
import struct, sys, zlib
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
idat = zlib.compress(b"\0" * (256 << 20), 9)
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0))
                              + chunk(b"IDAT", idat) + chunk(b"IEND", b""))
PY
# (measured from a small process: a child forked from one holding the 256 MiB would count it)
python3 - "$VKF" "$tmp/bomb.png" <<'PY' && ok || bad "PNG inflate bomb: see above"
import resource, subprocess, sys
p = subprocess.run([sys.argv[1], "classify", "--model", "tests/models/data/vit_tiny", sys.argv[2]],
                   capture_output=True, text=True, timeout=120)
assert p.returncode == 1 and "inflates to more than the 64x64 image" in p.stderr, p.stderr
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
assert rss < 200 << 10, "peak RSS %d MiB" % (rss >> 10)
PY
python3 tests/cli/poison_checkpoint.py tests/models/data/vit_tiny "$tmp/nan_vit" classifier.bias
expect_error classify "NaN logits" "the logits of image 0 holds NaN at label 0" --model "$tmp/nan_vit" --json "${images[0]}"
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
# An empty or oversized PNG is named as such, with its size, not "not a PNG or JPEG image".
python3 - "$tmp" <<'EOF2'
import struct, sys, zlib
def png(w, h, path):
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b""))
png(0, 0, sys.argv[1] + "/empty.png")
png(20000, 20000, sys.argv[1] + "/huge.png")
EOF2
expect_error classify "0x0 PNG" "empty.png: empty image (0x0 pixels)" "$tmp/empty.png"
expect_error classify "20000x20000 PNG" "huge.png: image is 20000x20000, larger than the limits" "$tmp/huge.png"
# A folder with PyTorch weights only: say that only safetensors is read and how to convert.
mkdir "$tmp/torch"
cp tests/models/data/vit_tiny/*.json "$tmp/torch/"
echo stub >"$tmp/torch/pytorch_model.bin"
expect_error classify "pytorch_model.bin only" "pytorch_model.bin is PyTorch weights, but only safetensors is read: convert every tensor .*save_file(.*model.safetensors')" --model "$tmp/torch" "${images[0]}"

vkf_summary
