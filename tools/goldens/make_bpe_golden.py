#!/usr/bin/env python3
"""Trains small byte-level and SentencePiece-style BPE tokenizers with Hugging Face `tokenizers` and
writes the references that tests/models/test_bpe.c and tests/cli/test_tokenize.sh compare against:

  tests/models/data/<name>/tokenizer.json     the trained tokenizer (gpt2, llama3, qwen2, llama2,
                                              qwen2_nfc: Qwen2's with its NFC normalizer, smollm:
                                              SmolLM2's Digits + ByteLevel, digits_nmt: the Nmt
                                              normalizer and Digits runs)
  tests/models/golden/bpe/<name>.json         what `vkf tokenize --json --model DIR TEXTS...` prints
  tests/models/golden/bpe/<name>_decode.json  {"cases": [{"ids", "skip_special", "text"}]}: decode()

    /usr/bin/python3 tools/goldens/make_bpe_golden.py [--root .]

Training is deterministic (a fixed corpus built here, no shuffling), so rerunning rewrites the same
files. tokenizers 0.15 has no `ignore_merges`; the llama3 file declares it (as Llama-3's does) and
its goldens apply it here: a pre-tokenized word found whole in the vocabulary is one token.
"""
import argparse
import json
import os

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

GPT2_PATTERN = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+")
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")


def corpus():
    """A few KB of English, code, numbers and a little non-Latin text, fixed (no randomness)."""
    prose = [
        "The quick brown fox jumps over the lazy dog.",
        "It's a truth universally acknowledged that we'll need more tests; they're cheap.",
        "I'm sure you've seen it: the model doesn't know what it'd do without tokens.",
        "Transformers read text as tokens, and tokens are made by merging bytes into pieces.",
        "In 2023 there were 1024 layers, 4096 heads and 32000 vocabulary entries in total.",
        "She said: \"Hello, world!\" and then (quietly) added -- well, nothing at all...",
        "Café au lait, naïve résumé, Straße, façade, jalapeño, smörgåsbord.",
        "Γειά σου κόσμε. Привет, мир! 你好，世界。こんにちは世界。",
        "Numbers: 3.14159, 2.71828, 1,000,000 and 42 are common; 7 is lucky.",
        "The year 1999 came before 2000, and 2024 will come after 2023.",
    ]
    code = [
        "def add(a, b):\n    return a + b\n",
        "for (int i = 0; i < n; i++) {\n\tsum += x[i] * y[i];\n}\n",
        "if __name__ == \"__main__\":\n    main()\n",
        "let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n",
        "SELECT name, count(*) FROM users WHERE age >= 18 GROUP BY name;\n",
    ]
    lines = []
    for rep in range(6):
        for i, p in enumerate(prose):
            lines.append(p if (i + rep) % 3 else p.lower())
        lines.extend(code)
        lines.append("the and of to in is that for it as with was on be at by this have from")
    return lines


TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "",
    " leading space",
    "   three leading spaces and trailing   ",
    "tabs\tand\ttabs\t\tdouble",
    "line one\nline two\r\nline three\n\n\nend\n",
    "trailing newline spaces  \n  ",
    "DON'T SHOUT, we'll see. She's here; they'RE THERE, I'M ok, you'D, it'S, we'VE",
    "don't won't can't I'll you're",
    "1234567890123 and 3.14159 and 1,000,000 x2 v1.2.3",
    "café naïve résumé Straße jalapeño",
    "e\u0301 a\u0308 combining marks n\u0303o\u0300",
    "你好，世界。日本語のテキスト",
    "emoji 😀 family 👨\u200d👩\u200d👧\u200d👦 flag 🇫🇷 thumbs 👍🏽",
    "def add(a, b):\n    return a + b\n",
    "for (int i = 0; i < n; i++) { sum += x[i]; }",
    "absent bytes: ภาษาไทย ☃ 𝔘𝔫𝔦 \u00a0nbsp\u3000ideographic",
    "!!!??? ... --- ###",
    "mixed\u2028separator\u0085next",
]


# Texts whose NFC differs from them, or that NFC must leave alone (qwen2_nfc's goldens add these).
NFC_TEXTS = [
    "e\u0301 A\u030A o\u0308 n\u0303 cafe\u0301 decomposed",
    "\u1100\u1161\u11A8 \u1100\u1161 \u110B\u1167\u11BC jamo to syllables, \uAC00\u11A8 LV+T",
    "\u0071\u0307\u0323 reordered, \u0073\u0323\u0307 \u1E0B\u0323 \u0041\u0327\u0301",
    "\u2126 ohm, \u212B angstrom, \u212A kelvin, \u0340\u0341 tone marks, \u037E \u0387",
    "\u0958 \u0915\u093C excluded, \u0344 \u0308\u0301 \u0F73 \u2ADC \u1F71",
    "\u0301 leading mark, a\u0301\u0301 twice, a\u0315\u0301 blocked? a\u05B0\u0301",
    "mixed: Caf\u00e9 cafe\u0301 \u0399\u0308\u0301 \u0435\u0308 \u05D1\u05BC \u3057\u3099 "
    "\u30AB\u3099 \u0B47\u0B3E \u0DD9\u0DCF",
    "emoji \U0001F600\u0301 \U0001F44D\U0001F3FD\u0308 \u2764\uFE0F\u0301 e\u20DD\u0301",
    "already composed: \u00e9\u00c5\u00f1 \uD55C\uAD6D\uC5B4 \u1EC7 \u01D5 \u0390",
    "\U000110A5\U000110BA \U00011131\U00011127 \U0001D15E \U0001D15F\U0001D165 musical",
    # Newer than the fast tokenizer's normalization tables (Unicode 13's Dives Akuru U+11938 =
    # U+11935 U+11930): Python composes it, the fast tokenizer does not, and it is the reference.
    "\U00011935\U00011930 dives akuru, \U00011938 composed, \U00011935\U00011930\u0301",
]


def special_texts(specials):
    a, b = specials[0], specials[-1]
    return [a + "Hello" + b, "text " + a + " middle " + b + " end", a + a, "x" + b + "y " + b]


def train(tok, trainer):
    tok.train_from_iterator(corpus(), trainer=trainer)
    return tok


def gpt2():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    train(tok, trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>"],
                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                   show_progress=False))
    return json.loads(tok.to_str()), ["<|endoftext|>"]


def llama3(pattern, ignore_merges):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>"]
    train(tok, trainers.BpeTrainer(vocab_size=700, special_tokens=specials,
                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                   show_progress=False))
    # A non-special added token that strips the spaces on its left, as Llama-3's chat markers do not
    # but many fine-tunes' tokens do.
    tok.add_tokens([AddedToken("<tool>", lstrip=True, rstrip=False, normalized=False,
                               special=False)])
    bos = tok.token_to_id(specials[0])
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single=specials[0] + " $A",
                                      pair=specials[0] + " $A " + specials[0] + " $B:1",
                                      special_tokens=[(specials[0], bos)])])
    doc = json.loads(tok.to_str())
    if ignore_merges:
        doc["model"]["ignore_merges"] = True
    return doc, specials + ["<tool>"]


def llama2():
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    # Trained on Metaspace words (so no merge crosses a word); saved with Llama-2's normalizer and
    # no pre-tokenizer, which is what Llama-2's tokenizer.json holds.
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    byte_tokens = ["<0x%02X>" % b for b in range(256)]
    train(tok, trainers.BpeTrainer(vocab_size=700, special_tokens=["<unk>", "<s>", "</s>"] +
                                   byte_tokens, limit_alphabet=70, show_progress=False))
    doc = json.loads(tok.to_str())
    doc["added_tokens"] = [t for t in doc["added_tokens"] if t["content"] not in byte_tokens]
    doc["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
    doc["pre_tokenizer"] = None
    doc["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    bos = doc["model"]["vocab"]["<s>"]
    doc["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<s>", "type_id": 1}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [bos], "tokens": ["<s>"]}}}
    return doc, ["<s>", "</s>", "<unk>"]


def qwen2_nfc():
    """The qwen2 tokenizer with Qwen2's `"normalizer": {"type": "NFC"}`, trained on the corpus
    with a few composed and decomposed lines added so that some merges involve them."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    extra = ["caf\u00e9 r\u00e9sum\u00e9 \u00c5ngstr\u00f6m \u03a9 \ud55c\uad6d\uc5b4 "
             "\uac00\uac01"] * 4
    tok.train_from_iterator(corpus() + extra, trainer=trainers.BpeTrainer(
        vocab_size=700, special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    return json.loads(tok.to_str()), specials


# Texts for the Nmt normalizer (controls dropped, odd spaces mapped) and the Digits pre-tokenizer.
NMT_DIGITS_TEXTS = [
    "bell\x07 vt\x0b del\x7f c1\x8f\x9f kept\x85 end",
    "zero\u200bwidth\u200c\u200d\u200e\u200f bom\ufeff repl\ufffd lower\u2581bar ogham\u1680x",
    "tab\tnl\ncr\rff\x0c ls\u2028ps\u2029",
    "12345 1.5e10 007 x86_64 \u0663\u0664 \u00bd \u2167 \u2460 digits\U0001D7D8",
    "99 bottles, 3 ships; room 101 at 10:45, 2024-11-26",
]


def smollm(nmt=False):
    """SmolLM2's pre-tokenizer, Sequence[Digits(individual_digits=True), ByteLevel]; with nmt, the
    Nmt normalizer and Digits keeping runs together."""
    tok = Tokenizer(models.BPE())
    if nmt:
        tok.normalizer = normalizers.Nmt()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=not nmt),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    train(tok, trainers.BpeTrainer(vocab_size=650, special_tokens=specials,
                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                   show_progress=False))
    return json.loads(tok.to_str()), specials


def encode(tok, doc, text):
    enc = tok.encode(text)
    ids, tokens = list(enc.ids), list(enc.tokens)
    if doc["model"].get("ignore_merges"):
        vocab = doc["model"]["vocab"]
        words = enc.word_ids
        out_ids, out_tokens, i = [], [], 0
        while i < len(ids):
            j = i + 1
            while words[i] is not None and j < len(ids) and words[j] == words[i] \
                    and enc.sequence_ids[j] == enc.sequence_ids[i]:
                j += 1
            whole = "".join(tokens[i:j])
            if j - i > 1 and whole in vocab:
                out_ids.append(vocab[whole])
                out_tokens.append(whole)
            else:
                out_ids.extend(ids[i:j])
                out_tokens.extend(tokens[i:j])
            i = j
        ids, tokens = out_ids, out_tokens
    return ids, tokens


def write(root, name, doc, specials, extra_texts=()):
    folder = os.path.join(root, "tests/models/data", name)
    os.makedirs(folder, exist_ok=True)
    text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
    assert len(text.encode()) < 60_000, (name, len(text.encode()))
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(text)
    tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    rows, decode_cases = [], []
    for t in TEXTS + list(extra_texts) + special_texts(specials):
        ids, tokens = encode(tok, doc, t)
        # tokens are vocabulary strings (convert_ids_to_tokens), as `vkf tokenize` prints them; an
        # lstripped added token's Encoding.tokens would carry the stripped space instead.
        rows.append({"text": t, "ids": ids, "tokens": [tok.id_to_token(i) for i in ids]})
        cut = [ids, ids[:-1]] if len(ids) > 1 else [ids]
        for case_ids in cut:
            for skip in (False, True):
                decode_cases.append({"ids": case_ids, "skip_special": skip,
                                     "text": tok.decode(case_ids, skip_special_tokens=skip)})
    model_name = "tests/models/data/" + name
    out = os.path.join(root, "tests/models/golden/bpe")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name + ".json"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"model": model_name, "texts": rows}, ensure_ascii=False) + "\n")
    with open(os.path.join(out, name + "_decode.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"model": model_name, "cases": decode_cases}, ensure_ascii=False,
                           indent=0) + "\n")
    print("%s: vocab %d, merges %d, %d bytes" % (name, len(doc["model"]["vocab"]),
                                                 len(doc["model"]["merges"]), len(text.encode())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    args = ap.parse_args()
    write(args.root, "gpt2", *gpt2())
    write(args.root, "llama3", *llama3(LLAMA3_PATTERN, True))
    write(args.root, "qwen2", *llama3(QWEN2_PATTERN, False))
    write(args.root, "llama2", *llama2())
    write(args.root, "qwen2_nfc", *qwen2_nfc(), extra_texts=NFC_TEXTS)
    write(args.root, "smollm", *smollm(), extra_texts=NMT_DIGITS_TEXTS)
    write(args.root, "digits_nmt", *smollm(nmt=True), extra_texts=NMT_DIGITS_TEXTS)


if __name__ == "__main__":
    main()
