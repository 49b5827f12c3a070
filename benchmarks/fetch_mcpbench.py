"""Write ``benchmarks/data/mcpbench/``: a tool-retrieval dev set built from MCP-Bench.

MCP-Bench (https://github.com/Accenture/mcp-bench, Apache-2.0) ships 28 MCP servers under
``mcp_servers/`` (started as ``mcp_servers/commands.json`` says) and 104 tasks under ``tasks/``.
Three steps, each reading what the one before wrote:

1. ``--list-tools``: start every server of a checkout (stdio, or streamable HTTP where
   ``commands.json`` says so), ask ``tools/list`` and write the answers to ``--dump``. The
   servers' dependencies must be installed first: npm packages in each Node server's directory
   (built as ``mcp_servers/install.sh`` does), one venv per Python server under ``--venvs``,
   named after the server's top directory in ``mcp_servers/``. API keys get a dummy value.
   A server that fails is reported and left out of the dump; its tools may be added to the
   dump by hand (extracted from its source) with ``"method": "static"``.
2. Always: ``tools.json`` from the dump, servers in ``commands.json`` order.
3. Always: ``tasks.json``: each task's ``fuzzy_description`` as the query, and as relevant the
   tools of the task's servers that its ``task_description`` or ``dependency_analysis`` names
   (see ``mentioned``); tasks naming none are dropped.

Run ``python benchmarks/fetch_mcpbench.py --repo /tmp/mcpbench/src [--list-tools]`` from the
repo root, with a checkout of MCP-Bench at ``--repo``; the JSON is committed, so the
benchmarks need neither the checkout nor the servers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

DEFAULT_REPO = Path("/tmp/mcpbench/src")
"""Where a checkout of MCP-Bench is looked for."""

DEFAULT_VENVS = Path("/tmp/mcpbench/venvs-by-dir")
"""Where the Python servers' venvs are looked for, one per top directory of ``mcp_servers/``."""

DEFAULT_DUMP = Path("/tmp/mcpbench/tool_dump.json")
"""The tool dump: ``{server: {"method": "run" | "static", "tools": [...]}}``."""

OUTPUT = Path(__file__).resolve().parent / "data" / "mcpbench"
"""The directory written."""

TASK_FILES = {
    "single": "mcpbench_tasks_single_runner_format.json",
    "2server": "mcpbench_tasks_multi_2server_runner_format.json",
    "3server": "mcpbench_tasks_multi_3server_runner_format.json",
}
"""Task kind → file under ``tasks/``."""

TIMEOUT = 120.0
"""Seconds one server gets to start and list its tools."""

ABOUT = (
    "Tool-retrieval dev set built from MCP-Bench (https://github.com/Accenture/mcp-bench, commit "
    "{commit}; Apache-2.0) by benchmarks/fetch_mcpbench.py: the {total} tasks of "
    "tasks/mcpbench_tasks_{{single,multi_2server,multi_3server}}_runner_format.json. query is the "
    "task's fuzzy_description verbatim (the user-style text that hides tool names); servers is the "
    "task's server list. relevant is derived from the task's task_description and "
    "dependency_analysis (the solution plan): a tool of one of the task's servers (names as in "
    "tools.json, which lists the tools the servers answer to tools/list, read from their source "
    "for {static}; servers left out of it: {missing}) is relevant when its exact name "
    "(case-sensitive, as a whole identifier) is written as 'Server:name' or 'Server: name', in "
    "backticks, or directly followed by '('; a name that is "
    "not a plain lowercase word (it has '_', '-', a digit or a capital, e.g. search_arxiv, "
    "getPoolOHLCV, get-model-info) also counts wherever it stands alone; a plain-word name "
    "(search, fetch, think, mean, rank, curl, ...) counts bare only as an item of a written list "
    "(separated by ',', ';', '/', '+', arrows, 'and', 'or') next to a tool that counts, as in "
    "'Math MCP:mean, "
    "median, max' or 'multiply_matrices and transpose'; prose such as 'a literature search' or "
    "'compute the determinant' does not count. Names mentioned that no server has (e.g. "
    "'swagger-validator') are ignored. {dropped} task(s) were dropped because they name no tool "
    "that way ({ids}); {kept} are kept ({kinds})."
)
"""The ``about`` paragraph of ``tasks.json``; filled in by ``main``."""


def server_argv(spec: dict[str, Any], servers_dir: Path, venvs: Path) -> tuple[list[str], Path]:
    """Turn one ``commands.json`` entry into an argv and a working directory.

    ``uv run`` is dropped; ``python`` (or a console script) is taken from the server's venv.

    Args:
        spec: The entry (``cmd``, ``cwd``, ...).
        servers_dir: The checkout's ``mcp_servers`` directory.
        venvs: The directory holding one venv per Python server.

    Returns:
        ``(argv, cwd)``.
    """
    relative = spec["cwd"].removeprefix("../")
    argv = spec["cmd"].split()
    if argv[:2] == ["uv", "run"]:
        argv = argv[2:]
    if argv[0] != "node":
        argv[0] = str(venvs / relative.split("/")[0] / "bin" / argv[0])
    return argv, servers_dir / relative


def server_tools(
    spec: dict[str, Any], argv: list[str], cwd: Path, log: Path
) -> list[dict[str, Any]]:
    """Start one server, list its tools and stop it.

    Args:
        spec: Its ``commands.json`` entry (``env``, and ``transport``/``port``/``endpoint``).
        argv: The command that starts it.
        cwd: Its working directory.
        log: Where its stderr goes.

    Returns:
        The tools, as ``list_tools`` returns them.
    """
    from catalogue import list_tools
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    env = {**os.environ, **{key: "dummy" for key in spec.get("env", [])}}
    with log.open("w") as errlog:
        if spec.get("transport") != "http":
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
            connect = partial(stdio_client, params, errlog=errlog)
            return asyncio.run(asyncio.wait_for(list_tools(connect), TIMEOUT))
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=errlog, stderr=errlog)
        try:
            wait_for_port(spec["port"], TIMEOUT)
            url = f"http://127.0.0.1:{spec['port']}{spec.get('endpoint', '/mcp')}"
            return asyncio.run(
                asyncio.wait_for(list_tools(partial(streamable_http_client, url)), TIMEOUT)
            )
        finally:
            process.terminate()
            process.wait(10)


def wait_for_port(port: int, timeout: float) -> None:
    """Wait until something listens on ``127.0.0.1:port``.

    Args:
        port: The TCP port.
        timeout: Seconds to wait at most.

    Raises:
        TimeoutError: If nothing listens in time.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on port {port}")


def dump_tools(repo: Path, venvs: Path, dump: Path) -> None:
    """Run every server of ``commands.json`` and write (or update) the dump.

    Args:
        repo: The MCP-Bench checkout.
        venvs: The directory holding one venv per Python server.
        dump: The dump file; servers already in it as ``static`` are kept.
    """
    servers_dir = repo / "mcp_servers"
    commands = json.loads((servers_dir / "commands.json").read_text())
    old = json.loads(dump.read_text()) if dump.exists() else {}
    listed: dict[str, Any] = {k: v for k, v in old.items() if v["method"] == "static"}
    logs = dump.parent / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for server, spec in commands.items():
        if server in listed:
            print(f"{server}: {len(listed[server]['tools'])} tools (static, kept from the dump)")
            continue
        argv, cwd = server_argv(spec, servers_dir, venvs)
        log = logs / (re.sub(r"\W+", "_", server) + ".log")
        try:
            tools = server_tools(spec, argv, cwd, log)
        except Exception as error:  # noqa: BLE001 - one failing server must not stop the rest
            print(f"{server}: FAILED ({type(error).__name__}: {error}); see {log}", file=sys.stderr)
            continue
        listed[server] = {"method": "run", "tools": tools}
        print(f"{server}: {len(tools)} tools")
    dump.write_text(json.dumps(listed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


LIST_SEPARATOR = r"\s*(?:,|;|/|\+|→|➔|->)\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+"
"""What separates the items of a written list of tools (``a, b and c``, ``a → b``)."""


def mentioned(text: str, server: str, names: Sequence[str]) -> list[str]:
    """Return the tools of one server that a task text names, in the server's order.

    A tool counts when written as ``Server:name`` (or ``Server: name``), in backticks, or
    directly followed by ``(``. A name that is not a plain lowercase word (it has ``_``,
    ``-``, a digit or a capital) also counts wherever it stands alone as an identifier. A
    plain word (``search``, ``mean``, ``rank``) counts bare only as an item of a written list
    (see ``LIST_SEPARATOR``) next to a tool that counts, e.g. ``Math MCP:mean, median, max``
    or ``multiply_matrices and transpose``.

    Args:
        text: The task's ``task_description`` and ``dependency_analysis``.
        server: The server's name as the tasks spell it.
        names: The server's tool names (case-sensitive).

    Returns:
        The names the text mentions.
    """
    before, after = r"(?<![\w\-./])", r"(?![\w\-])"

    def found(name: str) -> bool:
        word = re.escape(name)
        patterns = [rf"{re.escape(server)}\s*:\s*{word}{after}", rf"`{word}`", rf"{before}{word}\("]
        if not re.fullmatch(r"[a-z]+", name):
            patterns.append(rf"{before}{word}{after}")
        return any(re.search(pattern, text) for pattern in patterns)

    hits = {name for name in names if found(name)}
    while hits:
        anchor = "|".join(re.escape(name) for name in sorted(hits, key=len, reverse=True))
        listed = {
            name
            for name in set(names) - hits
            if re.search(
                rf"(?<![\w\-])(?:{anchor})`?(?:{LIST_SEPARATOR})`?{re.escape(name)}{after}"
                rf"|(?<![\w\-]){re.escape(name)}`?(?:{LIST_SEPARATOR})`?(?:{anchor}){after}",
                text,
            )
        }
        if not listed:
            break
        hits |= listed
    return [name for name in names if name in hits]


def build_tasks(repo: Path, tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Read the three task files and find each task's relevant tools.

    Args:
        repo: The MCP-Bench checkout.
        tools: The rows of ``tools.json``.

    Returns:
        ``(kept tasks, ids of the tasks dropped for naming no tool)``.
    """
    by_server: dict[str, list[str]] = {}
    for tool in tools:
        by_server.setdefault(tool["server"], []).append(tool["name"])
    kept, dropped = [], []
    for kind, filename in TASK_FILES.items():
        for group in json.loads((repo / "tasks" / filename).read_text())["server_tasks"]:
            for task in group["tasks"]:
                text = f"{task['task_description']}\n{task['dependency_analysis']}"
                relevant = [
                    {"server": server, "name": name}
                    for server in group["servers"]
                    for name in mentioned(text, server, by_server.get(server, []))
                ]
                if not relevant:
                    dropped.append(task["task_id"])
                    continue
                kept.append(
                    {
                        "id": task["task_id"],
                        "kind": kind,
                        "servers": group["servers"],
                        "query": task["fuzzy_description"],
                        "relevant": relevant,
                    }
                )
    return kept, dropped


def main(argv: Sequence[str] | None = None) -> None:
    """Optionally run the servers, then write ``tools.json`` and ``tasks.json``.

    Args:
        argv: Command-line arguments; ``sys.argv[1:]`` by default.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="MCP-Bench checkout")
    parser.add_argument("--dump", type=Path, default=DEFAULT_DUMP, help="tool dump (JSON)")
    parser.add_argument("--list-tools", action="store_true", help="run the servers first")
    parser.add_argument("--venvs", type=Path, default=DEFAULT_VENVS, help="Python servers' venvs")
    args = parser.parse_args(argv)
    if args.list_tools:
        dump_tools(args.repo, args.venvs, args.dump)
    order = json.loads((args.repo / "mcp_servers" / "commands.json").read_text())
    dump = json.loads(args.dump.read_text())
    tools = [
        {"server": server, **tool}
        for server in order
        if server in dump
        for tool in dump[server]["tools"]
    ]
    tasks, dropped = build_tasks(args.repo, tools)
    commit = subprocess.run(
        ["git", "-C", str(args.repo), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    kinds = ", ".join(f"{sum(t['kind'] == k for t in tasks)} {k}" for k in TASK_FILES)
    about = ABOUT.format(
        commit=commit,
        total=len(tasks) + len(dropped),
        missing=", ".join(s for s in order if s not in dump) or "none",
        static=", ".join(s for s in order if dump.get(s, {}).get("method") == "static") or "none",
        dropped=len(dropped),
        ids=", ".join(dropped) or "none",
        kept=len(tasks),
        kinds=kinds,
    )
    OUTPUT.mkdir(parents=True, exist_ok=True)
    for filename, payload in (
        ("tools.json", tools),
        ("tasks.json", {"about": about, "tasks": tasks}),
    ):
        (OUTPUT / filename).write_text(
            json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    print(f"wrote {len(tools)} tools and {len(tasks)} tasks ({len(dropped)} dropped) to {OUTPUT}")


if __name__ == "__main__":
    main()
