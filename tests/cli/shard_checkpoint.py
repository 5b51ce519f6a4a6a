#!/usr/bin/env python3
"""Splits SRC/model.safetensors into N shards with a model.safetensors.index.json, as Hugging Face's
save_pretrained(max_shard_size=...) writes them (CLI tests only; no numpy).

  shard_checkpoint.py SRC DST N    copies SRC's other files into DST and writes the shards there
"""
import json
import os
import shutil
import struct
import sys


def main():
    src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        if f != "model.safetensors" and os.path.isfile(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), dst)
    data = open(os.path.join(src, "model.safetensors"), "rb").read()
    hlen = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + hlen])
    header.pop("__metadata__", None)
    body = data[8 + hlen:]
    names = sorted(header)
    weight_map = {}
    for s in range(n):
        part = names[s::n]
        file = "model-%05d-of-%05d.safetensors" % (s + 1, n)
        out, blobs, offset = {}, [], 0
        for name in part:
            t = dict(header[name])
            begin, end = t["data_offsets"]
            blobs.append(body[begin:end])
            t["data_offsets"] = [offset, offset + end - begin]
            offset += end - begin
            out[name] = t
            weight_map[name] = file
        h = json.dumps(out).encode()
        h += b" " * (-len(h) % 8)
        with open(os.path.join(dst, file), "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    with open(os.path.join(dst, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": len(body)}, "weight_map": weight_map}, f, indent=2)


main()
