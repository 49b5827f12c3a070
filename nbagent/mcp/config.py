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
``env``, ``cwd``, ``url`` and ``headers``; a ``cwd`` may start with ``~`` or ``~user``,
and a relative one is taken from the file's folder. A value no process or HTTP client could
use (a NUL character, a bad port, a line break in a header) is refused here, naming the
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

import dataclasses
import json
import os
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from nbagent.core.secrets import redact
from nbagent.mcp.errors import McpConfigError

PROJECT_FILE = ".mcp.json"
"""The file name looked up in the notebook's folder (as Claude Code names it)."""

USER_FILE = Path(".nbagent") / "mcp.json"
"""The file looked up under the home folder."""

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_EXPANDED = ("command", "args", "env", "cwd", "url", "headers")
"""The fields whose ``${VAR}`` are expanded."""
_STDIO_TYPES = ("stdio",)
_HTTP_TYPES = ("http", "streamable-http", "streamable_http", "streamableHttp")
_SSE_TYPES = ("sse",)
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""An HTTP header name (a token of RFC 9110)."""
_NOT_IN_HEADER = re.compile(r"[^\t\x20-\x7e]")
"""A character an HTTP header value cannot hold (clients send them as ASCII, one line)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""An ASCII control character (no URL may hold one)."""
_T = TypeVar("_T")


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
    max_tools: int | None = None
    """Of its tools, the first this many are registered; all when ``None``."""

    @property
    def transport(self) -> Literal["stdio"]:
        """The transport's name: ``stdio``."""
        return "stdio"

    def describe(self) -> str:
        """Say what is run, for the user: the command line, and the names (not the values)
        of the variables set (secrets in the command line are redacted)."""
        env = f" (env: {', '.join(sorted(self.env))})" if self.env else ""
        return redact(shlex.join([self.command, *self.args])) + env


@dataclass(frozen=True)
class HttpSpec:
    """A remote server, reached over streamable HTTP (or the older HTTP+SSE transport)."""

    url: str
    """The endpoint, e.g. ``http://127.0.0.1:8000/mcp``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers sent with every request (``Authorization``, ...)."""
    transport: Literal["http", "sse"] = "http"
    """``http`` (streamable HTTP) or ``sse`` (HTTP+SSE, deprecated by the protocol)."""
    max_tools: int | None = None
    """Of its tools, the first this many are registered; all when ``None``."""

    def describe(self) -> str:
        """Say what is reached, for the user: the URL (secrets redacted), and the names (not
        the values) of the headers sent."""
        headers = f" (headers: {', '.join(sorted(self.headers))})" if self.headers else ""
        return f"{self.transport} {redact(self.url)}{headers}"


ServerSpec = StdioSpec | HttpSpec
"""How to reach one MCP server."""


@dataclass(frozen=True)
class McpConfig:
    """The servers of one configuration, by name, in the file's order."""

    servers: dict[str, ServerSpec]
    """Each server's spec, by the name its tools are prefixed with."""
    source: Path | None = None
    """The file it was read from, if any."""
    problems: tuple[McpConfigError, ...] = ()
    """Every fault of the entries left out for them, each naming its server and field
    (``server``, ``field``), in the file's order."""
    disabled: tuple[str, ...] = ()
    """The servers left out because their entry says ``"disabled": true``."""

    def faults(self, name: str) -> list[McpConfigError]:
        """Return the faults of one server's entry (none when it is good or not there).

        Args:
            name: The server's name.
        """
        return [problem for problem in self.problems if problem.server == name]


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
            f'must be a JSON object with "mcpServers", not {_kind(data)}.', source=where
        )
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(
            f'"mcpServers" must be an object of servers by name, not {_kind(servers)}.',
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
) -> _EntryReader:
    """Return the reader of one entry, once its name is known to be usable."""
    if not isinstance(name, str) or not name.strip():
        raise McpConfigError(
            f"server names must be non-empty strings, not {name!r}.", source=source
        )
    return _EntryReader(name, entry, os.environ if environ is None else environ, source)


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


@dataclass(frozen=True)
class _EntryReader:
    """Reads the fields of one server entry; each fault is an error naming the field.

    A fault of one field does not stop the reading of the others: :meth:`spec` collects them
    all in :attr:`faults`.
    """

    name: str
    entry: Any
    environ: Mapping[str, str]
    source: str | None
    faults: list[McpConfigError] = field(default_factory=list)

    def disabled(self) -> bool:
        """Return whether the entry says ``"disabled": true``."""
        return isinstance(self.entry, dict) and self.entry.get("disabled") is True

    def spec(self, base_dir: Path | None) -> ServerSpec | None:
        """Return the entry's spec, or ``None`` when it has faults (then in :attr:`faults`).

        Args:
            base_dir: The folder a relative ``cwd`` starts from.
        """
        disabled = self.entry.get("disabled") if isinstance(self.entry, dict) else None
        if disabled is not None and not isinstance(disabled, bool):
            self.faults.append(
                self.fail(f"must be true or false, not {_kind(disabled)}.", "disabled")
            )
        try:
            kind = self.kind()
            spec = self.stdio(base_dir) if kind in _STDIO_TYPES else self.http(kind in _SSE_TYPES)
        except McpConfigError as exc:
            self.faults.append(exc)
            return None
        max_tools = self.attempt(self.max_tools)
        if self.faults or spec is None:
            return None
        return dataclasses.replace(spec, max_tools=max_tools) if max_tools is not None else spec

    def max_tools(self) -> int | None:
        """Return how many of the server's tools to register at most (``None``: all)."""
        value = self.entry.get("max_tools")
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise self.fail(
                f"must be a whole number of tools, 1 or more, not {value!r}.", "max_tools"
            )
        return value

    def attempt(self, read: Callable[..., _T], *args: Any) -> _T | None:
        """Return what ``read(*args)`` reads, or ``None`` with its fault kept in :attr:`faults`."""
        try:
            return read(*args)
        except McpConfigError as exc:
            self.faults.append(exc)
            return None

    def kind(self) -> str:
        """Return the entry's ``type``, given or implied by its ``command`` or ``url``."""
        if not isinstance(self.entry, dict):
            raise self.fail(f"must be an object with a command or a url, not {_kind(self.entry)}.")
        kind = self.entry.get("type")
        if kind is not None and kind not in (*_STDIO_TYPES, *_HTTP_TYPES, *_SSE_TYPES):
            raise self.fail(f'must be "stdio", "http" or "sse", not {kind!r}.', "type")
        if kind is not None:
            return str(kind)
        if "command" in self.entry and "url" in self.entry:
            raise self.fail('has both "command" and "url": give one (or set "type").')
        if "command" not in self.entry and "url" not in self.entry:
            raise self.fail('needs a "command" (a local server) or a "url" (a remote one).')
        return "stdio" if "command" in self.entry else "http"

    def stdio(self, base_dir: Path | None) -> StdioSpec | None:
        """Read a local server (command, arguments, variables, folder); ``None`` on a fault.

        Args:
            base_dir: The folder a relative ``cwd`` starts from.
        """
        command = self.attempt(self.command)
        args = self.attempt(self.args)
        env = self.env()
        cwd = self.entry.get("cwd")
        folder = None if cwd is None else self.attempt(self.folder, "cwd", cwd, base_dir)
        if command is None or args is None:
            return None
        return StdioSpec(command=command, args=args, env=env, cwd=folder)

    def command(self) -> str:
        """Return the executable."""
        if "command" not in self.entry:
            raise self.fail('is required for a stdio server ("type": "stdio").', "command")
        command = self.os_text("command", self.entry["command"])
        if not command.strip():
            raise self.fail("must not be empty.", "command")
        return command

    def args(self) -> tuple[str, ...]:
        """Return the command-line arguments (every bad one's fault kept)."""
        args = self.entry.get("args", [])
        if not isinstance(args, list):
            raise self.fail(f"must be a list of strings, not {_kind(args)}.", "args")
        read = [self.attempt(self.os_text, f"args.{i}", arg) for i, arg in enumerate(args)]
        return tuple(arg for arg in read if arg is not None)

    def http(self, sse: bool) -> HttpSpec | None:
        """Read a remote server: its address and headers (``None`` on a fault).

        Args:
            sse: Whether it speaks the older HTTP+SSE transport.
        """
        url = self.attempt(self.url, sse)
        headers = self.headers()
        if url is None:
            return None
        return HttpSpec(url=url, headers=headers, transport="sse" if sse else "http")

    def url(self, sse: bool) -> str:
        """Return the endpoint, expanded and checked.

        Args:
            sse: Whether it speaks the older HTTP+SSE transport.
        """
        if "url" not in self.entry:
            raise self.fail(f"is required for an {'sse' if sse else 'http'} server.", "url")
        url = self.text("url", self.entry["url"])
        if not re.match(r"^https?://[^/\s]+", url):
            # The value as written: once expanded, a ${TOKEN} in it would be shown.
            written = self.entry["url"]
            raise self.fail(f"must be an http:// or https:// address, not {written!r}.", "url")
        problem = _url_problem(url)
        if problem:
            raise self.fail(problem, "url")
        return url

    def text(self, field_name: str, value: Any) -> str:
        """Return a string field with its ``${VAR}`` expanded."""
        if not isinstance(value, str):
            raise self.fail(f"must be a string, not {_kind(value)}.", field_name)
        try:
            return expand(value, self.environ)
        except KeyError as exc:
            raise self.fail(
                f"uses ${{{exc.args[0]}}}, which is not set (set it, or write "
                f"${{{exc.args[0]}:-default}}).",
                field_name,
            ) from None

    def os_text(self, field_name: str, value: Any) -> str:
        """Return a string field the operating system is given (a command, an argument...)."""
        expanded = self.text(field_name, value)
        problem = _os_string_problem(expanded)
        if problem:
            raise self.fail(problem, field_name)
        return expanded

    def folder(self, field_name: str, value: Any, base_dir: Path | None) -> str:
        """Return a folder with ``~`` and ``~user`` expanded, a relative one under ``base_dir``."""
        expanded = os.path.expanduser(self.os_text(field_name, value))
        path = Path(expanded)
        if expanded.startswith("~"):
            head = path.parts[0]
            why = (
                f"there is no user {head[1:]!r} on this machine"
                if head != "~"
                else "HOME is not set and the current user has no home folder"
            )
            raise self.fail(
                f"starts with {head!r}, but {why}; write the folder in full.", field_name
            )
        return str(base_dir / path if base_dir is not None else path)

    def env(self) -> dict[str, str]:
        """Return the variables to add to the server's environment (every fault kept)."""
        variables: dict[str, str] = {}
        for key, value in (self.attempt(self.mapping, "env") or {}).items():
            if not key or "=" in key or "\0" in key:
                self.faults.append(
                    self.fail(f"has a variable name that cannot be set: {key!r}.", "env")
                )
                continue
            expanded = self.attempt(self.os_text, f"env.{key}", value)
            if expanded is not None:
                variables[key] = expanded
        return variables

    def headers(self) -> dict[str, str]:
        """Return the headers to send with every request (every fault kept)."""
        headers: dict[str, str] = {}
        for key, value in (self.attempt(self.mapping, "headers") or {}).items():
            header = self.attempt(self.header, key, value)
            if header is not None:
                headers[key] = header
        return headers

    def header(self, key: str, value: Any) -> str:
        """Return one header's value, expanded and checked."""
        if not _HEADER_NAME.fullmatch(key):
            raise self.fail(f"has a header name that is not valid: {key!r}.", "headers")
        header = self.text(f"headers.{key}", value)
        problem = _header_value_problem(header)
        if problem:
            raise self.fail(problem, f"headers.{key}")
        return header

    def mapping(self, field_name: str) -> dict[str, Any]:
        """Return an object field (empty when missing), its keys as strings."""
        value = self.entry.get(field_name, {})
        if not isinstance(value, dict):
            raise self.fail(f"must be an object of strings, not {_kind(value)}.", field_name)
        return {str(key): item for key, item in value.items()}

    def fail(self, message: str, field_name: str | None = None) -> McpConfigError:
        """Return the error for a fault of this entry (of a field of it, when given)."""
        return McpConfigError(message, server=self.name, field=field_name, source=self.source)


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


def variables_of(entry: Any) -> tuple[str, ...]:
    """Name the environment variables an entry's ``${VAR}`` would read, without reading them.

    Only the fields that are expanded count (``command``, ``args``, ``env``, ``cwd``, ``url``,
    ``headers``: their strings, at any depth, whatever their shape).

    Args:
        entry: A server entry as written.

    Returns:
        The names, sorted, each once.
    """
    if not isinstance(entry, dict):
        return ()
    texts: list[str] = []
    pending = [entry.get(name) for name in _EXPANDED]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
    return tuple(sorted({match.group(1) for text in texts for match in _VARIABLE.finditer(text)}))


def _os_string_problem(value: str) -> str | None:
    """Say why a string cannot be handed to the operating system, if it cannot."""
    if "\0" in value:
        return "must not hold a NUL character (\\0): no process can be given one."
    try:
        os.fsencode(value)
    except UnicodeEncodeError as exc:
        return (
            f"holds a character the operating system cannot take ({value[exc.start]!r} at "
            f"position {exc.start})."
        )
    return None


def _url_problem(url: str) -> str | None:
    """Say why an http(s) address cannot be used, if it cannot (its scheme checked already)."""
    bad = _CONTROL.search(url)
    if bad:
        return f"must not hold control characters ({bad.group()!r} at position {bad.start()})."
    try:
        url.encode("utf-8")
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except (UnicodeEncodeError, ValueError) as exc:
        return f"is not a valid address: {exc}."
    if not parts.hostname or " " in parts.hostname:
        return f"has no valid host name (got {parts.hostname or ''!r})."
    return None


def _header_value_problem(value: str) -> str | None:
    """Say why a string cannot be sent as a header value, if it cannot."""
    bad = _NOT_IN_HEADER.search(value)
    if not bad:
        return None
    return (
        "must hold printable ASCII only (no line breaks or control characters; "
        f"found {bad.group()!r} at position {bad.start()})."
    )


def _kind(value: Any) -> str:
    """Name a JSON value's type as the user wrote it."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)
