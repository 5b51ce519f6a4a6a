#!/usr/bin/env python3
"""Hugging Face goldens for the Python bindings' text-in, text-out generation (tests/python).

The decoder goldens of tools/goldens/make_decoder_golden.py start from ids; this one starts from text, so
the whole path (tokenizer, greedy generate, decode) is checked against transformers 4.38.2:
tests/models/data/gpt2_tiny with the GPT-2 tokenizer of tests/models/data/gpt2 (the pairing
tests/cli/test_generate.sh uses), greedy generate(use_cache=True) of 12 new tokens with EOS
ignored, each prompt alone. Writes tests/python/golden/gpt2_tiny_text.json:
  [{"prompt", "prompt_ids", "generated_ids", "text"}]   text = decode(generated_ids)

    /usr/bin/python3 tools/goldens/make_python_golden.py      (torch 1.13, transformers 4.38.2)
"""

import json
import os

import torch
from transformers import GPT2LMHeadModel, PreTrainedTokenizerFast

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROMPTS = ["zq", "Hi!", "a"]  # every id below the tiny model's vocabulary of 256
NEW = 12


def main():
    model = GPT2LMHeadModel.from_pretrained(os.path.join(ROOT, "tests/models/data/gpt2_tiny")).eval()
    model.generation_config.eos_token_id = None  # EOS ignored: always NEW tokens
    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(ROOT, "tests/models/data/gpt2/tokenizer.json"))
    rows = []
    for prompt in PROMPTS:
        ids = tok(prompt)["input_ids"]
        assert max(ids) < model.config.vocab_size, (prompt, ids)
        with torch.no_grad():
            out = model.generate(torch.tensor([ids]), max_new_tokens=NEW, do_sample=False, use_cache=True,
                                 pad_token_id=0)
        new = out[0, len(ids):].tolist()
        rows.append({"prompt": prompt, "prompt_ids": ids, "generated_ids": new, "text": tok.decode(new)})
    path = os.path.join(ROOT, "tests/python/golden/gpt2_tiny_text.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
