"""Numpy reference of the kernelised linear attention papers' equations, checked through `vkf op`
on the device and on the interpreter (--cpu). Usage: linear_ref.py VKF TMPDIR. Prints one line per
check and exits 1 on any failure.

Equations (written from the papers, not from vkformer's code):
- Katharopoulos et al. 2020, "Transformers are RNNs": phi(x) = elu(x) + 1; non-causal
  V'_i = phi(Q_i)^T (sum_j phi(K_j) V_j^T) / (phi(Q_i)^T sum_j phi(K_j) + eps); causal as the RNN
  S_i = S_{i-1} + phi(K_i) V_i^T, z_i = z_{i-1} + phi(K_i), V'_i = phi(Q_i)^T S_i / (phi(Q_i)^T z_i + eps).
- Choromanski et al. 2021 (Performer, FAVOR+): positive random features
  phi(x) = exp(omega x' - |x'|^2 / 2) / sqrt(m), x' = x d^-1/4 (softmax_kernel_transformation
  without its max stabiliser), omega given; with many orthogonal features
  phi(q).phi(k) ~ exp(q.k / sqrt(d)), so the attention approximates softmax attention.
- Peng et al. 2021 (RFA): phi(x) = sqrt(1/m) [sin(omega x'), cos(omega x')]; gated recurrence
  g_t = sigmoid(w_g x_t + b_g) (given here as the logits), S_t = g_t S_{t-1} + (1 - g_t) phi(k_t) v_t^T,
  z_t = g_t z_{t-1} + (1 - g_t) phi(k_t).
"""
import os
import subprocess
import sys

import numpy as np

VKF, TMP = sys.argv[1], sys.argv[2]
EPS = 1e-6
failures = 0
rng = np.random.default_rng(1234)


def save(name, a):
    path = os.path.join(TMP, name + ".npy")
    np.save(path, np.ascontiguousarray(a, dtype=np.float32))
    return path


def vkf_op(op, ins, attrs, cpu):
    out = os.path.join(TMP, "out.npy")
    cmd = [VKF, "op", op, "--out", out]
    for i in ins:
        cmd += ["--in", i]
    for a in attrs:
        cmd += ["--attr", a]
    if cpu:
        cmd.append("--cpu")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(" ".join(cmd) + ": " + r.stderr.strip())
    return np.load(out)


def check(label, op, ins, attrs, want, tol=1e-4):
    global failures
    for cpu in (False, True):
        where = "cpu" if cpu else "device"
        try:
            got = vkf_op(op, ins, attrs, cpu)
        except RuntimeError as e:
            print(f"FAIL {label} ({where}): {e}")
            failures += 1
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - want))) if got.shape == want.shape else float("inf")
        ok = err <= tol * max(1.0, float(np.max(np.abs(want))))
        print(f"{'ok  ' if ok else 'FAIL'} {label} ({where}): max |err| {err:.3g}")
        failures += 0 if ok else 1


def elu1(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0)))


def favor(x, omega):
    d, m = x.shape[-1], omega.shape[0]
    xs = x * d ** -0.25
    return np.exp(xs @ omega.T - 0.5 * np.sum(xs * xs, -1, keepdims=True)) / np.sqrt(m)


def rff(x, omega):
    d, m = x.shape[-1], omega.shape[0]
    proj = (x * d ** -0.25) @ omega.T
    return np.concatenate([np.sin(proj), np.cos(proj)], -1) / np.sqrt(m)


def noncausal(pq, pk, v):
    kv = np.einsum("bhnf,bhnd->bhfd", pk, v)
    z = pk.sum(2)
    return np.einsum("bhnf,bhfd->bhnd", pq, kv) / (np.einsum("bhnf,bhf->bhn", pq, z)[..., None] + EPS)


def recurrent(pq, pk, v, gate=None, s0=None):
    """The RNN form token by token; returns outputs and the final [S | z] state."""
    b, h, n, f = pq.shape
    dv = v.shape[-1]
    s = np.zeros((b, h, f, dv + 1)) if s0 is None else s0.astype(np.float64).copy()
    out = np.zeros((b, h, n, dv))
    for t in range(n):
        upd = np.einsum("bhf,bhd->bhfd", pk[:, :, t], np.concatenate([v[:, :, t], np.ones((b, h, 1))], -1))
        if gate is None:
            s = s + upd
        else:
            g = 1.0 / (1.0 + np.exp(-gate[:, :, t]))[..., None, None]
            s = g * s + (1 - g) * upd
        num = np.einsum("bhf,bhfd->bhd", pq[:, :, t], s)
        out[:, :, t] = num[..., :dv] / (num[..., dv:] + EPS)
    return out, s


B, H, N, D, M, DV = 2, 3, 45, 7, 13, 5
x = rng.uniform(-1.5, 1.5, (B, H, N, D))
omega = rng.standard_normal((M, D))
xp, wp = save("x", x), save("omega", omega)
x32, w32 = x.astype(np.float32).astype(np.float64), omega.astype(np.float32).astype(np.float64)
check("elu+1 features", "linear_features", [xp], ["kind=elu1"], elu1(x32))
check("FAVOR+ features given omega", "linear_features", [xp, wp], ["kind=favor"], favor(x32, w32))
check("RFF features given omega", "linear_features", [xp, wp], ["kind=rff"], rff(x32, w32))

pq = elu1(rng.uniform(-1, 1, (B, H, N, D)))
pk = elu1(rng.uniform(-1, 1, (B, H, N, D)))
v = rng.uniform(-1, 1, (B, H, N, DV))
gate = rng.uniform(-3, 3, (B, H, N))
s0 = rng.uniform(0, 1, (B, H, D, DV + 1))
qp, kp, vp, gp, sp = save("pq", pq), save("pk", pk), save("v", v), save("gate", gate), save("s0", s0)
pq, pk, v, gate, s0 = (np.load(p).astype(np.float64) for p in (qp, kp, vp, gp, sp))
check("linear attention non-causal", "linear_attention", [qp, kp, vp], [], noncausal(pq, pk, v))
want, s_end = recurrent(pq, pk, v)
check("linear attention causal (chunk 8) vs the RNN", "linear_attention", [qp, kp, vp], ["causal=1", "chunk=8"], want)
check("state write vs the RNN's final state", "linear_state_write", [save("zero", np.zeros_like(s0)), kp, vp], [], s_end)
want, s_end = recurrent(pq, pk, v, gate, s0)
check("RFA gated causal from a state vs the RNN", "linear_attention",
      [qp, kp, vp, "gate=" + gp, "state=" + sp], ["causal=1", "chunk=16"], want)
check("RFA gated state write vs the RNN", "linear_state_write", [sp, kp, vp, "gate=" + gp], [], s_end)

# FAVOR+ approximates softmax attention: 2048 orthogonal features (Performer's
# gaussian_orthogonal_random_matrix, scaling 0) through the device, vs exact softmax attention.
d, m, n = 16, 2048, 64
q = rng.standard_normal((1, 1, n, d)) * 0.5
k = rng.standard_normal((1, 1, n, d)) * 0.5
vv = rng.standard_normal((1, 1, n, d))
blocks = [np.linalg.qr(rng.standard_normal((d, d)))[0].T for _ in range(m // d)]
omega_o = np.diag(np.linalg.norm(rng.standard_normal((m, d)), axis=1)) @ np.vstack(blocks)
paths = [save(nm, a) for nm, a in (("fq", q), ("fk", k), ("fv", vv), ("fw", omega_o))]
try:
    phq = vkf_op("linear_features", [paths[0], paths[3]], ["kind=favor"], False)
    phk = vkf_op("linear_features", [paths[1], paths[3]], ["kind=favor"], False)
    out = vkf_op("linear_attention", [save("fpq", phq), save("fpk", phk), paths[2]], [], False)
    logits = q[0, 0] @ k[0, 0].T / np.sqrt(d)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    exact = (p / p.sum(-1, keepdims=True)) @ vv[0, 0]
    rel = np.linalg.norm(out[0, 0] - exact) / np.linalg.norm(exact)
    # The estimator's error falls like 1/sqrt(m) (about 0.07 at m = 1024 and 0.04 at 4096 in numpy
    # alone; one seeded draw varies around that); uniform attention (the mean of v) is the baseline.
    base = np.linalg.norm(vv[0, 0].mean(0, keepdims=True) - exact) / np.linalg.norm(exact)
    ok = rel < 0.15 and rel < 0.6 * base  # seeded: 0.112 and 0.247 here
    print(f"{'ok  ' if ok else 'FAIL'} FAVOR+ (m = 2048) approximates softmax attention: relative error {rel:.3g} (uniform attention: {base:.3g})")
    failures += 0 if ok else 1
except RuntimeError as e:
    print(f"FAIL FAVOR+ vs softmax: {e}")
    failures += 1

print(f"{failures} failures")
sys.exit(1 if failures else 0)
