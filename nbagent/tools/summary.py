"""Safe, short descriptions of Python values: type, shape, dtype, memory and a bounded preview.

"Safe" means: no value is printed whole, and no code of an unknown class runs unbounded.
Attributes of unknown classes are never read through ``getattr`` (a property would run);
only the instance ``__dict__`` is looked at. A user-defined ``__repr__`` does run, since it is
the best description an object has, but under a time limit enforced by a trace function
(:func:`bounded`), and its result is cut. Objects of well-known data libraries (numpy,
pandas, torch, ...) are trusted to have cheap ``shape``, ``dtype`` and summarised reprs.
numpy and pandas are never imported here: a value is one of theirs only if the user's code
already imported them.
"""

from __future__ import annotations

import inspect
import reprlib
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

TRUSTED_LIBRARIES = frozenset(
    {"numpy", "pandas", "torch", "polars", "jax", "jaxlib", "xarray", "scipy", "pyarrow"}
)
"""Libraries whose objects' ``shape``, ``dtype``, ``nbytes`` and repr are cheap and safe."""

_UNTRACED = TRUSTED_LIBRARIES | {"nbagent", "reprlib", "inspect", "builtins"}
_PLAIN = (
    str,
    bytes,
    bytearray,
    int,
    float,
    complex,
    bool,
    type(None),
    list,
    tuple,
    dict,
    set,
    frozenset,
    range,
)
_CONTAINERS = (list, tuple, dict, set, frozenset)
_PREVIEW_ITEMS = 10


class ReprTimeout(Exception):
    """A bounded call ran out of time."""


def bounded(func: Callable[[], T], seconds: float) -> T:
    """Call ``func``, stopping any Python code it runs once ``seconds`` have passed.

    A trace function checks the clock at every call and, inside code outside the trusted
    libraries, at every bytecode instruction, so even a one-line ``while True`` stops. C code
    that never calls back into Python is not interrupted. The thread's previous trace
    function (a debugger's) is restored afterwards.

    Args:
        func: What to call.
        seconds: The time limit.

    Returns:
        What ``func`` returned.

    Raises:
        ReprTimeout: The limit passed.
    """
    deadline = time.monotonic() + seconds

    def tracer(frame: types.FrameType, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise ReprTimeout
        module = frame.f_globals.get("__name__", "") or ""
        if module.partition(".")[0] in _UNTRACED:
            return None
        frame.f_trace_opcodes = True
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        return func()
    finally:
        sys.settrace(previous)


def library_of(value: Any) -> str:
    """Return the top-level package that defines a value's type ("builtins" for built-ins).

    Args:
        value: Any value.
    """
    return (type(value).__module__ or "").partition(".")[0]


def is_trusted(value: Any) -> bool:
    """Tell whether a value belongs to a trusted data library.

    Args:
        value: Any value.
    """
    return library_of(value) in TRUSTED_LIBRARIES


_ROUTINES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)


def is_a(value: Any, *classes: type) -> bool:
    """``isinstance`` by the value's real type only.

    ``isinstance`` also asks the value for its ``__class__``, which a class may make a
    property, running its code.

    Args:
        value: Any value.
        *classes: The classes.
    """
    return issubclass(type(value), classes)


def is_routine(value: Any) -> bool:
    """Tell whether a value is a function or method (``inspect.isroutine`` without code).

    Args:
        value: Any value.
    """
    return is_a(value, *_ROUTINES)


def _instance_of(value: Any, module: str, name: str) -> bool:
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(cls, type) and is_a(value, cls)


def is_array(value: Any) -> bool:
    """Tell whether a value is a numpy array (without importing numpy).

    Args:
        value: Any value.
    """
    return _instance_of(value, "numpy", "ndarray")


def is_frame(value: Any) -> bool:
    """Tell whether a value is a pandas DataFrame (without importing pandas).

    Args:
        value: Any value.
    """
    return _instance_of(value, "pandas", "DataFrame")


def is_series(value: Any) -> bool:
    """Tell whether a value is a pandas Series (without importing pandas).

    Args:
        value: Any value.
    """
    return _instance_of(value, "pandas", "Series")


def type_label(value: Any) -> str:
    """Name a value's type: ``int``, ``pandas.DataFrame``, ``Point`` (for ``__main__``).

    Args:
        value: Any value.
    """
    cls = type(value)
    module = cls.__module__ or ""
    if module in ("builtins", "__main__") or not module:
        return cls.__qualname__
    return f"{module.partition('.')[0]}.{cls.__qualname__}"


def instance_dict(value: Any) -> dict[str, Any]:
    """Return an object's instance attributes without running its code.

    Only the standard ``__dict__`` slot is read; a class that redefines ``__dict__`` (say, as
    a property) gets an empty answer.

    Args:
        value: Any object.
    """
    for klass in type(value).__mro__:
        slot = klass.__dict__.get("__dict__")
        if slot is not None:
            if isinstance(slot, types.GetSetDescriptorType):
                found = object.__getattribute__(value, "__dict__")
                return found if type(found) is dict else {}
            return {}
    return {}


def _plain_repr(value: Any) -> bool:
    """Tell whether a value's type uses ``object.__repr__`` (nothing to learn by calling it)."""
    return type(value).__repr__ is object.__repr__


class _SafeRepr(reprlib.Repr):
    """reprlib with its abbreviations for built-in containers, and care for everything else."""

    def __init__(self, chars: int) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = _PREVIEW_ITEMS
        self.maxdeque = self.maxarray = self.maxdict = _PREVIEW_ITEMS
        self.maxstring = min(chars, 160)
        self.maxlong = 60
        self.maxother = chars

    def repr_int(self, x: int, level: int) -> str:
        """Name the size of an int too long to convert to decimal quickly."""
        if x.bit_length() > 4000:
            return f"<int of {x.bit_length():,} bits>"
        return super().repr_int(x, level)

    def repr1(self, x: Any, level: int) -> str:
        """Abbreviate built-ins the reprlib way; describe other objects without surprises."""
        if type(x) in _PLAIN:
            return super().repr1(x, level)
        if _plain_repr(x):
            return f"<{type_label(x)} object>"
        return _cut(repr(x), self.maxother)


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(chars - 1, 0)] + "…"


def safe_repr(value: Any, chars: int, seconds: float) -> str:
    """Return a value's repr, abbreviated to about ``chars`` characters and bounded in time.

    Args:
        value: Any value.
        chars: Characters at most.
        seconds: Time a user-defined ``__repr__`` may take.

    Returns:
        The repr, or a note saying why there is none.
    """
    try:
        return _cut(bounded(lambda: _SafeRepr(chars).repr(value), seconds), chars)
    except ReprTimeout:
        return f"<{type_label(value)} object: its repr took longer than {seconds:g} s>"
    except Exception as exc:
        return f"<{type_label(value)} object: its repr failed ({type(exc).__name__})>"


def one_line(text: str) -> str:
    """Collapse white space (newlines included) to single spaces.

    Args:
        text: Any text.
    """
    return " ".join(text.split())


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


@dataclass(frozen=True)
class Summary:
    """One line's worth of facts about a value."""

    type: str
    """The type's name."""
    shape: str
    """``100×3`` for arrays and frames, ``len 12`` for built-in containers, else empty."""
    dtype: str
    """The element type of arrays and series, else empty."""
    size: str
    """Memory of the data (numpy, pandas, strings, bytes), else empty."""
    preview: str
    """A short one-line preview."""


def shape_of(value: Any) -> str:
    """Return the shape (``100×3``) or length (``len 12``) of a value, when safe to know.

    Args:
        value: Any value.
    """
    if is_trusted(value):
        shape = getattr(value, "shape", None)
        if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
            return "×".join(str(n) for n in shape) if shape else "scalar"
    if type(value) in (*_CONTAINERS, str, bytes, bytearray, range):
        return f"len {len(value)}"
    return ""


def dtype_of(value: Any) -> str:
    """Return the element type of an array-like from a trusted library, else empty.

    Args:
        value: Any value.
    """
    if is_trusted(value) and not is_frame(value):
        dtype = getattr(value, "dtype", None)
        return str(dtype) if dtype is not None else ""
    return ""


def memory_of(value: Any) -> int | None:
    """Return the bytes a value's data takes, when cheap to know.

    Args:
        value: Any value.

    Returns:
        numpy's ``nbytes``, pandas' ``memory_usage`` (object contents not counted),
        ``sys.getsizeof`` of a string or bytes; None otherwise.
    """
    if is_frame(value):
        return int(value.memory_usage(index=True, deep=False).sum())
    if is_series(value):
        return int(value.memory_usage(index=True, deep=False))
    if type(value) in (str, bytes, bytearray):
        return sys.getsizeof(value)
    if is_trusted(value):
        nbytes = getattr(value, "nbytes", None)
        return nbytes if isinstance(nbytes, int) else None
    return None


def preview(value: Any, chars: int, seconds: float) -> str:
    """Return a one-line preview of a value.

    Args:
        value: Any value.
        chars: Characters at most.
        seconds: Time user code may take.
    """
    try:
        if is_frame(value):
            columns = [str(c) for c in value.columns[:_PREVIEW_ITEMS]]
            more = len(value.columns) - len(columns)
            text = "columns: " + ", ".join(columns) + (f", … (+{more})" if more > 0 else "")
        elif is_array(value) or is_series(value):
            text = bounded(lambda: array_text(value, threshold=6), seconds)
        elif is_routine(value):
            text = f"{getattr(value, '__name__', '?')}{signature_text(value)}"
        elif is_a(value, type):
            text = f"class {value.__qualname__}"
        else:
            text = safe_repr(value, chars, seconds)
    except ReprTimeout:
        text = f"<its preview took longer than {seconds:g} s>"
    except Exception as exc:
        text = f"<no preview: {type(exc).__name__}>"
    return _cut(one_line(text), chars)


def array_text(value: Any, threshold: int) -> str:
    """Render a numpy array's or a pandas Series' values, summarised past ``threshold``.

    Args:
        value: A numpy array or a pandas Series.
        threshold: Elements beyond which the middle is elided.
    """
    import numpy

    data = value.to_numpy() if is_series(value) else value
    return numpy.array2string(data, threshold=threshold, edgeitems=3, max_line_width=100)


def signature_text(func: Any) -> str:
    """Return a function's signature, or ``(…)`` when it has none to show.

    Args:
        func: A function or method.
    """
    try:
        return str(inspect.signature(func))
    except (TypeError, ValueError):
        return "(…)"


def summarize(value: Any, chars: int, seconds: float) -> Summary:
    """Summarise a value on one line.

    Args:
        value: Any value.
        chars: Characters of the preview at most.
        seconds: Time user code may take.
    """
    try:
        shape, dtype, memory = shape_of(value), dtype_of(value), memory_of(value)
    except Exception:  # a broken library object: still list it
        shape, dtype, memory = "", "", None
    return Summary(
        type=type_label(value),
        shape=shape,
        dtype=dtype,
        size=human_bytes(memory) if memory is not None else "",
        preview=preview(value, chars, seconds),
    )
