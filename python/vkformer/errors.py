"""vkformer.Error and one subclass per status code of the C API (vkformer_status_code)."""


class Error(Exception):
    """A vkformer call failed. `code` is the C status code (an int), `message` the library's
    one-line message naming what is wrong (file, tensor, field, shape)."""

    code = None

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidArgumentError(Error, ValueError):
    """A bad value: an unknown input name, a wrong shape or dtype, an id outside the vocabulary."""


class NotFoundError(Error):
    """A missing file, tensor, device or config field."""


class UnsupportedError(Error):
    """An architecture, op, dtype or feature the library or the device cannot do."""


class OutOfMemoryError(Error, MemoryError):
    """A host or device allocation failed or exceeds a device limit."""


class FileError(Error, OSError):
    """Reading or writing a file failed."""


class ParseError(Error):
    """A malformed file (json, safetensors, npy, image, tokenizer)."""


class ShapeError(InvalidArgumentError):
    """Shape or dtype inference failed."""


class InvalidGraphError(Error):
    """The IR breaks an invariant."""


class NoDeviceError(Error):
    """No Vulkan loader or no physical device."""


class DeviceError(Error):
    """A Vulkan call failed (device lost, ...)."""


class CompileError(Error):
    """A shader failed to compile."""


class MismatchError(Error):
    """A device result differs from the reference."""


class InternalError(Error):
    """A bug in vkformer."""


# Index = the C enum's value; filled in by _capi from the header's enum order.
_BY_NAME = {
    "INVALID_ARGUMENT": InvalidArgumentError,
    "NOT_FOUND": NotFoundError,
    "UNSUPPORTED": UnsupportedError,
    "OUT_OF_MEMORY": OutOfMemoryError,
    "IO": FileError,
    "PARSE": ParseError,
    "SHAPE": ShapeError,
    "INVALID_GRAPH": InvalidGraphError,
    "NO_DEVICE": NoDeviceError,
    "DEVICE": DeviceError,
    "COMPILE": CompileError,
    "MISMATCH": MismatchError,
    "INTERNAL": InternalError,
}


def error_class(code_name):
    return _BY_NAME.get(code_name, Error)
