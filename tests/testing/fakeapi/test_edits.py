"""FakeAnthropicServer plays context editing (clear_tool_uses_20250919) strictly, through the
real SDK's beta client, and its answers are the SDK's types."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from anthropic.types.beta import BetaClearToolUses20250919EditResponse, BetaMessage

from nbagent.testing import FakeAnthropicServer, Reply
from nbagent.testing.fakeapi.edits import CLEARED_RESULT

BETA = "context-management-2025-06-27"
BIG = "row " * 2000
"""A tool result of some 2,000 tokens."""


def tool(name: str) -> dict[str, Any]:
    """A custom tool definition."""
    return {"name": name, "description": f"The {name} tool.", "input_schema": {"type": "object"}}


TOOLS = [tool("ToolSearch"), tool("Read"), {**tool("Weather"), "defer_loading": True}]


def history(uses: int, name: str = "Read", content: Any = BIG) -> list[dict[str, Any]]:
    """A conversation of ``uses`` tool calls, each answered by a big result."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Read the files."}]
    for k in range(uses):
        use = {
            "type": "tool_use",
            "id": f"toolu_{name}{k}",
            "name": name,
            "input": {"path": f"{k}"},
        }
        result = {"type": "tool_result", "tool_use_id": f"toolu_{name}{k}", "content": content}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    return messages


def clear(**fields: Any) -> dict[str, Any]:
    """A context_management with one clear edit."""
    return {"edits": [{"type": "clear_tool_uses_20250919", **fields}]}


def ask(api: FakeAnthropicServer, messages: list[Any], stream: bool, **fields: Any) -> BetaMessage:
    """Send a request through the SDK's beta client."""
    request = {"model": "claude-test", "max_tokens": 64, "tools": TOOLS, "messages": messages}
    client = api.client()
    if stream:
        with client.beta.messages.stream(**request, **fields, betas=[BETA]) as events:
            return events.get_final_message()
    return client.beta.messages.create(**request, **fields, betas=[BETA])


def refused(api: FakeAnthropicServer, config: Any) -> str:
    """The message of a request refused 400."""
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(api, history(1), False, context_management=config)
    return str(caught.value.body["error"]["message"])


@pytest.fixture
def api() -> Iterator[FakeAnthropicServer]:
    """A fake API."""
    with FakeAnthropicServer() as server:
        yield server
    server.assert_no_errors()


def read_results(api: FakeAnthropicServer, index: int = -1) -> list[Any]:
    """The content of each tool result of a request, as the server received it."""
    body = api.requests[index].body
    return [
        b["content"]
        for m in body["messages"]
        for b in m["content"]
        if isinstance(m["content"], list) and b.get("type") == "tool_result"
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_old_results_are_cleared_past_the_trigger(api: FakeAnthropicServer, stream: bool) -> None:
    """Past the trigger, all but the last ``keep`` tool uses are cleared: the input tokens
    drop, and applied_edits says how many uses and tokens, as the SDK types it."""
    messages = history(6)
    api.enqueue(Reply.text("unedited"), Reply.text("edited"))
    whole = ask(api, messages, stream)
    edited = ask(
        api,
        messages,
        stream,
        context_management=clear(
            trigger={"type": "input_tokens", "value": 5000}, keep={"type": "tool_uses", "value": 2}
        ),
    )
    assert edited.context_management is not None
    (applied,) = edited.context_management.applied_edits
    assert isinstance(applied, BetaClearToolUses20250919EditResponse)
    assert applied.cleared_tool_uses == 4
    freed = whole.usage.input_tokens - edited.usage.input_tokens
    assert applied.cleared_input_tokens == freed > 4 * 1900
    assert whole.context_management is None


def test_below_the_trigger_nothing_is_cleared(api: FakeAnthropicServer) -> None:
    """Under the trigger (100,000 input tokens by default) applied_edits is empty."""
    api.enqueue(Reply.text("ok"))
    final = ask(api, history(6), False, context_management=clear())
    assert final.context_management is not None
    assert final.context_management.applied_edits == []


def test_a_tool_uses_trigger_and_excluded_tools(api: FakeAnthropicServer) -> None:
    """A tool_uses trigger counts the uses; excluded tools are never cleared; inputs are
    blanked when asked."""
    messages = history(3) + history(3, "Grep")[1:]
    api.enqueue(Reply.text("ok"), Reply.text("ok"))
    kept = ask(
        api, messages, False, context_management=clear(trigger={"type": "tool_uses", "value": 6})
    )
    assert kept.context_management is not None and kept.context_management.applied_edits == []
    final = ask(
        api,
        messages,
        False,
        context_management=clear(
            trigger={"type": "tool_uses", "value": 5},
            keep={"type": "tool_uses", "value": 1},
            exclude_tools=["Read"],
            clear_tool_inputs=True,
        ),
    )
    assert final.context_management is not None
    (applied,) = final.context_management.applied_edits
    assert applied.cleared_tool_uses == 2  # the first two Grep calls, not the Reads


def test_clear_at_least_holds_back_a_small_clearing(api: FakeAnthropicServer) -> None:
    """When clearing would free fewer tokens than clear_at_least, nothing is cleared."""
    api.enqueue(Reply.text("ok"))
    final = ask(
        api,
        history(4, content="short"),
        False,
        context_management=clear(
            trigger={"type": "tool_uses", "value": 1},
            clear_at_least={"type": "input_tokens", "value": 10_000},
        ),
    )
    assert final.context_management is not None
    assert final.context_management.applied_edits == []


def test_a_cleared_tool_reference_unloads_its_tool(api: FakeAnthropicServer) -> None:
    """A ToolSearch result that is cleared no longer loads its tool: calling it is a script
    error; excluding ToolSearch keeps it loaded."""
    found = [{"type": "tool_reference", "tool_name": "Weather"}]
    messages = history(1, "ToolSearch", found)[:3] + history(3)[1:]
    fields = {
        "trigger": {"type": "tool_uses", "value": 1},
        "keep": {"type": "tool_uses", "value": 1},
    }
    api.enqueue(Reply.tool_use("Weather", {}))
    ask(api, messages, False, context_management=clear(**fields, exclude_tools=["ToolSearch"]))
    api.enqueue(Reply.tool_use("Weather", {}))
    with pytest.raises(anthropic.InternalServerError):
        ask(api, messages, False, context_management=clear(**fields))
    assert "Weather" in api.take_errors()[0]


def test_cleared_results_are_what_the_model_reads(api: FakeAnthropicServer) -> None:
    """The server clears what the model reads, not the request it recorded: the client keeps
    sending its whole history, the model is told what was cleared."""
    assert CLEARED_RESULT.startswith("[")
    api.enqueue(Reply.text("ok"))
    config = clear(
        trigger={"type": "tool_uses", "value": 1}, keep={"type": "tool_uses", "value": 0}
    )
    final = ask(api, history(2), False, context_management=config)
    assert final.context_management is not None
    (applied,) = final.context_management.applied_edits
    assert applied.cleared_tool_uses == 2
    assert read_results(api) == [BIG, BIG]  # the client's history is whole


ERRORS = [
    (
        {"edits": [{"type": "clear_tool_uses_20250919", "keep": None}]},
        "keep: Input should be a valid dictionary",
    ),
    (clear(keep={"type": "input_tokens", "value": 3}), "keep.type: Input should be 'tool_uses'"),
    (
        clear(trigger={"type": "turns", "value": 3}),
        "trigger.type: Input should be 'input_tokens' or 'tool_uses'",
    ),
    (
        clear(trigger={"type": "tool_uses", "value": 0}),
        "trigger.value: Input should be greater than or equal to 1",
    ),
    (
        clear(clear_at_least={"type": "tool_uses", "value": 3}),
        "clear_at_least.type: Input should be 'input_tokens'",
    ),
    (clear(exclude_tools="Read"), "exclude_tools: Input should be a valid list of strings"),
    (
        clear(clear_tool_inputs="yes"),
        "clear_tool_inputs: Input should be a valid boolean or a list",
    ),
    (clear(keep_all=True), "clear_tool_uses_20250919.keep_all: Extra inputs are not permitted"),
    (
        {"edits": [{"type": "clear_tool_uses_20250919"}] * 2},
        "only one clear_tool_uses_20250919 edit",
    ),
]


@pytest.mark.parametrize(("config", "message"), ERRORS)
def test_malformed_clear_edits_are_refused(
    api: FakeAnthropicServer, config: Any, message: str
) -> None:
    """Each malformed clear edit is answered 400 with the path of what is wrong."""
    assert message in refused(api, config)


def test_an_endpoint_without_context_editing_refuses_it() -> None:
    """With supports_context_editing=False the beta is ignored and the edit refused."""
    with FakeAnthropicServer(supports_context_editing=False) as server:
        assert "context_management: Extra inputs are not permitted" in refused(server, clear())
