"""MCP server configuration: the ``mcpServers`` JSON of Claude Code and Claude Desktop.

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
``env``, ``cwd``, ``url`` and ``headers``; a relative ``cwd`` is taken from the file's
folder. Keys this module does not know (other clients' ``disabled``, ``autoApprove``, ...)
are ignored, so the same file serves every client.

Files are looked up in the notebook's folder (``.mcp.json``), then in
``~/.nbagent/mcp.json`` (:func:`find_config`), unless a path is given.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nbagent.mcp.errors import McpConfigError

PROJECT_FILE = ".mcp.json"
"""The file name looked up in the notebook's folder (as Claude Code names it)."""

USER_FILE = Path(".nbagent") / "mcp.json"
"""The file looked up under the home folder."""

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_STDIO_TYPES = ("stdio",)
_HTTP_TYPES = ("http", "streamable-http", "streamable_http", "streamableHttp")
_SSE_TYPES = ("sse",)


@dataclass(frozen=True)
class StdioSpec:
    """A local server, started as a child process that speaks MCP on stdin and stdout."""

    command: str
    """The executable (looked up on ``PATH`` when not a path)."""
    args: tuple[str, ...] = ()
    """Its command-line arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the small safe environment the process inherits (``HOME``,
    ``PATH``, ``USER``, ...); the kernel's other variables (API keys) are not passed on."""
    cwd: str | None = None
    """The working folder; the kernel's when ``None``."""

    @property
    def transport(self) -> Literal["stdio"]:
        """The transport's name: ``stdio``."""
        return "stdio"


@dataclass(frozen=True)
class HttpSpec:
    """A remote server, reached over streamable HTTP (or the older HTTP+SSE transport)."""

    url: str
    """The endpoint, e.g. ``http://127.0.0.1:8000/mcp``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers sent with every request (``Authorization``, ...)."""
    transport: Literal["http", "sse"] = "http"
    """``http`` (streamable HTTP) or ``sse`` (HTTP+SSE, deprecated by the protocol)."""


ServerSpec = StdioSpec | HttpSpec
"""How to reach one MCP server."""


@dataclass(frozen=True)
class McpConfig:
    """The servers of one configuration, by name, in the file's order."""

    servers: dict[str, ServerSpec]
    """Each server's spec, by the name its tools are prefixed with."""
    source: Path | None = None
    """The file it was read from, if any."""


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
        The configuration.

    Raises:
        McpConfigError: The file cannot be read, is not JSON, or an entry is bad.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise McpConfigError(f"cannot be read: {exc}", source=str(source)) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpConfigError(
            f"is not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}",
            source=str(source),
        ) from exc
    return parse_config(data, source=source, environ=environ)


def parse_config(
    data: Any, source: Path | None = None, environ: Mapping[str, str] | None = None
) -> McpConfig:
    """Check a parsed ``{"mcpServers": {...}}`` document.

    Args:
        data: The parsed JSON.
        source: The file it came from (named in errors; a relative ``cwd`` starts there).
        environ: The variables for ``${VAR}`` expansion; ``os.environ`` by default.

    Returns:
        The configuration.

    Raises:
        McpConfigError: The document or one of its entries is bad.
    """
    where = str(source) if source else None
    if not isinstance(data, dict):
        raise McpConfigError(
            f'must be a JSON object with "mcpServers", not {_kind(data)}.', source=where
        )
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(
            f'"mcpServers" must be an object of servers by name, not {_kind(servers)}.',
            source=where,
        )
    base = source.parent if source else None
    parsed = {
        name: parse_server(name, entry, environ=environ, base_dir=base, source=where)
        for name, entry in servers.items()
    }
    check_names(parsed, source=where)
    return McpConfig(servers=parsed, source=source)


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
        McpConfigError: The name or a field is bad, or a variable without a default is unset.
    """
    env_vars = os.environ if environ is None else environ

    def fail(message: str, field_name: str | None = None) -> McpConfigError:
        return McpConfigError(message, server=name, field=field_name, source=source)

    if not isinstance(name, str) or not name.strip():
        raise McpConfigError(
            f"server names must be non-empty strings, not {name!r}.", source=source
        )
    if not isinstance(entry, dict):
        raise fail(f"must be an object with a command or a url, not {_kind(entry)}.")
    kind = entry.get("type")
    if kind is not None and kind not in (*_STDIO_TYPES, *_HTTP_TYPES, *_SSE_TYPES):
        raise fail(f'must be "stdio", "http" or "sse", not {kind!r}.', "type")
    if kind is None:
        if "command" in entry and "url" in entry:
            raise fail('has both "command" and "url": give one (or set "type").')
        if "command" not in entry and "url" not in entry:
            raise fail('needs a "command" (a local server) or a "url" (a remote one).')
        kind = "stdio" if "command" in entry else "http"

    def text(field_name: str, value: Any) -> str:
        if not isinstance(value, str):
            raise fail(f"must be a string, not {_kind(value)}.", field_name)
        try:
            return expand(value, env_vars)
        except KeyError as exc:
            raise fail(
                f"uses ${{{exc.args[0]}}}, which is not set (set it, or write "
                f"${{{exc.args[0]}:-default}}).",
                field_name,
            ) from None

    def strings(field_name: str) -> dict[str, str]:
        value = entry.get(field_name, {})
        if not isinstance(value, dict):
            raise fail(f"must be an object of strings, not {_kind(value)}.", field_name)
        return {str(key): text(f"{field_name}.{key}", item) for key, item in value.items()}

    if kind in _STDIO_TYPES:
        if "command" not in entry:
            raise fail('is required for a stdio server ("type": "stdio").', "command")
        command = text("command", entry["command"])
        if not command.strip():
            raise fail("must not be empty.", "command")
        args = entry.get("args", [])
        if not isinstance(args, list):
            raise fail(f"must be a list of strings, not {_kind(args)}.", "args")
        cwd = entry.get("cwd")
        cwd_text = None if cwd is None else text("cwd", cwd)
        if cwd_text is not None and base_dir is not None:
            cwd_text = str(base_dir / Path(cwd_text).expanduser())
        return StdioSpec(
            command=command,
            args=tuple(text(f"args.{i}", arg) for i, arg in enumerate(args)),
            env=strings("env"),
            cwd=cwd_text,
        )
    if "url" not in entry:
        raise fail(f"is required for an {kind} server.", "url")
    url = text("url", entry["url"])
    if not re.match(r"^https?://[^/\s]+", url):
        raise fail(f"must be an http:// or https:// address, not {url!r}.", "url")
    return HttpSpec(
        url=url, headers=strings("headers"), transport="sse" if kind in _SSE_TYPES else "http"
    )


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


def expand(value: str, environ: Mapping[str, str]) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}`` in a string.

    The default applies when the variable is unset or empty (as in the shell). Text
    without ``${`` is returned unchanged; there is no escape and no nesting.

    Args:
        value: The text.
        environ: The variables.

    Returns:
        The expanded text.

    Raises:
        KeyError: A variable without a default is unset (the variable's name).
    """

    def replace(match: re.Match[str]) -> str:
        variable, default = match.group(1), match.group(2)
        found = environ.get(variable)
        if found:
            return found
        if default is not None:
            return default
        if found is not None:
            return found
        raise KeyError(variable)

    return _VARIABLE.sub(replace, value)


def _kind(value: Any) -> str:
    """Name a JSON value's type as the user wrote it."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)
