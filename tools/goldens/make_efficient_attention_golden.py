#!/usr/bin/env python3
"""Tiny BERT and Llama checkpoints with a "vkf_attention" key in config.json, and the goldens of
tools/goldens/efficient_attention_ref.py (the kinds patched into transformers 4.38.2), for
tests/cli/test_efficient_attention.sh.
Writes tests/models/data/<case>/ (config.json + model.safetensors) and
tests/models/golden/efficient/<case>/: input_ids, attention_mask, token_type_ids (int64 .npy) of a
batch of 2 whose row 1 is right-padded, the output (BERT last_hidden_state, Llama logits; float32)
of the batch, and row1_* for row 1 alone at its own length; for Llama also greedy generation
(generate_0.npy, generate_1.npy: 12 new ids of prompts GEN_PROMPTS[0] and [1]; generate_0_logits.npy
float32 [12, vocab], the raw logits of each step), each step a full forward of the whole sequence
(the quadratic form or the gate's loop, no state), which the device's recurrent state must match;
eff_llama_rfa also beam_0.npy: generate(num_beams=3, 8 new tokens, no cache) of GEN_PROMPTS[0].
BERT cases have head dim 5 (odd), Llama head dim 6 (rotary needs it even). Random features are
stored as vkf_omega (one draw shared by PyTorch and vkformer). F16/BF16 cases round the weights
first; the golden is the forward of the rounded weights.
Run: /usr/bin/python3 tools/goldens/make_efficient_attention_golden.py (from the repository root).
"""
import json
import os
import sys

import numpy as np
import torch
from safetensors.torch import save_file
from transformers import BertConfig, BertModel, LlamaConfig, LlamaForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import efficient_attention_ref as ref  # noqa: E402

DATA = "tests/models/data"
GOLD = "tests/models/golden/efficient"
SEQ, KEPT = 9, 6  # batch row 1 keeps 6 of 9 tokens
GEN_PROMPTS = ([5, 9, 3, 17, 2, 8, 11], [4, 4, 21])
GEN_STEPS = 12

CASES = [
    ("eff_bert_linear", "bert", {"kind": "linear"}, None),
    ("eff_bert_performer", "bert", {"kind": "performer", "features": 8, "seed": 3}, None),
    ("eff_bert_rfa", "bert", {"kind": "rfa", "features": 16, "orthogonal": False, "scale": 0.3},
     torch.float16),
    ("eff_bert_linformer", "bert", {"kind": "linformer", "k": 4, "sharing": "none"}, None),
    ("eff_bert_linformer_hw", "bert", {"kind": "linformer", "k": 4, "sharing": "headwise"}, None),
    ("eff_bert_linformer_kv", "bert", {"kind": "linformer", "k": 3, "sharing": "key-value"}, None),
    ("eff_bert_linformer_lw", "bert", {"kind": "linformer", "k": 5, "sharing": "layerwise"},
     torch.bfloat16),
    ("eff_llama_linear", "llama", {"kind": "linear"}, None),
    ("eff_llama_performer", "llama", {"kind": "performer", "features": 10, "seed": 7}, None),
    ("eff_llama_rfa", "llama",
     {"kind": "rfa", "features": 16, "gate": True, "scale": 0.3, "eps": 1e-5}, None),
    ("eff_bert_nystrom", "bert",
     {"kind": "nystrom", "landmarks": 3, "inv_init": "per_head", "conv_kernel_size": 3}, None),
    ("eff_bert_nystrom_orig", "bert", {"kind": "nystrom", "landmarks": 3}, torch.float16),
    # No vkf_omega in the file: both sides draw it from seed + layer (vkf_random_features).
    ("eff_llama_performer_drawn", "llama",
     {"kind": "performer", "features": 10, "seed": 11, "_drawn": True}, None),
    ("eff_bert_rfa_drawn", "bert",
     {"kind": "rfa", "features": 7, "seed": 4, "scale": 0.3, "_drawn": True}, None),
]


def build(arch, spec, seed):
    torch.manual_seed(seed)
    if arch == "bert":
        cfg = BertConfig(vocab_size=50, hidden_size=15, num_hidden_layers=2, num_attention_heads=3,
                         intermediate_size=24, max_position_embeddings=16, type_vocab_size=2)
        model = BertModel(cfg, add_pooling_layer=False)
    else:
        cfg = LlamaConfig(vocab_size=50, hidden_size=18, num_hidden_layers=2, num_attention_heads=3,
                          num_key_value_heads=3, intermediate_size=32, max_position_embeddings=32,
                          tie_word_embeddings=False, attn_implementation="eager")
        cfg._attn_implementation = "eager"
        model = LlamaForCausalLM(cfg)
    gen = torch.Generator().manual_seed(seed + 100)
    ref.patch(model, spec, gen)
    model.eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "vkf" in name:
                continue
            if "LayerNorm.weight" in name or "norm.weight" in name:
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.3 * torch.randn_like(p))
    return model


def inputs(arch, n, kept, seed):
    g = np.random.default_rng(seed)
    ids = g.integers(1, 50, size=(2, n)).astype(np.int64)
    mask = np.ones((2, n), np.int64)
    mask[1, kept:] = 0
    ids[1, kept:] = 0
    return ids, mask, np.zeros((2, n), np.int64)


def run(model, arch, ids, mask, types):
    with torch.no_grad():
        if arch == "bert":
            return model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                         token_type_ids=torch.from_numpy(types)).last_hidden_state.numpy()
        return model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                     use_cache=False).logits.numpy()


def greedy(model, prompt):
    ids, steps = list(prompt), []
    for _ in range(GEN_STEPS):
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1]
        steps.append(logits.numpy().astype(np.float32))
        ids.append(int(logits.argmax()))
    return np.array(ids[len(prompt):], np.int64), np.stack(steps)


def main():
    for i, (name, arch, spec, dtype) in enumerate(CASES):
        model = build(arch, spec, 10 + i)
        sd = ref.renamed_state_dict(model)
        if dtype is not None:
            with torch.no_grad():
                for p in list(model.parameters()) + list(model.buffers()):
                    if p.is_floating_point():
                        p.copy_(p.to(dtype).float())
            sd = {k: v.to(dtype) if v.is_floating_point() else v
                  for k, v in ref.renamed_state_dict(model).items()}
        sd = {k: v for k, v in sd.items()
              if "rotary_emb" not in k and not (spec.get("_drawn") and "vkf_omega" in k)}
        out = os.path.join(DATA, name)
        os.makedirs(out, exist_ok=True)
        save_file(sd, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
        cfg = model.config.to_dict()
        for k in ("_attn_implementation", "_attn_implementation_internal", "attn_implementation"):
            cfg.pop(k, None)
        cfg["architectures"] = ["BertModel" if arch == "bert" else "LlamaForCausalLM"]
        cfg["vkf_attention"] = {k: v for k, v in spec.items() if not k.startswith("_")}
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2, sort_keys=True)
            f.write("\n")
        gold = os.path.join(GOLD, name)
        os.makedirs(gold, exist_ok=True)
        ids, mask, types = inputs(arch, SEQ, KEPT, 20 + i)
        y = run(model, arch, ids, mask, types)
        y1 = run(model, arch, ids[1:, :KEPT], mask[1:, :KEPT], types[1:, :KEPT])
        key = "last_hidden_state" if arch == "bert" else "logits"
        for p, arrays in (("", (ids, mask, types, y)),
                          ("row1_", (ids[1:, :KEPT], mask[1:, :KEPT], types[1:, :KEPT], y1))):
            for n, a in zip(("input_ids", "attention_mask", "token_type_ids", key), arrays):
                np.save(os.path.join(gold, p + n + ".npy"), a.astype(np.float32) if n == key else a)
        if arch == "llama":
            for j, prompt in enumerate(GEN_PROMPTS):
                gen_ids, gen_logits = greedy(model, prompt)
                np.save(os.path.join(gold, "generate_%d.npy" % j), gen_ids)
                if j == 0:
                    np.save(os.path.join(gold, "generate_0_logits.npy"), gen_logits)
            if name == "eff_llama_rfa":  # beam search reorders the states' rows between steps
                with torch.no_grad():
                    beams = model.generate(torch.tensor([GEN_PROMPTS[0]]), num_beams=3,
                                           do_sample=False, max_new_tokens=8, min_new_tokens=8,
                                           use_cache=False, eos_token_id=None, pad_token_id=0)
                np.save(os.path.join(gold, "beam_0.npy"),
                        beams[0, len(GEN_PROMPTS[0]):].numpy().astype(np.int64))
        print(name, key, y.shape, "max |y|", float(np.abs(y).max()),
              "row1 alone vs batch", float(np.abs(y1[0] - y[1, :KEPT]).max()))


if __name__ == "__main__":
    main()
