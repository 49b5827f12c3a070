"""One repair of a history: the agent before each run and resuming a saved one use the same."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.loop import history as history_module
from nbagent.loop.execution import INTERRUPTED_MESSAGE
from nbagent.loop.history import (
    SUMMARY_TAG,
    compaction_keeps,
    ends_with,
    last_answer,
    loaded_in,
    repaired,
    repaired_after,
    role_of,
    tool_calls,
)
from nbagent.loop.state import AgentState
from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.testing.fakeapi.rules import ApiError, check_request
from tests.loop.test_agent import FORECAST, agent_for, bodies
from tests.messages import assistant, call, result, text, user


def api_accepts(messages: list[dict[str, Any]]) -> ApiError | set[str]:
    """What the fake API's validation says of a history (Read and Bash are the tools)."""
    tools = [
        {"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Read", "Bash")
    ]
    return check_request(
        {"model": "claude-x", "max_tokens": 10, "messages": messages, "tools": tools}
    )


VALID = [
    {"role": "user", "content": [text("Weather in Paris?")]},
    {"role": "assistant", "content": [text("Looking."), call("toolu_1", FORECAST, city="Paris")]},
    {"role": "user", "content": [result("toolu_1", "Sunny"), text("and Oslo?")]},
    {"role": "assistant", "content": [text("Sunny in Paris.")]},
]


def test_a_valid_history_is_kept_as_the_same_objects() -> None:
    repair = repaired(VALID, redacted=False)
    assert repair.messages == VALID and repair.messages is not VALID
    assert all(kept is given for kept, given in zip(repair.messages, VALID, strict=True))
    assert (repair.interrupted, repair.dropped, repair.summarised) == ([], 0, False)


def test_the_agent_answers_calls_left_unanswered_as_resuming_does(
    fake_api: FakeAnthropicServer,
) -> None:
    stopped = VALID[:2]  # a run stopped after the model called a tool
    expected = repaired(stopped).messages
    assert expected[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": INTERRUPTED_MESSAGE,
                "is_error": True,
            }
        ],
    }
    agent = agent_for(fake_api)
    agent.restore(AgentState(messages=tuple(stopped)))
    fake_api.enqueue(Reply.text("Going on."))
    assert agent.run("Go on.").text == "Going on."
    assert agent.messages[:2] == expected[:2]
    assert agent.messages[2]["content"][:2] == [*expected[2]["content"], text("Go on.")]
    [request] = bodies(fake_api)  # the API took it (the fake refuses an unanswered call)
    assert len(request["messages"]) == 3


def test_the_agent_keeps_a_compaction_summary_that_names_a_redaction() -> None:
    summary = f"The key was [redacted API_KEY]; see <{SUMMARY_TAG}>."
    block = {"type": "compaction", "content": summary, "encrypted_content": "abc"}
    history = [*VALID, {"role": "user", "content": [text("next")]}]
    history[3] = {"role": "assistant", "content": [block, text("Sunny in Paris.")]}
    assert repaired(history, redacted=False).messages == history
    saved = repaired(history)  # a saved history: the redaction broke the block's signature
    assert saved.summarised and saved.messages[0]["content"][0]["type"] == "text"


def test_empty_texts_and_doubled_roles_are_mended_for_the_agent_too() -> None:
    history = [
        {"role": "user", "content": [text("one")]},
        {"role": "user", "content": [text(" "), text("two")]},
        {"role": "assistant", "content": [text("answer")]},
    ]
    repair = repaired(history, redacted=False)
    assert repair.messages == [
        {"role": "user", "content": [text("one"), text("two")]},
        {"role": "assistant", "content": [text("answer")]},
    ]
    assert repair.dropped == 1


def test_an_empty_text_in_a_tool_results_blocks_is_left_out_as_the_api_refuses_it() -> None:
    answer = result("t1", [text("\n "), text("hello")])
    history = [
        user("read it"),
        assistant(call("t1", file_path="a.txt")),
        {"role": "user", "content": [answer]},
        assistant(text("It says hello.")),
    ]
    repair = repaired(history, redacted=False)
    assert repair.messages[2]["content"][0]["content"] == [text("hello")]
    assert repair.dropped == 1 and answer["content"][0] == text("\n ")  # a copy was mended
    body = {"model": "claude-x", "max_tokens": 10, "messages": repair.messages}
    tools = [{"name": "Read", "description": "Read", "input_schema": {"type": "object"}}]
    assert not isinstance(check_request({**body, "tools": tools}), ApiError)


def test_a_tool_result_of_empty_texts_only_reads_back_as_a_tools_own_would_be_sent() -> None:
    history = [
        user("read it"),
        assistant(call("t1", file_path="a.txt")),
        {"role": "user", "content": [result("t1", [text(" "), text("")])]},
        assistant(text("It is empty.")),
    ]
    repair = repaired(history, redacted=False)
    assert repair.messages[2]["content"][0]["content"] == "(no output)"
    assert repair.dropped == 2


def test_the_accessors_read_a_history_without_its_dicts() -> None:
    assert ends_with(VALID, "assistant") and not ends_with(VALID, "user")
    assert not ends_with([], "user")
    assert [role_of(m) for m in VALID] == ["user", "assistant", "user", "assistant"]
    assert tool_calls(VALID[1]) == [call("toolu_1", FORECAST, city="Paris")]
    assert tool_calls(VALID[0]) == []
    assert last_answer(VALID) == "Sunny in Paris." and last_answer(VALID[:1]) == ""
    assert compaction_keeps(VALID) == 4  # after a final answer nothing is kept
    assert compaction_keeps(VALID[:3]) == 1  # the call and its results stay together
    assert compaction_keeps([*VALID, {"role": "user", "content": "next"}]) == 4


# -- repair ---------------------------------------------------------------------------------


def test_an_unanswered_call_at_the_end_is_answered_as_interrupted() -> None:
    history = [user("go"), assistant(text("Running."), call("t1"), call("t2", "Bash"))]
    assert isinstance(api_accepts(history), ApiError)
    repair = repaired(history)
    assert not isinstance(api_accepts(repair.messages), ApiError)
    assert repair.interrupted == ["Read", "Bash"]
    last = repair.messages[-1]["content"]
    assert [b["tool_use_id"] for b in last] == ["t1", "t2"]
    assert all(b["is_error"] and b["content"] == INTERRUPTED_MESSAGE for b in last)


def test_a_broken_history_is_made_valid() -> None:
    history = [
        assistant(text("an orphan answer")),  # the history must start with the user
        user("first"),
        user("", "second"),  # consecutive users merge; the empty text goes
        assistant(call("t1"), call("t2")),
        {"role": "user", "content": [text("typed"), result("t2"), result("zz")]},  # out of order
        assistant(text("answered")),
        assistant(text("continued")),  # pause_turn: the same message goes on
        assistant({"type": "server_tool_use", "id": "s1", "name": "tool_search_tool_bm25"}),
    ]
    repair = repaired(history)
    assert not isinstance(api_accepts(repair.messages), ApiError), repair.messages
    roles = [m["role"] for m in repair.messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert repair.messages[0]["content"] == [text("first"), text("second")]
    assert [b.get("tool_use_id", b.get("text")) for b in repair.messages[2]["content"]] == [
        "t1",
        "t2",
        "typed",
    ]
    assert repair.messages[3]["content"] == [text("answered"), text("continued")]
    assert repair.interrupted == ["Read"]


def test_the_tools_a_history_loaded_are_read_back() -> None:
    reference = {"type": "tool_reference", "tool_name": FORECAST}
    history = [
        user("weather"),
        assistant(call("s1", "ToolSearch", query="weather")),
        {"role": "user", "content": [result("s1", [reference])]},
        assistant(call("s2", "ToolSearch", query="mail")),
        {"role": "user", "content": [result("s2", "Loaded: mcp__mail__send. Their definitions")]},
        assistant(call("t3", "Read")),
        {"role": "user", "content": [result("t3", "Loaded: not a search")]},
    ]
    assert loaded_in(history) == [FORECAST, "mcp__mail__send"]


def test_a_compaction_block_that_lost_a_secret_becomes_a_summary_to_go_on_from() -> None:
    signed = {"type": "compaction", "content": "Summary.", "signature": "sig"}
    cut = {**signed, "content": "The user gave [redacted MY_TOKEN] and asked."}
    history = [
        user("first"),
        assistant(signed, text("One.")),
        user("second"),
        assistant(cut, call("t1")),
        {"role": "user", "content": [result("t1"), text("third")]},
    ]
    intact = repaired(history[:3])
    assert intact.messages == history[:3] and not intact.summarised  # signed blocks stay
    repair = repaired(history)
    assert repair.summarised and not isinstance(api_accepts(repair.messages), ApiError)
    assert repair.messages[0] == user(
        "<conversation-summary>\nThe user gave [redacted MY_TOKEN] and asked.\n"
        "</conversation-summary>"
    )
    assert repair.messages[1:] == [assistant(call("t1")), history[4]]  # from the block on
    earlier = repaired([user("a"), assistant(cut, text("b")), user("c"), assistant(signed)])
    assert earlier.messages[1]["content"][0] == text(cut["content"])  # dropped by the API anyway
    assert earlier.messages[3]["content"] == [signed] and not earlier.summarised


def test_a_repair_from_a_valid_prefix_reads_only_what_follows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    grown = [
        *VALID,
        user("", "next"),
        assistant(call("t9")),
        user("typed"),
    ]
    whole = repaired(grown, redacted=False)
    read: list[Any] = []
    blocks = history_module._blocks
    monkeypatch.setattr(history_module, "_blocks", lambda c, r: read.append(c) or blocks(c, r))
    part = repaired(grown, redacted=False, valid=len(VALID))
    assert part.messages == whole.messages
    assert all(a is b for a, b in zip(part.messages[: len(VALID)], VALID, strict=True))
    assert len(read) == 3  # the three messages after the valid ones
    assert (part.interrupted, part.dropped) == (whole.interrupted, whole.dropped)
    assert (part.valid, whole.valid) == (len(VALID), 0)  # the count it kept without reading
    assert repaired(VALID, redacted=False, valid=len(VALID) + 5).valid == len(VALID)


def test_a_redacted_history_read_from_a_valid_prefix_looks_for_compactions_where_told() -> None:
    signed = {"type": "compaction", "content": "Summary.", "signature": "sig"}
    cut = {**signed, "content": "The user gave [redacted MY_TOKEN] and asked."}
    history = [user("a"), assistant(signed, text("b")), user("c"), assistant(text("d"))]
    with pytest.raises(ValueError, match="compactions"):
        repaired(history, valid=2)
    part = repaired(history, valid=3, compactions={1})
    assert part.messages == history and not part.summarised and part.valid == 3
    assert all(a is b for a, b in zip(part.messages, history, strict=True))
    history[1] = assistant(cut, text("b"))
    again = repaired(history, valid=3, compactions={1})  # the cut block: read whole
    assert again.summarised and again.messages == repaired(history).messages
    assert again.valid == 0  # read whole: nothing of it kept unread
    unseen = repaired(history, valid=3, compactions=set())  # told there is none
    assert not unseen.summarised and unseen.valid == 3


MESSAGES = st.lists(
    st.sampled_from(
        [
            user("a"),
            user("", "b"),
            assistant(text("c")),
            assistant(call("t1")),
            assistant(call("t2"), call("t3")),
            {"role": "user", "content": [result("t1"), text("d")]},
            {"role": "user", "content": [result("t3"), result("t2")]},
            {"role": "user", "content": [result("zz")]},
            assistant({"type": "server_tool_use", "id": "s1", "name": "tool_search_tool_bm25"}),
            assistant(text("")),
        ]
    ),
    max_size=12,
)


@given(MESSAGES, st.integers(0, 14))
def test_a_repair_after_the_kept_messages_is_the_whole_repairs_tail(
    messages: list[dict[str, Any]], valid: int
) -> None:
    whole = repaired(messages, redacted=False, valid=valid).messages
    base, tail = repaired_after(messages, valid)
    assert base <= max(valid - 1, 0)
    assert [*messages[:base], *tail] == whole
    assert all(a is b for a, b in zip(messages[:base], whole, strict=False))  # not copied
