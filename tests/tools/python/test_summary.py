"""Safe summaries of values: no properties run, numpy and pandas understood, through
nbagent.tools.python.summary and the modules it reads values with."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.api.extensions import ExtensionArray, ExtensionDtype

from nbagent.tools.python.reprs import inert_repr
from nbagent.tools.python.safe_access import instance_dict, type_label
from nbagent.tools.python.sizes import shape_of
from nbagent.tools.python.summary import PANDAS_UNKNOWN, Summary, summarize


class Point:
    """A plain class: object.__repr__, attributes in __dict__."""

    def __init__(self) -> None:
        self.x = 1
        self.y = [1, 2]


class Watched:
    """Counts how often its property and its __len__ run: they must never run."""

    runs = 0

    @property
    def shape(self) -> tuple[int, int]:
        Watched.runs += 1
        return (1, 1)

    @property
    def dtype(self) -> str:
        Watched.runs += 1
        return "x"

    def __len__(self) -> int:
        Watched.runs += 1
        return 1

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        Watched.runs += 1
        return pd.DataFrame

    @property  # type: ignore[misc]
    def __dict__(self) -> dict[str, Any]:
        Watched.runs += 1
        return {"secret": 1}


def test_builtins() -> None:
    assert summarize(42, 80, 0.5) == Summary("int", "", "", "", "42")
    assert summarize("hi", 80, 0.5) == Summary("str", "len 2", "", "51 B", "'hi'")
    assert summarize(list(range(100)), 80, 0.5).preview == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...]"
    held = summarize({"a": Point()}, 80, 0.5)
    assert (held.type, held.shape, held.dtype, held.size) == ("dict", "len 1", "", "")
    assert re.fullmatch(
        r"\{'a': <tests\.tools\.python\.test_summary\.Point object at 0x\w+>\}", held.preview
    )
    assert summarize(10**5000, 80, 0.5).preview == "<int of 16,610 bits>"


def test_numpy_and_pandas() -> None:
    array = np.arange(12.0).reshape(3, 4)
    summary = summarize(array, 200, 1)
    assert (summary.type, summary.shape, summary.dtype, summary.size) == (
        "numpy.ndarray",
        "3×4",
        "float64",
        "96 B",
    )
    assert summary.preview.startswith("[[ 0. 1. 2. 3.]")
    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    summary = summarize(frame, 80, 1)
    assert (summary.type, summary.shape, summary.dtype) == ("pandas.DataFrame", "3×2", "")
    assert summary.preview == "columns: a, b" and summary.size.endswith("B")
    series = summarize(pd.Series([1.5, 2.5], name="s"), 80, 1)
    assert (series.shape, series.dtype, series.preview) == ("2", "float64", "[1.5 2.5]")
    assert summarize(np.float64(2.5), 80, 1).shape == "scalar"


def test_functions_and_classes() -> None:
    def f(a: int, b: int = 2) -> int:
        return a + b

    assert summarize(f, 80, 1).preview == "f(a: 'int', b: 'int' = 2) -> 'int'"
    assert summarize(Point, 80, 1) == Summary("type", "", "", "", "class Point")


def test_unknown_code_never_runs() -> None:
    Watched.runs = 0
    value = Watched()
    summary = summarize(value, 80, 1)
    assert summary.type == "tests.Watched" and summary.shape == "" and summary.dtype == ""
    assert instance_dict(value) == {}
    assert Watched.runs == 0


# -- no code of the user's runs ---------------------------------------------------------------

CALLS: list[str] = []
"""What the watched classes' methods were asked: must stay empty while describing."""

DUNDERS = (
    "__repr__",
    "__str__",
    "__len__",
    "__getattr__",
    "__getattribute__",
    "__class__",
    "__dict__",
    "__format__",
    "_repr_html_",
    "__sizeof__",
    "__eq__",
    "__hash__",
    "__bool__",
    "__iter__",
    "__lt__",
    "__getitem__",
    "__contains__",
    "__dir__",
    "__reduce_ex__",
    "__fspath__",
    "__call__",
    "__array__",
    "shape",
    "dtype",
)
"""Methods and properties whose running would show: each one appends its name to CALLS."""


@pytest.fixture(autouse=True)
def nothing_ran_before() -> None:
    """Each test starts with no call recorded."""
    CALLS.clear()


def _recorder(name: str) -> Any:
    """A method (or property) that says it ran and returns something plausible."""
    if name == "__getattribute__":
        return lambda self, attr: CALLS.append(name) or object.__getattribute__(self, attr)
    if name in ("__class__", "__dict__", "shape", "dtype"):
        values = {"__class__": pd.DataFrame, "__dict__": {"secret": 1}, "shape": (1,)}
        return property(lambda self: CALLS.append(name) or values.get(name, "int64"))
    answers: dict[str, Any] = {
        "__repr__": "R",
        "__str__": "S",
        "__format__": "F",
        "_repr_html_": "<b>R</b>",
        "__len__": 1,
        "__sizeof__": 16,
        "__hash__": 0,
        "__eq__": True,
        "__lt__": False,
        "__bool__": True,
        "__contains__": True,
        "__dir__": ["x"],
        "__fspath__": "/x",
        "__iter__": iter(()),
        "__getattr__": 1,
        "__getitem__": 1,
        "__array__": np.zeros(1),
        "__reduce_ex__": (object, ()),
        "__call__": 1,
    }
    return lambda self, *args, **kwargs: CALLS.append(name) or answers[name]


def watched_class(names: Any = DUNDERS, base: type = object) -> type:
    """A class whose listed methods record that they ran (its instances hold ``self.x``)."""

    def __init__(self: Any) -> None:  # noqa: N807
        object.__setattr__(self, "x", [1, 2])

    namespace = {name: _recorder(name) for name in names}
    return type("Watchful", (base,), {**namespace, "__init__": __init__})


class Meta(type):
    """A metaclass asked nothing by describing its classes or their instances."""

    def __getattribute__(cls, name: str) -> Any:
        CALLS.append(f"Meta.__getattribute__({name})")
        return type.__getattribute__(cls, name)

    def __eq__(cls, other: object) -> bool:
        CALLS.append("Meta.__eq__")
        return True

    def __hash__(cls) -> int:
        CALLS.append("Meta.__hash__")
        return 0

    def __repr__(cls) -> str:
        CALLS.append("Meta.__repr__")
        return "M"

    def __instancecheck__(cls, instance: Any) -> bool:
        CALLS.append("Meta.__instancecheck__")
        return True

    def __subclasscheck__(cls, subclass: Any) -> bool:
        CALLS.append("Meta.__subclasscheck__")
        return True

    def __len__(cls) -> int:
        CALLS.append("Meta.__len__")
        return 1


class Tracked(pd.DataFrame):
    """A DataFrame subclass whose overrides record that they ran."""

    @property
    def _constructor(self) -> Any:
        CALLS.append("_constructor")
        return Tracked

    @property
    def dtypes(self) -> Any:  # type: ignore[override]
        CALLS.append("dtypes")
        return pd.Series(["fake"])

    @property
    def shape(self) -> Any:  # type: ignore[override]
        CALLS.append("shape")
        return (99, 99)

    @property
    def columns(self) -> Any:  # type: ignore[override]
        CALLS.append("columns")
        return pd.DataFrame.columns.__get__(self)  # type: ignore[attr-defined]

    @columns.setter
    def columns(self, value: Any) -> None:
        pd.DataFrame.columns.__set__(self, value)  # type: ignore[attr-defined]

    def head(self, n: int = 5) -> Any:
        CALLS.append("head")
        return self

    def memory_usage(self, *args: Any, **kwargs: Any) -> Any:
        CALLS.append("memory_usage")
        return pd.Series([0])

    def __repr__(self) -> str:
        CALLS.append("__repr__")
        return "fake"

    def _repr_html_(self) -> str:
        CALLS.append("_repr_html_")
        return "fake"

    def __getattribute__(self, name: str) -> Any:
        CALLS.append(f"__getattribute__({name})")
        return super().__getattribute__(name)

    def __len__(self) -> int:
        CALLS.append("__len__")
        return 99


class TrackedSeries(pd.Series):
    """A Series subclass whose overrides record that they ran."""

    @property
    def _constructor(self) -> Any:
        CALLS.append("_constructor")
        return TrackedSeries

    @property
    def dtype(self) -> Any:  # type: ignore[override]
        CALLS.append("dtype")
        return np.dtype("int8")

    @property
    def shape(self) -> Any:  # type: ignore[override]
        CALLS.append("shape")
        return (99,)

    def to_numpy(self, *args: Any, **kwargs: Any) -> Any:
        CALLS.append("to_numpy")
        return np.zeros(1)

    def __repr__(self) -> str:
        CALLS.append("__repr__")
        return "fake"

    def __getattribute__(self, name: str) -> Any:
        CALLS.append(f"__getattribute__({name})")
        return super().__getattribute__(name)


class TrackedArray(np.ndarray):
    """A numpy subclass whose overrides record that they ran."""

    def __array_finalize__(self, obj: Any) -> None:
        CALLS.append("__array_finalize__")

    def __array_function__(self, *args: Any, **kwargs: Any) -> Any:
        CALLS.append("__array_function__")
        return super().__array_function__(*args, **kwargs)

    def __array_ufunc__(self, *args: Any, **kwargs: Any) -> Any:
        CALLS.append("__array_ufunc__")
        return NotImplemented

    @property
    def shape(self) -> Any:  # type: ignore[override]
        CALLS.append("shape")
        return (99,)

    @property
    def dtype(self) -> Any:  # type: ignore[override]
        CALLS.append("dtype")
        return np.dtype("int8")

    def __repr__(self) -> str:
        CALLS.append("__repr__")
        return "fake"

    def __getattribute__(self, name: str) -> Any:
        CALLS.append(f"__getattribute__({name})")
        return super().__getattribute__(name)

    def tolist(self) -> Any:
        CALLS.append("tolist")
        return []


def quietly(make: Any) -> Any:
    """Make a value (its own code may run while it is made), then forget what ran."""
    value = make()
    CALLS.clear()
    return value


def test_a_user_class_is_described_without_its_code() -> None:
    Watchful = watched_class()
    value = quietly(Watchful)
    summary = summarize(value, 200, 1)
    assert (summary.type, summary.shape, summary.dtype, summary.size) == (
        "tests.Watchful",
        "",
        "",
        "",
    )
    assert summary.preview == object.__repr__(value)
    for held in ([value], {"k": value}, quietly(lambda: {value}), (value,), {"k": [value]}):
        assert object.__repr__(value) in summarize(held, 400, 1).preview
    assert summarize(Watchful, 80, 1).preview == "class Watchful"
    assert inert_repr(value, 200) == object.__repr__(value)
    assert CALLS == []


def test_metaclasses_are_asked_nothing() -> None:
    Weird = quietly(lambda: Meta("Weird", (watched_class(),), {"limit": 3}))
    value = quietly(Weird)
    for described in (value, Weird, [Weird, value], quietly(lambda: {Weird: value})):
        summarize(described, 200, 1)
    assert summarize(Weird, 80, 1).preview == "class Weird"
    assert type_label(Weird) == "tests.Meta" and type_label(value) == "tests.Weird"
    assert CALLS == []


def test_a_class_that_claims_to_be_pandas_is_not_trusted() -> None:
    Fake = quietly(lambda: type("DataFrame", (watched_class(),), {"__module__": "pandas"}))
    value = quietly(Fake)
    summary = summarize(value, 200, 1)
    assert (summary.type, summary.shape, summary.dtype) == ("pandas.DataFrame", "", "")
    assert summary.preview == object.__repr__(value)
    assert CALLS == []


def test_a_dataframe_subclass_shows_its_real_shape_without_its_overrides() -> None:
    frame = quietly(lambda: Tracked({"a": [1, 2, 3], "b": [0.5, 1.5, 2.5]}))
    summary = summarize(frame, 80, 1)
    assert (summary.type, summary.shape, summary.preview) == (
        "tests.Tracked",
        "3×2",
        "columns: a, b",
    )
    assert summary.size.endswith(" B")
    assert shape_of(frame) == "3×2"
    series = quietly(lambda: TrackedSeries([1.5, 2.5], name="s"))
    summary = summarize(series, 80, 1)
    assert (summary.type, summary.shape, summary.dtype, summary.preview) == (
        "tests.TrackedSeries",
        "2",
        "float64",
        "[1.5 2.5]",
    )
    assert CALLS == []


def test_a_numpy_subclass_shows_its_real_shape_and_values_without_its_overrides() -> None:
    array = quietly(lambda: np.arange(6, dtype="int32").view(TrackedArray))
    summary = summarize(array, 80, 1)
    assert (summary.type, summary.shape, summary.dtype, summary.size, summary.preview) == (
        "tests.TrackedArray",
        "6",
        "int32",
        "24 B",
        "[0 1 2 3 4 5]",
    )
    assert summarize([array], 80, 1).preview == "[<tests.TrackedArray 6 int32>]"
    assert CALLS == []


def test_user_objects_inside_frames_and_arrays_show_their_safe_form() -> None:
    Watchful = watched_class()
    cell, label = quietly(Watchful), quietly(Watchful)
    frame = quietly(lambda: pd.DataFrame({label: [cell, "plain"], "n": [1, 2]}))
    summary = summarize(frame, 400, 1)
    assert summary.shape == "2×2"
    assert summary.preview == f"columns: {object.__repr__(label)[:39]}…, n"
    objects = np.empty(2, dtype=object)
    objects[0], objects[1] = cell, 1
    CALLS.clear()
    safe = object.__repr__(cell)[:39] + "…"  # cells are cut to 40 characters
    assert summarize(objects, 400, 1).preview == f"[{safe} 1]"
    series = quietly(lambda: pd.Series([cell, 2], dtype=object))
    assert summarize(series, 400, 1).preview == f"[{safe} 2]"
    assert CALLS == []


def test_a_formatter_set_for_numpy_is_not_called() -> None:
    np.set_printoptions(formatter={"int": lambda x: CALLS.append("formatter") or "X"})
    try:
        assert summarize(np.arange(3), 80, 1).preview == "[0 1 2]"
    finally:
        np.set_printoptions(formatter=None)
    assert CALLS == []


def test_a_user_extension_array_is_not_read() -> None:
    frame = quietly(lambda: pd.DataFrame({"w": WatchedArray([1, 2]), "b": [1.0, 2.0]}))
    summary = summarize(frame, 200, 1)
    assert (summary.shape, summary.dtype, summary.size) == ("2×2", "", "")
    assert summary.preview == PANDAS_UNKNOWN
    assert summarize(quietly(lambda: frame["w"]), 200, 1).shape == "2"
    assert CALLS == []


class WatchedDtype(ExtensionDtype):
    """The dtype of WatchedArray."""

    name = "watched"
    type = object
    kind = "O"

    @classmethod
    def construct_array_type(cls) -> type[ExtensionArray]:
        return WatchedArray

    def __repr__(self) -> str:
        CALLS.append("WatchedDtype.__repr__")
        return "watched"


class WatchedArray(ExtensionArray):
    """A pandas extension array of the user's: reading it runs its code."""

    def __init__(self, values: Any) -> None:
        self.values = np.asarray(values, dtype=object)

    @classmethod
    def _from_sequence(cls, scalars: Any, *, dtype: Any = None, copy: bool = False) -> Any:
        return cls(scalars)

    @property
    def dtype(self) -> WatchedDtype:
        CALLS.append("WatchedArray.dtype")
        return WatchedDtype()

    def __len__(self) -> int:
        CALLS.append("WatchedArray.__len__")
        return len(self.values)

    def __getitem__(self, item: Any) -> Any:
        CALLS.append("WatchedArray.__getitem__")
        found = self.values[item]
        return WatchedArray(found) if np.ndim(found) else found

    def isna(self) -> Any:
        return np.zeros(len(self.values), dtype=bool)

    def take(self, indices: Any, allow_fill: bool = False, fill_value: Any = None) -> Any:
        return WatchedArray(self.values[indices])

    def copy(self) -> WatchedArray:
        return WatchedArray(self.values.copy())

    @classmethod
    def _concat_same_type(cls, arrays: Any) -> WatchedArray:
        return cls(np.concatenate([a.values for a in arrays]))

    @property
    def nbytes(self) -> int:
        CALLS.append("WatchedArray.nbytes")
        return 8


def test_signatures_show_defaults_in_their_safe_form() -> None:
    default = quietly(watched_class())

    def f(a: int, /, b: list[int] = [], *args: str, c: Any = default, **kw: int) -> None:  # noqa: B006
        return None

    text = summarize(f, 400, 1).preview
    assert text == (
        "f(a: 'int', /, b: 'list[int]' = [], *args: 'str', c: 'Any' = "
        f"{object.__repr__(default)[:39]}…, **kw: 'int') -> 'None'"
    )
    assert summarize(len, 80, 1).preview == "len(obj, /)"
    assert summarize([].append, 80, 1).preview == "append(object, /)"
    assert summarize(quietly(lambda: default.__init__), 80, 1).preview == "__init__() -> 'None'"
    assert CALLS == []


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from(DUNDERS), min_size=1), st.sampled_from(["object", "meta"]))
def test_no_recorded_method_runs_whatever_the_class_defines(names: set[str], base: str) -> None:
    cls = watched_class(sorted(names))
    if base == "meta":
        cls = quietly(lambda: Meta("Derived", (cls,), {}))
    value = quietly(cls)
    holder = quietly(Point)
    holder.inner = value
    for described in (value, cls, [value], {"k": value}, holder, (value, [value])):
        summarize(described, 200, 1)
        inert_repr(described, 200)
    assert CALLS == [], names
