"""Tests of nbagent.registry: registration, deferral rules, change events, display."""

from __future__ import annotations

import dataclasses
import importlib
import threading
from collections.abc import Sequence

import pytest
from IPython.core.interactiveshell import InteractiveShell

import nbagent
import nbagent.core.tokens
from nbagent.catalogue import registry as registry_module
from nbagent.catalogue.delta import render_announcement
from nbagent.catalogue.registry import ContextCost, RegistryChange, ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.errors import DuplicateToolError, UnknownToolError
from nbagent.core.tokens import count_tokens, definition_tokens
from nbagent.core.tool import Tool
from nbagent.testing import FakeAnthropicServer, Reply
from tests.shells import error_of, run


def make(name: str, **flags: object) -> Tool:
    return Tool(name=name, description=f"The {name} tool.\nSecond line.", **flags)  # type: ignore[arg-type]


def test_register_get_names_len_contains_iter() -> None:
    reg = ToolRegistry([make("A"), make("B")])
    reg.register(make("C"))
    assert reg.names() == ["A", "B", "C"]
    assert len(reg) == 3 and "B" in reg and "Z" not in reg
    assert [t.name for t in reg] == ["A", "B", "C"]
    assert reg.get("C").name == "C"


def test_duplicate_names_fail_unless_replace() -> None:
    reg = ToolRegistry([make("A")])
    with pytest.raises(DuplicateToolError, match="'A' is already registered"):
        reg.register(make("A"))
    replacement = make("A", read_only=True)
    reg.register(replacement, replace=True)
    assert reg.get("A") is replacement and len(reg) == 1


def test_register_many_is_all_or_nothing() -> None:
    reg = ToolRegistry([make("A")])
    with pytest.raises(DuplicateToolError):
        reg.register_many([make("B"), make("A")])
    with pytest.raises(DuplicateToolError):
        reg.register_many([make("C"), make("C")])
    assert reg.names() == ["A"]


def test_unknown_names_raise_a_key_error_with_a_plain_message() -> None:
    reg = ToolRegistry()
    with pytest.raises(KeyError):
        reg.get("Nope")
    with pytest.raises(UnknownToolError) as info:
        reg.unregister("Nope")
    assert str(info.value) == "No tool named 'Nope' is registered."


def test_unregister_returns_the_tool() -> None:
    a = make("A")
    reg = ToolRegistry([a, make("B")])
    assert reg.unregister("A") is a
    assert reg.names() == ["B"]


@pytest.mark.parametrize(
    ("tool", "deferred"),
    [
        (make("mcp__s__t", is_mcp=True, always_load=True), False),  # 1 beats 2
        (make("mcp__s__t", is_mcp=True), True),  # 2
        (make("ToolSearch", should_defer=True), False),  # 3
        (make("Agent", should_defer=True), False),  # 4
        (make("Brief", should_defer=True), False),  # 5
        (make("ToolSearch", is_mcp=True), True),  # 2 comes before 3
        (make("Plain", should_defer=True), True),  # 6
        (make("Plain"), False),  # 6
        (make("Plain", should_defer=True, always_load=True), False),  # 1 beats 6
    ],
)
def test_deferral_rules_in_order(tool: Tool, deferred: bool) -> None:
    assert ToolRegistry().is_deferred(tool) is deferred


def test_overrides_beat_the_flags_and_are_change_events() -> None:
    reg = ToolRegistry([make("A"), make("mcp__s__b", is_mcp=True), make("ToolSearch")])
    events: list[RegistryChange] = []
    reg.subscribe(events.append)
    reg.override("A", deferred=True)
    reg.override("mcp__s__b", deferred=False)
    reg.override("ToolSearch", deferred=True)
    reg.override("A", deferred=True)  # no change, no event
    assert [t.name for t in reg.deferred()] == ["A"]
    assert reg.overrides() == {"A": True, "mcp__s__b": False, "ToolSearch": True}
    assert [e.reflagged for e in events] == [("A",), ("mcp__s__b",), ("ToolSearch",)]
    reg.override("A", None)
    assert reg.deferred() == [] and "A" not in reg.overrides()


def test_loaded_and_deferred_partition_the_tools_in_order() -> None:
    reg = ToolRegistry(
        [make("A"), make("B", should_defer=True), make("C"), make("mcp__x__d", is_mcp=True)]
    )
    assert [t.name for t in reg.loaded()] == ["A", "C"]
    assert [t.name for t in reg.deferred()] == ["B", "mcp__x__d"]


def test_subscribers_get_one_event_per_change_and_can_unsubscribe() -> None:
    reg = ToolRegistry()
    events: list[RegistryChange] = []
    unsubscribe = reg.subscribe(events.append)
    reg.register_many([make("A"), make("B")])
    reg.unregister_many(["A", "Nope"])
    reg.unregister_many(["Nope"])  # nothing changed: no event
    unsubscribe()
    reg.register(make("C"))
    assert [(e.added, e.removed) for e in events] == [(("A", "B"), ()), ((), ("A",))]
    assert events[1].version == reg.version - 1


def test_version_grows_with_every_change() -> None:
    reg = ToolRegistry()
    v0 = reg.version
    reg.register(make("A"))
    reg.register(make("A"), replace=True)
    assert reg.version == v0 + 2


def test_concurrent_registration_loses_nothing() -> None:
    reg = ToolRegistry()
    seen: list[str] = []
    reg.subscribe(lambda change: seen.extend(change.added))

    def add(prefix: str) -> None:
        for i in range(200):
            reg.register(make(f"{prefix}{i}"))

    threads = [threading.Thread(target=add, args=(p,)) for p in "abcd"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(reg) == 800 and sorted(seen) == sorted(reg.names())


def test_repr_and_html_show_a_table() -> None:
    reg = ToolRegistry([make("Read", read_only=True), make("mcp__gh__x", is_mcp=True, server="gh")])
    text = repr(reg)
    assert text.splitlines()[0] == "ToolRegistry: 2 tools, 1 deferred"
    assert "Read" in text and "python" in text and "loaded" in text and "The Read tool." in text
    assert "Second line" not in text
    assert "mcp:gh" in text and "deferred" in text
    page = reg._repr_html_()
    assert "<table>" in page and "<td>mcp:gh</td>" in page and "<td>deferred</td>" in page


def test_rows_say_what_every_table_lists_of_the_tools_asked_for() -> None:
    read, issue = make("Read", read_only=True), make("mcp__gh__x", is_mcp=True, server="gh")
    reg = ToolRegistry([read, issue, make("Edit")])
    rows = reg.rows([issue, read], loaded_by_search=["mcp__gh__x"])
    assert [row.cells for row in rows] == [
        ("mcp__gh__x", "mcp:gh", "loaded by ToolSearch", "", "The mcp__gh__x tool."),
        ("Read", "python", "loaded", "yes", "The Read tool."),
    ]
    assert [row.name for row in reg.rows()] == ["Read", "mcp__gh__x", "Edit"]


def test_html_escapes_descriptions() -> None:
    reg = ToolRegistry([Tool(name="X", description="<script>alert(1)</script>")])
    assert "<script>" not in reg._repr_html_()


def test_context_cost_counts_deferred_names_instead_of_definitions() -> None:
    big = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "x " * 20} for i in range(10)},
    }
    reg = ToolRegistry(
        [
            Tool(name=f"mcp__s__t{i}", description="d " * 50, input_schema=big, is_mcp=True)
            for i in range(30)
        ]
    )
    reg.register(ToolSearch(reg).tool)
    cost = reg.context_cost()
    assert isinstance(cost, ContextCost)
    assert cost.all_loaded > 10 * cost.deferred
    assert 0.9 < cost.saved < 1


def test_context_cost_of_an_empty_registry() -> None:
    cost = ToolRegistry().context_cost()
    assert cost.all_loaded == 0 and cost.saved == 0.0


TOOL_SEARCH = "ToolSearch"
REGISTRY_MODULE = importlib.import_module("nbagent.catalogue.registry")
"""The module of ToolRegistry."""


class Counting:
    """Records the calls of the per-tool cost function and of the tokenizer's batches."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tools: list[list[str]] = []
        self.texts: list[int] = []
        definition_costs, count_many = (
            REGISTRY_MODULE.definition_costs,
            nbagent.core.tokens.count_many,
        )

        def counted_definitions(tools: Sequence[Tool]) -> list[int]:
            self.tools.append([t.name for t in tools])
            return definition_costs(tools)

        def counted_texts(texts: object) -> list[int]:
            batch = list(texts)  # type: ignore[call-overload]
            self.texts.append(len(batch))
            return count_many(batch)

        monkeypatch.setattr(REGISTRY_MODULE, "definition_costs", counted_definitions)
        monkeypatch.setattr(nbagent.core.tokens, "count_many", counted_texts)

    def take(self) -> tuple[list[list[str]], list[int]]:
        """The calls since the last take."""
        taken = self.tools, self.texts
        self.tools, self.texts = [], []
        return taken


def from_scratch(reg: ToolRegistry, style: str = "plain") -> ContextCost:
    """context_cost as it was counted before it was cached: every definition, every cell."""
    tools = [t for t in reg.tools() if t.name != TOOL_SEARCH]
    loaded = [t for t in tools if not reg.is_deferred(t)]
    names = [t.name for t in tools if reg.is_deferred(t)]
    search = reg.get(TOOL_SEARCH) if TOOL_SEARCH in reg else ToolSearch(ToolRegistry()).tool
    announcement = render_announcement(added=names, style=style)  # type: ignore[arg-type]
    return ContextCost(
        all_loaded=definition_tokens(t.definition() for t in tools),
        deferred=definition_tokens(t.definition() for t in [*loaded, search])
        + count_tokens(announcement),
    )


def test_a_cell_with_an_unchanged_catalogue_counts_no_definition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tools = [
        Tool(name=f"mcp__s{i % 50}__t{i}", description=f"Tool {i}.", is_mcp=True, server="s")
        for i in range(5000)
    ]
    reg = ToolRegistry([make("Local"), *tools])
    reg.register(ToolSearch(reg).tool)
    calls = Counting(monkeypatch)
    first = reg.context_cost()
    assert [len(names) for names in calls.take()[0]] == [5002]
    assert reg.context_cost() == first
    assert calls.take() == ([], [])  # nothing counted: no definition, no announcement line

    longer = dataclasses.replace(tools[7], description="Tool 7, now described at length.")
    reg.register(longer, replace=True)
    changed = reg.context_cost()
    assert calls.take() == ([[longer.name]], [1])  # the announcement's lines are the same
    grown = definition_tokens([longer.definition()]) - definition_tokens([tools[7].definition()])
    assert changed == ContextCost(first.all_loaded + grown, first.deferred)
    calls.take()  # the test's own counts

    reg.register(Tool(name="mcp__new__tool", description="New.", is_mcp=True))
    added = reg.context_cost()
    assert calls.take() == ([["mcp__new__tool"]], [1, 1])  # its definition, its line
    assert added.all_loaded > changed.all_loaded and added.deferred > changed.deferred

    reg.unregister("mcp__new__tool")
    assert reg.context_cost() == changed
    reg.override(tools[0].name, deferred=False)
    loaded = reg.context_cost()
    assert calls.take() == ([], [])
    assert loaded.all_loaded == changed.all_loaded and loaded.deferred > changed.deferred


@pytest.mark.parametrize("style", ["plain", "compact"])
def test_the_cached_context_cost_is_the_one_counted_from_scratch(style: str) -> None:
    big = {"type": "object", "properties": {"q": {"type": "string", "description": "x " * 30}}}
    tools = [
        Tool(name=f"mcp__s{i % 7}__t{i}", description=f"d {i} " * 5, input_schema=big, is_mcp=True)
        for i in range(200)
    ]
    reg = ToolRegistry([make("Local"), make("Lazy", should_defer=True), *tools[:150]])
    assert reg.context_cost(style) == from_scratch(reg, style)  # ToolSearch not registered
    reg.register(ToolSearch(reg).tool)
    reg.register_many(tools[150:])
    reg.register(dataclasses.replace(tools[3], description="changed"), replace=True)
    reg.unregister_many([t.name for t in tools[10:40]])
    reg.override("Lazy", deferred=False)
    reg.override(tools[50].name, deferred=False)
    assert reg.context_cost(style) == from_scratch(reg, style)
    assert reg.context_cost("compact" if style == "plain" else "plain") == from_scratch(
        reg, "compact" if style == "plain" else "plain"
    )


def test_a_second_agent_cell_counts_no_definition(
    ip: InteractiveShell, fake_api: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"mcp__many__t{i}" for i in range(20)]
    nbagent.registry.register_many(
        [Tool(name=name, description=f"Tool {name}.", is_mcp=True) for name in names]
    )
    try:
        fake_api.enqueue(Reply.text("one"), Reply.text("two"))
        result, _ = run(ip, "%%agent\nfirst")
        assert result.success, error_of(result)
        calls = Counting(monkeypatch)
        result, shown = run(ip, "%%agent\nsecond")
        assert result.success, error_of(result)
        assert "two" in shown and "deferral keeps" in shown
        assert calls.tools == []
    finally:
        nbagent.registry.unregister_many(names)


def test_the_process_wide_registry_has_tool_search() -> None:
    assert isinstance(nbagent.registry, ToolRegistry)
    assert "ToolSearch" in nbagent.registry
    assert not nbagent.registry.is_deferred(nbagent.registry.get("ToolSearch"))


def test_loaded_and_deferred_are_split_once_per_version(monkeypatch: pytest.MonkeyPatch) -> None:
    reg = ToolRegistry([make("A"), make("mcp__s__b", is_mcp=True)])
    asked: list[str] = []
    rule = registry_module.deferral_rule
    monkeypatch.setattr(registry_module, "deferral_rule", lambda t: asked.append(t.name) or rule(t))
    assert [t.name for t in reg.deferred()] == ["mcp__s__b"]
    assert [t.name for t in reg.loaded()] == ["A"]
    assert reg.deferred() == reg.deferred() and asked == ["A", "mcp__s__b"]
    reg.override("A", deferred=True)
    assert [t.name for t in reg.deferred()] == ["A", "mcp__s__b"]
    assert asked == ["A", "mcp__s__b", "mcp__s__b"]  # A's override decides without the rule
