#!/usr/bin/env python3
"""Writes the random-weight checkpoints tools/dev/gpu_report.sh benchmarks, with numpy alone (no
torch, nothing downloaded), as Hugging Face folders vkformer and transformers both read:

    python3 tools/dev/make_bench_checkpoints.py OUT_DIR [--quick]

  OUT_DIR/llama-1b     LlamaForCausalLM, TinyLlama-1.1B's shape (hidden 2048, 22 layers, 32 heads,
                       4 KV heads, MLP 5632, vocab 32000), F16 safetensors (2.2 GB)
  OUT_DIR/llama-1b-bf16  the same in BF16 (the weights vkformer keeps as bf16 on the device)
  OUT_DIR/llama-135m   LlamaForCausalLM, SmolLM2-135M's shape (hidden 576, 30 layers, 9 heads,
                       3 KV heads, MLP 1536, vocab 49152, tied embeddings), F16
  OUT_DIR/vit-b16      ViTForImageClassification, ViT-B/16-224 (hidden 768, 12 layers, 1000
                       labels), F32, with its preprocessor_config.json

--quick writes the same three architectures at toy sizes (seconds on any machine), which is what
the report's end-to-end run on lavapipe uses. Weights are N(0, 0.02) from a fixed seed, norms 1.
An existing folder whose config.json matches is kept (the 1B one takes a while to write).
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

FULL = {
    "llama-1b": dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
                     num_attention_heads=32, num_key_value_heads=4, vocab_size=32000,
                     tie_word_embeddings=False, max_position_embeddings=2048),
    "llama-135m": dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                       num_attention_heads=9, num_key_value_heads=3, vocab_size=49152,
                       tie_word_embeddings=True, max_position_embeddings=8192),
    "vit-b16": dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                    num_attention_heads=12, image_size=224, patch_size=16, num_labels=1000),
}
QUICK = {
    "llama-1b": dict(hidden_size=128, intermediate_size=352, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
                     tie_word_embeddings=False, max_position_embeddings=2048),
    "llama-135m": dict(hidden_size=72, intermediate_size=192, num_hidden_layers=2,
                       num_attention_heads=3, num_key_value_heads=1, vocab_size=512,
                       tie_word_embeddings=True, max_position_embeddings=2048),
    "vit-b16": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=2, image_size=32, patch_size=8, num_labels=10),
}


def write_safetensors(path, tensors):
    """tensors: list of (name, array); data 16-byte aligned so vkformer can bind it in place."""
    header, offset = {}, 0
    for name, a in tensors:
        size = a.nbytes
        header[name] = {"dtype": {np.float16: "F16", np.float32: "F32", np.uint16: "BF16"}[a.dtype.type],
                        "shape": list(a.shape), "data_offsets": [offset, offset + size]}
        offset += (size + 15) // 16 * 16
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((-(8 + len(text))) % 16)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, a in tensors:
            f.write(a.tobytes())
            f.write(b"\0" * ((-a.nbytes) % 16))
    os.replace(path + ".tmp", path)


def bf16_bits(a):
    """float32 -> bfloat16 bit patterns (uint16), rounded to nearest even as torch rounds."""
    b = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


class Weights:
    """dtype: a numpy float type, or "bf16" (stored as uint16 bit patterns, written as BF16)."""

    def __init__(self, dtype, seed):
        self.rng, self.dtype, self.list = np.random.default_rng(seed), dtype, []

    def add(self, name, a):
        self.list.append((name, bf16_bits(a) if self.dtype == "bf16" else a.astype(self.dtype)))

    def normal(self, name, *shape):
        self.add(name, self.rng.standard_normal(shape, dtype=np.float32) * 0.02)

    def ones(self, name, n):
        self.add(name, np.ones(n, dtype=np.float32))

    def zeros(self, name, n):
        self.add(name, np.zeros(n, dtype=np.float32))


def llama(out, c, dtype=np.float16):
    h, kv = c["hidden_size"], c["num_key_value_heads"] * (c["hidden_size"] // c["num_attention_heads"])
    config = dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_act="silu",
                  rms_norm_eps=1e-5, rope_theta=10000.0, bos_token_id=1, eos_token_id=2,
                  attention_bias=False, torch_dtype="bfloat16" if dtype == "bf16" else "float16", **c)
    if keep(out, config):
        return
    w = Weights(dtype, 0)
    w.normal("model.embed_tokens.weight", c["vocab_size"], h)
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        w.ones(p + "input_layernorm.weight", h)
        w.normal(p + "self_attn.q_proj.weight", h, h)
        w.normal(p + "self_attn.k_proj.weight", kv, h)
        w.normal(p + "self_attn.v_proj.weight", kv, h)
        w.normal(p + "self_attn.o_proj.weight", h, h)
        w.ones(p + "post_attention_layernorm.weight", h)
        w.normal(p + "mlp.gate_proj.weight", c["intermediate_size"], h)
        w.normal(p + "mlp.up_proj.weight", c["intermediate_size"], h)
        w.normal(p + "mlp.down_proj.weight", h, c["intermediate_size"])
    w.ones("model.norm.weight", h)
    if not c["tie_word_embeddings"]:
        w.normal("lm_head.weight", c["vocab_size"], h)
    finish(out, config, w)


def vit(out, c):
    h, n = c["hidden_size"], (c["image_size"] // c["patch_size"]) ** 2 + 1
    labels = c.pop("num_labels")
    config = dict(architectures=["ViTForImageClassification"], model_type="vit", hidden_act="gelu",
                  layer_norm_eps=1e-12, num_channels=3, qkv_bias=True, torch_dtype="float32",
                  id2label={str(i): "label_%d" % i for i in range(labels)},
                  label2id={"label_%d" % i: i for i in range(labels)}, **c)
    if keep(out, config):
        return
    w = Weights(np.float32, 1)
    w.normal("vit.embeddings.cls_token", 1, 1, h)
    w.normal("vit.embeddings.position_embeddings", 1, n, h)
    w.normal("vit.embeddings.patch_embeddings.projection.weight", h, 3, c["patch_size"], c["patch_size"])
    w.zeros("vit.embeddings.patch_embeddings.projection.bias", h)
    for i in range(c["num_hidden_layers"]):
        p = "vit.encoder.layer.%d." % i
        for ln in ("layernorm_before", "layernorm_after"):
            w.ones(p + ln + ".weight", h)
            w.zeros(p + ln + ".bias", h)
        for m in ("query", "key", "value"):
            w.normal(p + "attention.attention.%s.weight" % m, h, h)
            w.zeros(p + "attention.attention.%s.bias" % m, h)
        w.normal(p + "attention.output.dense.weight", h, h)
        w.zeros(p + "attention.output.dense.bias", h)
        w.normal(p + "intermediate.dense.weight", c["intermediate_size"], h)
        w.zeros(p + "intermediate.dense.bias", c["intermediate_size"])
        w.normal(p + "output.dense.weight", h, c["intermediate_size"])
        w.zeros(p + "output.dense.bias", h)
    w.ones("vit.layernorm.weight", h)
    w.zeros("vit.layernorm.bias", h)
    w.normal("classifier.weight", labels, h)
    w.zeros("classifier.bias", labels)
    preprocessor = dict(do_normalize=True, do_rescale=True, do_resize=True, image_mean=[0.5] * 3,
                        image_std=[0.5] * 3, image_processor_type="ViTImageProcessor", resample=2,
                        rescale_factor=1 / 255,
                        size={"height": c["image_size"], "width": c["image_size"]})
    finish(out, config, w, {"preprocessor_config.json": preprocessor})


def keep(out, config):
    try:
        return json.load(open(os.path.join(out, "config.json"))) == config and \
            os.path.isfile(os.path.join(out, "model.safetensors"))
    except (OSError, ValueError):
        return False


def finish(out, config, w, extra=None):
    os.makedirs(out, exist_ok=True)
    write_safetensors(os.path.join(out, "model.safetensors"), w.list)
    for name, doc in dict(extra or {}, **{"config.json": config}).items():
        with open(os.path.join(out, name), "w") as f:
            json.dump(doc, f, indent=2, sort_keys=True)
    print("%s: %.1f M parameters" % (out, sum(a.size for _, a in w.list) / 1e6))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true", help="toy sizes (lavapipe)")
    args = ap.parse_args()
    sizes = QUICK if args.quick else FULL
    llama(os.path.join(args.out, "llama-1b"), dict(sizes["llama-1b"]))
    llama(os.path.join(args.out, "llama-1b-bf16"), dict(sizes["llama-1b"]), "bf16")
    llama(os.path.join(args.out, "llama-135m"), dict(sizes["llama-135m"]))
    vit(os.path.join(args.out, "vit-b16"), dict(sizes["vit-b16"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
