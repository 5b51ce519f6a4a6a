#!/usr/bin/env python3
"""Seeded random BigBird checkpoints and Hugging Face's outputs for them (transformers 4.38.2,
eval mode), for tests/cli/test_bigbird.sh.

Checkpoints (tests/models/data/<name>/, BigBirdModel.save_pretrained(safe_serialization=True)):
  bigbird_tiny        F32, block_sparse, block_size 4, num_random_blocks 2: hidden 32, 4 heads of 8,
                      2 layers, intermediate 37, gelu_new, 1024 positions, pooler
  bigbird_tiny_r1     F32, block_sparse, block_size 4, num_random_blocks 1: hidden 20, 4 heads of 5
                      (an odd head dim), 2 layers, intermediate 29, gelu, 3 token types
  bigbird_tiny_r3     BF16 storage, block_sparse, block_size 3, num_random_blocks 3: hidden 24,
                      2 heads of 12, use_bias false (no Q/K/V biases), rescale_embeddings true, relu
  bigbird_full_tiny   F32, original_full: hidden 24, 3 heads of 8, 2 layers
  bigbird_mlm_tiny    BigBirdForMaskedLM, F32, block_sparse, block_size 4, 1 random block: hidden
                      16, 2 heads, decoder tied to the word embeddings
  bigbird_cls_tiny    BigBirdForSequenceClassification, F32, block_sparse, block_size 2, 2 random
                      blocks: hidden 16, 2 heads, 3 labels
Weights: matrices N(0, 2 / sqrt(fan_in)), tables N(0, 0.5), LayerNorm scales 1 + N(0, 0.1), biases
N(0, 0.1) (BF16: rounded to bfloat16, and the reference runs those rounded values in float32).

Goldens (tests/models/golden/bigbird/<case>/): input_ids, attention_mask, token_type_ids int64
[B, T]; last_hidden_state float32 [B, T, D]; pooler_output float32 [B, D]; logits (heads: [B, T,
vocab] or [B, labels]); case.json (model,
mode HF ran, T). Each case runs a fresh model (BigBirdModel.forward switches a model to
original_full for good when it falls back). Cases (row 1 is right-padded; some have a hole):
  sparse_r2       bigbird_tiny, T 50 (padded to 52 inside HF): block_sparse
  fallback        bigbird_tiny, T 36 = (5 + 2·2)·4: HF falls back to original_full
  sparse_r1_odd   bigbird_tiny_r1, T 41 (padded to 44): block_sparse, head dim 5
  sparse_r3_bf16  bigbird_tiny_r3, T 50 (padded to 51; threshold 33): block_sparse
  full            bigbird_full_tiny, T 20: original_full
  len1024         bigbird_tiny, T 1024, B 1: the "old plans" branch of HF's random blocks
  mlm             bigbird_mlm_tiny, T 30 (padded to 32): block_sparse, logits [2, 30, 99]
  cls             bigbird_cls_tiny, T 25 (padded to 26): block_sparse, logits [2, 3]
Checked as facts (the script fails otherwise): float32 outputs within 1e-4 of the same model in
float64 at unmasked positions; the attention type HF ended with is the one listed; and the
block-sparse cases give the same outputs (1e-5, every position) when HF's block-sparse attention
is replaced by the formulation vkformer runs (sparse_as_layout: one block layout shared by the
heads, eval mode's "random" blocks as appended copies of key block 0, padding as a -10000 key bias,
the output times the query mask), while original_full on the same inputs differs.

    /usr/bin/python3 tools/goldens/make_bigbird_golden.py
Development time only: the tests read the committed files.
"""
import json
import os
import sys

import numpy as np
import torch
import transformers
from transformers import (BigBirdConfig, BigBirdForMaskedLM, BigBirdForSequenceClassification,
                          BigBirdModel)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "models", "data")
GOLD = os.path.join(ROOT, "tests", "models", "golden", "bigbird")
SEED = 20261124
TOL = 1e-4

MODELS = {
    "bigbird_tiny": dict(hidden_size=32, num_attention_heads=4, intermediate_size=37,
                         hidden_act="gelu_new", max_position_embeddings=1024, block_size=4,
                         num_random_blocks=2, attention_type="block_sparse", dtype="F32"),
    "bigbird_tiny_r1": dict(hidden_size=20, num_attention_heads=4, intermediate_size=29,
                            hidden_act="gelu", max_position_embeddings=64, block_size=4,
                            num_random_blocks=1, type_vocab_size=3, attention_type="block_sparse",
                            dtype="F32"),
    "bigbird_tiny_r3": dict(hidden_size=24, num_attention_heads=2, intermediate_size=31,
                            hidden_act="relu", max_position_embeddings=64, block_size=3,
                            num_random_blocks=3, use_bias=False, rescale_embeddings=True,
                            attention_type="block_sparse", dtype="BF16"),
    "bigbird_full_tiny": dict(hidden_size=24, num_attention_heads=3, intermediate_size=33,
                              hidden_act="gelu_new", max_position_embeddings=64,
                              attention_type="original_full", dtype="F32"),
    "bigbird_mlm_tiny": dict(hidden_size=16, num_attention_heads=2, intermediate_size=23,
                             hidden_act="gelu_new", max_position_embeddings=64, block_size=4,
                             num_random_blocks=1, attention_type="block_sparse", dtype="F32",
                             cls=BigBirdForMaskedLM),
    "bigbird_cls_tiny": dict(hidden_size=16, num_attention_heads=2, intermediate_size=23,
                             hidden_act="gelu", max_position_embeddings=64, block_size=2,
                             num_random_blocks=2, attention_type="block_sparse", dtype="F32",
                             num_labels=3, cls=BigBirdForSequenceClassification),
}

# case: (model, T, batch, rows' valid lengths, a hole (row, position) masked inside, HF's mode)
CASES = {
    "sparse_r2": ("bigbird_tiny", 50, [50, 37], (0, 21), "block_sparse"),
    "fallback": ("bigbird_tiny", 36, [36, 29], None, "original_full"),
    "sparse_r1_odd": ("bigbird_tiny_r1", 41, [41, 30], (1, 9), "block_sparse"),
    "sparse_r3_bf16": ("bigbird_tiny_r3", 50, [50, 40], None, "block_sparse"),
    "full": ("bigbird_full_tiny", 20, [20, 13], (0, 5), "original_full"),
    "len1024": ("bigbird_tiny", 1024, [1001], None, "block_sparse"),
    "mlm": ("bigbird_mlm_tiny", 30, [30, 22], None, "block_sparse"),
    "cls": ("bigbird_cls_tiny", 25, [25, 19], (0, 3), "block_sparse"),
}


def make_config(spec):
    spec = dict(spec)
    spec.pop("dtype")
    cls = spec.pop("cls", BigBirdModel)
    return BigBirdConfig(vocab_size=99, num_hidden_layers=2, pad_token_id=0,
                         hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                         architectures=[cls.__name__], **spec)


def randomize(model, gen, bf16):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("LayerNorm.weight"):
                v = 1 + 0.1 * torch.randn(p.shape, generator=gen)
            elif name.endswith("bias"):
                v = 0.1 * torch.randn(p.shape, generator=gen)
            elif "embeddings" in name:
                v = 0.5 * torch.randn(p.shape, generator=gen)
            else:
                v = 2.0 / p.shape[1] ** 0.5 * torch.randn(p.shape, generator=gen)
            if bf16:
                v = v.to(torch.bfloat16).to(torch.float32)
            p.copy_(v)


def model_class(name):
    return MODELS[name].get("cls", BigBirdModel)


def base(model):
    """The BigBirdModel inside a task-head model."""
    return getattr(model, "bert", model)


def build(name, gen):
    spec = MODELS[name]
    model = model_class(name)(make_config(spec)).eval()
    randomize(model, gen, spec["dtype"] == "BF16")
    return model


def fresh(name, state, dtype=torch.float32):
    """A new model with the saved weights: HF's fallback to original_full sticks to a model."""
    model = model_class(name)(make_config(MODELS[name])).eval()
    model.load_state_dict(state)
    return model.to(dtype)


def inputs(gen, vocab, types, T, lens, hole):
    B = len(lens)
    ids = torch.randint(1, vocab, (B, T), generator=gen)
    mask = torch.zeros(B, T, dtype=torch.long)
    for b, n in enumerate(lens):
        mask[b, :n] = 1
        ids[b, n:] = 0
    if hole:
        mask[hole[0], hole[1]] = 0
    tt = torch.randint(0, types, (B, T), generator=gen) * mask
    return ids, mask, tt


def bigbird_layout(nb, r):
    """Key blocks per query block, as models/arch/bigbird_layout.c lists them. In eval mode HF's
    random blocks are all key block 0 (_bigbird_block_rand_mask* return zeros), so block 0 counts
    1 + r times in every middle row's softmax: blocks nb .. nb + r - 1 are copies of it."""
    rows = []
    extra = [nb + j for j in range(r)]
    for i in range(nb):
        if i in (0, nb - 1):
            rows.append(list(range(nb)))  # global rows: every key
        elif i == 1:
            rows.append([0, 1, 2, nb - 1] + extra)
        elif i == nb - 2:
            rows.append([0, nb - 3, nb - 2, nb - 1] + extra)
        else:
            rows.append([0, i - 1, i, i + 1, nb - 1] + extra)
    return rows


def sparse_as_layout(self, q, k, v, band_mask, from_mask, to_mask, from_blocked, to_blocked,
                     heads, r, dh, bs, to_bs, bsz, n, *rest, **kw):
    """Stands in for BigBirdBlockSparseAttention.bigbird_block_sparse_attention."""
    nb = n // bs
    rows = bigbird_layout(nb, r)
    k = torch.cat([k] + [k[:, :, :bs]] * r, 2)
    v = torch.cat([v] + [v[:, :, :bs]] * r, 2)
    m = to_mask.reshape(bsz, n)
    bias = (torch.cat([m] + [m[:, :bs]] * r, 1) - 1) * 10000.0
    out = torch.zeros_like(q)
    for i, cols in enumerate(rows):
        keys = torch.cat([torch.arange(c * bs, c * bs + bs) for c in cols])
        s = q[:, :, i * bs:(i + 1) * bs] @ k[:, :, keys].transpose(-1, -2) / dh ** 0.5
        s = s + bias[:, None, None, keys]
        out[:, :, i * bs:(i + 1) * bs] = s.softmax(-1) @ v[:, :, keys]
    return (out * from_mask).transpose(1, 2), None


def check_layout(case, name, state, ids, mask, tt, golden):
    from transformers.models.big_bird import modeling_big_bird as mb
    cls = mb.BigBirdBlockSparseAttention
    orig = cls.bigbird_block_sparse_attention
    cls.bigbird_block_sparse_attention = sparse_as_layout
    try:
        with torch.no_grad():
            h = base(fresh(name, state))(input_ids=ids, attention_mask=mask,
                                         token_type_ids=tt).last_hidden_state
    finally:
        cls.bigbird_block_sparse_attention = orig
    model = base(fresh(name, state))
    model.set_attention_type("original_full")
    with torch.no_grad():
        f = model(input_ids=ids, attention_mask=mask, token_type_ids=tt).last_hidden_state
    err = (h - golden).abs().max().item()
    far = ((f - golden).abs() * mask[..., None]).max().item()
    print("%-15s layout formulation vs HF %.2e (original_full differs by %.2f)" % (case, err, far))
    assert err < 1e-5 and far > 1e-2, case


def main():
    print("transformers", transformers.__version__, "torch", torch.__version__)
    gen = torch.Generator().manual_seed(SEED)
    states = {}
    for name, spec in MODELS.items():
        model = build(name, gen)
        folder = os.path.join(DATA, name)
        os.makedirs(folder, exist_ok=True)
        save = model.to(torch.bfloat16) if spec["dtype"] == "BF16" else model
        save.save_pretrained(folder, safe_serialization=True)
        states[name] = {k: v.float() for k, v in model.state_dict().items()}
    for case, (name, T, lens, hole, mode) in CASES.items():
        cfg = make_config(MODELS[name])
        ids, mask, tt = inputs(gen, cfg.vocab_size, cfg.type_vocab_size, T, lens, hole)
        outs, logits = {}, {}
        for dt in (torch.float32, torch.float64):
            model = fresh(name, states[name], dt)
            with torch.no_grad():
                o = base(model)(input_ids=ids, attention_mask=mask, token_type_ids=tt)
                if model is not base(model):  # the head on a fresh model: same fallback rule
                    logits[dt] = fresh(name, states[name], dt)(
                        input_ids=ids, attention_mask=mask, token_type_ids=tt).logits
            assert base(model).attention_type == mode, (case, base(model).attention_type)
            outs[dt] = o
        if logits:
            lerr = (logits[torch.float32].double() - logits[torch.float64]).abs().max().item()
            print("%-15s logits f32 vs f64 %.2e" % (case, lerr))
            assert lerr < TOL, case
        h32 = outs[torch.float32].last_hidden_state
        h64 = outs[torch.float64].last_hidden_state
        err = ((h32.double() - h64).abs() * mask[..., None]).max().item()
        perr = (outs[torch.float32].pooler_output.double() - outs[torch.float64].pooler_output)
        print("%-15s %s T=%d: f32 vs f64 %.2e (pooler %.2e)" %
              (case, mode, T, err, perr.abs().max().item()))
        assert err < TOL and perr.abs().max().item() < TOL, case
        if mode == "block_sparse":
            check_layout(case, name, states[name], ids, mask, tt, h32)
        folder = os.path.join(GOLD, case)
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, "input_ids.npy"), ids.numpy().astype(np.int64))
        np.save(os.path.join(folder, "attention_mask.npy"), mask.numpy().astype(np.int64))
        np.save(os.path.join(folder, "token_type_ids.npy"), tt.numpy().astype(np.int64))
        np.save(os.path.join(folder, "last_hidden_state.npy"), h32.numpy().astype(np.float32))
        np.save(os.path.join(folder, "pooler_output.npy"),
                outs[torch.float32].pooler_output.numpy().astype(np.float32))
        if logits:
            np.save(os.path.join(folder, "logits.npy"),
                    logits[torch.float32].numpy().astype(np.float32))
        with open(os.path.join(folder, "case.json"), "w") as f:
            json.dump({"model": name, "mode": mode, "T": T, "lens": lens, "hole": hole}, f)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
