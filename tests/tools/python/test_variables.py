"""ListVariables and InspectVariable over a real IPython shell's namespace."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.errors import ToolError
from nbagent.core.events import ToolCallFinished
from nbagent.core.tool import Tool
from nbagent.loop.agent import Agent
from nbagent.policy.permissions import PermissionPolicy
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.tools import Limits, ToolContext, builtin_tools
from nbagent.tools.python.variables import user_variables
from tests.tools.helpers import LazyTools, error, summary, text
from tests.tools.python.test_summary import (
    CALLS,
    DUNDERS,
    Tracked,
    TrackedArray,
    quietly,
    watched_class,
)


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
    first, value, attributes = out.split("\n")[:3]
    assert (first, attributes) == ("config: tests.Config", "attributes:")
    config = r"<tests\.tools\.python\.test_variables\.Config object at 0x\w+>"
    assert re.fullmatch(r"value: " + config, value)
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


# -- no code of the user's runs ---------------------------------------------------------------


class Colliding:
    """A dict key that hashes as 0 and says it equals whatever it is compared with."""

    def __hash__(self) -> int:
        CALLS.append("Colliding.__hash__")
        return 0

    def __eq__(self, other: object) -> bool:
        CALLS.append("Colliding.__eq__")
        return other is self


@pytest.fixture
def nothing_ran() -> Iterator[list[str]]:
    """The calls the watched classes record; none must remain once the test is done."""
    CALLS.clear()
    yield CALLS
    assert CALLS == []


def test_listing_and_inspecting_user_objects_runs_none_of_their_code(
    shell: Any, kernel_tools: dict[str, Tool], nothing_ran: list[str]
) -> None:
    Watchful = watched_class()
    Plain = watched_class([n for n in DUNDERS if n != "__dict__"])  # attributes readable
    watched, plain = quietly(Watchful), quietly(Plain)
    table = {Colliding(): "theirs", 0: "ours"}  # its key hashes as 0, the literal's hash
    CALLS.clear()
    define(shell, zw_watched=watched, zw_plain=plain, zw_class=Watchful, zw_table=table)
    listing = text(kernel_tools["ListVariables"], name_contains="zw_")
    assert "zw_watched  tests.Watchful" in listing and object.__repr__(watched)[:30] in listing
    inspect = kernel_tools["InspectVariable"]
    out = text(inspect, name="zw_watched")
    assert out.split("\n") == ["zw_watched: tests.Watchful", f"value: {object.__repr__(watched)}"]
    out = text(inspect, name="zw_plain")
    assert "attributes:\n  x: list = [1, 2]" in out
    assert text(inspect, name="zw_plain.x[1]") == "zw_plain.x[1]: int\nvalue: 2"
    assert (
        text(inspect, name="zw_table[0]") == "zw_table[0]: str (len 4, memory 53 B)\nvalue: 'ours'"
    )
    assert "members: dtype, shape" in text(inspect, name="zw_class")
    assert error(inspect, name="zw_plain.shape") == (
        "zw_plain.shape is a property or other computed attribute of tests.Watchful: reading "
        "it would run its code, so InspectVariable does not. Use RunCode to evaluate it."
    )
    assert error(inspect, name="zw_plain.nothing") == "zw_plain has no attribute 'nothing'."
    assert error(inspect, name="zw_plain[0]").startswith("zw_plain is a tests.Watchful;")
    assert summary(inspect, name="zw_watched") == "tests.Watchful"


def test_subclasses_of_dataframes_and_arrays_show_their_real_data(
    shell: Any, kernel_tools: dict[str, Tool], nothing_ran: list[str]
) -> None:
    frame = quietly(lambda: Tracked({"city": ["Paris", "Oslo"], "temp": [21.5, 12.0]}))
    array = quietly(lambda: np.arange(4, dtype="int16").view(TrackedArray))
    define(shell, zt_frame=frame, zt_array=array)
    listing = text(kernel_tools["ListVariables"], name_contains="zt_")
    assert listing.split("\n")[1:] == [
        "zt_array  tests.TrackedArray  4      int16  8 B    [0 1 2 3]",
        "zt_frame  tests.Tracked       2×2           164 B  columns: city, temp",
    ]
    inspect = kernel_tools["InspectVariable"]
    assert text(inspect, name="zt_frame").split("\n") == [
        "zt_frame: tests.Tracked (shape 2×2, memory 164 B (Python objects' contents not counted))",
        "columns:",
        "  city: str",
        "  temp: float64",
        "first 5 rows:",
        "    city  temp",
        "0  Paris  21.5",
        "1   Oslo  12.0",
    ]
    assert text(inspect, name="zt_array") == (
        "zt_array: tests.TrackedArray (shape 4, dtype int16, memory 8 B)\nvalues:\n[0 1 2 3]"
    )
    assert error(inspect, name="zt_frame['city']").startswith("zt_frame is a tests.Tracked;")


def test_a_plain_dataframe_shows_user_objects_in_their_safe_form(
    shell: Any, kernel_tools: dict[str, Tool], nothing_ran: list[str]
) -> None:
    cell = quietly(watched_class())
    frame = quietly(lambda: pd.DataFrame({"thing": [cell, None], "n": [1, 2]}))
    define(shell, zc_frame=frame)
    rows = text(kernel_tools["InspectVariable"], name="zc_frame").split("\n")[-3:]
    safe = object.__repr__(cell)[:39] + "…"  # cells are cut to 40 characters
    assert rows == [f"   {'thing':>40}  n", f"0  {safe}  1", f"1  {'None':>40}  2"]


@pytest.mark.parametrize("shown", ["watched", "frame", "array"])
def test_plan_mode_still_lists_and_inspects(
    shown: str, root: Path, shell: Any, fake_api: FakeAnthropicServer, nothing_ran: list[str]
) -> None:
    values = {
        "watched": lambda: watched_class()(),
        "frame": lambda: Tracked({"a": [1, 2]}),
        "array": lambda: np.zeros(3).view(TrackedArray),
    }
    define(shell, zp_value=quietly(values[shown]))
    registry = ToolRegistry(builtin_tools(ToolContext(root=root, shell=shell)))
    registry.register(ToolSearch(registry).tool)
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "select:InspectVariable"}),
        Reply.tool_uses(
            ("ListVariables", {"name_contains": "zp_"}),
            ("InspectVariable", {"name": "zp_value"}),
        ),
        Reply.text("Here is the plan."),
    )
    agent = Agent(registry=registry, client=fake_api.client(), policy=PermissionPolicy("plan"))
    events = list(agent.events("Look at zp_value, change nothing."))
    finished = {e.name: e for e in events if isinstance(e, ToolCallFinished)}
    assert finished["ListVariables"].status == "ok", finished["ListVariables"].content
    assert finished["InspectVariable"].status == "ok", finished["InspectVariable"].content
    assert "zp_value" in str(finished["InspectVariable"].content)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(names=st.sets(st.sampled_from(DUNDERS), min_size=1))
def test_no_recorded_method_runs_through_the_tools(
    names: set[str], shell: Any, kernel_tools: dict[str, Tool]
) -> None:
    cls = watched_class(sorted(names))
    value = quietly(cls)
    define(shell, zh_value=value, zh_class=cls, zh_list=[value], zh_dict={"k": value})
    text(kernel_tools["ListVariables"], name_contains="zh_")
    for name in ("zh_value", "zh_class", "zh_list", "zh_dict", "zh_dict['k']", "zh_value.x"):
        try:
            kernel_tools["InspectVariable"].call({"name": name})
        except ToolError:  # no attribute x when the class makes __dict__ a property
            assert name == "zh_value.x" and "__dict__" in names
    assert CALLS == [], names
