"""Effort and adaptive thinking: sent where the model takes them, as the SDK types them; the
thinking blocks kept with their signatures through tool loops, compaction and resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest
from anthropic.types import OutputConfigParam, ThinkingConfigParam
from IPython.core.interactiveshell import InteractiveShell

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import ConfigurationError, ModelAPIError
from nbagent.core.events import Notice
from nbagent.loop.agent import Agent
from nbagent.loop.reasoning import capability_of, check_effort, effort_not_sent, reasoning_fields
from nbagent.testing import FakeAnthropicServer, Reply, Text, Thinking, ToolUse
from tests.loop.test_agent import echo
from tests.shells import error_of, run


def test_the_fields_follow_the_capability_table() -> None:
    assert reasoning_fields("claude-sonnet-5-5", "xhigh", "adaptive") == {
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "xhigh"},
    }
    assert reasoning_fields("claude-opus-4-6", "xhigh", "adaptive") == {
        "thinking": {"type": "adaptive"}
    }
    assert reasoning_fields("claude-opus-4-5-20251101", "high", "adaptive") == {
        "output_config": {"effort": "high"}
    }
    assert reasoning_fields("claude-haiku-4-5", "high", "adaptive") == {}
    assert reasoning_fields("claude-sonnet-5-5", None, "off") == {}
    assert not capability_of("claude-opus-5-9").adaptive  # a new version is not guessed
    with pytest.raises(ConfigurationError, match="choose one of: low, medium"):
        check_effort("extreme")


def test_requests_carry_them_as_the_sdk_types_them(fake_api: FakeAnthropicServer) -> None:
    agent = Agent(registry=ToolRegistry([echo]), client=fake_api.client(), effort="low")
    fake_api.enqueue(Reply.text("Hi."))
    agent.run("Hello.")
    body = fake_api.requests[-1].body
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "low"}
    pydantic.TypeAdapter(ThinkingConfigParam).validate_python(body["thinking"], strict=True)
    pydantic.TypeAdapter(OutputConfigParam).validate_python(body["output_config"], strict=True)


def test_an_effort_the_model_does_not_take_is_said_not_dropped_silently(
    fake_api: FakeAnthropicServer,
) -> None:
    assert effort_not_sent("claude-opus-4-8", "low") is None
    assert effort_not_sent("claude-opus-4-8", None) is None
    said = effort_not_sent("claude-opus-4-5", "xhigh")
    assert said is not None and "takes low, medium, high" in said
    agent = Agent(
        registry=ToolRegistry([echo]),
        client=fake_api.client(),
        model="claude-opus-4-5",
        effort="max",
    )
    fake_api.enqueue(Reply.text("Hi."))
    events = list(agent.events("Hello."))
    warned = [e.message for e in events if isinstance(e, Notice) and e.level == "warning"]
    assert any("Effort 'max' is not sent: claude-opus-4-5" in text for text in warned)
    assert "output_config" not in fake_api.requests[-1].body


def test_thinking_round_trips_through_a_tool_loop(fake_api: FakeAnthropicServer) -> None:
    """The signed thinking block stays first in its message; the server verifies it; the
    card is told how long the model thought."""
    agent = Agent(registry=ToolRegistry([echo]), client=fake_api.client())
    fake_api.enqueue(
        Reply.of(
            Thinking("The user wants an echo; call the tool."), ToolUse("echo", {"text": "a"})
        ),
        Reply.of(Thinking("Done; answer."), Text("Echoed.")),
    )
    events: list[Any] = []
    assert agent.run("Echo a.", on_event=events.append).text == "Echoed."
    sent = fake_api.requests[-1].body["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["thinking", "tool_use"]
    assert sent[0]["signature"] and sent[0]["thinking"].startswith("The user wants")
    thoughts = [e for e in events if isinstance(e, Notice)]
    assert thoughts[0].message == "Thought for 1 s"
    assert thoughts[0].detail == "The user wants an echo; call the tool."
    fake_api.assert_no_errors()


def test_a_changed_or_dropped_thinking_block_is_refused(fake_api: FakeAnthropicServer) -> None:
    agent = Agent(registry=ToolRegistry([echo]), client=fake_api.client())
    fake_api.enqueue(Reply.of(Thinking("Think."), ToolUse("echo", {"text": "a"})))
    agent.max_turns = 1
    agent.run("Echo a.")
    thinking = agent.messages[1]["content"][0]
    agent.messages[1] = {**agent.messages[1], "content": [{**thinking, "thinking": "Changed."}]}
    agent.messages[1]["content"].append(
        {
            "type": "tool_use",
            "id": agent.messages[2]["content"][0]["tool_use_id"],
            "name": "echo",
            "input": {"text": "a"},
        }
    )
    with pytest.raises(ModelAPIError, match="Invalid `signature` in `thinking` block"):
        agent.run("Go on.")
    agent.messages[1] = {**agent.messages[1], "content": agent.messages[1]["content"][1:]}
    del agent.messages[3:]
    with pytest.raises(ModelAPIError, match="must start with a thinking block"):
        agent.run("Go on.")


def test_thinking_survives_client_compaction(fake_api: FakeAnthropicServer) -> None:
    """The tool loop kept past nbagent's summary keeps its signed thinking block."""
    agent = Agent(registry=ToolRegistry([echo]), client=fake_api.client(), compaction="client")
    fake_api.enqueue(Reply.text("Hello."))
    agent.run("Hi.")
    agent.compact_threshold = 1
    fake_api.enqueue(
        Reply.text("The user said hi."),
        Reply.of(Thinking("Echo it."), ToolUse("echo", {"text": "b"})),
        Reply.text("The user asked for an echo."),
        Reply.text("Echoed b."),
    )
    assert agent.run("Echo b.").text == "Echoed b."
    last = fake_api.requests[-1].body["messages"]
    kinds = [b["type"] for m in last for b in m["content"]]
    assert "thinking" in kinds
    fake_api.assert_no_errors()


def test_thinking_blocks_are_resumed_with_their_signatures(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    tmp_path: Path,
    conversations_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A saved conversation's thinking blocks come back as they were: the API accepts them."""
    monkeypatch.setitem(ip.user_ns, "__session__", str(tmp_path / "analysis.ipynb"))
    fake_api.enqueue(Reply.of(Thinking("A greeting; answer in kind."), Text("Hello.")))
    first, _ = run(ip, "%%agent --effort medium\nHi.")
    assert first.success, error_of(first)
    assert fake_api.requests[-1].body["output_config"] == {"effort": "medium"}
    ip.run_line_magic("unload_ext", "nbagent")
    ip.run_line_magic("load_ext", "nbagent")
    _, resumed = run(ip, "%agent resume")
    assert "Resumed conversation" in resumed
    fake_api.enqueue(Reply.text("Again."))
    again, _ = run(ip, "%%agent\nHi again.")
    assert again.success, error_of(again)
    body = fake_api.requests[-1].body
    assert body["messages"][1]["content"][0]["type"] == "thinking"
    assert "output_config" not in body  # --effort was the first cell's only
    assert fake_api.requests[-1].status == 200
