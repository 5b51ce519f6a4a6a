#!/usr/bin/env python3
"""Reference scores of Hugging Face's logits processors for models/generate/sampling.

Writes tests/models/golden/sampling/:
  <vec>_logits.npy   float32 [V]  seeded last-position logits (V = 50 or 1000; ties, negative and
                                  positive values, some -inf)
  <vec>_ids.npy      int64 [L]    the ids so far (prompt + generated), with repeats
  <case>.npy         float32 [V]  the scores after the processors of <case> (-inf where filtered)
  cases.txt          one line per case:
                       case vec repetition_penalty no_repeat_ngram_size temperature top_k top_p greedy
                     where greedy = argmax of <case>.npy (torch.argmax: the first maximal index)

Each case builds the lists exactly as GenerationMixin does in transformers 4.38.2 (num_beams 1):
the processors RepetitionPenaltyLogitsProcessor (when penalty != 1.0) and
NoRepeatNGramLogitsProcessor (when size > 0), then the warpers from
GenerationMixin._get_logits_warper (TemperatureLogitsWarper when != 1.0, TopKLogitsWarper when
top_k != 0, TopPLogitsWarper when top_p < 1.0), each run on a [1, V] float32 tensor on the CPU.

    /usr/bin/python3 tools/goldens/make_sampling_golden.py [--out DIR]
    needs torch and transformers (4.38.2 with torch 1.13 works), numpy < 2
"""
import argparse
import os

import numpy as np
import torch
from transformers import GenerationConfig
from transformers.generation.logits_process import (
    LogitsProcessorList,
    NoRepeatNGramLogitsProcessor,
    RepetitionPenaltyLogitsProcessor,
)
from transformers.generation.utils import GenerationMixin


def vectors():
    rng = np.random.default_rng(20240601)
    out = {}
    # V = 50: normal values with exact ties (one duplicated maximum, so greedy must take the
    # first), negative and positive values.
    v = (rng.standard_normal(50) * 3).astype(np.float32)
    v[31] = v.max()  # tie at the top, later index
    v[7] = v[12] = v[40] = v[3]  # a tied group in the middle
    v[20] = 0.0
    ids = np.array([3, 7, 7, 12, 20, 31, 49, 0, 3, 3, 25], dtype=np.int64)
    out["v50"] = (v, ids)
    # V = 1000: values rounded to one decimal, so many ties straddle the top-k and top-p cuts.
    v = np.round(rng.standard_normal(1000) * 2, 1).astype(np.float32)
    v[rng.choice(1000, 20, replace=False)] = -np.inf
    ids = rng.integers(0, 1000, 60).astype(np.int64)
    ids[10:20] = ids[0:10]  # repeated n-grams for no_repeat_ngram_size
    ids[-2:] = ids[0:2]
    ids[30] = int(np.argmax(v))
    out["v1000"] = (v, ids)
    # V = 50: eight equal logits, the rest -inf: probabilities 1/8 each, exact in float32, so the
    # top-p cut lands exactly on the "cumulative <= 1 - top_p" boundary and which tied tokens go is
    # decided by torch.sort's (unstable) order.
    v = np.full(50, -np.inf, dtype=np.float32)
    v[[2, 5, 9, 17, 23, 30, 41, 48]] = 1.5
    ids = np.array([5, 5, 41, 1, 2], dtype=np.int64)
    out["tie8"] = (v, ids)
    # V = 50: all equal; every token tied.
    v = np.full(50, -0.25, dtype=np.float32)
    ids = np.array([0, 49, 10, 10], dtype=np.int64)
    out["flat"] = (v, ids)
    return out


# (repetition_penalty, no_repeat_ngram_size, temperature, top_k, top_p)
SETTINGS = [
    (1.0, 0, 1.0, 0, 1.0),  # nothing applies
    (1.3, 0, 1.0, 0, 1.0),
    (0.7, 0, 1.0, 0, 1.0),
    (1.0, 2, 1.0, 0, 1.0),
    (1.0, 3, 1.0, 0, 1.0),
    (1.0, 0, 0.7, 0, 1.0),
    (1.0, 0, 1.3, 0, 1.0),
    (1.0, 0, 1.0, 1, 1.0),
    (1.0, 0, 1.0, 5, 1.0),
    (1.0, 0, 1.0, 50, 1.0),
    (1.0, 0, 1.0, 5000, 1.0),  # k above V: clamped
    (1.0, 0, 1.0, 0, 0.9),
    (1.0, 0, 1.0, 0, 0.5),
    (1.0, 0, 1.0, 0, 0.0),
    (1.2, 0, 0.7, 5, 0.9),
    (1.3, 0, 1.3, 0, 0.5),
    (1.0, 0, 0.7, 0, 0.9),
    (1.0, 0, 1.3, 50, 0.9),
    (1.5, 2, 0.7, 50, 0.5),
]


def name_of(vec, s):
    rep, ngram, temp, k, p = s
    return f"{vec}_rp{rep:g}_ng{ngram}_t{temp:g}_k{k}_p{p:g}"


def process(logits, ids, s):
    rep, ngram, temp, k, p = s
    processors = LogitsProcessorList()
    if rep != 1.0:
        processors.append(RepetitionPenaltyLogitsProcessor(penalty=rep))
    if ngram > 0:
        processors.append(NoRepeatNGramLogitsProcessor(ngram))
    config = GenerationConfig(do_sample=True, temperature=temp, top_k=k, top_p=p)
    warpers = GenerationMixin._get_logits_warper(None, config)
    input_ids = torch.from_numpy(ids)[None]
    scores = torch.from_numpy(logits.copy())[None]
    scores = processors(input_ids, scores)
    scores = warpers(input_ids, scores)
    return scores[0].numpy().astype(np.float32), int(torch.argmax(scores[0]))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "models", "golden", "sampling"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    lines = []
    for vec, (logits, ids) in vectors().items():
        np.save(os.path.join(args.out, f"{vec}_logits.npy"), logits)
        np.save(os.path.join(args.out, f"{vec}_ids.npy"), ids)
        for s in SETTINGS:
            if vec != "v1000" and s[1] == 3:
                continue
            scores, greedy = process(logits, ids, s)
            name = name_of(vec, s)
            np.save(os.path.join(args.out, f"{name}.npy"), scores)
            rep, ngram, temp, k, p = s
            lines.append(f"{name} {vec} {rep!r} {ngram} {temp!r} {k} {p!r} {greedy}")
            kept = int(np.isfinite(scores).sum())
            print(f"{name}: {kept} finite, greedy {greedy}")
    with open(os.path.join(args.out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
