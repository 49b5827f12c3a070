"""A turn's work is what the turn adds, not the whole history or the whole catalogue.

Counted, not timed: how many messages a turn reads again (the repair, the announcements),
how many list items it encodes, how many tool definitions it builds, for a history of 10
turns and one of 200, and for 10 and 400 deferred tools.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from nbagent.api import body
from nbagent.catalogue import delta
from nbagent.catalogue.delta import render_announcement
from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.tool import Tool, tool
from nbagent.loop import history as history_module
from nbagent.loop.agent import Agent
from nbagent.loop.state import AgentState
from nbagent.testing import FakeAnthropicServer, Reply


@tool(read_only=True)
def note(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    return f"noted: {text}"


def deferred(count: int) -> list[Tool]:
    return [
        Tool(
            name=f"mcp__s__t{i}",
            description="A tool.",
            input_schema={"type": "object"},
            is_mcp=True,
        )
        for i in range(count)
    ]


def past(turns: int, names: list[str]) -> list[dict[str, Any]]:
    """A valid history of ``turns`` turns, each a prompt, a tool call and an answer."""
    messages: list[dict[str, Any]] = []
    for i in range(turns):
        prompt = [{"type": "text", "text": f"step {i}"}]
        if i == 0:
            prompt.append({"type": "text", "text": render_announcement(sorted(names))})
        call = {"type": "tool_use", "id": f"toolu_{i}", "name": "note", "input": {"text": "x"}}
        messages += [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "noted"}]},
        ]
    return messages


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of the per-item work a turn does."""
    counts: Counter[str] = Counter()

    def counted(owner: Any, name: str, kind: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args: Any) -> Any:
            counts[kind] += 1
            return original(*args)

        monkeypatch.setattr(owner, name, wrapper)

    counted(history_module, "_blocks", "messages repaired")
    counted(delta, "_texts", "messages read for announcements")
    counted(delta, "_has_compaction", "messages read for compactions")
    counted(body._ENCODER, "encode", "values encoded")
    counted(Tool, "definition", "definitions built")
    parse = delta._parse_names

    def names_read(listing: str) -> list[str]:
        names = parse(listing)
        counts["announced names read"] += len(names)
        return names

    monkeypatch.setattr(delta, "_parse_names", names_read)
    return counts


def turn_work(work: Counter[str], turns: int, tools: int) -> Counter[str]:
    """The work of the second of two runs of an agent restored to ``turns`` turns."""
    script = [Reply.tool_use("note", {"text": "y"}), Reply.text("noted")] * 2
    with FakeAnthropicServer(script) as api:
        catalogue = deferred(tools)
        agent = Agent(ToolRegistry([note, *catalogue]), client=api.client(), compaction="off")
        agent.restore(AgentState(messages=tuple(past(turns, [t.name for t in catalogue]))))
        agent.run("once")
        work.clear()
        agent.run("again")
        api.assert_no_errors()
    return Counter(work)


def test_a_turns_work_does_not_grow_with_the_history(work: Counter[str]) -> None:
    short = turn_work(work, turns=10, tools=20)
    long = turn_work(work, turns=200, tools=20)
    assert long == short


def test_a_turns_work_does_not_grow_with_the_catalogue(work: Counter[str]) -> None:
    small = turn_work(work, turns=10, tools=10)
    large = turn_work(work, turns=10, tools=400)
    assert large == small
