"""ListVariables and InspectVariable over a real IPython shell's namespace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from nbagent.tool import Tool
from nbagent.tools import Limits, ToolContext
from nbagent.tools.variables import user_variables
from tests.tools.helpers import LazyTools, error, summary, text


class Config:
    """An object with an attribute and a property whose code must never run."""

    reads = 0

    def __init__(self) -> None:
        self.paths = {"train": ["a.csv", "b.csv"]}

    @property
    def expensive(self) -> int:
        Config.reads += 1
        return 1


@pytest.fixture
def kernel_tools(root: Path, shell: Any) -> dict[str, Tool]:
    return LazyTools(ToolContext(root=root, shell=shell))


def define(shell: Any, **values: Any) -> None:
    shell.user_ns.update(values)


def test_only_the_users_variables_are_listed(shell: Any) -> None:
    shell.run_cell("import json\n_private = 1\nanswer = 42\ndef helper(x):\n    return x")
    names = user_variables(shell)
    assert "answer" in names and "helper" in names
    for hidden in ("json", "_private", "In", "Out", "exit", "quit", "get_ipython"):
        assert hidden not in names


def test_list_variables_table(shell: Any, kernel_tools: dict[str, Tool]) -> None:
    define(
        shell,
        zz_frame=pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5]}),
        zz_array=np.zeros((2, 3), dtype="int32"),
        zz_text="hello",
    )
    out = text(kernel_tools["ListVariables"], name_contains="ZZ_")
    assert out == (
        "name      type              shape  dtype  size   value\n"
        "zz_array  numpy.ndarray     2×3    int32  24 B   [[0 0 0] [0 0 0]]\n"
        "zz_frame  pandas.DataFrame  2×2           164 B  columns: a, b\n"
        "zz_text   str               len 5         54 B   'hello'"
    )
    assert summary(kernel_tools["ListVariables"], name_contains="ZZ_") == "3 variables"
    assert text(kernel_tools["ListVariables"], name_contains="nothing-like-this") == (
        "No variables matching 'nothing-like-this'."
    )
    assert summary(kernel_tools["ListVariables"], name_contains="nothing-") == "no variables"


def test_list_variables_caps_the_list(root: Path, shell: Any) -> None:
    define(shell, **{f"cap_{i}": i for i in range(5)})
    listing = LazyTools(ToolContext(root=root, shell=shell, limits=Limits(variables=2)))[
        "ListVariables"
    ]
    out = text(listing, name_contains="cap_").split("\n")
    assert (
        out[1].startswith("cap_0") and out[-1] == "(… 3 more; narrow the list with name_contains.)"
    )
    assert summary(listing, name_contains="cap_") == "2 of 5 variables"


def test_without_a_kernel_the_tools_say_so(tools: dict[str, Tool]) -> None:
    message = "No IPython kernel is running here, so there are no variables to show."
    assert error(tools["ListVariables"]) == message
    assert error(tools["InspectVariable"], name="x") == message


def test_inspect_a_dataframe(shell: Any, kernel_tools: dict[str, Tool]) -> None:
    define(shell, df=pd.DataFrame({"city": ["Paris", "Oslo"], "temp": [21.5, 12.0]}))
    out = text(kernel_tools["InspectVariable"], name="df")
    lines = out.split("\n")
    assert lines[0].startswith("df: pandas.DataFrame (shape 2×2, memory ")
    assert lines[0].endswith(" (Python objects' contents not counted))")
    assert lines[1:5] == ["columns:", "  city: object", "  temp: float64", "first 5 rows:"] or (
        lines[1:5] == ["columns:", "  city: str", "  temp: float64", "first 5 rows:"]
    )
    assert "Paris" in out and "21.5" in out
    assert summary(kernel_tools["InspectVariable"], name="df") == "pandas.DataFrame, shape 2×2"


def test_inspect_an_array_a_dict_and_a_list(shell: Any, kernel_tools: dict[str, Tool]) -> None:
    define(shell, arr=np.arange(1000), d={"a": 1, "b": [1, 2]}, items=[1, "two", 3.0])
    inspect = kernel_tools["InspectVariable"]
    assert text(inspect, name="arr").startswith(
        "arr: numpy.ndarray (shape 1000, dtype int64, memory 7.8 KB)\nvalues:\n[  0   1   2 ..."
    )
    assert text(inspect, name="d") == (
        "d: dict (len 2)\nkey types: str (2)\nitems:\n  'a': 1\n  'b': [1, 2]"
    )
    assert text(inspect, name="items") == (
        "items: list (len 3)\nelement types: int (1), str (1), float (1)\nitems:\n"
        "  [0] 1\n  [1] 'two'\n  [2] 3.0"
    )
    assert summary(inspect, name="arr") == "numpy.ndarray, shape 1000"
    assert summary(inspect, name="d") == "dict, len 2"


def test_inspect_follows_attributes_and_literal_keys(
    shell: Any, kernel_tools: dict[str, Tool]
) -> None:
    define(shell, config=Config())
    inspect = kernel_tools["InspectVariable"]
    assert text(inspect, name="config.paths['train'][1]") == (
        "config.paths['train'][1]: str (len 5, memory 54 B)\nvalue: 'b.csv'"
    )
    assert summary(inspect, name="config") == "tests.Config"
    out = text(inspect, name="config")
    assert out.split("\n")[:3] == [
        "config: tests.Config",
        "value: <tests.Config object>",
        "attributes:",
    ]
    Config.reads = 0
    assert error(inspect, name="config.expensive") == (
        "config.expensive is a property or other computed attribute of "
        "tests.Config: reading it would run its code, so InspectVariable does not. Use "
        "RunCode to evaluate it."
    )
    assert Config.reads == 0


def test_inspect_errors(shell: Any, kernel_tools: dict[str, Tool]) -> None:
    define(shell, config=Config(), seq=[1, 2])
    inspect = kernel_tools["InspectVariable"]
    assert error(inspect, name="missing_name") == (
        "No variable named 'missing_name'. ListVariables shows what exists."
    )
    assert error(inspect, name="seq[len(seq) - 1]") == (
        "'seq[len(seq) - 1]' is not a variable name: InspectVariable takes a name, optionally "
        "followed by .attribute or [key] steps with literal keys; it evaluates nothing."
    )
    assert error(inspect, name="seq[5]") == "seq[5] does not exist (IndexError)."
    assert error(inspect, name="config.nope") == "config has no attribute 'nope'."
    assert error(inspect, name="config[0]") == (
        "config is a tests.Config; InspectVariable indexes only dicts, lists, tuples and "
        "numpy/pandas objects (other [] would run their code)."
    )


def test_inspect_functions_and_classes(shell: Any, kernel_tools: dict[str, Tool]) -> None:
    shell.run_cell('def scale(x, factor=2):\n    """Scale a number."""\n    return x * factor')
    out = text(kernel_tools["InspectVariable"], name="scale")
    assert out.split("\n")[:4] == [
        "scale: function",
        "signature: scale(x, factor=2)",
        "doc:",
        "  Scale a number.",
    ]
    define(shell, Config=Config)
    out = text(kernel_tools["InspectVariable"], name="Config")
    assert "members: expensive, reads" in out
