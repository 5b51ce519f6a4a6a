#!/usr/bin/env python3
"""Trains small tokenizers of the encoder-decoder families and writes the references that
tests/models/test_seq2seq_tokenizers.c and tests/cli/test_tokenize.sh compare against:

  tests/models/data/tok_t5/      spiece.model (SentencePiece Unigram) and what T5TokenizerFast
                                 saves from it (tokenizer.json with a real Precompiled charsmap)
  tests/models/data/tok_marian/  source.spm, target.spm (two different Unigram models), vocab.json
                                 and what MarianTokenizer.save_pretrained writes
  tests/models/data/tok_bart/    vocab.json, merges.txt (BartTokenizer) and tokenizer.json
                                 (BartTokenizerFast)
  tests/models/data/tok_bart_slow/  the same without tokenizer.json (the slow fallback)
  tests/models/data/tok_t5_hub/  tok_t5's tokenizer.json in the older form of the Hub's t5-small:
                                 Precompiled alone, WhitespaceSplit + Metaspace without a scheme
  tests/models/data/spm_bpe/bpe.model  a SentencePiece BPE model (merge by score, byte fallback)
  tests/models/golden/seq2seq/<name>.json         what `vkf tokenize --json --model DIR TEXTS` prints
  tests/models/golden/seq2seq/<name>_decode.json  {"cases": [{"ids", "skip_special", "text"}]}
  tests/models/golden/seq2seq/spm_pieces.json     {"models": [{"model", "cases": [{"text", "pieces",
                                                  "decoded"}]}]}: the sentencepiece library itself

    PYTHONPATH=/tmp/pyextra /usr/bin/python3 tools/goldens/make_seq2seq_tokenizers.py [--root .]

(sentencepiece and protobuf==3.20.3 in /tmp/pyextra: pip install --target /tmp/pyextra ...; only
needed to rewrite these files, never by the tests). The SentencePiece models normalise with a small
rule table compiled by SentencePiece itself (NFKC of the characters the texts use, as nmt_nfkc
would map them) so the charsmap is real but a few KB instead of nmt_nfkc's 240 KB.
"""
import argparse
import json
import os
import shutil
import tempfile
import unicodedata

PROSE = [
    "The quick brown fox jumps over the lazy dog.",
    "It's a truth universally acknowledged that we'll need more tests; they're cheap.",
    "Transformers translate sentences: the encoder reads, the decoder writes.",
    "Café au lait, naïve résumé, Straße, façade, jalapeño, smörgåsbord, crème brûlée.",
    "Γειά σου κόσμε, καλημέρα. Привет, мир! 你好，世界。こんにちは世界。",
    "Numbers: 3.14159, 2.71828, 1,000,000 and 42 are common; 7 is lucky.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Le renard brun rapide saute par-dessus le chien paresseux.",
    "El zorro marrón rápido salta sobre el perro perezoso.",
    "translate English to German: The house is wonderful.",
    "summarize: studies have shown that owning a dog is good for you",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ﬁne ligatures ½ ² ™ …",
    "emoji 😀 👍🏽 ❤️ and 🇫🇷 flags",
]

TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "",
    " ",
    "   ",
    " leading space",
    "trailing space ",
    "  two leading and two trailing  ",
    "many     spaces   between",
    "tabs\tand\nnewlines\r\nhere",
    "Café naïve résumé Straße",
    "Cafe\u0301 decomposed e\u0301 and n\u0303",
    "Ｆｕｌｌｗｉｄｔｈ ＴＥＸＴ １２３ ｆｏｏ",
    "ﬁ ﬂ ½ ² ™ … Ⅻ ㎏",
    "Γειά σου κόσμε",
    "你好，世界。こんにちは",
    "😀 👍🏽 ❤️ 🇫🇷 👨‍👩‍👧",
    "unknown: ☃ ♞ ⌘ ✈ ☃☃☃ ♞♞",
    "zzzzqqqxxxjjj",
    "supercalifragilisticexpialidociousantidisestablishmentarianism",
    "a" * 60,
    "translate English to German: The house is wonderful.",
    "end. with, punctuation ! ? and ' quotes ' n't",
    "\u00a0non-breaking\u2003em\u3000ideographic",
    "x\u200by zero width",
    "ǅ ǈ ǋ ﬀ ﬃ ｶ ｷﾞ",
    "e\u0301\u0301 stacked marks a\u0308\u0304",
    "1234567890 3.14 -42",
]


def special_texts(specials):
    """Special-token text inside strings: alone, glued to words, between spaces."""
    out = []
    for s in specials:
        out += [s, "a%sb" % s, "hello %s world" % s, " %s " % s, "%s%s" % (s, s)]
    return out


def nfkc_rules():
    """SentencePiece normalisation rules: each character of the texts (and a few ranges) whose NFKC
    differs, and the decomposed spellings of the accented letters, mapped to their NFKC."""
    chars = set("".join(PROSE + TEXTS))
    chars |= {chr(c) for c in range(0xFF01, 0xFF5F)} | {chr(c) for c in range(0xFB00, 0xFB07)}
    chars |= {chr(c) for c in range(0xC0, 0x180)} | {"\u00a0", "\u2003", "\u3000", "\t", "\n", "\r"}
    rules = {}
    for c in sorted(chars):
        n = unicodedata.normalize("NFKC", c)
        if c in "\t\n\r":
            n = " "
        if n != c:
            rules[c] = n
        d = unicodedata.normalize("NFD", c)
        if len(d) > 1:
            rules[d] = unicodedata.normalize("NFKC", d)
    lines = ["%s\t%s" % (" ".join("%X" % ord(x) for x in k), " ".join("%X" % ord(x) for x in v))
             for k, v in sorted(rules.items())]
    return "\n".join(lines) + "\n"


def train_spm(tmp, name, lines, vocab_size, model_type="unigram", byte_fallback=False):
    import sentencepiece as spm
    corpus = os.path.join(tmp, name + ".txt")
    with open(corpus, "w", encoding="utf-8") as f:
        for rep in range(8):
            for i, p in enumerate(lines):
                f.write((p if (i + rep) % 3 else p.lower()) + "\n")
    rules = os.path.join(tmp, "rules.tsv")
    with open(rules, "w", encoding="utf-8") as f:
        f.write(nfkc_rules())
    cwd = os.getcwd()
    os.chdir(tmp)  # the model records these paths: relative ones keep the files reproducible
    try:
        spm.SentencePieceTrainer.train(
            input=name + ".txt", model_prefix=name, vocab_size=vocab_size,
            model_type=model_type, character_coverage=0.98, normalization_rule_tsv="rules.tsv",
            hard_vocab_limit=False, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, num_threads=1,
            minloglevel=2, input_sentence_size=0, shuffle_input_sentence=False,
            seed_sentencepiece_size=100000, byte_fallback=byte_fallback)
    finally:
        os.chdir(cwd)
    return os.path.join(tmp, name + ".model")


def t5(tmp, folder):
    from transformers import T5Tokenizer, T5TokenizerFast
    model = train_spm(tmp, "t5", PROSE, 200)
    slow = T5Tokenizer(vocab_file=model, extra_ids=8, legacy=True)
    fast = T5TokenizerFast.from_pretrained(save(slow, tmp, "t5slow"), from_slow=True)
    fast.save_pretrained(folder)
    shutil.copy(model, os.path.join(folder, "spiece.model"))
    return T5TokenizerFast.from_pretrained(folder)


def t5_hub(src, folder):
    from tokenizers import Tokenizer
    from transformers import T5TokenizerFast
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(src, "tokenizer.json"), encoding="utf-8") as f:
        doc = json.load(f)
    doc["normalizer"] = doc["normalizer"]["normalizers"][0]
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"},
        {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}]}
    doc["decoder"] = {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    with open(os.path.join(src, "tokenizer_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    del config["add_prefix_space"]  # with it transformers would convert spiece.model instead
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(config, ensure_ascii=False, indent=2) + "\n")
    tok = T5TokenizerFast.from_pretrained(folder)
    assert tok.backend_tokenizer.to_str() == Tokenizer.from_file(
        os.path.join(folder, "tokenizer.json")).to_str()  # the file itself is what runs
    return tok


def save(tok, tmp, name):
    d = os.path.join(tmp, name)
    tok.save_pretrained(d)
    return d


def marian(tmp, folder):
    from transformers import MarianTokenizer
    src = train_spm(tmp, "source", PROSE[:6] + PROSE[9:], 180)
    tgt = train_spm(tmp, "target", PROSE[3:9], 160)
    import sentencepiece as spm
    vocab = {"</s>": 0, "<unk>": 1}
    for path in (src, tgt):
        sp = spm.SentencePieceProcessor(model_file=path)
        for i in range(sp.get_piece_size()):
            p = sp.id_to_piece(i)
            if p not in vocab and p not in ("<pad>", "<unk>", "</s>"):
                vocab[p] = len(vocab)
    vocab[">>de<<"] = len(vocab)
    vocab[">>fr<<"] = len(vocab)
    vocab["<pad>"] = len(vocab)
    vocab_path = os.path.join(tmp, "vocab.json")
    with open(vocab_path, "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=2)
    tok = MarianTokenizer(src, tgt, vocab_path, source_lang="en", target_lang="de")
    tok.save_pretrained(folder)
    return MarianTokenizer.from_pretrained(folder)


def bart(tmp, folder, slow_folder):
    from tokenizers import ByteLevelBPETokenizer
    from transformers import BartTokenizer, BartTokenizerFast
    bpe = ByteLevelBPETokenizer()
    lines = [p if i % 2 else p.lower() for i, p in enumerate(PROSE * 4)]
    bpe.train_from_iterator(lines, vocab_size=500, min_frequency=2,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                            show_progress=False)
    d = os.path.join(tmp, "bart_bpe")
    os.makedirs(d, exist_ok=True)
    bpe.save_model(d)
    slow = BartTokenizer(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
    slow.save_pretrained(slow_folder)
    fast = BartTokenizerFast.from_pretrained(slow_folder, from_slow=True)
    fast.save_pretrained(folder)
    for f in os.listdir(folder):
        if f not in ("vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json",
                     "special_tokens_map.json"):
            os.remove(os.path.join(folder, f))
    return fast, BartTokenizer.from_pretrained(slow_folder)


def write_spm_goldens(root, models):
    """SentencePieceProcessor.encode(text, out_type=str) and decode_pieces of those pieces."""
    import sentencepiece as spm
    out = []
    for rel in models:
        sp = spm.SentencePieceProcessor(model_file=os.path.join(root, rel))
        cases = []
        for t in TEXTS + special_texts(["</s>", "<unk>", "<s>"]):
            pieces = sp.encode(t, out_type=str)
            cases.append({"text": t, "pieces": pieces, "decoded": sp.decode_pieces(pieces)})
        out.append({"model": rel, "cases": cases})
    with open(os.path.join(root, "tests/models/golden/seq2seq/spm_pieces.json"), "w",
              encoding="utf-8") as f:
        f.write(json.dumps({"models": out}, ensure_ascii=False, indent=0) + "\n")


def write_goldens(root, name, tok, specials):
    rows, cases = [], []
    for t in TEXTS + special_texts(specials):
        ids = tok(t)["input_ids"]
        rows.append({"text": t, "ids": ids, "tokens": tok.convert_ids_to_tokens(ids)})
        cut = [ids, ids[:-1]] if len(ids) > 1 else [ids]
        for case_ids in cut:
            for skip in (False, True):
                cases.append({"ids": case_ids, "skip_special": skip,
                              "text": tok.decode(case_ids, skip_special_tokens=skip)})
    model_name = "tests/models/data/" + name
    out = os.path.join(root, "tests/models/golden/seq2seq")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name + ".json"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"model": model_name, "texts": rows}, ensure_ascii=False) + "\n")
    with open(os.path.join(out, name + "_decode.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"model": model_name, "cases": cases}, ensure_ascii=False, indent=0)
                + "\n")
    print("%s: %d ids, %d texts" % (name, len(tok), len(rows)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    args = ap.parse_args()
    data = os.path.join(args.root, "tests/models/data")
    with tempfile.TemporaryDirectory() as tmp:
        folders = {n: os.path.join(data, n) for n in ("tok_t5", "tok_marian", "tok_bart",
                                                       "tok_bart_slow")}
        for f in folders.values():
            shutil.rmtree(f, ignore_errors=True)
        tok = t5(tmp, folders["tok_t5"])
        write_goldens(args.root, "tok_t5", tok, ["</s>", "<pad>", "<unk>", "<extra_id_0>",
                                                 "<extra_id_7>"])
        folders["tok_t5_hub"] = os.path.join(data, "tok_t5_hub")
        shutil.rmtree(folders["tok_t5_hub"], ignore_errors=True)
        tok = t5_hub(folders["tok_t5"], folders["tok_t5_hub"])
        write_goldens(args.root, "tok_t5_hub", tok, ["</s>", "<pad>", "<extra_id_0>"])
        tok = marian(tmp, folders["tok_marian"])
        write_goldens(args.root, "tok_marian", tok, ["</s>", "<unk>", "<pad>", ">>de<<"])
        fast, slow = bart(tmp, folders["tok_bart"], folders["tok_bart_slow"])
        specials = ["<s>", "</s>", "<pad>", "<unk>", "<mask>"]
        write_goldens(args.root, "tok_bart", fast, specials)
        write_goldens(args.root, "tok_bart_slow", slow, specials)
        bpe_dir = os.path.join(data, "spm_bpe")
        shutil.rmtree(bpe_dir, ignore_errors=True)
        os.makedirs(bpe_dir)
        shutil.copy(train_spm(tmp, "bpe", PROSE, 420, "bpe", byte_fallback=True),
                    os.path.join(bpe_dir, "bpe.model"))
        write_spm_goldens(args.root, ["tests/models/data/tok_t5/spiece.model",
                                      "tests/models/data/tok_marian/source.spm",
                                      "tests/models/data/tok_marian/target.spm",
                                      "tests/models/data/spm_bpe/bpe.model"])


if __name__ == "__main__":
    main()
