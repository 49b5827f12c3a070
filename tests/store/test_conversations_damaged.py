"""Saved conversations read defensively: a damaged record, line or file is left out and named,
and never stops listing or resuming the others (issue #31)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from nbagent.loop.history import loaded_in, repaired
from nbagent.store.folders import notebook_folder
from nbagent.store.journal import ConversationLog
from nbagent.store.records import MAX_DEPTH, MAX_LINE, parse_line
from nbagent.store.resume import placeholder
from nbagent.store.saved import NOT_SIGNED, read_conversation
from nbagent.testing.fakeapi.rules import check_request
from tests.shells import error_of, run

DEEP = 200_000


def user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


def assistant(*texts: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": t} for t in texts]}


def deep_line(depth: int = DEEP) -> bytes:
    """A message record whose content is a list nested ``depth`` deep."""
    return b'{"i":1,"message":{"role":"assistant","content":' + b"[" * depth + b"]" * depth + b"}}"


@pytest.fixture
def folder(ip: InteractiveShell, tmp_path: Path) -> Iterator[Path]:
    """The folder of the shell's notebook's conversations."""
    notebook = tmp_path / "analysis.ipynb"
    ip.user_ns["__session__"] = str(notebook)
    yield notebook_folder(str(notebook.resolve()))
    ip.user_ns.pop("__session__", None)


def header(ident: str) -> dict[str, Any]:
    return {
        "nbagent": "conversation",
        "version": 1,
        "id": ident,
        "notebook": "/somewhere/analysis.ipynb",
        "started": "2025-01-02T14:03:12+00:00",
        "model": "m",
    }


def signed_lines(folder: Path, ident: str, lines: list[Any]) -> Path:
    """A conversation file nbagent signed, whatever its lines hold: a dict is written as
    nbagent writes a record, bytes as they are (lines ``json.dumps`` would not make), any
    other value as JSON (a MAC ends an object: a line that is none breaks the chain there)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = ConversationLog(folder / f"20250102T140312-{ident}.jsonl")
    for line in lines:
        if isinstance(line, dict):
            log.append(line)
        else:
            log._append_body(line if isinstance(line, bytes) else json.dumps(line).encode())
    return log.path


def unsigned_lines(folder: Path, ident: str, lines: list[Any]) -> Path:
    """The same file as anyone could write it, without MACs."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"20250102T140312-{ident}.jsonl"
    path.write_bytes(
        b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in lines)
    )
    return path


def signed(folder: Path, ident: str, *records: Any) -> Path:
    """A conversation nbagent signed: its header, then the records."""
    return signed_lines(folder, ident, [header(ident), *records])


def unsigned(folder: Path, ident: str, *records: Any) -> Path:
    """A conversation nbagent did not sign: its header, then the records."""
    return unsigned_lines(folder, ident, [header(ident), *records])


def good(folder: Path) -> Path:
    """A sound conversation beside the damaged ones."""
    return signed(
        folder,
        "900d0000",
        {"i": 0, "message": user("all is well")},
        {"i": 1, "message": assistant("yes")},
    )


def history_of(ip: InteractiveShell) -> str:
    return run(ip, "%agent history")[1]


# -- a line -----------------------------------------------------------------------------------


def test_a_line_is_refused_before_parsing_when_too_deep_or_too_long() -> None:
    nested = b'{"a":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}"
    with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH} levels deep"):
        parse_line(nested)
    with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH} levels deep"):
        parse_line(deep_line())
    inner = MAX_DEPTH - 1  # the record itself is one level
    assert "a" in parse_line(b'{"a":' + b"[" * inner + b"]" * inner + b"}")  # just deep enough
    assert parse_line(b'{"a":"' + b"[" * DEEP + b'"}') == {"a": "[" * DEEP}  # inside a string
    escaped = b'{"a":"\\"' + b"{" * DEEP + b'"}'  # an escaped quote does not end the string
    assert parse_line(escaped) == {"a": '"' + "{" * DEEP}
    with pytest.raises(ValueError, match="longer than"):
        parse_line(b'{"a":"' + b"x" * MAX_LINE + b'"}')
    with pytest.raises(ValueError, match="is not JSON"):
        parse_line(b'{"a":')
    with pytest.raises(ValueError, match="it is a list, not a record"):
        parse_line(b"[1]")


def test_each_record_left_out_is_named_with_its_line_and_why(tmp_path: Path) -> None:
    path = signed(
        tmp_path,
        "a11f0000",
        {"i": 0, "message": user("first")},
        {"i": 5, "message": assistant("too far")},
        {"something": "else"},
        {"length": -1},
        {"i": 1, "message": assistant("kept"), "state": {}},
        b'{"i":1,"message":}',
        {"i": 1, "message": {"role": "assistant", "content": ["x", {"type": "zzz"}]}},
    )
    saved = read_conversation(path)
    assert saved is not None and saved.signed and saved.damaged
    assert saved.messages == [user("first"), {"role": "assistant", "content": []}]
    assert saved.problems == [
        "line 3 (it sets message 6, but the history had 1 message then)",
        "line 4 (it is none of the records nbagent writes: a message, a length, a state)",
        "line 5 (its length is -1, not a number of at least 0)",
        "line 6 (its state is one field too many)",
        "line 7 (it is not JSON (Expecting value at character 17))",
        'block 1 of message 2 on line 8 (it is "x", not a block (an object))',
        "block 2 of message 2, a zzz, on line 8 (the API takes no block of this type here)",
    ]


# -- listing and resuming -----------------------------------------------------------------------


def test_a_message_whose_content_is_a_number_is_left_out_and_named(
    ip: InteractiveShell, folder: Path
) -> None:
    good(folder)
    signed(
        folder,
        "bad00001",
        {"i": 0, "message": user("first")},
        {"i": 1, "message": assistant("answer")},
        {"i": 2, "message": {"role": "user", "content": 5}},
    )
    result, sessions = run(ip, "%agent sessions")
    assert result.success, error_of(result)
    assert "| `bad00001` — damaged |" in sessions and "| `900d0000` |" in sessions
    why = "line 4 (its message's content is 5, not a text or a list of blocks)"
    assert f"Damaged, read as far as it goes:\n- `bad00001`: left out {why}." in sessions
    result, said = run(ip, "%agent resume bad00001")
    assert result.success, error_of(result)
    assert "Resumed conversation `bad00001`" in said and "1 turn, 2 messages" in said
    assert f"Left out, as damaged: {why}" in said
    assert "answer" in history_of(ip)
    result, said = run(ip, "%agent resume 900d")
    assert result.success and "Resumed conversation `900d0000`" in said


@pytest.mark.parametrize("sign", [signed, unsigned], ids=["signed", "unsigned"])
def test_a_line_nested_200000_deep_is_left_out_and_the_rest_resumed(
    ip: InteractiveShell, folder: Path, sign: Any
) -> None:
    good(folder)
    sign(
        folder,
        "dee90001",
        {"i": 0, "message": user("first")},
        deep_line(),
        {"i": 1, "message": assistant("answer")},
    )
    result, sessions = run(ip, "%agent sessions")
    assert result.success, error_of(result)
    why = f"line 3 (it is nested more than {MAX_DEPTH} levels deep)"
    assert why in sessions and "`900d0000`" in sessions
    trust = "" if sign is signed else " --trust"
    result, said = run(ip, f"%agent resume dee9{trust}")
    assert result.success, error_of(result)
    assert "1 turn, 2 messages" in said and why in said
    result, said = run(ip, "%agent resume 900d")
    assert result.success and "Resumed conversation `900d0000`" in said


def test_a_file_that_cannot_be_read_is_listed_as_damaged_and_never_stops_the_others(
    ip: InteractiveShell, folder: Path
) -> None:
    good(folder)
    (folder / "20990101T000000-d1c00000.jsonl").mkdir()  # read_bytes fails
    first = folder / "20990101T000000-d1c00001.jsonl"  # a first line that cannot be parsed
    first.write_bytes(deep_line() + b"\n" + json.dumps({"i": 0, "message": user("x")}).encode())
    result, sessions = run(ip, "%agent sessions")
    assert result.success, error_of(result)
    assert "| `d1c00000` — damaged |" in sessions and "| `d1c00001` — damaged |" in sessions
    assert "`d1c00000`: it cannot be read (" in sessions
    assert f"`d1c00001`: its first line cannot be read (it is nested more than {MAX_DEPTH}" in (
        sessions
    )
    result, said = run(ip, "%agent resume")
    assert result.success and "Resumed conversation `900d0000`" in said, error_of(result)
    for ident in ("d1c00000", "d1c00001"):
        result, _ = run(ip, f"%agent resume {ident} --trust")
        error = error_of(result)
        assert isinstance(error, UsageError) and "nothing of it to resume" in str(error)


def test_a_bad_state_and_a_call_without_id_or_a_bad_tool_name_are_left_out(
    ip: InteractiveShell, folder: Path
) -> None:
    call = {"type": "tool_use", "name": "Read", "input": {}}
    named = {"type": "tool_use", "id": "t2", "name": "no such name!", "input": {}}
    signed(
        folder,
        "57a7e000",
        {"i": 0, "message": user("first")},
        {
            "i": 1,
            "message": {"role": "assistant", "content": [call, named, *assistant("ok")["content"]]},
        },
        {"state": {"loaded": 5, "expanded": ["Read", "bad name!"], "prompt_tokens": -3}},
    )
    result, said = run(ip, "%agent resume")
    assert result.success, error_of(result)
    assert "Resumed conversation `57a7e000`" in said and "2 messages" in said
    for why in (
        "block 1 of message 2, a tool_use, on line 3 (its id is missing)",
        'block 2 of message 2, a tool_use, on line 3 (its name is "no such name!", not a tool '
        "name (1 to 64 letters, digits, _ or -))",
        "the state's loaded on line 4 (it is 5, not a list)",
        'the state\'s expanded item 2 on line 4 (it is "bad name!", not a tool name',
        "the state's prompt_tokens on line 4 (it is -3, not a number of at least 0)",
    ):
        assert why in said.replace("\\", ""), why
    assert "ok" in history_of(ip)


def test_an_unsigned_file_is_read_as_defensively(ip: InteractiveShell, folder: Path) -> None:
    unsigned(
        folder,
        "u0000001",
        {"i": 0, "message": user("first")},
        {"i": 1, "message": {"role": "assistant", "content": 5}},
        {"state": {"loaded": 5}},
        {"i": 1, "message": assistant("answer")},
    )
    result, sessions = run(ip, "%agent sessions")
    assert result.success, error_of(result)
    assert f"| `u0000001` — {NOT_SIGNED} — damaged |" in sessions
    result, said = run(ip, "%agent resume u0 --trust")
    assert result.success, error_of(result)
    assert "2 messages" in said and "line 3 (its message's" in said
    assert "the state's loaded on line 4" in said


# -- any JSON anywhere ----------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)

TEMPLATE: list[dict[str, Any]] = [
    header("0dd00000"),
    {"i": 0, "message": user("Read a.txt")},
    {
        "i": 1,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a.txt"}},
            ],
        },
    },
    {
        "i": 2,
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [
                        {"type": "text", "text": "hello"},
                        {"type": "tool_reference", "tool_name": "Bash"},
                    ],
                }
            ],
        },
    },
    {"i": 3, "message": assistant("It says hello.")},
    {"length": 4},
    {
        "state": {
            "loaded": ["Bash"],
            "expanded": [],
            "prompt_tokens": 12,
            "usage": {"input_tokens": 3, "output_tokens": 4},
        }
    },
]


def places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every field of a JSON value (and every item of its lists), as a path of keys."""
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        yield (*path, key)
        yield from places(item, (*path, key))


PLACES = [(n, *p) for n, record in enumerate(TEMPLATE) for p in [(), *places(record)]]


def replaced(records: list[dict[str, Any]], path: tuple[Any, ...], value: Any) -> list[Any]:
    """The records with the value at a path (a record's number, then its keys) replaced."""
    copy: list[Any] = json.loads(json.dumps(records))
    *parents, last = path
    container: Any = copy
    for key in parents:
        container = container[key]
    container[last] = value
    return copy


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(place=st.sampled_from(PLACES), value=JSON, sign=st.booleans())
def test_any_json_in_any_field_never_stops_listing_or_resuming(
    ip: InteractiveShell, folder: Path, place: tuple[Any, ...], value: Any, sign: bool
) -> None:
    for path in folder.glob("*.jsonl"):
        path.unlink()
    good(folder)
    lines = replaced(TEMPLATE, place, value)
    (signed_lines if sign else unsigned_lines)(folder, "0dd00000", lines)
    result, said = run(ip, "%agent sessions")
    assert result.success and "| `900d0000`" in said, error_of(result)
    result, said = run(ip, "%agent resume 0dd --trust")
    if result.success:
        assert "Resumed conversation `0dd00000`" in said
    else:
        assert isinstance(error_of(result), UsageError), error_of(result)
    result, said = run(ip, "%agent resume 900d")
    assert result.success and "Resumed conversation `900d0000`" in said, error_of(result)
    assert "all is well" in history_of(ip)


@settings(max_examples=150, deadline=None)
@given(place=st.sampled_from(PLACES), value=JSON)
def test_any_json_in_any_field_reads_back_a_history_the_api_accepts(
    place: tuple[Any, ...], value: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("any")
    path = signed_lines(folder, "0dd00000", replaced(TEMPLATE, place, value))
    saved = read_conversation(path)
    if saved is None or not saved.messages:
        return
    messages = repaired(saved.messages).messages
    tools = [{"name": "Read", "description": "Read", "input_schema": {"type": "object"}}] + [
        {**placeholder(name).definition(), "defer_loading": True}
        for name in loaded_in(messages)
        if name != "Read"
    ]
    if messages:
        answer = check_request(
            {"model": "claude-x", "max_tokens": 10, "messages": messages, "tools": tools}
        )
        assert not hasattr(answer, "status"), (answer, messages)
