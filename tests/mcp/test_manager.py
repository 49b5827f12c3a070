"""McpManager with real servers: tools in the registry, calls, resources, API, shutdown."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from nbagent.catalogue.registry import RegistryChange, ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.errors import NbAgentError, ToolError, ToolInputError
from nbagent.mcp import McpConfigError, McpManager, StdioSpec, UnknownServerError
from tests.mcp.conftest import CONNECT_TIMEOUT, FAST_RESTART, READY
from tests.mcp.servers import alive, fixture, http_server, process_tree, wait_until

pytestmark = pytest.mark.slow

BASIC_TOOLS = ["add", "echo", "fail", "image", "document", "slow", "pid", "header"]


@pytest.fixture(scope="module")
def basic() -> Iterator[tuple[McpManager, ToolRegistry]]:
    """The basic fixture over stdio (``basic``) and over streamable HTTP (``web``)."""
    registry = ToolRegistry()
    with http_server("basic.py") as web:
        manager = McpManager(
            registry, connect_timeout=CONNECT_TIMEOUT, call_timeout=3, restart=FAST_RESTART
        )
        web_entry = {"url": web.url, "headers": {"X-Token": "${NBAGENT_TEST_TOKEN:-t0ken}"}}
        manager.start({"mcpServers": {"basic": fixture("basic.py"), "web": web_entry}})
        assert manager.wait_ready(READY)
        yield manager, registry
        manager.close()


@pytest.mark.parametrize("server", ["basic", "web"])
def test_tools_are_registered_deferred_and_named(
    basic: tuple[McpManager, ToolRegistry], server: str
) -> None:
    manager, registry = basic
    names = [f"mcp__{server}__{tool}" for tool in BASIC_TOOLS]
    assert [t.name for t in manager.tools(server)] == names
    for name in names:
        tool = registry.get(name)
        assert tool.is_mcp and tool.server == server and registry.is_deferred(tool)
    add = registry.get(f"mcp__{server}__add")
    assert add.read_only and add.concurrency_safe  # readOnlyHint
    assert add.description == "Add two integers."
    assert add.input_schema["required"] == ["a", "b"]


def test_status_reports_each_server(basic: tuple[McpManager, ToolRegistry]) -> None:
    manager, registry = basic
    stdio, web = manager.status()
    assert (stdio.name, stdio.state, stdio.transport, stdio.tool_count) == (
        "basic",
        "connected",
        "stdio",
        8,
    )
    assert (web.name, web.state, web.transport, web.pid) == ("web", "connected", "http", None)
    assert stdio.protocol_version == web.protocol_version == "2026-07-28"
    assert stdio.last_error is None and stdio.restarts == 0
    assert 0 < stdio.connect_seconds < CONNECT_TIMEOUT
    assert registry.get("mcp__basic__pid").call({}).content == str(stdio.pid)


@pytest.mark.parametrize("server", ["basic", "web"])
def test_calls_map_every_kind_of_result(
    basic: tuple[McpManager, ToolRegistry], server: str
) -> None:
    _, registry = basic

    def call(tool: str, **arguments: Any) -> Any:
        return registry.get(f"mcp__{server}__{tool}").call(arguments)

    added = call("add", a=2, b=3)
    assert (added.content, added.metadata) == ("5", {"structured_content": {"result": 5}})
    assert call("echo", text="héllo").content == "héllo"
    failed = call("fail", reason="on purpose")
    assert failed.is_error and "failed on purpose: on purpose" in failed.content
    image, caption = call("image").content
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert caption == {"type": "text", "text": "a red pixel"}
    assert call("document").content == (
        "Resource note://readme:\nHi!\n"
        "[resource blob://data of type application/octet-stream (3 bytes) omitted: not supported]"
    )


def test_configured_headers_are_sent(basic: tuple[McpManager, ToolRegistry]) -> None:
    _, registry = basic
    assert registry.get("mcp__web__header").call({"name": "x-token"}).content == "t0ken"


def test_input_is_checked_against_the_servers_schema_first(
    basic: tuple[McpManager, ToolRegistry],
) -> None:
    _, registry = basic
    with pytest.raises(ToolInputError, match="`b`"):
        registry.get("mcp__basic__add").call({"a": 1})


def test_a_call_that_takes_too_long_times_out_and_the_server_stays_usable(
    basic: tuple[McpManager, ToolRegistry],
) -> None:
    _, registry = basic
    started = time.monotonic()
    with pytest.raises(ToolError, match="did not answer within 3 s; the call was cancelled"):
        registry.get("mcp__basic__slow").call({"seconds": 30})
    assert time.monotonic() - started < 10
    assert registry.get("mcp__basic__echo").call({"text": "still here"}).content == "still here"


def test_concurrent_calls_from_many_threads(basic: tuple[McpManager, ToolRegistry]) -> None:
    _, registry = basic
    results: dict[int, Any] = {}

    def work(i: int) -> None:
        results[i] = registry.get("mcp__web__add").call({"a": i, "b": 1}).content

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {i: str(i + 1) for i in range(8)}


def test_tool_search_finds_the_servers_tools(basic: tuple[McpManager, ToolRegistry]) -> None:
    _, registry = basic
    search = ToolSearch(registry)
    assert search.search("add integers")[0].name in ("mcp__basic__add", "mcp__web__add")
    prefixed = [hit.name for hit in search.search("mcp__web", max_results=10)]
    assert sorted(prefixed) == sorted(f"mcp__web__{tool}" for tool in BASIC_TOOLS)


def test_resources_can_be_listed_and_read(basic: tuple[McpManager, ToolRegistry]) -> None:
    manager, _ = basic
    for server in ("basic", "web"):
        [resource] = manager.list_resources(server)
        assert (str(resource.uri), resource.mime_type) == ("note://hello", "text/plain")
        text = manager.read_resource(server, "note://hello")
        assert text == "Resource note://hello:\nHello from the basic server."
    with pytest.raises(ToolError, match="'basic' answered with an error: "):
        manager.read_resource("basic", "note://missing")


def test_names_are_checked(basic: tuple[McpManager, ToolRegistry]) -> None:
    manager, _ = basic
    with pytest.raises(UnknownServerError, match="No MCP server named 'nope' .servers: basic, web"):
        manager.tools("nope")
    with pytest.raises(UnknownServerError):
        manager.remove("nope")
    with pytest.raises(McpConfigError, match="'basic': is already running"):
        manager.add("basic", fixture("basic.py"))
    with pytest.raises(McpConfigError, match="'web': is already running"):
        manager.start({"mcpServers": {"new": fixture("basic.py"), "web": {"url": "http://a"}}})
    assert [s.name for s in manager.status()] == ["basic", "web"]


def test_add_restart_remove(make_manager: Callable[..., McpManager]) -> None:
    registry = ToolRegistry()
    changes: list[RegistryChange] = []
    registry.subscribe(changes.append)
    manager = make_manager(registry)
    manager.add("one", StdioSpec(command=sys.executable, args=fixture("basic.py")["args"]))
    assert manager.wait_ready(READY)
    [first] = changes
    assert len(first.added) == 8 and not first.removed  # one batch for the server
    pid = manager.status()[0].pid
    assert pid is not None and alive(pid)

    manager.restart("one")
    assert manager.status()[0].state == "connecting"
    assert manager.wait_ready(READY)
    status = manager.status()[0]
    assert status.state == "connected" and status.pid != pid and status.tool_count == 8
    assert wait_until(lambda: not alive(pid), 10)
    assert [(len(c.added), len(c.removed)) for c in changes] == [(8, 0), (0, 8), (8, 0)]

    new_pid = status.pid
    manager.remove("one")
    assert manager.status() == [] and not [n for n in registry.names() if n.startswith("mcp__")]
    assert not alive(new_pid)
    assert (len(changes[-1].added), len(changes[-1].removed)) == (0, 8)


def mcp_threads() -> int:
    return sum(t.name == "nbagent-mcp" for t in threading.enumerate())


def test_close_ends_every_process_and_the_thread(make_manager: Callable[..., McpManager]) -> None:
    threads = mcp_threads()
    manager = make_manager()
    manager.start(
        {
            "mcpServers": {
                "a": fixture("basic.py"),
                "b": fixture("dynamic.py", "--legacy"),
                "c": fixture("hangs.py"),  # still starting when closed
            }
        }
    )
    assert wait_until(lambda: manager.status()[1].state == "connected", READY)
    pids = [pid for s in manager.status() if s.pid for pid in process_tree(s.pid)]
    assert len(pids) >= 3 and all(alive(pid) for pid in pids)
    assert mcp_threads() == threads + 1

    started = time.monotonic()
    manager.close()
    assert time.monotonic() - started < 15
    assert not [pid for pid in pids if alive(pid)], "orphan processes"
    assert mcp_threads() == threads
    assert manager.status() == []
    manager.close()  # idempotent
    with pytest.raises(NbAgentError, match="closed"):
        manager.add("d", fixture("basic.py"))


def test_start_finds_the_notebooks_config(
    make_manager: Callable[..., McpManager], tmp_path: Any
) -> None:
    manager = make_manager()
    assert manager.start(folder=tmp_path / "empty-folder") is None
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"nb": fixture("basic.py")}}))
    config = manager.start(folder=tmp_path)
    assert config is not None and config.source == tmp_path / ".mcp.json"
    assert manager.status() == []  # a project's file: its servers wait for approval
    manager.approve(["nb"])
    assert manager.wait_ready(READY) and manager.status()[0].tool_count == 8


def test_the_caller_never_waits_for_servers(make_manager: Callable[..., McpManager]) -> None:
    """start() returns at once, and the registry stays responsive while 5 servers start."""
    registry = ToolRegistry()
    manager = make_manager(registry)
    slow = {f"slow{i}": fixture("basic.py", "--start-delay", "3") for i in range(5)}
    started = time.perf_counter()
    manager.start({"mcpServers": slow})
    start_seconds = time.perf_counter() - started
    assert start_seconds < 0.1

    search = ToolSearch(registry)
    worst = 0.0
    while any(s.state == "connecting" for s in manager.status()):
        began = time.perf_counter()
        registry.names()
        search.search("add integers")
        manager.status()
        worst = max(worst, time.perf_counter() - began)
        time.sleep(0.01)
    assert worst < 0.1, f"a trivial operation took {worst * 1000:.0f} ms"
    assert all(s.state == "connected" and s.tool_count == 8 for s in manager.status())


def test_the_older_sse_transport(make_manager: Callable[..., McpManager]) -> None:
    registry = ToolRegistry()
    with http_server("basic.py", transport="sse") as web:
        manager = make_manager(registry)
        manager.add("old", {"type": "sse", "url": web.url, "headers": {"X-Token": "t"}})
        assert manager.wait_ready(READY)
        status = manager.status()[0]
        assert (status.state, status.transport, status.tool_count) == ("connected", "sse", 8)
        assert registry.get("mcp__old__add").call({"a": 20, "b": 22}).content == "42"
        assert registry.get("mcp__old__header").call({"name": "x-token"}).content == "t"


def test_the_sdk_is_imported_on_the_managers_thread_only() -> None:
    code = (
        "import sys, nbagent.mcp\n"
        "assert 'mcp' not in sys.modules and 'anyio' not in sys.modules\n"
        "m = nbagent.mcp.McpManager()\n"
        "m.add('x', {'command': 'no-such-command'})\n"
        "m.wait_ready(60); print(m.status()[0].state); m.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "failed\n"


PROBE_IMPORTS = """
import sys, threading
imported = []
def hook(event, args):
    if event == "import" and args[0].startswith("jsonschema"):
        imported.append(threading.current_thread().name)
sys.addaudithook(hook)
from nbagent.mcp import McpManager
from nbagent.catalogue.registry import ToolRegistry
registry = ToolRegistry()
with McpManager(registry) as manager:
    manager.add("basic", {"command": sys.executable, "args": [sys.argv[1]]})
    assert manager.wait_ready(60), manager.status()
    print(registry.get("mcp__basic__echo").call({"text": "structured"}).content)
print(sorted(set(imported)))
"""


def test_jsonschema_is_imported_off_the_mcp_loop_before_the_first_output_schema_call() -> None:
    # The SDK checks structured results with jsonschema, imported at the first call: on the
    # one loop every server shares, that import (about a second) would stall them all.
    probe = subprocess.run(
        [sys.executable, "-c", PROBE_IMPORTS, fixture("basic.py")["args"][0]],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.splitlines() == ["structured", "['nbagent-jsonschema']"]
