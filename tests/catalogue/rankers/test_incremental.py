"""Incremental indexes: after any sequence of registry changes, ToolSearch answers exactly as a
fresh ToolSearch over the same tools does, for every ranker, and a change costs its tools."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbagent.catalogue.rankers.bm25 import BM25Ranker
from nbagent.catalogue.rankers.hybrid import HybridRanker
from nbagent.catalogue.rankers.keyword import KeywordRanker
from nbagent.catalogue.rankers.semantic import SemanticIndex
from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import Ranker, SearchHit, ToolSearch
from nbagent.core.errors import SearchQueryError
from nbagent.core.tool import Tool

WORDS = ["send", "message", "file", "read", "issue", "issues", "list", "发送", "消息", "get"]
NAMES = [
    "mcp__slack__send_message",
    "mcp__slack2__send_message",
    "mcp__files__read_file",
    "mcp__github__list_issues",
    "mcp__github__get_issue",
    "ReadFile",
    "readfile",
    "SendMail",
]
QUERIES = st.one_of(
    st.lists(
        st.tuples(st.booleans(), st.sampled_from([*WORDS, "mess", "sen", "ssue"])),
        min_size=1,
        max_size=3,
    ).map(lambda terms: " ".join(("+" if plus else "") + word for plus, word in terms)),
    st.sampled_from(["mcp__slack", "mcp__github__list", "readfile", "select:ReadFile,SendMail"]),
)


@st.composite
def tools(draw: st.DrawFn) -> Tool:
    """A tool of one of :data:`NAMES`, with a random description and flags."""
    name = draw(st.sampled_from(NAMES))
    return Tool(
        name=name,
        description=" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=4))),
        search_hint=" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=1))),
        is_mcp=name.startswith("mcp__"),
        should_defer=draw(st.booleans()),
    )


CHANGES = st.one_of(
    st.tuples(st.just("register"), st.lists(tools(), min_size=1, max_size=3)),
    st.tuples(st.just("unregister"), st.lists(st.sampled_from(NAMES), min_size=1, max_size=2)),
    st.tuples(st.just("override"), st.sampled_from(NAMES), st.sampled_from([True, False, None])),
    st.tuples(st.just("search"), QUERIES),
)


def apply(registry: ToolRegistry, search: ToolSearch, change: tuple) -> None:
    """Make one change to the registry (or search, so that later changes are incremental)."""
    kind = change[0]
    if kind == "register":
        registry.register_many({t.name: t for t in change[1]}.values(), replace=True)
    elif kind == "unregister":
        registry.unregister_many(change[1])
    elif kind == "override":
        registry.override(change[1], change[2])
    else:
        answer(search, change[1])


def copy(registry: ToolRegistry) -> ToolRegistry:
    """A new registry with the same tools, in the same order, and the same overrides."""
    fresh = ToolRegistry(registry.tools())
    for name, deferred in registry.overrides().items():
        fresh.override(name, deferred)
    return fresh


def check_like_fresh(make: Callable[[], Ranker], changes: list[tuple], query: str) -> None:
    """Apply the changes with searches in between, then compare with a fresh ToolSearch."""
    registry = ToolRegistry()
    search = ToolSearch(registry, make())
    search.search("send")
    for change in changes:
        apply(registry, search, change)
    fresh = ToolSearch(copy(registry), make())
    assert answer(search, query) == answer(fresh, query)


def answer(search: ToolSearch, query: str) -> list[SearchHit] | str:
    """The hits of a search, or the message of the error it raised."""
    try:
        return search.search(query, 10)
    except SearchQueryError as exc:
        return str(exc)


@settings(max_examples=60, deadline=None)
@given(st.lists(CHANGES, max_size=12), QUERIES)
def test_keyword_after_changes_equals_a_fresh_index(changes: list[tuple], query: str) -> None:
    check_like_fresh(KeywordRanker, changes, query)


@settings(max_examples=60, deadline=None)
@given(st.lists(CHANGES, max_size=12), QUERIES)
def test_bm25_after_changes_equals_a_fresh_index(changes: list[tuple], query: str) -> None:
    check_like_fresh(BM25Ranker, changes, query)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(CHANGES, max_size=12), QUERIES)
def test_hybrid_after_changes_equals_a_fresh_index(
    new_hashing: type, changes: list[tuple], query: str
) -> None:
    embedder = new_hashing()

    def make() -> Ranker:
        return HybridRanker(semantic=SemanticIndex([embedder], cache_dir=None, background=False))

    check_like_fresh(make, changes, query)


class Counting(KeywordRanker):
    """A keyword ranker that records what each update was given."""

    def __init__(self) -> None:
        super().__init__()
        self.updates: list[tuple[list[str], list[str]]] = []

    def update(self, added, removed) -> None:
        self.updates.append(([t.name for t in added], [t.name for t in removed]))
        super().update(added, removed)


def test_a_change_passes_only_its_own_tools_to_the_ranker() -> None:
    registry = ToolRegistry(
        [Tool(name=f"mcp__s__t{i}", description="x", is_mcp=True) for i in range(50)]
    )
    ranker = Counting()
    search = ToolSearch(registry, ranker)
    search.search("x")
    ranker.updates.clear()
    new = Tool(name="mcp__s__new", description="fresh words", is_mcp=True)
    registry.register(new)
    assert [hit.name for hit in search.search("fresh")] == ["mcp__s__new"]
    registry.unregister("mcp__s__t3")
    registry.override("mcp__s__t4", False)
    replaced = Tool(name="mcp__s__t5", description="replaced", is_mcp=True)
    registry.register(replaced, replace=True)
    search.search("x")
    assert ranker.updates[0] == (["mcp__s__new"], [])
    assert sorted(ranker.updates[1][1]) == ["mcp__s__t3", "mcp__s__t4", "mcp__s__t5"]
    assert ranker.updates[1][0] == ["mcp__s__t5"]
    assert len(ranker.updates) == 2


@pytest.mark.parametrize("make", [KeywordRanker, BM25Ranker])
def test_positions_freed_by_removed_tools_are_reused(make: Callable[[], Ranker]) -> None:
    first = [Tool(name=f"mcp__s__t{i}", description="word", is_mcp=True) for i in range(4)]
    ranker = make()
    ranker.index(first)
    ranker.index(first[:2])
    ranker.index([*first[:2], Tool(name="mcp__s__u", description="word", is_mcp=True)])
    assert len(ranker.slots) == 4 and ranker.slots.count == 3
