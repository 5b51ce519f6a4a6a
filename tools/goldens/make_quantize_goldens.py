#!/usr/bin/env python3
"""Writes tests/models/data/gguf/quantize.gguf, the reference for vkformer's quantisers
(graph/base/quant.c, vkf_quant_quantize; `--quantize` at load time):

  "x"        F32 [ROWS, 512]: rows that stress a quantiser (gaussian, uniform, outliers, all zero,
             constant, one sign only, integers and halves that land on rounding ties, tiny and
             large magnitudes, a row of one value and zeros)
  "q.TYPE"   x quantised to TYPE: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 by the `gguf` package
             (gguf.quants.quantize, llama.cpp's numpy port of ggml's reference quantisers), Q4_K
             by ggml's own C reference, quantize_row_q4_K_ref, compiled here from a ggml source
             tree (the package has no K-quantiser) with -ffp-contract=off, as vkformer's file is

    git clone https://github.com/ggml-org/ggml /tmp/ggml   # any recent tree
    python3 -m venv /tmp/gvenv && /tmp/gvenv/bin/pip install gguf numpy
and the checkpoints and twins `--quantize` is checked with (tests/cli/test_quantize.sh), under
tests/models/data/quantize/:

  llama_w256/            a Llama 256 wide (F16, random), so Q4_K's 256-blocks fit every weight
  bart_w32/              tests/models/data/bart_tiny widened to d_model 32, FFN 64 (random), so
                         an encoder–decoder's weights are whole 32-blocks
  MODEL_FORMAT_twin/     MODEL with each weight `--quantize FORMAT` quantises replaced by the
                         reference's quantise-dequantise round trip (F32): the linear layers of
                         the transformer blocks (Q, K, V, output, MLP) and an untied lm_head, row
                         by row along the input features (GPT-2's Conv1D [in, out] transposed
                         first); Q4_K falls back to Q5_0 for a row of whole 32-blocks but not
                         256-blocks, as llama-quantize does; rows of neither stay as they are;
                         cross attention's Q, K and V stay float (vkformer slices them fused).
                         Embeddings, norms, biases, tied heads and classifier heads stay float.

    /tmp/gvenv/bin/python tools/goldens/make_quantize_goldens.py --ggml-src /tmp/ggml [--root .]
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf import quants

COLS = 512
LEGACY = [T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1]

DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
void quantize_row_q4_K_ref(const float *, void *, int64_t);
/* ggml-quants.c refers to these on paths the reference quantiser never takes */
void ggml_abort(const char *f, int l, const char *fmt, ...) { fprintf(stderr, "abort %s:%d\n", f, l); exit(1); }
size_t ggml_row_size(int t, int64_t n) { (void)t; (void)n; abort(); }
size_t ggml_type_size(int t) { (void)t; abort(); }
const char *ggml_type_name(int t) { (void)t; abort(); }
int main(void) {
  static float x[256];
  static unsigned char y[144];
  while (fread(x, sizeof x, 1, stdin) == 1) {
    quantize_row_q4_K_ref(x, y, 256);
    fwrite(y, sizeof y, 1, stdout);
  }
  return 0;
}
"""


def rows():
    rng = np.random.default_rng(20261127)
    out = [
        rng.standard_normal(COLS),
        rng.standard_normal(COLS) * 0.02,  # a typical linear weight
        rng.uniform(-1, 1, COLS),
        rng.uniform(0, 3, COLS),  # one sign only
        -rng.uniform(0, 3, COLS),
        np.zeros(COLS),
        np.full(COLS, 0.75),
        np.full(COLS, -2.5),
        rng.integers(-8, 8, COLS).astype(np.float64),  # ties after scaling
        rng.integers(-32, 32, COLS) / 2.0,
        rng.standard_normal(COLS) * 1e-4,
        rng.standard_normal(COLS) * 300.0,
        rng.standard_t(2, COLS),  # heavy tails
    ]
    spiky = rng.standard_normal(COLS) * 0.05
    spiky[rng.integers(0, COLS, 12)] = rng.choice([-4.0, 6.0], 12)
    out.append(spiky)
    lone = np.zeros(COLS)
    lone[::37] = 1.5
    out.append(lone)
    mixed = rng.standard_normal(COLS)
    mixed[:64] = 0.0  # a zero sub-block beside non-zero ones
    mixed[256:288] = 5.0
    out.append(mixed)
    return np.stack(out).astype(np.float32)


def q4_k_reference(x, ggml_src):
    with tempfile.TemporaryDirectory() as tmp:
        drv = os.path.join(tmp, "drv.c")
        exe = os.path.join(tmp, "drv")
        open(drv, "w").write(DRIVER)
        inc = [f"-I{os.path.join(ggml_src, d)}" for d in ("include", "src", "src/ggml-cpu")]
        subprocess.run(["gcc", "-O2", "-ffp-contract=off", *inc, drv,
                        os.path.join(ggml_src, "src/ggml-quants.c"), "-lm", "-o", exe],
                       check=True)
        res = subprocess.run([exe], input=x.tobytes(), stdout=subprocess.PIPE, check=True)
    return np.frombuffer(res.stdout, dtype=np.uint8).reshape(x.shape[0], -1)


# The linear weights of each family, by name (the twin quantises these and nothing else).
LINEAR = {
    "llama": r"model\.layers\.\d+\.(self_attn\.[qkvo]_proj|mlp\.(gate|up|down)_proj)\.weight$|^lm_head\.weight$",
    "gpt2": r"h\.\d+\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight$",
    "bert": r"encoder\.layer\.\d+\.(attention\.self\.(query|key|value)|attention\.output\.dense|"
            r"intermediate\.dense|output\.dense)\.weight$",
    "vit": r"encoder\.layer\.\d+\.(attention\.attention\.(query|key|value)|attention\.output\.dense|"
           r"intermediate\.dense|output\.dense)\.weight$",
    "bart": r"layers\.\d+\.(self_attn\.(q|k|v|out)_proj|encoder_attn\.out_proj|fc1|fc2)\.weight$",
}
CONV1D = {"gpt2"}  # weights stored [in, out]


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        dt = info["dtype"]
        raw = np.frombuffer(data[b:e], dtype={"BF16": np.uint16, "F32": np.float32,
                                              "F16": np.float16}[dt])
        if dt == "BF16":
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        out[name] = raw.astype(np.float32).reshape(info["shape"])
    return out


def write_safetensors(path, tensors, dtype=np.float32):
    header, blobs, at = {}, [], 0
    for name, t in tensors.items():
        b = np.ascontiguousarray(t, dtype=dtype).tobytes()
        header[name] = {"dtype": "F16" if dtype == np.float16 else "F32", "shape": list(t.shape),
                        "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def round_trip(w, qtype, ggml_src):
    """[out, in] f32 quantised along `in` and dequantised, or None when it stays float."""
    k = w.shape[1]
    if qtype == T.Q4_K and k % 256:
        qtype = T.Q5_0  # llama-quantize's fallback for a row that is not whole 256-blocks
    if k % (256 if qtype == T.Q4_K else 32):
        return None
    q = q4_k_reference(w, ggml_src) if qtype == T.Q4_K else quants.quantize(w, qtype)
    return quants.dequantize(q, qtype).astype(np.float32).reshape(w.shape)


def write_twin(src, dst, family, qtype, ggml_src):
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for f in os.listdir(src):
        if f != "model.safetensors" and os.path.isfile(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), dst)
    cfg = json.load(open(os.path.join(src, "config.json")))
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    tied = cfg.get("tie_word_embeddings", family != "llama")
    changed = []
    for name, w in tensors.items():
        if w.ndim != 2 or not re.search(LINEAR[family], name):
            continue
        if name == "lm_head.weight" and tied:
            continue
        conv = family in CONV1D
        back = round_trip(w.T.copy() if conv else w, qtype, ggml_src)
        if back is not None:
            tensors[name] = back.T.copy() if conv else back
            changed.append(name)
    assert changed, dst
    write_safetensors(os.path.join(dst, "model.safetensors"), tensors)
    print(f"{dst}: {len(changed)} weights quantised")


def write_llama_w256(root, dst):
    cfg = json.load(open(os.path.join(root, "tests/models/data/llama_tiny/config.json")))
    cfg.update(hidden_size=256, intermediate_size=256, num_hidden_layers=1,
               num_attention_heads=4, num_key_value_heads=2, vocab_size=128,
               torch_dtype="float16", tie_word_embeddings=False)
    rng = np.random.default_rng(256)
    h, hk, v = 256, 128, 128
    shapes = {"model.embed_tokens.weight": (v, h), "model.norm.weight": (h,),
              "lm_head.weight": (v, h)}
    for n, shp in {"self_attn.q_proj": (h, h), "self_attn.k_proj": (hk, h),
                   "self_attn.v_proj": (hk, h), "self_attn.o_proj": (h, h),
                   "mlp.gate_proj": (h, h), "mlp.up_proj": (h, h), "mlp.down_proj": (h, h)}.items():
        shapes[f"model.layers.0.{n}.weight"] = shp
    shapes["model.layers.0.input_layernorm.weight"] = (h,)
    shapes["model.layers.0.post_attention_layernorm.weight"] = (h,)
    tensors = {}
    for n, shp in shapes.items():
        tensors[n] = (1.0 + 0.1 * rng.standard_normal(shp)) if n.endswith("norm.weight") \
            else rng.standard_normal(shp) * (0.5 if "embed" in n else 0.06)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    json.dump(cfg, open(os.path.join(dst, "config.json"), "w"), indent=2)
    write_safetensors(os.path.join(dst, "model.safetensors"), tensors, np.float16)


def write_bart_w32(root, dst):
    src = os.path.join(root, "tests/models/data/bart_tiny")
    cfg = json.load(open(os.path.join(src, "config.json")))
    cfg.update(d_model=32, encoder_attention_heads=4, decoder_attention_heads=4,
               encoder_ffn_dim=64, decoder_ffn_dim=64)
    widen = {27: 32, 37: 64, 41: 64}
    rng = np.random.default_rng(32)
    tensors = {}
    for n, w in read_safetensors(os.path.join(src, "model.safetensors")).items():
        shp = tuple(widen.get(d, d) for d in w.shape)
        if "layernorm" in n and n.endswith(".weight"):
            tensors[n] = 1.0 + 0.1 * rng.standard_normal(shp)
        else:
            tensors[n] = rng.standard_normal(shp) * (0.3 if "embed" in n or n == "model.shared.weight" else 0.1)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for f in os.listdir(src):
        if f not in ("model.safetensors", "config.json"):
            shutil.copy(os.path.join(src, f), dst)
    json.dump(cfg, open(os.path.join(dst, "config.json"), "w"), indent=2)
    write_safetensors(os.path.join(dst, "model.safetensors"), tensors)


# (model folder, family, format): every format once, each family once, Q4_K both real and
# falling back to Q5_0
TWINS = [("tests/models/data/llama_tiny", "llama", T.Q8_0),
         ("tests/models/data/llama_tiny", "llama", T.Q4_K),
         ("tests/models/data/quantize/llama_w256", "llama", T.Q4_K),
         ("tests/models/data/gpt2_tiny", "gpt2", T.Q4_0),
         ("tests/models/data/bert_tiny", "bert", T.Q4_1),
         ("tests/models/data/vit_tiny", "vit", T.Q5_1),
         ("tests/models/data/quantize/bart_w32", "bart", T.Q8_0),
         ("tests/models/data/quantize/bart_w32", "bart", T.Q5_0)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--ggml-src", required=True, help="a ggml source tree (src/ggml-quants.c)")
    a = ap.parse_args()
    x = rows()
    w = gguf.GGUFWriter(os.path.join(a.root, "tests/models/data/gguf/quantize.gguf"), "vkf-test")
    w.add_tensor("x", x)
    for t in LEGACY:
        w.add_tensor("q." + t.name, quants.quantize(x, t), raw_dtype=t)
    w.add_tensor("q.Q4_K", q4_k_reference(x, a.ggml_src), raw_dtype=T.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    out = os.path.join(a.root, "tests/models/data/quantize")
    os.makedirs(out, exist_ok=True)
    write_llama_w256(a.root, os.path.join(out, "llama_w256"))
    write_bart_w32(a.root, os.path.join(out, "bart_w32"))
    for src, family, t in TWINS:
        name = f"{os.path.basename(src)}_{t.name.lower()}_twin"
        write_twin(os.path.join(a.root, src), os.path.join(out, name), family, t, a.ggml_src)


if __name__ == "__main__":
    main()
