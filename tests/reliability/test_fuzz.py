"""Property-based and fuzz tests: what reaches nbagent from outside never breaks it.

Model queries (the ToolSearch parser and rankers), conversation histories (the announcement
delta), tool schemas and inputs (the Tool model), handler results (the ToolRunner) and MCP
configuration files (``parse_config``). Each property runs a deliberate number of examples;
``EXAMPLES`` counts those that ran, and the session's summary prints them.
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbagent.catalogue.delta import announced_names, deferred_tools_delta
from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import MAX_RESULTS_LIMIT, ToolSearch, parse_terms
from nbagent.core.errors import SearchQueryError, ToolDefinitionError, ToolError, ToolInputError
from nbagent.core.tool import RESULT_BLOCK_TYPES, Tool, ToolResult
from nbagent.loop.execution import CallOutcome, ToolRunner
from nbagent.mcp import HttpSpec, McpConfigError, ServerSpec, parse_config
from nbagent.mcp.config_file import parse_server
from tests.reliability.helpers import EXAMPLES

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Settings shared by the properties; each adds its own ``max_examples``."""

PUNCTUATION = ".,;:!?\"'()[]{}<>"

NAME_CHARS = string.ascii_letters + string.digits + "_-"
names = st.text(NAME_CHARS, min_size=1, max_size=20)
mcp_names = st.builds(lambda server, tool: f"mcp__{server}__{tool}"[:64], names, names)
tool_names = st.one_of(names, mcp_names)
"""Names as the API allows them (``^[a-zA-Z0-9_-]{1,64}$``), MCP-style or not."""

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
"""Any JSON value, small."""


def count(name: str) -> None:
    """Count one example of a property."""
    EXAMPLES[name] += 1


# The query parser and ToolSearch ---------------------------------------------------------


queries = st.one_of(
    st.text(max_size=60),
    st.lists(
        st.one_of(
            st.sampled_from(
                ["+", "select:", "mcp__", "__", ",", "+git", "Read", "日本語", "\u0130"]
            ),
            st.text(string.ascii_letters + PUNCTUATION + "+_ ", max_size=10),
        ),
        max_size=8,
    ).map(" ".join),
)
"""Arbitrary text, and text made of the pieces the parser treats specially."""


@settings(FUZZ, max_examples=600)
@given(queries)
def test_parse_terms_returns_the_query_words_or_a_clear_error(query: str) -> None:
    count("parse_terms")
    try:
        terms = parse_terms(query)
    except SearchQueryError as error:
        assert "has no words to search for" in str(error)
        return
    words = [
        (raw.startswith("+"), raw.lstrip("+").lower().strip(PUNCTUATION)) for raw in query.split()
    ]
    assert terms and len({t.text for t in terms}) == len(terms)
    for term in terms:
        assert term.units and term.text == term.text.strip(PUNCTUATION)
        assert term.text in {word for _, word in words}
        assert term.required == any(plus for plus, word in words if word == term.text)


def search_registry() -> ToolRegistry:
    """Loaded and deferred tools, MCP and not, with descriptions and hints."""
    tools = [
        Tool(name="Read", description="Read a file.", read_only=True),
        Tool(name="NotebookEdit", description="Edit a notebook cell.", should_defer=True),
        Tool(name="RunCode", description="Run Python in the kernel.", should_defer=True),
        Tool(
            name="WebFetch", description="Fetch a web page.", should_defer=True, search_hint="url"
        ),
    ]
    for server, tool, text in [
        ("github", "create_issue", "Create an issue in a repository."),
        ("github", "list_issues", "List the issues of a repository."),
        ("slack", "send_message", "Send a message to a channel."),
        ("db", "query", "Run SQL on the warehouse. 日本語のテキスト"),
    ]:
        tools.append(
            Tool(name=f"mcp__{server}__{tool}", description=text, is_mcp=True, server=server)
        )
    registry = ToolRegistry(tools)
    registry.register(ToolSearch(registry).tool)
    return registry


SEARCH_REGISTRY = search_registry()
SEARCHES = {ranker: ToolSearch(SEARCH_REGISTRY, ranker) for ranker in ("keyword", "bm25")}


@settings(FUZZ, max_examples=300)
@given(
    st.sampled_from(sorted(SEARCHES)),
    st.one_of(queries, st.sampled_from(["select:Read,,nope", "MCP__GITHUB", "mcp__", "READ"])),
    st.integers(-5, MAX_RESULTS_LIMIT + 5),
)
def test_tool_search_answers_any_text_with_hits_or_a_clear_error(
    ranker: str, query: str, limit: int
) -> None:
    count(f"ToolSearch.search ({ranker})")
    try:
        hits = SEARCHES[ranker].search(query, limit)
    except SearchQueryError as error:
        assert str(error) and "\n" not in str(error)
        return
    assert 1 <= limit <= MAX_RESULTS_LIMIT and len(hits) <= limit
    found = [hit.name for hit in hits]
    assert len(set(found)) == len(found)
    assert set(found) <= set(SEARCH_REGISTRY.names()) - {"ToolSearch"}
    assert all(hit.score > 0 for hit in hits)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)


@settings(FUZZ, max_examples=150)
@given(st.dictionaries(st.sampled_from(["query", "max_results", "other"]), json_values))
def test_the_tool_search_tool_takes_any_input(tool_input: dict[str, Any]) -> None:
    """What the model may send: a result, or a ToolError that the agent reports to it."""
    count("ToolSearch tool input")
    try:
        result = SEARCHES["keyword"].tool.call(tool_input)
    except ToolError:  # a bad input, or a query the parser refuses
        return
    assert isinstance(result.content, str) or all(
        block["type"] == "tool_reference" for block in result.content
    )


# The delta -------------------------------------------------------------------------------


@settings(FUZZ, max_examples=200)
@given(
    st.lists(st.sets(tool_names, max_size=12), min_size=1, max_size=6),
    st.sampled_from(["plain", "compact"]),
    st.lists(st.text(max_size=30), max_size=6),
)
def test_announcing_each_delta_keeps_the_history_in_step_with_the_deferred_set(
    deferred_sets: list[set[str]], style: str, chatter: list[str]
) -> None:
    """Whatever the changes and the talk between them, the history's announcements replay to
    the deferred set of the moment, and a delta is never announced twice."""
    count("deferred_tools_delta sequences")
    messages: list[dict[str, Any]] = []
    for step, deferred in enumerate(deferred_sets):
        text = chatter[step] if step < len(chatter) else "next"
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text or "..."}]
        delta = deferred_tools_delta(deferred, messages)
        if delta is not None:
            assert not set(delta.added_names) & set(delta.removed_names)
            assert list(delta.added_names) == sorted(delta.added_names)
            blocks.append({"type": "text", "text": delta.render(style)})  # type: ignore[arg-type]
        messages += [{"role": "user", "content": blocks}, {"role": "assistant", "content": "ok"}]
        assert announced_names(messages) == deferred
        assert deferred_tools_delta(deferred, messages) is None


message_content = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.one_of(
            st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=40)}),
            st.fixed_dictionaries(
                {"type": st.sampled_from(["tool_result", "tool_use", "image", "x"])},
                optional={"content": json_values, "text": json_values, "input": json_values},
            ),
        ),
        max_size=4,
    ),
)
"""Message content as the history holds it: a string or blocks (any but text ones odd)."""
histories = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "system", ""]), "content": message_content}
    ),
    max_size=6,
)


@settings(FUZZ, max_examples=150)
@given(st.sets(tool_names, max_size=8), histories)
def test_the_delta_reads_any_history_without_failing(
    deferred: set[str], messages: list[dict[str, Any]]
) -> None:
    count("deferred_tools_delta histories")
    delta = deferred_tools_delta(deferred, messages)
    announced = announced_names(messages)
    if delta is None:
        assert announced == deferred
    else:
        assert set(delta.added_names) == deferred - announced
        assert set(delta.removed_names) == announced - deferred


# Schemas and inputs ----------------------------------------------------------------------

patterns = st.text("ab.*+?()[]{}^$|\\-0-9", max_size=8)
local_refs = st.sampled_from(["#", "#/properties/a", "#/$defs/item", "#/$defs/nowhere", "#/x/y"])
remote_refs = st.sampled_from(["http://127.0.0.1:9/schema.json", "other.json#/a", "file:///etc"])
types = st.one_of(
    st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"]),
    st.sampled_from(["str", "", "Object"]),
    st.lists(st.sampled_from(["string", "integer", "null"]), max_size=3),
)


def schema_keywords(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A subschema: a few keywords with sensible and absurd values."""
    keyword_values: dict[str, st.SearchStrategy[Any]] = {
        "type": types,
        "properties": st.dictionaries(st.sampled_from(["a", "b", "c", "$ref"]), inner, max_size=3),
        "required": st.one_of(
            st.lists(st.sampled_from(["a", "b", "c", "z"]), max_size=3), json_scalars
        ),
        "items": st.one_of(inner, st.lists(inner, max_size=2), st.booleans()),
        "additionalProperties": st.one_of(st.booleans(), inner),
        "enum": st.lists(json_values, max_size=3),
        "const": json_values,
        "minimum": st.one_of(st.integers(-3, 3), st.floats(allow_nan=False), st.text(max_size=2)),
        "maximum": st.one_of(st.integers(-3, 3), st.text(max_size=2)),
        "multipleOf": st.one_of(st.sampled_from([0, -1, 0.5, 1e-300, 3]), st.text(max_size=2)),
        "minLength": st.one_of(st.integers(-1, 4), st.floats(0, 2)),
        "maxItems": st.integers(-1, 3),
        "pattern": patterns,
        "patternProperties": st.dictionaries(patterns, inner, max_size=2),
        "format": st.sampled_from(["date-time", "email", "uri", "ipv4", "regex", "nonsense"]),
        "anyOf": st.lists(inner, max_size=3),
        "oneOf": st.lists(inner, max_size=3),
        "allOf": st.lists(inner, max_size=3),
        "not": inner,
        "if": inner,
        "then": inner,
        "$ref": st.one_of(local_refs, remote_refs),
        "$defs": st.dictionaries(st.sampled_from(["item", "other"]), inner, max_size=2),
        "default": json_values,
        "uniqueItems": st.booleans(),
        "dependentRequired": st.dictionaries(
            st.sampled_from(["a", "b"]), st.lists(st.sampled_from(["a", "b", "c"]), max_size=2)
        ),
    }
    return st.lists(st.sampled_from(sorted(keyword_values)), max_size=4, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({key: keyword_values[key] for key in keys})
    )


subschemas = st.recursive(st.just({}) | st.booleans(), schema_keywords, max_leaves=6)
object_schemas = st.builds(lambda extra: {**extra, "type": "object"}, schema_keywords(subschemas))
input_values = st.one_of(
    st.dictionaries(st.sampled_from(["a", "b", "c", "d", "é"]), json_values, max_size=4),
    json_values,
)


@settings(FUZZ, max_examples=200)
@given(
    st.one_of(object_schemas, schema_keywords(subschemas), json_values),
    st.lists(input_values, min_size=1, max_size=4),
)
def test_schemas_and_inputs_fail_only_as_definition_or_input_errors(
    input_schema: Any, tool_inputs: list[Any]
) -> None:
    """A Tool takes a schema or refuses it with ToolDefinitionError; a call with any input
    runs, or fails with ToolInputError (bad input) or ToolDefinitionError (a schema that
    cannot be checked). A schema naming another document is refused, never fetched."""
    count("Tool(input_schema) and Tool.call")
    try:
        tool = Tool(name="Fuzz", input_schema=input_schema, handler=lambda **kwargs: kwargs)
    except ToolDefinitionError:
        return
    for tool_input in tool_inputs:
        try:
            result = tool.call(tool_input)
        except (ToolInputError, ToolDefinitionError) as error:
            assert str(error).startswith(("Invalid input for tool Fuzz:", "Tool 'Fuzz': "))
            continue
        assert isinstance(tool_input, dict)
        assert json.loads(result.content) == json.loads(json.dumps(tool_input))  # type: ignore[arg-type]


# Handler results -------------------------------------------------------------------------


class Opaque:
    """A value JSON cannot hold."""


results = st.recursive(
    st.one_of(
        json_scalars,
        st.binary(max_size=20),
        st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=3),
        st.builds(Opaque),
        st.integers(10**4400, 10**4400 + 1),
        st.sampled_from([float("nan"), float("inf")]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=5), inner, max_size=3),
        st.sets(st.integers(), max_size=2),
        st.lists(
            st.builds(
                lambda kind, text: {"type": kind, "text": text},
                st.sampled_from([*sorted(RESULT_BLOCK_TYPES), "banana"]),
                inner,
            ),
            min_size=1,
            max_size=3,
        ),
    ),
    max_leaves=8,
)


@settings(FUZZ, max_examples=300)
@given(results, st.booleans(), st.integers(1, 50))
def test_whatever_a_handler_returns_the_model_gets_sendable_bounded_content(
    value: Any, wrapped: bool, limit: int
) -> None:
    """Every result becomes strict JSON that encodes as UTF-8, with known block types and
    non-blank text, cut to the limit; the runner never raises."""
    count("ToolRunner results")
    handler_value = ToolResult(content=value) if wrapped else value
    tool = Tool(name="Any", handler=lambda: handler_value)
    runner = ToolRunner(lambda name: tool, max_result_chars=limit)
    outcomes: dict[str, CallOutcome] = {}
    list(runner.run([{"type": "tool_use", "id": "toolu_1", "name": "Any", "input": {}}], outcomes))
    runner.close()
    block = outcomes["toolu_1"].block()
    json.dumps(block, ensure_ascii=False, allow_nan=False).encode("utf-8")
    content = block["content"]
    if isinstance(content, str):
        shown, _, note = content.partition("\n\n(output cut: ")
        assert len(shown) <= limit and (not note or note.endswith(f"the first {limit:,} shown)"))
        return
    assert content and all(b["type"] in RESULT_BLOCK_TYPES for b in content)
    texts = [b["text"] for b in content if b["type"] == "text"]
    assert all(isinstance(text, str) and text.strip() for text in texts)
    if texts and texts[-1].startswith("(output cut: "):
        texts.pop()
    assert sum(map(len, texts)) <= limit


# MCP configuration -----------------------------------------------------------------------

tricky_strings = st.sampled_from(
    [
        "${HOME}",
        "${UNSET}",
        "${UNSET:-x}",
        "${",
        "http://127.0.0.1:1/mcp",
        "ftp://x",
        "~/x",
        "~",
        "~nobody-by-this-name/x",
        ".",
        "a\x00b",
        "\ud800",
        "http://[::1/mcp",
        "http://127.0.0.1:99999/mcp",
        "http://a b/mcp",
        "Bearer x\r\nX-Evil: 1",
    ]
)
"""Strings that expand, name a home folder, or hold what no process or HTTP client takes."""
strings = st.one_of(st.text(string.printable, max_size=20), st.text(max_size=8), tricky_strings)
field_values = st.one_of(json_values, strings)
field_keys = st.one_of(st.text(max_size=5), st.sampled_from(["", "A=B", "X Y", "TOKEN"]))
well_formed_entries = st.one_of(
    st.fixed_dictionaries(
        {"command": strings},
        optional={
            "type": st.just("stdio"),
            "args": st.lists(strings, max_size=3),
            "env": st.dictionaries(field_keys, strings, max_size=3),
            "cwd": strings,
        },
    ),
    st.fixed_dictionaries(
        {"url": strings},
        optional={
            "type": st.sampled_from(["http", "sse", "streamable-http"]),
            "headers": st.dictionaries(field_keys, strings, max_size=3),
        },
    ),
)
"""Entries of the right shape, whose strings are what the fuzz varies."""
entries = st.one_of(
    json_values,
    well_formed_entries,
    st.dictionaries(
        st.sampled_from(["type", "command", "args", "env", "cwd", "url", "headers", "disabled"]),
        st.one_of(
            field_values,
            st.sampled_from(["stdio", "http", "sse", "streamable-http", "websocket"]),
            st.lists(field_values, max_size=3),
            st.dictionaries(field_keys, field_values, max_size=3),
        ),
        max_size=5,
    ),
)
configs = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"mcpServers": st.dictionaries(st.text(max_size=8), entries, max_size=4)}
    ),
)


def assert_usable(spec: ServerSpec, base: Path | None) -> None:
    """Check that a process or an HTTP client can take what an accepted spec holds.

    Args:
        spec: The spec.
        base: The file or folder a relative ``cwd`` was taken from, if any.
    """
    if isinstance(spec, HttpSpec):
        assert httpx2.URL(spec.url).host
        assert httpx2.Headers(dict(spec.headers)).raw is not None  # encoded as they are sent
        assert not any(c in value for value in spec.headers.values() for c in "\r\n\0")
        return
    texts = [spec.command, *spec.args, *spec.env, *spec.env.values()]
    if spec.cwd is not None:
        texts.append(spec.cwd)
        assert not spec.cwd.startswith("~")
        assert base is None or Path(spec.cwd).is_absolute()
    for text in texts:
        assert "\0" not in text
        os.fsencode(text)
    assert all(name and "=" not in name for name in spec.env)


@settings(FUZZ, max_examples=300)
@given(
    configs,
    st.sampled_from([None, Path("/srv/project/.mcp.json")]),
    st.dictionaries(st.sampled_from(["HOME", "TOKEN", "EMPTY"]), st.text(max_size=5)),
)
def test_any_json_is_a_usable_configuration_or_an_mcp_config_error(
    data: Any, source: Path | None, environ: dict[str, str]
) -> None:
    count("parse_config")
    try:
        config = parse_config(data, source=source, environ=environ)
    except McpConfigError as error:
        assert str(error).startswith(("MCP configuration", "MCP server"))
        return
    left_out = {problem.server for problem in config.problems} | set(config.disabled)
    assert set(config.servers) | left_out == set(data.get("mcpServers", {}))
    assert not set(config.servers) & left_out
    for problem in config.problems:
        assert str(problem).startswith(f"MCP server {problem.server!r}")
    for spec in config.servers.values():
        assert_usable(spec, source)


@settings(FUZZ, max_examples=300)
@given(
    well_formed_entries,
    st.sampled_from([None, Path("/srv/project")]),
    st.dictionaries(st.sampled_from(["HOME", "TOKEN"]), st.text(max_size=5)),
)
def test_any_well_formed_entry_is_a_usable_spec_or_an_error_naming_its_field(
    entry: dict[str, Any], base_dir: Path | None, environ: dict[str, str]
) -> None:
    count("parse_server")
    try:
        spec = parse_server("s", entry, environ=environ, base_dir=base_dir)
    except McpConfigError as error:
        assert error.server == "s" and error.field
        assert str(error).startswith(f"MCP server 's': field {error.field!r} ")
        return
    assert_usable(spec, base_dir)


@pytest.mark.parametrize("source", [None, Path("/srv/project/.mcp.json")])
def test_a_cwd_in_the_home_of_an_unknown_user_is_a_config_error(source: Path | None) -> None:
    """Before the fix: RuntimeError from Path.expanduser with a source file, and the cwd left
    unexpanded (to fail when the server starts) without one."""
    data = {"mcpServers": {"git": {"command": "git-mcp", "cwd": "~nobody-by-this-name/repo"}}}
    config = parse_config(data, source=source, environ={})
    [problem] = config.problems
    assert config.servers == {} and (problem.server, problem.field) == ("git", "cwd")
    assert "there is no user 'nobody-by-this-name' on this machine" in str(problem)


def test_a_remote_reference_in_a_schema_is_refused_not_fetched() -> None:
    """Before the fix the schema compiler fetched the URL at the first call."""
    with pytest.raises(ToolDefinitionError, match="only references inside the schema"):
        Tool(
            name="Remote",
            input_schema={"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/s"}}},
        )


@pytest.mark.parametrize(
    ("input_schema", "cause"),
    [
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "(["}}}, "error"),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/nowhere"}}}, "Referencing"),
        ({"type": "object", "$ref": "#"}, "RecursionError"),
    ],
    ids=["bad pattern", "reference to nowhere", "reference loop"],
)
def test_a_schema_that_cannot_be_checked_is_a_definition_error_at_the_call(
    input_schema: dict[str, Any], cause: str
) -> None:
    """Before the fix ``re.error``, a referencing error or RecursionError escaped Tool.call."""
    tool = Tool(name="Broken", input_schema=input_schema, handler=lambda **kwargs: "ran")
    with pytest.raises(ToolDefinitionError, match="its input_schema cannot be checked") as caught:
        tool.call({"a": "x"})
    assert cause in str(caught.value)
    assert not isinstance(caught.value, ToolError), "the agent logs it with its traceback"
