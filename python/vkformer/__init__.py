"""vkformer: Hugging Face Transformer checkpoints on any Vulkan device, numpy arrays in and out.

    import vkformer
    with vkformer.Model.load("path/to/checkpoint") as model:
        print(model.inputs, model.outputs)
        out = model.forward(input_ids=ids, attention_mask=mask)   # {name: float32 array}

Bindings over the C library libvkformer.so (ctypes; see _loader.py for where it is looked for).
Errors are vkformer.Error (one subclass per status code) carrying the library's message.
"""

from ._loader import library_path
from ._version import __version__
from .defaults import default_model
from .device import Device, device_names
from .errors import (
    CompileError,
    DeviceError,
    Error,
    FileError,
    InternalError,
    InvalidArgumentError,
    InvalidGraphError,
    MismatchError,
    NoDeviceError,
    NotFoundError,
    OutOfMemoryError,
    ParseError,
    ShapeError,
    UnsupportedError,
)
from .chat import Chat
from .generation import Generation
from .model import IOInfo, Model, Prediction
from .tokenizer import Encoding, Tokenizer


def library_version():
    """The version of the loaded libvkformer.so ("MAJOR.MINOR.PATCH")."""
    from ._loader import library

    return library().vkformer_version().decode("ascii")


__all__ = [
    "Chat",
    "CompileError",
    "Device",
    "DeviceError",
    "Encoding",
    "Error",
    "FileError",
    "Generation",
    "IOInfo",
    "InternalError",
    "InvalidArgumentError",
    "InvalidGraphError",
    "MismatchError",
    "Model",
    "NoDeviceError",
    "NotFoundError",
    "OutOfMemoryError",
    "ParseError",
    "Prediction",
    "ShapeError",
    "Tokenizer",
    "UnsupportedError",
    "__version__",
    "default_model",
    "device_names",
    "library_path",
    "library_version",
]
