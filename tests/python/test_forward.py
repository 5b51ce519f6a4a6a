"""Model.load, inputs/outputs descriptions and forward() against Hugging Face's outputs (the
goldens of tools/goldens/make_forward_golden.py and tools/goldens/make_vit_golden.py that tests/cli/test_forward.sh
checks through `vkf forward`), and every bad input as a vkformer.Error naming it."""

import gc
import json
import threading
import weakref

import numpy as np
import pytest

import vkformer

from conftest import data, load_npy

F = "forward"


def close(got, want, atol):
    assert got.shape == want.shape and got.dtype == np.float32, (got.shape, want.shape, got.dtype)
    diff = float(np.max(np.abs(got - want)))
    assert diff <= atol, "max |diff| %g > %g" % (diff, atol)


def bert_inputs():
    return dict(input_ids=load_npy(F, "bert_tiny_input_ids.npy"),
                attention_mask=load_npy(F, "bert_tiny_attention_mask.npy"),
                token_type_ids=load_npy(F, "bert_tiny_token_type_ids.npy"))


def test_descriptions(bert_tiny):
    assert bert_tiny.architecture == "BertForMaskedLM" and bert_tiny.family
    assert bert_tiny.tasks == {"forward", "tokenize", "embed", "attentions"}
    ins = {i.name: i for i in bert_tiny.inputs}
    assert list(ins)[0] == "input_ids"
    ids = ins["input_ids"]
    assert ids.required and ids.dtype == np.int32 and ids.shape == (-1, -1) and ids.max_seq == 128
    assert ids.value_bound == 219
    assert not ins["attention_mask"].required and not ins["token_type_ids"].required
    outs = {o.name: o for o in bert_tiny.outputs}
    assert outs["logits"].shape == (-1, -1, 219) and outs["logits"].dtype == np.float32
    assert outs["last_hidden_state"].shape[:2] == (-1, -1)


def test_bert_tiny(bert_tiny):
    out = bert_tiny.forward(**bert_inputs())
    assert set(out) == {o.name for o in bert_tiny.outputs}
    close(out["last_hidden_state"], load_npy(F, "bert_tiny_last_hidden_state.npy"), 1e-4)
    close(out["logits"], load_npy(F, "bert_tiny_logits.npy"), 1e-4)


def test_named_outputs_and_int32_defaults(bert_tiny):
    ids = np.array([[2, 218, 5, 113, 218, 65, 3, 212, 183, 57, 61, 3]], dtype=np.int32)
    out = bert_tiny.forward(outputs="last_hidden_state", input_ids=ids)
    assert list(out) == ["last_hidden_state"]
    close(out["last_hidden_state"], load_npy(F, "bert_tiny_default_last_hidden_state.npy"), 1e-4)
    # A Python list is an int64 array; a non-contiguous view is fine too.
    wide = np.repeat(ids, 2, axis=1)[:, ::2]
    close(bert_tiny(["last_hidden_state"], input_ids=wide)["last_hidden_state"],
          load_npy(F, "bert_tiny_default_last_hidden_state.npy"), 1e-4)
    close(bert_tiny(["last_hidden_state"], input_ids=ids.tolist())["last_hidden_state"],
          load_npy(F, "bert_tiny_default_last_hidden_state.npy"), 1e-4)


def test_fp16(device):
    with vkformer.Model.load(data("bert_tiny"), device=device, fp16=True) as m:
        out = m.forward(outputs=["last_hidden_state"], **bert_inputs())
    close(out["last_hidden_state"], load_npy(F, "bert_tiny_last_hidden_state.npy"), 3e-2)


def test_quantize(device):
    """quantize="q4_1": the logits of the twin whose linear weights the reference quantised
    (tests/models/data/quantize, tools/goldens/make_quantize_goldens.py)."""
    with vkformer.Model.load(data("bert_tiny"), device=device, quantize="q4_1") as m:
        got = m.forward(outputs=["logits"], **bert_inputs())["logits"]
    with vkformer.Model.load(data("quantize/bert_tiny_q4_1_twin"), device=device) as m:
        want = m.forward(outputs=["logits"], **bert_inputs())["logits"]
    close(got, want, 1e-4)
    assert float(np.max(np.abs(want - load_npy(F, "bert_tiny_logits.npy")))) > 1e-3  # it is quantised
    with pytest.raises(vkformer.Error, match='quantisation format "q2_k"'):
        vkformer.Model.load(data("bert_tiny"), device=device, quantize="q2_k")


def test_minilm(minilm):
    out = minilm.forward(["last_hidden_state", "pooler_output"], input_ids=load_npy(F, "minilm_input_ids.npy"),
                         attention_mask=load_npy(F, "minilm_attention_mask.npy"))
    close(out["last_hidden_state"], load_npy(F, "minilm_last_hidden_state.npy"), 1e-4)
    close(out["pooler_output"], load_npy(F, "minilm_pooler_output.npy"), 1e-4)


@pytest.mark.parametrize("model,pixels,output,want", [
    ("vit_tiny", "vit_tiny_pixel_values", "logits", "vit_tiny_logits"),
    ("deit_tiny", "deit_tiny_pixel_values", "logits", "deit_tiny_logits"),
    ("vit_tiny_bare", "vit_tiny_pixel_values", "last_hidden_state", "vit_tiny_bare_last_hidden_state"),
    ("vit_tiny_bare", "vit_tiny_pixel_values", "pooler_output", "vit_tiny_bare_pooler_output"),
])
def test_vit(device, model, pixels, output, want):
    with vkformer.Model.load(data(model), device=device) as m:
        pix = m.inputs[0]
        assert pix.name == "pixel_values" and pix.dtype == np.float32 and pix.shape == (-1, 3, 32, 32)
        out = m.forward(outputs=output, pixel_values=load_npy("vit", pixels + ".npy"))
    close(out[output], load_npy("vit", want + ".npy"), 1e-4)


def test_bad_inputs(bert_tiny):
    ids = load_npy(F, "bert_tiny_input_ids.npy")
    cases = [
        (dict(pixel_values=ids), 'no input "pixel_values"'),
        (dict(attention_mask=load_npy(F, "bert_tiny_attention_mask.npy")), "needs input input_ids"),
        (dict(input_ids=ids.astype(np.float32)), "input input_ids: dtype float32"),
        (dict(input_ids=np.ones((1, 2, 2), np.int32)), r"input input_ids: shape \[1,2,2\]"),
        (dict(input_ids=np.array([[2, 219, 5, 3]], np.int32)), r"value 219 at \[0, 1\] is outside \[0, 219\)"),
        (dict(input_ids=np.array([[2, -1, 3]], np.int64)), "value -1"),
        (dict(input_ids=np.full((1, 129), 5, np.int32)), "129 tokens, longer than the model's 128"),
        (dict(input_ids=ids, attention_mask=np.ones((2, 12), np.int32)), "batch 2 but input_ids has 3"),
        (dict(input_ids=np.array([[2, 7, 8, 3]]), attention_mask=np.array([[1, 1, 2, 0]])), "input attention_mask: value 2"),
    ]
    for inputs, message in cases:
        with pytest.raises(vkformer.Error, match=message) as e:
            bert_tiny.forward(outputs="logits", **inputs)
        assert e.value.message and "\n" not in e.value.message, e.value.message
    with pytest.raises(vkformer.Error, match='no output "pooler_output"'):
        bert_tiny.forward(outputs="pooler_output", input_ids=ids)
    # dtypes the library never takes are refused here, with the same kind of message.
    for bad, name in [(ids.astype(np.float64), "float64"), (ids.astype(np.int16), "int16"), (ids.astype(bool), "bool")]:
        with pytest.raises(vkformer.InvalidArgumentError, match="input input_ids: dtype %s, expected float32, int32 or int64" % name):
            bert_tiny.forward(input_ids=bad)
    with pytest.raises(vkformer.InvalidArgumentError, match="byte order"):
        bert_tiny.forward(input_ids=ids.astype(">i8"))
    with pytest.raises(vkformer.InvalidArgumentError, match="input input_ids: rank 0"):
        bert_tiny.forward(input_ids=np.int64(5))
    # the model still runs after every error
    test_bert_tiny(bert_tiny)


def test_bad_pixels(device):
    with vkformer.Model.load(data("vit_tiny"), device=device) as m:
        with pytest.raises(vkformer.Error, match=r"input pixel_values: shape \[1,3,16,16\], expected \[-1,3,32,32\]"):
            m.forward(pixel_values=np.ones((1, 3, 16, 16), np.float32))


def test_bad_folders(device, tmp_path):
    with pytest.raises(vkformer.Error, match="no-such-model"):
        vkformer.Model.load(tmp_path / "no-such-model", device=device)
    (tmp_path / "xlnet").mkdir()
    (tmp_path / "xlnet" / "config.json").write_text(json.dumps({"architectures": ["XLNetLMHeadModel"], "model_type": "xlnet"}))
    with pytest.raises(vkformer.UnsupportedError, match=r'architecture "XLNetLMHeadModel" \(model_type "xlnet"\) is not supported'):
        vkformer.Model.load(tmp_path / "xlnet", device=device)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{not json")
    with pytest.raises(vkformer.Error, match="config.json"):
        vkformer.Model.load(str(tmp_path / "broken"), device=device)


def test_release(device):
    m = vkformer.Model.load(data("bert_tiny"), device=device)
    m.close()
    m.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        m.forward(input_ids=[[2, 3]])
    # Garbage collection frees a model nobody holds.
    ref = weakref.ref(vkformer.Model.load(data("bert_tiny"), device=device))
    gc.collect()
    assert ref() is None
    # Closing a device closes the models still open on it first.
    with vkformer.Device(validate=True) as d:
        a = vkformer.Model.load(data("bert_tiny"), device=d)
        b = vkformer.Model.load(data("vit_tiny"), device=d)
    assert repr(a) == repr(b) == "<vkformer.Model closed>"
    with pytest.raises(ValueError, match="closed"):
        vkformer.Model.load(data("bert_tiny"), device=d)


def test_default_device():
    # Model.load without a device opens the default one for the model alone and closes it with it.
    with vkformer.Model.load(data("bert_tiny")) as m:
        dev = m.device
        assert dev.name in vkformer.device_names()
        out = m.forward(outputs="logits", **bert_inputs())
        close(out["logits"], load_npy(F, "bert_tiny_logits.npy"), 1e-4)
        assert dev.validation_messages == 0
    assert repr(dev) == "<vkformer.Device closed>"


def test_threads_share_a_model(bert_tiny):
    # The device's lock serialises the calls (the C API wants one thread at a time per device).
    want = load_npy(F, "bert_tiny_logits.npy")
    errors = []

    def work():
        try:
            for _ in range(3):
                close(bert_tiny.forward(outputs="logits", **bert_inputs())["logits"], want, 1e-4)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
