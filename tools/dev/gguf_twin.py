#!/usr/bin/env python3
"""Writes the float twin of a GGUF: the same file (metadata, tokenizer, tensor names and order)
with every quantised tensor dequantised as ggml does, stored as F16 or F32; float tensors are
copied as they are. The decode benchmarks' twins of the default model (docs/performance.md):

  gguf_twin.py SRC.gguf OUT.gguf f16|f32

Reads Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1 (the legacy blocks; a file with K-quants is refused with
the tensor named). numpy only (/usr/bin/python3 on Debian has it).
"""
import struct
import sys

import numpy as np

F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 = 0, 1, 2, 3, 6, 7, 8
BLOCK = {Q4_0: 18, Q4_1: 20, Q5_0: 22, Q5_1: 24, Q8_0: 34}  # bytes per 32 weights


def dequantize(raw, qtype, count):
    b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, BLOCK[qtype])
    d = b[:, 0:2].copy().view(np.float16).astype(np.float32)
    if qtype == Q8_0:
        return (d * b[:, 2:].view(np.int8).astype(np.float32)).reshape(-1)[:count]
    m = b[:, 2:4].copy().view(np.float16).astype(np.float32) if qtype in (Q4_1, Q5_1) else None
    qs = b[:, {Q4_0: 2, Q4_1: 4, Q5_0: 6, Q5_1: 8}[qtype]:]
    q = np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.int32)  # weights 0..15, 16..31
    if qtype in (Q5_0, Q5_1):
        qh = b[:, {Q5_0: 2, Q5_1: 4}[qtype]:][:, :4].copy().view(np.uint32)
        q |= (((qh >> np.arange(32, dtype=np.uint32)) & 1) << 4).astype(np.int32)
    if qtype == Q4_0:
        w = d * (q - 8)
    elif qtype == Q5_0:
        w = d * (q - 16)
    else:
        w = d * q + m
    return w.astype(np.float32).reshape(-1)[:count]


class Reader:
    def __init__(self, data):
        self.b, self.pos = data, 0

    def u(self, fmt):
        v = struct.unpack_from("<" + fmt, self.b, self.pos)
        self.pos += struct.calcsize(fmt)
        return v[0]

    def s(self):
        n = self.u("Q")
        v = self.b[self.pos:self.pos + n]
        self.pos += n
        return v

    def value(self, t):
        if t == 8:
            return self.s()
        if t == 9:
            et, n = self.u("I"), self.u("Q")
            return [self.value(et) for _ in range(n)]
        return self.u({0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q",
                       11: "q", 12: "d"}[t])


def main(argv):
    if len(argv) != 4 or argv[3] not in ("f16", "f32"):
        print(__doc__, file=sys.stderr)
        return 2
    data = open(argv[1], "rb").read()
    r = Reader(data)
    if data[:4] != b"GGUF":
        sys.exit("%s: not a GGUF file" % argv[1])
    r.pos = 4
    version, n_tensors, n_kv = r.u("I"), r.u("Q"), r.u("Q")
    align = 32
    for _ in range(n_kv):
        key, t = r.s(), r.u("I")
        v = r.value(t)
        if key == b"general.alignment":
            align = v
    kv_end = r.pos
    infos = []
    for _ in range(n_tensors):
        name, nd = r.s(), r.u("I")
        dims = [r.u("Q") for _ in range(nd)]
        infos.append((name, dims, r.u("I"), r.u("Q")))
    base = (r.pos + align - 1) // align * align
    out_type, out_np = (F16, np.float16) if argv[3] == "f16" else (F32, np.float32)
    blobs = []
    for name, dims, t, off in infos:
        count = int(np.prod(dims))
        if t in (F32, F16):
            nbytes = count * (4 if t == F32 else 2)
            blobs.append((t, data[base + off:base + off + nbytes]))
        elif t in BLOCK:
            nbytes = (count + 31) // 32 * BLOCK[t]
            w = dequantize(data[base + off:base + off + nbytes], t, count)
            blobs.append((out_type, w.astype(out_np).tobytes()))
        else:
            sys.exit("%s: tensor %s has ggml type %d, which this script does not dequantise" %
                     (argv[1], name.decode(), t))
    head = bytearray(data[:kv_end])
    offsets, at = [], 0
    for _, blob in blobs:
        offsets.append(at)
        at = (at + len(blob) + align - 1) // align * align
    for (name, dims, _, _), (t, _), off in zip(infos, blobs, offsets):
        head += struct.pack("<Q", len(name)) + name + struct.pack("<I", len(dims))
        head += b"".join(struct.pack("<Q", x) for x in dims) + struct.pack("<IQ", t, off)
    head += b"\0" * ((len(head) + align - 1) // align * align - len(head))
    with open(argv[2], "wb") as f:
        f.write(head)
        for (_, blob), off in zip(blobs, offsets):
            f.write(blob)
            f.write(b"\0" * ((len(blob) + align - 1) // align * align - len(blob)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
