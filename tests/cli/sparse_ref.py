#!/usr/bin/env python3
"""Reference for `vkf op sparse_attention`: dense masked attention, written out pair by pair from
the patterns' definitions (or a dense 0/1 block table), in plain Python so CI needs no numpy.

    sparse_ref.py blocks OUT L,NQB,NKB SEED KEEP_PERCENT   random int32 0/1 block table
    sparse_ref.py ref OUT Q K V --block BQ[,BK] [--pattern P | --layout FILE] [--causal]
                  [--kv_len A,B,...] [--key_bias FILE] [--scale S]

P: window:W (W//2 each side) or window:L:R, dilated:W:D, strided:L, fixed:L:C, global:G, comma
separated (random blocks are not reproducible here: use a block table). Query i is aligned to
the keys as i' = i + Nk - Nq. Rows that see no key are zeros.
"""
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_tool import read, write  # noqa: E402


def parse_pattern(text):
    """The pattern's bands (functions of the aligned query i' and key j) and its global count."""
    bands, global_tokens = [], 0
    for item in text.split(","):
        name, *args = item.split(":")
        args = [int(a) for a in args]
        if name == "window":
            left, right = (args[0] // 2, args[0] // 2) if len(args) == 1 else args
            bands.append(lambda i, j, l=left, r=right: -r <= i - j <= l)
        elif name == "dilated":
            w, d = args[0] // 2, args[1]
            bands.append(lambda i, j, w=w, d=d: abs(i - j) <= w and (i - j) % d == 0)
        elif name == "strided":
            bands.append(lambda i, j, s=args[0]: abs(i - j) < s or (i - j) % s == 0)
        elif name == "fixed":
            bands.append(lambda i, j, l=args[0], c=args[1]: i // l == j // l or j % l >= l - c)
        elif name == "global":
            global_tokens = args[0]
        else:
            raise SystemExit(f"sparse_ref: unknown pattern item {item}")
    return bands, global_tokens


def main():
    if sys.argv[1] == "blocks":
        shape = [int(x) for x in sys.argv[3].split(",")]
        rng = random.Random(int(sys.argv[4]))
        keep = int(sys.argv[5])
        count = shape[0] * shape[1] * shape[2]
        write(sys.argv[2], shape, [int(rng.randrange(100) < keep) for _ in range(count)], "<i4", "i")
        return
    out, qp, kp, vp = sys.argv[2:6]
    opts = sys.argv[6:]
    get = lambda name: opts[opts.index(name) + 1] if name in opts else None
    bq, *rest = [int(x) for x in get("--block").split(",")]
    bk = rest[0] if rest else bq
    (b_, h_, nq, d), q = read(qp)
    (_, hk, nk, _), k = read(kp)
    (_, _, _, dv), v = read(vp)
    scale = float(get("--scale")) if get("--scale") else 1.0 / math.sqrt(d)
    lens = [int(x) for x in get("--kv_len").split(",")] if get("--kv_len") else [nk] * b_
    bias = read(get("--key_bias"))[1] if get("--key_bias") else None
    causal = "--causal" in opts
    diag = nk - nq
    if get("--pattern"):
        bands, g = parse_pattern(get("--pattern"))

        def visible(h, i, j):
            return i < g or j < g or any(c(i + diag, j) for c in bands)
    else:
        (lh, nqb, nkb), table = read(get("--layout"))

        def visible(h, i, j):
            hh = 0 if lh == 1 else h
            return table[(hh * nqb + i // bq) * nkb + j // bk] != 0

    y = []
    for b in range(b_):
        for h in range(h_):
            kh = h // (h_ // hk)
            for i in range(nq):
                qi = q[((b * h_ + h) * nq + i) * d:][:d]
                scores = []
                for j in range(nk):
                    if j >= lens[b] or (causal and j > i + diag) or not visible(h, i, j):
                        continue
                    kj = k[((b * hk + kh) * nk + j) * d:][:d]
                    s = scale * sum(x * z for x, z in zip(qi, kj))
                    if bias is not None:
                        s += bias[b * nk + j]
                    scores.append((j, s))
                row = [0.0] * dv
                if scores:
                    m = max(s for _, s in scores)
                    ws = [(j, math.exp(s - m)) for j, s in scores]
                    total = sum(w for _, w in ws)
                    for j, w in ws:
                        vj = v[((b * hk + kh) * nk + j) * dv:][:dv]
                        for c in range(dv):
                            row[c] += w / total * vj[c]
                y.extend(row)
    write(out, [b_, h_, nq, dv], y, "<f4", "f")


if __name__ == "__main__":
    main()
