"""Chat (vkformer.Chat, Model.chat) with the default model, SmolLM2-135M-Instruct, against
tools/goldens/make_smollm2_golden.py: the golden conversation's greedy reply equals transformers'
greedy generate on the jinja2-rendered prompt; a Chat kept across turns replies as a fresh one on
the whole conversation; bad messages and options are errors naming them."""

import pytest

import vkformer

from conftest import golden, load_json


@pytest.fixture(scope="module")
def smol(device):
    with vkformer.Model.load(vkformer.default_model("generate"), device=device) as m:
        yield m


def test_reply_matches_transformers(smol):
    want = load_json(golden("smollm2", "chat.json"))
    pieces = []
    gen = smol.chat(want["messages"], callback=pieces.append, details=True, do_sample=False)
    assert gen.ids == want["reply_ids"]
    assert "".join(pieces) == gen.text and gen.text


def test_kept_cache_equals_fresh(smol):
    msgs = [{"role": "user", "content": "Name one ocean."}]
    with vkformer.Chat(smol, max_new_tokens=24, do_sample=False) as chat:
        first = chat.reply(msgs)
        msgs += [{"role": "assistant", "content": first}, {"role": "user", "content": "Another one?"}]
        second = chat.reply(msgs)
    assert second == smol.chat(msgs, max_new_tokens=24, do_sample=False)


def test_errors(smol):
    with pytest.raises(vkformer.InvalidArgumentError, match=r"messages\[1\] is not a dict"):
        smol.chat([{"role": "user", "content": "a"}, {"role": "user"}])
    with pytest.raises(vkformer.InvalidArgumentError, match="no messages"):
        smol.chat([])
    with pytest.raises(TypeError, match="list of"):
        smol.chat("hello")
    with pytest.raises(vkformer.InvalidArgumentError, match="not chat settings"):
        smol.chat([{"role": "user", "content": "a"}], num_beams=2)
    chat = vkformer.Chat(smol)
    chat.close()
    with pytest.raises(vkformer.InvalidArgumentError, match="closed"):
        chat.reply([{"role": "user", "content": "a"}])
