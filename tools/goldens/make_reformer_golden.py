#!/usr/bin/env python3
"""Tiny Reformer checkpoints with seeded random weights and their outputs as transformers 4.38.2
computes them in eval mode, for tests/cli/test_reformer.sh.

Writes tests/models/data/<case>/ (config.json + model.safetensors, save_pretrained's layout) and
tests/models/golden/reformer/<case>/: for each sequence length S of the case, S<S>_input_ids and
S<S>_attention_mask (int64 .npy, batch of two, row 1 right-padded), S<S>_<output> (float32, the
whole batch: last_hidden_state for ReformerModel, logits for the heads) and S<S>_row0_* (batch row
0 run alone). Lengths are picked so that some fill the chunks, some are padded inside the model
to the chunk lengths' least common multiple, and some are at most one chunk (plain attention).

Cases:
  rf_local   ReformerModel, two local layers, chunk 5 (odd), 1 chunk before and 1 after (chunk 0
             and the last chunk see each other through the wrap-around), axial positions (4, 8),
             2 heads of 5 (H·dh = 10 != hidden 16), gelu
  rf_lm      ReformerModelWithLMHead (causal), three local layers, chunk 3, 2 chunks before (more
             than a short input's chunks: a chunk repeats), learned positions, relu
  rf_mlm     ReformerForMaskedLM, one local layer with chunk 4 and no neighbours
  rf_lsh     ReformerModel, an LSH layer (chunk 3, a chunk before and after, 2 hash rounds,
             num_buckets 4) then a local one (chunk 5): padded to multiples of 15
  rf_lsh_lm  ReformerModelWithLMHead (causal), LSH layers with num_buckets [2, 4] (factorised, 8
             buckets), one hash round, chunk 4 and one before, around a local layer of chunk 2

  rf_lsh_lm2 ReformerModelWithLMHead (causal), a local layer then two LSH layers with 2 hash
             rounds, 4 buckets, odd chunk 3 with 2 chunks before, axial positions (4, 8)

The causal LMs get greedy generations (generate(max_new_tokens=12, or 20 for rf_lsh_lm2,
do_sample=False), Hugging Face's cached steps): greedy_<i>_prompt.txt and greedy_<i>_ids.txt
(comma-separated ids, the new tokens alone). rf_lm's steps at positions 4 and 5 see only part of
their chunk window (the cached step slices the past states from (p // 3 - 2) · 3, negative there,
from the end). The LSH ones cover prompts hashed in the prefill with and without padding (the
padding's extra bucket then counts in the cached offsets, and with 2 rounds a cached bucket past
R·nb - 1 widens the new tokens' offsets), and prompts too short to hash, whose layers hash their
whole cache at the step that reaches the chunk length. Each also gets a beam search (beam_*.txt:
3 beams, 10 new tokens) and a batch of two prompts of one length (pair_<k>_*.txt, greedy, 10 new
tokens): there Hugging Face's batched cached LSH step takes every row's keys and values from row
0's states (its batch offset is always 0).

randn_<seed>_<count>.npy: torch.randn(count) after torch.manual_seed(seed) (float32), the
generator LSH layers draw their rotations from (tests/models/test_torch_rng.c).

hash_seed is set in every config (LSH layers draw their rotations after torch.manual_seed of it;
without one Hugging Face's hashing is not reproducible).

Weights are drawn wider than HF's init (normal std 0.3) so that attention is far from uniform.

Run: /tmp/tvenv2/bin/python tools/goldens/make_reformer_golden.py (from the repository root; a
venv with torch 1.13 and transformers 4.38.2).
"""
import os

import numpy as np
import torch
from transformers import (ReformerConfig, ReformerForMaskedLM, ReformerModel,
                          ReformerModelWithLMHead)

DATA = "tests/models/data"
GOLD = "tests/models/golden/reformer"
VOCAB = 61

CASES = [
    dict(name="rf_local", seed=1, cls=ReformerModel, out="last_hidden_state", seqs=(20, 13, 10, 4),
         cfg=dict(hidden_size=16, num_attention_heads=2, attention_head_size=5,
                  attn_layers=["local", "local"], feed_forward_size=24, hidden_act="gelu",
                  axial_pos_embds=True, axial_pos_shape=[4, 8], axial_pos_embds_dim=[6, 10],
                  max_position_embeddings=32, local_attn_chunk_length=5,
                  local_num_chunks_before=1, local_num_chunks_after=1, is_decoder=False)),
    dict(name="rf_lm", seed=2, cls=ReformerModelWithLMHead, out="logits", seqs=(9, 7, 6, 3),
         cfg=dict(hidden_size=12, num_attention_heads=3, attention_head_size=4,
                  attn_layers=["local", "local", "local"], feed_forward_size=20,
                  hidden_act="relu", axial_pos_embds=False, max_position_embeddings=24,
                  local_attn_chunk_length=3, local_num_chunks_before=2,
                  local_num_chunks_after=0, is_decoder=True)),
    dict(name="rf_lsh", seed=4, cls=ReformerModel, out="last_hidden_state", seqs=(15, 11, 30, 3),
         cfg=dict(hidden_size=12, num_attention_heads=2, attention_head_size=4,
                  attn_layers=["lsh", "local"], feed_forward_size=16, axial_pos_embds=True,
                  axial_pos_shape=[6, 5], axial_pos_embds_dim=[5, 7], max_position_embeddings=30,
                  lsh_attn_chunk_length=3, lsh_num_chunks_before=1, lsh_num_chunks_after=1,
                  num_hashes=2, num_buckets=4, local_attn_chunk_length=5,
                  local_num_chunks_before=1, local_num_chunks_after=0, is_decoder=False)),
    dict(name="rf_lsh_lm", seed=5, cls=ReformerModelWithLMHead, out="logits", seqs=(16, 10, 4),
         cfg=dict(hidden_size=10, num_attention_heads=2, attention_head_size=6,
                  attn_layers=["lsh", "local", "lsh"], feed_forward_size=14,
                  axial_pos_embds=False, max_position_embeddings=24, lsh_attn_chunk_length=4,
                  lsh_num_chunks_before=1, lsh_num_chunks_after=0, num_hashes=1,
                  num_buckets=[2, 4], local_attn_chunk_length=2, local_num_chunks_before=1,
                  local_num_chunks_after=0, is_decoder=True)),
    dict(name="rf_lsh_lm2", seed=6, cls=ReformerModelWithLMHead, out="logits", seqs=(9, 7),
         greedy=([5, 17], [9, 33, 41, 12, 7], [20], [4, 8, 15, 16, 23, 42], [30, 31, 32, 33]),
         max_new=20,
         cfg=dict(hidden_size=12, num_attention_heads=2, attention_head_size=5,
                  attn_layers=["local", "lsh", "lsh"], feed_forward_size=16,
                  axial_pos_embds=True, axial_pos_shape=[4, 8], axial_pos_embds_dim=[4, 8],
                  max_position_embeddings=32, lsh_attn_chunk_length=3,
                  lsh_num_chunks_before=2, lsh_num_chunks_after=0, num_hashes=2,
                  num_buckets=4, local_attn_chunk_length=3, local_num_chunks_before=1,
                  local_num_chunks_after=0, is_decoder=True)),
    dict(name="rf_mlm", seed=3, cls=ReformerForMaskedLM, out="logits", seqs=(12, 10),
         cfg=dict(hidden_size=8, num_attention_heads=1, attention_head_size=6,
                  attn_layers=["local"], feed_forward_size=16, axial_pos_embds=True,
                  axial_pos_shape=[4, 4], axial_pos_embds_dim=[3, 5],
                  max_position_embeddings=16, local_attn_chunk_length=4,
                  local_num_chunks_before=0, local_num_chunks_after=0, is_decoder=False)),
]


def build(c):
    torch.manual_seed(c["seed"])
    cfg = ReformerConfig(vocab_size=VOCAB, pad_token_id=0, eos_token_id=2, hash_seed=c["seed"] + 10,
                         **c["cfg"])
    model = c["cls"](cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm.weight" in name:
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.3 * torch.randn_like(p))
    return model


GREEDY_PROMPTS = [[5, 17], [9, 33, 41, 12, 7], [20]]
RANDN = [(0, 1), (3, 5), (3, 15), (3, 16), (7, 37), (11, 64), (123, 100), (2**40 + 5, 33)]


def main():
    os.makedirs(GOLD, exist_ok=True)
    for seed, count in RANDN:
        torch.manual_seed(seed)
        np.save(os.path.join(GOLD, "randn_%d_%d.npy" % (seed, count)),
                torch.randn(count).numpy().astype(np.float32))
    for c in CASES:
        model = build(c)
        out = os.path.join(DATA, c["name"])
        os.makedirs(out, exist_ok=True)
        model.save_pretrained(out, safe_serialization=True)
        g = os.path.join(GOLD, c["name"])
        os.makedirs(g, exist_ok=True)
        rng = np.random.default_rng(c["seed"])
        for s in c["seqs"]:
            ids = rng.integers(3, VOCAB, size=(2, s)).astype(np.int64)
            mask = np.ones((2, s), np.int64)
            pad = max(1, s // 3)
            mask[1, s - pad:] = 0
            ids[1, s - pad:] = 0
            with torch.no_grad():
                y = getattr(model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)),
                            c["out"]).numpy()
                y0 = getattr(model(input_ids=torch.tensor(ids[:1]),
                                   attention_mask=torch.tensor(mask[:1])), c["out"]).numpy()
            p = os.path.join(g, "S%d_" % s)
            np.save(p + "input_ids.npy", ids)
            np.save(p + "attention_mask.npy", mask)
            np.save(p + c["out"] + ".npy", y.astype(np.float32))
            np.save(p + "row0_input_ids.npy", ids[:1])
            np.save(p + "row0_attention_mask.npy", mask[:1])
            np.save(p + "row0_" + c["out"] + ".npy", y0.astype(np.float32))
            print("%s S=%d: |y| max %.3f, batch row 0 vs alone %.2e" %
                  (c["name"], s, np.abs(y).max(), np.abs(y[0] - y0[0]).max()))
        if c["cls"] is ReformerModelWithLMHead:
            for i, prompt in enumerate(c.get("greedy", GREEDY_PROMPTS)):
                with torch.no_grad():
                    out = model.generate(torch.tensor([prompt]),
                                         max_new_tokens=c.get("max_new", 12), do_sample=False,
                                         num_beams=1, use_cache=True)
                new = out[0, len(prompt):].tolist()
                with open(os.path.join(g, "greedy_%d_prompt.txt" % i), "w") as f:
                    f.write(",".join(map(str, prompt)) + "\n")
                with open(os.path.join(g, "greedy_%d_ids.txt" % i), "w") as f:
                    f.write(",".join(map(str, new)) + "\n")
                print("%s greedy %d: %s" % (c["name"], i, new))
            # Beam search (3 beams, 10 new tokens) and a batch of two prompts of one length: with LSH
            # layers Hugging Face's batched cached step takes every row's keys from row 0.
            prompt = [4, 8, 15]
            with torch.no_grad():
                out = model.generate(torch.tensor([prompt]), max_new_tokens=10, do_sample=False,
                                     num_beams=3, use_cache=True)
            with open(os.path.join(g, "beam_prompt.txt"), "w") as f:
                f.write(",".join(map(str, prompt)) + "\n")
            with open(os.path.join(g, "beam_ids.txt"), "w") as f:
                f.write(",".join(map(str, out[0, len(prompt):].tolist())) + "\n")
            pair = [[4, 8, 15, 16], [30, 31, 32, 33]]
            with torch.no_grad():
                out = model.generate(torch.tensor(pair), max_new_tokens=10, do_sample=False,
                                     num_beams=1, use_cache=True)
            for k in range(2):
                with open(os.path.join(g, "pair_%d_prompt.txt" % k), "w") as f:
                    f.write(",".join(map(str, pair[k])) + "\n")
                with open(os.path.join(g, "pair_%d_ids.txt" % k), "w") as f:
                    f.write(",".join(map(str, out[k, 4:].tolist())) + "\n")
            print("%s beam %s, pair %s" % (c["name"], open(os.path.join(g, "beam_ids.txt")).read().strip(),
                                           out[:, 4:].tolist()))


if __name__ == "__main__":
    main()
