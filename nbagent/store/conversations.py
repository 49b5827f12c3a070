"""Saved conversations: each ``%%agent`` conversation on disk, so it survives a kernel restart.

A conversation is an append-only JSON Lines file under the user's nbagent folder, never
inside the notebook::

    ~/.nbagent/conversations/<notebook stem>-<hash of its path>/<started>-<id>.jsonl

(``NBAGENT_CONVERSATIONS`` names another folder). The notebook is the kernel's (the
``__session__`` that ipykernel sets from ``JPY_SESSION_NAME``, or ``JPY_SESSION_NAME``
itself), else the working folder. The first line is the header; every later line is a
record of the history (``Agent.messages``), which changes by appending messages and by
merging blocks into the last one, so records name the index they set::

    {"nbagent": "conversation", "version": 1, "id": "3fa29c1e", "notebook": "/a/b.ipynb",
     "started": "2025-01-02T14:03:12+00:00", "model": "claude-sonnet-5-5"}
    {"i": 0, "message": {"role": "user", "content": [...]}}
    {"i": 1, "message": {"role": "assistant", "content": [...]}}
    {"i": 1, "message": {...}}     a later record for the same index replaces it
    {"length": 1}                  the history was cut back to its first message
    {"state": {"loaded": [...], "expanded": [...], "prompt_tokens": 1234, "usage": {...}}}
                                   what the agent knows beside the history (the last counts)

Only the messages that changed since the last record are written, each record with one
``write`` of a whole line on a file opened with ``O_APPEND``, then ``fsync``: a kernel killed
at any moment loses at most the line being written, which reading skips. Secrets are
redacted (:func:`nbagent.core.secrets.redact`) from every string before it is written. Reading
trusts no line: each record is checked against its schema (:mod:`nbagent.store.records`),
and what is wrong (a line, a record, a block, a field of the state) is left out and named.

Every line ends with a MAC (HMAC-SHA256, keyed by a secret of the user's), the last field of
its object: ``{"i": 0, "message": {...}, "mac": "9f86d0..."}``. It covers the line's bytes
without that field and the MAC of the line before; the first line's covers the file's place
(the name of its notebook's folder and the conversation's id). So editing, inserting,
removing or reordering a line, or copying the file under another id or into another
notebook's folder, breaks the chain, while a file that ends at a line's end still verifies:
appending stays one ``write`` per line. A line cut short by a crash is acknowledged when the
conversation goes on, by a record ``{"cut": "<SHA-256 of that line>"}`` chained after it
(:func:`verify`). The key is 32 random bytes, in hexadecimal, in the file
``conversations.key`` beside the conversations folder: ``~/.nbagent/conversations.key``
(beside the folder ``NBAGENT_CONVERSATIONS`` names, when set; tests use that), of mode 0600
in a folder of mode 0700, made when the first conversation is saved
(:func:`conversation_key`). A file whose chain does not verify (written before nbagent
signed conversations, written by something else, or changed) is listed as not written by
nbagent and is resumed only when the person says ``--trust``: what it holds would reach the
model as the person's own words.

:func:`~nbagent.loop.repair.repaired` makes a saved history one the API accepts
again (every ``tool_use`` answered, an unanswered one as interrupted; roles alternating from a
user message; a compaction block whose summary lost a secret, and so its signature, replaced by
that summary), and :func:`resume` puts it into an agent with the state of the last record.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import re
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nbagent.api.server_tools import SERVER_TOOLS
from nbagent.core.errors import NbAgentError
from nbagent.core.events import Usage
from nbagent.core.markup import code_markdown, plain_markdown, table_cell
from nbagent.core.secrets import get_logger, redact, secret_values
from nbagent.core.text import cut
from nbagent.core.tool import Tool
from nbagent.loop.repair import Repair, loaded_in, repaired
from nbagent.store.records import (
    Line,
    State,
    named,
    parsed_lines,
    prompts,
    read_header,
    read_line,
    replayed,
)

logger = get_logger("nbagent.store.conversations")

FOLDER_ENV = "NBAGENT_CONVERSATIONS"
"""The environment variable naming the folder of saved conversations."""

DEFAULT_FOLDER = Path("~/.nbagent/conversations")
"""Where conversations are saved unless ``NBAGENT_CONVERSATIONS`` says otherwise."""

FORMAT = "conversation"
"""The header's ``nbagent`` field."""

VERSION = 1
"""The file format's version."""

RECHECKED = 2
"""The last messages serialised again at every record, even when the agent still holds the
same objects (the agent merges into the last message by replacing it, but this costs little
and catches a message changed in place)."""

UNAVAILABLE = (
    "Not available in this kernel: it was loaded in a conversation resumed after a restart, "
    "and no tool of this name is registered now."
)
"""The description of a tool the resumed history loaded that is gone."""

KEY_FILE = "conversations.key"
"""The file of the key that signs conversations, beside the conversations folder."""

NOT_SIGNED = "not written by nbagent (unsigned or changed)"
"""How a conversation whose file does not verify is listed."""

DAMAGED = "damaged"
"""How a conversation is listed when reading left something of it out, or all of it."""

_MAC_FIELD = b',"mac":"'
_MAC_TAIL = len(_MAC_FIELD) + 64 + len(b'"}')
"""The bytes a line's MAC field takes at its end."""
_SEED = b"nbagent conversation\0"


def conversations_folder() -> Path:
    """The folder of every notebook's saved conversations."""
    return Path(os.environ.get(FOLDER_ENV) or DEFAULT_FOLDER).expanduser()


def notebook_path(shell: Any = None) -> str:
    """The notebook a kernel runs, as the key of its conversations.

    Args:
        shell: The IPython shell (its ``__session__`` is read), or None.

    Returns:
        The notebook's absolute path (``__session__``, else ``JPY_SESSION_NAME``; a relative
        one is found from the working folder), else the working folder's.
    """
    namespace = getattr(shell, "user_ns", None) or {}
    for candidate in (namespace.get("__session__"), os.environ.get("JPY_SESSION_NAME")):
        if isinstance(candidate, str) and candidate.strip():
            path = Path(candidate).expanduser()
            if path.is_absolute():
                return str(path.resolve())
            options = [Path.cwd() / path, Path.cwd() / path.name]
            found = next((o for o in options if o.exists()), options[0])
            return str(found.resolve())
    return str(Path.cwd().resolve())


def notebook_folder(notebook: str, root: Path | None = None) -> Path:
    """The folder of one notebook's conversations: its stem and a hash of its path.

    Args:
        notebook: The notebook's path (:func:`notebook_path`).
        root: The folder of all conversations; :func:`conversations_folder` by default.
    """
    digest = hashlib.sha256(notebook.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(notebook).stem)[:40].strip("._") or "notebook"
    return (root or conversations_folder()) / f"{stem}-{digest}"


def redacted(value: Any, secrets: Mapping[str, str] | None = None) -> Any:
    """A copy of a JSON value with the secrets redacted from every string in it.

    Args:
        value: A message, a block, any JSON value.
        secrets: The secret variables (name to value); those of the environment by default.
    """
    if secrets is None:
        secrets = {name: secret for secret, name in secret_values().items()}
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {key: redacted(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(item, secrets) for item in value]
    return value


def _line(record: Mapping[str, Any]) -> bytes:
    """One record as a line: ASCII JSON (lone surrogates and newlines escaped)."""
    return (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode("ascii")


def _write_whole(path: Path, data: bytes, flags: int) -> None:
    """Write all of ``data`` to a file only its owner reads, then ``fsync`` it."""
    fd = os.open(path, os.O_WRONLY | flags, 0o600)
    try:
        written = os.write(fd, data)
        while written < len(data):  # only on a full disk or the like
            written += os.write(fd, data[written:])
        os.fsync(fd)
    finally:
        os.close(fd)


class ConversationKeyError(OSError):
    """The key that signs conversations cannot be kept or read safely."""


def key_path() -> Path:
    """The key file: ``conversations.key`` beside the conversations folder."""
    return conversations_folder().parent / KEY_FILE


def conversation_key(create: bool = False) -> bytes | None:
    """The key that signs conversations, made on first use if asked.

    The folder must belong to the user and be writable by no one else (one of the user's
    that is open to others is made 0700), the file must belong to the user and be readable
    by no one else (0600); a new key is written whole before it appears (linked into place),
    so two kernels making one at once agree on the first.

    Args:
        create: Make the folder and the key when missing.

    Returns:
        The 32 bytes, or None when there is no key and none was to be made.

    Raises:
        ConversationKeyError: The folder or the file is open to others, another user's, or
            not a key; or the key could not be made.
    """
    path = key_path()
    folder = path.parent
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            info = folder.stat()
            if info.st_uid == os.getuid() and info.st_mode & 0o077:
                folder.chmod(0o700)
        info = folder.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConversationKeyError(f"The conversation key's folder {folder}: {exc}") from exc
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise ConversationKeyError(
            f"The folder of the conversation key, {folder}, belongs to another user or others "
            "can write in it: nbagent keeps no key there (chmod 700 it, or set "
            f"{FOLDER_ENV} to a folder of yours)."
        )
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return _new_key(path) if create else None
    except OSError as exc:
        raise ConversationKeyError(f"The conversation key {path} cannot be read: {exc}") from exc
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        text = file.read(200).strip()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ConversationKeyError(
            f"The conversation key {path} belongs to another user or others can read it "
            f"(mode {info.st_mode & 0o777:o}): it is not used (chmod 600 it, if it is yours)."
        )
    if not re.fullmatch(rb"[0-9a-f]{64}", text):
        raise ConversationKeyError(
            f"The conversation key {path} is not a key (64 hexadecimal digits): remove it, "
            "and conversations saved until now will be listed as not written by nbagent."
        )
    return bytes.fromhex(text.decode("ascii"))


def _new_key(path: Path) -> bytes | None:
    """Make the key file whole under another name, then link it into place."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.write(handle, os.urandom(32).hex().encode("ascii") + b"\n")
        os.fsync(handle)
        os.close(handle)
        try:
            os.link(temp, path)
        except FileExistsError:  # another kernel made it first: use theirs
            pass
    except OSError as exc:
        raise ConversationKeyError(f"The conversation key {path} cannot be made: {exc}") from exc
    finally:
        Path(temp).unlink(missing_ok=True)
    return conversation_key()


def _seed(key: bytes, path: Path) -> bytes:
    """What the first line's MAC chains from: the file's notebook folder and id."""
    place = f"{path.parent.name}\0{path.stem.rpartition('-')[2]}"
    return hmac.new(key, _SEED + place.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()


def _signed(key: bytes, previous: bytes, body: bytes) -> bytes:
    """The MAC of a line's bytes (without its MAC field) after the line before."""
    return hmac.digest(key, previous + body, "sha256")


def _verified(key: bytes, previous: bytes, line: bytes) -> tuple[bytes, bytes] | None:
    """A line's bytes without its MAC field, and its MAC, if the MAC is right after
    ``previous``."""
    if len(line) <= _MAC_TAIL or not line.endswith(b'"}'):
        return None
    if line[-_MAC_TAIL : -_MAC_TAIL + len(_MAC_FIELD)] != _MAC_FIELD:
        return None
    body = line[:-_MAC_TAIL] + b"}"
    mac = _signed(key, previous, body)
    if not hmac.compare_digest(mac.hex().encode("ascii"), line[-66:-2]):
        return None
    return body, mac


@dataclass
class Chain:
    """What verifying a conversation's file found."""

    lines: list[Line]
    """The lines whose MAC is right, read (:func:`~nbagent.store.records.read_line`),
    in order (acknowledgements of cut lines left out)."""
    end: bytes
    """The MAC the next record chains from."""
    damage: str = ""
    """Why the file is not as nbagent wrote it; empty when it is."""
    skipped: int = 0
    """Lines cut short by a crash: the last, or one acknowledged by the next record."""

    @property
    def signed(self) -> bool:
        """Whether every line is as nbagent wrote it (the file may end early)."""
        return not self.damage


def verify(data: bytes, path: Path, key: bytes | None) -> Chain:
    """Check a conversation file's chain of MACs.

    A line whose MAC is wrong is left out and the chain goes on from the line before it; it
    is damage unless it is the last line, cut short (no newline, and not a whole line whose
    newline was changed), or the next line is the record that acknowledges it
    (``{"cut": "<its SHA-256>"}``). Verifying stops at the first damage. A line whose MAC is
    right is read, but not trusted: one that cannot be read is kept with why.

    Args:
        data: The file's bytes.
        path: The file (its folder's name and its id are part of the first MAC).
        key: The key (:func:`conversation_key`); None when there is none.

    Returns:
        The records that verify and what is wrong, if anything.
    """
    if key is None:
        return Chain([], b"", damage="there is no conversation key to check it with")
    previous = _seed(key, path)
    chain = Chain([], previous)
    lines = data.split(b"\n")
    tail = lines.pop()
    failed: tuple[int, bytes] | None = None
    for number, line in enumerate(lines, 1):
        verified = _verified(key, chain.end, line)
        if verified is None:
            if failed is not None:
                break
            failed = (number, line)
            continue
        read, chain.end = read_line(number, verified[0]), verified[1]
        if failed is not None:
            if read.record == {"cut": hashlib.sha256(failed[1]).hexdigest()}:
                chain.skipped, failed = chain.skipped + 1, None
                continue
            break
        if read.record is None or "cut" not in read.record:
            chain.lines.append(read)
    if failed is None and tail:  # cut short by a crash, unless a whole line lost its newline
        if _verified(key, chain.end, tail[:-1]) is None:
            chain.skipped += 1
        else:
            failed = (len(lines) + 1, tail)
    if failed is not None:
        where = "its first line" if failed[0] == 1 else f"line {failed[0]}"
        chain.damage = f"{where} has no valid MAC"
    return chain


class ConversationLog:
    """One conversation's file, appended to one whole line at a time.

    Args:
        path: The ``.jsonl`` file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._key: bytes | None = None
        self._previous: bytes | None = None

    @property
    def id(self) -> str:
        """The conversation's id (the end of the file's name)."""
        return self.path.stem.rpartition("-")[2]

    @classmethod
    def create(
        cls,
        folder: Path,
        notebook: str,
        model: str,
        started: datetime | None = None,
        ident: str | None = None,
    ) -> ConversationLog:
        """Start a new conversation's file, with its header.

        Args:
            folder: The notebook's folder (:func:`notebook_folder`); made if missing.
            notebook: The notebook's path, kept in the header.
            model: The model at the start.
            started: When it started; now by default.
            ident: Its id; 8 random hexadecimal digits by default.

        Returns:
            The log.
        """
        started = started or datetime.now(UTC)
        ident = ident or uuid.uuid4().hex[:8]
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        log = cls(folder / f"{started.strftime('%Y%m%dT%H%M%S')}-{ident}.jsonl")
        header = {
            "nbagent": FORMAT,
            "version": VERSION,
            "id": ident,
            "notebook": notebook,
            "started": started.isoformat(timespec="seconds"),
            "model": model,
        }
        log.append(header)
        return log

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record, signed: one ``write`` of the whole line, then ``fsync``.

        The first append of a log over an existing file goes on from the last line of it
        that verifies.

        Raises:
            OSError: The file could not be written, or the key not kept
                (:class:`ConversationKeyError`).
            ValueError: The record has a ``mac`` field of its own.
        """
        if "mac" in record:
            raise ValueError("A conversation record has no 'mac' field of its own.")
        with self._lock:
            self._append(record)

    def _append(self, record: Mapping[str, Any]) -> None:
        self._append_body(_line(record)[:-1])

    def _append_body(self, body: bytes) -> None:
        """Sign a line's bytes (a JSON object, without its newline) and append them."""
        previous = self._chain_end()
        mac = _signed(self._signing_key(), previous, body)
        data = body[:-1] + _MAC_FIELD + mac.hex().encode("ascii") + b'"}\n'
        self._write(data)
        self._previous = mac

    def _signing_key(self) -> bytes:
        if self._key is None:
            key = conversation_key(create=True)
            if key is None:  # only if the folder vanished at once
                raise ConversationKeyError(f"No conversation key could be made at {key_path()}")
            self._key = key
        return self._key

    def _chain_end(self) -> bytes:
        """The MAC the next record chains from (read from the file the first time)."""
        if self._previous is None:
            try:
                data = self.path.read_bytes()
            except FileNotFoundError:
                data = b""
            self._previous = verify(data, self.path, self._signing_key()).end
        return self._previous

    def _write(self, data: bytes) -> None:
        _write_whole(self.path, data, os.O_APPEND | os.O_CREAT)

    def move(self, folder: Path, notebook: str) -> None:
        """Move the file into another notebook folder (the notebook was renamed or moved).

        A file's folder is part of its first MAC, so the records that verify are written
        anew, each signed after the one before it, with the header naming the notebook's
        new path. The new file replaces the old one only once it is whole on disk.

        Args:
            folder: The renamed notebook's folder (:func:`notebook_folder`); made if missing.
            notebook: The notebook's new path, for the header.

        Raises:
            OSError: The file could not be read or written (the old one is then kept).
        """
        with self._lock:
            key = self._signing_key()
            chain = verify(self.path.read_bytes(), self.path, key)
            target = folder / self.path.name
            previous, lines = _seed(key, target), bytearray()
            for read in chain.lines:
                if read.record is None:
                    continue
                record = (
                    {**read.record, "notebook": notebook}
                    if "nbagent" in read.record
                    else read.record
                )
                body = _line(record)[:-1]
                previous = _signed(key, previous, body)
                lines += body[:-1] + _MAC_FIELD + previous.hex().encode("ascii") + b'"}\n'
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            partial = target.with_suffix(".partial")
            _write_whole(partial, bytes(lines), os.O_CREAT | os.O_TRUNC)
            os.replace(partial, target)
            self.path.unlink(missing_ok=True)
            self.path, self._previous = target, previous

    def mend(self) -> None:
        """End a line cut short by a crash, so that the next record starts a line of its own,
        and acknowledge it in a record chained after it (the chain goes on verifying)."""
        with self._lock:
            data = self.path.read_bytes()
            if not data or data.endswith(b"\n"):
                return
            self._chain_end()
            self._write(b"\n")
            remnant = data[data.rfind(b"\n") + 1 :]
            self._append({"cut": hashlib.sha256(remnant).hexdigest()})


@dataclass
class SavedConversation:
    """A conversation read back from its file."""

    path: Path
    """The file."""
    id: str
    """Its id."""
    notebook: str
    """The notebook it was held in."""
    started: str
    """When it started (ISO 8601)."""
    model: str
    """The model at its start."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The history as the file has it (not repaired), without what reading left out."""
    updated: float = 0.0
    """When the file was last written (seconds since the epoch)."""
    skipped: int = 0
    """Lines cut short by a crash (the last one, or one acknowledged by the next)."""
    state: dict[str, Any] = field(default_factory=dict)
    """The agent's state at the last record (:func:`agent_state`), empty if none was written;
    only its fields that are right (:class:`~nbagent.store.records.State`)."""
    turns: int = 0
    """How many prompts the user gave, those a compaction summarised since included (and a
    prompt whose request failed)."""
    first_prompt: str = ""
    """The conversation's first prompt (kept when a compaction summarised it)."""
    damage: str = ""
    """Why the file is not as nbagent wrote it (:func:`verify`); empty when it is, or when
    it cannot be read (:attr:`unreadable`). The messages are then those of the lines that
    verify, if its first line does, else those of every line that parses."""
    problems: list[str] = field(default_factory=list)
    """What reading left out (a line, a record, a block, a field), one sentence each
    (:mod:`nbagent.store.records`)."""
    unreadable: str = ""
    """Why nothing of the file can be read (``it cannot be read (...)``); empty when it can."""

    @property
    def signed(self) -> bool:
        """Whether the file is as nbagent wrote it (it may end early), so safe to resume."""
        return not (self.damage or self.unreadable)

    @property
    def damaged(self) -> bool:
        """Whether reading left something of it out, or all of it."""
        return bool(self.problems or self.unreadable)

    @property
    def prompts(self) -> list[str]:
        """The user's prompts in the history as saved, in order."""
        return [text for message in self.messages for text in prompts(message)]


def read_conversation(path: Path) -> SavedConversation | None:
    """Read a conversation's file, checking its MACs (:func:`verify`) and replaying its
    records, each checked (:mod:`nbagent.store.records`).

    When the file verifies, or its first line does, only the lines that verify count. When
    its first line does not (a file from before conversations were signed, or not nbagent's)
    every line counts, for the listing: :attr:`SavedConversation.signed` is False and it is
    resumed only when trusted. A last line cut short by a crash is skipped; any other line,
    record, block or field that cannot be read or is wrong is left out, and named in
    :attr:`SavedConversation.problems`.

    Args:
        path: The ``.jsonl`` file.

    Returns:
        The conversation (:attr:`SavedConversation.unreadable` says why when the file, or its
        first line, cannot be read), or None when the file has no header (not a
        conversation, or one whose first line was cut short).
    """
    try:
        updated = path.stat().st_mtime
        data = path.read_bytes()
    except OSError as exc:
        return _unreadable(path, f"it cannot be read ({exc.strerror or exc})")
    try:
        key = conversation_key()
    except ConversationKeyError as exc:
        chain = Chain([], b"", damage=str(exc))
    else:
        chain = verify(data, path, key)
    lines, skipped = (chain.lines, chain.skipped) if chain.lines else parsed_lines(data)
    if lines and lines[0].record is None:
        return _unreadable(path, f"its first line cannot be read ({lines[0].error})", updated)
    first, problems = read_header(lines[0]) if lines else (None, [])
    if first is None:
        return None
    history = replayed(lines[1:])
    return SavedConversation(
        path=path,
        id=first.id or path.stem.rpartition("-")[2],
        notebook=first.notebook,
        started=first.started,
        model=first.model,
        messages=history.messages,
        updated=updated,
        skipped=skipped,
        state=history.state,
        turns=history.turns,
        first_prompt=history.first_prompt,
        damage=chain.damage,
        problems=problems + history.problems,
    )


def _unreadable(path: Path, why: str, updated: float = 0.0) -> SavedConversation:
    """A conversation of which nothing can be read, as listed."""
    return SavedConversation(
        path=path,
        id=path.stem.rpartition("-")[2],
        notebook="",
        started="",
        model="",
        updated=updated,
        unreadable=why,
    )


def saved_conversations(notebook: str, root: Path | None = None) -> list[SavedConversation]:
    """A notebook's saved conversations with at least one message (and every one not written
    by nbagent, or damaged), last written first.

    Args:
        notebook: The notebook's path (:func:`notebook_path`).
        root: The folder of all conversations; :func:`conversations_folder` by default.
    """
    found = [saved for path in _files(notebook, root) if (saved := _listed(path)) is not None]
    return sorted(found, key=lambda s: (s.updated, s.started), reverse=True)


def newest_first(notebook: str, root: Path | None = None) -> Iterator[SavedConversation]:
    """A notebook's saved conversations as :func:`saved_conversations` lists them, read one
    at a time, the file written last first: what looks for one reads no more than it needs.

    Args:
        notebook: The notebook's path (:func:`notebook_path`).
        root: The folder of all conversations; :func:`conversations_folder` by default.
    """
    for path in _files(notebook, root):
        if (saved := _listed(path)) is not None:
            yield saved


def _files(notebook: str, root: Path | None, ident: str = "") -> list[Path]:
    """The files of a notebook's conversations whose id starts with ``ident``, the one
    written last first."""
    folder = notebook_folder(notebook, root)
    if not folder.is_dir():
        return []
    ident = ident.lower()
    found = [p for p in folder.glob("*.jsonl") if _file_id(p).lower().startswith(ident)]
    return sorted(found, key=_written_at, reverse=True)


def _file_id(path: Path) -> str:
    """A conversation's id, from its file's name."""
    return path.stem.rpartition("-")[2]


def _written_at(path: Path) -> float:
    """When a file was written last (0 when it is gone)."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _listed(path: Path) -> SavedConversation | None:
    """A conversation file as listed: one with a message, or not nbagent's, or damaged."""
    saved = read_conversation(path)
    if saved is not None and (saved.messages or not saved.signed or saved.damaged):
        return saved
    return None


class UnsignedConversationError(NbAgentError):
    """A conversation to resume was not written by nbagent, and was not trusted."""


def find_conversation(
    notebook: str, ident: str | None = None, root: Path | None = None, trust: bool = False
) -> SavedConversation | None:
    """The conversation to resume: the last written by nbagent, or the one an id (or its
    start) names.

    Args:
        notebook: The notebook's path.
        ident: An id or the start of one; None for the last written.
        root: The folder of all conversations.
        trust: Resume one not written by nbagent (unsigned or changed) too.

    Returns:
        The conversation, or None when the notebook has none saved with a message that can
        be read (none written by nbagent, unless trusted).

    Raises:
        NbAgentError: The id names none of them, or several, or one of which no message can
            be read.
        UnsignedConversationError: The one it names was not written by nbagent, and
            ``trust`` is not set.
    """
    if not ident:
        found = newest_first(notebook, root)
        return next((s for s in found if (trust or s.signed) and s.messages), None)
    matches = [s for path in _files(notebook, root, ident) if (s := _listed(path)) is not None]
    if len(matches) == 1:
        [saved] = matches
        if saved.unreadable or not saved.messages:
            why = saved.unreadable or f"no message of it can be read: {named(saved.problems)}"
            raise NbAgentError(f"Conversation {saved.id}: {why}. There is nothing of it to resume.")
        if not (trust or saved.signed):
            raise UnsignedConversationError(unsigned_message(saved))
        return saved
    if not matches:
        known = ", ".join(_file_id(path) for path in _files(notebook, root)[:5]) or "none"
        raise NbAgentError(
            f"No saved conversation of this notebook has an id starting with {ident!r} "
            f"(%agent sessions lists them; the last ones: {known})."
        )
    raise NbAgentError(
        f"{len(matches)} saved conversations have an id starting with {ident!r} "
        f"({', '.join(s.id for s in matches)}): give more of it."
    )


class Recorder:
    """Mirrors an agent's history into the file of the conversation going on.

    Each :meth:`sync` writes the messages that changed since the last one; the file is made
    at the first sync that has a message. :meth:`new` starts another file at the next sync,
    :meth:`attach` continues a resumed conversation's own file.

    Args:
        notebook: Gives the notebook's path, read at each sync: when it names another
            folder (the notebook was renamed), the file moves there (:meth:`ConversationLog.move`).
        root: The folder of all conversations; :func:`conversations_folder` (read at each
            new file) by default.
    """

    def __init__(self, notebook: Callable[[], str], root: Path | None = None) -> None:
        self._notebook = notebook
        self._root = root
        self.log: ConversationLog | None = None
        """The file of the conversation going on (None until its first message)."""
        self._written: list[str] = []
        self._seen: list[Any] = []
        self._state = ""
        self._lock = threading.Lock()
        self._failed = False

    @property
    def current_id(self) -> str | None:
        """The id of the conversation being recorded, if its file exists."""
        return self.log.id if self.log is not None else None

    def new(self) -> None:
        """Record the next messages in a new conversation's file."""
        with self._lock:
            self.log, self._written, self._seen, self._state = None, [], [], ""

    def attach(
        self, saved: SavedConversation, history: Sequence[dict[str, Any]] | None = None
    ) -> None:
        """Go on writing a resumed conversation's file (what it holds is not written again).

        Args:
            saved: The conversation as read from its file.
            history: The agent's messages resumed from it (:func:`resume`): each one equal
                to the saved one at its index counts as written, without being serialised.
        """
        history = saved.messages if history is None else history
        kept = saved.messages  # what the file holds, index by index
        same = [i < len(history) and history[i] == message for i, message in enumerate(kept)]
        with self._lock:
            self.log = ConversationLog(saved.path)
            self._seen = [history[i] if equal else None for i, equal in enumerate(same)]
            last_checked = len(history) - RECHECKED
            self._written = [
                _dumps(kept[i]) if equal and i >= last_checked else ""
                for i, equal in enumerate(same)
            ]
            self._state = _dumps(saved.state) if saved.state else ""
        try:
            self.log.mend()
        except OSError as exc:
            self._fail(exc)

    def record(self, agent: Any) -> None:
        """Write what changed in an agent's history and state since the last record.

        Args:
            agent: The :class:`~nbagent.loop.agent.Agent`.
        """
        self.sync(agent.messages, agent.model, agent_state(agent))

    def sync(
        self,
        messages: Sequence[dict[str, Any]],
        model: str = "",
        state: Mapping[str, Any] | None = None,
    ) -> None:
        """Write what changed in the history (and the state) since the last sync.

        A failure to write is logged and said once; it never stops the agent.

        Args:
            messages: The agent's history.
            model: The model, for the header of a new file.
            state: What the agent knows beside the history (:func:`agent_state`).
        """
        with self._lock:
            try:
                self._sync(messages, model)
                if state is not None and self.log is not None:
                    if (text := _dumps(state)) != self._state:
                        self.log.append({"state": dict(state)})
                        self._state = text
            except OSError as exc:
                self._fail(exc)

    def _sync(self, messages: Sequence[dict[str, Any]], model: str) -> None:
        if self.log is None:
            if not messages:
                return
            folder = notebook_folder(notebook := self._notebook(), self._root)
            self.log = ConversationLog.create(folder, notebook, model)
        elif (folder := notebook_folder(notebook := self._notebook(), self._root)) != (
            self.log.path.parent
        ):
            self.log.move(folder, notebook)
        if len(messages) < len(self._written):
            self.log.append({"length": len(messages)})
            del self._written[len(messages) :], self._seen[len(messages) :]
        secrets = {name: secret for secret, name in secret_values().items()}
        last_checked = len(messages) - RECHECKED
        for index, message in enumerate(messages):
            if index < len(self._seen) and self._seen[index] is message and index < last_checked:
                continue
            clean = redacted(message, secrets)
            text = _dumps(clean)
            if index < len(self._written) and self._written[index] == text:
                self._seen[index] = message
                continue
            self.log.append({"i": index, "message": clean})
            if index < len(self._written):
                self._written[index], self._seen[index] = text, message
            else:
                self._written.append(text)
                self._seen.append(message)

    def _fail(self, exc: OSError) -> None:
        """Log a failure to write; say it in the cell the first time."""
        logger.warning("The conversation could not be saved: %s", exc)
        if not self._failed:
            self._failed = True
            from IPython.display import display

            from nbagent.core.markup import Markdown

            display(
                Markdown(f"> **The conversation is not being saved**: {plain_markdown(str(exc))}")
            )


def agent_state(agent: Any) -> dict[str, Any]:
    """What a resumed agent needs beside the history: the deferred tools the model loaded,
    those sent in full since a compaction dropped their references, how full the context
    was, the tokens used.

    Args:
        agent: The :class:`~nbagent.loop.agent.Agent`.
    """
    return {
        "loaded": list(agent.loaded_names),
        "expanded": list(getattr(agent, "_expanded", ())),
        "prompt_tokens": int(getattr(agent, "last_prompt_tokens", 0)),
        "usage": dataclasses.asdict(agent.usage),
    }


def _dumps(value: Any) -> str:
    """A canonical serialisation, to tell whether a message changed."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def unsigned_message(saved: SavedConversation) -> str:
    """Why a conversation not written by nbagent is not resumed, and how to resume it anyway.

    Args:
        saved: A conversation that is not :attr:`~SavedConversation.signed`.
    """
    kept = "what nbagent did write of it" if saved.damage.startswith("line ") else "it as it is"
    return (
        f"Conversation {saved.id} was {NOT_SIGNED}: {saved.damage}. It is not resumed, since "
        "what it says you said would reach the model as your own words. If you know where it "
        f"comes from, `%agent resume {saved.id} --trust` resumes {kept}."
    )


def resume(agent: Any, saved: SavedConversation, trust: bool = False) -> Repair:
    """Replace an agent's conversation by a saved one, repaired.

    The agent's state is that of the last record (:func:`agent_state`): the tools the
    model loaded (and those the history's ``tool_reference`` blocks load) count as loaded
    again, the tokens used and how full the context was are restored. A loaded tool gone
    from the registry is kept as a placeholder, sent deferred, because the API refuses a
    history that references a tool it is not given; a call of it is told the tool is not
    available (until a tool of its name is registered again). The
    next user turn announces the deferred tools that changed since the history's own
    announcements (:mod:`nbagent.catalogue.delta` reads those back from the history).

    Args:
        agent: The :class:`~nbagent.loop.agent.Agent`.
        saved: The conversation.
        trust: Resume it even if nbagent did not write it (unsigned or changed).

    Returns:
        What was repaired.

    Raises:
        UnsignedConversationError: nbagent did not write it, and ``trust`` is not set.
    """
    if not (trust or saved.signed):
        raise UnsignedConversationError(unsigned_message(saved))
    repair = repaired(saved.messages)
    state = State.model_construct(**saved.state)  # its right fields, checked on reading
    agent.reset()
    agent.messages = repair.messages
    for name in dict.fromkeys([*state.loaded, *loaded_in(repair.messages)]):
        if name in agent.registry:
            agent._load(name)  # noqa: SLF001 - an Agent.restore() would say it better
        elif name not in agent._loaded:  # noqa: SLF001
            agent._loaded[name] = placeholder(name)  # noqa: SLF001
    if hasattr(agent, "_expanded"):
        # what a compaction took the references of is sent in full; all of it when the
        # history now starts from a summary of ours
        expanded = agent.loaded_names if repair.summarised else state.expanded
        agent._expanded = [n for n in expanded if n in agent._loaded]  # noqa: SLF001
    if "prompt_tokens" in state.model_fields_set and hasattr(agent, "last_prompt_tokens"):
        agent.last_prompt_tokens = state.prompt_tokens
    if "usage" in state.model_fields_set:
        fields = {f.name for f in dataclasses.fields(Usage)}
        agent.usage = Usage(**{k: v for k, v in state.usage.items() if k in fields})
    return repair


def placeholder(name: str) -> Tool:
    """The tool sent for one the history loaded that the registry no longer has.

    A server tool (web search) stays itself, with its default options: the history holds
    its blocks, which the API takes only with its definition. Any other is a definition
    that says it is unavailable.

    Args:
        name: The tool's name.
    """
    if name in SERVER_TOOLS:
        return SERVER_TOOLS[name].tool({})
    return Tool(name=name, description=UNAVAILABLE)


def sessions_table(conversations: Sequence[SavedConversation], current: str | None = None) -> str:
    """The Markdown table of a notebook's saved conversations.

    Args:
        conversations: Last written first.
        current: The id of the conversation going on, marked in the table.
    """
    rows = []
    for saved in conversations:
        first = " ".join(saved.first_prompt.split())
        mark = " (this one)" if saved.id == current else ""
        mark += f" — {NOT_SIGNED}" if saved.damage else ""
        mark += f" — {DAMAGED}" if saved.damaged else ""
        rows.append(
            f"| {code_markdown(saved.id)}{mark} | {table_cell(local_time(saved.started))} | "
            f"{table_cell(local_time(saved.updated))} | {table_cell(str(saved.turns))} | "
            f"{table_cell(cut(first, 60))} |"
        )
    header = "| id | started | last written | turns | first prompt |\n|---|---|---|---|---|\n"
    return header + "\n".join(rows)


def damage_notes(conversations: Sequence[SavedConversation]) -> str:
    """What reading left out of each damaged conversation, in Markdown, to follow the table.

    Args:
        conversations: As listed.

    Returns:
        A paragraph and a list, or an empty text when none is damaged.
    """
    items = [
        f"- {code_markdown(saved.id)}: "
        + plain_markdown(
            f"{saved.unreadable}: there is nothing of it to resume."
            if saved.unreadable
            else f"left out {named(saved.problems)}."
        )
        for saved in conversations
        if saved.damaged
    ]
    return (
        f"\n\n{DAMAGED.capitalize()}, read as far as it goes:\n" + "\n".join(items) if items else ""
    )


def left_out(saved: SavedConversation) -> str:
    """What reading left out of a conversation, to say when it is resumed.

    Args:
        saved: The conversation.

    Returns:
        A sentence in Markdown after a space, or an empty text when nothing was left out.
    """
    if not saved.problems:
        return ""
    return f" Left out, as {DAMAGED}: {plain_markdown(named(saved.problems))}."


def local_time(moment: str | float) -> str:
    """A moment (ISO 8601, or seconds since the epoch) in local time, to the minute."""
    try:
        when = (
            datetime.fromtimestamp(moment)
            if isinstance(moment, int | float)
            else datetime.fromisoformat(moment).astimezone()
        )
    except (ValueError, OSError, OverflowError):
        return str(moment)
    return when.strftime("%Y-%m-%d %H:%M")
