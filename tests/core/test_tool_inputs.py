"""Tests of nbagent.core.tool_inputs: a tool's schema from the disk cache, its model made at
the first call."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core import tool_inputs
from nbagent.core.diskcache import CACHE_ENV
from nbagent.core.errors import ToolInputError
from nbagent.core.tool import tool


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions whose input model is made from now on."""
    names: list[str] = []
    original = tool_inputs.LazyModel.get

    def get(self: tool_inputs.LazyModel) -> Any:
        if self._model is None:
            names.append(self._make.args[0].__name__)  # type: ignore[attr-defined]
        return original(self)

    monkeypatch.setattr(tool_inputs.LazyModel, "get", get)
    return names


def grep(
    pattern: str, mode: Literal["content", "count"] = "count", limit: int | None = None
) -> str:
    """Search.

    Args:
        pattern: The pattern.
        mode: What to show.
        limit: At most this many.
    """
    return f"{pattern} {mode} {limit}"


def test_a_cached_schema_is_the_models_and_the_model_waits_for_a_call(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = tool(grep)  # made, and kept
    assert list(cache.glob("tool-schemas/*"))
    names = made(monkeypatch)
    again = tool(grep)
    assert again.input_schema == first.input_schema
    assert first.input_schema["properties"]["mode"] == {
        "default": "count",
        "description": "What to show.",
        "enum": ["content", "count"],
        "type": "string",
    }
    assert names == []
    assert again.call({"pattern": "x"}).content == "x count None"
    assert names == ["grep"]
    again.call({"pattern": "y"})
    assert names == ["grep"]


def test_a_cached_tool_still_refuses_bad_input(cache: Path) -> None:
    tool(grep)
    again = tool(grep)
    with pytest.raises(ToolInputError, match="mode"):
        again.call({"pattern": "x", "mode": "lines"})
    with pytest.raises(ToolInputError, match="unexpected field"):
        again.call({"pattern": "x", "other": 1})


def test_a_function_made_by_exec_without_a_module_is_a_tool(cache: Path) -> None:
    namespace: dict[str, Any] = {}
    exec(
        "def count(text: str) -> int:\n"
        '    """Count.\n\n    Args:\n        text: The text.\n    """\n'
        "    return len(text)\n",
        namespace,
    )
    assert namespace["count"].__module__ is None
    counted = tool(namespace["count"])
    assert counted.input_schema["properties"]["text"]["type"] == "string"
    assert counted.call({"text": "abc"}).content == "3"


def test_a_changed_description_is_a_new_entry(cache: Path) -> None:
    tool(grep)
    tool(grep, description="Other words.")  # the tool's description is not in the schema
    assert len(list(cache.glob("tool-schemas/*"))) == 1

    def grep2(pattern: str) -> str:
        """Search.

        Args:
            pattern: Another description.
        """
        return pattern

    grep2.__qualname__ = grep.__qualname__
    assert tool(grep2).input_schema["properties"]["pattern"]["description"] == (
        "Another description."
    )
    assert len(list(cache.glob("tool-schemas/*"))) == 2


@dataclass
class Point:
    x: int


def test_a_parameter_of_another_type_is_described_by_its_model_at_once(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = made(monkeypatch)

    def move(to: Point) -> str:
        """Move.

        Args:
            to: Where.
        """
        return str(to)

    built = tool(move)
    assert names == ["move"]
    assert built.input_schema["$defs"]["Point"]["properties"]["x"]["type"] == "integer"
    assert not list(cache.glob("tool-schemas/*"))


plain_types = st.recursive(
    st.sampled_from([str, int, float, bool, type(None), Literal["a", 1]]),
    lambda inner: st.one_of(
        inner.map(lambda t: list[t]),  # type: ignore[valid-type]
        st.tuples(inner, inner).map(lambda pair: pair[0] | pair[1]),
        inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
    ),
    max_leaves=4,
)


@given(plain_types)
def test_types_built_of_plain_ones_are_plain(hint: Any) -> None:
    assert tool_inputs._plain(hint)


@pytest.mark.parametrize("hint", [Point, Any, list[Point], Literal[b"x"], bytes, Path])
def test_other_types_are_not(hint: Any) -> None:
    assert not tool_inputs._plain(hint)


@pytest.mark.parametrize(
    "doc",
    [
        "Search.\n\nArgs:\n    pattern: The pattern.",
        "Search.\n\nParameters\n----------\npattern : str\n    The pattern.",
        "Search.\n\n:param pattern: The pattern.",
    ],
)
def test_a_docstring_is_parsed_once_then_read_from_the_cache(
    doc: str, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert tool_inputs.docstring_parts(doc) == ("Search.", {"pattern": "The pattern."})

    def refuse(doc: str) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(tool_inputs, "_parsed", refuse)
    assert tool_inputs.docstring_parts(doc) == ("Search.", {"pattern": "The pattern."})
    assert tool_inputs.docstring_parts("") == ("", {})


BUILT_FROM_THE_CACHE = """
import sys

from nbagent.core.tool import tool


def grep(pattern: str, limit: int | None = None) -> str:
    '''Search.

    Args:
        pattern: The pattern.
        limit: At most this many.
    '''
    return pattern


built = tool(grep)
print(sorted(m for m in ("pydantic", "docstring_parser") if m in sys.modules))
print(built.call({"pattern": "x"}).content, "pydantic" in sys.modules)
"""


def test_a_tool_built_from_the_cache_imports_pydantic_at_its_first_call(cache: Path) -> None:
    env = {**os.environ, CACHE_ENV: str(cache)}
    run = [sys.executable, "-c", BUILT_FROM_THE_CACHE]
    subprocess.run(run, env=env, check=True, capture_output=True)  # fills the cache
    result = subprocess.run(run, env=env, check=True, capture_output=True, text=True)
    assert result.stdout.splitlines() == ["[]", "x True"]
