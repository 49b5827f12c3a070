"""Servers that misbehave: exit at start, hang, bad schema, flood, crash, die mid-call."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import time
from collections.abc import Callable

import pytest

from nbagent.catalogue.registry import RegistryChange, ToolRegistry
from nbagent.core.errors import ToolError
from nbagent.mcp import McpManager, RestartPolicy
from tests.mcp.conftest import READY
from tests.mcp.servers import alive, fixture, http_server, wait_until

pytestmark = pytest.mark.slow

Make = Callable[..., McpManager]


def test_a_server_that_exits_at_start_is_reported_with_its_stderr(make_manager: Make) -> None:
    manager = make_manager()
    manager.add("exits", fixture("exits_at_start.py"))
    manager.add("missing", {"command": "no-such-mcp-server-command"})
    assert manager.wait_ready(READY)
    exits, missing = manager.status()
    assert (exits.state, exits.tool_count, exits.restarts, exits.pid) == ("failed", 0, 0, None)
    assert exits.last_error == "exited with code 2; stderr: fatal: EXAMPLE_API_KEY is not set"
    assert missing.state == "failed"
    assert missing.last_error == "cannot start 'no-such-mcp-server-command': command not found"
    with pytest.raises(ToolError, match="'exits' is not connected .failed: exited with code 2"):
        manager.read_resource("exits", "note://x")


def test_a_server_that_never_answers_times_out(make_manager: Make) -> None:
    with http_server("hangs.py") as hung:
        manager = make_manager(connect_timeout=3)
        started = time.perf_counter()
        manager.start({"mcpServers": {"stdio": fixture("hangs.py"), "web": {"url": hung.url}}})
        assert time.perf_counter() - started < 0.1
        assert wait_until(lambda: manager.status()[0].pid is not None, 10)
        pid = manager.status()[0].pid
        assert manager.wait_ready(READY)
        stdio, web = manager.status()
    assert stdio.state == web.state == "failed"
    timeout = "did not get through start-up (handshake and tool listing) within 3 s"
    assert stdio.last_error == f"{timeout}; stderr: hanging server started"
    assert web.last_error == timeout
    assert pid is not None and wait_until(lambda: not alive(pid), 10)


def test_an_unreachable_address_is_reported(make_manager: Make) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    manager = make_manager()
    manager.add("gone", {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"})
    assert manager.wait_ready(READY)
    [status] = manager.status()
    assert status.state == "failed"
    assert status.last_error.startswith(f"cannot reach http://127.0.0.1:{port}/mcp: ")


def test_an_invalid_keyword_in_a_tool_schema_is_left_out_and_the_tool_loads(
    make_manager: Make,
) -> None:
    registry = ToolRegistry()
    manager = make_manager(registry)
    manager.add("shaky", fixture("malformed.py"))
    assert manager.wait_ready(READY)
    [status] = manager.status()
    assert status.state == "connected" and status.skipped == ()
    assert [t.name for t in manager.tools("shaky")] == [
        "mcp__shaky__good_one",
        "mcp__shaky__broken",
        "mcp__shaky__good_two",
    ]
    assert registry.get("mcp__shaky__broken").input_schema == {
        "type": "object",
        "properties": {"x": {}},
    }
    [note] = status.adjusted
    assert note.startswith("broken: inputSchema properties/x/type: left out, not valid JSON Schema")
    assert registry.get("mcp__shaky__good_two").call({"text": "fine"}).content == "fine"


def test_a_server_without_an_sdk_listing_bad_tools_loads_the_others(
    make_manager: Make, caplog: pytest.LogCaptureFixture
) -> None:
    registry = ToolRegistry()
    manager = make_manager(registry)
    with caplog.at_level(logging.WARNING, logger="nbagent.mcp"):
        manager.add("raw", fixture("raw_jsonrpc.py"))
        assert manager.wait_ready(READY)
    [status] = manager.status()
    assert status.state == "connected", status.last_error
    loaded = {t.name.removeprefix("mcp__raw__"): t for t in manager.tools("raw")}
    assert list(loaded) == ["echo", "no_type", "empty", "read_pdf", "point", "bad_keyword"]
    assert [line.split(":")[0] for line in status.skipped] == [
        "array_root",
        "not_a_dict",
        "(a tool without a name)",
    ]
    assert (
        "array_root: the server lists it with inputSchema.type: Input should be 'object'"
        in (status.skipped[0])
    )
    assert "'raw': skipped tool array_root" in caplog.text
    assert loaded["empty"].input_schema == {"type": "object"}
    assert loaded["no_type"].input_schema["type"] == "object"
    assert loaded["read_pdf"].input_schema == {
        "$id": "http://example.com/read_pdf.json",
        "type": "object",
        "properties": {
            "page": {"type": "integer", "minimum": 1},
            "scale": {"type": "number", "exclusiveMinimum": 0},
            "mode": {"$ref": "#/$defs/Mode"},
            "path": {"type": "string"},
        },
        "required": ["path"],
        "$defs": {"Mode": {"type": "string", "enum": ["text", "layout"]}},
    }
    assert loaded["point"].input_schema["properties"]["xy"]["prefixItems"] == [
        {"type": "number"},
        {"type": "number"},
    ]
    notes = "\n".join(status.adjusted)
    assert 'no_type: inputSchema (root): "type": "object" added' in notes
    assert "read_pdf: inputSchema properties/scale: exclusiveMinimum true became" in notes
    assert "bad_keyword: inputSchema properties/word/minLength: left out" in notes
    result = loaded["read_pdf"].call({"path": "a.pdf", "mode": "text"})
    assert json.loads(str(result.content)) == {
        "tool": "read_pdf",
        "arguments": {"path": "a.pdf", "mode": "text"},
    }
    with pytest.raises(ToolError, match="must be one of|is not one of"):
        loaded["read_pdf"].call({"path": "a.pdf", "mode": "poster"})


def test_a_server_that_floods_its_output_still_works(
    make_manager: Make, caplog: pytest.LogCaptureFixture
) -> None:
    registry = ToolRegistry()
    manager = make_manager(registry)
    with caplog.at_level(logging.WARNING, logger="nbagent.mcp"):
        manager.add("noisy", fixture("flood.py"))
        assert manager.wait_ready(READY)
        assert manager.status()[0].state == "connected"
        shout = registry.get("mcp__noisy__shout").call({"lines": 20_000})
    assert shout.content == "shouted 20000 lines"
    assert registry.get("mcp__noisy__echo").call({"text": "heard"}).content == "heard"
    warnings = [r for r in caplog.records if "not JSON-RPC" in r.getMessage()]
    assert len(warnings) == 1  # the first junk line is reported, the rest only counted


def test_a_crash_removes_the_tools_and_the_server_restarts(make_manager: Make) -> None:
    registry = ToolRegistry()
    changes: list[RegistryChange] = []
    registry.subscribe(changes.append)
    manager = make_manager(registry)
    manager.add("fragile", fixture("crashing.py"))
    assert manager.wait_ready(READY)
    first_pid = manager.status()[0].pid

    assert (
        registry.get("mcp__fragile__crash_soon").call({"delay": 0.3}).content == "crashing in 0.3 s"
    )
    assert wait_until(lambda: "mcp__fragile__pid" not in registry, 10)
    assert wait_until(lambda: manager.status()[0].state == "connected", READY)
    status = manager.status()[0]
    assert status.restarts == 1 and status.pid not in (None, first_pid)
    assert status.last_error.startswith("exited with code 3; stderr: crashing server")
    assert status.last_error.endswith("crashing on demand with code 3")
    assert registry.get("mcp__fragile__pid").call({}).content == str(status.pid)
    assert [(len(c.added), len(c.removed)) for c in changes] == [(3, 0), (0, 3), (3, 0)]


def test_a_server_that_dies_mid_call(make_manager: Make) -> None:
    registry = ToolRegistry()
    manager = make_manager(registry)
    manager.add("fragile", fixture("crashing.py"))
    assert manager.wait_ready(READY)
    with pytest.raises(ToolError) as caught:
        registry.get("mcp__fragile__die").call({"code": 4})
    assert str(caught.value).startswith(
        "MCP server 'fragile' disconnected during the call (exited with code 4; stderr: "
    )
    assert "dying mid-call with code 4" in str(caught.value)
    assert wait_until(lambda: manager.status()[0].state == "connected", READY)
    assert registry.get("mcp__fragile__pid").call({}).content == str(manager.status()[0].pid)


def test_a_killed_process_is_reported_by_signal(make_manager: Make) -> None:
    manager = make_manager()
    manager.add("victim", fixture("crashing.py"))
    assert manager.wait_ready(READY)
    os.kill(manager.status()[0].pid, signal.SIGKILL)
    assert wait_until(lambda: manager.status()[0].restarts == 1, 10)
    assert manager.status()[0].last_error.startswith("was killed by signal 9")


def test_restarts_are_bounded(make_manager: Make) -> None:
    registry = ToolRegistry()
    policy = RestartPolicy(max_restarts=2, initial_delay=0.1, max_delay=0.2)
    with http_server("basic.py") as web:
        manager = make_manager(registry, restart=policy)
        manager.add("remote", {"type": "http", "url": web.url})
        assert manager.wait_ready(READY) and len(manager.tools("remote")) == 8
        web.kill()
        assert wait_until(lambda: not manager.tools("remote"), 30)
        assert not [name for name in registry.names() if name.startswith("mcp__remote__")]
        assert wait_until(lambda: manager.status()[0].state == "failed", 30)
    status = manager.status()[0]
    assert status.restarts == 2
    assert status.last_error.startswith(f"cannot reach {web.url}: ")
    assert status.last_error.endswith("(gave up after 2 restarts)")


def test_restart_tries_again_after_a_failure(make_manager: Make, tmp_path: object) -> None:
    manager = make_manager()
    manager.add("later", fixture("exits_at_start.py"))
    assert manager.wait_ready(READY) and manager.status()[0].state == "failed"
    manager.restart("later")
    assert manager.status()[0].state == "connecting"
    assert manager.wait_ready(READY)
    assert manager.status()[0].state == "failed" and manager.status()[0].restarts == 0


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_an_http_server_that_dies_is_noticed_by_the_probe(
    make_manager: Make, transport: str
) -> None:
    # poll_interval is an hour: only the liveness probe can notice the death.
    registry = ToolRegistry()
    manager = make_manager(registry, poll_interval=3600, probe_interval=1)
    with http_server("basic.py", transport=transport) as web:
        manager.add("web", {"type": transport, "url": web.url})
        assert manager.wait_ready(READY)
        assert manager.status()[0].state == "connected"
        web.process.kill()
        assert wait_until(lambda: manager.status()[0].state != "connected", 60)
    [status] = manager.status()
    assert status.tool_count == 0 and "mcp__web__echo" not in registry
    assert status.last_error and not status.last_error.endswith(": ")


def test_an_http_error_status_is_named_in_the_call_error(make_manager: Make) -> None:
    registry = ToolRegistry()
    manager = make_manager(registry)
    with http_server("basic.py", "--refuse-calls", "503") as web:
        manager.add("web", {"type": "http", "url": web.url})
        assert manager.wait_ready(READY)
        with pytest.raises(ToolError) as raised:
            registry.get("mcp__web__echo").call({"text": "hi"})
    assert str(raised.value) == (
        "MCP server 'web' answered with an error: Server returned an error response "
        "(HTTP 503 Service Unavailable)"
    )
