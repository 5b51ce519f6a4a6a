#!/usr/bin/env python3
"""Writes text/unicode_tables.c: the Unicode properties the tokenizers need. The reference is
Hugging Face's fast tokenizers (the Rust `tokenizers` library that AutoTokenizer and
sentence-transformers run), whose crates carry Unicode tables of their own, older than Python's
(Rust's unicode_categories for BertNormalizer's control / punctuation / non-spacing-mark tests,
unicode-normalization-alignments for NFD / NFKD, a CJK range list with a typo). So the properties
start from Python's unicodedata and every one the fast tokenizer decides differently is taken from
the library itself, probed code point by code point (about 1.5 minutes). Run with the Python whose
tokenizers produced tests/models/golden/tokenizer_ids.txt (tokenizers 0.15.2):

    python3 tools/dev/gen_unicode_tables.py > text/unicode_tables.c

Nothing here is needed at run time; the output is committed. The composition pairs (for NFC) are
written last, so the tables before them do not change when they are added to.
"""
import sys
import unicodedata

# Property bits; text/unicode.h mirrors these values.
REMOVE = 1 << 0       # dropped by BertNormalizer clean_text: U+0000, U+FFFD, category C* but Cn, \t \n \r
SPACE = 1 << 1        # _is_whitespace: ' ', \t, \n, \r, category Zs (becomes ' ')
SPLIT = 1 << 2        # str.split() separator (str.isspace) that survives cleaning (U+2028, U+2029)
PUNCT = 1 << 3        # _is_punctuation: ASCII non-alphanumeric or category P*
MN = 1 << 4           # category Mn: dropped by accent stripping after NFD
STRIP = 1 << 5        # dropped by the fast tokenizer's accent stripping (Rust unicode_categories'
                      # is_mark_nonspacing: Mn of its older Unicode); MN stays Python's Mn
# bit 6: unused (bits 5 and 6 once held Python's Final_Sigma context, which the fast tokenizer lacks)
CJK = 1 << 7          # BasicTokenizer._is_chinese_char
CCC_SHIFT = 8         # canonical combining class in bits 8..15
# For the BPE pre-tokenizers' patterns (Hugging Face tokenizers' regexes): \p{L}, \p{N}, and \s as
# the regex engines define it, the Unicode White_Space property (unicodedata does not expose it; the
# list has been stable since Unicode 6.3).
LETTER = 1 << 16      # general category L*
NUMBER = 1 << 17      # general category N*
WHITE_SPACE = 1 << 18 # White_Space
WHITE_SPACE_CPS = set(range(0x9, 0xE)) | {0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F,
                                          0x3000} | set(range(0x2000, 0x200B))

# BasicTokenizer._is_chinese_char's ranges as the fast tokenizer has them: its Rust copy reads
# 0x2B920 where Python has 0x2B820, so U+2B820..2B91F are not split off there (the probe checks it).
CJK_RANGES = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3


def is_surrogate(cp):
    return 0xD800 <= cp <= 0xDFFF


class FastProbe:
    """What the fast tokenizer does with one code point alone."""

    def __init__(self):
        import tokenizers
        from tokenizers import normalizers, pre_tokenizers
        self.version = tokenizers.__version__
        bert = normalizers.BertNormalizer
        self.clean = bert(clean_text=True, handle_chinese_chars=False, strip_accents=False,
                          lowercase=False)
        self.strip = bert(clean_text=False, handle_chinese_chars=False, strip_accents=True,
                          lowercase=False)
        self.lower = bert(clean_text=False, handle_chinese_chars=False, strip_accents=False,
                          lowercase=True)
        self.cjk = bert(clean_text=False, handle_chinese_chars=True, strip_accents=False,
                        lowercase=False)
        self.bert_pre = pre_tokenizers.BertPreTokenizer()
        self.nfd, self.nfkd, self.nfc = normalizers.NFD(), normalizers.NFKD(), normalizers.NFC()

    def removed(self, ch):
        return self.clean.normalize_str(ch) == ""

    def punct(self, ch):
        return [t for t, _ in self.bert_pre.pre_tokenize_str("a" + ch + "a")] == ["a", ch, "a"]

    def stripped(self, ch):
        return self.strip.normalize_str(ch) == ""

    def chinese(self, ch):
        return self.cjk.normalize_str(ch) == " " + ch + " "


PROBE = None


def props_of(cp):
    ch = chr(cp)
    cat = unicodedata.category(ch)
    p = 0
    # The fast tokenizer's BertNormalizer (the `tokenizers` library, what sentence-transformers
    # runs) drops controls, formats, surrogates and private use, but keeps unassigned code points
    # (category Cn), which then become [UNK]; Python's slow BertTokenizer drops those too.
    if cp == 0 or cp == 0xFFFD or (cat.startswith("C") and cat != "Cn" and ch not in "\t\n\r"):
        p |= REMOVE
    if ch in " \t\n\r" or cat == "Zs":
        p |= SPACE
    if ch.isspace() and not p & (REMOVE | SPACE):
        p |= SPLIT
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126) \
            or cat.startswith("P"):
        p |= PUNCT
    if cat == "Mn":
        p |= MN
    if any(a <= cp <= b for a, b in CJK_RANGES):
        p |= CJK
    # The fast tokenizer's own answers where its tables differ from Python's (about 760 code
    # points, all assigned or recategorised after its crates' Unicode version).
    p &= ~(REMOVE | PUNCT | CJK)
    p |= (REMOVE if PROBE.removed(ch) else 0) | (PUNCT if PROBE.punct(ch) else 0) \
        | (CJK if PROBE.chinese(ch) else 0) | (STRIP if PROBE.stripped(ch) else 0)
    p |= unicodedata.combining(ch) << CCC_SHIFT
    if cat.startswith("L"):
        p |= LETTER
    if cat.startswith("N"):
        p |= NUMBER
    if cp in WHITE_SPACE_CPS:
        p |= WHITE_SPACE
    return p


def composition_pairs():
    """(first, second, composite) for every character whose one-step canonical decomposition is a
    pair and that NFC gives back: that leaves out the full composition exclusions (the
    Composition_Exclusion list, singletons, and non-starter decompositions such as U+0344)."""
    pairs = []
    for cp in range(0x110000):
        if is_surrogate(cp) or HANGUL_FIRST <= cp <= HANGUL_LAST:
            continue
        d = unicodedata.decomposition(chr(cp))
        if not d or d.startswith("<"):
            continue
        parts = [int(x, 16) for x in d.split()]
        if len(parts) != 2:
            continue
        ch = chr(cp)
        if unicodedata.normalize("NFC", unicodedata.normalize("NFD", ch)) != ch:
            continue  # excluded from composition
        if unicodedata.normalize("NFC", chr(parts[0]) + chr(parts[1])) != ch:
            continue  # a pair that does not recompose (a non-starter's decomposition)
        if PROBE.nfc.normalize_str(chr(parts[0]) + chr(parts[1])) != ch:
            continue  # newer than the fast tokenizer's normalization tables
        pairs.append((parts[0], parts[1], cp))
    pairs.sort()
    return pairs


def main():
    global PROBE
    PROBE = FastProbe()
    runs = []
    lower = []
    decomp = []
    prev = None
    for cp in range(0x110000):
        p = 0 if is_surrogate(cp) else props_of(cp)
        if is_surrogate(cp):
            p = REMOVE  # never reached: UTF-8 validation rejects surrogates
        if p != prev:
            runs.append((cp, p))
            prev = p
        if is_surrogate(cp):
            continue
        ch = chr(cp)
        low = ch.lower()
        assert PROBE.lower.normalize_str(ch) == low, hex(cp)  # Rust's to_lowercase agrees
        if low != ch:
            assert len(low) <= 3, hex(cp)
            lower.append((cp, [ord(c) for c in low]))
        if not HANGUL_FIRST <= cp <= HANGUL_LAST:
            d = PROBE.nfd.normalize_str(ch)  # the fast tokenizer's NFD (older than Python's)
            if d != ch:
                assert len(d) <= 4, hex(cp)
                decomp.append((cp, [ord(c) for c in d]))

    out = sys.stdout
    out.write("/* GENERATED by tools/dev/gen_unicode_tables.py from Python %s, Unicode %s, and the fast\n"
              " * tokenizer's answers (tokenizers %s) where they differ: do not edit.\n"
              " * Property runs, lower-case mappings and canonical decompositions for the tokenizer. */\n"
              % (sys.version.split()[0], unicodedata.unidata_version, PROBE.version))
    out.write('#include "text/unicode.h"\n\n/* clang-format off */\n')
    out.write('const char vkf_unicode_version[] = "%s";\n\n' % unicodedata.unidata_version)
    out.write("const vkf_unicode_run vkf_unicode_runs[] = {\n")
    for i in range(0, len(runs), 4):
        out.write("  " + " ".join("{0x%X, 0x%X}," % r for r in runs[i:i + 4]) + "\n")
    out.write("};\nconst size_t vkf_unicode_run_count = sizeof(vkf_unicode_runs) / "
              "sizeof(vkf_unicode_runs[0]);\n\n")

    def write_map(name, rows):
        out.write("const vkf_unicode_map vkf_unicode_%s[] = {\n" % name)
        for i in range(0, len(rows), 3):
            cells = []
            for cp, seq in rows[i:i + 3]:
                cells.append("{0x%X, %d, {%s}}," % (cp, len(seq), ", ".join("0x%X" % c for c in seq)))
            out.write("  " + " ".join(cells) + "\n")
        out.write("};\nconst size_t vkf_unicode_%s_count = sizeof(vkf_unicode_%s) / "
                  "sizeof(vkf_unicode_%s[0]);\n\n" % (name, name, name))

    write_map("lower", lower)
    write_map("decomp", decomp)

    comp = composition_pairs()
    out.write("/* Canonical composition: (first, second) -> primary composite, sorted by (first, "
              "second);\n * the full composition exclusions left out, Hangul syllables algorithmic. "
              "*/\n")
    out.write("const vkf_unicode_pair vkf_unicode_comp[] = {\n")
    for i in range(0, len(comp), 4):
        out.write("  " + " ".join("{0x%X, 0x%X, 0x%X}," % c for c in comp[i:i + 4]) + "\n")
    out.write("};\nconst size_t vkf_unicode_comp_count = sizeof(vkf_unicode_comp) / "
              "sizeof(vkf_unicode_comp[0]);\n")

    # NFKD of the characters whose compatibility decomposition differs from the canonical one (up
    # to 18 code points: U+FDFA), as spans of one flat array.
    spans, data = [], []
    for cp in range(0x110000):
        if is_surrogate(cp) or HANGUL_FIRST <= cp <= HANGUL_LAST:
            continue
        ch = chr(cp)
        kd = PROBE.nfkd.normalize_str(ch)
        if kd != ch and kd != PROBE.nfd.normalize_str(ch):
            assert len(kd) <= 18, hex(cp)
            spans.append((cp, len(data), len(kd)))
            data.extend(ord(c) for c in kd)
    out.write("\n/* Compatibility decompositions (NFKD) that differ from the canonical ones: code "
              "point,\n * start in vkf_unicode_compat_data, count; sorted by code point. */\n")
    out.write("const vkf_unicode_span vkf_unicode_compat[] = {\n")
    for i in range(0, len(spans), 4):
        out.write("  " + " ".join("{0x%X, %d, %d}," % c for c in spans[i:i + 4]) + "\n")
    out.write("};\nconst size_t vkf_unicode_compat_count = sizeof(vkf_unicode_compat) / "
              "sizeof(vkf_unicode_compat[0]);\n")
    out.write("const uint32_t vkf_unicode_compat_data[] = {\n")
    for i in range(0, len(data), 10):
        out.write("  " + " ".join("0x%X," % c for c in data[i:i + 10]) + "\n")
    out.write("};\n")


if __name__ == "__main__":
    main()
