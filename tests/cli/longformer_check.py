#!/usr/bin/env python3
"""Checks vkf forward's Longformer outputs against tools/goldens/make_longformer_golden.py's goldens
without numpy (CLI tests only; run from the repository root).

  longformer_check.py GOLDEN_DIR SUFFIX HIDDEN.npy POOLED.npy [TOL]
      last_hidden_state within TOL (default 1e-3) of GOLDEN_DIR/last_hidden_state<SUFFIX>.npy at
      the positions attention_mask keeps, pooler_output within TOL (SUFFIX "" or "_local")
"""
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


def main(g, suffix, hidden, pooled, tol="1e-3"):
    tol = float(tol)
    _, mask = read(g + "/attention_mask.npy")
    h = read(hidden)
    d = h[0][-1]
    eh = max_diff(h, read("%s/last_hidden_state%s.npy" % (g, suffix)), lambda i: mask[i // d] != 0)
    ep = max_diff(read(pooled), read("%s/pooler_output%s.npy" % (g, suffix)))
    if not (eh < tol and ep < tol):
        sys.exit("last_hidden_state %g, pooler_output %g" % (eh, ep))


if __name__ == "__main__":
    main(*sys.argv[1:])
