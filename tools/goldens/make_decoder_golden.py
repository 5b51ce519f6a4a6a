#!/usr/bin/env python3
"""Seeded random decoder-only checkpoints and their Hugging Face logits, for `vkf forward` tests.

Writes, under tests/models/data/ (small: a few hundred KB each), Hugging Face folders made by
transformers' own classes with seeded random weights:
  gpt2_tiny     GPT2LMHeadModel: 3 heads of 16, learned positions, Conv1D weights, tied head (F32)
  llama_tiny    LlamaForCausalLM: 4 heads / 2 KV heads of 16, RMSNorm, SwiGLU, untied head,
                saved in BF16 (the reference runs the same BF16 values in fp32)
  llama_tied    LlamaForCausalLM: tied head, attention_bias, rope_scaling linear 2.0, F16 weights
  llama_dynamic LlamaForCausalLM: rope_scaling dynamic 2.0 over 16 positions (generation goes past)
  llama3_rope   LlamaForCausalLM with rope_scaling {"rope_type": "llama3"}: transformers 4.38 has no
                such type, so its reference is a 4.38 Llama whose rotary inv_freq buffers are
                replaced by the Llama 3.1 frequencies, computed here from their published formula
                (transformers' _compute_llama3_parameters); only its forward logits are golden
  mistral_tiny  MistralForCausalLM: 1 KV head, sliding_window 5 (shorter than the sequence)
  qwen2_tiny    Qwen2ForCausalLM: q/k/v biases, tied head
and under tests/models/golden/decoder/:
  input_ids.npy, attention_mask.npy  int64 [3, 12]: a full row, a right-padded row, a
                                     left-padded row
  <name>_logits.npy                  float32 [3, 12, vocab]: model(input_ids, attention_mask)
                                     in fp32 eval mode with the eager attention of 4.38
  <name>_logits_nomask.npy           float32 [1, 12, vocab]: row 0 alone, no attention_mask
  generate_prompts.txt               three prompts (ids, one line each; lengths 8, 5, 10)
  llama_dynamic_long_ids.npy, llama_dynamic_long_logits.npy: 24 tokens past its 16 positions
  <name>_generate_<i>.npy            int64 [NEW]: greedy generate(use_cache=True) of prompt i alone,
                                     NEW = 32 new tokens, EOS ignored
  <name>_generate_<i>_logits.npy     float32 [NEW, vocab]: the logits of every generated step

    /usr/bin/python3 tools/goldens/make_decoder_golden.py      (torch 1.13, transformers 4.38.2)

Development time only: the tests read the committed files and need no Python.
"""
import os

import numpy as np
import torch
import transformers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "models", "data")
GOLDEN = os.path.join(ROOT, "tests", "models", "golden", "decoder")
VOCAB, LEN = 256, 12


def configs():
    common = dict(vocab_size=VOCAB, max_position_embeddings=64, bos_token_id=1, eos_token_id=2)
    llama = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, rms_norm_eps=1e-5, **common)
    return [
        ("gpt2_tiny", transformers.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=48, n_layer=2,
                                              n_head=3, bos_token_id=1, eos_token_id=2),
         transformers.GPT2LMHeadModel, torch.float32),
        ("llama_tiny", transformers.LlamaConfig(tie_word_embeddings=False, **llama),
         transformers.LlamaForCausalLM, torch.bfloat16),
        ("llama_tied", transformers.LlamaConfig(tie_word_embeddings=True, attention_bias=True,
                                                rope_scaling={"type": "linear", "factor": 2.0},
                                                rope_theta=500.0, **llama),
         transformers.LlamaForCausalLM, torch.float16),
        ("mistral_tiny", transformers.MistralConfig(**dict(llama, num_key_value_heads=1),
                                                    sliding_window=5, tie_word_embeddings=False),
         transformers.MistralForCausalLM, torch.float32),
        ("qwen2_tiny", transformers.Qwen2Config(tie_word_embeddings=True, **llama),
         transformers.Qwen2ForCausalLM, torch.float32),
        # Dynamic NTK rope past 16 positions: generation crosses it, each step with its own base.
        ("llama_dynamic", transformers.LlamaConfig(**dict(llama, max_position_embeddings=16),
                                                   rope_scaling={"type": "dynamic", "factor": 2.0}),
         transformers.LlamaForCausalLM, torch.float32),
    ]


def inputs():
    rng = np.random.default_rng(7)
    ids = rng.integers(3, VOCAB, size=(3, LEN)).astype(np.int64)
    mask = np.ones((3, LEN), np.int64)
    mask[1, 8:] = 0  # right padding
    ids[1, 8:] = 0
    mask[2, :3] = 0  # left padding
    ids[2, :3] = 0
    ids[:, 0][mask[:, 0] == 1] = 1
    ids[2, 3] = 1
    ids[0, 5] = VOCAB - 1  # the last row of the tables
    return ids, mask


NEW = 32
PROMPTS = [[1, 17, 200, 45, 99, 3, 250, 7], [1, 64, 128, 9, 33], [1, 5, 6, 7, 8, 9, 10, 11, 12, 13]]


def generate_goldens(name, ref):
    ref.generation_config.eos_token_id = None  # EOS ignored: always NEW tokens
    ref.generation_config.pad_token_id = 0
    for i, prompt in enumerate(PROMPTS):
        with torch.no_grad():
            out = ref.generate(torch.tensor([prompt]), max_new_tokens=NEW, do_sample=False,
                               use_cache=True, output_scores=True, return_dict_in_generate=True)
        gen = out.sequences[0, len(prompt):].numpy().astype(np.int64)
        scores = torch.stack(out.scores, 0)[:, 0].numpy().astype(np.float32)
        assert gen.shape == (NEW,) and scores.shape[0] == NEW, name
        np.save(os.path.join(GOLDEN, "%s_generate_%d.npy" % (name, i)), gen)
        np.save(os.path.join(GOLDEN, "%s_generate_%d_logits.npy" % (name, i)), scores)


def llama3_inv_freq(dim, base, factor, low, high, old_len):
    """Llama 3.1's frequency scaling: long wavelengths divided by factor, short ones kept, a smooth
    blend between (transformers >= 4.43, modeling_rope_utils._compute_llama3_parameters)."""
    import math
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    low_wavelen, high_wavelen = old_len / low, old_len / high
    out = []
    for f in inv.tolist():
        wavelen = 2 * math.pi / f
        if wavelen < high_wavelen:
            out.append(f)
        elif wavelen > low_wavelen:
            out.append(f / factor)
        else:
            smooth = (old_len / wavelen - low) / (high - low)
            out.append((1 - smooth) * f / factor + smooth * f)
    return torch.tensor(out, dtype=torch.float32)


def llama3_golden(ids, mask):
    """A Llama with llama3 rope scaling: weights from a plain 4.38 Llama, config.json saying llama3."""
    import json
    torch.manual_seed(2024)
    cfg = transformers.LlamaConfig(hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, vocab_size=VOCAB,
                                   max_position_embeddings=64, rope_theta=500000.0,
                                   tie_word_embeddings=True, bos_token_id=1, eos_token_id=2)
    cfg._attn_implementation = "eager"
    model = transformers.LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.15)
        for n_, p in model.named_parameters():
            if "norm" in n_:
                p.add_(1.0)
    folder = os.path.join(DATA, "llama3_rope")
    model.save_pretrained(folder, safe_serialization=True)
    # Wavelengths of head dim 16 with base 5e5 span 6 .. 3.3e5 positions: with an original context
    # of 64 and factors 1 / 4, some are kept, some divided by 8 and some blended.
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
    conf_path = os.path.join(folder, "config.json")
    conf = json.load(open(conf_path))
    conf["rope_scaling"] = scaling
    json.dump(conf, open(conf_path, "w"), indent=2)
    inv = llama3_inv_freq(16, 500000.0, 8.0, 1.0, 4.0, 64)
    for layer in model.model.layers:
        layer.self_attn.rotary_emb.inv_freq.copy_(inv)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)).logits
    np.save(os.path.join(GOLDEN, "llama3_rope_logits.npy"), logits.numpy().astype(np.float32))
    print("llama3_rope: logits range [%.2f, %.2f]" % (logits.min().item(), logits.max().item()))


def main():
    os.makedirs(GOLDEN, exist_ok=True)
    ids, mask = inputs()
    np.save(os.path.join(GOLDEN, "input_ids.npy"), ids)
    np.save(os.path.join(GOLDEN, "attention_mask.npy"), mask)
    with open(os.path.join(GOLDEN, "generate_prompts.txt"), "w") as f:
        for p in PROMPTS:
            f.write(",".join(map(str, p)) + "\n")
    llama3_golden(ids, mask)
    for i, (name, config, cls, dtype) in enumerate(configs()):
        torch.manual_seed(1000 + i)
        config._attn_implementation = "eager"
        model = cls(config).eval()
        with torch.no_grad():  # weights of O(0.1): logits of O(1), a real test of the math
            for p in model.parameters():
                p.normal_(0.0, 0.15)
            for n_, p in model.named_parameters():
                if "norm" in n_ or n_.endswith("ln_1.weight") or n_.endswith("ln_2.weight") or n_.endswith("ln_f.weight"):
                    p.add_(1.0)
        folder = os.path.join(DATA, name)
        model.to(dtype).save_pretrained(folder, safe_serialization=True)
        # The reference: the saved (rounded) weights, run in fp32.
        ref = cls.from_pretrained(folder, torch_dtype=torch.float32, attn_implementation="eager").eval()
        with torch.no_grad():
            logits = ref(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)).logits
            alone = ref(input_ids=torch.tensor(ids[:1])).logits
        np.save(os.path.join(GOLDEN, name + "_logits.npy"), logits.numpy().astype(np.float32))
        np.save(os.path.join(GOLDEN, name + "_logits_nomask.npy"), alone.numpy().astype(np.float32))
        diff = (logits[0] - alone[0]).abs().max().item()
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print("%s: %s, %d bytes, logits range [%.2f, %.2f], full row vs alone %.2g" % (
            name, dtype, size, logits.min().item(), logits.max().item(), diff))
        # Right padding leaves the real positions of row 1 as they are alone.
        with torch.no_grad():
            r1 = ref(input_ids=torch.tensor(ids[1:2, :8])).logits
        assert (r1[0] - logits[1, :8]).abs().max().item() < 1e-4, name
        if name == "llama_dynamic":
            # transformers 4.38 cannot generate past max_position_embeddings (its causal-mask
            # buffer has that size), but a forward pass of 24 tokens runs the dynamic base. Last:
            # 4.38 keeps the enlarged base for every later call of the same model.
            long_ids = torch.tensor([[1] + [int(v) for v in np.random.default_rng(3).integers(3, VOCAB, 23)]])
            with torch.no_grad():
                long_logits = ref(input_ids=long_ids).logits
            np.save(os.path.join(GOLDEN, "llama_dynamic_long_ids.npy"), long_ids.numpy().astype(np.int64))
            np.save(os.path.join(GOLDEN, "llama_dynamic_long_logits.npy"), long_logits.numpy().astype(np.float32))
        else:
            generate_goldens(name, ref)


if __name__ == "__main__":
    main()
