"""API faults: the real anthropic SDK against FakeAnthropicServer's scripted failures.

Every fault is either retried (by the SDK, or by the agent sending the turn again) or reported
as a ModelAPIError with a one-line message. Either way the history stays valid: the next run
succeeds, and the fake API checks the whole history on that request.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from nbagent.api.anthropic import StreamDropped
from nbagent.core.errors import ModelAPIError
from nbagent.core.events import Notice, RunFinished, ToolCallFinished
from nbagent.core.tool import Tool
from nbagent.testing import FakeAnthropicServer, Fault, Reply, ScriptItem
from tests.kernels import execute, kernel
from tests.reliability.helpers import (
    agent_for,
    assert_next_run_works,
    bodies,
    statuses,
    tool_results,
)

TOOL_CALL = Reply.tool_use("echo", {"text": "the whole input"})


@dataclass(frozen=True)
class Retried:
    """A fault that a retry gets past: the run ends normally."""

    script: tuple[ScriptItem, ...]
    """What the API answers, in order (the last item is the answer that gets through)."""
    statuses: tuple[int, ...]
    """The status of each request."""
    notice: str = ""
    """What the agent said when it sent the turn again (once), if it did."""
    client: dict[str, Any] = field(default_factory=dict)
    """Options of the SDK client (``max_retries``, ``timeout``)."""


RETRIED = {
    "429 retry-after": Retried(
        (Fault.rate_limit(retry_after=0.3), Reply.text("ok")), (429, 200), client={"max_retries": 2}
    ),
    "529 overloaded": Retried(
        (Fault.overloaded(retry_after=0.01), Reply.text("ok")),
        (529, 200),
        client={"max_retries": 2},
    ),
    "500 api_error": Retried(
        (
            Fault.server_error(retry_after=0.01),
            Fault.server_error(retry_after=0.01),
            Reply.text("ok"),
        ),
        (500, 500, 200),
        client={"max_retries": 2},
    ),
    "timeout": Retried(
        (Reply.text("too late", delay=3.0), Reply.text("ok")),
        (200, 200),
        notice="The model's API did not answer in time: timed out. Sending the turn again.",
        client={"timeout": 0.3},
    ),
    "stream cut mid-tool_use": Retried(
        (Fault.drop_stream(TOOL_CALL), Reply.text("ok")),
        (200, 200),
        notice="The connection to the model's API broke: peer closed connection without "
        "sending complete message body (incomplete chunked read). Sending the turn again.",
    ),
    "error event mid-stream": Retried(
        (Fault.stream_error(Reply.text("I was saying something long")), Reply.text("ok")),
        (200, 200),
        notice="The model's API failed mid-answer (overloaded_error): Overloaded. Sending the "
        "turn again.",
    ),
    "invalid JSON": Retried(
        (Fault.malformed_json(), Reply.text("ok")),
        (200, 200),
        notice="The model's answer could not be read: Unterminated string starting at: line 1 "
        "column 8 (char 7). Sending the turn again.",
    ),
}


@pytest.mark.parametrize("case", RETRIED.values(), ids=RETRIED.keys())
def test_a_passing_fault_is_retried_and_leaves_one_clean_turn(
    fake_api: FakeAnthropicServer, case: Retried
) -> None:
    fake_api.enqueue(*case.script)
    agent = agent_for(fake_api, client_options=case.client)
    events = list(agent.events("go"))
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.stop_reason, finished.text) == ("end_turn", "ok")
    assert tuple(statuses(fake_api)) == case.statuses
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices == ([case.notice] if case.notice else [])
    sent = bodies(fake_api)
    assert all(body == sent[0] for body in sent), "a retry sends the very same request"
    assert agent.messages == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]
    assert_next_run_works(fake_api, agent)


def test_retry_after_is_honoured(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Fault.rate_limit(retry_after=0.6), Reply.text("ok"))
    agent = agent_for(fake_api, client_options={"max_retries": 1})
    started = time.monotonic()
    assert agent.run("go").text == "ok"
    assert 0.6 <= time.monotonic() - started < 3
    retry = [r for r in fake_api.requests if r.path == "/v1/messages"][1]
    assert retry.headers["x-stainless-retry-count"] == "1"


def test_a_stream_cut_mid_tool_use_never_runs_the_partial_call(
    fake_api: FakeAnthropicServer,
) -> None:
    seen: list[dict[str, Any]] = []

    def record(**tool_input: Any) -> str:
        seen.append(tool_input)
        return "recorded"

    recorder = Tool(
        name="Record",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=record,
    )
    whole = Reply.tool_use("Record", {"text": "a rather long input, cut in its middle"})
    fake_api.enqueue(Fault.drop_stream(whole), whole, Reply.text("done"))
    agent = agent_for(fake_api, recorder)
    result = agent.run("go")
    assert result.text == "done"
    assert seen == [{"text": "a rather long input, cut in its middle"}]
    uses = [b for m in agent.messages for b in m["content"] if b["type"] == "tool_use"]
    assert len(uses) == 1
    assert tool_results(agent.messages[2])[0]["content"] == "recorded"
    assert_next_run_works(fake_api, agent)


@dataclass(frozen=True)
class Reported:
    """A fault that no retry gets past: the run raises ModelAPIError."""

    script: tuple[ScriptItem, ...]
    """What the API answers, in order."""
    error: type[ModelAPIError]
    """The exception raised."""
    status: int | None
    """Its status."""
    message: str
    """Its message (whole)."""
    client: dict[str, Any] = field(default_factory=dict)
    """Options of the SDK client."""


REPORTED = {
    "400": Reported(
        (Fault.http(400, message="messages.1.content: bad block;\n  see the docs"),),
        ModelAPIError,
        400,
        "The model's API answered 400 (invalid_request_error): messages.1.content: bad "
        "block; see the docs",
        client={"max_retries": 3},
    ),
    "429 after the SDK's retries": Reported(
        (Fault.rate_limit(retry_after=0.01),) * 2,
        ModelAPIError,
        429,
        "The model's API answered 429 (rate_limit_error): Number of requests has exceeded "
        "your rate limit",
        client={"max_retries": 1},
    ),
    "529 after the SDK's retries": Reported(
        (Fault.overloaded(retry_after=0.01),) * 2,
        ModelAPIError,
        529,
        "The model's API answered 529 (overloaded_error): Overloaded",
        client={"max_retries": 1},
    ),
    "timeout after the agent's retries": Reported(
        (Reply.text("too late", delay=3.0),) * 3,
        StreamDropped,
        None,
        "The model's API did not answer in time: timed out",
        client={"timeout": 0.2},
    ),
    "stream cut every time": Reported(
        (Fault.drop_stream(TOOL_CALL),) * 3,
        StreamDropped,
        None,
        "The connection to the model's API broke: peer closed connection without sending "
        "complete message body (incomplete chunked read)",
    ),
    "invalid JSON every time": Reported(
        (Fault.malformed_json(),) * 3,
        StreamDropped,
        None,
        "The model's answer could not be read: Unterminated string starting at: line 1 "
        "column 8 (char 7)",
    ),
    "error event of a refused request": Reported(
        (
            Fault.stream_error(
                Reply.text("Half an answer"),
                error_type="invalid_request_error",
                message="prompt is too long",
            ),
        ),
        ModelAPIError,
        400,
        "The model's API failed mid-answer (invalid_request_error): prompt is too long",
    ),
    "overloaded error event every time": Reported(
        (Fault.stream_error(Reply.text("Half an answer")),) * 3,
        StreamDropped,
        None,
        "The model's API failed mid-answer (overloaded_error): Overloaded",
    ),
}


@pytest.mark.parametrize("turn", [1, 2], ids=["first turn", "after a tool call"])
@pytest.mark.parametrize("case", REPORTED.values(), ids=REPORTED.keys())
def test_a_lasting_fault_is_one_clear_error_and_the_history_stays_valid(
    fake_api: FakeAnthropicServer, case: Reported, turn: int
) -> None:
    fake_api.enqueue(Reply.text("An earlier answer."))
    agent = agent_for(fake_api, client_options=case.client)
    agent.run("earlier")
    before = [dict(m) for m in agent.messages]
    fake_api.enqueue(*([TOOL_CALL] if turn == 2 else []), *case.script)
    with pytest.raises(ModelAPIError) as caught:
        agent.run("go")
    error = caught.value
    assert type(error) is case.error and error.status == case.status
    assert str(error) == case.message
    assert len(statuses(fake_api)) == 1 + (turn - 1) + len(case.script)
    if turn == 1:
        assert agent.messages == before, "a failed first turn leaves no trace"
    else:
        # The call ran and its result is kept, so the history ends with the user's turn.
        assert [m["role"] for m in agent.messages[len(before) :]] == ["user", "assistant", "user"]
        assert tool_results(agent.messages[-1])[0]["content"] == "the whole input"
    assert_next_run_works(fake_api, agent)


def test_a_request_that_cannot_be_encoded_is_cleaned_not_retried(
    fake_api: FakeAnthropicServer,
) -> None:
    """A prompt holding a lone surrogate (a file name read with surrogateescape) is sent with
    U+FFFD in its place; before the fix no request could be sent, and the agent retried."""
    fake_api.enqueue(Reply.text("Read it."))
    agent = agent_for(fake_api)
    name = b"caf\xe9.csv".decode("utf-8", "surrogateescape")
    assert agent.run(f"Open {name}").text == "Read it."
    assert statuses(fake_api) == [200]
    assert bodies(fake_api)[0]["messages"][0]["content"][0]["text"] == "Open caf\ufffd.csv"
    assert_next_run_works(fake_api, agent)


def test_tool_calls_survive_a_retried_turn(fake_api: FakeAnthropicServer) -> None:
    """A fault in the turn after a tool call is retried; the tool does not run again."""
    calls: list[str] = []
    counted = Tool(name="Count", handler=lambda: calls.append("x") or "counted", read_only=True)
    fake_api.enqueue(
        Reply.tool_use("Count"),
        Fault.drop_stream(Reply.text("cut short")),
        Fault.malformed_json(),
        Reply.text("done"),
    )
    agent = agent_for(fake_api, counted)
    events = list(agent.events("go"))
    assert calls == ["x"]
    assert [e.status for e in events if isinstance(e, ToolCallFinished)] == ["ok"]
    last = events[-1]
    assert isinstance(last, RunFinished) and (last.stop_reason, last.text) == ("end_turn", "done")
    assert_next_run_works(fake_api, agent)


@pytest.mark.slow
def test_a_400_in_a_kernel_is_a_one_line_usage_error_and_the_next_cell_works(
    fake_api: FakeAnthropicServer,
) -> None:
    fake_api.enqueue(Fault.http(400, message="messages: something\nthe API disliked"))
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with kernel(env) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        failed = execute(client, "%%agent\nHello?")
        assert failed.status == "error"
        assert failed.error["ename"] == "UsageError"
        assert failed.error["evalue"] == (
            "The model's API answered 400 (invalid_request_error): messages: something the "
            "API disliked"
        )
        [shown] = [o["text"] for o in failed.outputs if o.get("name") == "stderr"]
        assert shown == f"UsageError: {failed.error['evalue']}\n", "one line, no traceback"
        fake_api.enqueue(Reply.text("Hello from the next cell."))
        again = execute(client, "%%agent -o result\nHello again?")
        assert again.status == "ok" and "Hello from the next cell." in again.text
        check = execute(client, "print([m['role'] for m in result.messages])")
        assert check.text.strip() == "['user', 'assistant']"
        assert manager.is_alive()
    assert len(bodies(fake_api)) == 2
