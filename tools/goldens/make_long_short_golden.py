#!/usr/bin/env python3
"""Tiny Llama and BERT checkpoints with long-short attention in config.json ("vkf_attention":
{"kind": "long_short", "window": w, "rank": r, "segment": l, "dual_ln": ...}) and the goldens of
tools/goldens/long_short_ref.py (the paper's equations patched into transformers 4.38.2), for
tests/cli/test_long_short.sh.
Writes tests/models/data/<case>/ (config.json + model.safetensors) and
tests/models/golden/long_short/<case>/: input_ids, attention_mask (int64 .npy) of a batch of 2
whose row 1 is right-padded, the batch's output (logits for Llama, last_hidden_state for BERT,
float32), row1_* for row 1 alone at its own length, and for Llama greedy generation
(generate_0.npy, generate_1.npy: 12 new ids of GEN_PROMPTS[0] and [1]; generate_0_logits.npy
float32 [12, vocab]), each step a full forward of the whole sequence, which the device's KV cache
and decode steps must match.
Sizes are odd on purpose: odd windows, segments that do not divide the length, a rank above the
head dim, sequences over one 32-token block of the sparse layout.
Run: /tmp/tvenv2/bin/python tools/goldens/make_long_short_golden.py (torch + transformers
4.38.2; from the repository root).
"""
import json
import os
import sys

import numpy as np
import torch
from safetensors.torch import save_file
from transformers import (BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig,
                          LlamaForCausalLM)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import long_short_ref as ref  # noqa: E402

DATA = "tests/models/data"
GOLD = "tests/models/golden/long_short"
GEN_PROMPTS = ([5, 9, 3, 17, 2, 8, 11, 30, 7, 14, 22], [4, 4, 21])
GEN_STEPS = 12

CASES = [
    # grouped-query heads (4 / 2), DualLN, segments of 5 (45 = 9 whole segments), window 4
    ("ls_llama", "llama", {"kind": "long_short", "window": 4, "rank": 2, "segment": 5}, 45, 33),
    # odd window, no DualLN, a segment that leaves a partial one, rank 7 > head dim 6
    ("ls_llama_odd", "llama",
     {"kind": "long_short", "window": 3, "rank": 7, "segment": 4, "dual_ln": False}, 23, 14),
    # GPT-2 (learned positions, fused c_attn, tied head): a segment shorter than the window
    ("ls_gpt2", "gpt2", {"kind": "long_short", "window": 6, "rank": 2, "segment": 3}, 27, 19),
    # bidirectional: one projection of the whole sequence, odd window, 70 tokens (3 blocks)
    ("ls_bert", "bert", {"kind": "long_short", "window": 5, "rank": 3}, 70, 53),
]


def build(arch, seed):
    torch.manual_seed(seed)
    if arch == "llama":
        cfg = LlamaConfig(vocab_size=50, hidden_size=24, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, intermediate_size=32, max_position_embeddings=128,
                          tie_word_embeddings=False)
        cfg._attn_implementation = "eager"
        model = LlamaForCausalLM(cfg)
    elif arch == "gpt2":
        cfg = GPT2Config(vocab_size=50, n_embd=18, n_layer=2, n_head=3, n_positions=128,
                         attn_pdrop=0.0, resid_pdrop=0.0, embd_pdrop=0.0, bos_token_id=1,
                         eos_token_id=2)
        model = GPT2LMHeadModel(cfg)
    else:
        cfg = BertConfig(vocab_size=50, hidden_size=24, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=32, max_position_embeddings=128,
                         hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        cfg._attn_implementation = "eager"
        model = BertModel(cfg, add_pooling_layer=False)
    model.eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm.weight" in name or "LayerNorm.weight" in name or (
                    "ln_" in name and name.endswith("weight")):
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.3 * torch.randn_like(p))
    return model


def inputs(n, kept, seed):
    g = np.random.default_rng(seed)
    ids = g.integers(1, 50, size=(2, n)).astype(np.int64)
    mask = np.ones((2, n), np.int64)
    mask[1, kept:] = 0
    ids[1, kept:] = 0
    return ids, mask


def run(model, holder, ids, mask):
    if holder is not None:
        holder[0] = torch.from_numpy(mask)
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                    **({"use_cache": False} if holder is not None else {}))
    return (out.logits if holder is not None else out.last_hidden_state).numpy()


def greedy(model, holder, prompt):
    ids, steps = list(prompt), []
    for _ in range(GEN_STEPS):
        holder[0] = None
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1]
        steps.append(logits.numpy().astype(np.float32))
        ids.append(int(logits.argmax()))
    return np.array(ids[len(prompt):], np.int64), np.stack(steps)


def main():
    for i, (name, arch, lscfg, seq, kept) in enumerate(CASES):
        model = build(arch, 60 + i)
        holder = ref.patch(model, lscfg, seed=70 + i)
        if arch == "bert":
            holder = None
        sd = {ref.tensor_name(k): v.detach().contiguous() for k, v in model.state_dict().items()
              if "rotary_emb" not in k and "position_ids" not in k
              and not k.endswith((".attn.bias", ".attn.masked_bias"))}
        for k, v in model.named_parameters():
            sd[ref.tensor_name(k)] = v.detach().contiguous()
        if arch == "gpt2":
            sd.pop("lm_head.weight", None)  # tied to the token table
        out = os.path.join(DATA, name)
        os.makedirs(out, exist_ok=True)
        save_file(sd, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
        c = model.config.to_dict()
        for k in ("_attn_implementation", "_attn_implementation_internal", "attn_implementation"):
            c.pop(k, None)
        c["architectures"] = [{"llama": "LlamaForCausalLM", "gpt2": "GPT2LMHeadModel"}.get(arch, "BertModel")]
        c["vkf_attention"] = lscfg
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(c, f, indent=2, sort_keys=True)
            f.write("\n")
        gold = os.path.join(GOLD, name)
        os.makedirs(gold, exist_ok=True)
        ids, mask = inputs(seq, kept, 80 + i)
        y = run(model, holder, ids, mask)
        y1 = run(model, holder, ids[1:, :kept], mask[1:, :kept])
        what = "last_hidden_state" if arch == "bert" else "logits"
        for p, arrays in (("", (ids, mask, y)), ("row1_", (ids[1:, :kept], mask[1:, :kept], y1))):
            for n, a in zip(("input_ids", "attention_mask", what), arrays):
                np.save(os.path.join(gold, p + n + ".npy"), a.astype(np.float32) if n == what else a)
        if arch != "bert":
            for j, prompt in enumerate(GEN_PROMPTS):
                gen_ids, gen_logits = greedy(model, holder, prompt)
                np.save(os.path.join(gold, "generate_%d.npy" % j), gen_ids)
                if j == 0:
                    np.save(os.path.join(gold, "generate_0_logits.npy"), gen_logits)
        print(name, what, y.shape, "max |y|", float(np.abs(y).max()),
              "row1 alone vs batch", float(np.abs(y1[0] - y[1, :kept]).max()))


if __name__ == "__main__":
    main()
