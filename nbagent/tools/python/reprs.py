"""Reprs that run none of the user's code (:func:`inert_repr`, :func:`cell_text`), functions
shown by their signature, and the one repr that calls a value's own ``__repr__``, bounded in
time (:func:`safe_repr`)."""

from __future__ import annotations

import inspect
import itertools
import reprlib
import types
from typing import Any

from nbagent.core.text import cut
from nbagent.tools.python.routines import BUILTIN_ROUTINES, is_routine, python_function
from nbagent.tools.python.safe_access import (
    class_attribute,
    class_label,
    class_module,
    class_name,
    is_a,
    is_exactly,
    type_label,
)
from nbagent.tools.python.scalars import numpy_scalar, pandas_value, stdlib_value
from nbagent.tools.python.sizes import dtype_of, shape_of
from nbagent.tools.python.timelimit import ReprTimeout, bounded

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
PREVIEW_ITEMS = 10


class _InertRepr(reprlib.Repr):
    """reprlib's abbreviations of built-in containers, with every other value in its safe
    form; dicts and sets are not sorted (sorting compares keys: their code)."""

    def __init__(self, chars: int) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = PREVIEW_ITEMS
        self.maxdeque = self.maxarray = self.maxdict = PREVIEW_ITEMS
        self.maxstring = min(chars, 160)
        self.maxlong = 60
        self.maxother = chars

    def repr_int(self, x: int, level: int) -> str:
        """Name the size of an int too long to convert to decimal quickly."""
        if x.bit_length() > 4000:
            return f"<int of {x.bit_length():,} bits>"
        return super().repr_int(x, level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        """A dict's first items, in their order."""
        if not x:
            return "{}"
        if level <= 0:
            return "{" + self.fillvalue + "}"
        pieces = [
            f"{self.repr1(key, level - 1)}: {self.repr1(item, level - 1)}"
            for key, item in itertools.islice(dict.items(x), self.maxdict)
        ]
        if len(x) > self.maxdict:
            pieces.append(self.fillvalue)
        return "{" + ", ".join(pieces) + "}"

    def repr_set(self, x: set[Any], level: int) -> str:
        """A set's first elements, in their order."""
        if not x:
            return "set()"
        return self._repr_iterable(x, level, "{", "}", self.maxset)

    def repr_frozenset(self, x: frozenset[Any], level: int) -> str:
        """A frozenset's first elements, in their order."""
        if not x:
            return "frozenset()"
        return self._repr_iterable(x, level, "frozenset({", "})", self.maxfrozenset)

    def repr1(self, x: Any, level: int) -> str:
        """Abbreviate built-ins the reprlib way; show everything else in its safe form."""
        if is_exactly(x, _PLAIN):
            return super().repr1(x, level)
        return cut(_inert_other(x), self.maxother)


def _inert_other(value: Any) -> str:
    """The safe form of a value that is not a built-in scalar or container."""
    if is_routine(value):
        return f"<function {routine_text(value)}>"
    if is_a(value, type):
        return f"<class '{class_label(value)}'>"
    if numpy_scalar(value) or stdlib_value(value) or pandas_value(value):
        return repr(value)
    shape = shape_of(value)
    if shape:
        dtype = dtype_of(value)
        return f"<{type_label(value)} {shape}{' ' + dtype if dtype else ''}>"
    return object.__repr__(value)


def inert_repr(value: Any, chars: int) -> str:
    """Return a repr of a value that runs none of the user's code, cut to ``chars``.

    Built-in scalars and containers are abbreviated the reprlib way; numpy scalars, dates,
    paths and the like show their repr; arrays and frames their type and shape; functions
    their signature; anything else ``object.__repr__`` (``<module.Class object at 0x...>``).

    Args:
        value: Any value.
        chars: Characters at most.
    """
    return cut(_InertRepr(chars).repr(value), chars)


def cell_text(value: Any, chars: int = 40) -> str:
    """Return how a table shows a cell or a label: text as is, numbers as numpy prints them,
    anything else in its safe form.

    Args:
        value: A cell's or a label's value.
        chars: Characters at most.
    """
    if type(value) is str:
        return cut(value, chars)
    if is_exactly(value, (int, float, bool, type(None))) or numpy_scalar(value):
        return cut(str(value), chars)
    if pandas_value(value) or stdlib_value(value):
        return cut(str(value), chars)
    return inert_repr(value, chars)


def safe_repr(value: Any, chars: int, seconds: float) -> str:
    """Return a value's repr, abbreviated to about ``chars`` characters and bounded in time.

    This calls the value's own ``__repr__`` (and its elements'): it is for values that code
    the person let run has just returned. Inspection uses :func:`inert_repr`.

    Args:
        value: Any value.
        chars: Characters at most.
        seconds: Time a user-defined ``__repr__`` may take.

    Returns:
        The repr, or a note saying why there is none.
    """
    try:
        return cut(bounded(lambda: _SafeRepr(chars).repr(value), seconds), chars)
    except ReprTimeout:
        return f"<{type_label(value)} object: its repr took longer than {seconds:g} s>"
    except Exception as exc:
        return f"<{type_label(value)} object: its repr failed ({type(exc).__name__})>"


class _SafeRepr(_InertRepr):
    """Like :class:`_InertRepr`, but other values show their own (bounded) repr."""

    def repr1(self, x: Any, level: int) -> str:
        """Abbreviate built-ins the reprlib way; other objects show their own repr."""
        if is_exactly(x, _PLAIN):
            return super().repr1(x, level)
        if class_attribute(type(x), "__repr__") is object.__repr__:
            return f"<{type_label(x)} object>"
        return cut(repr(x), self.maxother)


def routine_text(value: Any) -> str:
    """Return ``name(parameters)`` of a function or method, read from its code object.

    ``inspect.signature`` would format defaults and annotations with their reprs and follow
    ``__wrapped__`` and ``__signature__``: user code. Here defaults show their safe form,
    annotations only when they are classes, strings or built-in generic aliases.

    Args:
        value: A routine (:func:`is_routine`).
    """
    func = python_function(value)
    if func is not None:
        bound = is_exactly(value, (types.MethodType,))
        return f"{func.__name__}{_signature(func, bound)}"
    if is_exactly(value, BUILTIN_ROUTINES):
        text = value.__text_signature__
        if type(text) is str and text.startswith("("):
            parts = [p.strip() for p in text[1:-1].split(",")]
            parts = [p for p in parts if p and not p.startswith("$")]
            if parts[:1] == ["/"]:
                del parts[0]
            return f"{value.__name__}({', '.join(parts)})"
        return f"{value.__name__}(…)"
    return object.__repr__(value)


_ABSENT: Any = object()


def _signature(func: types.FunctionType, bound: bool) -> str:
    """A Python function's parameters, as ``inspect`` shows them."""
    code = func.__code__
    names = code.co_varnames
    positional, keywords = code.co_argcount, code.co_kwonlyargcount
    defaults = func.__defaults__ if type(func.__defaults__) is tuple else ()
    keyword_defaults = func.__kwdefaults__ if type(func.__kwdefaults__) is dict else {}
    notes = _annotations(func)

    def parameter(name: str, default: Any = _ABSENT) -> str:
        text = name + (f": {_annotation(notes[name])}" if name in notes else "")
        if default is _ABSENT:
            return text
        return text + (" = " if name in notes else "=") + inert_repr(default, 40)

    parts = []
    first_default = positional - len(defaults)
    for i, name in enumerate(names[:positional]):
        default = defaults[i - first_default] if i >= first_default else _ABSENT
        parts.append(parameter(name, default))
        if i + 1 == code.co_posonlyargcount:
            parts.append("/")
    rest = positional + keywords
    if code.co_flags & inspect.CO_VARARGS:
        parts.append("*" + parameter(names[rest]))
        rest += 1
    elif keywords:
        parts.append("*")
    for name in names[positional : positional + keywords]:
        parts.append(parameter(name, keyword_defaults.get(name, _ABSENT)))
    if code.co_flags & inspect.CO_VARKEYWORDS:
        parts.append("**" + parameter(names[rest]))
    if bound and positional:
        del parts[0]
        if parts[:1] == ["/"]:
            del parts[0]
    returns = f" -> {_annotation(notes['return'])}" if "return" in notes else ""
    return f"({', '.join(parts)}){returns}"


def _annotations(func: types.FunctionType) -> dict[str, Any]:
    """A function's annotations when they are already values (from Python 3.14 on, reading
    ``__annotations__`` may evaluate them: code)."""
    lazy = getattr(types.FunctionType, "__annotate__", None) is not None
    if lazy and func.__annotate__ is not None:  # type: ignore[attr-defined]
        return {}
    found = func.__annotations__
    return found if type(found) is dict else {}


def _annotation(value: Any) -> str:
    """An annotation as ``inspect`` writes it, for what can be written without code."""
    if value is None:
        return "None"
    if type(value) is str:
        return repr(value)
    if is_a(value, type):
        module = class_module(value)
        name = class_name(value)
        return name if module == "builtins" else f"{module}.{name}"
    if is_exactly(value, (types.GenericAlias,)) and type(value.__args__) is tuple:
        args = ", ".join(_annotation(a) for a in value.__args__)
        return f"{_annotation(value.__origin__)}[{args}]"
    if is_exactly(value, (types.UnionType,)) and type(value.__args__) is tuple:
        return " | ".join(_annotation(a) for a in value.__args__)
    return "…"
