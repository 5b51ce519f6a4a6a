#!/usr/bin/env python3
"""Builds small tokenizers with Hugging Face `tokenizers` 0.15.2, one per family of tokenizer.json
components (normalizers, pre-tokenizers, post-processors, decoders, WordPiece/WordLevel models and
BPE's subword affixes), and writes the references tests/models/test_bpe.c and
tests/cli/test_tokenize.sh compare against, in make_bpe_golden.py's format:

  tests/models/data/tokcomp_<name>/tokenizer.json    the tokenizer
  tests/models/golden/bpe/tokcomp_<name>.json        what `vkf tokenize --json --model DIR TEXTS...` prints
  tests/models/golden/bpe/tokcomp_<name>_decode.json {"cases": [{"ids", "skip_special", "text"}]}

    python3 -m venv /tmp/tokvenv && /tmp/tokvenv/bin/pip install tokenizers==0.15.2
    /tmp/tokvenv/bin/python tools/goldens/make_tokenizer_components_golden.py [--root .]

Training runs on make_bpe_golden.py's fixed corpus without shuffling, so reruns rewrite the same
files.
"""
import argparse
import json
import os

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers import trainers

from make_bpe_golden import TEXTS, corpus, special_texts

# Beyond make_bpe_golden's texts: what these components treat specially.
EXTRA_TEXTS = [
    "Hello, World!! ¿Qué tal? «quotes» — dash… (parens) [brackets] {braces}",
    "ÀÉÎÕÜ ǅ İstanbul ΣΑΣ ß Ⅻ ⓐⓑ ① ½ x²",
    "a--b---c ab ab-ab abab e-e ee  eee",
    "don't do not it's we 've they 're I 'm . , ! ?",
    "CJK 中文字符 mixed 漢字kanji ㄅ 한국어",
    "ctrl\x01soh\x7fdel\x9fapc\u200bzw\ufeffbom \ufffd repl\u00adshy",
    "tab\t\tnl\n\ncr\r\rvt\x0bff\x0c nbsp\u00a0thin\u2009ideo\u3000",
    "deva देवनागरी \u0915\u093e\u0902 thai ภาษา\u0e31 a\u20dd",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "Under_score snake_case CamelCase x86_64 v1.2.3-rc4",
]
SPECIALS_BERT = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Texts only some families see (so the others' goldens stay as they were).
SCRIPT_TEXTS = [
    "どこで生れ。Yes", "Apples are りんご 林檎", "  leading spaces then Ελληνικά and кириллица",
    "ーー長音ーカタカナ ひらがな 한국어 漢字", "mixed123数字٣٤ and עברית text", " ",
    "á̈ combining, ﷺ ligature, 🙂 emoji 🇫🇷 flag",
]
FAMILY_TEXTS = {"unicode_scripts": SCRIPT_TEXTS, "unicode_scripts_digits": SCRIPT_TEXTS}


def wordpiece_trainer(**kw):
    return trainers.WordPieceTrainer(vocab_size=500, special_tokens=SPECIALS_BERT,
                                     show_progress=False, **kw)


def bert():
    """BERT's fast tokenizer: BertNormalizer (lowercase, accents stripped), BertPreTokenizer,
    WordPiece, BertProcessing and the WordPiece decoder with its clean-up."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(corpus(), trainer=wordpiece_trainer())
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    return tok, ["[CLS]", "[SEP]", "[UNK]"]


def bert_cased():
    """Cased BertNormalizer keeping Chinese unpadded but stripping accents, the Whitespace
    pre-tokenizer, a short max_input_chars_per_word, TemplateProcessing, no decoder clean-up."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=12))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False,
                                                strip_accents=True, lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    tok.train_from_iterator(corpus(), trainer=wordpiece_trainer())
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return tok, ["[CLS]", "[SEP]", "[UNK]"]


def bert_raw():
    """BertNormalizer with nothing but Chinese padding (no cleaning, no lower-casing, accents
    kept as strip_accents None follows lowercase), WordPiece with a "@@" prefix."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="@@"))
    tok.normalizer = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True,
                                                strip_accents=None, lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="@@", cleanup=True)
    tok.train_from_iterator(corpus(), trainer=wordpiece_trainer(continuing_subword_prefix="@@"))
    return tok, ["[CLS]", "[SEP]", "[UNK]"]


def norms():
    """WordLevel behind Sequence[NFKD, StripAccents, Lowercase, Strip(left only)] and Whitespace,
    RobertaProcessing; no decoder (tokens joined by spaces)."""
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(),
                                           normalizers.Lowercase(),
                                           normalizers.Strip(left=True, right=False)])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["<s>", "</s>", "<unk>", "<pad>"]
    tok.train_from_iterator(corpus(), trainer=trainers.WordLevelTrainer(
        vocab_size=400, special_tokens=specials, show_progress=False))
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")),
                                                      trim_offsets=True, add_prefix_space=True)
    return tok, specials


def norms_nfc():
    """WordLevel behind Sequence[NFC, Strip(right only)], WhitespaceSplit, and StripAccents
    alone after NFD in the model's pre-normalization; the ctc decoder without clean-up."""
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(),
                                           normalizers.NFC(),
                                           normalizers.Strip(left=False, right=True)])
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=False)
    specials = ["<pad>", "|", "<unk>"]
    tok.train_from_iterator(corpus(), trainer=trainers.WordLevelTrainer(
        vocab_size=300, special_tokens=specials, show_progress=False))
    return tok, specials


def ctc():
    """WordLevel over Whitespace words with the CTC decoder (repeats fused, <pad> dropped, | a
    space, clean-up); the pad and delimiter are plain added tokens, so they reach the decoder."""
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=True)
    tok.train_from_iterator(corpus(), trainer=trainers.WordLevelTrainer(
        vocab_size=300, special_tokens=["<unk>"], show_progress=False))
    tok.add_tokens(["<pad>", "|"])
    return tok, ["<pad>", "|"]


def bpe_model(pre, **kw):
    tok = Tokenizer(models.BPE(unk_token="<unk>", **kw))
    tok.pre_tokenizer = pre
    trainer_kw = {k: v for k, v in kw.items() if k in ("continuing_subword_prefix",
                                                         "end_of_word_suffix")}
    tok.train_from_iterator(corpus(), trainer=trainers.BpeTrainer(
        vocab_size=450, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False,
        **trainer_kw))
    return tok


def punctuation(behavior):
    """Sequence[WhitespaceSplit, Punctuation(behavior)] in front of a plain BPE."""
    tok = bpe_model(pre_tokenizers.Whitespace())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Punctuation(behavior)])
    return tok, ["<s>", "</s>", "<unk>"]


def split(pattern, behavior, invert):
    """Split with a String pattern, the behavior and invert, then BPE."""
    tok = bpe_model(pre_tokenizers.Whitespace())
    tok.pre_tokenizer = pre_tokenizers.Split(pattern, behavior, invert=invert)
    return tok, ["<s>", "</s>", "<unk>"]


def split_regex(pattern, behavior, invert=False):
    """Split with a Regex pattern (Oniguruma in tokenizers), the behavior and invert, then a BPE
    trained behind Whitespace and ByteLevel's alphabet (so every character has a token)."""
    tok = bpe_model(pre_tokenizers.Whitespace())
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior, invert=invert)
    return tok, ["<s>", "</s>", "<unk>"]


def replace_regex():
    """Replace normalizers with Regex patterns (a class, an empty lookahead match that inserts,
    alternation with a case-insensitive group) and a Regex Replace decoder, around a BPE."""
    tok = bpe_model(pre_tokenizers.Whitespace())
    tok.normalizer = normalizers.Sequence([
        normalizers.Replace(Regex(r"[0-9]+"), "#"),
        normalizers.Replace(Regex(r"(?=[A-Z])"), "^"),
        normalizers.Replace(Regex(r"(?i:the|a)\b"), "T"),
    ])
    tok.decoder = decoders.Sequence([decoders.Replace(Regex(r"\^+"), ""),
                                     decoders.Replace(Regex(r"#"), "0")])
    return tok, ["<s>", "</s>", "<unk>"]


def unicode_scripts(digits=False):
    """UnicodeScripts (pieces cut where the script changes; a space belongs to both sides),
    alone or before Digits, in front of a plain BPE."""
    tok = bpe_model(pre_tokenizers.Whitespace())
    pre = pre_tokenizers.UnicodeScripts()
    if digits:
        pre = pre_tokenizers.Sequence([pre, pre_tokenizers.Digits(individual_digits=True)])
    tok.pre_tokenizer = pre
    return tok, ["<s>", "</s>", "<unk>"]


def chardelim():
    """CharDelimiterSplit(" ") before a BPE with end_of_word_suffix </w> and the BPEDecoder."""
    tok = bpe_model(pre_tokenizers.CharDelimiterSplit(" "), end_of_word_suffix="</w>")
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    return tok, ["<s>", "</s>", "<unk>"]


def bpe_prefix():
    """BPE with continuing_subword_prefix ## (its merges drop the right side's prefix) behind
    BertPreTokenizer, decoded by WordPiece, with Sequence[ByteLevel, BertProcessing]."""
    tok = bpe_model(pre_tokenizers.BertPreTokenizer(), continuing_subword_prefix="##")
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.BertProcessing(("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")))])
    return tok, ["<s>", "</s>", "<unk>"]


def metaspace_first():
    """Metaspace with prepend_scheme "first" (only the text's first segment gets the prefix),
    decoded by Sequence[Metaspace, Replace]
    (0.15.2's Strip decoder panics on the empty tokens Metaspace leaves)."""
    tok = bpe_model(pre_tokenizers.Metaspace(prepend_scheme="first"))
    tok.add_tokens(["<sep>"])
    tok.decoder = decoders.Sequence([decoders.Metaspace(add_prefix_space=True),
                                     decoders.Replace("e", "E")])
    return tok, ["<s>", "<sep>", "</s>"]


FAMILIES = {
    "bert": bert,
    "bert_cased": bert_cased,
    "bert_raw": bert_raw,
    "norms": norms,
    "norms_nfc": norms_nfc,
    "ctc": ctc,
    "punct_removed": lambda: punctuation("removed"),
    "punct_isolated": lambda: punctuation("isolated"),
    "punct_prev": lambda: punctuation("merged_with_previous"),
    "punct_next": lambda: punctuation("merged_with_next"),
    "punct_contiguous": lambda: punctuation("contiguous"),
    "split_removed": lambda: split(" ", "removed", False),
    "split_isolated_invert": lambda: split("ab", "isolated", True),
    "split_prev": lambda: split("e", "merged_with_previous", False),
    "split_next_invert": lambda: split(" ", "merged_with_next", True),
    "split_contiguous": lambda: split("-", "contiguous", False),
    "split_removed_invert": lambda: split("a", "removed", True),
    "split_regex_isolated": lambda: split_regex(r"\p{Lu}\p{Ll}*|\d{1,2}|[^\s\p{L}\d]+",
                                                "isolated"),
    "split_regex_removed": lambda: split_regex(r"\s+", "removed"),
    "split_regex_prev": lambda: split_regex(r"[aeiouäöü]", "merged_with_previous"),
    "split_regex_next_invert": lambda: split_regex(r"\b\w{2,}\b", "merged_with_next", True),
    "split_regex_contiguous": lambda: split_regex(r"(?i:ab|e)|\.", "contiguous"),
    "split_regex_empty": lambda: split_regex(r"x*|(?=\p{N})", "isolated"),
    "split_regex_lookaround": lambda: split_regex(
        r"\s+(?!\S)|\s+|(?<=\p{L})\p{N}+|'(?:s|t|re)|[^\s]+?(?=[,.!?])", "isolated"),
    "split_gpt2_removed_invert": lambda: split_regex(
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
        "removed", True),
    "replace_regex": replace_regex,
    "unicode_scripts": unicode_scripts,
    "unicode_scripts_digits": lambda: unicode_scripts(True),
    "chardelim": chardelim,
    "bpe_prefix": bpe_prefix,
    "metaspace_first": metaspace_first,
}


def write(root, name, tok, specials):
    name = "tokcomp_" + name
    folder = os.path.join(root, "tests/models/data", name)
    os.makedirs(folder, exist_ok=True)
    text = json.dumps(json.loads(tok.to_str()), ensure_ascii=False, indent=1) + "\n"
    assert len(text.encode()) < 60_000, (name, len(text.encode()))
    path = os.path.join(folder, "tokenizer.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    tok = Tokenizer.from_file(path)
    rows, decode_cases = [], []
    for t in TEXTS + EXTRA_TEXTS + FAMILY_TEXTS.get(name[len("tokcomp_"):], []) + special_texts(specials):
        ids = list(tok.encode(t).ids)
        rows.append({"text": t, "ids": ids, "tokens": [tok.id_to_token(i) for i in ids]})
        cut = [ids, ids[:-1]] if len(ids) > 1 else [ids]
        for case_ids in cut:
            for skip in (False, True):
                decode_cases.append({"ids": case_ids, "skip_special": skip,
                                     "text": tok.decode(case_ids, skip_special_tokens=skip)})
    model_name = "tests/models/data/" + name
    out = os.path.join(root, "tests/models/golden/bpe")
    with open(os.path.join(out, name + ".json"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"model": model_name, "texts": rows}, ensure_ascii=False) + "\n")
    with open(os.path.join(out, name + "_decode.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"model": model_name, "cases": decode_cases}, ensure_ascii=False,
                           indent=0) + "\n")
    print("%s: vocab %d, %d bytes" % (name, tok.get_vocab_size(), len(text.encode())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    ap.add_argument("names", nargs="*", help="families to write (default: all)")
    args = ap.parse_args()
    for name in args.names or FAMILIES:
        write(args.root, name, *FAMILIES[name]())


if __name__ == "__main__":
    main()
