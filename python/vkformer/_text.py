"""Python strings on their way into the C API, which takes NUL-terminated UTF-8."""

from .errors import InvalidArgumentError


def utf8(text, what):
    """`text` (a str) as UTF-8 bytes. A NUL character would end the C string there and silently
    drop the rest, so it is refused, naming the argument and where it is (as vkf refuses a NUL
    byte in an input line)."""
    i = text.find("\0")
    if i >= 0:
        raise InvalidArgumentError("%s: a NUL character at index %d (not text)" % (what, i))
    return text.encode("utf-8")
