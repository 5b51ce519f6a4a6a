"""Vulkan devices: listing them and opening one."""

import ctypes
import threading
import weakref

from . import _capi
from ._closeable import Closeable
from ._loader import library
from ._text import utf8


def device_names():
    """The names of the Vulkan physical devices, in the order selectors index them."""
    lib = library()
    count = ctypes.c_uint32()
    _capi.check(lib, lib.vkformer_device_count(ctypes.byref(count)))
    names = []
    buf = ctypes.create_string_buffer(256)
    for i in range(count.value):
        _capi.check(lib, lib.vkformer_device_name(i, buf, len(buf)))
        names.append(buf.value.decode("utf-8", errors="replace"))
    return names


class Device(Closeable):
    """An opened Vulkan device. Models loaded on it hold a reference to it; close() closes them
    first (the C API requires its models freed before the device).

    `selector`: an index (int or "1") or a case-insensitive substring of the device's name;
    None: the VKF_DEVICE environment variable, else the best device. `validate`: None follows
    VKF_VALIDATE, True / False force the Khronos validation layer on or off.

    Calls on one device and its models are serialised by a lock, so the objects may be shared
    between Python threads (the C API wants one thread at a time per device)."""

    def __init__(self, selector=None, validate=None):
        self._lib = library()
        self._handle = None
        self._models = weakref.WeakSet()
        self.lock = threading.RLock()
        opts = _capi.DeviceOptions()
        if selector is not None:
            opts.selector = utf8(str(selector), "Device: selector")
        opts.validate = 0 if validate is None else (1 if validate else -1)
        handle = ctypes.c_void_p()
        _capi.check(self._lib, self._lib.vkformer_device_open(ctypes.byref(opts), ctypes.byref(handle)))
        self._handle = handle.value

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("vkformer.Device: the device is closed")
        return self._handle

    @property
    def name(self):
        return self._lib.vkformer_device_get_name(self.handle).decode("utf-8", errors="replace")

    @property
    def validation_messages(self):
        """Messages the validation layer reported so far (0 when it is off)."""
        return int(self._lib.vkformer_device_validation_messages(self.handle))

    def _register(self, model):
        self._models.add(model)

    def close(self):
        """Closes every model still open on this device, then the device. Idempotent."""
        if self._handle is None:
            return
        with self.lock:
            for model in list(self._models):
                model.close()  # a model that owns this device closes it too
            if self._handle is not None:
                self._lib.vkformer_device_close(self._handle)
                self._handle = None

    def __repr__(self):
        state = repr(self.name) if self._handle is not None else "closed"
        return "<vkformer.Device %s>" % state
