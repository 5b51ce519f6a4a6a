"""Text generation: options -> vkformer_generate_options, the per-token callback, streaming."""

import collections
import ctypes
import queue
import threading

from . import _capi
from ._text import utf8
from ._arrays import ids_array
from .errors import InvalidArgumentError

Generation = collections.namedtuple("Generation", ["text", "ids", "score"])
Generation.__doc__ = """A finished generation: the generated text (not the prompt), the generated
ids (the eos token included when one ended it) and, for beam search, the sequence score."""

_OPTION_NAMES = (
    "do_sample",
    "num_beams",
    "temperature",
    "top_k",
    "top_p",
    "repetition_penalty",
    "seed",
    "stop_strings",
    "ignore_eos",
    "ctx",
)


def _options(max_new_tokens, options):
    unknown = sorted(set(options) - set(_OPTION_NAMES))
    if unknown:
        raise InvalidArgumentError(
            "generate: unknown option %s (valid: max_new_tokens, %s)" % (", ".join(unknown), ", ".join(_OPTION_NAMES))
        )
    o = _capi.GenerateOptions()
    keep = []  # byte strings the struct points into
    if max_new_tokens is not None:
        if int(max_new_tokens) < 1:
            raise InvalidArgumentError("generate: max_new_tokens %d, expected at least 1" % int(max_new_tokens))
        o.max_new_tokens = int(max_new_tokens)
    do_sample = options.get("do_sample")
    if do_sample is not None:
        o.decoding = _capi.DECODING_SAMPLE if do_sample else _capi.DECODING_GREEDY
    # The C options read 0 as "the default", so a 0 the caller set must be refused here, as vkf and
    # transformers' GenerationConfig.validate refuse it, not read as "unset".
    if options.get("num_beams") is not None:
        o.num_beams = int(options["num_beams"])
        if o.num_beams < 1:
            raise InvalidArgumentError("generate: num_beams %d, expected at least 1" % o.num_beams)
    if options.get("temperature") is not None:
        o.temperature = float(options["temperature"])
        if not o.temperature > 0:
            raise InvalidArgumentError(
                "generate: temperature %g, expected > 0 (do_sample=False for greedy decoding)" % o.temperature
            )
    if options.get("top_k") is not None:
        # Hugging Face's top_k=0 turns the filter off; the C API spells that -1 (0 is "default").
        k = int(options["top_k"])
        if k < 0:
            raise InvalidArgumentError("generate: top_k %d, expected 0 (off) or more" % k)
        o.top_k = k if k > 0 else -1
    if options.get("top_p") is not None:
        o.top_p = float(options["top_p"])
        if not 0 < o.top_p <= 1:
            raise InvalidArgumentError("generate: top_p %g, expected in (0, 1]" % o.top_p)
    if options.get("repetition_penalty") is not None:
        o.repetition_penalty = float(options["repetition_penalty"])
        if not o.repetition_penalty > 0:
            raise InvalidArgumentError(
                "generate: repetition_penalty %g, expected > 0" % o.repetition_penalty
            )
    if options.get("seed") is not None:
        o.seed = int(options["seed"]) & 0xFFFFFFFFFFFFFFFF
    stops = options.get("stop_strings")
    if stops:
        if isinstance(stops, str):
            stops = [stops]
        data = [utf8(s, "generate: stop_strings[%d]" % i) for i, s in enumerate(stops)]
        arr = (ctypes.c_char_p * len(data))(*data)
        keep += [data, arr]
        o.stop_strings = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p))
        o.stop_string_count = len(data)
    if options.get("ignore_eos"):
        o.ignore_eos = 1
    if options.get("ctx") is not None:
        o.ctx = int(options["ctx"])
    return o, keep


class GenerateRequest:
    """One call of vkformer_generate with its Python-side state."""

    def __init__(self, model, prompt, max_new_tokens, options):
        self.model = model
        self.opts, self._keep = _options(max_new_tokens, options)
        if isinstance(prompt, str):
            self.text, self.ids = utf8(prompt, "generate: prompt"), None
        elif isinstance(prompt, bytes):
            raise TypeError("generate: prompt must be a str or a sequence of token ids, not bytes")
        else:
            self.text, self.ids = None, ids_array(prompt, "prompt ids")
            if self.ids.size == 0:
                raise InvalidArgumentError("generate: the prompt has no ids")

    def run(self, on_piece):
        """Runs the generation; on_piece(str) per token, a true return stops it."""
        model, lib = self.model, self.model._lib
        failure = []

        def trampoline(_user, _token, piece, size):
            if on_piece is None:
                return 0
            try:
                text = ctypes.string_at(piece, size).decode("utf-8", errors="replace") if size else ""
                return 1 if on_piece(text) else 0
            except BaseException as e:  # raised again once the C call has returned
                failure.append(e)
                return 1

        cb = _capi.TokenCallback(trampoline)
        out = _capi.Generation()
        ids_ptr = None
        count = 0
        if self.ids is not None:
            ids_ptr = self.ids.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
            count = self.ids.size
        with model._device.lock:
            status = lib.vkformer_generate(model._h, self.text, ids_ptr, count, ctypes.byref(self.opts), cb, None, ctypes.byref(out))
        _capi.check(lib, status)
        try:
            gen = Generation(
                ctypes.string_at(out.text).decode("utf-8", errors="replace") if out.text else "",
                [int(out.ids[i]) for i in range(out.count)],
                float(out.score),
            )
        finally:
            lib.vkformer_generation_release(ctypes.byref(out))
        if failure:
            raise failure[0]
        return gen

    def stream(self):
        """A generator of pieces: the generation runs in a worker thread (holding the device's
        lock, so other calls on the device wait for it) and hands pieces over a queue."""
        pieces = queue.Queue()
        stop = threading.Event()
        done = object()
        result = []

        def work():
            try:
                result.append(self.run(lambda p: (pieces.put(p), stop.is_set())[1]))
            except BaseException as e:
                result.append(e)
            finally:
                pieces.put(done)

        worker = threading.Thread(target=work, name="vkformer-generate", daemon=True)
        worker.start()
        try:
            while True:
                item = pieces.get()
                if item is done:
                    break
                if item:
                    yield item
        finally:
            stop.set()
            worker.join()
        if result and isinstance(result[0], BaseException):
            raise result[0]
