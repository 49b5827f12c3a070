"""Tests of nbagent.render.schema_view: description lines and parameter tables of input schemas."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any, Literal

import pydantic
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from nbagent.core.markup import escape_html
from nbagent.core.tool import tool
from nbagent.render.schema_view import (
    MAX_ROWS,
    ParameterRow,
    parameter_rows,
    parameters_html,
    parameters_markdown,
)


def rows_by_name(schema: Any) -> dict[str, ParameterRow]:
    return {row.name: row for row in parameter_rows(schema)}


def test_rows_say_type_required_default_and_description() -> None:
    @tool
    def find(query: str, limit: int = 10, mode: Literal["fast", "exact"] = "fast") -> str:
        """Find things.

        Args:
            query: What to find.
            limit: How many at most.
            mode: How to match.
        """
        return query

    rows = parameter_rows(find.input_schema)
    assert rows == [
        ParameterRow("query", "string", True, "", "What to find.", 0),
        ParameterRow("limit", "integer", False, "10", "How many at most.", 0),
        ParameterRow("mode", 'one of "fast", "exact"', False, '"fast"', "How to match.", 0),
    ]


class Since(pydantic.BaseModel):
    """When to start."""

    day: str = pydantic.Field(description="An ISO date.")


class Filters(pydantic.BaseModel):
    """What to keep."""

    since: Since | None = None
    labels: list[str] = []


class Tree(pydantic.BaseModel):
    name: str
    children: list[Tree] = []


class Query(pydantic.BaseModel):
    filters: Filters | None = None
    items: list[Filters] = []
    tree: Tree
    note: str | None = None
    counts: dict[str, int] = {}
    pair: tuple[int, str]


def test_pydantic_nesting_reads_as_dotted_rows_and_words() -> None:
    rows = rows_by_name(Query.model_json_schema())
    assert rows["filters"].type == "object or null"
    assert rows["filters"].description == "What to keep." and rows["filters"].default == "null"
    assert rows["filters.since"].depth == 1
    assert rows["filters.since.day"] == ParameterRow(
        "filters.since.day", "string", True, "", "An ISO date.", 2
    )
    assert rows["filters.labels"].type == "array of string"
    assert rows["items"].type == "array of object" and rows["items[].labels"].depth == 1
    assert rows["note"].type == "string or null"
    assert rows["counts"].type == "object of integer"
    assert rows["pair"].type == "array (integer, string)"


def test_a_recursive_ref_stops_at_its_name() -> None:
    rows = rows_by_name(Query.model_json_schema())
    assert rows["tree.children"].type == "array of Tree"
    assert "tree.children[].name" not in rows
    loop = {"type": "object", "properties": {"me": {"$ref": "#"}}}
    assert [r.name for r in parameter_rows(loop)] == ["me", "me.me"]


def test_hand_written_schemas_read_as_words() -> None:
    schema = {
        "type": "object",
        "required": ["ids", "kind"],
        "properties": {
            "ids": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
            "kind": {"const": "issue"},
            "when": {"type": ["string", "null"], "format": "date-time"},
            "level": {"enum": list(range(12))},
            "pick": {"oneOf": [{"type": "string"}, {"$ref": "#/definitions/Pick"}]},
            "loose": {},
            "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
            "broken": {"$ref": "#/$defs/missing"},
        },
        "definitions": {"Pick": {"type": "object", "properties": {"x": {"type": "number"}}}},
    }
    rows = rows_by_name(schema)
    assert rows["ids"].type == "array of (integer or null)" and rows["ids"].required
    assert rows["kind"].type == 'exactly "issue"' and rows["kind"].required
    assert rows["when"].type == "string (date-time) or null"
    assert rows["level"].type == "one of 0, 1, 2, 3, 4, 5, 6, 7, … (4 more)"
    assert rows["pick"].type == "string or object"
    assert rows["loose"].type == "any"
    assert rows["matrix"].type == "array of array of number"
    assert rows["broken"].type == "missing"


def test_html_table_escapes_everything_and_indents_nested_rows() -> None:
    schema = {
        "type": "object",
        "properties": {
            "<b>x</b>": {
                "type": "object",
                "description": "<script>alert(1)</script>",
                "properties": {"inner": {"enum": ["<i>"], "default": "<i>"}},
            }
        },
    }
    page = parameters_html(schema)
    assert "<script>" not in page and "<b>" not in page and "<i>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "one of &quot;&lt;i&gt;&quot;" in page
    assert "padding-left: 24px" in page  # one level in
    assert "var(--jp-border-color2)" in page
    assert parameters_html({"type": "object", "properties": {}}) == (
        '<div style="color: var(--jp-ui-font-color2)">No parameters.</div>'
    )


def test_markdown_table_keeps_one_line_per_row_and_escapes_cells() -> None:
    schema = {
        "type": "object",
        "required": ["q"],
        "properties": {
            "q": {"type": "string", "description": "a | b\n*c* <d>", "default": "x`y"},
        },
    }
    lines = parameters_markdown(schema).splitlines()
    assert lines[0] == "| parameter | type | required | default | description |"
    assert lines[2] == '| `q` | string | yes | ``"x`y"`` | a \\| b \\*c\\* \\<d\\> |'
    assert parameters_markdown({"type": "object"}) == "No parameters."


def test_long_tables_are_cut_and_say_how_many_more() -> None:
    properties = {f"p{i}": {"type": "string"} for i in range(MAX_ROWS + 5)}
    schema = {"type": "object", "properties": properties}
    assert len(parameter_rows(schema)) == MAX_ROWS
    assert parameters_html(schema).count("<tr>") == MAX_ROWS + 1
    assert parameters_markdown(schema).endswith("… and 5 more parameters.")


KEYWORDS = [
    "type",
    "properties",
    "required",
    "items",
    "prefixItems",
    "anyOf",
    "oneOf",
    "allOf",
    "enum",
    "const",
    "default",
    "description",
    "$ref",
    "$defs",
    "definitions",
    "additionalProperties",
    "format",
]
REFS = st.sampled_from(["#", "#/$defs/a", "#/definitions/a", "#/properties/x", "#/x/0", "a"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(max_size=8)
    | REFS
    | st.sampled_from(["object", "array", "string", "null", "integer"])
)
JSONISH = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYWORDS) | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=40,
)


class _Checker(HTMLParser):
    """Collects the tags of a page, to prove that no text became markup."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.add(tag)


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_any_json_value_gives_rows_and_tables_without_error(schema: Any) -> None:
    rows = parameter_rows(schema)
    assert all(isinstance(row, ParameterRow) and isinstance(row.type, str) for row in rows)
    checker = _Checker()
    checker.feed(parameters_html(schema))
    assert checker.tags <= {"table", "thead", "tbody", "tr", "th", "td", "span", "div"}
    markdown = parameters_markdown(schema)
    assert len(markdown.splitlines()) in (1, len(rows) + 2, len(rows) + 4)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), st.text(), max_size=4))
def test_names_and_descriptions_from_anywhere_are_shown_as_text(texts: dict[str, str]) -> None:
    schema = {
        "type": "object",
        "properties": {name: {"type": "string", "description": d} for name, d in texts.items()},
    }
    page = parameters_html(schema)
    checker = _Checker()
    checker.feed(page)
    assert checker.tags <= {"table", "thead", "tbody", "tr", "th", "td", "span", "div"}
    for row in parameter_rows(schema):
        assert escape_html(row.description) in page
    markdown = parameters_markdown(schema)
    checker = _Checker()
    checker.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown))
    assert checker.tags <= {"table", "thead", "tbody", "tr", "th", "td", "span", "code", "p"}
    assert len(markdown.splitlines()) in (1, len(texts) + 2)
