"""Tokenizers: a checkpoint folder's Hugging Face tokenizer, run by the C library."""

import collections
import ctypes
import os

from . import _capi
from ._closeable import Closeable
from ._arrays import ids_array
from ._loader import library
from ._text import utf8

Encoding = collections.namedtuple("Encoding", ["ids", "tokens"])
Encoding.__doc__ = "The token ids (list of int) and token strings (list of str) of one text."


def tokenize_with(lib, handle, text, add_special_tokens):
    if not isinstance(text, str):
        raise TypeError("tokenize: text must be a str, got %s" % type(text).__name__)
    out = _capi.Tokens()
    _capi.check(lib, lib.vkformer_tokenize(handle, utf8(text, "tokenize: text"), 1 if add_special_tokens else 0, ctypes.byref(out)))
    try:
        ids = [int(out.ids[i]) for i in range(out.count)]
        tokens = [out.tokens[i].decode("utf-8", errors="replace") for i in range(out.count)]
    finally:
        lib.vkformer_tokens_release(ctypes.byref(out))
    return Encoding(ids, tokens)


def decode_with(lib, handle, ids, skip_special_tokens):
    arr = ids_array(ids)
    text = ctypes.c_void_p()
    ptr = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)) if arr.size else None
    _capi.check(lib, lib.vkformer_decode(handle, ptr, arr.size, 1 if skip_special_tokens else 0, ctypes.byref(text)))
    try:
        return ctypes.string_at(text.value).decode("utf-8", errors="replace") if text.value else ""
    finally:
        lib.vkformer_free(text)


class Tokenizer(Closeable):
    """A tokenizer loaded from a checkpoint folder on its own (no device needed).

    tokenize and decode may run concurrently from several threads (the C tokenizer is read-only
    after loading)."""

    def __init__(self, handle, lib):
        self._lib = lib
        self._handle = handle

    @classmethod
    def load(cls, model_dir):
        lib = library()
        handle = ctypes.c_void_p()
        _capi.check(lib, lib.vkformer_tokenizer_load(os.fsencode(model_dir), ctypes.byref(handle)))
        return cls(handle.value, lib)

    @property
    def _h(self):
        if self._handle is None:
            raise ValueError("vkformer.Tokenizer: the tokenizer is closed")
        return self._handle

    def tokenize(self, text, add_special_tokens=True):
        """Encoding(ids, tokens) of `text` as Hugging Face's tokenizer(text) gives them."""
        return tokenize_with(self._lib, self._h, text, add_special_tokens)

    def decode(self, ids, skip_special_tokens=False):
        """tokenizer.decode(ids, skip_special_tokens) as Hugging Face computes it."""
        return decode_with(self._lib, self._h, ids, skip_special_tokens)

    def close(self):
        if self._handle is not None:
            self._lib.vkformer_tokenizer_free(self._handle)
            self._handle = None

