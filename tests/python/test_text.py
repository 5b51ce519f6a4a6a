"""tokenize / decode against Hugging Face's tokenizers (the goldens `vkf tokenize --json` and the
seq2seq tokenizer tests check), and embed() against sentence-transformers' vectors."""

import os

import numpy as np
import pytest

import vkformer

from conftest import GOLDEN, ROOT, data, load_json, load_npy, minilm_dir

TOKENIZE_GOLDENS = ["forward/tokenize_bert_tiny.json", "seq2seq/tok_t5.json", "seq2seq/tok_bart.json",
                    "seq2seq/tok_marian.json"]
DECODE_GOLDENS = ["tok_t5", "tok_bart", "tok_marian", "tok_t5_hub"]


def model_dir(doc):
    return os.path.join(ROOT, doc["model"])


@pytest.mark.parametrize("name", TOKENIZE_GOLDENS)
def test_tokenize(name):
    doc = load_json(os.path.join(GOLDEN, name))
    with vkformer.Tokenizer.load(model_dir(doc)) as tok:
        for case in doc["texts"]:
            enc = tok.tokenize(case["text"])
            assert (enc.ids, enc.tokens) == (case["ids"], case["tokens"]), case["text"]


def test_tokenize_through_the_model(bert_tiny, minilm):
    for model, name in [(bert_tiny, "tokenize_bert_tiny.json"), (minilm, "tokenize_minilm.json")]:
        doc = load_json(os.path.join(GOLDEN, "forward", name))
        for case in doc["texts"]:
            assert model.tokenize(case["text"]) == (case["ids"], case["tokens"]), case["text"]
    enc = bert_tiny.tokenize("A man is eating food.", add_special_tokens=False)
    assert enc.tokens == ["a", "man", "is", "eating", "food", "."]


@pytest.mark.parametrize("name", DECODE_GOLDENS)
def test_decode(name):
    doc = load_json(os.path.join(GOLDEN, "seq2seq", name + "_decode.json"))
    with vkformer.Tokenizer.load(model_dir(doc)) as tok:
        for case in doc["cases"]:
            got = tok.decode(np.array(case["ids"]), skip_special_tokens=case["skip_special"])
            assert got == case["text"], case


def test_decode_through_the_model(minilm):
    assert minilm.decode([101, 7592, 1010, 2088, 999, 102]) == "[CLS] hello, world! [SEP]"
    assert minilm.decode([101, 7592, 1010, 2088, 999, 102], skip_special_tokens=True) == "hello, world!"
    assert minilm.decode([]) == ""


def test_tokenizer_errors(tmp_path, bert_tiny):
    with pytest.raises(vkformer.Error, match="no-such-dir"):
        vkformer.Tokenizer.load(tmp_path / "no-such-dir")
    with pytest.raises(vkformer.InvalidArgumentError, match="219"):
        bert_tiny.decode([2, 219])
    with pytest.raises(vkformer.InvalidArgumentError, match="flat sequence of integers"):
        bert_tiny.decode([1.5])
    with pytest.raises(TypeError, match="str"):
        bert_tiny.tokenize(b"bytes")
    with pytest.raises(vkformer.InvalidArgumentError, match="text: a NUL character at index 1"):
        bert_tiny.tokenize("a\0b")
    with pytest.raises(vkformer.InvalidArgumentError, match=r"texts\[1\]: a NUL character"):
        bert_tiny.embed(["fine", "not\0fine"])
    with vkformer.Model.load(data("gpt2_tiny"), device=bert_tiny.device) as m:
        with pytest.raises(vkformer.NotFoundError):
            m.tokenize("hello")


def sentences():
    path = os.path.join(ROOT, "tests/models/embedding_sentences.txt")
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]


def test_embed(minilm):
    texts = sentences()
    want = load_npy("bert", "minilm_embeddings.npy")
    got = minilm.embed(texts)
    assert got.shape == want.shape == (len(texts), 384) and got.dtype == np.float32
    cos = np.sum(got * want, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    assert cos.min() >= 0.9999, cos
    # one text alone gives its row of the batch
    one = minilm.embed(texts[3])
    assert one.shape == (1, 384) and float(np.dot(one[0], want[3])) >= 0.9999


def test_embed_errors(minilm, device):
    with pytest.raises(vkformer.InvalidArgumentError, match="no texts"):
        minilm.embed([])
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        minilm.embed(["a", 3])
    with vkformer.Model.load(data("vit_tiny"), device=device) as m:
        with pytest.raises(vkformer.Error):
            m.embed(["a"])


def test_minilm_found():
    assert os.path.isfile(os.path.join(minilm_dir(), "config.json"))
