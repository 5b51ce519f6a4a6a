#!/usr/bin/env python3
"""Tiny NystromformerModel checkpoints with seeded random weights and their last_hidden_state as
transformers 4.38.2 computes it in eval mode, for tests/cli/test_nystromformer.sh.

Writes tests/models/data/<case>/ (config.json + model.safetensors, save_pretrained's layout) and
tests/models/golden/nystromformer/<case>/ (input_ids, attention_mask, token_type_ids as int64 .npy,
last_hidden_state float32 .npy for the whole batch, and row0_* for batch row 0 run alone).

Cases:
  nys_conv      landmarks 4 of a 16-token segment, conv skip K=5, head dim 9, original init
  nys_perhead   landmarks 8 of 32, no conv (conv_kernel_size null), head dim 15, F16 storage,
                inv_coeff_init_option true (see below)
  nys_full      num_landmarks == segment_means_seq_len: plain softmax attention over 11 tokens,
                conv K=3, BF16 storage

inv_coeff_init_option true: transformers 4.38.2 cannot build such a model (its __init__ reads
config["inv_init_coeff_option"], and the config is not subscriptable: TypeError). The model is
therefore built with the option false and every layer's `init_option` then set to the value the
option selects (anything but "original": the per-(batch row, head) max of iterative_inv), and
config.json says true. That is the computation HF's code would run for the option.

Weights are drawn wider than HF's init (normal std 0.3) so that attention is far from uniform.
F16/BF16 cases round the weights first; the golden is the f32 forward of the rounded weights.

Run: /usr/bin/python3 tools/goldens/make_nystromformer_golden.py (from the repository root).
"""
import json
import os

import numpy as np
import torch
from transformers import NystromformerConfig, NystromformerModel

DATA = "tests/models/data"
GOLD = "tests/models/golden/nystromformer"

CASES = [
    dict(name="nys_conv", seed=1, hidden=36, heads=4, layers=2, inter=40, seg=16, landmarks=4,
         conv=5, per_head=False, dtype=None, seq=16, pad=5),
    dict(name="nys_perhead", seed=2, hidden=30, heads=2, layers=2, inter=24, seg=32, landmarks=8,
         conv=None, per_head=True, dtype=torch.float16, seq=32, pad=9),
    dict(name="nys_full", seed=3, hidden=24, heads=3, layers=2, inter=32, seg=16, landmarks=16,
         conv=3, per_head=False, dtype=torch.bfloat16, seq=11, pad=3),
]


def build(c):
    torch.manual_seed(c["seed"])
    cfg = NystromformerConfig(vocab_size=97, hidden_size=c["hidden"], num_hidden_layers=c["layers"],
                              num_attention_heads=c["heads"], intermediate_size=c["inter"],
                              max_position_embeddings=40, type_vocab_size=2,
                              segment_means_seq_len=c["seg"], num_landmarks=c["landmarks"],
                              conv_kernel_size=c["conv"], inv_coeff_init_option=False)
    model = NystromformerModel(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm.weight" in name:
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.3 * torch.randn_like(p))
            if c["dtype"] is not None:
                p.copy_(p.to(c["dtype"]).float())
    if c["per_head"]:
        model.config.inv_coeff_init_option = True
        for layer in model.encoder.layer:
            layer.attention.self.init_option = "per_head"
    return model


def save(model, c):
    out = os.path.join(DATA, c["name"])
    os.makedirs(out, exist_ok=True)
    m = model if c["dtype"] is None else build(c).to(c["dtype"])
    m.save_pretrained(out, safe_serialization=True)
    cfg = json.load(open(os.path.join(out, "config.json")))
    assert cfg["inv_coeff_init_option"] == c["per_head"] and cfg["conv_kernel_size"] == c["conv"]


def main():
    for c in CASES:
        model = build(c)
        save(model, c)
        g = os.path.join(GOLD, c["name"])
        os.makedirs(g, exist_ok=True)
        rng = np.random.default_rng(c["seed"])
        b, n = 2, c["seq"]
        ids = rng.integers(2, 97, size=(b, n)).astype(np.int64)
        mask = np.ones((b, n), np.int64)
        mask[1, n - c["pad"]:] = 0  # right padding in row 1
        ids[1, n - c["pad"]:] = 1   # pad_token_id
        types = rng.integers(0, 2, size=(b, n)).astype(np.int64)
        with torch.no_grad():
            h = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask),
                      token_type_ids=torch.tensor(types)).last_hidden_state.numpy()
            h0 = model(input_ids=torch.tensor(ids[:1]), attention_mask=torch.tensor(mask[:1]),
                       token_type_ids=torch.tensor(types[:1])).last_hidden_state.numpy()
        for k, v in dict(input_ids=ids, attention_mask=mask, token_type_ids=types,
                         last_hidden_state=h.astype(np.float32), row0_input_ids=ids[:1],
                         row0_attention_mask=mask[:1], row0_token_type_ids=types[:1],
                         row0_last_hidden_state=h0.astype(np.float32)).items():
            np.save(os.path.join(g, k + ".npy"), v)
        print("%s: |h| max %.3f, batch row 0 vs alone %.2e" %
              (c["name"], np.abs(h).max(), np.abs(h[0] - h0[0]).max()))


if __name__ == "__main__":
    main()
