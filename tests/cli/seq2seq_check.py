#!/usr/bin/env python3
"""Checks vkf's encoder-decoder outputs against the goldens of tools/goldens/make_encdec_golden.py without
numpy (CLI tests only; run from the repository root).

  seq2seq_check.py forward GOLDEN_DIR ENC.npy LOGITS.npy   encoder output (real positions) and
                                                           logits within 1e-3
  seq2seq_check.py greedy GOLDEN_DIR I OUT.json LOGITS.npy source I's ids equal, logits within 1e-3
  seq2seq_check.py beam GOLDEN_DIR K OUT.json              beam setting K: sequences equal, scores
                                                           within 1e-4
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_tool import read  # noqa: E402


def max_diff(a, b, keep=None):
    (sa, va), (sb, vb) = a, b
    if sa != sb:
        sys.exit("shapes %s and %s differ" % (sa, sb))
    return max((abs(x - y) for i, (x, y) in enumerate(zip(va, vb)) if keep is None or keep(i)),
               default=0.0)


def forward(g, enc, logits):
    shape, mask = read(g + "/attention_mask.npy")
    d_model = read(enc)[0][-1]
    e = max_diff(read(enc), read(g + "/encoder_last_hidden_state.npy"),
                 lambda i: mask[i // d_model] != 0)
    lg = max_diff(read(logits), read(g + "/logits.npy"))
    if not (e < 1e-3 and lg < 1e-3):
        sys.exit("encoder %g, logits %g" % (e, lg))


def greedy(g, i, out, logits):
    got = json.load(open(out))["generated_ids"]
    want = list(read("%s/greedy_%s_ids.npy" % (g, i))[1])
    if got != want:
        sys.exit("ids %s, reference %s" % (got, want))
    d = max_diff(read(logits), read("%s/greedy_%s_logits.npy" % (g, i)))
    if not d < 1e-3:
        sys.exit("logits differ by %g" % d)


def beam(g, k, out):
    b = json.load(open(g + "/golden.json"))["beam"][int(k)]["batch"]
    (_, length), seqs = read("%s/%s.npy" % (g, b["sequences"]))
    scores = read("%s/%s.npy" % (g, b["scores"]))[1]
    rows = json.load(open(out))
    for r, row in enumerate(rows):
        want = list(seqs[r * length + 1:r * length + b["lengths"][r]])
        if row["generated_ids"] != want:
            sys.exit("source %d: %s, reference %s" % (r, row["generated_ids"], want))
        if abs(row["sequence_score"] - scores[r]) > 1e-4:
            sys.exit("source %d: score %g, reference %g" % (r, row["sequence_score"], scores[r]))


if __name__ == "__main__":
    {"forward": forward, "greedy": greedy, "beam": beam}[sys.argv[1]](*sys.argv[2:])
