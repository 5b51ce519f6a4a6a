"""numpy arrays <-> vkformer_tensor.

Inputs are passed without copying when they are already C-contiguous arrays of a dtype the
library takes (float32, int32, int64); the numpy arrays are kept alive by the caller's frame for
the duration of the call. Outputs are copied out of library memory into numpy arrays, then the
library's buffers are released.
"""

import ctypes

import numpy as np

from . import _capi
from .errors import InvalidArgumentError

_DTYPES = {
    np.dtype(np.float32): _capi.F32,
    np.dtype(np.int32): _capi.I32,
    np.dtype(np.int64): _capi.I64,
}
_NUMPY = {_capi.F32: np.float32, _capi.I32: np.int32, _capi.I64: np.int64}


def fill_input(t, name, value):
    """Fills Tensor `t` (in place) for input `name`; returns what it points into (the contiguous
    array and the name's bytes), which the caller keeps alive until the call returns.

    Python lists and scalars become arrays; ints stay ints and floats become float64, which is
    refused like any other dtype the library does not take: no silent casts."""
    arr = np.asarray(value)
    # The library reads host memory as is: native byte order only.
    if not arr.dtype.isnative:
        raise InvalidArgumentError("input %s: dtype %s is not in native byte order" % (name, arr.dtype.str))
    code = _DTYPES.get(arr.dtype)
    if code is None:
        raise InvalidArgumentError(
            "input %s: dtype %s, expected float32, int32 or int64" % (name, arr.dtype.name)
        )
    if arr.ndim == 0 or arr.ndim > _capi.MAX_RANK:
        raise InvalidArgumentError(
            "input %s: rank %d, expected 1 to %d dims" % (name, arr.ndim, _capi.MAX_RANK)
        )
    arr = np.ascontiguousarray(arr)
    name_bytes = name.encode("utf-8")
    t.name = name_bytes
    t.dtype = code
    t.rank = arr.ndim
    for i, d in enumerate(arr.shape):
        t.shape[i] = d
    t.data = arr.ctypes.data if arr.size else None
    return arr, name_bytes


def take_output(lib, tensor):
    """Copies a library-filled Tensor into a new numpy array, then releases the library's data."""
    try:
        dtype = _NUMPY.get(tensor.dtype)
        if dtype is None:
            raise InvalidArgumentError("output %s: unknown dtype code %d" % (tensor.name.decode(), tensor.dtype))
        shape = tuple(tensor.shape[i] for i in range(tensor.rank))
        count = int(np.prod(shape, dtype=np.int64))
        out = np.empty(shape, dtype=dtype)
        if count:
            ctypes.memmove(out.ctypes.data, tensor.data, out.nbytes)
        return out
    finally:
        lib.vkformer_tensor_release(ctypes.byref(tensor))


def ids_array(ids, what="ids"):
    """A contiguous int64 array of token ids from any sequence of Python or numpy integers."""
    arr = np.asarray(ids)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise InvalidArgumentError(
            "%s: expected a flat sequence of integers, got dtype %s shape %s" % (what, arr.dtype.name, list(arr.shape))
        )
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise InvalidArgumentError("%s: value %d does not fit int64" % (what, int(arr.max())))
    return np.ascontiguousarray(arr, dtype=np.int64)
