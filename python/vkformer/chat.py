"""Chat: vkformer_chat_* (the model's own chat template, the KV cache kept between replies)."""

import ctypes
import json

from . import _capi
from .errors import InvalidArgumentError
from .generation import Generation, _options


def _messages_json(messages):
    if isinstance(messages, (str, bytes)) or not hasattr(messages, "__iter__"):
        raise TypeError("chat: messages must be a list of {'role': ..., 'content': ...} dicts")
    items = list(messages)
    for i, m in enumerate(items):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise InvalidArgumentError("chat: messages[%d] is not a dict with str 'role' and 'content'" % i)
    if not items:
        raise InvalidArgumentError("chat: no messages")
    return json.dumps(items, ensure_ascii=False).encode("utf-8")


class Chat:
    """A conversation with an instruction-tuned model through its own chat template (rendered as
    transformers' apply_chat_template(add_generation_prompt=True) renders it). The KV cache stays
    between replies: a reply computes only the tokens after the longest prefix already cached, so
    pass the whole conversation each time, earlier replies included.

        with vkformer.Chat(model, do_sample=False) as chat:
            msgs = [{"role": "user", "content": "Hi!"}]
            msgs.append({"role": "assistant", "content": chat.reply(msgs)})

    Options as Model.generate's (do_sample, temperature, top_k, top_p, repetition_penalty, seed,
    ctx, max_new_tokens), defaulting to the checkpoint's generation config."""

    def __init__(self, model, max_new_tokens=None, **options):
        self._model = model
        self._lib = model._lib
        opts, self._keep = _options(max_new_tokens, options)
        h = ctypes.c_void_p()
        with model._device.lock:
            status = self._lib.vkformer_chat_open(model._h, ctypes.byref(opts), ctypes.byref(h))
        _capi.check(self._lib, status)
        self._handle = h

    def reply(self, messages, callback=None, details=False):
        """The assistant's next message for `messages` (dicts with "role" and "content").
        callback(piece) gets the text of each token as it completes; a true return stops the
        reply. Returns the text, or with details=True a Generation(text, ids, 0.0)."""
        if self._handle is None:
            raise InvalidArgumentError("chat: the chat is closed")
        data = _messages_json(messages)
        failure = []

        def trampoline(_user, _token, piece, size):
            if callback is None:
                return 0
            try:
                text = ctypes.string_at(piece, size).decode("utf-8", errors="replace") if size else ""
                return 1 if callback(text) else 0
            except BaseException as e:  # raised again once the C call has returned
                failure.append(e)
                return 1

        cb = _capi.TokenCallback(trampoline)
        out = _capi.Generation()
        with self._model._device.lock:
            status = self._lib.vkformer_chat_reply(self._handle, data, cb, None, ctypes.byref(out))
        _capi.check(self._lib, status)
        try:
            gen = Generation(
                ctypes.string_at(out.text).decode("utf-8", errors="replace") if out.text else "",
                [int(out.ids[i]) for i in range(out.count)],
                0.0,
            )
        finally:
            self._lib.vkformer_generation_release(ctypes.byref(out))
        if failure:
            raise failure[0]
        return gen if details else gen.text

    def close(self):
        """Frees the session (the model stays open). Idempotent."""
        if self._handle is None:
            return
        with self._model._device.lock:
            self._lib.vkformer_chat_close(self._handle)
        self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
