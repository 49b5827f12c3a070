"""Shared code of the benchmarks: real MCP tool definitions as nbagent Tools, and tables.

The data lives outside the repository, in ``../shared/benchmarks/`` relative to the repo
root (override with the ``NBAGENT_BENCHMARK_DATA`` environment variable):

- ``livemcpbench/tools.json``: 527 tools of 70 MCP servers; ``queries.json``: 95 tasks.
- ``github-mcp-server/tools.json``: the 117 tools of the GitHub MCP server.

MCP tools are named ``mcp__<server>__<tool>`` as an MCP client would name them. Server names
such as ``"BioMCP: Biomedical Model Context Protocol"`` break the API's name rule
``^[a-zA-Z0-9_-]{1,64}$``, so each server gets a slug: every run of other characters becomes
one ``-`` (which also keeps ``__`` out of it, so the name still parses), and the slug is cut
so that the server's longest tool name fits in 64 characters. A definition whose schema the
:class:`~nbagent.core.tool.Tool` model rejects is skipped and counted, never fixed up.

``list_tools`` asks a running server for its tools (the scripts that write ``benchmarks/data/``
use it).

Large catalogues (1,000 or 10,000 tools) cycle the real definitions under numbered copies
of their servers: ``mcp__github__create_issue``, then ``mcp__github2__create_issue``, ...
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

from nbagent.core.errors import ToolDefinitionError
from nbagent.core.text import MCP_PREFIX
from nbagent.core.tool import Tool

DATA_ENV = "NBAGENT_BENCHMARK_DATA"
"""The environment variable that overrides where the benchmark data is read from."""

GITHUB_SERVER = "github"
"""The server name given to the github-mcp-server definitions."""

MAX_NAME_LENGTH = 64
"""The longest tool name the API accepts."""

_NOT_SLUG = re.compile(r"[^A-Za-z0-9]+")
_NOT_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class McpDefinition:
    """One tool as an MCP server listed it, before it becomes an nbagent Tool."""

    server: str
    """The server's name as the data spells it (may contain spaces, punctuation, CJK)."""
    name: str
    """The tool's name as the server lists it."""
    description: str
    """The tool's description."""
    input_schema: dict[str, Any]
    """The tool's JSON Schema."""
    read_only: bool = False
    """The server's read-only annotation (github-mcp-server only)."""


@dataclass
class Catalogue:
    """A set of nbagent Tools built from MCP definitions, with where each came from."""

    tools: list[Tool] = field(default_factory=list)
    """The tools, in catalogue order."""
    origins: dict[str, McpDefinition] = field(default_factory=dict)
    """The definition behind each tool, by nbagent tool name."""
    skipped: list[str] = field(default_factory=list)
    """One ``server / tool: reason`` line per definition the Tool model rejected."""


def data_dir() -> Path:
    """Return the directory of the benchmark data.

    Returns:
        ``$NBAGENT_BENCHMARK_DATA`` if set, else ``../shared/benchmarks`` beside the repo root.
    """
    override = os.environ.get(DATA_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks"


def load_json(relative: str) -> Any:
    """Read one JSON file of the benchmark data.

    Args:
        relative: Its path under :func:`data_dir`, e.g. ``livemcpbench/tools.json``.

    Returns:
        The parsed JSON.
    """
    return json.loads((data_dir() / relative).read_text(encoding="utf-8"))


def livemcpbench_definitions() -> list[McpDefinition]:
    """Load the LiveMCPBench tools in file order.

    Returns:
        527 definitions of 70 servers.
    """
    return [
        McpDefinition(
            server=item["server"],
            name=item["name"],
            description=item.get("description") or "",
            input_schema=item["input_schema"],
        )
        for item in load_json("livemcpbench/tools.json")
    ]


async def list_tools(
    connect: Callable[[], AbstractAsyncContextManager[Any]],
) -> list[dict[str, Any]]:
    """Open one client session, page through ``tools/list`` and return the tools.

    Args:
        connect: Opens the transport (stdio or streamable HTTP) and yields its streams.

    Returns:
        The tools as ``{name, description, input_schema}``, in the server's order.
    """
    from mcp import ClientSession, types

    async with connect() as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        result = await session.list_tools()
        tools = list(result.tools)
        while result.next_cursor:
            page = types.PaginatedRequestParams(cursor=result.next_cursor)
            result = await session.list_tools(params=page)
            tools += result.tools
    return [
        {"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
        for t in tools
    ]


def github_definitions() -> list[McpDefinition]:
    """Load the github-mcp-server tools in file order, under the server name ``github``.

    Returns:
        117 definitions.
    """
    return [
        McpDefinition(
            server=GITHUB_SERVER,
            name=item["name"],
            description=item.get("description") or "",
            input_schema=item["input_schema"],
            read_only=bool(item.get("read_only")),
        )
        for item in load_json("github-mcp-server/tools.json")
    ]


def livemcpbench_queries() -> list[dict[str, Any]]:
    """Load the LiveMCPBench tasks.

    Returns:
        95 tasks, each with ``query`` (the task text) and ``relevant`` (``{name, servers}``).
    """
    return load_json("livemcpbench/queries.json")


def sanitise(text: str) -> str:
    """Turn any text into a name chunk the API accepts: runs of other characters become ``-``.

    Args:
        text: A server or tool name.

    Returns:
        The chunk, without leading or trailing ``-``; ``"server"`` if nothing is left.

    >>> sanitise("BioMCP: Biomedical Model Context Protocol")
    'BioMCP-Biomedical-Model-Context-Protocol'
    >>> sanitise("鸣潮 MCP Server")
    'MCP-Server'
    """
    return _NOT_SLUG.sub("-", text).strip("-") or "server"


def server_slugs(definitions: Iterable[McpDefinition], reserve: int = 0) -> dict[str, str]:
    """Give every server a distinct slug short enough for all of its tool names.

    Args:
        definitions: The definitions (servers in order of first appearance).
        reserve: Characters to keep free for a copy number appended to each slug.

    Returns:
        The slug of each server, by the server's name in the data.
    """
    longest: dict[str, int] = {}
    for definition in definitions:
        tool_length = len(sanitise_tool(definition.name))
        longest[definition.server] = max(longest.get(definition.server, 0), tool_length)
    slugs: dict[str, str] = {}
    taken: set[str] = set()
    for server, tool_length in longest.items():
        room = MAX_NAME_LENGTH - len(MCP_PREFIX) - len("__") - tool_length - reserve
        base = _cut(sanitise(server), room)
        slug = base
        for number in count(2):
            if slug.lower() not in taken:
                break
            suffix = f"-{number}"
            slug = _cut(base, room - len(suffix)) + suffix
        taken.add(slug.lower())
        slugs[server] = slug
    return slugs


def _cut(slug: str, room: int) -> str:
    """Shorten a slug to ``room`` characters, at a ``-`` where one is in reach."""
    if len(slug) <= room:
        return slug
    head = slug[: room + 1].rpartition("-")[0]
    return head or slug[:room]


def sanitise_tool(name: str) -> str:
    """Make a tool's own name fit the API's rule (keeping ``_`` and ``-``).

    Args:
        name: The name the server lists.

    Returns:
        The name with every run of other characters replaced by ``-``.
    """
    return _NOT_TOOL_NAME.sub("-", name)


def build_catalogue(definitions: Sequence[McpDefinition], size: int | None = None) -> Catalogue:
    """Build nbagent Tools from MCP definitions (construction validates each schema).

    Args:
        definitions: The definitions, in the order to use.
        size: How many tools to make by cycling the definitions under numbered server
            copies (``github``, ``github2``, ...); ``None`` makes one tool per definition.

    Returns:
        The catalogue; a definition the Tool model rejects is skipped and listed once in
        ``skipped``, so a sized catalogue still has exactly ``size`` tools.

    Raises:
        ValueError: No definition is usable, or two tools would get the same name.
    """
    copies = 1 if size is None else -(-size // max(1, len(definitions)))
    reserve = len(str(copies + 1)) if copies > 1 else 0
    slugs = server_slugs(definitions, reserve=reserve)
    catalogue = Catalogue()
    rejected: set[int] = set()
    target = len(definitions) if size is None else size
    for copy in count():
        suffix = str(copy + 1) if copy else ""
        for position, definition in enumerate(definitions):
            if len(catalogue.tools) == target or position in rejected:
                continue
            server = slugs[definition.server] + suffix
            name = f"{MCP_PREFIX}{server}__{sanitise_tool(definition.name)}"
            if name in catalogue.origins:
                raise ValueError(f"Two catalogue tools would be named {name!r}.")
            try:
                tool = _tool(name, server, definition)
            except ToolDefinitionError as exc:
                rejected.add(position)
                catalogue.skipped.append(f"{definition.server} / {definition.name}: {exc}")
                if size is None:
                    target -= 1
                continue
            catalogue.tools.append(tool)
            catalogue.origins[name] = definition
        if len(catalogue.tools) == target:
            return catalogue
        if len(rejected) == len(definitions):
            raise ValueError("No definition could be made into a Tool.")


def _tool(name: str, server: str, definition: McpDefinition) -> Tool:
    """Build the deferred MCP Tool of one definition."""
    return Tool(
        name=name,
        description=definition.description,
        input_schema=definition.input_schema,
        read_only=definition.read_only,
        is_mcp=True,
        server=server,
    )


def interleave_servers(definitions: Sequence[McpDefinition]) -> list[McpDefinition]:
    """Order definitions round-robin over their servers, so any prefix mixes many servers.

    Args:
        definitions: The definitions.

    Returns:
        The first tool of every server (in order of first appearance), then every second
        tool, and so on.
    """
    by_server: dict[str, list[McpDefinition]] = {}
    for definition in definitions:
        by_server.setdefault(definition.server, []).append(definition)
    depth = max((len(group) for group in by_server.values()), default=0)
    return [group[i] for i in range(depth) for group in by_server.values() if i < len(group)]


def run_line(argv: Sequence[str]) -> str:
    """Say how a benchmark was run: the command, the machine's ``nproc`` and Python version.

    Args:
        argv: ``sys.argv`` of the script.

    Returns:
        One Markdown line.
    """
    script = Path(argv[0])
    try:
        script = script.resolve().relative_to(Path.cwd())
    except ValueError:
        pass
    command = shlex.join(["python", str(script), *argv[1:]])
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"Command: `{command}` · nproc {nproc} · Python {platform.python_version()} "
        f"({sys.implementation.name}, {platform.machine()})"
    )


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> str:
    """Render a Markdown table.

    Args:
        headers: The column titles.
        rows: The cells, one sequence per row (each cell is shown with ``str``).
        align: One letter per column, ``l`` or ``r``; left by default.

    Returns:
        The table, without a trailing newline.
    """
    align = align.ljust(len(headers), "l")
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = [headers, rule, *([str(cell) for cell in row] for row in rows)]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)
