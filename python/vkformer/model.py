"""Models: a Hugging Face checkpoint folder loaded on a device, run with numpy arrays."""

import collections
import ctypes
import os

import numpy as np

from . import _capi
from ._closeable import Closeable
from ._arrays import fill_input, take_output
from .device import Device
from .errors import InvalidArgumentError
from ._text import utf8

# vkformer_model_tasks' bits, in order (api/vkformer.h's VKFORMER_TASK_*).
TASKS = ("forward", "tokenize", "embed", "classify", "generate", "chat", "attentions")
from .generation import GenerateRequest
from .tokenizer import decode_with, tokenize_with

IOInfo = collections.namedtuple(
    "IOInfo", ["name", "dtype", "shape", "required", "target", "max_seq", "value_bound"]
)
IOInfo.__doc__ = """A declared input or output, with Hugging Face's name.

dtype: numpy dtype (int32 for integer inputs, which take int64 too; float32 otherwise).
shape: a tuple where -1 marks a dim the caller chooses (the batch, the sequence).
required: inputs that must be given (optional ones default as in Hugging Face).
target: encoder-decoders: dim 1 is the decoder's sequence. max_seq: the longest sequence the
checkpoint has positions for (0: not text). value_bound: integer inputs lie in [0, value_bound)
(0: unchecked)."""

Prediction = collections.namedtuple("Prediction", ["id", "label", "prob"])
Prediction.__doc__ = "One class of an image: its id, id2label's label and its softmax probability."

_DTYPE_OF = {_capi.F32: np.dtype(np.float32), _capi.I32: np.dtype(np.int32), _capi.I64: np.dtype(np.int64)}


def _io_info(info):
    return IOInfo(
        info.name.decode("utf-8"),
        _DTYPE_OF.get(info.dtype, np.dtype(np.float32)),
        tuple(int(info.shape[i]) for i in range(info.rank)),
        bool(info.required),
        bool(info.target),
        int(info.max_seq),
        int(info.value_bound),
    )


def _paths(items, what):
    """A list of byte paths from one path or a sequence of them."""
    if isinstance(items, (str, bytes, os.PathLike)):
        items = [items]
    return [os.fsencode(p) for p in items]


def _texts(items):
    if isinstance(items, str):
        items = [items]
    out = []
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise TypeError("texts[%d]: expected str, got %s" % (i, type(t).__name__))
        out.append(utf8(t, "texts[%d]" % i))
    return out


def _is_prompt_list(prompt):
    """A non-empty list or tuple of prompts (strs, or sequences of ids), not one prompt of ids."""
    if not isinstance(prompt, (list, tuple)) or not prompt:
        return False
    return all(isinstance(p, (str, list, tuple)) for p in prompt)


class Model(Closeable):
    """A checkpoint loaded on a device. Load with Model.load(dir); release with close(), a `with`
    block, or by dropping the last reference."""

    def __init__(self, handle, device, owns_device):
        self._device = device
        self._lib = device._lib
        self._handle = handle
        self._owns_device = owns_device
        device._register(self)
        self.inputs = self._infos(self._lib.vkformer_model_input_count, self._lib.vkformer_model_input_info)
        self.outputs = self._infos(self._lib.vkformer_model_output_count, self._lib.vkformer_model_output_info)

    @classmethod
    def load(cls, model_dir, device=None, fp16=False, cache_fp16=False, quantize=None):
        """Loads a Hugging Face checkpoint folder (or a GGUF file) of any supported architecture.

        device: a vkformer.Device, or None to open the default device for this model alone
        (closed with it). fp16: f16 weights and activations (inputs and outputs stay f32 / int).
        cache_fp16: generation with an f16 KV cache. quantize: None, or "q8_0", "q4_0", "q4_1",
        "q5_0", "q5_1", "q4_k": the linear weights quantised at load into ggml's blocks, as
        llama-quantize does (vkf --quantize)."""
        owns = device is None
        dev = Device() if owns else device
        opts = _capi.ModelOptions(1 if fp16 else 0, 1 if cache_fp16 else 0,
                                  quantize.encode() if quantize else None)
        handle = ctypes.c_void_p()
        try:
            with dev.lock:
                status = dev._lib.vkformer_model_load(dev.handle, os.fsencode(model_dir), ctypes.byref(opts), ctypes.byref(handle))
            _capi.check(dev._lib, status)
        except BaseException:
            if owns:
                dev.close()
            raise
        return cls(handle.value, dev, owns)

    def _infos(self, count_fn, info_fn):
        out = []
        for i in range(count_fn(self._handle)):
            info = _capi.IoInfo()
            _capi.check(self._lib, info_fn(self._handle, i, ctypes.byref(info)))
            out.append(_io_info(info))
        return tuple(out)

    @property
    def _h(self):
        if self._handle is None:
            raise ValueError("vkformer.Model: the model is closed")
        return self._handle

    @property
    def device(self):
        return self._device

    @property
    def architecture(self):
        """The Hugging Face class, e.g. "BertForMaskedLM"."""
        return self._lib.vkformer_model_architecture(self._h).decode("utf-8")

    @property
    def family(self):
        """"vit", "bert", "decoder", "encdec", ..."""
        return self._lib.vkformer_model_family(self._h).decode("utf-8")

    @property
    def tasks(self):
        """What the model can do, as its architecture declares it: a set of "forward",
        "tokenize", "embed", "classify", "generate", "chat", "attentions"."""
        mask = int(self._lib.vkformer_model_tasks(self._h))
        return {name for bit, name in enumerate(TASKS) if mask & (1 << bit)}

    @property
    def label_count(self):
        """The number of labels of a classifier (0 without a classification head)."""
        return int(self._lib.vkformer_model_label_count(self._h))

    def forward(self, outputs=None, **inputs):
        """Runs the model on named numpy inputs (float32, or int32 / int64 for ids and masks,
        batch first) and returns {name: float32 array} for `outputs` (a name or a list of names;
        None: every declared output). Any batch runs; one that does not fit the device runs in
        several parts."""
        if outputs is None:
            names = [o.name for o in self.outputs]
        elif isinstance(outputs, str):
            names = [outputs]
        else:
            names = list(outputs)
        if not names:
            raise InvalidArgumentError("forward: no outputs asked for")
        held = []  # the arrays the input structs point into, alive until the call returns
        in_structs = (_capi.Tensor * max(1, len(inputs)))()
        for i, (name, value) in enumerate(inputs.items()):
            held.append(fill_input(in_structs[i], name, value))
        out_structs = (_capi.Tensor * len(names))()
        for i, name in enumerate(names):
            if not isinstance(name, str):
                raise TypeError("forward: output names must be str, got %s" % type(name).__name__)
            held.append(name.encode("utf-8"))
            out_structs[i].name = held[-1]
        with self._device.lock:
            status = self._lib.vkformer_model_forward(self._h, in_structs, len(inputs), out_structs, len(names))
        _capi.check(self._lib, status)
        result = {}
        try:
            for i, name in enumerate(names):
                result[name] = take_output(self._lib, out_structs[i])
        finally:  # release sets data to NULL, so releasing a taken output again is a no-op
            for t in out_structs:
                self._lib.vkformer_tensor_release(ctypes.byref(t))
        return result

    __call__ = forward

    def _tokenizer(self):
        tok = ctypes.c_void_p()
        with self._device.lock:
            status = self._lib.vkformer_model_tokenizer(self._h, ctypes.byref(tok))
        _capi.check(self._lib, status)
        return tok.value

    def tokenize(self, text, add_special_tokens=True):
        """Encoding(ids, tokens) of `text` with the checkpoint's own tokenizer, as Hugging Face's
        tokenizer(text) gives them (special tokens included, no truncation)."""
        tok = self._tokenizer()
        return tokenize_with(self._lib, tok, text, add_special_tokens)

    def decode(self, ids, skip_special_tokens=False):
        """The text of `ids`, as Hugging Face's tokenizer.decode gives it."""
        tok = self._tokenizer()
        return decode_with(self._lib, tok, ids, skip_special_tokens)

    def classify(self, images, top_k=5):
        """The top_k classes of each image file (PNG / JPEG) through the checkpoint's processor,
        all in one batch: a list (one per image) of lists of Prediction(id, label, prob).
        top_k is capped at the label count, as `vkf classify --top` is."""
        paths = _paths(images, "images")
        if not paths:
            return []
        top_k = int(top_k)
        if top_k < 1:
            raise InvalidArgumentError("classify: top_k %d, expected at least 1" % top_k)
        labels = self.label_count
        if labels > 0:
            top_k = min(top_k, labels)
        c_paths = (ctypes.c_char_p * len(paths))(*paths)
        out = (_capi.Class * (len(paths) * top_k))()
        with self._device.lock:
            status = self._lib.vkformer_classify(self._h, c_paths, len(paths), top_k, out)
        _capi.check(self._lib, status)
        result = []
        for i in range(len(paths)):
            row = []
            for j in range(top_k):
                c = out[i * top_k + j]
                row.append(Prediction(int(c.id), (c.label or b"").decode("utf-8", errors="replace"), float(c.prob)))
            result.append(row)
        return result

    def embed(self, texts):
        """Sentence embeddings as sentence-transformers computes them: float32 [len(texts), dim]."""
        data = _texts(texts)
        if not data:
            raise InvalidArgumentError("embed: no texts")
        c_texts = (ctypes.c_char_p * len(data))(*data)
        out = _capi.Tensor()
        with self._device.lock:
            status = self._lib.vkformer_embed(self._h, c_texts, len(data), ctypes.byref(out))
        _capi.check(self._lib, status)
        return take_output(self._lib, out)

    def generate(self, prompt, max_new_tokens=None, callback=None, details=False, **options):
        """Generates from one prompt: a str (tokenized with the checkpoint's tokenizer) or a
        sequence of token ids. For encoder-decoders the prompt is the source. A list of prompts
        (strs, or sequences of ids) gives a list of results, each what its prompt gets alone.

        Options default to the checkpoint's generation_config.json, as Hugging Face's generate()
        reads it: do_sample (bool), num_beams, temperature, top_k (0: no top-k filtering, as in
        Hugging Face), top_p, repetition_penalty, seed, stop_strings, ignore_eos, ctx.
        callback(piece) is called with the text of each token as it completes (beam search: at
        the end); a true return value stops the generation early. Returns the generated text, or
        with details=True a Generation(text, ids, score)."""
        if _is_prompt_list(prompt):
            if callback is not None:
                raise ValueError("callback takes one prompt, not a list of %d" % len(prompt))
            return [self.generate(p, max_new_tokens, None, details, **options) for p in prompt]
        req = GenerateRequest(self, prompt, max_new_tokens, options)
        gen = req.run(callback)
        return gen if details else gen.text

    def chat(self, messages, max_new_tokens=None, callback=None, details=False, **options):
        """The assistant's reply to `messages` (a list of {"role", "content"} dicts) through the
        model's own chat template; one-off (vkformer.Chat keeps the KV cache across replies).
        Options as generate()'s, without num_beams, stop_strings and ignore_eos."""
        from .chat import Chat

        with Chat(self, max_new_tokens, **options) as c:
            return c.reply(messages, callback, details)

    def stream(self, prompt, max_new_tokens=None, **options):
        """Like generate(), but an iterator over the text pieces as they are produced.
        Leaving the loop early stops the generation."""
        req = GenerateRequest(self, prompt, max_new_tokens, options)
        return req.stream()

    def close(self):
        """Frees the model (and the device when Model.load opened it). Idempotent."""
        if self._handle is None:
            return
        with self._device.lock:
            self._lib.vkformer_model_free(self._handle)
            self._handle = None
        if self._owns_device:
            self._device.close()

    def __repr__(self):
        if self._handle is None:
            return "<vkformer.Model closed>"
        return "<vkformer.Model %s on %r>" % (self.architecture, self._device.name)

