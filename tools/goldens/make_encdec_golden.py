#!/usr/bin/env python3
"""Seeded random encoder-decoder checkpoints and their reference outputs, for vkformer's
encoder-decoder tests (BART, Marian, T5 v1, T5 v1.1 and D2L's Transformer).

Checkpoints (tests/models/data/<name>/, made by transformers 4.38.2's own classes and
save_pretrained(safe_serialization=True), except d2l_tiny written by tools/goldens/seeds_transformer.py):
  bart_tiny    BartForConditionalGeneration, F32: d_model 27, 3 heads of 9, ffn 37 (enc) / 41
               (dec), 2 + 2 layers, learned positions (offset 2, 64 positions), layernorm_embedding,
               scale_embedding false, gelu; generation_config.json with BART-CNN-like defaults
  marian_tiny  MarianMTModel, F16: d_model 35, 5 heads of 7, ffn 43, 2 + 2 layers, sinusoidal
               positions (not stored), scale_embedding true, swish, random final_logits_bias
  t5_tiny      T5ForConditionalGeneration v1, F32: d_model 26, 3 heads of d_kv 7 (inner 21), d_ff
               37, relu, 2 encoder / 3 decoder layers, 8 buckets, max distance 20, tied head
               (rescaled by d_model**-0.5)
  t5v11_tiny   T5ForConditionalGeneration v1.1 layout, BF16: d_model 28, 3 heads of 9 (inner 27),
               d_ff 33, gated-gelu, untied head, 2 encoder / 3 decoder layers
  d2l_tiny     D2L's Transformer, F32: num_hiddens 30, 3 heads (head dim 10), ffn 37, 2 + 2
               blocks, source vocab = --vocab-size, target vocab = --d2l-tgt-vocab-size
Weights are N(0, 3 / sqrt(fan_in)) (T5 v1.1: 1.5) for matrices, N(0, 0.5) (T5: N(0, 2.5)) for
token tables, 1 + N(0, 0.1) for norm scales and N(0, 0.1) for biases, and the head's eos row is
moved so that eos wins at some steps (place_eos): logits are well separated, so greedy and
beam choices do not hinge on rounding. Seeds are searched until every check holds:
  - float32 outputs within 1e-4 of the same model run in float64 (the goldens are the math, not
    float32 luck);
  - every greedy step's top-1 beats the top-2 by > 1e-2; each beam search's best finished
    hypothesis beats the runner-up by > 1e-3 (as a sum of log-probs), and its results do not
    change when noise of 1e-3 is added to every step's scores (three noise seeds);
  - variety: each greedy run makes >= 4 tokens with >= 3 distinct ids, the two sources' greedy
    outputs differ, and some beam search with length_penalty 1 or 2 ends on eos before the limit.
Checked as facts (a failure is a bug, reported as such for d2l_tiny): padding changes no real
position (each row alone), generate()'s scores equal a teacher-forced forward's logits, beam
results of the batch equal those of each source alone, sequences_scores follow the formula in
check_beam_score(), and seeds_transformer agrees with D2L's code (check_seeds_transformer).

Goldens (tests/models/golden/<name>/; golden.json in each folder names every file with its dtype
and shape, the sources, the special ids and every generation setting). S = 11, B = 2, V = vocab:
  input_ids, attention_mask         int64 [2, S]  source 0 of length 11, source 1 of length 7
                                    right-padded with pad_token_id (d2l: valid_lens int64 [2])
  encoder_last_hidden_state         float32 [2, S, d_model] (padded positions included)
  decoder_input_ids                 int64 [2, 6]  decoder_start_token_id + 5 ids
  logits                            float32 [2, 6, V]  forward(input_ids, attention_mask,
                                    decoder_input_ids), no decoder mask (causal only)
  greedy_<i>_sequences              int64 [1+N]  greedy generate() of source i alone (no padding,
                                    use_cache, max_new_tokens 16, stops after eos): decoder_start
                                    then the N new ids; greedy_<i>_ids int64 [N] the new ids only
  greedy_<i>_logits                 float32 [N, V]  raw logits of each step (teacher-forced forward
                                    over the sequence; equal to generate()'s scores)
  <setting>_sequences, _scores      int64 [2, L], float32 [2]  beam search of the batch
  <setting>_<i>_sequences, _scores  int64 [1, L_i], float32 [1]  of source i alone
  settings: beam_lp1 (num_beams 4, length_penalty 1, early_stopping false), beam_lp2_early
  (length_penalty 2, early_stopping true), beam_ngram2_never (no_repeat_ngram_size 2,
  early_stopping "never"), all max_new_tokens 16; gencfg (bart_tiny only): generate() with no
  settings, so generation_config.json's apply (num_beams 4, length_penalty 2, no_repeat_ngram 3,
  early_stopping true, forced_bos 0, forced_eos 2, min_length 5, max_length 18).
  Beam and greedy settings name only what differs from GenerationConfig's defaults plus the
  special ids; the checkpoints' own generation_config.json is not used (except by gencfg).

CLI:
    /usr/bin/python3 tools/goldens/make_encdec_golden.py [--only NAME[,NAME...]] [--vocab-size V]
        [--special NAME.KEY=VALUE ...] [--d2l-tgt-vocab-size V] [--data DIR] [--golden DIR]
    /usr/bin/python3 tools/goldens/make_encdec_golden.py --full DIR
  --only          checkpoints to (re)write; default all five
  --vocab-size    vocabulary of every tiny model (default 512; >= 64)
  --special       override a special id, e.g. --special bart_tiny.eos_token_id=2
                  (keys: bos_token_id, pad_token_id, eos_token_id, decoder_start_token_id,
                  forced_bos_token_id, forced_eos_token_id; Marian's pad/start default to V-1)
  --full DIR      instead: a bart-base-sized BartForConditionalGeneration (vocab 50265) and a
                  t5-small-sized T5ForConditionalGeneration with random weights (HF's default
                  init), F32, under DIR/bart-base and DIR/t5-small, each with golden_*.npy of one
                  source (benchmarks and parity checks; never committed)
Deterministic: the same arguments write the same files. Needs torch 1.13, transformers 4.38.2,
safetensors, numpy < 2. Development time only: the tests read the committed files.
"""
import argparse
import contextlib
import copy
import json
import math
import os
import sys

import numpy as np
import torch
import transformers
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_seeds_transformer  # noqa: E402
import seeds_transformer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMES = ["bart_tiny", "marian_tiny", "t5_tiny", "t5v11_tiny", "d2l_tiny"]
MAX_NEW = 16
SRC_LENS = (11, 7)  # the batch: row 0 full, row 1 right-padded
DEC_LEN = 6  # decoder_input_ids of the forward golden: decoder_start + 5 ids
BEAMS = 4
# Matrices are N(0, gain / sqrt(fan_in)): large enough that the layers, not the token's own
# embedding on the residual path, decide the next token (at 1.2 every decoder falls into repeating
# one token). T5 v1.1 gets less: at 3.0 its float32 logits were off float64 by up to 1e-2 (its
# unscaled attention and gated FFN amplify rounding), at 1.5 by < 1e-4.
GAIN_DEFAULT = 3.0
GAIN = {"t5v11_tiny": 1.5}
EOS_MARGIN = 1.5  # mean eos logit this far below the mean best logit: eos wins at some steps
MIN_GREEDY = 4
MIN_DISTINCT = 3
COND_TOL = 1e-4  # float32 goldens vs the same model in float64
# Where the seed search starts: the first attempt that passed every check in an earlier run with
# the default arguments (saves minutes; with other arguments the search goes on from there).
FIRST_ATTEMPT = {"bart_tiny": 107, "marian_tiny": 252, "t5_tiny": 59, "t5v11_tiny": 20,
                 "d2l_tiny": 372}


def place_eos(model, eos, input_ids, mask, dec):
    """Random logits almost never pick eos, so beams would all end at the length limit. Adds to
    the head's eos row the mean direction m of the decoder's final hidden states (as the head
    sees them), scaled so the mean eos logit is EOS_MARGIN below the mean best other logit; it
    then varies with the state and wins at some steps. Twice, since a tied row also moves the
    hidden states."""
    head = model.get_output_embeddings()
    for _ in range(2):
        seen = []
        hook = head.register_forward_hook(lambda mod, inp, out: seen.append(inp[0].detach()))
        with torch.no_grad():
            logits = model(input_ids=input_ids, attention_mask=mask, decoder_input_ids=dec).logits
        hook.remove()
        H = seen[0].reshape(-1, seen[0].shape[-1])
        logits = logits.reshape(-1, logits.shape[-1])
        other = logits.clone()
        other[:, eos] = -float("inf")
        m = H.mean(0)
        target = other.max(-1).values.mean() - EOS_MARGIN
        c = (target - logits[:, eos].mean()) / (m @ m)
        with torch.no_grad():
            head.weight[eos] += c * m


SPECIAL_KEYS = ("bos_token_id", "pad_token_id", "eos_token_id", "decoder_start_token_id",
                "forced_bos_token_id", "forced_eos_token_id")


def special_ids(name, vocab, overrides):
    ids = {
        "bart_tiny": dict(bos_token_id=0, pad_token_id=1, eos_token_id=2, decoder_start_token_id=2,
                          forced_eos_token_id=2),
        "marian_tiny": dict(pad_token_id=vocab - 1, eos_token_id=0,
                            decoder_start_token_id=vocab - 1, forced_eos_token_id=0),
        "t5_tiny": dict(pad_token_id=0, eos_token_id=1, decoder_start_token_id=0),
        "t5v11_tiny": dict(pad_token_id=0, eos_token_id=1, decoder_start_token_id=0),
        "d2l_tiny": dict(pad_token_id=1, bos_token_id=2, eos_token_id=3, decoder_start_token_id=2),
    }[name]
    ids.update(overrides.get(name, {}))
    return ids


def hf_model(name, vocab, ids):
    """(config, class, storage dtype) of a tiny HF checkpoint."""
    if name == "bart_tiny":
        cfg = transformers.BartConfig(
            vocab_size=vocab, d_model=27, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=3, decoder_attention_heads=3, encoder_ffn_dim=37,
            decoder_ffn_dim=41, max_position_embeddings=64, activation_function="gelu",
            scale_embedding=False, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
            **ids)
        return cfg, transformers.BartForConditionalGeneration, torch.float32
    if name == "marian_tiny":
        cfg = transformers.MarianConfig(
            vocab_size=vocab, decoder_vocab_size=vocab, d_model=35, encoder_layers=2,
            decoder_layers=2, encoder_attention_heads=5, decoder_attention_heads=5,
            encoder_ffn_dim=43, decoder_ffn_dim=43, max_position_embeddings=64,
            activation_function="swish", scale_embedding=True,
            share_encoder_decoder_embeddings=True,
            dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, **ids)
        return cfg, transformers.MarianMTModel, torch.float16
    t5 = dict(vocab_size=vocab, num_layers=2, num_decoder_layers=3, num_heads=3,
              relative_attention_num_buckets=8, relative_attention_max_distance=20,
              dropout_rate=0.0, layer_norm_epsilon=1e-6, **ids)
    if name == "t5_tiny":
        cfg = transformers.T5Config(d_model=26, d_kv=7, d_ff=37, feed_forward_proj="relu",
                                    tie_word_embeddings=True, **t5)
        return cfg, transformers.T5ForConditionalGeneration, torch.float32
    if name == "t5v11_tiny":
        cfg = transformers.T5Config(d_model=28, d_kv=9, d_ff=33, feed_forward_proj="gated-gelu",
                                    tie_word_embeddings=False, **t5)
        return cfg, transformers.T5ForConditionalGeneration, torch.bfloat16
    raise ValueError(name)


def place_eos_d2l(model, eos, src, valid, seed):
    """As place_eos, through the bias of D2L's `dense` (it has one)."""
    rng = np.random.default_rng(seed + 1)
    V = model.config["tgt_vocab_size"]
    probe = torch.tensor(np.concatenate([np.full((2, 1), model.config["decoder_start_token_id"]),
                                         rng.integers(4, V, (2, MAX_NEW))], 1))
    with torch.no_grad():
        logits = model.decode_full(probe, model.encode(src, valid), valid).reshape(-1, V)
        other = logits.clone()
        other[:, eos] = -float("inf")
        target = other.max(-1).values.mean() - EOS_MARGIN
        model.decoder.dense.bias[eos] += target - logits[:, eos].mean()


def scale_weights(model, name, gen):
    """Replaces HF's std-0.02 init by well-conditioned values (see the module docstring)."""
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "embed_positions" in pname and name == "marian_tiny":
                continue  # sinusoidal, computed by the model, never stored
            shape = tuple(p.shape)
            z = torch.randn(shape, generator=gen)
            if "norm" in pname and pname.endswith("weight"):
                p.copy_(1.0 + 0.1 * z)
            elif pname.endswith("bias") and len(shape) == 1:
                p.copy_(0.1 * z)
            elif pname.endswith("relative_attention_bias.weight"):
                p.copy_(z)
            elif "shared" in pname or "embed_tokens" in pname or "embed_positions" in pname:
                # Logits of std ~2.5: separated, not so peaked that every beam is the greedy path.
                p.copy_(z * (2.5 if name.startswith("t5") else 0.5))
            elif pname.endswith("lm_head.weight"):
                p.copy_(z * 0.5)  # untied head (T5 v1.1)
            elif len(shape) == 2:
                p.copy_(z * (GAIN.get(name, GAIN_DEFAULT) / math.sqrt(shape[1])))
            else:
                raise ValueError("unexpected parameter %s %s" % (pname, shape))
        if hasattr(model, "final_logits_bias") and name == "marian_tiny":
            model.final_logits_bias.copy_(torch.randn(model.final_logits_bias.shape, generator=gen))


def make_sources(name, vocab, ids, seed):
    """Two sources (lengths SRC_LENS) in the model's format, right-padded, plus decoder ids."""
    rng = np.random.default_rng(seed)
    special = {v for k, v in ids.items() if k.endswith("token_id") and v is not None}
    pool = np.array([i for i in range(3, vocab - 1) if i not in special], np.int64)
    rows = []
    for n in SRC_LENS:
        body = list(rng.choice(pool, n - 1 - (1 if name == "bart_tiny" else 0)))
        row = ([ids["bos_token_id"]] if name == "bart_tiny" else []) + body + [ids["eos_token_id"]]
        rows.append([int(x) for x in row])
    S = max(SRC_LENS)
    input_ids = np.full((2, S), ids["pad_token_id"], np.int64)
    mask = np.zeros((2, S), np.int64)
    for r, row in enumerate(rows):
        input_ids[r, :len(row)] = row
        mask[r, :len(row)] = 1
    dec = np.zeros((2, DEC_LEN), np.int64)
    dec[:, 0] = ids["decoder_start_token_id"]
    dec[:, 1:] = rng.choice(pool, (2, DEC_LEN - 1))
    return rows, input_ids, mask, dec


class Noise(LogitsProcessor):
    """Adds uniform noise in [-amp, amp] to every score: beam results must not depend on it."""

    def __init__(self, seed, amp):
        self.gen = torch.Generator().manual_seed(seed)
        self.amp = amp

    def __call__(self, input_ids, scores):
        return scores + (torch.rand(scores.shape, generator=self.gen) * 2 - 1) * self.amp


def gen_config(ids, **settings):
    base = dict(decoder_start_token_id=ids["decoder_start_token_id"],
                eos_token_id=ids["eos_token_id"], pad_token_id=ids["pad_token_id"],
                bos_token_id=ids.get("bos_token_id"), do_sample=False, use_cache=True)
    base.update(settings)
    return GenerationConfig(**base)


BEAM_SETTINGS = [
    ("beam_lp1", dict(num_beams=BEAMS, length_penalty=1.0, early_stopping=False,
                      max_new_tokens=MAX_NEW)),
    ("beam_lp2_early", dict(num_beams=BEAMS, length_penalty=2.0, early_stopping=True,
                            max_new_tokens=MAX_NEW)),
    ("beam_ngram2_never", dict(num_beams=BEAMS, length_penalty=1.0, no_repeat_ngram_size=2,
                               early_stopping="never", max_new_tokens=MAX_NEW)),
]

# BART-CNN-like defaults, stored in bart_tiny's generation_config.json (the "gencfg" golden runs
# generate() with no settings so they come from the file).
# forced_bos/eos_token_id come from the special ids (0 and 2 by default).
BART_GENCFG = dict(num_beams=4, length_penalty=2.0, no_repeat_ngram_size=3, early_stopping=True,
                   min_length=5, max_length=18)


@contextlib.contextmanager
def float64_default():
    """4.38's BART/Marian causal mask fills torch.finfo(model dtype).min into a default-dtype
    tensor, which overflows for a float64 model unless float64 is the default."""
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(torch.float32)


def check_greedy_margins(logits, what):
    top = torch.topk(torch.as_tensor(logits), 2, dim=-1).values
    gap = (top[..., 0] - top[..., 1]).min().item()
    assert gap > 1e-2, "%s: greedy top-1 vs top-2 gap %g" % (what, gap)
    return gap


def run_beam(model, inputs, gc, what, processors=None):
    with torch.no_grad():
        return model.generate(**inputs, generation_config=gc, output_scores=True,
                              return_dict_in_generate=True,
                              logits_processor=processors or LogitsProcessorList())


def check_beam(model, inputs, gc, out, what):
    """Finished hypotheses separated by > 1e-3, and results stable under 1e-3 noise."""
    B = inputs["input_ids"].shape[0]
    gc_all = GenerationConfig(**dict(gc.to_dict(), num_return_sequences=gc.num_beams))
    allh = run_beam(model, inputs, gc_all, what)
    s = allh.sequences_scores.reshape(B, gc.num_beams)
    # Compared as sums of log-probs (scores times length^length_penalty), what rounding perturbs.
    s = s * (allh.sequences.shape[1] - 1) ** gc.length_penalty
    for b in range(B):
        gap = (s[b, 0] - s[b, 1]).item()
        assert gap > 1e-3, "%s: best beam hypotheses %s too close" % (what, s[b].tolist())
        assert abs(allh.sequences_scores[b * gc.num_beams].item() -
                   out.sequences_scores[b].item()) < 1e-5, what
    for seed in range(3):
        noisy = run_beam(model, inputs, gc, what, LogitsProcessorList([Noise(seed, 1e-3)]))
        assert torch.equal(noisy.sequences, out.sequences), "%s: noise changes the beams" % what
    return (s[:, 0] - s[:, 1]).min().item()


def check_beam_score(model, row, out, gc, what):
    """sequences_scores = sum over the new tokens (eos included) of log_softmax(raw logits) at the
    chosen id, / (number of new tokens, eos included) ** length_penalty. Processors that only set
    other ids to -inf (no_repeat_ngram, min_length) leave it so; forced tokens would count 0."""
    if gc.forced_bos_token_id is not None or gc.forced_eos_token_id is not None:
        return
    seq = out.sequences[0]
    with torch.no_grad():
        lg = model(input_ids=torch.tensor([row]), decoder_input_ids=seq[None, :-1]).logits[0]
    lsm = torch.log_softmax(lg.double(), -1)
    total = lsm[torch.arange(len(seq) - 1), seq[1:]].sum().item()
    want = total / (len(seq) - 1) ** gc.length_penalty
    got = out.sequences_scores[0].item()
    assert abs(want - got) < 1e-4, "%s: score %g, formula %g" % (what, got, want)


def save(folder, name, array):
    np.save(os.path.join(folder, name + ".npy"), array)


def trim(seq, eos):
    """A generated row up to its first eos (the first token is decoder_start; pad follows)."""
    seq = list(seq)
    return seq[:seq.index(eos, 1) + 1] if eos in seq[1:] else seq


def write_hf_goldens(name, model, ids, folder, rows, input_ids, mask, dec, vocab):
    """Files (all npy, little-endian; B = 2, S = max(SRC_LENS) = 11, V = vocab):
      input_ids [B, S] int64, attention_mask [B, S] int64      the batch (right-padded)
      encoder_last_hidden_state [B, S, d_model] f32            model(...).encoder_last_hidden_state
      decoder_input_ids [B, DEC_LEN] int64, logits [B, DEC_LEN, V] f32   forward with both
      greedy_<i>_sequences [1 + N] int64   generate() of source i alone (no padding), with
                                           decoder_start first; greedy_<i>_ids [N] without it
      greedy_<i>_logits [N, V] f32         raw logits of each generated step (teacher-forced)
      <setting>_sequences [B, L] int64, <setting>_scores [B] f32       beam, the batch
      <setting>_<i>_sequences [1, L_i] int64, <setting>_<i>_scores [1] f32   source i alone
    """
    X = torch.tensor(input_ids)
    M = torch.tensor(mask)
    D = torch.tensor(dec)
    meta = {"model": "tests/models/data/" + name, "vocab_size": vocab, "special_ids": ids,
            "sources": rows, "files": {}, "greedy": [], "beam": []}
    files = meta["files"]
    with torch.no_grad():
        out = model(input_ids=X, attention_mask=M, decoder_input_ids=D)
    # The goldens must be what the math gives, not float32 luck: a float64 run agrees within
    # COND_TOL, else the weights amplify rounding and the seed is rejected.
    m64 = copy.deepcopy(model).double()
    with torch.no_grad(), float64_default():
        out64 = m64(input_ids=X, attention_mask=M, decoder_input_ids=D)
    for a, b64, what in [
            (out.encoder_last_hidden_state, out64.encoder_last_hidden_state, "encoder"),
            (out.logits, out64.logits, "logits")]:
        err = (a.double() - b64).abs().max().item()
        assert err < COND_TOL, "%s: float32 %s off float64 by %g" % (name, what, err)
    save(folder, "input_ids", input_ids)
    save(folder, "attention_mask", mask)
    save(folder, "decoder_input_ids", dec)
    save(folder, "encoder_last_hidden_state", out.encoder_last_hidden_state.numpy())
    save(folder, "logits", out.logits.numpy())
    files.update({
        "input_ids": "int64 [2, S] sources, right-padded with pad_token_id",
        "attention_mask": "int64 [2, S] 1 for real tokens",
        "encoder_last_hidden_state": "float32 [2, S, d_model] encoder output, padded rows included",
        "decoder_input_ids": "int64 [2, T] decoder_start_token_id + T-1 ids (no decoder mask)",
        "logits": "float32 [2, T, V] model(input_ids, attention_mask, decoder_input_ids).logits",
    })
    # Each row alone (no padding) gives the same encoder output and logits.
    for r, row in enumerate(rows):
        with torch.no_grad():
            alone = model(input_ids=torch.tensor([row]), decoder_input_ids=D[r:r + 1])
        n = len(row)
        d = (alone.encoder_last_hidden_state[0] - out.encoder_last_hidden_state[r, :n]).abs().max()
        d2 = (alone.logits[0] - out.logits[r]).abs().max()
        assert d < 1e-4 and d2 < 5e-4, "%s row %d: padding changes outputs (%g, %g)" % (
            name, r, d, d2)

    greedy_gc = gen_config(ids, num_beams=1, max_new_tokens=MAX_NEW)
    gaps = []
    for r, row in enumerate(rows):
        inputs = dict(input_ids=torch.tensor([row]),
                      attention_mask=torch.ones(1, len(row), dtype=torch.long))
        with torch.no_grad():
            g = model.generate(**inputs, generation_config=greedy_gc, output_scores=True,
                               return_dict_in_generate=True)
            seq = g.sequences[0]
            tf = model(**inputs, decoder_input_ids=seq[None, :-1]).logits[0]
            with float64_default():
                tf64 = m64(**inputs, decoder_input_ids=seq[None, :-1]).logits[0]
        err = (tf.double() - tf64).abs().max().item()
        assert err < COND_TOL, "%s: greedy %d float32 off float64 by %g" % (name, r, err)
        scores = torch.stack(g.scores, 0)[:, 0]
        assert seq[0].item() == ids["decoder_start_token_id"], name
        assert (scores - tf).abs().max().item() < 1e-4, "%s: generate scores vs forward" % name
        gaps.append(check_greedy_margins(tf, "%s greedy %d" % (name, r)))
        assert torch.equal(tf.argmax(-1), seq[1:]), name
        save(folder, "greedy_%d_sequences" % r, seq.numpy().astype(np.int64))
        save(folder, "greedy_%d_ids" % r, seq[1:].numpy().astype(np.int64))
        save(folder, "greedy_%d_logits" % r, tf.numpy().astype(np.float32))
        meta["greedy"].append({"source": r, "new_tokens": len(seq) - 1,
                               "ended_with_eos": seq[-1].item() == ids["eos_token_id"]})
    # Goldens worth having: every greedy run makes a few tokens, and some beam ends on eos.
    assert min(x["new_tokens"] for x in meta["greedy"]) >= MIN_GREEDY, \
        "%s: greedy stops at once" % name
    # Random decoders fall into one-token loops that ignore the source: ask for some variety.
    for r in range(len(rows)):
        got = np.load(os.path.join(folder, "greedy_%d_ids.npy" % r))
        assert len(set(got.tolist())) >= MIN_DISTINCT, "%s: greedy %d is a loop" % (name, r)
    assert not np.array_equal(np.load(os.path.join(folder, "greedy_0_ids.npy")),
                              np.load(os.path.join(folder, "greedy_1_ids.npy"))), name
    # ... and some beam with length_penalty 1 or 2 ends early, so the penalty and early stopping
    # decide between finished hypotheses of different lengths.
    ends = []
    for _, s in BEAM_SETTINGS[:2]:
        o = run_beam(model, dict(input_ids=X, attention_mask=M), gen_config(ids, **s), name)
        ends += [len(trim(q.tolist(), ids["eos_token_id"]))
                 < 1 + MAX_NEW for q in o.sequences]
    assert any(ends), "%s: no lp1/lp2 beam search finishes before the limit" % name
    meta["greedy_settings"] = dict(num_beams=1, do_sample=False, max_new_tokens=MAX_NEW,
                                   use_cache=True, stop_at="eos_token_id")
    files.update({
        "greedy_<i>_sequences": "int64 [1+N] HF sequences of source i alone: decoder_start + N new",
        "greedy_<i>_ids": "int64 [N] the N new ids (stops after eos or MAX_NEW=16)",
        "greedy_<i>_logits": "float32 [N, V] raw logits of each step (= generate's scores)",
    })

    meta["generation_common"] = {k: v for k, v in gen_config(ids).to_diff_dict().items()
                                 if k != "transformers_version"}
    meta["generation_common"]["note"] = ("every greedy/beam setting adds these; everything else "
                                         "is GenerationConfig's default, not the checkpoint's")
    settings = list(BEAM_SETTINGS)
    if name == "bart_tiny":
        settings.append(("gencfg", None))
    bgaps = []
    for sname, s in settings:
        gc = model.generation_config if s is None else gen_config(ids, **s)
        entry = {"name": sname, "settings": s if s is not None else "generation_config.json",
                 "batch": {}, "alone": []}
        for label, inputs in [("batch", dict(input_ids=X, attention_mask=M))] + [
                (r, dict(input_ids=torch.tensor([row]))) for r, row in enumerate(rows)]:
            what = "%s %s %s" % (name, sname, label)
            o = run_beam(model, inputs, gc, what)
            bgaps.append(check_beam(model, inputs, gc, o, what))
            base = sname if label == "batch" else "%s_%d" % (sname, label)
            save(folder, base + "_sequences", o.sequences.numpy().astype(np.int64))
            save(folder, base + "_scores", o.sequences_scores.numpy().astype(np.float32))
            info = {"sequences": base + "_sequences", "scores": base + "_scores",
                    "lengths": [len(trim(q.tolist(), ids["eos_token_id"])) for q in o.sequences]}
            if label == "batch":
                entry["batch"] = info
                batch_out = o
            else:
                entry["alone"].append(info)
                check_beam_score(model, rows[label], o, gc, what)
                mine = trim(batch_out.sequences[label].tolist(), ids["eos_token_id"])
                assert mine == o.sequences[0].tolist(), "%s: batch vs alone" % what
                assert abs(batch_out.sequences_scores[label] - o.sequences_scores[0]) < 1e-4, what
        meta["beam"].append(entry)
    files.update({
        "<setting>_sequences": "int64 [2, L] beam search of the batch (decoder_start first, pad "
                               "after a row's end), num_return_sequences 1",
        "<setting>_scores": "float32 [2] sequences_scores (sum of log-probs / length^penalty)",
        "<setting>_<i>_sequences": "int64 [1, L_i] source i alone",
        "<setting>_<i>_scores": "float32 [1]",
    })
    with open(os.path.join(folder, "golden.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    return min(gaps), min(bgaps), meta


def make_hf(name, args, overrides):
    vocab = args.vocab_size
    ids = special_ids(name, vocab, overrides)
    cfg, cls, dtype = hf_model(name, vocab, ids)
    data = os.path.join(args.data, name)
    golden = os.path.join(args.golden, name)
    os.makedirs(golden, exist_ok=True)
    attempt = FIRST_ATTEMPT.get(name, 0)
    while True:  # re-seed until every check holds
        seed = 1000 * NAMES.index(name) + attempt
        torch.manual_seed(seed)
        model = cls(cfg).eval()
        scale_weights(model, name, torch.Generator().manual_seed(seed))
        if name == "bart_tiny":
            model.generation_config = GenerationConfig(
                bos_token_id=ids["bos_token_id"], eos_token_id=ids["eos_token_id"],
                pad_token_id=ids["pad_token_id"],
                decoder_start_token_id=ids["decoder_start_token_id"],
                forced_bos_token_id=ids.get("forced_bos_token_id", ids["bos_token_id"]),
                forced_eos_token_id=ids.get("forced_eos_token_id", ids["eos_token_id"]),
                **BART_GENCFG)
        else:  # only the special ids: no processor is on unless a caller asks for it
            model.generation_config = GenerationConfig(**{
                k: v for k, v in ids.items() if not k.startswith("forced_")})
        rows, input_ids, mask, dec = make_sources(name, vocab, ids, seed)
        rng = np.random.default_rng(seed + 1)
        probe = np.concatenate([dec[:, :1], rng.integers(3, vocab - 1, (2, MAX_NEW))], 1)
        place_eos(model, ids["eos_token_id"], torch.tensor(input_ids), torch.tensor(mask),
                  torch.tensor(probe))
        model.to(dtype).save_pretrained(data, safe_serialization=True)
        ref = cls.from_pretrained(data, torch_dtype=torch.float32).eval()
        try:
            g, b, meta = write_hf_goldens(name, ref, ids, golden, rows, input_ids, mask, dec, vocab)
            break
        except AssertionError as e:
            print("%s seed %d: %s; re-seeding" % (name, seed, e))
            attempt += 1
            if attempt > 1000:
                raise
    size = sum(os.path.getsize(os.path.join(data, f)) for f in os.listdir(data))
    print("%s: seed %d, %s, %d bytes, greedy gap >= %.3f, beam gap >= %.4f, greedy lengths %s" % (
        name, seed, dtype, size, g, b, [x["new_tokens"] for x in meta["greedy"]]))
    for e in meta["beam"]:
        print("   %-18s batch lengths %s" % (e["name"], e["batch"]["lengths"]))


def make_d2l(args, overrides):
    name = "d2l_tiny"
    ids = special_ids(name, args.vocab_size, overrides)
    conf = dict(src_vocab_size=args.vocab_size, tgt_vocab_size=args.d2l_tgt_vocab_size,
                num_hiddens=30, ffn_num_hiddens=37, num_heads=3, num_blks=2, use_bias=False,
                max_len=1000, layer_norm_eps=1e-5, **ids)
    data = os.path.join(args.data, name)
    golden = os.path.join(args.golden, name)
    os.makedirs(golden, exist_ok=True)
    for attempt in range(FIRST_ATTEMPT.get(name, 0), 1000):
        seed = 1000 * NAMES.index(name) + attempt
        torch.manual_seed(seed)
        model = seeds_transformer.D2LTransformer(conf).eval()
        scale_weights(model, name, torch.Generator().manual_seed(seed))
        gen_cfg = {"bos_token_id": ids["bos_token_id"], "eos_token_id": ids["eos_token_id"],
                   "pad_token_id": ids["pad_token_id"],
                   "decoder_start_token_id": ids["decoder_start_token_id"]}
        rows, input_ids, mask, dec = make_sources(name, args.vocab_size, ids, seed)
        dec[:, 1:] %= args.d2l_tgt_vocab_size
        X, M, D = torch.tensor(input_ids), torch.tensor(mask), torch.tensor(dec)
        valid = M.sum(1)
        place_eos_d2l(model, ids["eos_token_id"], X, valid, seed)
        model.save(data, gen_cfg)
        ref = seeds_transformer.D2LTransformer.load(data)
        with torch.no_grad():
            enc = ref.encode(X, valid)
            logits = ref.decode_full(D, enc, valid)
            greedy = [ref.greedy(torch.tensor([row]), torch.tensor([len(row)]), MAX_NEW)
                      for row in rows]
            r64 = copy.deepcopy(ref).double()
            enc64 = r64.encode(X, valid)
            err = max((enc64 - enc.double()).abs().max().item(),
                      (r64.decode_full(D, enc64, valid) - logits.double()).abs().max().item())
            for row, (g, lg) in zip(rows, greedy):
                src = torch.tensor([row])
                tgt = torch.cat([torch.tensor([[ids["decoder_start_token_id"]]]), g[:, :-1]], 1)
                e64 = r64.encode(src, torch.tensor([len(row)]))
                lg64 = r64.decode_full(tgt, e64, torch.tensor([len(row)]))
                err = max(err, (lg64 - lg.double()).abs().max().item())
        try:
            assert err < COND_TOL, "float32 off float64 by %g" % err
            seeds_transformer.self_check(ref, X, valid, D)
            gaps = [check_greedy_margins(lg[0], "d2l greedy") for _, lg in greedy]
            assert min(g.shape[1] for g, _ in greedy) >= MIN_GREEDY, "greedy stops at once"
            assert min(len(set(g[0].tolist())) for g, _ in greedy) >= MIN_DISTINCT, "a loop"
            assert not torch.equal(greedy[0][0], greedy[1][0]), "both sources give the same"
            break
        except AssertionError as e:
            print("%s seed %d: %s; re-seeding" % (name, seed, e))
    else:
        raise SystemExit("d2l_tiny: no seed gives separated greedy logits")
    # The reference itself against D2L's code as written (LazyLinear and all).
    check_seeds_transformer.check(ref, X, valid, D, tol=1e-4)
    save(golden, "input_ids", input_ids)
    save(golden, "attention_mask", mask)
    save(golden, "valid_lens", valid.numpy().astype(np.int64))
    save(golden, "decoder_input_ids", dec)
    save(golden, "encoder_last_hidden_state", enc.numpy())
    save(golden, "logits", logits.numpy())
    meta = {"model": "tests/models/data/" + name, "special_ids": ids, "sources": rows,
            "greedy": [], "reference": "tools/goldens/seeds_transformer.py",
            "note": "a decoding step adds the positional encoding of its position (tokens "
                    "before it); the book's predict_step adds position 0 at every step",
            "files": {
                "input_ids": "int64 [2, S] sources (each ends with eos), right-padded with pad",
                "attention_mask": "int64 [2, S]; valid_lens int64 [2] = its row sums",
                "encoder_last_hidden_state": "float32 [2, S, 30] encode(input_ids, valid_lens)",
                "decoder_input_ids": "int64 [2, T] decoder_start (<bos>) + T-1 ids",
                "logits": "float32 [2, T, tgt_vocab] teacher-forced causal decoding",
                "greedy_<i>_sequences": "int64 [1+N] decoder_start + N greedy ids, source i alone",
                "greedy_<i>_ids": "int64 [N] (stops after eos or 16 new tokens)",
                "greedy_<i>_logits": "float32 [N, tgt_vocab] each step's logits, incremental "
                                     "decoding with the block-input cache"}}
    for r, (ids_r, lg) in enumerate(greedy):
        seq = np.concatenate([[ids["decoder_start_token_id"]], ids_r[0].numpy()]).astype(np.int64)
        save(golden, "greedy_%d_sequences" % r, seq)
        save(golden, "greedy_%d_ids" % r, ids_r[0].numpy().astype(np.int64))
        save(golden, "greedy_%d_logits" % r, lg[0].numpy().astype(np.float32))
        meta["greedy"].append({"source": r, "new_tokens": int(ids_r.shape[1]),
                               "ended_with_eos": int(ids_r[0, -1]) == ids["eos_token_id"]})
    with open(os.path.join(golden, "golden.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(data, f)) for f in os.listdir(data))
    print("%s: seed %d, %d bytes, greedy gap >= %.3f, greedy lengths %s" % (
        name, seed, size, min(gaps), [g["new_tokens"] for g in meta["greedy"]]))


def make_full(folder):
    """Real bart-base and t5-small configurations, HF's default random init, F32."""
    bart = transformers.BartConfig(
        vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6,
        encoder_attention_heads=12, decoder_attention_heads=12, encoder_ffn_dim=3072,
        decoder_ffn_dim=3072, max_position_embeddings=1024, activation_function="gelu",
        scale_embedding=False, bos_token_id=0, pad_token_id=1, eos_token_id=2,
        decoder_start_token_id=2, forced_eos_token_id=2)
    t5 = transformers.T5Config(
        vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8,
        relative_attention_num_buckets=32, relative_attention_max_distance=128,
        feed_forward_proj="relu", tie_word_embeddings=True, pad_token_id=0, eos_token_id=1,
        decoder_start_token_id=0)
    for i, (sub, cfg, cls) in enumerate([
            ("bart-base", bart, transformers.BartForConditionalGeneration),
            ("t5-small", t5, transformers.T5ForConditionalGeneration)]):
        torch.manual_seed(4242 + i)
        model = cls(cfg).eval()
        if sub == "bart-base":  # bart-base's generation defaults
            model.generation_config = GenerationConfig(
                bos_token_id=0, pad_token_id=1, eos_token_id=2, decoder_start_token_id=2,
                forced_bos_token_id=0, forced_eos_token_id=2, no_repeat_ngram_size=3, num_beams=4,
                early_stopping=True)
        out_dir = os.path.join(folder, sub)
        model.save_pretrained(out_dir, safe_serialization=True)
        rng = np.random.default_rng(11 + i)
        src = rng.integers(3, 30000, size=(1, 128)).astype(np.int64)
        src[0, -1] = cfg.eos_token_id
        dec = np.concatenate([[[cfg.decoder_start_token_id]],
                              rng.integers(3, 30000, size=(1, 15))], 1).astype(np.int64)
        with torch.no_grad():
            out = model(input_ids=torch.tensor(src), decoder_input_ids=torch.tensor(dec))
        save(out_dir, "golden_input_ids", src)
        save(out_dir, "golden_decoder_input_ids", dec)
        save(out_dir, "golden_encoder_last_hidden_state", out.encoder_last_hidden_state.numpy())
        save(out_dir, "golden_logits", out.logits.numpy())
        count = sum(p.numel() for p in model.parameters())
        print("%s: %d parameters -> %s" % (sub, count, out_dir))


def parse_overrides(items):
    out = {}
    for item in items:
        try:
            key, value = item.split("=", 1)
            name, field = key.split(".", 1)
            out.setdefault(name, {})[field] = int(value)
        except ValueError:
            raise SystemExit("--special wants NAME.KEY=INT, got %r" % item)
        if name not in NAMES:
            raise SystemExit("--special: unknown checkpoint %r" % name)
        if field not in SPECIAL_KEYS:
            raise SystemExit("--special: unknown key %r (known: %s)" % (
                field, ", ".join(SPECIAL_KEYS)))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", default=",".join(NAMES))
    p.add_argument("--vocab-size", type=int, default=512)
    p.add_argument("--d2l-tgt-vocab-size", type=int, default=493)
    p.add_argument("--special", action="append", default=[])
    p.add_argument("--data", default=os.path.join(ROOT, "tests", "models", "data"))
    p.add_argument("--golden", default=os.path.join(ROOT, "tests", "models", "golden"))
    p.add_argument("--full", metavar="DIR")
    args = p.parse_args()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    if args.full:
        make_full(args.full)
        return
    if args.vocab_size < 64 or args.d2l_tgt_vocab_size < 64:
        raise SystemExit("--vocab-size and --d2l-tgt-vocab-size must be >= 64")
    overrides = parse_overrides(args.special)
    for name in args.only.split(","):
        if name not in NAMES:
            raise SystemExit("--only: unknown checkpoint %r (known: %s)" % (name, ", ".join(NAMES)))
        if name == "d2l_tiny":
            make_d2l(args, overrides)
        else:
            make_hf(name, args, overrides)


if __name__ == "__main__":
    main()
