"""Tool faults: tools that raise, hang, flood, return bad bytes or values that JSON cannot hold.

What the model is told is read from the request that carried it to the fake API: a bounded,
clear result or error. The next run works, which means the fake API accepted the history.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import anthropic
import pytest

from nbagent.core.errors import ToolError
from nbagent.core.events import RunFinished, ToolCallFinished
from nbagent.core.tool import Tool, ToolResult
from nbagent.loop.agent import INTERRUPTED_TEXT
from nbagent.loop.execution import INTERRUPTED_MESSAGE, MAX_RESULT_CHARS
from nbagent.testing import FakeAnthropicServer, Reply
from tests.kernels import execute, kernel
from tests.reliability.helpers import (
    agent_for,
    assert_next_run_works,
    bodies,
    results_told,
    tool_results,
)

FIFTY_MB = 50 * 2**20


def told(api: FakeAnthropicServer) -> dict[str, Any]:
    """The tool_result the model received last."""
    return results_told(api)[-1]


def call_once(api: FakeAnthropicServer, tool: Tool, **kwargs: Any) -> dict[str, Any]:
    """Let the model call ``tool`` once, then answer; return what the model was told."""
    api.enqueue(Reply.tool_use(tool.name), Reply.text("Noted."))
    agent = agent_for(api, tool, **kwargs)
    assert agent.run("Call it.").text == "Noted."
    result = told(api)
    assert_next_run_works(api, agent)
    return result


def returning(name: str, value: Any) -> Tool:
    """A read-only tool that returns ``value``."""
    return Tool(name=name, handler=lambda: value, read_only=True)


# Raising -------------------------------------------------------------------------------


def test_an_exception_is_reported_with_its_type_and_logged_with_its_traceback(
    fake_api: FakeAnthropicServer, caplog: pytest.LogCaptureFixture
) -> None:
    def crash() -> str:
        return {}["missing"]

    result = call_once(fake_api, Tool(name="Crash", handler=crash))
    assert result == {
        "type": "tool_result",
        "tool_use_id": result["tool_use_id"],
        "content": "Tool Crash failed: KeyError: 'missing'",
        "is_error": True,
    }
    [record] = [r for r in caplog.records if r.name == "nbagent"]
    assert record.getMessage() == "Tool Crash failed"
    assert record.exc_text.startswith("Traceback") and "KeyError: 'missing'" in record.exc_text


def test_a_tool_error_is_reported_as_its_message_alone(fake_api: FakeAnthropicServer) -> None:
    def refuse() -> str:
        raise ToolError("The file is locked; try again later.")

    result = call_once(fake_api, Tool(name="Refuse", handler=refuse))
    assert (result["content"], result["is_error"]) == ("The file is locked; try again later.", True)


def test_a_keyboard_interrupt_inside_a_tool_ends_the_run_cleanly(
    fake_api: FakeAnthropicServer,
) -> None:
    def interrupt() -> str:
        raise KeyboardInterrupt

    fake_api.enqueue(Reply.tool_use("Stop"))
    agent = agent_for(fake_api, Tool(name="Stop", handler=interrupt))
    events = list(agent.events("go"))
    last = events[-1]
    assert isinstance(last, RunFinished)
    assert (last.stop_reason, last.text) == ("interrupted", INTERRUPTED_TEXT)
    # Its card ends as interrupted (before the fix it was left running, and the call was
    # missing from AgentResult.tool_calls).
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (finished.name, finished.status, finished.content) == (
        "Stop",
        "interrupted",
        INTERRUPTED_MESSAGE,
    )
    [result] = tool_results(agent.messages[-1])
    assert (result["content"], result["is_error"]) == (INTERRUPTED_MESSAGE, True)
    assert_next_run_works(fake_api, agent)


# Hanging -------------------------------------------------------------------------------


def hanging(name: str, release: threading.Event, ran: list[str] | None = None) -> Tool:
    """A concurrency-safe tool that waits for ``release`` (10 s at most)."""

    def wait() -> str:
        if ran is not None:
            ran.append(name)
        release.wait(10)
        return "finally done"

    return Tool(name=name, handler=wait, read_only=True, concurrency_safe=True)


def test_a_hung_tool_is_abandoned_after_the_timeout(fake_api: FakeAnthropicServer) -> None:
    release = threading.Event()
    fake_api.enqueue(Reply.tool_use("Hang"), Reply.text("It hung."))
    agent = agent_for(fake_api, hanging("Hang", release))
    agent.runner.call_timeout = 0.5
    started = time.monotonic()
    result = agent.run("go")
    elapsed = time.monotonic() - started
    release.set()
    assert result.text == "It hung." and 0.5 <= elapsed < 2.0
    assert told(fake_api) == {
        "type": "tool_result",
        "tool_use_id": told(fake_api)["tool_use_id"],
        "content": "The tool did not finish within 0.5 s and was abandoned; try a smaller "
        "task or other input.",
        "is_error": True,
    }
    history = json.dumps(agent.messages)
    time.sleep(0.1)  # the abandoned call ends now: it must change nothing
    assert json.dumps(agent.messages) == history
    assert_next_run_works(fake_api, agent)


def test_hung_tools_do_not_starve_later_calls(fake_api: FakeAnthropicServer) -> None:
    """Abandoned calls keep their threads; later calls get fresh workers (before the fix, a
    pool full of hung calls timed out every later call)."""
    release = threading.Event()
    fake_api.enqueue(
        Reply.tool_uses(("Hang1", {}), ("Hang2", {})),
        Reply.tool_use("echo", {"text": "still here"}),
        Reply.text("ok"),
    )
    agent = agent_for(fake_api, hanging("Hang1", release), hanging("Hang2", release))
    agent.runner.call_timeout, agent.runner.max_workers = 0.3, 2
    try:
        result = agent.run("go")
    finally:
        release.set()
    outcomes = [(c.name, c.status) for c in result.tool_calls]
    assert sorted(outcomes[:2]) == [("Hang1", "error"), ("Hang2", "error")]
    assert outcomes[2] == ("echo", "ok")
    assert told(fake_api)["content"] == "still here"
    assert_next_run_works(fake_api, agent)


def test_a_call_reported_abandoned_never_starts_later(fake_api: FakeAnthropicServer) -> None:
    """A call still queued behind a hung one when the time is up is cancelled, not run after
    the model was told it was abandoned."""
    release = threading.Event()
    ran: list[str] = []
    fake_api.enqueue(Reply.tool_uses(("Hang", {}), ("Queued", {})), Reply.text("ok"))
    agent = agent_for(fake_api, hanging("Hang", release, ran), hanging("Queued", release, ran))
    agent.runner.call_timeout, agent.runner.max_workers = 0.3, 1
    result = agent.run("go")
    release.set()
    time.sleep(0.2)
    assert [c.status for c in result.tool_calls] == ["error", "error"]
    assert ran == ["Hang"]
    assert_next_run_works(fake_api, agent)


# Flooding ------------------------------------------------------------------------------

CUT_NOTE = f"\n\n(output cut: {FIFTY_MB:,} characters, the first {MAX_RESULT_CHARS:,} shown)"


@pytest.mark.parametrize(
    ("value", "note"),
    [
        ("x" * FIFTY_MB, CUT_NOTE),
        (
            b"y" * FIFTY_MB,
            f"\n\n(output cut: {FIFTY_MB + 59:,} characters, the first {MAX_RESULT_CHARS:,} shown)",
        ),
        (
            {"rows": "z" * FIFTY_MB},
            f"\n\n(output cut: {FIFTY_MB + 12:,} characters, the first {MAX_RESULT_CHARS:,} shown)",
        ),
    ],
    ids=["str", "bytes", "json"],
)
def test_fifty_megabytes_reach_the_model_as_a_bounded_cut(
    fake_api: FakeAnthropicServer, value: Any, note: str
) -> None:
    result = call_once(fake_api, returning("Flood", value))
    content = result["content"]
    assert isinstance(content, str) and content.endswith(note)
    assert len(content) == MAX_RESULT_CHARS + len(note)
    assert len(json.dumps(bodies(fake_api)[1])) < MAX_RESULT_CHARS + 5_000


def test_fifty_megabytes_of_text_blocks_share_one_budget(fake_api: FakeAnthropicServer) -> None:
    """Each block under the limit, 50 MB in all: cut as a whole (before the fix every block was
    capped alone and the 50 MB went to the API)."""
    blocks = [{"type": "text", "text": "w" * 2**20} for _ in range(50)]
    result = call_once(fake_api, returning("Blocks", blocks))
    content = result["content"]
    assert [b["type"] for b in content] == ["text", "text"]
    assert content[0]["text"] == "w" * MAX_RESULT_CHARS
    assert content[1]["text"] == (
        f"(output cut: {FIFTY_MB:,} characters of text, the first {MAX_RESULT_CHARS:,} shown)"
    )


def test_the_result_limit_is_the_runners(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.tool_use("Flood"), Reply.text("ok"))
    agent = agent_for(fake_api, returning("Flood", "v" * 5000))
    agent.runner.max_result_chars = 1000
    agent.run("go")
    assert told(fake_api)["content"] == (
        "v" * 1000 + "\n\n(output cut: 5,000 characters, the first 1,000 shown)"
    )


# Bad bytes and bad values --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "content"),
    [
        (
            b"caf\xe9 \xff\xfe ok",
            "(binary output shown as UTF-8, undecodable bytes replaced)\ncaf\ufffd \ufffd\ufffd ok",
        ),
        (b"caf\xe9 \xff ok".decode("utf-8", "surrogateescape"), "caf\ufffd \ufffd ok"),
        (
            [{"type": "text", "text": "name: \udce9t\udce9"}],
            [{"type": "text", "text": "name: \ufffdt\ufffd"}],
        ),
        ({"path": "\ud800"}, '{"path": "\ufffd"}'),
    ],
    ids=["bytes", "surrogateescape str", "surrogates in a block", "lone surrogate in JSON"],
)
def test_non_utf8_output_reaches_the_model_with_replacement_characters(
    fake_api: FakeAnthropicServer, value: Any, content: Any
) -> None:
    """Before the fix a string with lone surrogates could not be encoded: that request and
    every later one failed."""
    result = call_once(fake_api, returning("Bytes", value))
    assert result["content"] == content and "is_error" not in result


class Node:
    """An object JSON cannot hold."""


def circular() -> dict[str, Any]:
    """A dict that contains itself."""
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            Node(),
            "The tool returned a Node, which cannot be sent to the model: Object of type "
            "Node is not JSON serializable",
        ),
        (
            {1, 2},
            "The tool returned a set, which cannot be sent to the model: Object of type set "
            "is not JSON serializable",
        ),
        (
            circular(),
            "The tool returned a dict, which cannot be sent to the model: Circular reference "
            "detected",
        ),
        (
            10**5000,
            "The tool returned a int, which cannot be sent to the model: Exceeds the limit "
            "(4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to "
            "increase the limit",
        ),
        (
            [{"type": "text", "text": "ok"}, {"type": "image", "source": Node()}],
            "The tool returned content that cannot be sent to the model: Object of type Node "
            "is not JSON serializable",
        ),
        (
            ToolResult(content=[{"type": "table", "rows": []}]),
            "The tool returned a content block (0) of type 'table'; a result may hold only "
            "document, image, search_result, text, tool_reference blocks.",
        ),
        (
            ToolResult(content=42),  # type: ignore[arg-type]
            "The tool returned content of type int; a result is text or a list of content blocks.",
        ),
    ],
    ids=["object", "set", "circular", "huge int", "object in a block", "unknown block", "int"],
)
def test_a_value_json_cannot_hold_is_a_clear_error(
    fake_api: FakeAnthropicServer, value: Any, message: str
) -> None:
    """The last three went into the history before the fix: a TypeError escaped the run, or
    the API refused every later request."""
    result = call_once(fake_api, returning("Odd", value))
    assert (result["content"], result["is_error"]) == (message, True)


def test_records_with_a_type_key_are_data_not_content_blocks(
    fake_api: FakeAnthropicServer,
) -> None:
    """Rows such as ``{"type": "cat"}`` are sent as JSON text (before the fix they were sent as
    content blocks, which the API refuses)."""
    rows = [{"type": "cat", "name": "Tom"}, {"type": "mouse", "name": "Jerry"}]
    result = call_once(fake_api, returning("Rows", rows))
    assert result["content"] == json.dumps(rows)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            [{"type": "table", "rows": []}],
            "messages.2.content.0.content.0: Input tag 'table' found using 'type' does not "
            "match any of the expected tags: 'text', 'image', 'search_result', 'document', "
            "'tool_reference'",
        ),
        (
            [{"type": "text", "text": 42}],
            "messages.2.content.0.content.0.text: Input should be a valid string",
        ),
        (
            [{"type": "text", "text": "  "}],
            "messages.2.content.0.content.0: text content blocks must contain non-whitespace text",
        ),
    ],
    ids=["unknown block", "text not a string", "blank text"],
)
def test_the_fake_api_refuses_tool_results_the_api_refuses(
    fake_api: FakeAnthropicServer, content: list[dict[str, Any]], message: str
) -> None:
    """So that the history checks of this suite would catch such a result."""
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Odd", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": content}],
        },
    ]
    with pytest.raises(anthropic.BadRequestError) as refused:
        fake_api.client().messages.create(
            model="claude-sonnet-5-5",
            max_tokens=10,
            messages=messages,
            tools=[{"name": "Odd", "input_schema": {"type": "object"}}],
        )
    assert refused.value.body["error"]["message"] == message  # type: ignore[index]


# In a real kernel ----------------------------------------------------------------------

SETUP = """\
import threading, nbagent
from nbagent.core.tool import Tool
release = threading.Event()
nbagent.registry.register(
    Tool(name="Hang", description="Waits.", handler=lambda: release.wait(30) and "late"),
    replace=True,
)
def spin():
    print("spinning", flush=True)
    while True:
        pass
nbagent.registry.register(
    Tool(name="Spin", description="Loops.", handler=spin, main_thread=True), replace=True
)
get_ipython().run_line_magic("config", "NbAgent.call_timeout = 0.5")
"""


@pytest.mark.slow
def test_in_a_kernel_a_hung_tool_times_out_and_the_kernel_answers_at_once(
    fake_api: FakeAnthropicServer,
) -> None:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with kernel(env) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        assert execute(client, SETUP).status == "ok"
        assert execute(client, "%agent allow Hang").status == "ok"
        fake_api.enqueue(Reply.tool_use("Hang"), Reply.text("The tool hung."))
        started = time.monotonic()
        hung = execute(client, "%%agent\nRun Hang.")
        assert hung.status == "ok" and "The tool hung." in hung.text
        assert time.monotonic() - started < 10, "not the 30 s the tool would hang"
        assert told(fake_api)["content"].startswith("The tool did not finish within 0.5 s")
        started = time.monotonic()
        assert execute(client, "1+1").text == "2"
        assert time.monotonic() - started < 1.0
        assert execute(client, "release.set()").status == "ok"
        fake_api.enqueue(Reply.text("Still fine."))
        assert "Still fine." in execute(client, "%%agent\nAnd now?").text
        assert manager.is_alive()
    fake_api.assert_no_errors()


@pytest.mark.slow
def test_in_a_kernel_an_interrupt_stops_a_tool_that_never_returns(
    fake_api: FakeAnthropicServer,
) -> None:
    """A main-thread tool has no time limit; Ctrl-C (a kernel interrupt) ends it and the run."""
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with kernel(env) as (manager, client):
        assert execute(client, "%load_ext nbagent").status == "ok"
        assert execute(client, SETUP).status == "ok"
        assert execute(client, "%agent allow Spin").status == "ok"
        fake_api.enqueue(Reply.tool_use("Spin"))

        def interrupt_once_spinning(content: dict[str, Any]) -> None:
            if content.get("text") == "spinning\n":
                time.sleep(0.3)
                manager.interrupt_kernel()

        spun = execute(client, "%%agent -o result\nRun Spin.", on_output=interrupt_once_spinning)
        assert spun.status == "ok"
        check = execute(client, "print(result.stop_reason, result.tool_calls[0].status)")
        assert check.text.strip() == "interrupted interrupted"
        fake_api.enqueue(Reply.text("Resumed."))
        assert "Resumed." in execute(client, "%%agent\nGo on.").text
        assert "Interrupted by the user" in json.dumps(bodies(fake_api)[-1]["messages"])
        assert manager.is_alive()
    fake_api.assert_no_errors()
