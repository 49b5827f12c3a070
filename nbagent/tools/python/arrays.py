"""numpy and pandas objects through their real classes: a numpy subclass seen through
``numpy.ndarray.view``, a pandas subclass through a plain DataFrame or Series made from its
block manager, and only when the data are of numpy's and pandas' own types."""

from __future__ import annotations

from typing import Any

from nbagent.tools.python.safe_access import (
    class_name,
    instance_dict,
    is_a,
    is_trusted,
    library_class,
)


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


def pandas_shape(value: Any) -> str:
    """Return a pandas object's shape from the lengths of its axes, when they are pandas' own
    (else "").

    Args:
        value: A pandas object (:func:`pandas_kind`).
    """
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
