"""torch.nn.GRU's documented recurrence (batch first, gate order r, z, n) in numpy, checked
through `vkf op gru_scan` on the device and on the interpreter (--cpu):

    r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
    z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
    h' = (1 - z) * n + z * h

The op takes the input gates x W_ih^T + b_ih of every step (one matmul); this script computes
them and the recurrence. Cases: D2L's sizes (16 hidden units, 9 steps), one step, 300 hidden
units (more than a workgroup), with and without h0.
Usage: gru_ref.py VKF TMPDIR. One line per check; exits 1 on any failure.
"""
import os
import subprocess
import sys

import numpy as np

VKF, TMP = sys.argv[1], sys.argv[2]
failures = 0


def save(name, a):
    path = os.path.join(TMP, name + ".npy")
    np.save(path, np.ascontiguousarray(a, dtype=np.float32))
    return path


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gru(x, w_ih, w_hh, b_ih, b_hh, h0):
    b, steps, _ = x.shape
    h = w_hh.shape[1]
    gi = x @ w_ih.T + b_ih
    state = np.zeros((b, h)) if h0 is None else h0.astype(np.float64)
    out = np.zeros((b, steps, h))
    for t in range(steps):
        gh = state @ w_hh.T + b_hh
        r = sigmoid(gi[:, t, :h] + gh[:, :h])
        z = sigmoid(gi[:, t, h:2 * h] + gh[:, h:2 * h])
        n = np.tanh(gi[:, t, 2 * h:] + r * gh[:, 2 * h:])
        state = (1 - z) * n + z * state
        out[:, t] = state
    return gi, out


def check(label, b, steps, d_in, h, with_h0, seed):
    global failures
    g = np.random.default_rng(seed)
    k = 1 / np.sqrt(h)  # torch's init range
    x = g.normal(0, 1, (b, steps, d_in))
    w_ih, w_hh = g.uniform(-k, k, (3 * h, d_in)), g.uniform(-k, k, (3 * h, h))
    b_ih, b_hh = g.uniform(-k, k, 3 * h), g.uniform(-k, k, 3 * h)
    h0 = g.normal(0, 1, (b, h)) if with_h0 else None
    gi, want = gru(x, w_ih, w_hh, b_ih, b_hh, h0)
    ins = [save("gi", gi), save("whh", w_hh), save("bhh", b_hh)]
    if with_h0:
        ins.append("h0=" + save("h0", h0))
    for cpu in (False, True):
        where = label + (" cpu" if cpu else "")
        out = os.path.join(TMP, "out.npy")
        cmd = [VKF, "op", "gru_scan", "--out", out] + sum((["--in", i] for i in ins), [])
        run = subprocess.run(cmd + (["--cpu"] if cpu else []), capture_output=True, text=True)
        if run.returncode != 0:
            failures += 1
            print("FAIL", where, run.stderr.strip())
            continue
        got = np.load(out)
        err = float(np.abs(got - want).max())
        if got.shape != want.shape or not err <= 5e-5:
            failures += 1
            print("FAIL", where, "shape %s vs %s, max |diff| %g" % (got.shape, want.shape, err))
        else:
            print("ok", where)


check("D2L's sizes", 4, 9, 32, 16, False, 1)
check("one step, h0", 2, 1, 5, 8, True, 2)
check("300 units, h0", 2, 6, 7, 300, True, 3)
check("odd sizes", 3, 13, 3, 37, False, 4)
sys.exit(1 if failures else 0)
