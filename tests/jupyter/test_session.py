"""The session through run_cell: every option set with %config applies from the next cell."""

from __future__ import annotations

import inspect
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

import nbagent
from nbagent.core.tool import Tool
from nbagent.testing import FakeAnthropicServer, Reply
from tests.components import IN_CI
from tests.shells import FORECAST, error_of, run


def request_after(ip: InteractiveShell, fake_api: FakeAnthropicServer, *configs: str) -> Any:
    """Run a first cell, set the options, run a second: return the second cell's request."""
    fake_api.enqueue(Reply.text("first"), Reply.text("second"))
    run(ip, "%%agent --new\nhello")
    for config in configs:
        ip.run_line_magic("config", config)
    result, _ = run(ip, "%%agent\nagain")
    assert error_of(result) is None
    return fake_api.requests[-1].body


@pytest.fixture
def restore(ip: InteractiveShell) -> Any:
    """Set options back to their defaults after the test."""
    settings = next(c for c in ip.configurables if type(c).__name__ == "NbAgent")
    names: list[str] = []
    yield names.append
    for name in names:
        ip.run_line_magic("config", f"NbAgent.{name} = {settings.trait_defaults(name)!r}")


@pytest.mark.parametrize(
    ("option", "value", "seen"),
    [
        ("system_prompt", "'Answer in French.'", lambda b: b["system"] == "Answer in French."),
        ("max_tokens", "1234", lambda b: b["max_tokens"] == 1234),
        ("model", "'claude-haiku-4-5'", lambda b: b["model"] == "claude-haiku-4-5"),
        (
            "loaded_tools",
            f"['{FORECAST}']",
            lambda b: "defer_loading" not in next(t for t in b["tools"] if t["name"] == FORECAST),
        ),
        (
            "deferred_tools",
            "['Read']",
            lambda b: next(t for t in b["tools"] if t["name"] == "Read").get("defer_loading"),
        ),
    ],
)
def test_an_option_changed_after_the_first_cell_reaches_the_next_request(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    restore: Callable[[str], None],
    option: str,
    value: str,
    seen: Callable[[dict[str, Any]], bool],
) -> None:
    restore(option)
    body = request_after(ip, fake_api, f"NbAgent.{option} = {value}")
    assert seen(body)


def test_the_announcement_style_applies_to_the_next_change(
    ip: InteractiveShell, fake_api: FakeAnthropicServer, restore: Callable[[str], None]
) -> None:
    restore("announcement_style")
    extra = Tool(name="mcp__weather__alerts", handler=lambda: "none", is_mcp=True, server="weather")
    try:
        fake_api.enqueue(Reply.text("first"))
        run(ip, "%%agent --new\nhello")
        ip.run_line_magic("config", "NbAgent.announcement_style = 'compact'")
        nbagent.registry.register(extra, replace=True)
        fake_api.enqueue(Reply.text("second"))
        run(ip, "%%agent\nagain")
        body = fake_api.requests[-1].body
        texts = [b["text"] for b in body["messages"][-1]["content"] if b["type"] == "text"]
        assert any("mcp__weather__: alerts" in text for text in texts), texts
    finally:
        nbagent.registry.unregister_many([extra.name])


def test_rules_and_the_permission_mode_apply_from_the_next_cell(
    ip: InteractiveShell, fake_api: FakeAnthropicServer, restore: Callable[[str], None]
) -> None:
    for name in ("allow_rules", "deny_rules", "permission_mode"):
        restore(name)
    writer = Tool(name="WriteNote", handler=lambda: "written")
    nbagent.registry.register(writer, replace=True)
    try:
        fake_api.enqueue(Reply.tool_use("WriteNote"), Reply.text("asked"))
        run(ip, "%%agent --new -o result\nwrite")
        assert ip.user_ns["result"].tool_calls[0].status == "denied"  # nobody to ask here
        ip.run_line_magic("config", "NbAgent.allow_rules = ['WriteNote']")
        fake_api.enqueue(Reply.tool_use("WriteNote"), Reply.text("written"))
        run(ip, "%%agent -o result\nwrite")
        assert ip.user_ns["result"].tool_calls[0].status == "ok"
        ip.run_line_magic("config", "NbAgent.deny_rules = ['WriteNote']")
        fake_api.enqueue(Reply.tool_use("WriteNote"), Reply.text("refused"))
        run(ip, "%%agent -o result\nwrite")
        assert (
            ip.user_ns["result"].tool_calls[0].error == "Permission denied by the rule WriteNote."
        )
        ip.run_line_magic("config", "NbAgent.deny_rules = []")
        ip.run_line_magic("config", "NbAgent.permission_mode = 'plan'")
        fake_api.enqueue(Reply.tool_use("WriteNote"), Reply.text("planned"))
        run(ip, "%%agent -o result\nwrite")
        assert "Plan mode" in (ip.user_ns["result"].tool_calls[0].error or "")
    finally:
        nbagent.registry.unregister("WriteNote")


def test_the_ranker_applies_to_the_next_search(
    ip: InteractiveShell, restore: Callable[[str], None]
) -> None:
    restore("ranker")
    ip.run_line_magic("config", "NbAgent.ranker = 'keyword'")
    _, keyword = run(ip, "%tool_search weather forecast")
    ip.run_line_magic("config", "NbAgent.ranker = 'bm25'")
    _, bm25 = run(ip, "%tool_search weather forecast")
    assert "name part (12)" in keyword and "name part (12)" not in bm25
    _, status = run(ip, "%agent status")
    assert "**ranker** `bm25`" in status


def test_a_bad_value_is_refused_when_set_and_the_old_one_stays(
    ip: InteractiveShell, restore: Callable[[str], None], capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("ranker", "allow_rules", "mcp_config"):
        restore(name)
    ip.run_cell("%config NbAgent.ranker = 'keyword'")
    ip.run_cell("%config NbAgent.ranker = 'nope'")
    ip.run_cell("%config NbAgent.allow_rules = ['Bash(']")
    ip.run_cell("%config NbAgent.mcp_config = '/nowhere/mcp.json'")
    said = capsys.readouterr().err
    assert (
        "c.NbAgent.ranker not used: Unknown ranker 'nope'; choose one of: bm25, hybrid, "
        "keyword, semantic. (it stays 'keyword')"
    ) in said
    assert "c.NbAgent.allow_rules not used: " in said and "e.g. Bash(git status:*)" in said
    assert "No MCP configuration file at '/nowhere/mcp.json'" in said
    _, status = run(ip, "%agent status")
    assert "**ranker** `keyword`" in status


def test_a_bad_value_left_in_the_configuration_does_not_stop_the_next_load(
    ip: InteractiveShell, restore: Callable[[str], None], capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("ranker", "max_tokens"):
        restore(name)
    ip.run_cell("%config NbAgent.ranker = 'nope'")
    ip.run_cell("%config NbAgent.max_tokens = 777")
    capsys.readouterr()
    ip.run_line_magic("reload_ext", "nbagent")
    assert "c.NbAgent.ranker not used: Unknown ranker 'nope'" in capsys.readouterr().err
    _, config = run(ip, "%agent config")
    default = next(c for c in ip.configurables if type(c).__name__ == "NbAgent").trait_defaults(
        "ranker"
    )
    assert "| `max_tokens` | `777` |" in config and f"| `ranker` | `{default!r}` |" in config


def test_preloading_applies_to_the_next_conversation(
    ip: InteractiveShell, fake_api: FakeAnthropicServer, restore: Callable[[str], None]
) -> None:
    restore("preload")
    restore("preload_budget")
    fake_api.enqueue(Reply.text("first"))
    run(ip, "%%agent --new\nhello")
    ip.run_line_magic("config", "NbAgent.preload = True")
    ip.run_line_magic("config", "NbAgent.preload_budget = 5000")
    fake_api.enqueue(Reply.text("second"))
    _, shown = run(ip, "%%agent --new\nUse the weather server: forecast for Rome")
    assert "Preloaded for this prompt" in shown and FORECAST in shown


def test_promotion_counts_uses_in_the_file_set_after_the_first_cell(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    restore: Callable[[str], None],
    tmp_path: Path,
) -> None:
    restore("promotion")
    restore("usage_db")
    fake_api.enqueue(Reply.text("first"))
    run(ip, "%%agent --new\nhello")
    database = tmp_path / "usage.sqlite3"
    ip.run_line_magic("config", f"NbAgent.usage_db = {str(database)!r}")
    ip.run_line_magic("config", "NbAgent.promotion = True")
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": f"select:{FORECAST}"}),
        Reply.tool_use(FORECAST, {"city": "Rome"}),
        Reply.text("sunny"),
    )
    run(ip, "%%agent\nweather in Rome")
    ip.run_line_magic("config", "NbAgent.promotion = False")
    with sqlite3.connect(database) as connection:
        names = [row[0] for row in connection.execute("SELECT tool FROM usage")]
    assert names == [FORECAST]


def test_call_timeout_is_a_setting(
    ip: InteractiveShell, fake_api: FakeAnthropicServer, restore: Callable[[str], None]
) -> None:
    restore("call_timeout")
    release = threading.Event()
    hang = Tool(name="Hang", handler=release.wait, read_only=True)
    nbagent.registry.register(hang, replace=True)
    try:
        ip.run_line_magic("config", "NbAgent.call_timeout = 0.2")
        fake_api.enqueue(Reply.tool_use("Hang"), Reply.text("gave up"))
        run(ip, "%%agent --new -o result\nwait")
        assert "did not finish within 0.2 s" in (ip.user_ns["result"].tool_calls[0].error or "")
    finally:
        release.set()
        nbagent.registry.unregister("Hang")


def test_plan_mode_the_agent_entered_lasts_across_cells(
    ip: InteractiveShell, fake_api: FakeAnthropicServer
) -> None:
    writer = Tool(name="WriteNote", handler=lambda: "written")
    nbagent.registry.register(writer, replace=True)
    try:
        fake_api.enqueue(
            Reply.tool_use("ToolSearch", {"query": "select:EnterPlanMode"}),
            Reply.tool_use("EnterPlanMode"),
            Reply.text("Planning."),
        )
        run(ip, "%%agent --new\nplan first")
        fake_api.enqueue(Reply.tool_use("WriteNote"), Reply.text("refused"))
        run(ip, "%%agent -o result\nnow write")
        assert "Plan mode" in (ip.user_ns["result"].tool_calls[0].error or "")
        _, config = run(ip, "%agent config")
        assert "| `permission_mode` | `'default'` |" in config
        assert "In effect now: permission mode `plan` (the agent entered plan mode" in config
    finally:
        ip.run_line_magic("config", "NbAgent.permission_mode = 'default'")
        nbagent.registry.unregister("WriteNote")


def test_the_session_tools_are_listed_before_the_first_agent_cell(shell: InteractiveShell) -> None:
    shell.run_line_magic("load_ext", "nbagent")
    try:
        _, before = run(shell, "%tools")
        assert "`EnterPlanMode`" in before and "`TaskCreate`" in before
    finally:
        shell.run_line_magic("unload_ext", "nbagent")


def test_the_status_estimates_the_cost_and_a_price_table_of_ones_own_applies(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    restore: Callable[[str], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    restore("prices")
    restore("model")
    fake_api.enqueue(Reply.text("hi"))
    run(ip, "%%agent --new\nhello")
    _, status = run(ip, "%agent status")
    assert "≈ $" in status or "< $0.001" in status
    ip.run_line_magic("config", "NbAgent.model = 'my-model'")
    _, status = run(ip, "%agent status")
    assert "cost unknown at `my-model` list prices" in status
    ip.run_line_magic("config", "NbAgent.prices = {'my-model': {'input': 1e6, 'output': 0}}")
    _, status = run(ip, "%agent status")
    assert "cost unknown" not in status and "at `my-model` list prices" in status
    ip.run_cell("%config NbAgent.prices = {'my-model': {'input': -1, 'output': 0}}")
    assert "c.NbAgent.prices not used: The price of model 'my-model'" in capsys.readouterr().err


def test_the_default_ranker_is_the_best_installed_one(ip: InteractiveShell) -> None:
    from nbagent.catalogue.rankers import best_available

    settings = next(c for c in ip.configurables if type(c).__name__ == "NbAgent")
    assert settings.trait_defaults("ranker") == best_available()
    if IN_CI:
        assert best_available() == "hybrid"


def test_tool_search_indexes_in_the_background_once_a_cell_has_run(ip: InteractiveShell) -> None:
    from nbagent.jupyter.session import Session

    search = Session.of(ip).agent.search  # type: ignore[union-attr]
    ip.run_cell("1 + 1")
    if search.ranker.name == "hybrid":
        assert search.ranker.wait(120), search.ranker.ranking  # nobody searched
        assert search.ranker.ranking == "hybrid"


def test_an_edit_is_asked_with_its_diff_and_one_that_cannot_be_made_is_not_asked(
    ip: InteractiveShell,
    fake_api: FakeAnthropicServer,
    asked: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import nbformat

    cell = "0f3c9a2e-5b7d-4e1a-9c8b-2d4f6a8b0c1e"
    path = tmp_path / "circle.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import math\nr = 2\nprint(math.pi * r)", id=cell)]
    nbformat.write(notebook, path)
    monkeypatch.setitem(ip.user_ns, "__session__", str(path))
    fake_api.enqueue(
        Reply.tool_use("NotebookRead", {}),
        Reply.tool_use("NotebookEdit", {"cell_id": "0f3c9a2e", "new_source": "import math\nr = 3"}),
        Reply.tool_use("NotebookEdit", {"cell_id": "0f3c9a2f", "new_source": "r = 4"}),
        Reply.text("Left as it was."),
    )
    result, out = run(ip, "%%agent --new -o result\nmake r 3")
    assert error_of(result) is None
    # The second edit, of a cell that does not exist, was not asked about.
    [prompt] = asked
    assert prompt.startswith(
        "@@ -1,3 +1,2 @@\n import math\n-r = 2\n-print(math.pi * r)\n+r = 3\n\n"
        "Allow NotebookEdit: replace cell 0f3c9a2e in /"  # the notebook is outside the root
    )
    assert prompt.endswith("?  y = yes, n = no, a = always (allow NotebookEdit) ")
    calls = ip.user_ns["result"].tool_calls
    assert [c.status for c in calls] == ["ok", "denied", "error"]
    assert calls[2].error.startswith("No cell with id '0f3c9a2f' in circle.ipynb. Its cell ids")
    assert "NotebookEdit 0f3c9a2e → refused by you" in out and cell not in out
    assert nbformat.read(path, as_version=4).cells[0].source.startswith("import math\nr = 2")


def test_each_setting_tagged_agent_names_one_of_the_agents_parameters() -> None:
    from nbagent.jupyter.config import NbAgent
    from nbagent.jupyter.session import SET_ONCE_BUILT
    from nbagent.loop.agent import Agent

    values = NbAgent().agent_values()
    assert {"model", "system", "preload_budget", "usage_store", "call_timeout"} <= set(values)
    assert set(values) - set(SET_ONCE_BUILT) <= set(inspect.signature(Agent).parameters)


def test_no_agent_is_built_once_the_session_is_closed(tmp_path: Path) -> None:
    """The start-up thread may ask for the agent after an ``%unload_ext``: it gets an error
    saying so, and nothing is built that the closed session would leave running."""
    from nbagent.catalogue.registry import ToolRegistry
    from nbagent.core.errors import NbAgentError
    from nbagent.jupyter.config import NbAgent
    from nbagent.jupyter.session import Session

    registry = ToolRegistry()
    session = Session(NbAgent(), registry, root=tmp_path)
    assert "Agent" in registry  # the session's tools, before any agent
    session.close()
    assert "Agent" not in registry
    with pytest.raises(NbAgentError, match="load_ext nbagent"):
        session.agent  # noqa: B018 - the property is what is tested
    assert not session.agent_built
