#!/usr/bin/env python3
"""Where tokenizers 0.15.2's UnicodeScripts pre-tokenizer starts its pieces in one string of
every code point (U+0001..U+10FFFF but the surrogates, in order), so that
tests/models/test_unicode_scripts.c checks the script table and the splitting rules over all of
Unicode, not just on sample texts:

  tests/models/golden/bpe/unicode_scripts_starts.json  {"starts": [code point, ...]}: the code
      point each piece starts with; "classes": [[first code point, class], ...] runs of each
      code point's class from two more strings, every code point between two "a"s and between
      two "中"s: a piece starts at it after "a" (bit 0: neither Latin nor of no script) and
      after "中" (bit 1: neither Han nor of no script)

    /tmp/tokvenv/bin/python tools/goldens/make_unicode_scripts_golden.py [--root .]
"""
import argparse
import json
import os

from tokenizers import pre_tokenizers


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    args = ap.parse_args()
    cps = [c for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(map(chr, cps))
    pieces = pre_tokenizers.UnicodeScripts().pre_tokenize_str(text)
    starts = [ord(text[start]) for _, (start, _) in pieces]
    # the pieces cover the text from the first start to the end, back to back
    assert all(pieces[i][1][1] == pieces[i + 1][1][0] for i in range(len(pieces) - 1))
    assert pieces[-1][1][1] == len(text)
    bits = [0] * len(cps)
    for bit, ref in ((1, "a"), (2, "\u4e2d")):
        inter = ref + ref.join(map(chr, cps)) + ref
        for _, (start, _) in pre_tokenizers.UnicodeScripts().pre_tokenize_str(inter):
            if start % 2 == 1:  # the code point at 2k + 1 is cps[k]
                bits[start // 2] |= bit
    classes = []
    for c, b in zip(cps, bits):
        if not classes or classes[-1][1] != b:
            classes.append([c, b])
    out = os.path.join(args.root, "tests/models/golden/bpe/unicode_scripts_starts.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"starts": starts, "classes": classes}, f)
        f.write("\n")
    print("%d pieces over %d code points, %d class runs" % (len(pieces), len(cps), len(classes)))


if __name__ == "__main__":
    main()
