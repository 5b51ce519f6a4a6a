#!/usr/bin/env python3
"""Tiny seeded Transformer-XL checkpoints and their Hugging Face goldens, for
tests/cli/test_transfo_xl.sh.

Writes tests/models/data/txl_{adaptive,plain,same}/ (config.json + model.safetensors, saved by
save_pretrained) and tests/models/golden/transfo_xl/<name>_*.npy:
  txl_adaptive  TransfoXLLMHeadModel, cutoffs [11, 23] with div_val 2 (adaptive input and
                softmax, tied projections), post-norm, d_head 5;
  txl_plain     TransfoXLLMHeadModel, cutoffs [] and div_val 1, d_embed 8 != d_model 10 (the
                projections), pre_lnorm, shared r_w_bias / r_r_bias (untie_r false);
  txl_same      TransfoXLModel, same_length with clamp_len 3, cutoffs [9] and div_val 1.
For each: seg{0,1,2}_input_ids int64 [2, Q] (Q = 4, 3, 5); seg0 runs without mems (Hugging
Face's init_mems: mem_len zero rows), seg1 and seg2 on the mems the previous segment returned;
seg{k}_mems float32 [n_layer, M, 2, d_model] (the mems stacked, time-major) after segment k;
seg{k}_prediction_scores [2, Q, vocab] (LM heads) or seg{k}_last_hidden_state [2, Q, d_model].
empty_input_ids / empty_mems_in (0 rows) / empty_{prediction_scores,last_hidden_state,mems}: one
segment from an empty memory (the paper's start). LM heads also: greedy_prompt int64 [1, P] and
greedy_ids int64 [16]: generate(do_sample=False, max_new_tokens=16) as transformers 4.36.2 runs it
(the mems replace the KV cache: the last token and the mems after the first step); the script
checks that all 16 come without an eos (0).
Parameters are drawn N(0, 0.5) (layer norm weights 1 + N(0, 0.1)) so greedy argmaxes are not near
ties.
Run: /tmp/tvenv36/bin/python tools/goldens/make_transfo_xl_golden.py from the repository root
(transformers 4.36.2: its TransfoXL forward raises TypeError from 4.37 on; torch 1.13).
"""
import os
import warnings

import numpy as np
import torch
from transformers import TransfoXLConfig, TransfoXLLMHeadModel, TransfoXLModel

warnings.filterwarnings("ignore")
DATA = "tests/models/data"
GOLD = "tests/models/golden/transfo_xl"
SEGMENTS = (4, 3, 5)
BATCH = 2
GREEDY = 16

CONFIGS = {
    "txl_adaptive": (TransfoXLLMHeadModel, dict(
        vocab_size=37, cutoffs=[11, 23], div_val=2, d_model=12, d_embed=12, n_head=3, d_head=5,
        d_inner=19, n_layer=2, mem_len=6, clamp_len=1000, same_length=False, pre_lnorm=False,
        untie_r=True, proj_share_all_but_first=True, eos_token_id=0)),
    "txl_plain": (TransfoXLLMHeadModel, dict(
        vocab_size=29, cutoffs=[], div_val=1, d_model=10, d_embed=8, n_head=2, d_head=7,
        d_inner=13, n_layer=3, mem_len=5, clamp_len=-1, same_length=False, pre_lnorm=True,
        untie_r=False, proj_share_all_but_first=False, eos_token_id=0)),
    "txl_same": (TransfoXLModel, dict(
        vocab_size=21, cutoffs=[9], div_val=1, d_model=8, d_embed=8, n_head=2, d_head=4,
        d_inner=11, n_layer=2, mem_len=4, clamp_len=3, same_length=True, pre_lnorm=False,
        untie_r=True, eos_token_id=0)),
}


def stack(mems):
    return torch.stack(list(mems)).numpy().astype(np.float32)


def make(name, cls, cfg, seed):
    torch.manual_seed(seed)
    model = cls(TransfoXLConfig(**cfg)).eval()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "layer_norm.weight" in pname:
                p.copy_(1 + torch.randn(p.shape) * 0.1)
            else:
                p.copy_(torch.randn(p.shape) * 0.5)
        model.tie_weights()
    model.save_pretrained(os.path.join(DATA, name), safe_serialization=True)
    lm = cls is TransfoXLLMHeadModel
    out_name = "prediction_scores" if lm else "last_hidden_state"

    def save(key, a):
        np.save(os.path.join(GOLD, f"{name}_{key}.npy"), a)

    g = torch.Generator().manual_seed(seed + 1)
    V = cfg["vocab_size"]
    mems = None
    with torch.no_grad():
        for k, q in enumerate(SEGMENTS):
            ids = torch.randint(0, V, (BATCH, q), generator=g)
            o = model(input_ids=ids, mems=mems)
            mems = o.mems
            save(f"seg{k}_input_ids", ids.numpy().astype(np.int64))
            save(f"seg{k}_{out_name}", getattr(o, out_name).numpy().astype(np.float32))
            save(f"seg{k}_mems", stack(mems))
        ids = torch.randint(0, V, (BATCH, 3), generator=g)
        empty = [torch.zeros(0, BATCH, cfg["d_model"]) for _ in range(cfg["n_layer"])]
        o = model(input_ids=ids, mems=empty)
        save("empty_input_ids", ids.numpy().astype(np.int64))
        save("empty_mems_in", stack(empty))
        save(f"empty_{out_name}", getattr(o, out_name).numpy().astype(np.float32))
        save("empty_mems", stack(o.mems))
        if lm:
            prompt = torch.randint(1, V, (1, 5), generator=g)
            out = model.generate(prompt, do_sample=False, num_beams=1, max_new_tokens=GREEDY,
                                 pad_token_id=0)
            new = out[0, prompt.shape[1]:].numpy().astype(np.int64)
            # All 16 tokens, none of them eos (0): generation did not stop early.
            assert len(new) == GREEDY and 0 not in new.tolist(), (name, new)
            save("greedy_prompt", prompt.numpy().astype(np.int64))
            save("greedy_ids", new)


def main():
    os.makedirs(GOLD, exist_ok=True)
    for i, (name, (cls, cfg)) in enumerate(CONFIGS.items()):
        make(name, cls, cfg, 33 + i)


if __name__ == "__main__":
    main()
