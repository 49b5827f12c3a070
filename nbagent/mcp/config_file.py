"""The ``mcpServers`` JSON of Claude Code and Claude Desktop: finding the file, reading it, and
checking its entries into an :class:`~nbagent.mcp.config.McpConfig`.

A file holds ``{"mcpServers": {NAME: ENTRY, ...}}``; each entry starts a local server over
stdio or connects to a remote one::

    {"mcpServers": {
        "git":    {"command": "uvx", "args": ["mcp-server-git"], "env": {"TOKEN": "${TOKEN}"}},
        "search": {"type": "http", "url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer ${API_KEY:-none}"}}
    }}

``type`` is ``stdio`` (the default when ``command`` is given), ``http`` (streamable HTTP;
the default when ``url`` is given) or ``sse`` (the older HTTP+SSE transport). ``${VAR}``
and ``${VAR:-default}`` are expanded from the environment in ``command``, ``args``,
``env``, ``cwd``, ``url`` and ``headers``; a ``cwd`` may start with ``~`` or ``~user``,
and a relative one is taken from the file's folder. A value no process or HTTP client could
use (a NUL character, a bad port, a line break in a header) is refused when read, naming the
server and the field, not when the server starts. A bad entry does not stop the others:
every fault of it is collected (:attr:`McpConfig.problems`) and it is left out, while a file
that is not JSON or has no ``mcpServers`` object is refused whole. An entry with
``"disabled": true`` is left out too (:attr:`McpConfig.disabled`). ``"max_tools": N`` (a
positive integer) registers the server's first N tools only; all servers together register
at most 9,000 (below the API's 10,000 deferred tools), the first servers of the file first
(:mod:`nbagent.mcp.budget`). Keys this module does not
know (other clients' ``autoApprove``, ...) are ignored, so the same file serves every client.

Files are looked up in the notebook's folder (``.mcp.json``), then in
``~/.nbagent/mcp.json`` (:func:`find_config`), unless a path is given. A ``.mcp.json`` so
found is the project's, not the user's: none of its servers starts, and none of their
``${VAR}`` is read, until the person approves it (:mod:`nbagent.mcp.approvals`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nbagent.mcp.config import PROJECT_FILE, USER_FILE, McpConfig, ServerSpec
from nbagent.mcp.config_entry import EntryReader, json_kind
from nbagent.mcp.errors import McpConfigError


def find_config(
    folder: str | os.PathLike[str] | None = None, home: Path | None = None
) -> Path | None:
    """Find the configuration file that applies to a notebook.

    Args:
        folder: The notebook's folder; its ``.mcp.json`` wins. The current folder when
            ``None``.
        home: The home folder (``~`` by default), for ``~/.nbagent/mcp.json``.

    Returns:
        The first file that exists, or ``None``.
    """
    candidates = [
        Path(folder if folder is not None else Path.cwd()) / PROJECT_FILE,
        (home if home is not None else Path.home()) / USER_FILE,
    ]
    return next((path for path in candidates if path.is_file()), None)


def load_config(
    path: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> McpConfig:
    """Read and check a configuration file.

    Args:
        path: The JSON file.
        environ: The variables for ``${VAR}`` expansion; ``os.environ`` by default.

    Returns:
        The configuration: its good entries, and the faults of the bad ones.

    Raises:
        McpConfigError: The file cannot be read, is not JSON, or has no ``mcpServers``
            object.
    """
    source = Path(path)
    return parse_config(read_file(source), source=source, environ=environ)


def read_file(path: str | os.PathLike[str]) -> Any:
    """Read a configuration file's JSON, as written (nothing checked, nothing expanded).

    Args:
        path: The JSON file.

    Returns:
        The parsed JSON.

    Raises:
        McpConfigError: The file cannot be read or is not JSON.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise McpConfigError(f"cannot be read: {exc}", source=str(source)) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpConfigError(
            f"is not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}",
            source=str(source),
        ) from exc


def parse_config(
    data: Any, source: Path | None = None, environ: Mapping[str, str] | None = None
) -> McpConfig:
    """Check a parsed ``{"mcpServers": {...}}`` document.

    Entries with ``"disabled": true`` are left out, and so is each bad entry, with every
    fault of it in :attr:`McpConfig.problems`; the good entries are kept.

    Args:
        data: The parsed JSON.
        source: The file it came from (named in errors; a relative ``cwd`` starts there).
        environ: The variables for ``${VAR}`` expansion; ``os.environ`` by default.

    Returns:
        The configuration.

    Raises:
        McpConfigError: The document is not an object with an ``mcpServers`` object, or a
            server name is empty.
    """
    where = str(source) if source else None
    if not isinstance(data, dict):
        raise McpConfigError(
            f'must be a JSON object with "mcpServers", not {json_kind(data)}.', source=where
        )
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(
            f'"mcpServers" must be an object of servers by name, not {json_kind(servers)}.',
            source=where,
        )
    base = source.parent if source else None
    parsed: dict[str, ServerSpec] = {}
    problems: list[McpConfigError] = []
    disabled: list[str] = []
    for name, entry in servers.items():
        reader = _reader(name, entry, environ, where)
        if reader.disabled():
            disabled.append(name)
            continue
        spec = reader.spec(base)
        if spec is not None:
            try:
                check_names({**parsed, name: spec}, source=where)
            except McpConfigError as exc:
                reader.faults.append(exc)
            else:
                parsed[name] = spec
        problems.extend(reader.faults)
    return McpConfig(
        servers=parsed, source=source, problems=tuple(problems), disabled=tuple(disabled)
    )


def parse_server(
    name: str,
    entry: Any,
    environ: Mapping[str, str] | None = None,
    base_dir: Path | None = None,
    source: str | None = None,
) -> ServerSpec:
    """Check one server entry and expand its variables.

    Args:
        name: The server's name.
        entry: The entry (``{"command": ...}`` or ``{"type": "http", "url": ...}``).
        environ: The variables for ``${VAR}`` expansion; ``os.environ`` by default.
        base_dir: The folder a relative ``cwd`` starts from.
        source: Where the entry came from, for error messages.

    Returns:
        The spec.

    Raises:
        McpConfigError: The name or a field is bad, or a variable without a default is unset
            (every fault in one message; ``field`` is the first's).
    """
    reader = _reader(name, entry, environ, source)
    spec = reader.spec(base_dir)
    if spec is not None:
        return spec
    first, *others = reader.faults
    head = fault_text(first, source).removeprefix(f"field {first.field!r} ")
    raise McpConfigError(
        "; ".join([head, *(fault_text(fault, source) for fault in others)]),
        server=name,
        field=first.field,
        source=source,
    )


def _reader(
    name: Any, entry: Any, environ: Mapping[str, str] | None, source: str | None
) -> EntryReader:
    """Return the reader of one entry, once its name is known to be usable."""
    if not isinstance(name, str) or not name.strip():
        raise McpConfigError(
            f"server names must be non-empty strings, not {name!r}.", source=source
        )
    return EntryReader(name, entry, os.environ if environ is None else environ, source)


def fault_text(fault: McpConfigError, source: str | os.PathLike[str] | None = None) -> str:
    """Return a fault's message without its ``MCP server 'NAME' (in FILE): `` prefix.

    Args:
        fault: A fault of one entry (or of the file).
        source: The file named in its message, if any.

    Returns:
        The rest, e.g. ``field 'args' must be a list of strings, not a string.``
    """
    where = str(source) if source is not None else None
    prefix = str(McpConfigError("", server=fault.server, source=where))
    return str(fault).removeprefix(prefix)


def check_names(servers: Mapping[str, ServerSpec], source: str | None = None) -> None:
    """Check that no two server names give the same tool-name prefix.

    Args:
        servers: The servers by name.
        source: Where they came from, for error messages.

    Raises:
        McpConfigError: Two names clash once cleaned (``my.db`` and ``my_db``).
    """
    from nbagent.mcp.tools import clean_server_name

    seen: dict[str, str] = {}
    for name in servers:
        key = clean_server_name(name).lower()
        if key in seen:
            raise McpConfigError(
                f"clashes with server {seen[key]!r}: both give tools named "
                f"mcp__{clean_server_name(name)}__*; rename one.",
                server=name,
                source=source,
            )
        seen[key] = name
