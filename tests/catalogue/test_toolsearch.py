"""Tests of nbagent.catalogue.toolsearch: query modes, bad input, the ToolSearch tool, the cache."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import (
    MAX_RESULTS_LIMIT,
    SearchHit,
    Term,
    ToolSearch,
    make_ranker,
    parse_terms,
    parse_tool_name,
)
from nbagent.core.errors import ConfigurationError, SearchQueryError
from nbagent.core.tool import Tool


def mcp(server: str, name: str, description: str = "") -> Tool:
    return Tool(name=f"mcp__{server}__{name}", description=description, is_mcp=True, server=server)


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry(
        [
            Tool(name="Read", description="Read a file.", read_only=True),
            Tool(name="NotebookEdit", description="Edit a notebook cell.", should_defer=True),
            mcp("github", "create_issue", "Create an issue in a repository."),
            mcp("github", "list_issues", "List issues of a repository."),
            mcp("github", "get_me", "Who am I."),
            mcp("slack", "send_message", "Send a message to a channel."),
            mcp("githubx", "other", "Not github's."),
        ]
    )
    reg.register(ToolSearch(reg).tool)
    return reg


@pytest.fixture
def search(registry: ToolRegistry) -> ToolSearch:
    return ToolSearch(registry)


def names(hits: list[SearchHit]) -> list[str]:
    return [hit.name for hit in hits]


def test_parse_tool_name() -> None:
    parsed = parse_tool_name("mcp__slack__send_message")
    assert parsed.parts == ("slack", "send", "message")
    assert parsed.is_mcp and parsed.server == "slack"
    plain = parse_tool_name("NotebookEdit")
    assert plain.parts == ("notebook", "edit") and not plain.is_mcp and plain.server is None


def test_select_returns_those_tools_in_order_and_skips_unknown(search: ToolSearch) -> None:
    hits = search.search("select:mcp__slack__send_message, Nope ,NotebookEdit")
    assert names(hits) == ["mcp__slack__send_message", "NotebookEdit"]


def test_select_is_case_insensitive_when_no_exact_name(search: ToolSearch) -> None:
    assert names(search.search("SELECT:notebookedit")) == ["NotebookEdit"]


def test_select_of_only_unknown_names_is_a_clear_error(search: ToolSearch) -> None:
    with pytest.raises(SearchQueryError, match="No tool is named 'Foo', 'Bar'"):
        search.search("select:Foo,Bar")
    with pytest.raises(SearchQueryError, match="needs tool names"):
        search.search("select: , ")


def test_select_respects_max_results(search: ToolSearch) -> None:
    assert len(search.search("select:Read,NotebookEdit", max_results=1)) == 1


def test_exact_name_ignoring_case_returns_that_tool_alone(search: ToolSearch) -> None:
    assert names(search.search("mcp__GITHUB__get_me")) == ["mcp__github__get_me"]
    assert names(search.search("  read ")) == ["Read"]


def test_mcp_prefix_returns_that_servers_tools(search: ToolSearch) -> None:
    assert names(search.search("mcp__github__")) == [
        "mcp__github__create_issue",
        "mcp__github__get_me",
        "mcp__github__list_issues",
    ]
    assert names(search.search("mcp__github", max_results=2)) == [
        "mcp__github__create_issue",
        "mcp__github__get_me",
    ]
    assert "mcp__githubx__other" not in names(search.search("mcp__github"))
    assert names(search.search("mcp__githubx")) == ["mcp__githubx__other"]
    assert names(search.search("mcp__github__list")) == ["mcp__github__list_issues"]
    assert search.search("mcp__nothing") == []


def test_keywords_rank_deferred_tools_only(search: ToolSearch) -> None:
    hits = search.search("github issue")
    assert names(hits)[:2] == ["mcp__github__create_issue", "mcp__github__list_issues"]
    assert hits[0].score == 24
    assert "Read" not in names(search.search("read file"))


def test_required_terms(search: ToolSearch) -> None:
    assert names(search.search("+slack message")) == ["mcp__slack__send_message"]


@pytest.mark.parametrize(
    ("query", "max_results", "message"),
    [
        ("", 5, "empty"),
        ("   ", 5, "empty"),
        (None, 5, "must be a string, not NoneType"),
        (["a"], 5, "must be a string, not list"),
        ("x", 0, "between 1 and 50, not 0"),
        ("x", 10_000, "between 1 and 50, not 10000"),
        ("x", "5", "must be an integer"),
        ("x", True, "must be an integer"),
        ("+ ??? !", 5, "has no words"),
    ],
)
def test_bad_input_is_a_clear_error(
    search: ToolSearch, query: object, max_results: object, message: str
) -> None:
    with pytest.raises(SearchQueryError, match=message):
        search.search(query, max_results)  # type: ignore[arg-type]


def test_unknown_ranker() -> None:
    with pytest.raises(
        ConfigurationError, match=r"Unknown search ranker 'nope'; choose one of: .*keyword"
    ):
        make_ranker("nope")


def test_index_follows_changes_of_the_deferred_set(
    registry: ToolRegistry, search: ToolSearch
) -> None:
    assert search.search("weather") == []
    registry.register(mcp("weather", "forecast", "Weather forecast."))
    assert names(search.search("weather")) == ["mcp__weather__forecast"]
    registry.unregister("mcp__weather__forecast")
    assert search.search("weather") == []


def test_index_is_not_rebuilt_when_only_loaded_tools_change(
    registry: ToolRegistry, search: ToolSearch
) -> None:
    search.search("issue")
    built = list(search.ranker.slots.docs)  # type: ignore[attr-defined]
    registry.register(Tool(name="Write", description="Write a file."))
    search.search("issue")
    after = search.ranker.slots.docs  # type: ignore[attr-defined]
    assert len(after) == len(built) and all(a is b for a, b in zip(after, built, strict=True))


def test_tool_result_is_tool_reference_blocks(search: ToolSearch) -> None:
    result = search.tool.call({"query": "github issue", "max_results": 2})
    assert result.content == [
        {"type": "tool_reference", "tool_name": "mcp__github__create_issue"},
        {"type": "tool_reference", "tool_name": "mcp__github__list_issues"},
    ]
    assert not result.is_error
    assert result.metadata["query"] == "github issue"
    assert names(result.metadata["hits"]) == [
        "mcp__github__create_issue",
        "mcp__github__list_issues",
    ]


def test_tool_result_without_hits_suggests_what_to_try(search: ToolSearch) -> None:
    result = search.tool.call({"query": "weather"})
    assert isinstance(result.content, str)
    assert "No deferred tool matched 'weather'" in result.content and "select:" in result.content


def test_the_tool_validates_its_input(search: ToolSearch) -> None:
    from nbagent.core.errors import ToolInputError

    with pytest.raises(ToolInputError, match="`max_results`: 0 is less than the minimum of 1"):
        search.tool.call({"query": "x", "max_results": 0})


def test_the_tool_is_loaded_and_safe(registry: ToolRegistry, search: ToolSearch) -> None:
    assert search.tool.name == "ToolSearch"
    assert search.tool.read_only and search.tool.concurrency_safe
    assert not registry.is_deferred(search.tool)


def test_the_search_never_returns_tool_search_itself(search: ToolSearch) -> None:
    with pytest.raises(SearchQueryError):
        search.search("select:ToolSearch")


query_text = st.text(alphabet=st.sampled_from(list("ab +-_.,!发送消息ファイル ")), max_size=30)


@given(query_text)
def test_parsed_terms_are_distinct_and_non_empty(query: str) -> None:
    try:
        terms = parse_terms(query)
    except SearchQueryError:
        assert not any(ch.isalnum() for ch in query)
        return
    assert terms and all(isinstance(t, Term) and t.units for t in terms)
    assert len({t.text for t in terms}) == len(terms)
    required = {t.text for t in terms if t.required}
    typed_required = {
        w.lstrip("+").lower().strip(".,;:!?\"'()[]{}<>") for w in query.split() if w.startswith("+")
    }
    assert required <= typed_required


@given(query_text, st.integers(1, MAX_RESULTS_LIMIT))
def test_any_query_gives_at_most_max_results_positive_hits(query: str, limit: int) -> None:
    reg = ToolRegistry([mcp("s", f"t{i}", "ab 发送消息 ファイル") for i in range(8)])
    try:
        hits = ToolSearch(reg).search(query, limit)
    except SearchQueryError:
        return
    assert len(hits) <= limit and all(h.score > 0 for h in hits)
    assert hits == sorted(hits, key=lambda h: (-h.score, h.name))


def test_a_bad_query_from_the_model_is_a_tool_error(search: ToolSearch) -> None:
    from nbagent.core.errors import ToolError

    with pytest.raises(ToolError, match="No tool is named 'Nope'"):
        search.tool.call({"query": "select:Nope"})
