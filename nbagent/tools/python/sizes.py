"""Sizes of values, when safe to know: shapes and lengths, element types and bytes of
memory, and a byte count as a person reads it."""

from __future__ import annotations

import sys
from typing import Any

from nbagent.tools.python.arrays import array_view, pandas_kind, pandas_shape, pandas_view
from nbagent.tools.python.safe_access import is_a, is_exactly, is_trusted

_CONTAINERS = (list, tuple, dict, set, frozenset)
_SIZED = (*_CONTAINERS, str, bytes, bytearray, range)


def _shape_text(shape: Any) -> str:
    """``3×4`` of a shape that is a tuple of ints, ``scalar`` of an empty one, else ""."""
    if not is_a(shape, tuple):
        return ""
    sizes = list(tuple.__iter__(shape))
    if not all(is_exactly(n, (int,)) for n in sizes):
        return ""
    return "×".join(str(n) for n in sizes) if sizes else "scalar"


def shape_of(value: Any) -> str:
    """Return the shape (``100×3``) or length (``len 12``) of a value, when safe to know.

    Args:
        value: Any value.
    """
    if (array := array_view(value)) is not None:
        return _shape_text(array.shape)
    if pandas_kind(value):
        return pandas_shape(value)
    if is_exactly(value, _SIZED):
        return f"len {len(value)}"
    if is_trusted(value):
        return _shape_text(getattr(value, "shape", None))
    return ""


def dtype_of(value: Any) -> str:
    """Return the element type of an array, a Series or another library's array, else empty.

    Args:
        value: Any value.
    """
    kind = pandas_kind(value)
    if kind == "DataFrame":
        return ""
    if kind:
        view = pandas_view(value)
        return dtype_name(view.dtype) if view is not None else ""
    if (array := array_view(value)) is not None:
        return dtype_name(array.dtype)
    if is_trusted(value):
        return dtype_name(getattr(value, "dtype", None))
    return ""


def dtype_name(dtype: Any) -> str:
    """Return a dtype's name if it is a library's own dtype (a user's ExtensionDtype would run
    its code), else "".

    Args:
        dtype: A dtype, or None.
    """
    return str(dtype) if dtype is not None and is_trusted(dtype) else ""


def memory_of(value: Any) -> int | None:
    """Return the bytes a value's data takes, when cheap to know.

    Args:
        value: Any value.

    Returns:
        numpy's ``nbytes``, pandas' ``memory_usage`` (object contents not counted),
        ``sys.getsizeof`` of a string or bytes; None otherwise.
    """
    kind = pandas_kind(value)
    if kind in ("DataFrame", "Series"):
        view = pandas_view(value)
        if view is None:
            return None
        used = view.memory_usage(index=True, deep=False)
        return int(used.sum() if kind == "DataFrame" else used)
    if (array := array_view(value)) is not None:
        return int(array.nbytes)
    if is_exactly(value, (str, bytes, bytearray)):
        return sys.getsizeof(value)
    if is_trusted(value):
        nbytes = getattr(value, "nbytes", None)
        return nbytes if type(nbytes) is int else None
    return None


def human_bytes(count: int) -> str:
    """Format a byte count: ``512 B``, ``2.4 KB``, ``1.2 GB``.

    Args:
        count: Bytes.
    """
    size = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")
