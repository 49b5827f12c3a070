"""One repair of a history: the agent before each run and resuming a saved one use the same."""

from __future__ import annotations

from typing import Any

from nbagent.loop.execution import INTERRUPTED_MESSAGE
from nbagent.loop.history import (
    SUMMARY_TAG,
    compaction_keeps,
    ends_with,
    last_answer,
    repaired,
    role_of,
    tool_calls,
)
from nbagent.loop.state import AgentState
from nbagent.testing import FakeAnthropicServer, Reply
from tests.loop.test_agent import FORECAST, agent_for, bodies


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(ident: str, name: str = "Read", **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": tool_input}


def result(ident: str, content: Any = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": ident, "content": content}


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
