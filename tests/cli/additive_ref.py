"""D2L's additive attention (D2L's AdditiveAttention with its masked_softmax) in numpy, as
D2L writes it with torch, checked through `vkf op additive_attention` on the device and on
the interpreter (--cpu):

    queries, keys = W_q(queries), W_k(keys)
    features = tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
    scores = w_v(features).squeeze(-1)
    attention_weights = masked_softmax(scores, valid_lens)    # -1e6 past valid_lens
    return bmm(attention_weights, values)

The op takes the projected queries and keys (the projections are ordinary matmuls). Cases: the
D2L's toy example ((2, 1, 20) queries, (2, 10, 2) keys, valid lengths (2, 6)), valid lengths per
query row, lengths from 1 to the full length, more keys than one workgroup tile (300), value dims
past one per invocation, and no valid lengths. Valid lengths >= 1: D2L's -1e6 fill and the
op's zero row differ only on a row with no key left.
Usage: additive_ref.py VKF TMPDIR. One line per check; exits 1 on any failure.
"""
import os
import subprocess
import sys

import numpy as np

VKF, TMP = sys.argv[1], sys.argv[2]
failures = 0


def save(name, a, dtype=np.float32):
    path = os.path.join(TMP, name + ".npy")
    np.save(path, np.ascontiguousarray(a, dtype=dtype))
    return path


def masked_softmax(x, valid_lens):
    """D2L's masked_softmax on a 3-D x."""
    if valid_lens is None:
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    shape = x.shape
    lens = np.repeat(valid_lens, shape[1]) if valid_lens.ndim == 1 else valid_lens.reshape(-1)
    x = x.reshape(-1, shape[-1]).copy()
    mask = np.arange(shape[-1])[None, :] < lens[:, None]
    x[~mask] = -1e6
    x = x.reshape(shape)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def additive(queries, keys, values, valid_lens, w_q, w_k, w_v):
    qp, kp = queries @ w_q.T, keys @ w_k.T
    features = np.tanh(qp[:, :, None, :] + kp[:, None, :, :])
    scores = (features @ w_v.T)[..., 0]
    weights = masked_softmax(scores, valid_lens)
    return qp, kp, weights, weights @ values


def vkf_op(ins, attrs, cpu, f16):
    out = os.path.join(TMP, "out.npy")
    cmd = [VKF, "op", "additive_attention", "--out", out]
    for i in ins:
        cmd += ["--in", i]
    for a in attrs:
        cmd += ["--attr", a]
    if cpu:
        cmd.append("--cpu")
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip())
    return np.load(out)


def check(label, b, nq, nk, dq, dk, h, dv, lens, seed):
    global failures
    g = np.random.default_rng(seed)
    queries = g.normal(0, 1, (b, nq, dq))
    keys = g.normal(0, 1, (b, nk, dk))
    values = g.normal(0, 1, (b, nk, dv))
    w_q, w_k, w_v = g.normal(0, 0.5, (h, dq)), g.normal(0, 0.5, (h, dk)), g.normal(0, 0.5, (1, h))
    qp, kp, weights, context = additive(queries, keys, values, lens, w_q, w_k, w_v)
    for f16 in (False, True):
        dt = np.float16 if f16 else np.float32
        ins = [save("qp", qp, dt), save("kp", kp, dt), save("wv", w_v[0], dt), save("v", values, dt)]
        if lens is not None:
            ins.append("valid_lens=" + save("lens", lens, np.int32))
        tol = 2e-2 if f16 else 2e-5
        for cpu in ((False,) if f16 else (False, True)):
            for mode, want in (("weights=0", context), ("weights=1", weights)):
                where = "%s%s%s %s" % (label, " cpu" if cpu else "", " f16" if f16 else "", mode)
                try:
                    got = vkf_op(ins, [mode], cpu, f16).astype(np.float64)
                    err = float(np.abs(got - want).max())
                    if got.shape != want.shape or not err <= tol:
                        raise RuntimeError("shape %s vs %s, max |diff| %g" % (got.shape, want.shape, err))
                    print("ok", where)
                except RuntimeError as e:
                    failures += 1
                    print("FAIL", where, e)


check("D2L's toy", 2, 1, 10, 20, 2, 8, 4, np.array([2, 6]), 1)
check("per row", 2, 5, 9, 3, 4, 6, 7, np.array([[1, 2, 3, 9, 4], [9, 9, 8, 1, 5]]), 2)
check("300 keys", 1, 3, 300, 5, 5, 16, 12, np.array([257]), 3)
check("wide values", 2, 2, 40, 6, 6, 10, 300, np.array([40, 33]), 4)
check("no lengths", 3, 4, 17, 4, 3, 5, 6, None, 5)
sys.exit(1 if failures else 0)
