"""The magics through a real InteractiveShell's run_cell, against FakeAnthropicServer."""

from __future__ import annotations

import gc
import weakref

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import nbagent
from nbagent.core.tool import Tool
from nbagent.loop.agent import AgentResult
from nbagent.testing import FakeAnthropicServer, Reply
from tests.shells import FORECAST, error_of, run


def test_load_registers_the_magics_and_unload_removes_them(shell: InteractiveShell) -> None:
    shell.run_line_magic("load_ext", "nbagent")
    magics = shell.magics_manager.magics
    assert {"agent", "tools", "tool_search"} <= set(magics["line"])
    assert "agent" in magics["cell"]
    assert any(type(c).__name__ == "NbAgent" for c in shell.configurables)
    shell.run_line_magic("unload_ext", "nbagent")
    assert not {"agent", "tools", "tool_search"} & set(magics["line"])
    assert "agent" not in magics["cell"]
    assert not any(type(c).__name__ == "NbAgent" for c in shell.configurables)


def test_sessions_loaded_and_unloaded_do_not_pile_up_with_their_search_threads(
    shell: InteractiveShell, fake_api: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbagent.jupyter.session import Session

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    searches = []
    for _ in range(3):
        shell.run_line_magic("load_ext", "nbagent")
        session = Session.of(shell)
        assert session is not None
        fake_api.enqueue(Reply.text("Hello."))
        assert run(shell, "%%agent\nSay hello.")[0].success
        searches.append(weakref.ref(session.agent.search))
        del session
        shell.run_line_magic("unload_ext", "nbagent")
    assert not [c for c in shell.configurables if type(c).__module__.startswith("nbagent.")]
    nbagent.registry.deferred()  # its cached split of the tools drops the unloaded ones
    gc.collect()
    # the caches keyed by tool name hold the last session's tools until they are registered
    # again; the sessions before are gone, and their threads stop indexing the registry
    assert [s() is None for s in searches[:-1]] == [True, True]


def test_reload_keeps_the_process_registry(ip: InteractiveShell) -> None:
    registry = nbagent.registry
    ip.run_line_magic("reload_ext", "nbagent")
    assert nbagent.registry is registry and FORECAST in nbagent.registry
    assert "agent" in ip.magics_manager.magics["cell"]


def test_agent_cell_answers_in_markdown_and_stores_the_result(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "weather"}),
        Reply.tool_use(FORECAST, {"city": "Paris"}),
        Reply.text("It is **sunny** in Paris."),
    )
    result, shown = run(ip, "%%agent -o result\nWeather in Paris?")
    assert result.success, error_of(result)
    assert "It is **sunny** in Paris." in shown
    assert f'✓ ToolSearch "weather" → loaded 1: {FORECAST}' in shown  # a terminal prints text
    assert f"✓ {FORECAST} city='Paris' → Sunny in Paris" in shown
    assert "deferred tools available" not in shown  # the first announcement is no news
    assert "tokens:" in shown and "· ≈ $0.0" in shown  # the cost at the model's list price
    stored = ip.user_ns["result"]
    assert isinstance(stored, AgentResult) and stored.text == "It is **sunny** in Paris."
    assert [c.name for c in stored.tool_calls] == ["ToolSearch", FORECAST]


def test_verbose_shows_every_call_in_full_for_one_cell_or_from_the_setting(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    search = Reply.tool_use("ToolSearch", {"query": "weather"})
    fake_api.enqueue(search, Reply.text("Sunny."), search, Reply.text("Snow."))
    _, verbose = run(ip, "%%agent --verbose\nRome?")
    assert "deferred tools available" in verbose and "mode default" in verbose
    _, quiet = run(ip, "%%agent\nOslo?")
    assert "mode default" not in quiet and "Snow." in quiet
    ip.run_line_magic("config", "NbAgent.verbose = True")
    try:
        fake_api.enqueue(search, Reply.text("Fog."))
        _, configured = run(ip, "%%agent\nBern?")
        assert "mode default" in configured
    finally:
        ip.run_line_magic("config", "NbAgent.verbose = False")


def test_the_conversation_continues_until_new(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    fake_api.enqueue(Reply.text("one"), Reply.text("two"), Reply.text("three"))
    run(ip, "%%agent\nfirst")
    run(ip, "%%agent\nsecond")
    run(ip, "%%agent --new\nthird")
    counts = [len(r.body["messages"]) for r in fake_api.requests]
    assert counts == [1, 3, 1]


def test_variables_fill_the_prompt_and_double_braces_escape(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    ip.user_ns["city"] = "Oslo"
    fake_api.enqueue(Reply.text("ok"))
    run(ip, '%%agent\nWeather in {city}? Reply as {{"answer": ...}}')
    text = fake_api.requests[-1].body["messages"][0]["content"][0]["text"]
    assert text == 'Weather in Oslo? Reply as {"answer": ...}'


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("%%agent\nWeather in {nowhere}?", "{nowhere} in the prompt is not a notebook variable"),
        ("%%agent\n   \n", "The cell is empty"),
        ("%%agent --bogus\nhi", "unrecognized arguments: --bogus"),
        ("%%agent --mode sideways\nhi", "invalid choice: 'sideways'"),
        ("%%agent --max-turns 0\nhi", "--max-turns must be at least 1"),
        ("%%agent status\nhi", "'status' is a %agent command"),
        ("%agent", "Use %%agent with a prompt"),
        ("%agent dance", "invalid choice: 'dance'"),
        ("%tools nothing_like_this", "No tool matches 'nothing_like_this'"),
        ("%tool_search select:Nope", "No tool is named 'Nope'"),
    ],
)
def test_bad_input_is_a_one_line_usage_error(ip: InteractiveShell, cell: str, message: str) -> None:
    result, _ = run(ip, cell)
    error = error_of(result)
    assert isinstance(error, UsageError) and message in str(error)
    assert "\n" not in str(error).strip()


def test_no_api_key_says_how_to_set_one(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    result, _ = run(ip, "%%agent\nhi")
    error = error_of(result)
    assert isinstance(error, UsageError)
    assert "ANTHROPIC_API_KEY" in str(error) and "FakeAnthropicServer" in str(error)


def test_an_unknown_model_is_a_usage_error(ip: InteractiveShell) -> None:
    result, _ = run(ip, "%%agent --model gpt-nope\nhi")
    error = error_of(result)
    assert isinstance(error, UsageError) and "Unknown model 'gpt-nope'" in str(error)
    _, status = run(ip, "%agent status")  # the option was that cell's only
    assert "**model** `claude-sonnet-5-5`" in status and "gpt-nope" not in status


def test_more_deferred_tools_than_a_request_takes_is_said_with_what_to_do(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    names = [f"mcp__many__t{i}" for i in range(10_000)]
    nbagent.registry.register_many(
        [Tool(name=n, description="x", input_schema={"type": "object"}, is_mcp=True) for n in names]
    )
    try:
        asked = len(fake_api.requests)
        result, _ = run(ip, "%%agent\nHello?")
        said = str(error_of(result))
        assert isinstance(error_of(result), UsageError) and len(fake_api.requests) == asked
        assert "deferred tools are registered" in said and "`%%agent --mode client`" in said
        fake_api.enqueue(Reply.text("Hello."))
        result, shown = run(ip, "%%agent --mode client\nHello?")
        assert result.success and "Hello." in shown
    finally:
        nbagent.registry.unregister_many(names)


def test_config_options_reach_the_requests(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    fake_api.enqueue(Reply.text("a"), Reply.text("b"))
    ip.run_line_magic("config", 'NbAgent.model = "claude-haiku-4-5"')
    run(ip, "%%agent\nhi")
    run(ip, "%%agent --model claude-opus-5 --mode off\nagain")
    first, second = (r.body for r in fake_api.requests)
    assert first["model"] == "claude-haiku-4-5" and second["model"] == "claude-opus-5"
    assert any(t.get("defer_loading") for t in first["tools"])
    assert not any(t.get("defer_loading") for t in second["tools"])
    ip.run_line_magic("config", 'NbAgent.model = "claude-sonnet-5-5"')


def test_max_turns_option_stops_the_loop(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    fake_api.enqueue(*[Reply.tool_use("ToolSearch", {"query": "weather"})] * 2)
    result, shown = run(ip, "%%agent --max-turns 2 -o result\nloop")
    assert result.success and ip.user_ns["result"].stop_reason == "max_turns"
    assert "Stopped after 2 turns" in shown and "stopped: max_turns" in shown


def test_quiet_shows_only_the_answer(ip: InteractiveShell, fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.tool_use("ToolSearch", {"query": "weather"}), Reply.text("Done."))
    _, shown = run(ip, "%%agent --quiet\ngo")
    assert shown.strip() == '<div class="nbagent-answer"><p>Done.</p></div>'


def test_status_reset_config_history(ip: InteractiveShell, fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(Reply.tool_use("ToolSearch", {"query": "weather"}), Reply.text("Found it."))
    run(ip, "%%agent\nfind the weather tool")
    _, status = run(ip, "%agent status")
    assert f"`{FORECAST}`" in status and "deferred" in status and "tokens:" in status
    _, history = run(ip, "%agent history")
    assert "1. **user**: find the weather tool" in history and "→ `ToolSearch`" in history
    _, config = run(ip, "%agent config")
    assert "| `model` |" in config and "| `mode` | `'native'` |" in config
    _, reset = run(ip, "%agent reset")
    assert "reset" in reset
    _, history = run(ip, "%agent history")
    assert "No conversation yet." in history


def test_tools_table_card_and_pattern(ip: InteractiveShell) -> None:
    _, table = run(ip, "%tools")
    assert (
        "| `ToolSearch` | python | loaded |" in table and f"| `{FORECAST}` | mcp:weather |" in table
    )
    assert table.startswith("| name | source | state | read-only | description |\n")
    _, card = run(ip, f"%tools {FORECAST}")
    assert card.startswith(f"### `{FORECAST}`\n\ndeferred · is_mcp · server weather")
    assert "| parameter | type | required | default | description |" in card
    assert "| `city` | string |" in card
    _, some = run(ip, "%tools mcp__weather__*")
    assert FORECAST in some and "ToolSearch" not in some


def test_tool_search_shows_scores_and_reasons(ip: InteractiveShell) -> None:
    ip.run_line_magic("config", "NbAgent.ranker = 'keyword'")
    _, shown = run(ip, "%tool_search weather forecast")
    assert f"| `{FORECAST}` | 24 | 'weather' name part (12); 'forecast' name part (12) |" in shown


def test_loaded_and_deferred_overrides_from_config(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    ip.run_line_magic("unload_ext", "nbagent")
    ip.run_line_magic("config", f'NbAgent.loaded_tools = ["{FORECAST}"]')
    ip.run_line_magic("load_ext", "nbagent")
    try:
        fake_api.enqueue(Reply.tool_use(FORECAST, {"city": "Rome"}), Reply.text("ok"))
        result, _ = run(ip, "%%agent\nRome?")
        assert result.success
        tools = {t["name"]: t for t in fake_api.requests[0].body["tools"]}
        assert "defer_loading" not in tools[FORECAST]
    finally:
        ip.run_line_magic("config", "NbAgent.loaded_tools = []")
        nbagent.registry.override(FORECAST, None)


def test_permission_mode_and_rules_from_config_and_magics(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    writer = Tool(name="WriteNote", handler=lambda: "written")
    nbagent.registry.register(writer, replace=True)
    try:
        ip.run_line_magic("config", 'NbAgent.permission_mode = "plan"')
        fake_api.enqueue(Reply.tool_use("WriteNote"), Reply.text("planned"))
        run(ip, "%%agent -o result\nwrite it")
        call = ip.user_ns["result"].tool_calls[0]
        assert call.status == "denied" and "Plan mode" in (call.error or "")
        ip.run_line_magic("config", 'NbAgent.permission_mode = "default"')
        _, shown = run(ip, "%agent allow WriteNote")
        assert "Allow rule added: `WriteNote`" in shown
        fake_api.enqueue(Reply.tool_use("WriteNote"), Reply.text("done"))
        run(ip, "%%agent -o result\nwrite it now")
        assert ip.user_ns["result"].tool_calls[0].status == "ok"
        _, status = run(ip, "%agent status")
        assert "mode `default` · allow `mcp__weather__*`, `WriteNote`" in status
        result, _ = run(ip, "%agent deny Bash(")
        assert isinstance(error_of(result), UsageError)
        _, shown = run(ip, "%agent deny Bash(rm:*)")
        assert "Deny rule added: `Bash(rm:*)`" in shown
    finally:
        ip.run_line_magic("config", 'NbAgent.permission_mode = "default"')
        nbagent.registry.unregister("WriteNote")


def test_bypass_mode_is_shown_as_a_warning(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    ip.run_line_magic("config", 'NbAgent.permission_mode = "bypassPermissions"')
    try:
        fake_api.enqueue(Reply.text("ok"))
        _, shown = run(ip, "%%agent\nhi")
        assert "Warning**: permission mode bypassPermissions" in shown
    finally:
        ip.run_line_magic("config", 'NbAgent.permission_mode = "default"')


def test_session_tools_come_with_the_agent_and_go_on_unload(shell: InteractiveShell) -> None:
    shell.run_line_magic("load_ext", "nbagent")
    shell.run_cell("%tool_search todo")
    names = {"Agent", "TaskCreate", "AskUserQuestion", "EnterPlanMode", "ListMcpResources"}
    assert names <= set(nbagent.registry.names())
    assert not nbagent.registry.is_deferred(nbagent.registry.get("Agent"))
    shell.run_line_magic("unload_ext", "nbagent")
    assert not names & set(nbagent.registry.names())
