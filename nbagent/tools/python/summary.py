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
imported them (``sys.modules``). :func:`safe_repr`, for what :mod:`~nbagent.tools.python.runcode`
returns after running code, is the one function here that calls a value's ``__repr__``,
bounded in time by a trace function (:func:`bounded`).
"""

from __future__ import annotations

import inspect
import itertools
import reprlib
import sys
import time
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from nbagent.core.text import cut

T = TypeVar("T")

TRUSTED_LIBRARIES = frozenset(
    {"numpy", "pandas", "torch", "polars", "jax", "jaxlib", "xarray", "scipy", "pyarrow"}
)
"""Libraries whose own classes' ``shape``, ``dtype`` and ``nbytes`` are cheap and run only
the library's code."""

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
_SIZED = (*_CONTAINERS, str, bytes, bytearray, range)
_PREVIEW_ITEMS = 10
_STDLIB_VALUES = (
    ("datetime", ("date", "datetime", "time", "timedelta", "timezone")),
    ("decimal", ("Decimal",)),
    ("fractions", ("Fraction",)),
    ("pathlib", ("PurePosixPath", "PureWindowsPath", "PosixPath", "WindowsPath")),
    ("uuid", ("UUID",)),
)
"""Standard-library value types whose repr (of an instance of exactly that type) is their own
code, reading nothing of the user's; a ``tzinfo`` is checked apart."""
_PANDAS_VALUES = ("Timestamp", "Timedelta", "Period")
_NUMPY_SCALARS = ("number", "bool_", "datetime64", "timedelta64", "str_", "bytes_")


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


# -- types, read through type's own descriptors -------------------------------------------

_TYPE_SLOTS = type.__dict__


def class_mro(cls: type) -> tuple[type, ...]:
    """Return a class's method resolution order without asking its metaclass.

    Args:
        cls: Any class.
    """
    return _TYPE_SLOTS["__mro__"].__get__(cls, type)


def class_dict(cls: type) -> Mapping[str, Any]:
    """Return a class's own namespace (``vars(cls)``) without asking its metaclass.

    Args:
        cls: Any class.
    """
    return _TYPE_SLOTS["__dict__"].__get__(cls, type)


def class_module(cls: type) -> str:
    """Return the module a class says it was defined in ("" when that is not a string).

    Args:
        cls: Any class.
    """
    module = _TYPE_SLOTS["__module__"].__get__(cls, type)
    return module if type(module) is str else ""


def class_name(cls: type) -> str:
    """Return a class's qualified name without asking its metaclass.

    Args:
        cls: Any class.
    """
    return _TYPE_SLOTS["__qualname__"].__get__(cls, type)


def is_a(value: Any, *classes: type) -> bool:
    """``isinstance`` by the value's real type, comparing classes by identity only.

    ``isinstance`` may ask the value for its ``__class__`` (a property runs) and a metaclass
    for ``__instancecheck__``; ``in`` and ``==`` on classes may ask a metaclass's ``__eq__``.

    Args:
        value: Any value.
        *classes: The classes.
    """
    return any(k is c for k in class_mro(type(value)) for c in classes)


def is_exactly(value: Any, classes: Iterable[type]) -> bool:
    """Tell whether a value's type is one of some classes (by identity, no metaclass asked).

    Args:
        value: Any value.
        classes: The classes.
    """
    kind = type(value)
    return any(kind is c for c in classes)


def class_attribute(cls: type, name: str, default: Any = None) -> Any:
    """A class attribute as stored, from the first class of the MRO that has it.

    Read through ``type``'s own descriptors: no metaclass code runs.

    Args:
        cls: The class.
        name: The attribute.
        default: What to return when no class of the MRO has it.
    """
    for klass in class_mro(cls):
        namespace = class_dict(klass)
        if name in namespace:
            return namespace[name]
    return default


def is_descriptor(value: Any) -> bool:
    """Tell whether a class attribute computes what reading it gives (it has ``__get__``).

    Args:
        value: A class attribute as stored.
    """
    return class_attribute(type(value), "__get__") is not None


def is_data_descriptor(value: Any) -> bool:
    """Tell whether a class attribute takes precedence over the instance ``__dict__``.

    Args:
        value: A class attribute as stored.
    """
    kind = type(value)
    return (
        class_attribute(kind, "__set__") is not None
        or class_attribute(kind, "__delete__") is not None
    )


def instance_dict(value: Any) -> dict[str, Any]:
    """Return an object's instance attributes without running its code.

    Only the standard ``__dict__`` slot (or a module's) is read; a class that redefines
    ``__dict__`` (say, as a property) gets an empty answer.

    Args:
        value: Any object.
    """
    for klass in class_mro(type(value)):
        slot = class_dict(klass).get("__dict__")
        if slot is not None:
            if is_exactly(slot, (types.GetSetDescriptorType, types.MemberDescriptorType)):
                found = slot.__get__(value, klass)
                return found if type(found) is dict else {}
            return {}
    return {}


def _defined_by(module: str, name: str) -> Any:
    """What a loaded module holds under a dotted name (dict reads only), else None."""
    loaded = sys.modules.get(module)
    if loaded is None or not is_a(loaded, types.ModuleType):
        return None
    found: Any = None
    namespace: Mapping[str, Any] = instance_dict(loaded)
    for part in name.split("."):
        found = namespace.get(part)
        if found is None:
            return None
        namespace = class_dict(found) if is_a(found, type) else {}
    return found


def library_class(module: str, name: str) -> type | None:
    """Return a class a loaded module defines (no import, no module ``__getattr__``).

    Args:
        module: The module, e.g. ``pandas``.
        name: The class's name in it, e.g. ``DataFrame``.
    """
    found = _defined_by(module, name)
    return found if is_a(found, type) else None


def is_library_class(cls: type) -> bool:
    """Tell whether a class is really one of a trusted library's.

    It must name a trusted library as its module and be what that loaded module holds under
    its qualified name: a class of the notebook that only claims ``__module__ = "pandas"`` is
    not.

    Args:
        cls: Any class.
    """
    module = class_module(cls)
    if module.partition(".")[0] not in TRUSTED_LIBRARIES:
        return False
    return _defined_by(module, class_name(cls)) is cls


def library_of(value: Any) -> str:
    """Return the top-level package that defines a value's type ("builtins" for built-ins).

    Args:
        value: Any value.
    """
    return class_module(type(value)).partition(".")[0]


def is_trusted(value: Any) -> bool:
    """Tell whether a value's class is really one of a trusted data library's.

    Args:
        value: Any value.
    """
    return is_library_class(type(value))


def type_label(value: Any) -> str:
    """Name a value's type: ``int``, ``pandas.DataFrame``, ``Point`` (for ``__main__``).

    Args:
        value: Any value.
    """
    return class_label(type(value))


def class_label(cls: type) -> str:
    """Name a class: its qualified name, after its top-level package unless built-in or main.

    Args:
        cls: Any class.
    """
    module = class_module(cls)
    if module in ("builtins", "__main__") or not module:
        return class_name(cls)
    return f"{module.partition('.')[0]}.{class_name(cls)}"


# -- functions and classes -------------------------------------------------------------------

_ROUTINES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)
_BUILTIN_ROUTINES = _ROUTINES[1:2] + _ROUTINES[3:]


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
    if is_exactly(value, _BUILTIN_ROUTINES):
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
    if func is None and not is_exactly(value, _BUILTIN_ROUTINES):
        return ""
    doc = (func if func is not None else value).__doc__
    return inspect.cleandoc(doc) if type(doc) is str else ""


def class_bases(cls: type) -> tuple[type, ...]:
    """Return a class's direct bases without asking its metaclass.

    Args:
        cls: Any class.
    """
    return _TYPE_SLOTS["__bases__"].__get__(cls, type)


# -- numpy and pandas, through their real classes ----------------------------------------


def array_view(value: Any) -> Any:
    """Return a plain ``numpy.ndarray`` of a numpy array's data, else None.

    A subclass's array is seen through ``numpy.ndarray.view``, which runs none of the
    subclass's code (not even ``__array_finalize__``).

    Args:
        value: Any value.
    """
    array = library_class("numpy", "ndarray")
    if array is None or not is_a(value, array):
        return None
    return value if type(value) is array else array.view(value, array)


def pandas_kind(value: Any) -> str:
    """Return "DataFrame", "Series" or "Index" for a pandas object (subclasses too), else "".

    Args:
        value: Any value.
    """
    for name in ("DataFrame", "Series", "Index"):
        cls = library_class("pandas", name)
        if cls is not None and is_a(value, cls):
            return name
    return ""


def pandas_view(value: Any) -> Any:
    """Return a plain pandas DataFrame, Series or Index of a pandas object's data, else None.

    A subclass's block manager (read from the instance ``__dict__``, so none of its code
    runs) is put into a new plain DataFrame or Series. None when the data are not all of
    numpy's and pandas' own types (an extension array of the user's would run its code when
    read), and for an Index of another class than pandas' own.

    Args:
        value: A pandas object (:func:`pandas_kind`).
    """
    view = _plain_pandas(value)
    return view if view is not None and _pandas_data_known(view) else None


def _plain_pandas(value: Any) -> Any:
    """A pandas object as a plain DataFrame or Series (or pandas' own Index), unchecked."""
    kind = pandas_kind(value)
    base = library_class("pandas", kind) if kind else None
    if base is None:
        return None
    if type(value) is base or (kind == "Index" and is_trusted(value)):
        return value
    if kind == "Index":
        return None
    own = instance_dict(value)
    manager = own.get("_mgr")
    frame = library_class("pandas.core.generic", "NDFrame")
    if manager is None or frame is None or not is_trusted(manager):
        return None
    view = object.__new__(base)
    frame.__init__(view, manager)
    if kind == "Series":
        object.__setattr__(view, "_name", own.get("_name"))
    return view


def _pandas_data_known(view: Any) -> bool:
    """Whether a plain DataFrame, Series or Index holds only numpy's and pandas' arrays."""
    if pandas_kind(view) == "Index":
        return _index_known(view)
    manager = view._mgr
    return all(_array_known(block.values) for block in manager.blocks) and all(
        _index_known(axis) for axis in manager.axes
    )


def _pandas_shape(value: Any) -> str:
    """A pandas object's shape from the lengths of its axes, when they are pandas' own."""
    view = _plain_pandas(value)
    if view is None:
        return ""
    axes = [view] if pandas_kind(view) == "Index" else list(reversed(view._mgr.axes))
    if not all(_index_known(axis) for axis in axes):
        return ""
    return "×".join(str(len(axis)) for axis in axes)


def _index_known(index: Any) -> bool:
    if not is_trusted(index):
        return False
    name = class_name(type(index))
    if name == "RangeIndex":
        return True
    if name == "MultiIndex":
        return all(_index_known(level) for level in index.levels)
    return _array_known(index._data)


def _array_known(array: Any) -> bool:
    if type(array) is library_class("numpy", "ndarray"):
        return True
    if not is_trusted(array):
        return False
    categories = library_class("pandas", "Categorical")
    return type(array) is not categories or _index_known(array.categories)


def _numpy_scalar(value: Any) -> bool:
    """Whether a value is a numpy scalar of numbers, booleans, dates or text."""
    if not is_trusted(value):
        return False
    kinds = (library_class("numpy", name) for name in _NUMPY_SCALARS)
    return is_a(value, *(k for k in kinds if k is not None))


def _stdlib_value(value: Any) -> bool:
    """Whether a value is exactly a standard-library value type whose repr runs no user code."""
    for module, names in _STDLIB_VALUES:
        for name in names:
            cls = _defined_by(module, name)
            if cls is not None and type(value) is cls:
                return _zone_known(value)
    return False


def _zone_known(value: Any) -> bool:
    """Whether a date-time's ``tzinfo``, if any, is of the standard library's own kinds."""
    if not is_exactly(value, _datetime_types()):
        return True
    zone = value.tzinfo
    known = [_defined_by("datetime", "timezone"), _defined_by("zoneinfo", "ZoneInfo")]
    return zone is None or any(type(zone) is k for k in known if k is not None)


def _datetime_types() -> list[type]:
    found = [_defined_by("datetime", "datetime"), _defined_by("datetime", "time")]
    found.append(library_class("pandas", "Timestamp"))
    return [k for k in found if k is not None]


def _pandas_value(value: Any) -> bool:
    """Whether a value is a pandas scalar (timestamp, missing value...) safe to repr."""
    if not is_trusted(value) or class_module(type(value)).partition(".")[0] != "pandas":
        return False
    name = class_name(type(value))
    return (name in _PANDAS_VALUES and _zone_known(value)) or name in ("NaTType", "NAType")


# -- previews ---------------------------------------------------------------------------------


class _InertRepr(reprlib.Repr):
    """reprlib's abbreviations of built-in containers, with every other value in its safe
    form; dicts and sets are not sorted (sorting compares keys: their code)."""

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
    if _numpy_scalar(value) or _stdlib_value(value) or _pandas_value(value):
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
    if is_exactly(value, (int, float, bool, type(None))) or _numpy_scalar(value):
        return cut(str(value), chars)
    if _pandas_value(value) or _stdlib_value(value):
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
        return _pandas_shape(value)
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
            columns = [cell_text(c) for c in view.columns[:_PREVIEW_ITEMS]]
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
    return cut(one_line(text), chars)


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
