"""Resuming a saved conversation: the history as far as its last state says it was valid is
taken as it is; what follows is repaired."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.loop import history as history_module
from nbagent.loop.agent import Agent
from nbagent.loop.history import repaired
from nbagent.loop.state import AgentState
from nbagent.store.recorder import state_record
from nbagent.store.resume import resume
from nbagent.store.saved import read_conversation
from tests.messages import assistant, call, result, text, user
from tests.store.builders import recorder

VALID = [
    user("Read a.txt"),
    assistant(text("Reading."), call("t1", path="a.txt")),
    {"role": "user", "content": [result("t1", "hello")]},
    assistant(text("It says hello.")),
]
"""A valid history of one turn."""

TAIL = [user("And b.txt?"), assistant(call("t2", path="b.txt"))]
"""A turn the kernel died in: its call has no result."""


def saved_with(tmp_path: Path, valid: int, *later: tuple[int, dict[str, Any]]) -> Any:
    """A conversation of VALID then TAIL whose last state says ``valid`` messages are valid,
    then the message records ``later`` (index, message)."""
    log = recorder(tmp_path)
    log.sync(VALID + TAIL, "claude-test", state_record(AgentState(valid=valid)))
    assert log.log is not None
    for index, message in later:
        log.log.append({"i": index, "message": message})
    saved = read_conversation(log.log.path)
    assert saved is not None and saved.signed
    return saved


def counting_blocks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The contents the repair reads, from now on."""
    read: list[Any] = []
    blocks = history_module._blocks
    monkeypatch.setattr(history_module, "_blocks", lambda c, r: read.append(c) or blocks(c, r))
    return read


def test_only_what_follows_the_valid_messages_is_repaired(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = saved_with(tmp_path, len(VALID))
    assert saved.valid == len(VALID)
    whole = repaired(saved.messages)
    read = counting_blocks(monkeypatch)
    agent = Agent(registry=ToolRegistry())
    repair = resume(agent, saved)
    assert read == [m["content"] for m in TAIL]  # the two messages after the valid ones
    assert repair.messages == whole.messages and repair.interrupted == ["Read"]
    assert agent.snapshot().valid == len(agent.messages)  # the next run reads nothing again


def test_a_message_set_again_after_the_last_state_is_read_again(tmp_path: Path) -> None:
    merged = assistant(text("It says hello."), text("And more."))
    saved = saved_with(tmp_path, len(VALID), (1, assistant(text("Reading again."))), (3, merged))
    assert saved.valid == 1
    agent = Agent(registry=ToolRegistry())
    repair = resume(agent, saved)
    assert repair.messages == repaired(saved.messages).messages
    assert repair.messages[1]["content"][0] == text("Reading again.")  # read, and mended


def test_a_state_claiming_more_than_the_history_holds_counts_what_it_holds(
    tmp_path: Path,
) -> None:
    saved = saved_with(tmp_path, 99)
    assert saved.valid == len(VALID + TAIL)
    with_valid = resume(Agent(registry=ToolRegistry()), saved)
    assert with_valid.messages[: len(VALID)] == VALID


def test_a_file_from_before_the_valid_count_is_repaired_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = saved_with(tmp_path, 0)
    assert saved.valid == 0
    read = counting_blocks(monkeypatch)
    resume(Agent(registry=ToolRegistry()), saved)
    assert len(read) == len(VALID + TAIL)


def test_a_history_read_whole_for_a_cut_summary_finds_every_tool_it_loaded(
    tmp_path: Path,
) -> None:
    cut = {"type": "compaction", "content": "The user gave [redacted MY_TOKEN].", "signature": "s"}
    found = [{"type": "tool_reference", "tool_name": "Weather"}]
    history = [
        user("a"),
        assistant(cut),
        user("Find a weather tool."),
        assistant(call("t1", name="ToolSearch", query="weather")),
        {"role": "user", "content": [result("t1", found)]},
        assistant(text("Found it.")),
    ]
    log = recorder(tmp_path)
    log.sync(history, "claude-test", state_record(AgentState(valid=len(history))))
    assert log.log is not None
    saved = read_conversation(log.log.path)
    assert saved is not None and saved.valid == len(history)
    agent = Agent(registry=ToolRegistry())
    repair = resume(agent, saved)
    assert repair.summarised and repair.valid == 0  # the summary's signature is gone: read whole
    assert agent.loaded_names == ["Weather"]  # its reference is read, though before the count
