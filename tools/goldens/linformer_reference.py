#!/usr/bin/env python3
"""Linformer self-attention written from the paper's equations (Wang et al. 2020, "Linformer:
Self-Attention with Linear Complexity", eq. 7; D2L's survey, 001_*.txt):

    head_i = softmax( Q_i (E_i K_i)^T / sqrt(d_k) ) (F_i V_i)

Q_i, K_i, V_i [N, d_k] are one head's projected queries, keys and values; E_i, F_i [k, N] project
the sequence of N positions to k. Parameter sharing (section 4): headwise (one E, F per layer for
every head), key-value (E = F), layerwise (one E = F for every layer). Computed in float64 as an
independent reference for models/arch/lowrank_attention.c (vkf_linformer_attention), which
computes E K and F V as GEMMs with E broadcast over the batch and runs the fused attention kernel.

  linformer_reference.py --write DIR   writes the held-out cases DIR/<case>/{q,k,v,e,f,out}.npy
                                       (float32; out from the float64 module), as committed under
                                       tests/models/golden/linformer for tests/models/test_linformer.c
"""
import argparse
import math
import os

import numpy as np
import torch


class LinformerAttention(torch.nn.Module):
    """Multi-head Linformer attention over already projected q, k, v [B, H, N, d]. E and F are
    [k, N] (shared by the heads) or [H, k, N] (one per head); pass F = E to share them."""

    def __init__(self, e, f):
        super().__init__()
        self.e = torch.nn.Parameter(e)
        self.f = torch.nn.Parameter(f)

    def forward(self, q, k, v):
        d = q.shape[-1]
        e = self.e if self.e.dim() == 3 else self.e.unsqueeze(0)  # [H or 1, k, N]
        f = self.f if self.f.dim() == 3 else self.f.unsqueeze(0)
        kp = torch.einsum("hkn,bhnd->bhkd", e, k)  # E K
        vp = torch.einsum("hkn,bhnd->bhkd", f, v)  # F V
        p = torch.softmax(q @ kp.transpose(-1, -2) / math.sqrt(d), dim=-1)  # [B, H, N, k]
        return p @ vp


# (name, B, H, N, d, k, per_head, shared_kv): odd sizes, k above and below d, every sharing mode.
CASES = [
    ("headwise", 2, 3, 37, 9, 8, False, False),
    ("per_head", 1, 2, 64, 16, 16, True, False),
    ("kv_shared", 2, 4, 50, 8, 5, False, True),
    ("per_head_shared", 3, 2, 23, 12, 29, True, True),
]


def write(root):
    for i, (name, b, h, n, d, kp, per_head, shared) in enumerate(CASES):
        g = torch.Generator().manual_seed(1000 + i)
        q, k, v = (torch.randn(b, h, n, d, generator=g, dtype=torch.float64) for _ in range(3))
        shape = (h, kp, n) if per_head else (kp, n)
        # JL-style projections: N(0, 1/k) entries, as the paper's random-projection argument.
        e = torch.randn(*shape, generator=g, dtype=torch.float64) / math.sqrt(kp)
        f = e if shared else torch.randn(*shape, generator=g, dtype=torch.float64) / math.sqrt(kp)
        # Round the inputs to float32 first so the C test sees exactly what the reference saw.
        q, k, v, e, f = (t.float().double() for t in (q, k, v, e, f))
        with torch.no_grad():
            out = LinformerAttention(e, f)(q, k, v)
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for key, t in dict(q=q, k=k, v=v, e=e, f=f, out=out).items():
            np.save(os.path.join(root, name, key + ".npy"), t.numpy().astype(np.float32))
        print(name, tuple(out.shape))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", required=True)
    write(ap.parse_args().write)
