"""The person's approval of project MCP servers: a ``.mcp.json`` starts nothing on its own.

Neither a cloned folder nor the model (which can write files) is trusted: a ``.mcp.json``
found in the notebook's folder could run any program at ``%load_ext nbagent``, or hand
``${ANTHROPIC_API_KEY}`` to any URL. So each of its servers waits until the person, having
seen its command line or URL (:func:`written`) and the names of the variables it would read
(:func:`~nbagent.mcp.config_entry.variables_of`), approves it by name (``%mcp approve NAME``);
until then it is not started and its ``${VAR}`` are not expanded. ``%mcp deny NAME`` keeps
one stopped without asking again. The user's own configuration (``~/.nbagent/mcp.json``,
``c.NbAgent.mcp_config``, ``%mcp add``) needs no approval.

Decisions are kept in ``~/.nbagent/mcp-approvals.json`` (``$NBAGENT_MCP_APPROVALS`` names
another file), of mode 0600 in a folder of mode 0700, by the configuration file's resolved
path and the server's name, each with the SHA-256 of the entry's canonical JSON
(:func:`entry_digest`), so that a changed entry is asked about again::

    {"version": 1,
     "projects": {"/home/ada/repo/.mcp.json": {
         "git": {"decision": "approved", "sha256": "9f86d081884c7d65..."},
         "web": {"decision": "denied", "sha256": "60303ae22b998861..."}}}}

A damaged file (not JSON, another format, another user's, writable by others) is named in an
:class:`~nbagent.mcp.errors.ApprovalsError`: what it holds counts as nothing decided, and it is
not written over. Two kernels deciding at the same moment may lose one of the decisions (the
last write wins); that server is asked about again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import tempfile
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from nbagent.core.secrets import redact
from nbagent.mcp.config_entry import variables_of
from nbagent.mcp.errors import ApprovalsError

Decision = Literal["approved", "denied"]
"""What the person decided about a project server."""

APPROVALS_ENV = "NBAGENT_MCP_APPROVALS"
"""The environment variable naming another approvals file (tests use it)."""

DEFAULT_PATH = Path("~/.nbagent/mcp-approvals.json")
"""Where decisions are kept unless ``NBAGENT_MCP_APPROVALS`` says otherwise."""

VERSION = 1
"""The file format's version."""

_DECISIONS: tuple[Decision, ...] = ("approved", "denied")
_HIDDEN = ("Cc", "Cf", "Cs", "Zl", "Zp")
"""Unicode categories shown escaped: control, format (bidirectional overrides, zero-width
characters), surrogates, line and paragraph separators."""


def approvals_path() -> Path:
    """Return the approvals file: ``$NBAGENT_MCP_APPROVALS``, else
    ``~/.nbagent/mcp-approvals.json``."""
    return Path(os.environ.get(APPROVALS_ENV) or DEFAULT_PATH).expanduser()


def entry_digest(entry: Any) -> str:
    """Return the SHA-256 of an entry's canonical JSON (keys sorted, no spaces, ASCII).

    Args:
        entry: A server entry as written in its file.

    Returns:
        64 hexadecimal digits; any change of the entry (an argument, a variable) changes it.
    """
    canonical = json.dumps(entry, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def written(entry: Any) -> str:
    """Show an entry as written, for the person deciding about it.

    The command line (or the transport and URL) first, then each ``env`` variable, header
    and ``cwd`` on a line of its own, ``${VAR}`` as written; characters that would hide or
    reorder text (line breaks, escapes, bidirectional overrides) are shown escaped. An entry
    of another shape is shown as its JSON. A secret of this environment written literally
    in the file is redacted.

    Args:
        entry: A server entry as written.

    Returns:
        The text, e.g. ``npx -y server-git\\nenv TOKEN=${GITHUB_TOKEN}``.
    """
    lines = _lines(entry)
    if lines is None:
        lines = json.dumps(entry, indent=2, ensure_ascii=False).splitlines()
    return redact("\n".join(_visible(line) for line in lines))


def _lines(entry: Any) -> list[str] | None:
    """The lines of an entry of the expected shape (strings where strings go), else None."""
    if not isinstance(entry, dict):
        return None
    texts = [entry[key] for key in ("command", "url", "type", "cwd") if key in entry]
    args, env, headers = entry.get("args", []), entry.get("env", {}), entry.get("headers", {})
    if not (
        all(isinstance(text, str) for text in texts)
        and isinstance(args, list)
        and all(isinstance(arg, str) for arg in args)
        and _strings(env)
        and _strings(headers)
    ):
        return None
    lines = [shlex.join([entry["command"], *args])] if "command" in entry else []
    if "url" in entry:
        lines.append(f"{entry.get('type', 'http')} {entry['url']}")
    lines += [f"env {key}={value}" for key, value in env.items()]
    lines += [f"header {key}: {value}" for key, value in headers.items()]
    if "cwd" in entry:
        lines.append(f"cwd {entry['cwd']}")
    return lines or None


def _strings(value: Any) -> bool:
    """Whether a value is an object of strings."""
    return isinstance(value, dict) and all(isinstance(item, str) for item in value.values())


def _visible(text: str) -> str:
    """Escape the characters that would hide or reorder the text around them."""
    return "".join(
        char.encode("unicode_escape").decode("ascii")
        if unicodedata.category(char) in _HIDDEN
        else char
        for char in text
    )


@dataclass(frozen=True)
class ProjectServer:
    """A server of a project's ``.mcp.json``, and what the person decided about it."""

    name: str
    """Its name in the file."""
    entry: Any
    """Its entry as written (``${VAR}`` not expanded)."""
    digest: str
    """The SHA-256 of the entry (:func:`entry_digest`)."""
    decision: Decision | None = None
    """The decision kept for this very entry; ``None`` while it waits for one."""

    @property
    def transport(self) -> str:
        """The transport as written: ``stdio`` for a command, else the ``type`` (``http`` by
        default)."""
        if not isinstance(self.entry, dict):
            return ""
        kind = self.entry.get("type")
        if isinstance(kind, str):
            return kind
        return "stdio" if "command" in self.entry else "http"

    def written(self) -> str:
        """Show the entry as written (:func:`written`)."""
        return written(self.entry)

    def variables(self) -> tuple[str, ...]:
        """Name the environment variables its ``${VAR}`` would read once approved."""
        return variables_of(self.entry)


@dataclass(frozen=True)
class ProjectServers:
    """The servers of one project file, each with the person's decision."""

    source: Path
    """The ``.mcp.json``."""
    servers: dict[str, ProjectServer]
    """Its entries by name, in the file's order (not the disabled ones)."""
    fault: str | None = None
    """Why the decisions kept could not be read (then none counts), with what to do."""

    def deciding(self, decision: Decision) -> list[ProjectServer]:
        """Return the servers with a decision, or waiting for one (``None``), in order.

        Args:
            decision: ``approved``, ``denied`` or ``None``.
        """
        return [server for server in self.servers.values() if server.decision == decision]

    def decided(self, names: Iterable[str], decision: Decision) -> ProjectServers:
        """Return the same servers, those named now with a decision.

        Args:
            names: The servers decided about.
            decision: The decision.
        """
        chosen = set(names)
        return replace(
            self,
            servers={
                name: replace(server, decision=decision) if name in chosen else server
                for name, server in self.servers.items()
            },
        )


def screen(source: Path, data: Any, approvals: Approvals) -> tuple[ProjectServers, Any]:
    """Sort a project file's entries by the person's decisions, before anything is expanded.

    Args:
        source: The ``.mcp.json``.
        data: Its JSON as written.
        approvals: The decisions kept.

    Returns:
        Its servers with their decisions, and the document to start: ``data`` with only the
        approved entries (and the disabled ones, and those without a usable name, which are
        not read), or ``data`` itself when it has no ``mcpServers`` object (to be refused
        whole).
    """
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return ProjectServers(source, {}), data
    try:
        kept, fault = approvals.decisions(source), None
    except ApprovalsError as exc:
        kept = {}
        fault = (
            f"{exc}: no approval in it counts, so every server of {source} waits for one; "
            "fix the file or move it away, then `%reload_ext nbagent`."
        )
    servers: dict[str, ProjectServer] = {}
    startable: dict[str, Any] = {}
    for name, entry in entries.items():
        if not name.strip() or (isinstance(entry, dict) and entry.get("disabled") is True):
            startable[name] = entry
            continue
        digest = entry_digest(entry)
        record = kept.get(name)
        decision = record[0] if record is not None and record[1] == digest else None
        servers[name] = ProjectServer(name, entry, digest, decision)
        if decision == "approved":
            startable[name] = entry
    return ProjectServers(source, servers, fault), {**data, "mcpServers": startable}


class Approvals:
    """The decisions kept about project servers, in a JSON file of the user's own.

    Args:
        path: The file; :func:`approvals_path` by default.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else approvals_path()

    def decisions(self, source: Path) -> dict[str, tuple[Decision, str]]:
        """Return the decisions kept for one configuration file.

        Args:
            source: The ``.mcp.json`` (its resolved path is the key).

        Returns:
            ``(decision, sha256 of the entry decided about)`` by server name.

        Raises:
            ApprovalsError: The file cannot be read or is damaged.
        """
        project = self._read().get(_key(source), {})
        return {name: (record["decision"], record["sha256"]) for name, record in project.items()}

    def record(self, source: Path, servers: Iterable[ProjectServer], decision: Decision) -> None:
        """Keep a decision about some servers of one configuration file.

        Args:
            source: The ``.mcp.json``.
            servers: The servers, each with the digest of the entry decided about.
            decision: ``approved`` or ``denied``.

        Raises:
            ApprovalsError: The file is damaged (it is not written over) or cannot be written.
        """
        projects = self._read()
        project = projects.setdefault(_key(source), {})
        for server in servers:
            project[server.name] = {"decision": decision, "sha256": server.digest}
        self._write(projects)

    def _read(self) -> dict[str, dict[str, dict[str, str]]]:
        """Read and check the file; an absent one holds nothing."""
        try:
            info = self.path.stat()
            if info.st_uid != os.getuid():
                raise self._fault("belongs to another user")
            if info.st_mode & 0o022:
                raise self._fault(
                    f"can be changed by other users (mode {info.st_mode & 0o777:o}; chmod 600 it)"
                )
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise self._fault(f"cannot be read ({exc})") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._fault(
                f"is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
            ) from None
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict) or data.get("version") != VERSION:
            raise self._fault(
                f'is not an approvals file of this nbagent ({{"version": {VERSION}, '
                '"projects": {...}} expected)'
            )
        for source, project in projects.items():
            if not isinstance(project, dict) or not all(
                isinstance(record, dict)
                and record.get("decision") in _DECISIONS
                and isinstance(record.get("sha256"), str)
                for record in project.values()
            ):
                raise self._fault(f"has a malformed record under {source!r}")
        return projects

    def _write(self, projects: dict[str, dict[str, dict[str, str]]]) -> None:
        """Write the file whole (mode 0600, replaced atomically) in a folder of mode 0700."""
        folder = self.path.parent
        text = json.dumps({"version": VERSION, "projects": projects}, indent=2, sort_keys=True)
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            info = folder.stat()
            if info.st_mode & 0o077 and info.st_uid == os.getuid():
                folder.chmod(0o700)
            handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{self.path.name}.")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as file:
                    file.write(text + "\n")
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temp, self.path)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise self._fault(f"cannot be written ({exc})") from exc

    def _fault(self, what: str) -> ApprovalsError:
        """Return the error naming the file and what is wrong with it."""
        return ApprovalsError(f"The MCP approvals file {self.path} {what}")


def _key(source: Path) -> str:
    """Return the key of a configuration file: its resolved path."""
    return str(Path(source).resolve())
