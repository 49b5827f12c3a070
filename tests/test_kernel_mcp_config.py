""".mcp.json beside the notebook, end to end: ``%load_ext nbagent`` in a real IPython kernel.

The kernel (jupyter_client) runs in a folder holding the configuration, as a notebook's kernel
runs in the notebook's folder. What is checked is what the user sees: the outputs of the
load cell and of ``%mcp list`` (their text/markdown), and the tools in ``nbagent.registry``.
Nothing is timed: a server's connection is waited for by running a cell again and again,
with a generous limit on the number of tries.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager

from tests.kernels import Execution, execute, kernel
from tests.mcp.servers import FIXTURES
from tests.shells import shown

pytestmark = pytest.mark.slow


UNSET = "NBAGENT_TEST_UNSET_TOKEN"
"""A variable no test sets: a ``${...}`` of it has no value."""

BASIC_TOOLS = {"add", "echo", "fail", "image", "document", "slow", "pid", "header"}
"""The tools of tests/mcp_servers/basic.py."""

TRIES = 600
"""Cells run at most while waiting for a server (each sleeps 0.2 s in the kernel)."""

LIST_CELL = (
    "import nbagent\n"
    "print(json.dumps(sorted(n for n in nbagent.registry.names() if n.startswith('mcp__'))))"
)

SWITCHING = (
    "import threading\n"
    "print(any(t.name == 'nbagent-mcp-config' and t.is_alive() for t in threading.enumerate()))"
)
"""Prints whether a change of ``mcp_config`` is still being applied in the kernel."""


def fixture_entry() -> dict[str, Any]:
    """A good stdio entry: the basic fixture server."""
    return {"command": sys.executable, "args": [str(FIXTURES / "basic.py")]}


def five_entries() -> dict[str, Any]:
    """One good server (the basic fixture), three bad entries and a disabled one."""
    basic = [str(FIXTURES / "basic.py")]
    return {
        "mcpServers": {
            "basic": fixture_entry(),
            "stringargs": {"command": sys.executable, "args": f"{basic[0]} --legacy"},
            "numberenv": {"command": sys.executable, "args": basic, "env": {"PORT": 8080}},
            "token": {
                "command": sys.executable,
                "args": basic,
                "env": {"API_TOKEN": "${" + UNSET + "}"},
            },
            "off": {"command": sys.executable, "args": basic, "disabled": True},
        }
    }


def markdown(run: Execution) -> str:
    """The text/markdown of a cell's display outputs, joined, as it reads (:func:`shown`)."""
    return shown(
        "\n".join(
            out["data"]["text/markdown"]
            for out in run.outputs
            if "text/markdown" in out.get("data", {})
        )
    )


def no_traceback(run: Execution) -> None:
    """Fail if the cell failed or wrote anything to stderr."""
    assert run.status == "ok", run.error
    errors = [out for out in run.outputs if out.get("name") == "stderr" or "ename" in out]
    assert not errors, errors


def mcp_tools(client: BlockingKernelClient) -> list[str]:
    """The MCP tools in the kernel's registry now."""
    run = execute(client, "import json\n" + LIST_CELL)
    assert run.status == "ok", run.error
    return json.loads(run.text.strip().splitlines()[-1])


def wait_for_tools(client: BlockingKernelClient, prefix: str) -> list[str]:
    """Run a cell until tools named ``prefix...`` are in the kernel's registry."""
    for _ in range(TRIES):
        names = mcp_tools(client)
        if any(name.startswith(prefix) for name in names):
            return names
        execute(client, "import time; time.sleep(0.2)")
    listing = execute(client, "%mcp list")
    pytest.fail(f"no {prefix}* tool after {TRIES} tries; %mcp list:\n{markdown(listing)}")


def table_rows(text: str) -> dict[str, list[str]]:
    """The rows of ``%mcp list``'s table by server name: the cells after the name."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = re.fullmatch(r"\| `([^`]+)` \|(.*)\|", line.strip())
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split(" | ")]
    return rows


def servers_running(manager: KernelManager, script: str) -> list[psutil.Process]:
    """The kernel's descendant processes whose command line runs a script."""
    kernel_process = psutil.Process(manager.provisioner.pid)
    return [
        child
        for child in kernel_process.children(recursive=True)
        if any(part.endswith(script) for part in _cmdline(child))
    ]


def _cmdline(process: psutil.Process) -> list[str]:
    """A process's command line, empty when it is gone."""
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def check_five_entries(client: BlockingKernelClient, manager: KernelManager) -> None:
    """The basic server's tools reach the registry and answer; ``%mcp list`` shows all five
    entries of :func:`five_entries`, each in its state; only the basic server runs."""
    names = wait_for_tools(client, "mcp__basic__")
    assert set(names) == {f"mcp__basic__{tool}" for tool in BASIC_TOOLS}, names
    called = execute(
        client,
        "import nbagent\n"
        "add = nbagent.registry.get('mcp__basic__add')\n"
        "print(nbagent.registry.is_deferred(add), add.call({'a': 2, 'b': 3}).content)",
    )
    assert called.status == "ok", called.error
    assert called.text.split() == ["True", "5"], called.text

    listing = execute(client, "%mcp list")
    no_traceback(listing)
    rows = table_rows(markdown(listing))
    assert sorted(rows) == ["basic", "numberenv", "off", "stringargs", "token"], rows
    state, transport, tools, pid, restarts, error = rows["basic"]
    assert (state, transport, tools, restarts, error) == ("connected", "stdio", "8", "0", "")
    assert rows["off"][0] == "disabled" and not any(rows["off"][1:]), rows["off"]
    for name, fault in (
        ("stringargs", "field 'args' must be a list of strings"),
        ("numberenv", "field 'env.PORT' must be a string"),
        ("token", f"field 'env.API_TOKEN' uses ${{{UNSET}}}, which is not set"),
    ):
        assert rows[name][0] == "not started", rows[name]
        assert fault in rows[name][-1], rows[name]

    running = servers_running(manager, "basic.py")
    assert [process.pid for process in running] == [int(pid)], [p.cmdline() for p in running]


def check_notice(notice: str, source: Path) -> None:
    """The load cell's notice names each bad entry of :func:`five_entries`, its field and
    what to write instead, and only those."""
    assert "MCP servers not started" in notice
    assert f"(in {source})" in notice and "the others start" in notice
    lines = {
        name: line
        for line in notice.splitlines()
        for name in ("basic", "stringargs", "numberenv", "token", "off")
        if f"`{name}`" in line
    }
    assert set(lines) == {"stringargs", "numberenv", "token"}, notice
    assert "field 'args' must be a list of strings, not a string" in lines["stringargs"]
    assert "field 'env.PORT' must be a string, not a number" in lines["numberenv"]
    assert f"field 'env.API_TOKEN' uses ${{{UNSET}}}, which is not set" in lines["token"]
    assert f"set it, or write ${{{UNSET}:-default}}" in lines["token"]


def test_good_bad_and_disabled_entries_of_mcp_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's file: nothing runs until approved; then the good server starts and each bad
    entry is named with its faults; the next kernel starts the approved entries at load.

    The load cell names the servers waiting; ``%mcp approve --all`` names each bad entry, its
    field and what to write; the basic server's tools reach the registry and answer; ``%mcp
    list`` shows all five, each in its state. A second kernel in the same folder asks nothing,
    and its load cell names the bad entries as for the user's own file.
    """
    monkeypatch.delenv(UNSET, raising=False)
    (tmp_path / ".mcp.json").write_text(json.dumps(five_entries(), indent=2))
    with kernel(cwd=str(tmp_path)) as (manager, client):
        loaded = execute(client, "%load_ext nbagent")
        no_traceback(loaded)
        notice = markdown(loaded).strip()
        assert notice == (
            f"> **MCP servers waiting for your approval** (in {tmp_path / '.mcp.json'}): "
            "`basic`, `stringargs`, `numberenv`, `token`. `%mcp list` shows what each would "
            "run; `%mcp approve NAME` starts one."
        )
        listing = markdown(execute(client, "%mcp list"))
        assert table_rows(listing)["basic"][0] == "waiting for approval"
        assert not servers_running(manager, "basic.py") and mcp_tools(client) == []

        approved = execute(client, "%mcp approve --all")
        no_traceback(approved)
        said = markdown(approved)
        assert said.startswith("Approved `basic`: connecting in the background")
        for name, fault in (
            ("stringargs", "field 'args' must be a list of strings, not a string."),
            ("numberenv", "field 'env.PORT' must be a string, not a number."),
            ("token", f"field 'env.API_TOKEN' uses ${{{UNSET}}}, which is not set"),
        ):
            assert f"> Approved `{name}`, but it was not started: {fault}" in said
        check_five_entries(client, manager)

    with kernel(cwd=str(tmp_path)) as (manager, client):
        loaded = execute(client, "%load_ext nbagent")
        no_traceback(loaded)
        assert "approval" not in markdown(loaded)
        check_notice(markdown(loaded), tmp_path / ".mcp.json")
        check_five_entries(client, manager)


def test_the_mcp_config_setting_wins_over_mcp_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``c.NbAgent.mcp_config`` (set before the load, as ipython_config.py sets it) is the file
    read; the .mcp.json beside the notebook is not."""
    monkeypatch.delenv(UNSET, raising=False)
    chosen = tmp_path / "elsewhere" / "servers.json"
    chosen.parent.mkdir()
    chosen.write_text(json.dumps(five_entries()))
    beside = {"mcpServers": {"beside": fixture_entry()}}
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / ".mcp.json").write_text(json.dumps(beside))
    with kernel(cwd=str(tmp_path / "notebooks")) as (manager, client):
        setting = f"get_ipython().config.NbAgent.mcp_config = {str(chosen)!r}"
        assert execute(client, setting).status == "ok"
        loaded = execute(client, "%load_ext nbagent")
        no_traceback(loaded)
        check_notice(markdown(loaded), chosen)
        check_five_entries(client, manager)
        assert not any(name.startswith("mcp__beside__") for name in mcp_tools(client))


def test_switching_to_a_file_that_is_not_json_leaves_no_stale_rows_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``%config NbAgent.mcp_config`` to a broken file: the old servers stop, ``%mcp list``
    no longer shows the old file's entries as if they were configured, and says why the new
    one was not used and what to do (once as a notice, then in its table's place)."""
    monkeypatch.delenv(UNSET, raising=False)
    (tmp_path / "five.json").write_text(json.dumps(five_entries()))
    (tmp_path / "broken.json").write_text("mcpServers:\n  basic:\n    command: python\n")
    with kernel(cwd=str(tmp_path)) as (manager, client):
        no_traceback(execute(client, "%load_ext nbagent"))
        no_traceback(
            execute(client, f"%config NbAgent.mcp_config = {str(tmp_path / 'five.json')!r}")
        )
        wait_for_tools(client, "mcp__basic__")
        told = markdown(execute(client, "%mcp tools basic"))  # what the switch has to tell
        for name in ("stringargs", "numberenv", "token"):
            assert f"> MCP server `{name}` not started: " in told, told
        assert "`off`" not in told
        check_five_entries(client, manager)
        switch = f"%config NbAgent.mcp_config = {str(tmp_path / 'broken.json')!r}"
        no_traceback(execute(client, switch))
        for _ in range(TRIES):  # the switch runs on a thread of its own
            if "False" in execute(client, SWITCHING).text:
                break
            execute(client, "import time; time.sleep(0.2)")
        listing = markdown(execute(client, "%mcp list"))
        rows = table_rows(listing)
        assert "basic" not in rows and not servers_running(manager, "basic.py")
        assert not {"off", "stringargs", "numberenv", "token"} & set(rows), rows
        assert "**MCP configuration not used**" in listing  # the notice, once
        assert "**Configuration not used**" in listing and "is not valid JSON" in listing
        assert "fix it, then `%reload_ext nbagent`" in listing
        again = markdown(execute(client, "%mcp list"))
        assert "**MCP configuration not used**" not in again
        assert "**Configuration not used**" in again


def test_a_file_that_is_not_json_is_named_in_one_line_and_the_kernel_works(
    tmp_path: Path,
) -> None:
    """YAML in .mcp.json: one line says the file was not used and why; nothing else breaks."""
    (tmp_path / ".mcp.json").write_text("mcpServers:\n  basic:\n    command: python\n")
    with kernel(cwd=str(tmp_path)) as (manager, client):
        loaded = execute(client, "%load_ext nbagent")
        no_traceback(loaded)
        notice = markdown(loaded).strip()
        assert len(notice.splitlines()) == 1, notice
        assert "MCP configuration not used" in notice
        assert str(tmp_path / ".mcp.json") in notice
        assert "is not valid JSON: line 1 column 1" in notice

        magics = execute(
            client,
            "m = get_ipython().magics_manager.magics\n"
            "print('agent' in m['cell'], 'agent' in m['line'], 'mcp' in m['line'])",
        )
        assert magics.text.split() == ["True", "True", "True"], magics.text
        assert execute(client, "print(1 + 1)").text.strip() == "2"
        assert mcp_tools(client) == []
        listing = execute(client, "%mcp list")
        no_traceback(listing)
        assert table_rows(markdown(listing)) == {}, markdown(listing)
        assert "**Configuration not used**" in markdown(listing)

        added = execute(client, f"%mcp add basic -- {sys.executable} {FIXTURES / 'basic.py'}")
        no_traceback(added)
        wait_for_tools(client, "mcp__basic__")
        assert len(servers_running(manager, "basic.py")) == 1
