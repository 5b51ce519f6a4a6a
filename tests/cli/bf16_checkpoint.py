#!/usr/bin/env python3
"""Makes two copies of a safetensors model folder for the bf16 weight tests (no numpy):

  bf16_checkpoint.py SRC BF16_DIR F32_DIR

BF16_DIR holds every float tensor rounded to bfloat16 (to nearest, ties to even, as torch's
.to(torch.bfloat16)) and stored as BF16; F32_DIR holds the very same values stored as F32. The
other files of SRC are copied to both. A model run on the two must agree: bf16 widens to f32
exactly, so only where a weight is kept as bf16 (and how the kernel reads it) differs.
"""
import json
import os
import shutil
import struct
import sys


def bf16_bits(f32_bits):
    if (f32_bits & 0x7F800000) == 0x7F800000 and f32_bits & 0x7FFFFF:
        return (f32_bits >> 16) | 0x40  # NaN stays a quiet NaN
    return ((f32_bits + 0x7FFF + ((f32_bits >> 16) & 1)) >> 16) & 0xFFFF


def half_to_f32_bits(h):
    return struct.unpack("<I", struct.pack("<f", struct.unpack("<e", struct.pack("<H", h))[0]))[0]


def main():
    src, out_bf16, out_f32 = sys.argv[1:4]
    raw = open(os.path.join(src, "model.safetensors"), "rb").read()
    hlen = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + hlen])
    data = raw[8 + hlen:]
    outs = {"bf16": ({}, bytearray()), "f32": ({}, bytearray())}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        chunk = data[a:b]
        if info["dtype"] == "F32":
            bits = struct.unpack("<%dI" % (len(chunk) // 4), chunk)
        elif info["dtype"] == "F16":
            bits = [half_to_f32_bits(h) for h in struct.unpack("<%dH" % (len(chunk) // 2), chunk)]
        elif info["dtype"] == "BF16":
            bits = [h << 16 for h in struct.unpack("<%dH" % (len(chunk) // 2), chunk)]
        else:
            bits = None
        for kind, (hdr, blob) in outs.items():
            if bits is None:
                payload, dtype = chunk, info["dtype"]
            elif kind == "bf16":
                payload = struct.pack("<%dH" % len(bits), *[bf16_bits(x) for x in bits])
                dtype = "BF16"
            else:
                payload = struct.pack("<%dI" % len(bits), *[bf16_bits(x) << 16 for x in bits])
                dtype = "F32"
            hdr[name] = {"dtype": dtype, "shape": info["shape"],
                         "data_offsets": [len(blob), len(blob) + len(payload)]}
            blob += payload
    for kind, folder in (("bf16", out_bf16), ("f32", out_f32)):
        os.makedirs(folder, exist_ok=True)
        for f in os.listdir(src):
            if f != "model.safetensors" and os.path.isfile(os.path.join(src, f)):
                shutil.copy(os.path.join(src, f), folder)
        hdr, blob = outs[kind]
        text = json.dumps(hdr).encode()
        text += b" " * ((8 - len(text) % 8) % 8)
        with open(os.path.join(folder, "model.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + bytes(blob))


main()
