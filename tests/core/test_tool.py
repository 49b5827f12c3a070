"""Tests of nbagent.tool: the Tool model, ToolResult and the @tool decorator."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.core.errors import ToolDefinitionError, ToolError, ToolInputError
from nbagent.core.tool import NAME_PATTERN, Tool, ToolResult, tool

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
    "required": ["path"],
}


def test_definition_has_the_three_api_fields() -> None:
    t = Tool(name="Read", description="Read a file.", input_schema=SCHEMA)
    assert t.definition() == {"name": "Read", "description": "Read a file.", "input_schema": SCHEMA}


def test_definition_is_a_fresh_dict_each_time() -> None:
    t = Tool(name="Read", input_schema=SCHEMA)
    t.definition()["defer_loading"] = True
    assert "defer_loading" not in t.definition()


@pytest.mark.parametrize("name", ["", "has space", "dot.name", "x" * 65, "émoji", "a/b"])
def test_bad_names_are_refused_at_construction(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match="is invalid"):
        Tool(name=name)


@given(st.from_regex(NAME_PATTERN, fullmatch=True))
def test_every_name_the_api_accepts_is_accepted(name: str) -> None:
    assert Tool(name=name).name == name


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "string"}, 'must be a JSON Schema with "type": "object", not \'string\''),
        ({"properties": {}}, "not None"),
        ("not a dict", "not 'str'"),
        ({"type": "object", "properties": {"x": {"type": "nonsense"}}}, "at properties/x/type"),
        ({"type": "object", "required": "path"}, "at required"),
    ],
)
def test_malformed_schemas_are_refused_with_the_place(schema: object, message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message.replace("(", r"\(")):
        Tool(name="Bad", input_schema=schema)  # type: ignore[arg-type]


def test_calling_a_definition_only_tool_raises_tool_error() -> None:
    with pytest.raises(ToolError, match="no handler"):
        Tool(name="Remote", input_schema=SCHEMA).call({"path": "x"})


def test_call_validates_before_running_the_handler() -> None:
    calls = []
    t = Tool(name="Read", input_schema=SCHEMA, handler=lambda **kw: calls.append(kw))
    with pytest.raises(ToolInputError) as info:
        t.call({"limit": 0})
    assert calls == []
    message = str(info.value)
    assert message.startswith("Invalid input for tool Read:")
    assert "- `path`: 'path' is a required property" in message
    assert "- `limit`: 0 is less than the minimum of 1" in message


def test_many_input_errors_are_summarised() -> None:
    schema = {"type": "object", "properties": {k: {"type": "string"} for k in "abcde"}}
    t = Tool(name="T", input_schema=schema, handler=lambda **kw: "ok")
    with pytest.raises(ToolInputError, match="and 2 more"):
        t.call({k: 1 for k in "abcde"})


def test_call_passes_input_as_keywords_and_wraps_the_result() -> None:
    t = Tool(name="Read", input_schema=SCHEMA, handler=lambda path, limit=10: f"{path}:{limit}")
    assert t.call({"path": "a.txt", "limit": 3}) == ToolResult(content="a.txt:3")


def test_coroutine_handlers_run_even_inside_a_running_loop() -> None:
    async def handler(path: str) -> str:
        await asyncio.sleep(0)
        return path.upper()

    t = Tool(name="Read", input_schema=SCHEMA, handler=handler)

    async def inside_loop() -> ToolResult:
        return t.call({"path": "x"})

    assert asyncio.run(inside_loop()).content == "X"


def test_coroutine_errors_reach_the_caller() -> None:
    async def handler(path: str) -> str:
        raise ToolError("nope")

    with pytest.raises(ToolError, match="nope"):
        Tool(name="Read", input_schema=SCHEMA, handler=handler).call({"path": "x"})


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("text", "text"),
        (None, "(no output)"),
        ({"a": 1}, '{"a": 1}'),
        ([1, "二"], '[1, "二"]'),
        ([{"type": "text", "text": "hi"}], [{"type": "text", "text": "hi"}]),
    ],
)
def test_results_of_every_kind_become_api_content(value: object, content: object) -> None:
    assert ToolResult.of(value).content == content


def test_a_tool_result_is_kept_as_is() -> None:
    result = ToolResult(content="x", is_error=True, metadata={"k": 1})
    assert ToolResult.of(result) is result


def test_an_unserialisable_result_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="object, which cannot be sent"):
        ToolResult.of(object())


def test_tools_are_frozen_and_copied_with_replace() -> None:
    t = Tool(name="A")
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.name = "B"  # type: ignore[misc]
    assert dataclasses.replace(t, should_defer=True).should_defer


def test_decorator_builds_schema_and_descriptions_from_the_function() -> None:
    @tool(read_only=True, should_defer=True, search_hint="csv table")
    def load_table(path: str, sep: str = ",", kind: Literal["csv", "tsv"] = "csv") -> str:
        """Load a table from a file.

        Reads the file into a list of rows.

        Args:
            path: Where the file is.
            sep: The separator.
            kind: The format.
        """
        return f"{path}|{sep}|{kind}"

    assert load_table.name == "load_table"
    assert (
        load_table.description == "Load a table from a file.\n\nReads the file into a list of rows."
    )
    assert load_table.read_only and load_table.concurrency_safe and load_table.should_defer
    assert load_table.search_hint == "csv table"
    assert load_table.input_schema == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Where the file is."},
            "sep": {"type": "string", "default": ",", "description": "The separator."},
            "kind": {
                "type": "string",
                "enum": ["csv", "tsv"],
                "default": "csv",
                "description": "The format.",
            },
        },
        "required": ["path"],
    }
    assert load_table.call({"path": "a"}).content == "a|,|csv"


def test_decorator_keeps_properties_named_title() -> None:
    @tool
    def note(title: str) -> str:
        """Make a note."""
        return title

    assert "title" in note.input_schema["properties"]
    assert "title" not in note.input_schema


def test_decorator_converts_input_types_with_pydantic() -> None:
    @tool
    def repeat(text: str, times: int = 2) -> str:
        """Repeat a text."""
        return text * times

    assert repeat.call({"text": "ab", "times": 3}).content == "ababab"


def test_decorator_bare_and_with_name() -> None:
    @tool(name="Echo", description="Say it back.")
    def echo(text: str) -> str:
        return text

    assert (echo.name, echo.description) == ("Echo", "Say it back.")
    assert not echo.concurrency_safe


def test_decorator_supports_async_functions() -> None:
    @tool
    async def later(x: int) -> int:
        """Return x."""
        return x

    assert later.call({"x": 4}).content == "4"


def test_decorator_refuses_unannotated_and_variadic_parameters() -> None:
    with pytest.raises(ToolDefinitionError, match="'x' needs a type annotation"):
        tool(lambda x: x)
    with pytest.raises(ToolDefinitionError, match=r"\*args and \*\*kwargs"):

        @tool
        def f(*args: int) -> None:
            """F."""


def test_decorator_refuses_a_bad_name() -> None:
    with pytest.raises(ToolDefinitionError, match="is invalid"):
        tool(name="bad name")(lambda: None)


def test_schema_checks_leave_the_schema_untouched() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    Tool(name="T", input_schema=schema)
    assert schema == {"type": "object", "properties": {"x": {"type": "string"}}}


def test_a_first_sentence_that_wraps_stays_one_sentence() -> None:
    @tool
    def present(plan: str) -> str:
        """Present your plan to the user for approval; write tools are allowed again only if
        the user approves.

        Then wait.

        Args:
            plan: The plan.
        """
        return plan

    assert present.description == (
        "Present your plan to the user for approval; write tools are allowed again only if "
        "the user approves.\n\nThen wait."
    )


def test_a_missing_text_field_becomes_empty_and_search_still_works() -> None:
    from nbagent.catalogue.registry import ToolRegistry
    from nbagent.catalogue.toolsearch import ToolSearch

    odd = Tool(name="odd", description=None, search_hint=None, should_defer=True)  # type: ignore[arg-type]
    assert (odd.description, odd.search_hint) == ("", "")
    other = Tool(name="weather_forecast", description="Forecast.", should_defer=True)
    search = ToolSearch(ToolRegistry([odd, other]))
    assert search.search("weather")[0].name == "weather_forecast"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("search_hint", 3, "search_hint must be a string, not int (3)"),
        ("description", ["a"], "description must be a string, not list"),
        ("read_only", "yes", "read_only must be True or False, not 'yes'"),
        ("handler", "run", "handler must be a function or None, not 'run'"),
        ("server", 1, "server must be a string or None, not 1"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_by_name(
    field: str, value: object, message: str
) -> None:
    with pytest.raises(ToolDefinitionError, match=re.escape(message)):
        Tool(name="bad", **{field: value})  # type: ignore[arg-type]


@given(
    hint=st.none() | st.text() | st.integers() | st.booleans() | st.lists(st.text(), max_size=2),
    description=st.none() | st.text() | st.integers() | st.floats(allow_nan=False),
)
def test_no_field_value_can_break_tool_search(hint: object, description: object) -> None:
    from nbagent.catalogue.registry import ToolRegistry
    from nbagent.catalogue.toolsearch import ToolSearch

    try:
        odd = Tool(name="odd", description=description, search_hint=hint, should_defer=True)  # type: ignore[arg-type]
    except ToolDefinitionError:
        return
    good = Tool(name="weather_forecast", description="Forecast.", should_defer=True)
    hits = ToolSearch(ToolRegistry([odd, good])).search("weather forecast")
    assert "weather_forecast" in [h.name for h in hits]
