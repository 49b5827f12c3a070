"""Short descriptions of Python values that run none of the user's code.

Describing a value must not run it: a ``__repr__``, a property, ``__len__``, ``__eq__`` or
``__getattribute__`` of a class defined in the notebook (or of a subclass of a library class)
is code the person did not ask to run, and inspection runs in plan mode too. So a value is
looked at only through what Python and the data libraries define:

* its type by ``type(x)`` (never ``x.__class__``, which a class can make a property), and the
  type's name, module, bases and ``__dict__`` through the descriptors of ``type`` itself (a
  metaclass's ``__getattribute__`` never runs); classes are compared by identity (``==``,
  ``in`` and hashing would ask a metaclass);
* ``len`` and elements of exact built-in containers, reprs of exact built-in scalars;
* numpy and pandas objects through their real classes: a numpy subclass is seen through
  ``numpy.ndarray.view(x, numpy.ndarray)``, a pandas subclass through a plain DataFrame or
  Series made from its block manager, so none of the subclass's overrides runs; their cells
  are formatted here (a cell holding a user object shows its safe form), never by pandas'
  or numpy's printing of Python objects;
* objects of other trusted libraries (torch, polars, ...) only when their class is really
  the library's (found under its name in the library's loaded module), for ``shape``,
  ``dtype`` and ``nbytes``;
* anything else by ``object.__repr__`` (``<module.Class object at 0x...>``) and the
  instance ``__dict__`` read through the standard slot.

No module is imported: a value is a numpy or pandas object only if the user's code already
imported them (``sys.modules``). :func:`~nbagent.tools.python.reprs.safe_repr`, for what
:mod:`~nbagent.tools.python.runcode` returns after running code, is the one function of these
modules that calls a value's ``__repr__``, bounded in time by a trace function
(:func:`~nbagent.tools.python.timelimit.bounded`).

This module makes the one-line summary and preview; what it reads them with is in
:mod:`~nbagent.tools.python.safe_access` (types and attributes),
:mod:`~nbagent.tools.python.arrays` (numpy and pandas), :mod:`~nbagent.tools.python.scalars`,
:mod:`~nbagent.tools.python.routines`, :mod:`~nbagent.tools.python.reprs`,
:mod:`~nbagent.tools.python.sizes` and :mod:`~nbagent.tools.python.timelimit`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from nbagent.core.text import collapse_whitespace, cut
from nbagent.tools.python.arrays import array_view, pandas_kind, pandas_view
from nbagent.tools.python.reprs import PREVIEW_ITEMS, cell_text, inert_repr, routine_text
from nbagent.tools.python.routines import is_routine
from nbagent.tools.python.safe_access import class_name, is_a, library_class, type_label
from nbagent.tools.python.sizes import dtype_of, human_bytes, memory_of, shape_of
from nbagent.tools.python.timelimit import ReprTimeout, bounded


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


def summarize(value: Any, chars: int, seconds: float) -> Summary:
    """Summarise a value on one line, running none of the user's code.

    Args:
        value: Any value.
        chars: Characters of the preview at most.
        seconds: Time the libraries' rendering may take.
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


def preview(value: Any, chars: int, seconds: float) -> str:
    """Return a one-line preview of a value that runs none of the user's code.

    Args:
        value: Any value.
        chars: Characters at most.
        seconds: Time the libraries' rendering may take.
    """
    try:
        kind = pandas_kind(value)
        view = pandas_view(value) if kind else None
        if kind and view is None:
            text = PANDAS_UNKNOWN
        elif kind == "DataFrame":
            columns = [cell_text(c) for c in view.columns[:PREVIEW_ITEMS]]
            more = len(view.columns) - len(columns)
            text = "columns: " + ", ".join(columns) + (f", … (+{more})" if more > 0 else "")
        elif kind:
            text = bounded(lambda: pandas_values_text(view, 6), seconds)
        elif (array := array_view(value)) is not None:
            text = bounded(lambda: array_text(array, threshold=6), seconds)
        elif is_routine(value):
            text = routine_text(value)
        elif is_a(value, type):
            text = f"class {class_name(value)}"
        else:
            text = inert_repr(value, chars)
    except ReprTimeout:
        text = f"<its preview took longer than {seconds:g} s>"
    except Exception as exc:
        text = f"<no preview: {type(exc).__name__}>"
    return cut(collapse_whitespace(text), chars)


PANDAS_UNKNOWN = "(holds data of a type that is not numpy's or pandas' own: not read)"
"""What is said of a pandas object whose data would run code of the user's to read."""


def array_text(array: Any, threshold: int) -> str:
    """Render a plain numpy array's values, summarised past ``threshold`` elements.

    Numbers, dates and text are printed by numpy (ignoring a formatter set with
    ``numpy.set_printoptions``, which is code of the user's); arrays of Python objects list
    their first elements in their safe form.

    Args:
        array: A plain ``numpy.ndarray`` (:func:`array_view`).
        threshold: Elements beyond which the middle is elided.
    """
    numpy = sys.modules["numpy"]
    if array.dtype.hasobject:
        items = array.ravel()[:threshold].tolist() if array.dtype.fields is None else []
        shown = [inert_repr(x, 40) for x in items]
        more = " …" if array.size > len(shown) else ""
        return "[" + " ".join(shown) + more + "]"
    return numpy.array2string(
        array, threshold=threshold, edgeitems=3, max_line_width=100, formatter={}
    )


def pandas_values_text(view: Any, threshold: int) -> str:
    """Render the values of a plain Series or the labels of an Index, summarised past
    ``threshold``: numbers by numpy, anything else in its safe form.

    Args:
        view: A plain Series or Index (:func:`pandas_view`).
        threshold: Elements beyond which the rest is left out (numbers: the middle).
    """
    numpy_dtype = library_class("numpy", "dtype")
    dtype = view.dtype
    numeric = numpy_dtype is not None and is_a(dtype, numpy_dtype) and not dtype.hasobject
    if pandas_kind(view) == "Series" and numeric:
        return array_text(view.to_numpy(), threshold)
    shown = [
        inert_repr(x, 40) if type(x) is str else cell_text(x) for x in view[:threshold].tolist()
    ]
    return "[" + " ".join(shown) + (" …" if len(view) > threshold else "") + "]"
