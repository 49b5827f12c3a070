"""Types and attributes read without running the user's code: through ``type``'s own
descriptors (a metaclass's ``__getattribute__`` never runs), classes compared by identity, the
instance ``__dict__`` through the standard slot, and library classes found in their loaded
modules (no import, no module ``__getattr__``)."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable, Mapping
from typing import Any

TRUSTED_LIBRARIES = frozenset(
    {"numpy", "pandas", "torch", "polars", "jax", "jaxlib", "xarray", "scipy", "pyarrow"}
)
"""Libraries whose own classes' ``shape``, ``dtype`` and ``nbytes`` are cheap and run only
the library's code."""
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


def class_bases(cls: type) -> tuple[type, ...]:
    """Return a class's direct bases without asking its metaclass.

    Args:
        cls: Any class.
    """
    return _TYPE_SLOTS["__bases__"].__get__(cls, type)


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


def defined_by(module: str, name: str) -> Any:
    """Return what a loaded module holds under a dotted name (dict reads only), else None.

    Args:
        module: The module, e.g. ``datetime``.
        name: The dotted name in it, e.g. ``datetime.tzinfo``.
    """
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
    found = defined_by(module, name)
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
    return defined_by(module, class_name(cls)) is cls


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
