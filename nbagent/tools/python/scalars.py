"""Scalars whose own repr runs no user code: numpy's numbers, dates and text, the standard
library's dates, decimals, fractions, paths and UUIDs, pandas' timestamps and missing values
(a date-time's ``tzinfo`` only of the standard library's own kinds)."""

from __future__ import annotations

from typing import Any

from nbagent.tools.python.safe_access import (
    class_module,
    class_name,
    defined_by,
    is_a,
    is_exactly,
    is_trusted,
    library_class,
)

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


def numpy_scalar(value: Any) -> bool:
    """Tell whether a value is a numpy scalar of numbers, booleans, dates or text.

    Args:
        value: Any value.
    """
    if not is_trusted(value):
        return False
    kinds = (library_class("numpy", name) for name in _NUMPY_SCALARS)
    return is_a(value, *(k for k in kinds if k is not None))


def stdlib_value(value: Any) -> bool:
    """Tell whether a value is exactly a standard-library value type whose repr runs no user
    code.

    Args:
        value: Any value.
    """
    for module, names in _STDLIB_VALUES:
        for name in names:
            cls = defined_by(module, name)
            if cls is not None and type(value) is cls:
                return _zone_known(value)
    return False


def _zone_known(value: Any) -> bool:
    """Whether a date-time's ``tzinfo``, if any, is of the standard library's own kinds."""
    if not is_exactly(value, _datetime_types()):
        return True
    zone = value.tzinfo
    known = [defined_by("datetime", "timezone"), defined_by("zoneinfo", "ZoneInfo")]
    return zone is None or any(type(zone) is k for k in known if k is not None)


def _datetime_types() -> list[type]:
    found = [defined_by("datetime", "datetime"), defined_by("datetime", "time")]
    found.append(library_class("pandas", "Timestamp"))
    return [k for k in found if k is not None]


def pandas_value(value: Any) -> bool:
    """Tell whether a value is a pandas scalar (timestamp, missing value...) safe to repr.

    Args:
        value: Any value.
    """
    if not is_trusted(value) or class_module(type(value)).partition(".")[0] != "pandas":
        return False
    name = class_name(type(value))
    return (name in _PANDAS_VALUES and _zone_known(value)) or name in ("NaTType", "NAType")
