"""FakeAnthropicServer checks thinking and output_config as the API does, streams signed
thinking blocks the SDK reads, and refuses a block it did not sign."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from anthropic.types import ThinkingBlock

from nbagent.testing import FakeAnthropicServer, Reply, Text, Thinking


@pytest.fixture
def api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


def ask(api: FakeAnthropicServer, stream: bool = True, **fields: Any) -> Any:
    request: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Hi."}],
        **fields,
    }
    client = api.client()
    if stream:
        with client.messages.stream(**request) as events:
            return events.get_final_message()
    return client.messages.create(**request)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_signed_thinking_block_is_streamed_and_accepted_back(
    api: FakeAnthropicServer, stream: bool
) -> None:
    api.enqueue(Reply.of(Thinking("Greet back."), Text("Hello.")), Reply.text("Again."))
    final = ask(api, stream, thinking={"type": "adaptive"}, output_config={"effort": "low"})
    block = final.content[0]
    assert isinstance(block, ThinkingBlock) and block.thinking == "Greet back."
    assert block.signature
    history = [
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in final.content]},
        {"role": "user", "content": "Again?"},
    ]
    assert ask(api, stream, messages=history).content[0].text == "Again."
    changed = [{**history[1]["content"][0], "thinking": "Something else."}]
    history[1] = {"role": "assistant", "content": changed}
    with pytest.raises(anthropic.BadRequestError, match="Invalid `signature` in `thinking`"):
        ask(api, stream, messages=history)
    api.assert_no_errors()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"thinking": {"type": "sometimes"}}, "does not match any of the expected tags"),
        ({"thinking": {"type": "adaptive", "budget_tokens": 2000}}, "Extra inputs"),
        ({"thinking": {"type": "enabled", "budget_tokens": 100}}, "Input should be >= 1024"),
        ({"thinking": {"type": "enabled", "budget_tokens": 5000}}, "must be greater than"),
        ({"thinking": {"type": "adaptive", "display": "loud"}}, "'summarized' or 'omitted'"),
        ({"output_config": {"effort": "extreme"}}, "output_config.effort: Input should be"),
        ({"output_config": {"speed": "fast"}}, "output_config.speed: Extra inputs"),
    ],
)
def test_malformed_configurations_are_refused(
    api: FakeAnthropicServer, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError, match=message):
        ask(api, False, **fields)


def test_thinking_is_scripted_only_for_a_request_that_turns_it_on(
    api: FakeAnthropicServer,
) -> None:
    api.enqueue(Reply.of(Thinking("Hmm."), Text("Hi.")))
    with pytest.raises(anthropic.InternalServerError):
        ask(api, False)
    assert "a Thinking part must come first" in api.take_errors()[0]
