#!/usr/bin/env python3
"""Beam search goldens of the committed tiny decoder checkpoints (tests/models/data/gpt2_tiny,
llama_tiny) from transformers 4.38.2's generate(num_beams > 1, use_cache=True), for
tests/cli/test_generate_beam.sh.

Each case is a generation_config.json the test writes beside a copy of the checkpoint, the
prompts (a batch of several is left-padded with pad_token_id and given its attention mask, as a
tokenizer pads a batch for generate()), max_new_tokens, and Hugging Face's `sequences` and
`sequences_scores`. The eos id of a case is a token the model produces a few steps in, so
hypotheses close in the middle of the search.

Writes tests/models/golden/decoder_beam/cases.json.

    /usr/bin/python3 tools/goldens/make_decoder_beam_golden.py      (torch 1.13, transformers 4.38.2)

Development time only: the test reads the committed file and needs no Python.
"""
import json
import os

import torch
import transformers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "models", "data")
GOLDEN = os.path.join(ROOT, "tests", "models", "golden", "decoder_beam")
PROMPTS = [[1, 17, 200, 45, 99, 3, 250, 7], [1, 64, 128, 9, 33], [1, 5, 6, 7, 8, 9, 10, 11, 12, 13]]


def load(name):
    cls = {"gpt2_tiny": transformers.GPT2LMHeadModel, "llama_tiny": transformers.LlamaForCausalLM}[name]
    return cls.from_pretrained(os.path.join(DATA, name), torch_dtype=torch.float32,
                               attn_implementation="eager").eval()


def frequent_token(model, prompt, steps):
    """A token greedy decoding of `prompt` produces within `steps` steps: a plausible eos."""
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=steps, do_sample=False,
                             eos_token_id=None, pad_token_id=0)
    return int(out[0, len(prompt) + steps - 1])


def run(model, prompts, config, max_new):
    longest = max(len(p) for p in prompts)
    pad = config["pad_token_id"]
    ids = torch.tensor([[pad] * (longest - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (longest - len(p)) + [1] * len(p) for p in prompts])
    gc = transformers.GenerationConfig(**config)
    with torch.no_grad():
        out = model.generate(ids, attention_mask=mask, generation_config=gc, max_new_tokens=max_new,
                             output_scores=True, return_dict_in_generate=True)
    return out.sequences.tolist(), [float(s) for s in out.sequences_scores.tolist()]


def main():
    assert transformers.__version__ == "4.38.2", transformers.__version__
    os.makedirs(GOLDEN, exist_ok=True)
    cases = []
    for name in ["gpt2_tiny", "llama_tiny"]:
        model = load(name)
        eos = frequent_token(model, PROMPTS[0], {"gpt2_tiny": 4, "llama_tiny": 2}[name])
        settings = [
            ("beams4", [PROMPTS[0]], dict(num_beams=4, eos_token_id=eos, pad_token_id=0), 12),
            ("lp2_early_true", [PROMPTS[0]],
             dict(num_beams=4, eos_token_id=eos, pad_token_id=0, length_penalty=2.0,
                  early_stopping=True), 12),
            ("lp_neg_never_ngram", [PROMPTS[2]],
             dict(num_beams=3, eos_token_id=eos, pad_token_id=0, length_penalty=-1.0,
                  early_stopping="never", no_repeat_ngram_size=2), 12),
            ("batch2_left_padded", [PROMPTS[0], PROMPTS[1]],
             dict(num_beams=4, eos_token_id=eos, pad_token_id=0, repetition_penalty=1.2), 10),
            ("batch3_min_new", PROMPTS,
             dict(num_beams=2, eos_token_id=[eos, 2], pad_token_id=0, min_new_tokens=5), 9),
        ]
        for case, prompts, config, max_new in settings:
            seqs, scores = run(model, prompts, config, max_new)
            # Each prompt alone: left padding (with its mask) changes nothing but the padding.
            for i, p in enumerate(prompts):
                alone, _ = run(model, [p], config, max_new)
                longest = max(len(q) for q in prompts)
                got = [t for t in seqs[i][longest:]]
                want = alone[0][len(p):]
                if got[:len(want)] != want:
                    print("  note: %s/%s prompt %d differs from its run alone: %s vs %s" % (
                        name, case, i, got, want))
            cases.append(dict(name="%s_%s" % (name, case), model=name, generation_config=config,
                              prompts=prompts, max_new_tokens=max_new, sequences=seqs,
                              scores=scores))
            print("%s %s: eos %s, generated lengths %s" % (name, case, config["eos_token_id"],
                  [len(s) - max(len(p) for p in prompts) for s in seqs]))
    with open(os.path.join(GOLDEN, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
