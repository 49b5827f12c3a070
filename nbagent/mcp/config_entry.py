"""One server entry of an ``mcpServers`` file read field by field: ``${VAR}`` expanded, and a
value no process or HTTP client could use (a NUL character, a bad port, a line break in a
header) refused, naming the server and the field; every fault of an entry collected."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from nbagent.mcp.config import HttpSpec, ServerSpec, StdioSpec
from nbagent.mcp.errors import McpConfigError

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_EXPANDED = ("command", "args", "env", "cwd", "url", "headers")
"""The fields whose ``${VAR}`` are expanded."""
STDIO_TYPES = ("stdio",)
_HTTP_TYPES = ("http", "streamable-http", "streamable_http", "streamableHttp")
SSE_TYPES = ("sse",)
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""An HTTP header name (a token of RFC 9110)."""
_NOT_IN_HEADER = re.compile(r"[^\t\x20-\x7e]")
"""A character an HTTP header value cannot hold (clients send them as ASCII, one line)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""An ASCII control character (no URL may hold one)."""
_T = TypeVar("_T")


@dataclass(frozen=True)
class EntryReader:
    """Reads the fields of one server entry; each fault is an error naming the field.

    A fault of one field does not stop the reading of the others: :meth:`spec` collects them
    all in :attr:`faults`.
    """

    name: str
    """The server's name."""
    entry: Any
    """The entry as written."""
    environ: Mapping[str, str]
    """The variables for ``${VAR}`` expansion."""
    source: str | None
    """Where the entry came from, for error messages."""
    faults: list[McpConfigError] = field(default_factory=list)
    """Every fault found so far."""

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
                self.fail(f"must be true or false, not {json_kind(disabled)}.", "disabled")
            )
        try:
            kind = self.kind()
            spec = self.stdio(base_dir) if kind in STDIO_TYPES else self.http(kind in SSE_TYPES)
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
            raise self.fail(
                f"must be an object with a command or a url, not {json_kind(self.entry)}."
            )
        kind = self.entry.get("type")
        if kind is not None and kind not in (*STDIO_TYPES, *_HTTP_TYPES, *SSE_TYPES):
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
            raise self.fail(f"must be a list of strings, not {json_kind(args)}.", "args")
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
            raise self.fail(f"must be a string, not {json_kind(value)}.", field_name)
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
            raise self.fail(f"must be an object of strings, not {json_kind(value)}.", field_name)
        return {str(key): item for key, item in value.items()}

    def fail(self, message: str, field_name: str | None = None) -> McpConfigError:
        """Return the error for a fault of this entry (of a field of it, when given)."""
        return McpConfigError(message, server=self.name, field=field_name, source=self.source)


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


def json_kind(value: Any) -> str:
    """Name a JSON value's type as the user wrote it: ``an object``, ``a list``, ``null``...

    Args:
        value: A value of parsed JSON.
    """
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)
