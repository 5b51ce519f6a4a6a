"""generate() / stream() against transformers 4.38.2's greedy generate(use_cache=True): from ids,
the decoder goldens of tools/goldens/make_decoder_golden.py (tests/cli/test_generate.sh checks the same
through `vkf generate`); from text, tools/goldens/make_python_golden.py's prompts through the GPT-2
tokenizer, the callback's pieces concatenating to the returned text; beam search and the
encoder-decoders against their goldens (tests/cli/test_generate_beam.sh, test_seq2seq.sh)."""

import json
import os
import shutil

import pytest

import vkformer

from conftest import ROOT, data, golden, load_json, load_npy

PYGOLDEN = os.path.join(ROOT, "tests/python/golden")


def prompts():
    with open(golden("decoder", "generate_prompts.txt")) as f:
        return [[int(x) for x in line.split(",")] for line in f if line.strip()]


@pytest.mark.parametrize("model", ["gpt2_tiny", "llama_tiny", "mistral_tiny", "qwen2_tiny"])
def test_greedy_from_ids(device, model):
    with vkformer.Model.load(data(model), device=device) as m:
        for i, p in enumerate(prompts()[:2]):
            gen = m.generate(p, max_new_tokens=32, do_sample=False, ignore_eos=True, details=True)
            want = load_npy("decoder", "%s_generate_%d.npy" % (model, i)).tolist()
            assert gen.ids == want[:32] and gen.text == "" and gen.score == 0


def test_list_of_prompts(device):
    """A list of prompts gives a list: each what its prompt gets alone (ids and text)."""
    with vkformer.Model.load(data("llama_tiny"), device=device) as m:
        ps = prompts()[:2]
        each = [m.generate(p, 8, do_sample=False, ignore_eos=True, details=True).ids for p in ps]
        got = m.generate(ps, 8, do_sample=False, ignore_eos=True, details=True)
        assert [g.ids for g in got] == each
        assert m.generate(tuple(ps), 8, do_sample=False, ignore_eos=True) == ["", ""]
        with pytest.raises(ValueError, match="callback takes one prompt"):
            m.generate(ps, 2, callback=print)


@pytest.fixture(scope="module")
def talk(device, tmp_path_factory):
    """gpt2_tiny with the GPT-2 tokenizer, as tests/cli/test_generate.sh pairs them."""
    d = tmp_path_factory.mktemp("talk")
    for f in os.listdir(data("gpt2_tiny")):
        shutil.copy(os.path.join(data("gpt2_tiny"), f), d)
    shutil.copy(os.path.join(data("gpt2"), "tokenizer.json"), d)
    with vkformer.Model.load(d, device=device) as m:
        yield m


def test_text_in_text_out(talk):
    for case in load_json(os.path.join(PYGOLDEN, "gpt2_tiny_text.json")):
        assert talk.tokenize(case["prompt"]).ids == case["prompt_ids"]
        pieces = []
        gen = talk.generate(case["prompt"], max_new_tokens=12, do_sample=False, ignore_eos=True,
                            callback=pieces.append, details=True)
        assert gen.ids == case["generated_ids"], case["prompt"]
        assert gen.text == case["text"] and "".join(pieces) == gen.text, (pieces, case)
        assert talk.decode(gen.ids) == case["text"]
        # without details: the text alone; stream(): the same pieces
        assert talk.generate(case["prompt"], 12, do_sample=False, ignore_eos=True) == case["text"]
        assert "".join(talk.stream(case["prompt"], 12, do_sample=False, ignore_eos=True)) == case["text"]


def test_callback_stops_and_raises(talk):
    calls = []
    gen = talk.generate([40, 73], max_new_tokens=20, do_sample=False, ignore_eos=True, details=True,
                        callback=lambda piece: calls.append(piece) or len(calls) == 3)
    full = talk.generate([40, 73], max_new_tokens=20, do_sample=False, ignore_eos=True, details=True)
    assert len(calls) == 3 and gen.ids == full.ids[:3]

    class Boom(Exception):
        pass

    def boom(piece):
        raise Boom("from the callback")

    with pytest.raises(Boom, match="from the callback"):
        talk.generate("zq", 5, do_sample=False, ignore_eos=True, callback=boom)
    # the model still works afterwards
    case = load_json(os.path.join(PYGOLDEN, "gpt2_tiny_text.json"))[0]
    assert talk.generate(case["prompt"], 12, do_sample=False, ignore_eos=True) == case["text"]


def test_stream_left_early(talk):
    it = talk.stream("zq", 12, do_sample=False, ignore_eos=True)
    first = next(it)
    it.close()  # stops the generation and joins its thread
    case = load_json(os.path.join(PYGOLDEN, "gpt2_tiny_text.json"))[0]
    assert case["text"].startswith(first)
    assert talk.generate("zq", 12, do_sample=False, ignore_eos=True) == case["text"]


def test_sampling_is_seeded(talk):
    a = talk.generate("zq", 8, do_sample=True, temperature=0.9, top_k=0, top_p=0.95, seed=7, ignore_eos=True, details=True)
    b = talk.generate("zq", 8, do_sample=True, temperature=0.9, top_k=0, top_p=0.95, seed=7, ignore_eos=True, details=True)
    assert a == b and len(a.ids) == 8


def test_generate_errors(talk, bert_tiny, device):
    with pytest.raises(vkformer.Error, match="BertForMaskedLM is not a language model"):
        bert_tiny.generate([1, 2], 4)
    with pytest.raises(vkformer.Error, match="outside the model's vocabulary of 256"):
        talk.generate("a b", 4)
    with pytest.raises(vkformer.InvalidArgumentError, match="unknown option greedy"):
        talk.generate("zq", 4, greedy=True)
    with pytest.raises(vkformer.InvalidArgumentError, match="max_new_tokens 0"):
        talk.generate("zq", 0)
    with pytest.raises(vkformer.InvalidArgumentError, match="no ids"):
        talk.generate([], 4)
    # 0 is the C options' "default": a 0 the caller sets is refused, as vkf and transformers do
    for option, value, needle in (("temperature", 0, "temperature 0"), ("top_p", 0, "top_p 0"),
                                  ("top_p", 1.5, r"top_p 1.5, expected in \(0, 1\]"),
                                  ("num_beams", 0, "num_beams 0"),
                                  ("repetition_penalty", 0, "repetition_penalty 0")):
        with pytest.raises(vkformer.InvalidArgumentError, match=needle):
            talk.generate("zq", 4, do_sample=True, **{option: value})
    # a NUL would end the C string: refused, naming the argument
    with pytest.raises(vkformer.InvalidArgumentError, match="prompt: a NUL character at index 2"):
        talk.generate("zq\0zq", 4)
    with pytest.raises(vkformer.InvalidArgumentError, match=r"stop_strings\[1\]: a NUL"):
        talk.generate("zq", 4, stop_strings=["a", "b\0"])
    with vkformer.Model.load(data("llama_tiny"), device=device) as m:
        with pytest.raises(vkformer.Error, match="tokenizer.json"):
            m.generate("hello", 4)
        with pytest.raises(vkformer.Error, match="256"):
            m.generate([1, 256], 4)
        with pytest.raises(vkformer.Error, match="exceeds the context of 20"):
            m.generate(prompts()[0], max_new_tokens=32, ctx=20)
        with pytest.raises(vkformer.Error, match="256"):
            next(iter(m.stream([1, 256], 4)))


def case_dir(tmp_path, model, config):
    d = tmp_path / model
    shutil.copytree(data(model), d)
    (d / "generation_config.json").write_text(json.dumps(config))
    return d


BEAM_CASES = [c for c in load_json(golden("decoder_beam", "cases.json")) if len(c["prompts"]) == 1]


@pytest.mark.parametrize("case", BEAM_CASES, ids=[c["name"] for c in BEAM_CASES])
def test_beam_search(device, tmp_path, case):
    """transformers' generate(num_beams=N) (tools/goldens/make_decoder_beam_golden.py), the settings read
    from generation_config.json, num_beams also given as an option."""
    config = dict(case["generation_config"])
    beams = config.pop("num_beams") if case["name"].endswith("_beams4") else None
    with vkformer.Model.load(case_dir(tmp_path, case["model"], config), device=device) as m:
        gen = m.generate(case["prompts"][0], case["max_new_tokens"], num_beams=beams, details=True)
    want = case["sequences"][0][len(case["prompts"][0]):]
    assert gen.ids == want and abs(gen.score - case["scores"][0]) <= 1e-4, (gen, want, case["scores"][0])


@pytest.mark.parametrize("model", ["t5_tiny", "bart_tiny", "marian_tiny"])
def test_encoder_decoder_greedy(device, tmp_path, model):
    """An encoder-decoder's prompt is its source (tools/goldens/make_encdec_golden.py, greedy, each source alone)."""
    g = load_json(golden(model, "golden.json"))
    config = {k: v for k, v in g["generation_common"].items() if k != "note"}
    with vkformer.Model.load(case_dir(tmp_path, model, config), device=device) as m:
        assert m.family
        for i, source in enumerate(g["sources"]):
            gen = m.generate(source, 16, details=True)
            assert gen.ids == load_npy(model, "greedy_%d_ids.npy" % i).ravel().tolist(), (model, i)


@pytest.mark.parametrize("model", ["d2l_attn_tiny", "txl_plain", "rf_lm"])
def test_text_prompt_every_generative_family(device, tmp_path, model):
    """A text prompt and stop strings on the Bahdanau encoder-decoder, Transformer-XL and Reformer
    (their generate facet takes text): the checkpoint copied with a WordPiece vocab.txt."""
    d = tmp_path / model
    shutil.copytree(data(model), d)
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d", "e"]
    (d / "vocab.txt").write_text("\n".join(words + ["w%d" % i for i in range(10, 512)]) + "\n")
    with vkformer.Model.load(str(d), device=device) as m:
        assert "generate" in m.tasks
        gen = m.generate("a b c", max_new_tokens=3, do_sample=False, stop_strings=["never here"],
                         details=True)
        assert 1 <= len(gen.ids) <= 3 and isinstance(gen.text, str)
