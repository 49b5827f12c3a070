"""The request body encoded once per change (nbagent.api.body), and sent as the SDK would."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.api import body
from nbagent.api.anthropic import stream_response
from nbagent.api.body import BodyEncoder
from nbagent.core.tracked import TrackedList
from nbagent.testing import FakeAnthropicServer, Reply

MODEL = "claude-sonnet-5-5"


def turn(i: int) -> list[dict[str, Any]]:
    """Two messages of a history."""
    return [
        {"role": "user", "content": [{"type": "text", "text": f"step {i} é"}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]},
    ]


def request(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 100, "messages": messages, "tools": tools}


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every value the encoder encodes, in order."""
    seen: list[Any] = []
    encoder = body._ENCODER

    class Counting:
        def encode(self, value: Any) -> str:
            seen.append(value)
            return encoder.encode(value)

    monkeypatch.setattr(body, "_ENCODER", Counting())
    return seen


def test_the_body_is_the_request_as_json_with_stream_last() -> None:
    tools = [{"name": "note", "input_schema": {"type": "object"}}]
    sent = BodyEncoder().encode({**request(turn(0), tools), "system": "s"})
    assert json.loads(sent) == {**request(turn(0), tools), "system": "s", "stream": True}
    assert list(json.loads(sent)) == [
        "max_tokens", "messages", "model", "system", "tools", "stream"
    ]  # fmt: skip
    assert "é".encode() in sent


def test_only_the_items_a_recent_request_did_not_send_are_encoded(encoded: list[Any]) -> None:
    encoder = BodyEncoder()
    tools = [{"name": f"t{i}", "input_schema": {"type": "object"}} for i in range(50)]
    history = turn(0)
    encoder.encode(request(history, tools))
    encoded.clear()
    history = [*history, *turn(1)]
    breakpoint_copy = {**tools[0], "cache_control": {"type": "ephemeral"}}
    sent = encoder.encode(request(history, [breakpoint_copy, *tools[1:]]))
    items = [value for value in encoded if isinstance(value, dict)]
    assert items == [*turn(1), breakpoint_copy]
    assert json.loads(sent)["messages"] == history


def test_the_same_tools_list_again_is_sent_as_it_was_without_a_scan(
    encoded: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = BodyEncoder()
    tools = [{"name": f"t{i}", "input_schema": {"type": "object"}} for i in range(50)]
    history = turn(0)
    first = encoder.encode(request(history, tools))
    scans: list[int] = []
    real = body.same_prefix
    monkeypatch.setattr(body, "same_prefix", lambda a, b: scans.append(len(b)) or real(a, b))
    encoded.clear()
    again = encoder.encode(request(list(history), tools))
    assert again == first and not [v for v in encoded if isinstance(v, dict)]
    assert scans == [2]  # the messages (a new list) were compared; the tools were not
    tools[3] = {"name": "t3", "input_schema": {"type": "object"}, "description": "changed"}
    changed = json.loads(encoder.encode(request(history, tools)))
    assert changed["tools"][3]["description"] == "changed"  # replaced in the list: sent anew


def test_a_large_list_sent_again_is_handed_over_as_the_same_bytes_not_copied() -> None:
    encoder = BodyEncoder()
    description = "x" * 300
    tools = [{"name": f"t{i}", "description": description} for i in range(2000)]
    first = encoder.encode_chunks(request(turn(0), tools))
    history = [*turn(0), *turn(1)]
    again = encoder.encode_chunks(request(history, tools))
    large = [chunk for chunk in first if len(chunk) >= body.CHUNK]
    assert len(large) == 1 and any(chunk is large[0] for chunk in again)
    assert len(again) <= 3  # what comes before the tools, the tools, what comes after
    assert json.loads(b"".join(again)) == {**request(history, tools), "stream": True}


def test_an_item_replaced_in_the_middle_is_encoded_again(encoded: list[Any]) -> None:
    encoder = BodyEncoder()
    history = [*turn(0), *turn(1), *turn(2)]
    encoder.encode(request(history, []))
    encoded.clear()
    history[2] = {"role": "user", "content": "replaced"}
    sent = encoder.encode(request(history, []))
    assert [value for value in encoded if isinstance(value, dict)] == [history[2]]
    assert json.loads(sent)["messages"] == history


def test_several_conversations_in_turn_each_reuse_their_own() -> None:
    encoder = BodyEncoder()
    histories = [turn(i) for i in range(3)]
    for history in histories:
        encoder.encode(request(history, []))
    for history in histories:
        grown = [*history, *turn(9)]
        assert json.loads(encoder.encode(request(grown, [])))["messages"] == grown


@pytest.mark.parametrize("tools", [1, 2000])
@pytest.mark.parametrize("betas", [(), ("compact-2026-01-12",)])
def test_stream_response_sends_what_the_sdks_stream_helper_sends(
    betas: tuple[str, ...], tools: int
) -> None:
    definitions = [
        {"name": f"note{i}", "description": "d" * 300, "input_schema": {"type": "object"}}
        for i in range(tools)
    ]
    sent = {**request(turn(0)[:1], definitions), "system": "s"}
    if betas:
        edit = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 60000}}
        sent["context_management"] = {"edits": [edit]}
    with FakeAnthropicServer([Reply.text("a"), Reply.text("a")]) as api:
        client = api.client()
        helper = (
            client.beta.messages.stream(**sent, betas=list(betas))
            if betas
            else client.messages.stream(**sent)
        )
        with helper as stream:
            stream.get_final_message()
        *_, response = stream_response(client, sent, betas)
        api.assert_no_errors()
    assert response.content[-1] == {"type": "text", "text": "a"}  # after any compaction
    theirs, ours = api.requests
    assert ours.path == theirs.path
    assert ours.body == theirs.body
    assert list(ours.body) == list(theirs.body)
    varying = {"x-stainless-retry-count", "x-stainless-read-timeout", "idempotency-key"}
    assert {k: v for k, v in ours.headers.items() if k not in varying} == {
        k: v for k, v in theirs.headers.items() if k not in varying
    }


def test_a_conversation_sharing_only_a_first_tool_does_not_evict_another(
    encoded: list[Any],
) -> None:
    encoder = BodyEncoder()
    shared = {"name": "note", "input_schema": {"type": "object"}}
    catalogues = [
        [shared, *({"name": f"t{c}_{i}", "input_schema": {}} for i in range(20))] for c in range(3)
    ]
    history = turn(0)
    for tools in catalogues:
        encoder.encode(request(history, tools))
    encoded.clear()
    encoder.encode(request(history, catalogues[0]))
    assert [value for value in encoded if isinstance(value, dict)] == []


POOL = [{"role": "user", "content": f"m{i}"} for i in range(8)]


@given(st.lists(st.lists(st.sampled_from(range(len(POOL))), max_size=10), max_size=8))
def test_any_sequence_of_requests_is_encoded_as_json_would(lists: list[list[int]]) -> None:
    encoder = BodyEncoder()
    for indexes in lists:
        messages = [POOL[i] for i in indexes]
        sent = encoder.encode(request(messages, messages[::-1]))
        assert json.loads(sent) == {**request(messages, messages[::-1]), "stream": True}


def test_an_item_changed_in_place_after_it_was_sent_is_caught_where_bodies_are_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    messages = turn(0)
    encoder = BodyEncoder()
    encoder.encode(request(messages, []))
    messages[0]["content"] = "changed in place"
    monkeypatch.setenv(body.CHECK_ENV, "1")
    with pytest.raises(AssertionError, match="changed in place"):
        encoder.encode(request(messages, []))
    monkeypatch.delenv(body.CHECK_ENV)
    stale = json.loads(encoder.encode(request(messages, [])))
    assert stale["messages"][0]["content"] != "changed in place"  # why the suite checks


def test_a_tracked_list_given_again_is_encoded_from_its_mark_without_a_scan(
    encoded: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = BodyEncoder()
    history = TrackedList([*turn(0), *turn(1), *turn(2)])
    encoder.encode(request(history, []))
    scans: list[int] = []
    real = body.same_prefix
    monkeypatch.setattr(body, "same_prefix", lambda a, b: scans.append(len(b)) or real(a, b))
    for step, change in enumerate(["append", "replace_middle", "truncate", "none", "clear"]):
        encoded.clear()
        if change == "append":
            history += turn(3)
            expected = turn(3)
        elif change == "replace_middle":
            history[1] = {"role": "assistant", "content": [{"type": "text", "text": f"{step}"}]}
            expected = list(history[1:])
        elif change == "truncate":
            del history[4:]
            expected = []
        elif change == "clear":
            history.clear()
            expected = []
        else:
            expected = []
        sent = encoder.encode(request(history, []))
        assert json.loads(sent)["messages"] == history
        assert [value for value in encoded if isinstance(value, dict)] == expected
    assert scans == []  # never compared whole: the tools (empty) are not scanned either
