#!/usr/bin/env bash
# `vkf classify` without --model: the built-in ViT trained on Fashion-MNIST
# (assets/models/vit_fashion_mnist, tools/goldens/train_default_vit.py) on the sample PNGs that `make run`
# shows: logits within 1e-3 of PyTorch's (ViTImageProcessor on the same files), the same top-1,
# and that top-1 is the true label in each file name. tests/models/test_default_vit checks the
# committed held-out images the same way.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
samples=(assets/images/fashion-mnist/*.png)
golden=tests/models/golden/fashion_mnist/samples_logits.npy

[ "${#samples[@]}" -ge 10 ] && ok || bad "expected at least 10 samples, found ${#samples[@]}"

# Parity with PyTorch through the whole CLI path (decode, processor, device); exit 1 past 1e-3 or
# on any top-1 difference.
if "$VKF" classify --compare-logits "$golden" "${samples[@]}" >"$tmp/out" 2>"$tmp/err"; then
  ok
else
  bad "parity with PyTorch: $(cat "$tmp/err")"
fi
grep -q "top-1 agrees ${#samples[@]}/${#samples[@]}" "$tmp/err" && ok || bad "no agreement line: $(cat "$tmp/err")"
grep -q "built-in Fashion-MNIST ViT" "$tmp/err" && ok || bad "no default-model notice: $(cat "$tmp/err")"

# Each sample's top-1 is its true label (NNNN_<label>.png, the label lower-cased, '/' and ' ' as '-').
if "$VKF" classify --json --top 1 "${samples[@]}" >"$tmp/json" 2>"$tmp/err"; then ok; else bad "json exit: $(cat "$tmp/err")"; fi
python3 - "$tmp/json" <<'EOF' && ok || bad "top-1 is not the true label"
import json, os, re, sys
doc = json.load(open(sys.argv[1]))
wrong = []
for entry in doc:
    truth = re.match(r"\d+_(.*)\.png$", os.path.basename(entry["image"])).group(1)
    got = entry["top"][0]["label"].lower().replace("/", "-").replace(" ", "-")
    if got != truth:
        wrong.append(f"{entry['image']}: {entry['top'][0]['label']}")
print(f"default ViT: {len(doc) - len(wrong)}/{len(doc)} samples labelled correctly", file=sys.stderr)
assert not wrong and doc, wrong
EOF

vkf_summary
