"""D2L's attention pooling (D2L's Nadaraya-Watson kernel regression, "Attention Pooling by
Similarity") in numpy, as D2L writes it with torch, checked through `vkf op
attention_pooling` on the device and on the interpreter (--cpu):

    dists = x_train.reshape((-1, 1)) - x_val.reshape((1, -1))
    k = exp(-dists**2 / (2 * sigma**2))      # gaussian_with_width(sigma)
    attention_w = k / k.sum(0)               # [keys, queries]
    y_hat = y_train @ attention_w

and its vector form (|q - k|^2 for d-dimensional queries and keys, several value columns).
Usage: pooling_ref.py VKF TMPDIR. One line per check; exits 1 on any failure.
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


def vkf_op(ins, attrs, cpu):
    out = os.path.join(TMP, "out.npy")
    cmd = [VKF, "op", "attention_pooling", "--out", out]
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


def check(name, got, want, tol):
    global failures
    err = float(np.abs(got.astype(np.float64) - want).max()) if got.shape == want.shape else None
    if err is not None and err <= tol:
        print("ok %s (max err %.2e)" % (name, err))
    else:
        failures += 1
        print("FAIL %s: shape %s vs %s, max err %s" % (name, got.shape, want.shape, err))


def nadaraya_watson(x_train, y_train, x_val, sigma):
    dists = x_train.reshape((-1, 1)) - x_val.reshape((1, -1))
    k = np.exp(-dists ** 2 / (2 * sigma ** 2))
    attention_w = k / k.sum(0)
    return y_train @ attention_w, attention_w


def nadaraya_watson_vectors(keys, values, queries, sigma):
    d2 = ((keys[:, None, :] - queries[None, :, :]) ** 2).sum(-1)  # [keys, queries]
    k = np.exp(-(d2 - d2.min(0)) / (2 * sigma ** 2))  # the same weights, no underflow
    attention_w = k / k.sum(0)
    return attention_w.T @ values, attention_w


rng = np.random.default_rng(7)
# D2L's data: 40 sorted training points on [0, 5), f(x) = 2 sin(x) + x plus noise.
x_train = np.sort(rng.random(40) * 5)
y_train = 2 * np.sin(x_train) + x_train + rng.standard_normal(40)
x_val = np.arange(0, 5, 0.1)
ins = [save("x_val", x_val), save("x_train", x_train), save("y_train", y_train)]
for cpu in (False, True):
    where = "cpu" if cpu else "device"
    for sigma in (0.1, 0.2, 0.5, 1.0):
        y_hat, w = nadaraya_watson(x_train.astype(np.float32).astype(np.float64),
                                   y_train.astype(np.float32).astype(np.float64),
                                   x_val.astype(np.float32).astype(np.float64), sigma)
        check("y_hat sigma %g %s" % (sigma, where), vkf_op(ins, ["sigma=%g" % sigma], cpu), y_hat,
              2e-4)
        check("weights sigma %g %s" % (sigma, where),
              vkf_op(ins, ["sigma=%g" % sigma, "weights=1"], cpu), w.T, 2e-5)
# Vectors: 3-d queries and keys, 2 value columns, 300 keys (the weights in two column blocks).
keys = rng.standard_normal((300, 3))
values = rng.standard_normal((300, 2))
queries = rng.standard_normal((17, 3)) * 1.5
ins = [save("q", queries), save("k", keys), save("v", values)]
q32, k32, v32 = (a.astype(np.float32).astype(np.float64) for a in (queries, keys, values))
y, w = nadaraya_watson_vectors(k32, v32, q32, 0.7)
for cpu in (False, True):
    where = "cpu" if cpu else "device"
    check("vectors y %s" % where, vkf_op(ins, ["sigma=0.7"], cpu), y, 2e-4)
    check("vectors weights %s" % where, vkf_op(ins, ["sigma=0.7", "weights=1"], cpu), w.T, 2e-5)
sys.exit(1 if failures else 0)
