#!/usr/bin/env python3
"""Tiny Llama and GPT-2 checkpoints with an adaptive span in config.json ("vkf_attention":
{"kind": "adaptive_span", "ramp": R, "spans": ...}) and the goldens of
tools/goldens/adaptive_span_ref.py (the paper's equation patched into transformers 4.38.2), for
tests/cli/test_adaptive_span.sh.
Writes tests/models/data/<case>/ (config.json + model.safetensors) and
tests/models/golden/span/<case>/: input_ids, attention_mask (int64 .npy) of a batch of 2 whose
row 1 is right-padded, logits (float32) of the batch, row1_* for row 1 alone at its own length,
and greedy generation (generate_0.npy, generate_1.npy: 12 new ids of GEN_PROMPTS[0] and [1];
generate_0_logits.npy float32 [12, vocab]), each step a full forward of the whole sequence, which
the device's KV cache and decode steps must match.
Spans are odd on purpose: 0, fractional, shorter than the ramp, longer than every sequence.
Run: /tmp/tvenv2/bin/python tools/goldens/make_adaptive_span_golden.py (torch + transformers
4.38.2; from the repository root).
"""
import json
import os
import sys

import numpy as np
import torch
from safetensors.torch import save_file
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adaptive_span_ref as ref  # noqa: E402

DATA = "tests/models/data"
GOLD = "tests/models/golden/span"
SEQ, KEPT = 21, 15  # batch row 1 keeps 15 of 21 tokens
GEN_PROMPTS = ([5, 9, 3, 17, 2, 8, 11, 30, 7, 14, 22], [4, 4, 21])
GEN_STEPS = 12

CASES = [
    # grouped-query heads (4 / 2); per layer and head
    ("span_llama", "llama", 4.0, [[0.0, 2.5, 7.0, 100.0], [1.5, 3.0, 0.25, 40.0]], None),
    # one span per layer (every head), a ramp longer than the spans; bf16 weights
    ("span_llama_layer", "llama", 6.5, [1.0, 9.25], torch.bfloat16),
    # GPT-2 (learned positions, fused c_attn), one number for every layer and head
    ("span_gpt2", "gpt2", 3.0, 5.5, None),
]


def build(arch, seed):
    torch.manual_seed(seed)
    if arch == "llama":
        cfg = LlamaConfig(vocab_size=50, hidden_size=24, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, intermediate_size=32, max_position_embeddings=64,
                          tie_word_embeddings=False)
        cfg._attn_implementation = "eager"
        model = LlamaForCausalLM(cfg)
    else:
        cfg = GPT2Config(vocab_size=50, n_embd=18, n_layer=2, n_head=3, n_positions=64,
                         attn_pdrop=0.0, resid_pdrop=0.0, embd_pdrop=0.0, bos_token_id=1,
                         eos_token_id=2)
        model = GPT2LMHeadModel(cfg)
    model.eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm.weight" in name or "ln_" in name and name.endswith("weight"):
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


def run(model, ids, mask):
    with torch.no_grad():
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
    for i, (name, arch, ramp, spans, dtype) in enumerate(CASES):
        model = build(arch, 40 + i)
        if dtype is not None:
            with torch.no_grad():
                for p in model.parameters():
                    p.copy_(p.to(dtype).float())
        cfg = model.config
        ref.patch(model, ramp, ref.expand_spans(spans, cfg.num_hidden_layers,
                                                cfg.num_attention_heads))
        sd = {k: v.contiguous() for k, v in model.state_dict().items()
              if "rotary_emb" not in k and not k.endswith((".attn.bias", ".attn.masked_bias"))}
        if dtype is not None:
            sd = {k: v.to(dtype) for k, v in sd.items()}
        if arch == "gpt2":
            sd.pop("lm_head.weight", None)  # tied to the token table
        out = os.path.join(DATA, name)
        os.makedirs(out, exist_ok=True)
        save_file(sd, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
        c = cfg.to_dict()
        for k in ("_attn_implementation", "_attn_implementation_internal", "attn_implementation"):
            c.pop(k, None)
        c["architectures"] = ["LlamaForCausalLM" if arch == "llama" else "GPT2LMHeadModel"]
        c["vkf_attention"] = {"kind": "adaptive_span", "ramp": ramp, "spans": spans}
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(c, f, indent=2, sort_keys=True)
            f.write("\n")
        gold = os.path.join(GOLD, name)
        os.makedirs(gold, exist_ok=True)
        ids, mask = inputs(SEQ, KEPT, 50 + i)
        y = run(model, ids, mask)
        y1 = run(model, ids[1:, :KEPT], mask[1:, :KEPT])
        for p, arrays in (("", (ids, mask, y)), ("row1_", (ids[1:, :KEPT], mask[1:, :KEPT], y1))):
            for n, a in zip(("input_ids", "attention_mask", "logits"), arrays):
                np.save(os.path.join(gold, p + n + ".npy"), a.astype(np.float32) if n == "logits" else a)
        for j, prompt in enumerate(GEN_PROMPTS):
            gen_ids, gen_logits = greedy(model, prompt)
            np.save(os.path.join(gold, "generate_%d.npy" % j), gen_ids)
            if j == 0:
                np.save(os.path.join(gold, "generate_0_logits.npy"), gen_logits)
        # How far the span moves the model: the same weights with plain softmax attention.
        plain = build(arch, 40 + i)
        if dtype is not None:
            with torch.no_grad():
                for p in plain.parameters():
                    p.copy_(p.to(dtype).float())
        print(name, "logits", y.shape, "max |y|", float(np.abs(y).max()),
              "row1 alone vs batch", float(np.abs(y1[0] - y[1, :KEPT]).max()),
              "span vs plain", float(np.abs(run(plain, ids, mask) - y).max()))


if __name__ == "__main__":
    main()
