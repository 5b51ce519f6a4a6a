#!/usr/bin/env python3
"""Seeded random LongformerModel checkpoints and their reference outputs, for vkformer's
Longformer tests (tests/cli/test_longformer.sh).

Checkpoints (tests/models/data/<name>/, made by transformers 4.38.2's LongformerModel and
save_pretrained(safe_serialization=True)):
  longformer_tiny       F32: hidden 30, 5 heads of 6, intermediate 37, 3 layers, attention_window
                        [4, 8, 4] (one per layer: the sequence pads to a multiple of 8), 64
                        positions, pad_token_id 1, type_vocab_size 1, gelu, pooler
  longformer_tiny_bf16  BF16 storage: hidden 40, 4 heads of 10, intermediate 45, 2 layers,
                        attention_window 6 (an int), 64 positions, pad_token_id 1, pooler
Weights: N(0, 3 / sqrt(fan_in)) for matrices, N(0, 0.5) for embedding tables, 1 + N(0, 0.1) for
LayerNorm scales and N(0, 0.1) for biases, so that every part of the layer (local window, global
keys, the separate global projections) moves the outputs well past the test's tolerance. The
BF16 checkpoint is rounded to bfloat16 and its goldens come from the rounded weights run in f32.

Goldens (tests/models/golden/<name>/, golden.json lists them). B = 2, S = 19 (f32) / 17 (bf16):
  input_ids, attention_mask, global_attention_mask  int64 [2, S]: row 0 of full length with one
        real token equal to pad_token_id (RoBERTa positions skip it), row 1 shorter and
        right-padded with pad_token_id; global tokens at the first token and inside both rows, and
        one global flag on a padding position (HF's merged mask makes it padding)
  last_hidden_state  float32 [2, S, hidden]  LongformerModel(...) in eval mode (padded positions
                     included, as HF returns them after trimming the window padding)
  pooler_output      float32 [2, hidden]
  last_hidden_state_local, pooler_output_local: the same without global_attention_mask
  *_leftpad (longformer_tiny): row 0 left-padded by 3 (a global flag on one padding position), so
        the pooler reads a padding position
  longformer_wide_tiny  F32: hidden 16, 2 heads of 8, 2 layers, attention_window [80, 40] (wider
                        than the 32-token blocks of the sparse layout), 200 positions, S = 150
Task heads (checkpoints with the "longformer." prefix, no pooler):
  longformer_tokcls_tiny  LongformerForTokenClassification, F32: hidden 18, 3 heads of 6, windows
                          [4, 8], 3 labels; logits [2, 9, 3]
  longformer_seqcls_tiny  LongformerForSequenceClassification, F16 storage: hidden 21, 3 heads of
                          7, windows [8, 4], 2 labels; logits [2, 2]
  longformer_qa_tiny      LongformerForQuestionAnswering, F32: hidden 24, 4 heads of 6, windows
                          [4, 8], sep_token_id 2; S = 21, rows "<s> question </s></s> context
                          </s>" with questions of 4 and 6 tokens, row 1 right-padded;
                          start_logits, end_logits [2, 21]
  logits, and logits_local without global_attention_mask (for sequence classification HF then
  makes the first token global, for question answering the question: every token before the
  row's first sep)

    /usr/bin/python3 tools/goldens/make_longformer_golden.py [--data DIR] [--golden DIR]
"""
import argparse
import json
import os

import numpy as np
import torch
from transformers import (LongformerConfig, LongformerForQuestionAnswering,
                          LongformerForSequenceClassification, LongformerForTokenClassification,
                          LongformerModel)

CASES = {
    "longformer_tiny": dict(
        config=dict(vocab_size=50, hidden_size=30, num_hidden_layers=3, num_attention_heads=5,
                    intermediate_size=37, attention_window=[4, 8, 4], max_position_embeddings=64,
                    type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                    sep_token_id=2),
        dtype=torch.float32, seq=19, row1_len=13, seed=15,
        globals=[[0, 5, 17], [0, 9, 15]]),
    "longformer_tiny_bf16": dict(
        config=dict(vocab_size=40, hidden_size=40, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=45, attention_window=6, max_position_embeddings=64,
                    type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                    sep_token_id=2),
        dtype=torch.bfloat16, seq=17, row1_len=10, seed=16,
        globals=[[0, 12], [3, 14]]),
    "longformer_wide_tiny": dict(
        config=dict(vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=20, attention_window=[80, 40], max_position_embeddings=200,
                    type_vocab_size=1, pad_token_id=1),
        dtype=torch.float32, seq=150, row1_len=97, seed=19,
        globals=[[0, 33, 34, 120], [5, 64]]),
    "longformer_tokcls_tiny": dict(
        cls=LongformerForTokenClassification,
        config=dict(vocab_size=30, hidden_size=18, num_hidden_layers=2, num_attention_heads=3,
                    intermediate_size=23, attention_window=[4, 8], max_position_embeddings=40,
                    type_vocab_size=1, pad_token_id=1, num_labels=3),
        dtype=torch.float32, seq=9, row1_len=6, seed=17, globals=[[2], [0, 4]]),
    "longformer_seqcls_tiny": dict(
        cls=LongformerForSequenceClassification,
        config=dict(vocab_size=30, hidden_size=21, num_hidden_layers=2, num_attention_heads=3,
                    intermediate_size=23, attention_window=[8, 4], max_position_embeddings=40,
                    type_vocab_size=1, pad_token_id=1, num_labels=2),
        dtype=torch.float16, seq=11, row1_len=7, seed=18, globals=[[0, 6], [0]]),
    "longformer_qa_tiny": dict(
        cls=LongformerForQuestionAnswering,
        config=dict(vocab_size=30, hidden_size=24, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=29, attention_window=[4, 8], max_position_embeddings=40,
                    type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                    sep_token_id=2),
        dtype=torch.float32, seq=21, row1_len=16, seed=20, globals=[[0, 3, 11], [0, 1]],
        questions=[4, 6]),
}


def randomize(model, gen):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm.weight" in name:
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif "embeddings" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(3 / p.shape[1] ** 0.5 * torch.randn(p.shape, generator=gen))


def inputs(case, vocab, pad, gen):
    b, s, n1 = 2, case["seq"], case["row1_len"]
    ids = torch.randint(3, vocab, (b, s), generator=gen)
    ids[:, 0] = 0  # <s>
    ids[0, 3] = pad  # a real token equal to the padding id: position pad_idx, as HF computes it
    ids[1, n1:] = pad
    sep = 2
    for r, q in enumerate(case.get("questions", [])):
        # <s> question </s></s> context </s>: exactly the 3 seps HF's QA default asserts.
        ids[r, 3] = 7  # row 0's pad-valued token would fall in the question
        n = s if r == 0 else n1
        ids[r, q + 1:q + 3] = sep
        ids[r, n - 1] = sep
    mask = torch.ones(b, s, dtype=torch.long)
    mask[1, n1:] = 0
    glob = torch.zeros(b, s, dtype=torch.long)
    for r, pos in enumerate(case["globals"]):
        glob[r, pos] = 1
    return ids, mask, glob


def save(path, array):
    np.save(path, np.ascontiguousarray(array))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="tests/models/data")
    ap.add_argument("--golden", default="tests/models/golden")
    a = ap.parse_args()
    for name, case in CASES.items():
        gen = torch.Generator().manual_seed(case["seed"])
        config = LongformerConfig(**case["config"])
        cls = case.get("cls", LongformerModel)
        model = cls(config).eval()
        randomize(model, gen)
        if case["dtype"] != torch.float32:
            model = model.to(case["dtype"]).to(torch.float32)  # the stored values, run in f32
        d = os.path.join(a.data, name)
        os.makedirs(d, exist_ok=True)
        stored = cls(LongformerConfig(**case["config"])).eval()
        stored.load_state_dict(model.state_dict())
        stored.to(case["dtype"]).save_pretrained(d, safe_serialization=True)
        ids, mask, glob = inputs(case, config.vocab_size, config.pad_token_id, gen)
        g = os.path.join(a.golden, name)
        os.makedirs(g, exist_ok=True)
        files = {}
        with torch.no_grad():
            out = model(input_ids=ids, attention_mask=mask, global_attention_mask=glob)
            loc = model(input_ids=ids, attention_mask=mask)
        if cls is LongformerForQuestionAnswering:
            outs = [("start_logits", out.start_logits), ("end_logits", out.end_logits),
                    ("start_logits_local", loc.start_logits),
                    ("end_logits_local", loc.end_logits)]
            moved = float((out.start_logits - loc.start_logits).abs().max())
        elif cls is LongformerModel:
            outs = [("last_hidden_state", out.last_hidden_state),
                    ("pooler_output", out.pooler_output),
                    ("last_hidden_state_local", loc.last_hidden_state),
                    ("pooler_output_local", loc.pooler_output)]
            moved = float((out.last_hidden_state - loc.last_hidden_state).abs().max())
        else:  # without global_attention_mask: HF's default (sequence classification: <s>)
            outs = [("logits", out.logits), ("logits_local", loc.logits)]
            moved = float((out.logits - loc.logits).abs().max())
        if name == "longformer_tiny":
            # Left padding: the pooler reads a padding position, whose attention output HF zeroes.
            lids, lmask, lglob = ids.clone(), mask.clone(), glob.clone()
            lids[0, :3] = config.pad_token_id
            lmask[0, :3] = 0
            lglob[0, 1] = 1  # a global flag on padding: still padding
            with torch.no_grad():
                left = model(input_ids=lids, attention_mask=lmask, global_attention_mask=lglob)
            outs += [("input_ids_leftpad", lids), ("attention_mask_leftpad", lmask),
                     ("global_attention_mask_leftpad", lglob),
                     ("last_hidden_state_leftpad", left.last_hidden_state),
                     ("pooler_output_leftpad", left.pooler_output)]
        for key, value in [("input_ids", ids), ("attention_mask", mask),
                           ("global_attention_mask", glob)] + outs:
            v = value.numpy()
            save(os.path.join(g, key + ".npy"), v)
            files[key] = {"dtype": str(v.dtype), "shape": list(v.shape)}
        # How much the global tokens matter: the check is meaningless if they do not.
        assert moved > 0.05, (name, moved)
        with open(os.path.join(g, "golden.json"), "w") as f:
            json.dump({"model": name, "transformers": "4.38.2", "files": files,
                       "global_vs_local_max_diff": moved}, f, indent=1)
            f.write("\n")
        print(name, "ok; global tokens move outputs by", moved)


if __name__ == "__main__":
    main()
