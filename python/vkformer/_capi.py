"""ctypes mirror of api/vkformer.h: its structs, enums and function prototypes.

Keep this file in step with the header: the struct layouts here must match it field for field
(tests/python/test_loader.py checks the enum values and version against the header's text).
"""

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_double,
    c_float,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)

MAX_RANK = 8

# vkformer_dtype
F32, I32, I64 = 0, 1, 2

# vkformer_decoding
DECODING_DEFAULT, DECODING_GREEDY, DECODING_SAMPLE = 0, 1, 2

# vkformer_code, in the header's order (index = value)
CODE_NAMES = (
    "OK",
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "UNSUPPORTED",
    "OUT_OF_MEMORY",
    "IO",
    "PARSE",
    "SHAPE",
    "INVALID_GRAPH",
    "NO_DEVICE",
    "DEVICE",
    "COMPILE",
    "MISMATCH",
    "INTERNAL",
)

status_t = c_void_p  # vkformer_status: NULL on success


class DeviceOptions(Structure):
    _fields_ = [("selector", c_char_p), ("validate", c_int32)]


class ModelOptions(Structure):
    _fields_ = [("fp16", c_int32), ("cache_fp16", c_int32), ("quantize", c_char_p)]


class IoInfo(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("dtype", c_int32),
        ("rank", c_uint32),
        ("shape", c_int64 * MAX_RANK),
        ("required", c_int32),
        ("target", c_int32),
        ("max_seq", c_int64),
        ("value_bound", c_int64),
    ]


class Tensor(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("dtype", c_int32),
        ("rank", c_uint32),
        ("shape", c_int64 * MAX_RANK),
        ("data", c_void_p),
    ]


class Tokens(Structure):
    _fields_ = [("ids", POINTER(c_int64)), ("tokens", POINTER(c_char_p)), ("count", c_size_t)]


class Class(Structure):
    _fields_ = [("id", c_int64), ("prob", c_float), ("label", c_char_p)]


class GenerateOptions(Structure):
    _fields_ = [
        ("max_new_tokens", c_int64),
        ("decoding", c_int32),
        ("num_beams", c_int64),
        ("temperature", c_double),
        ("top_k", c_int64),
        ("top_p", c_double),
        ("repetition_penalty", c_double),
        ("seed", c_uint64),
        ("stop_strings", POINTER(c_char_p)),
        ("stop_string_count", c_size_t),
        ("ignore_eos", c_int32),
        ("ctx", c_int64),
    ]


class Generation(Structure):
    _fields_ = [
        ("ids", POINTER(c_int64)),
        ("count", c_size_t),
        ("text", c_void_p),  # char *: read with string_at so the bytes are not lost to c_char_p
        ("score", c_float),
    ]


TokenCallback = CFUNCTYPE(c_int, c_void_p, c_int64, POINTER(c_char), c_size_t)

# name: (restype, argtypes)
_PROTOTYPES = {
    "vkformer_version": (c_char_p, []),
    "vkformer_status_code": (c_int, [status_t]),
    "vkformer_status_message": (c_char_p, [status_t]),
    "vkformer_code_name": (c_char_p, [c_int]),
    "vkformer_status_free": (None, [status_t]),
    "vkformer_free": (None, [c_void_p]),
    "vkformer_device_count": (status_t, [POINTER(c_uint32)]),
    "vkformer_device_name": (status_t, [c_uint32, c_char_p, c_size_t]),
    "vkformer_device_open": (status_t, [POINTER(DeviceOptions), POINTER(c_void_p)]),
    "vkformer_device_close": (None, [c_void_p]),
    "vkformer_device_get_name": (c_char_p, [c_void_p]),
    "vkformer_device_validation_messages": (c_uint32, [c_void_p]),
    "vkformer_default_model": (status_t, [c_char_p, POINTER(c_void_p)]),
    "vkformer_model_load": (status_t, [c_void_p, c_char_p, POINTER(ModelOptions), POINTER(c_void_p)]),
    "vkformer_model_free": (None, [c_void_p]),
    "vkformer_model_architecture": (c_char_p, [c_void_p]),
    "vkformer_model_family": (c_char_p, [c_void_p]),
    "vkformer_model_tasks": (c_uint32, [c_void_p]),
    "vkformer_model_input_count": (c_uint32, [c_void_p]),
    "vkformer_model_output_count": (c_uint32, [c_void_p]),
    "vkformer_model_input_info": (status_t, [c_void_p, c_uint32, POINTER(IoInfo)]),
    "vkformer_model_output_info": (status_t, [c_void_p, c_uint32, POINTER(IoInfo)]),
    "vkformer_model_forward": (status_t, [c_void_p, POINTER(Tensor), c_size_t, POINTER(Tensor), c_size_t]),
    "vkformer_tensor_release": (None, [POINTER(Tensor)]),
    "vkformer_tokenizer_load": (status_t, [c_char_p, POINTER(c_void_p)]),
    "vkformer_tokenizer_free": (None, [c_void_p]),
    "vkformer_model_tokenizer": (status_t, [c_void_p, POINTER(c_void_p)]),
    "vkformer_tokenize": (status_t, [c_void_p, c_char_p, c_int32, POINTER(Tokens)]),
    "vkformer_tokens_release": (None, [POINTER(Tokens)]),
    "vkformer_decode": (status_t, [c_void_p, POINTER(c_int64), c_size_t, c_int32, POINTER(c_void_p)]),
    "vkformer_model_label_count": (c_int64, [c_void_p]),
    "vkformer_classify": (status_t, [c_void_p, POINTER(c_char_p), c_size_t, c_size_t, POINTER(Class)]),
    "vkformer_embed": (status_t, [c_void_p, POINTER(c_char_p), c_size_t, POINTER(Tensor)]),
    "vkformer_generate": (
        status_t,
        [
            c_void_p,
            c_char_p,
            POINTER(c_int64),
            c_size_t,
            POINTER(GenerateOptions),
            TokenCallback,
            c_void_p,
            POINTER(Generation),
        ],
    ),
    "vkformer_generation_release": (None, [POINTER(Generation)]),
    "vkformer_chat_open": (status_t, [c_void_p, POINTER(GenerateOptions), POINTER(c_void_p)]),
    "vkformer_chat_reply": (status_t, [c_void_p, c_char_p, TokenCallback, c_void_p, POINTER(Generation)]),
    "vkformer_chat_close": (None, [c_void_p]),
}


def declare(lib):
    """Sets restype/argtypes of every API function; a missing symbol names itself."""
    missing = []
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise OSError(
            "vkformer: the loaded library %s lacks %s (a libvkformer.so older than these bindings?)"
            % (getattr(lib, "_name", "?"), ", ".join(missing))
        )


def check(lib, status):
    """Raises the vkformer.Error subclass of a non-NULL status (freeing it); None passes."""
    if not status:
        return
    from .errors import error_class

    code = lib.vkformer_status_code(status)
    message = (lib.vkformer_status_message(status) or b"").decode("utf-8", errors="replace")
    lib.vkformer_status_free(status)
    name = CODE_NAMES[code] if 0 <= code < len(CODE_NAMES) else "UNKNOWN"
    raise error_class(name)(message, code)
