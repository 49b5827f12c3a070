"""Functions and methods seen without running them: what is one, its Python function, and
the docstrings of functions and classes (their signatures are
:func:`~nbagent.tools.python.reprs.routine_text`)."""

from __future__ import annotations

import inspect
import types
from typing import Any

from nbagent.tools.python.safe_access import class_dict, is_a, is_exactly

_ROUTINES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)
BUILTIN_ROUTINES = _ROUTINES[1:2] + _ROUTINES[3:]


def is_routine(value: Any) -> bool:
    """Tell whether a value is a function or method (``inspect.isroutine`` without code).

    Args:
        value: Any value.
    """
    return is_a(value, *_ROUTINES)


def python_function(value: Any) -> types.FunctionType | None:
    """Return the Python function of a function or bound method, else None.

    Args:
        value: Any value.
    """
    if is_exactly(value, (types.MethodType,)):
        value = value.__func__
    return value if is_exactly(value, (types.FunctionType,)) else None


def class_doc(cls: type) -> str:
    """Return a class's own docstring, cleaned, if it is a string (else "").

    Args:
        cls: Any class.
    """
    doc = class_dict(cls).get("__doc__")
    return inspect.cleandoc(doc) if type(doc) is str else ""


def routine_doc(value: Any) -> str:
    """Return a function's or method's docstring, cleaned, if it is a string (else "").

    Args:
        value: A routine (:func:`is_routine`).
    """
    func = python_function(value)
    if func is None and not is_exactly(value, BUILTIN_ROUTINES):
        return ""
    doc = (func if func is not None else value).__doc__
    return inspect.cleandoc(doc) if type(doc) is str else ""
