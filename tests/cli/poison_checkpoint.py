#!/usr/bin/env python3
"""Copies a model folder with one tensor of its model.safetensors filled with NaN (no numpy):

  poison_checkpoint.py SRC OUT TENSOR_NAME   (or a suffix of one: the first such, sorted)

For the tests that a model computing NaN is reported, never printed as `nan` or turned into a
token, a ranking or a cosine. Symlinked or sub-folder files are copied as files.
"""
import json
import os
import shutil
import struct
import sys

NAN = {"F32": struct.pack("<I", 0x7FC00000), "F16": struct.pack("<H", 0x7E00),
       "BF16": struct.pack("<H", 0x7FC0)}


def main():
    src, out, name = sys.argv[1:4]
    shutil.copytree(src, out, symlinks=False, dirs_exist_ok=True)
    path = os.path.join(out, "model.safetensors")
    data = bytearray(open(path, "rb").read())
    hlen = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + hlen])
    # the tensor itself, else the first (sorted) whose name ends with it
    name = name if name in header else sorted(k for k in header if k.endswith(name))[0]
    info = header[name]
    a, b = info["data_offsets"]
    pattern = NAN[info["dtype"]]
    data[8 + hlen + a:8 + hlen + b] = pattern * ((b - a) // len(pattern))
    os.unlink(path)  # the copy may be a hard link or read-only
    with open(path, "wb") as f:
        f.write(data)


main()
