#!/usr/bin/env python3
"""serve_long_model.py SRC DST POSITIONS: DST becomes a copy of the GPT-2 checkpoint SRC
(tests/models/data/gpt2_tiny) with POSITIONS positions (its position embeddings repeated) and
end-of-text id 255, which its greedy continuations of the tests' prompts never reach (gpt2_tiny's
2 ends them within a few tokens), so a request of a few hundred tokens runs for seconds: what the
serve tests need to hang up on, or stop the server under, a generation still under way."""
import json
import os
import shutil
import struct
import sys

src, dst, positions = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst)
raw = open(os.path.join(src, "model.safetensors"), "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
data = raw[8 + n:]
out, parts, at = {}, [], 0
for name, t in sorted(head.items(), key=lambda kv: kv[1]["data_offsets"][0] if kv[0] != "__metadata__" else -1):
    if name == "__metadata__":
        out[name] = t
        continue
    b = data[t["data_offsets"][0]:t["data_offsets"][1]]
    shape = list(t["shape"])
    if name == "transformer.wpe.weight":
        rows = shape[0]
        row = len(b) // rows
        b = b"".join(b[(r % rows) * row:(r % rows + 1) * row] for r in range(positions))
        shape[0] = positions
    out[name] = {"dtype": t["dtype"], "shape": shape, "data_offsets": [at, at + len(b)]}
    parts.append(b)
    at += len(b)
h = json.dumps(out).encode()
h += b" " * ((8 - len(h) % 8) % 8)
open(os.path.join(dst, "model.safetensors"), "wb").write(struct.pack("<Q", len(h)) + h + b"".join(parts))
for f in ("config.json", "generation_config.json"):
    p = os.path.join(dst, f)
    c = json.load(open(p))
    if f == "config.json":
        c["n_positions"] = positions
    c["eos_token_id"] = 255
    json.dump(c, open(p, "w"))
