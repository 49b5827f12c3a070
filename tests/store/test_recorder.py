"""The recorder: a history mirrored into its conversation's file, only what changed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.loop.agent import Agent
from nbagent.loop.state import AgentState
from nbagent.store import recorder as recorder_module
from nbagent.store.folders import notebook_folder
from nbagent.store.journal import ConversationLog
from nbagent.store.recorder import RECHECKED, Recorder
from nbagent.store.saved import read_conversation, saved_conversations
from tests.messages import assistant, call, result, text, user
from tests.store.builders import NOTEBOOK, lines, recorder

# -- the log --------------------------------------------------------------------------------


def test_a_history_round_trips_with_its_header(tmp_path: Path) -> None:
    history = [
        user("Read a.txt"),
        assistant(text("Reading."), call("t1", path="a.txt")),
        {"role": "user", "content": [result("t1", [text("é ✓ \ud83d line\nnext")])]},
        assistant(text("Done.")),
    ]
    log = recorder(tmp_path)
    log.sync(history, "claude-test")
    assert log.log is not None and log.log.path.parent == notebook_folder(NOTEBOOK, tmp_path)
    saved = read_conversation(log.log.path)
    assert saved is not None and saved.messages == history
    assert (saved.id, saved.notebook, saved.model) == (log.current_id, NOTEBOOK, "claude-test")
    assert saved.turns == 1 and saved.prompts == ["Read a.txt"]
    header = lines(log.log.path)[0]
    assert header["nbagent"] == "conversation" and header["version"] == 1
    assert header["started"].endswith("+00:00")
    assert log.log.path.name.endswith(f"-{saved.id}.jsonl")
    assert notebook_folder(NOTEBOOK, tmp_path).name.startswith("analysis-")


def test_only_what_changed_is_written_and_a_later_record_replaces_its_index(
    tmp_path: Path,
) -> None:
    log = recorder(tmp_path)
    history = [user("hi")]
    log.sync(history)
    log.sync(history)  # nothing changed: nothing written
    history.append(assistant(text("paused")))
    log.sync(history)
    history[-1] = {**history[-1], "content": [*history[-1]["content"], text("and on")]}  # merge
    history.append(user("more", "<system-reminder>\nannounced\n</system-reminder>"))
    log.sync(history)
    assert log.log is not None
    records = lines(log.log.path)[1:]
    assert [r["i"] for r in records] == [0, 1, 1, 2]
    assert records[2]["message"] == history[1]
    saved = read_conversation(log.log.path)
    assert saved is not None and saved.messages == history
    assert saved.prompts == ["hi", "more"]  # the announcement is no prompt


def test_a_sync_serialises_only_the_new_messages_and_the_last_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = recorder(tmp_path)
    history = [user(f"q{i}") if i % 2 == 0 else assistant(text(f"a{i}")) for i in range(40)]
    log.sync(history)
    dumped: list[object] = []
    dumps = recorder_module._dumps
    monkeypatch.setattr(recorder_module, "_dumps", lambda v: dumped.append(v) or dumps(v))
    history.append(user("next"))
    log.sync(history)
    assert dumped == [*history[-RECHECKED:]]


def test_an_agent_recorded_again_with_nothing_changed_is_not_synced_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = recorder(tmp_path)
    agent = Agent(registry=ToolRegistry([]), client=object())
    agent.restore(AgentState(messages=(user("hi"), assistant(text("hello")))))
    synced: list[int] = []
    write = log._write
    monkeypatch.setattr(
        log, "_write", lambda messages, *a: synced.append(len(messages)) or write(messages, *a)
    )
    log.record(agent)
    log.record(agent)  # a run's end, then its cell's
    assert synced == [2]
    agent.messages.append(user("more"))
    log.record(agent)
    agent.last_prompt_tokens += 1  # the state alone changed
    log.record(agent)
    assert synced == [2, 3, 3]
    assert [r.get("i") for r in lines(log.log.path)[1:]] == [0, 1, None, 2, None]


def test_a_resumed_history_writes_only_what_differs_from_its_file(tmp_path: Path) -> None:
    first = recorder(tmp_path)
    first.sync([user("hi"), assistant(text("hello")), user("more"), assistant(text("ok"))])
    assert first.log is not None
    saved = read_conversation(first.log.path)
    assert saved is not None
    resumed = [dict(m) for m in saved.messages]  # the agent's own copies
    resumed[1] = assistant(text("hello, repaired"))
    again = recorder(tmp_path)
    again.attach(saved, resumed)
    resumed.append(user("next"))
    again.sync(resumed)
    assert [r.get("i") for r in lines(saved.path)[1:]] == [0, 1, 2, 3, 1, 4]
    shorter = read_conversation(saved.path)
    assert shorter is not None and shorter.messages == resumed
    again.attach(shorter, resumed[:3])  # a repair that dropped the end: the file is cut back
    again.sync(resumed[:3])
    assert lines(saved.path)[-1] == {"length": 3}
    cut = read_conversation(saved.path)
    assert cut is not None and cut.messages == resumed[:3]


def test_a_renamed_notebook_takes_its_conversation_along_signed_anew(tmp_path: Path) -> None:
    names = ["/work/notes/Untitled.ipynb"]
    log = Recorder(lambda: names[-1], root=tmp_path)
    history = [user("hi"), assistant(text("hello"))]
    log.sync(history, "claude-test")
    assert log.log is not None
    first = log.log.path
    names.append("/work/notes/sales.ipynb")
    history.append(user("and now?"))
    log.sync(history)
    assert not first.exists() and log.log.path.parent == notebook_folder(names[-1], tmp_path)
    assert log.log.path.name == first.name
    assert saved_conversations(names[0], tmp_path) == []
    [saved] = saved_conversations(names[-1], tmp_path)
    assert saved.signed and saved.messages == history and saved.id == log.current_id
    assert (saved.notebook, saved.model) == (names[-1], "claude-test")
    history.append(assistant(text("still here")))
    log.sync(history)  # goes on appending to the moved file, signed after its last line
    again = read_conversation(log.log.path)
    assert again is not None and again.signed and again.messages == history


def test_a_file_copied_into_another_notebooks_folder_does_not_verify(tmp_path: Path) -> None:
    log = recorder(tmp_path)
    log.sync([user("hi")])
    assert log.log is not None
    elsewhere = notebook_folder("/work/notes/other.ipynb", tmp_path)
    elsewhere.mkdir(parents=True)
    copied = elsewhere / log.log.path.name
    copied.write_bytes(log.log.path.read_bytes())
    saved = read_conversation(copied)
    assert saved is not None and not saved.signed


def test_a_history_cut_back_is_recorded_as_its_length(tmp_path: Path) -> None:
    log = recorder(tmp_path)
    history = [user("one"), assistant(text("two")), user("three")]
    log.sync(history)
    del history[1:]  # a first request that failed takes its prompt back
    log.sync(history)
    history.append(assistant(text("other")))
    log.sync(history)
    assert log.log is not None
    assert lines(log.log.path)[-2] == {"length": 1}
    saved = read_conversation(log.log.path)
    assert saved is not None and saved.messages == history


def test_a_last_line_cut_short_loses_only_itself_and_resuming_starts_a_new_line(
    tmp_path: Path,
) -> None:
    log = recorder(tmp_path)
    history = [user("one"), assistant(text("two"))]
    log.sync(history)
    assert log.log is not None
    path = log.log.path
    history.append(user("three"))
    log.sync(history)
    path.write_bytes(path.read_bytes()[:-15])  # a kernel killed in the middle of a write
    saved = read_conversation(path)
    assert saved is not None and saved.messages == history[:2] and saved.skipped == 1
    again = recorder(tmp_path)
    again.attach(saved)
    history.append(assistant(text("four")))
    again.sync(history)
    resumed = read_conversation(path)
    assert resumed is not None and resumed.messages == history and resumed.skipped == 1


def test_a_file_without_its_header_is_no_conversation(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text('{"nbagent": "conv')
    (tmp_path / "y.jsonl").write_text('{"something": "else"}\n')
    assert read_conversation(tmp_path / "x.jsonl") is None
    assert read_conversation(tmp_path / "y.jsonl") is None


def test_secrets_from_the_environment_are_redacted_from_every_string(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("MY_SERVICE_TOKEN", secret)
    history = [
        user(f"my token is {secret}"),
        assistant(call("t1", "Bash", command=f"curl -H 'Authorization: {secret}' x")),
        {"role": "user", "content": [result("t1", f"echoed {secret}"), text("and?")]},
        assistant(call("t2", "Bash", command="env")),
        {"role": "user", "content": [result("t2", [text(f"TOKEN={secret}")])]},
    ]
    log = recorder(tmp_path)
    log.sync(history)
    assert log.log is not None
    written = log.log.path.read_text()
    assert secret not in written and written.count("[redacted MY_SERVICE_TOKEN]") == 4
    assert secret in history[0]["content"][0]["text"]  # the agent's own history is untouched
    log.sync(history)  # the redacted copy compares equal: nothing written again
    assert log.log.path.read_text() == written


def test_two_threads_appending_at_once_never_interleave_lines(tmp_path: Path) -> None:
    path = ConversationLog.create(tmp_path, NOTEBOOK, "m").path
    payload = "x" * 5000  # longer than a pipe's atomic write, as a tool result may be

    def append(writer: str) -> None:
        log = ConversationLog(path)  # one object each: only O_APPEND keeps them apart
        for n in range(200):
            log.append({"i": n, "message": {"role": writer, "content": [text(payload)]}})

    threads = [threading.Thread(target=append, args=(w,)) for w in ("user", "assistant")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = lines(path)[1:]  # every line parses
    for writer in ("user", "assistant"):
        mine = [r["i"] for r in records if r["message"]["role"] == writer]
        assert mine == list(range(200))


def test_a_message_replaced_early_in_the_history_is_written_at_the_next_record(
    tmp_path: Path,
) -> None:
    log = recorder(tmp_path)
    agent = Agent(registry=ToolRegistry([]), client=object())
    history = [user(f"q{i}") if i % 2 == 0 else assistant(text(f"a{i}")) for i in range(40)]
    agent.restore(AgentState(messages=tuple(history)))
    log.record(agent)
    agent.messages[3] = assistant(text("a3, edited"))  # far before the rechecked last ones
    agent.messages.append(user("more"))
    log.record(agent)
    assert [(r["i"], r["message"]) for r in lines(log.log.path)[1:] if "i" in r][-2:] == [
        (3, assistant(text("a3, edited"))),
        (40, user("more")),
    ]
    agent.messages = [*agent.messages[:5], user("a plain list, not tracked")]
    log.record(agent)
    assert log.log is not None
    saved = read_conversation(log.log.path)
    assert saved is not None and list(saved.messages) == agent.messages
