#!/usr/bin/env python3
"""The ByteLevel normalizer (every byte as its byte-level character), which the tokenizers
library has from 0.20 on, in make_tokenizer_components_golden.py's format: a BPE trained behind
Sequence[NFC, ByteLevel] and a Split on "Ġ" (merged with the next piece), decoded by ByteLevel.

  tests/models/data/tokcomp_byte_level_norm/tokenizer.json
  tests/models/golden/bpe/tokcomp_byte_level_norm.json, tokcomp_byte_level_norm_decode.json

    python3 -m venv /tmp/tok19 && /tmp/tok19/bin/pip install tokenizers==0.20.0
    /tmp/tok19/bin/python tools/goldens/make_byte_level_norm_golden.py [--root .]
"""
import argparse
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_bpe_golden import corpus  # noqa: E402
from make_tokenizer_components_golden import write  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    args = ap.parse_args()
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.ByteLevel()])
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("\u0120"), "merged_with_next")
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus(), trainer=trainers.BpeTrainer(
        vocab_size=450, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    write(args.root, "byte_level_norm", tok, ["<s>", "</s>", "<unk>"])


if __name__ == "__main__":
    main()
