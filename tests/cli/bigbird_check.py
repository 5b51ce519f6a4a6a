#!/usr/bin/env python3
"""Checks vkf's BigBird outputs against the goldens of tools/goldens/make_bigbird_golden.py without numpy
(CLI tests only; run from the repository root).

  bigbird_check.py GOLDEN_DIR HIDDEN.npy POOLED.npy TOL [LOGITS.npy]   last_hidden_state at
      unmasked positions, pooler_output (and a task head's logits, every position) within TOL
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_tool import read  # noqa: E402


def main():
    g, hidden, pooled, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    _, mask = read(g + "/attention_mask.npy")
    (sh, h), (sgh, gh) = read(hidden), read(g + "/last_hidden_state.npy")
    (sp, p), (sgp, gp) = read(pooled), read(g + "/pooler_output.npy")
    if sh != sgh or sp != sgp:
        sys.exit("shapes %s, %s; golden %s, %s" % (sh, sp, sgh, sgp))
    d = sh[-1]
    e = max((abs(x - y) for i, (x, y) in enumerate(zip(h, gh)) if mask[i // d]), default=0.0)
    ep = max((abs(x - y) for x, y in zip(p, gp)), default=0.0)
    el = 0.0
    if len(sys.argv) > 5:
        (sl, lg), (sgl, glg) = read(sys.argv[5]), read(g + "/logits.npy")
        if sl != sgl:
            sys.exit("logits shape %s, golden %s" % (sl, sgl))
        el = max((abs(x - y) for x, y in zip(lg, glg)), default=0.0)
    if e > tol or ep > tol or el > tol:
        sys.exit("%s: max |diff| %g (last_hidden_state, unmasked), %g (pooler_output), %g (logits),"
                 " tol %g" % (g, e, ep, el, tol))


if __name__ == "__main__":
    main()
