#!/usr/bin/env python3
"""T5 folders that ship spiece.model without tokenizer.json, and what transformers 4.38 makes of
them (AutoTokenizer converts the SentencePiece model into T5TokenizerFast with T5Converter), for
tests/cli/test_tokenize.sh:

  tests/models/data/tok_t5_spiece/  tok_t5's spiece.model with a tokenizer_config.json that has no
                                    added_tokens_decoder (T5Tokenizer's defaults), 5 extra ids and
                                    legacy false (Metaspace's prepend_scheme "first")
  tests/models/golden/seq2seq/tok_t5_spiece.json, tok_t5_spiece_decode.json

(tok_t5 without its tokenizer.json must give tok_t5's own goldens: the test checks that too.)

    /tmp/tvenv2/bin/python tools/goldens/make_t5_spiece_golden.py [--root .]

(torch-free: transformers 4.38.2, sentencepiece and protobuf < 5 in the venv.)
"""
import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_seq2seq_tokenizers import write_goldens  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    args = ap.parse_args()
    from transformers import AutoTokenizer
    data = os.path.join(args.root, "tests/models/data")
    folder = os.path.join(data, "tok_t5_spiece")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    shutil.copy(os.path.join(data, "tok_t5", "spiece.model"), folder)
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"tokenizer_class": "T5Tokenizer", "extra_ids": 5, "legacy": False,
                   "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}, f, indent=2)
        f.write("\n")
    tok = AutoTokenizer.from_pretrained(folder)
    assert type(tok).__name__ == "T5TokenizerFast", type(tok)
    write_goldens(args.root, "tok_t5_spiece", tok, ["</s>", "<pad>", "<unk>", "<extra_id_0>",
                                                    "<extra_id_4>"])


if __name__ == "__main__":
    main()
