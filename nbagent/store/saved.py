"""Saved conversations read back: one file, a notebook's list, the one to resume.

Reading trusts no line: each record is checked against its schema (:mod:`nbagent.store.records`),
and what is wrong (a line, a record, a block, a field of the state) is left out and named. A
file whose chain of MACs does not verify (:func:`nbagent.store.journal.verify`) is listed as
not written by nbagent, and is resumed only when trusted.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nbagent.core.errors import NbAgentError
from nbagent.store.folders import notebook_folder
from nbagent.store.journal import Chain, verify
from nbagent.store.key import ConversationKeyError, conversation_key
from nbagent.store.records import named, parsed_lines, prompts, read_header, replayed

NOT_SIGNED = "not written by nbagent (unsigned or changed)"
"""How a conversation whose file does not verify is listed."""

DAMAGED = "damaged"
"""How a conversation is listed when reading left something of it out, or all of it."""


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
    """The agent's state at the last record (:func:`~nbagent.store.recorder.state_record`),
    empty if none was written;
    only its fields that are right (:class:`~nbagent.store.records.State`)."""
    turns: int = 0
    """How many prompts the user gave, those a compaction summarised since included (and a
    prompt whose request failed)."""
    first_prompt: str = ""
    """The conversation's first prompt (kept when a compaction summarised it)."""
    damage: str = ""
    """Why the file is not as nbagent wrote it (:func:`~nbagent.store.journal.verify`);
    empty when it is, or when
    it cannot be read (:attr:`unreadable`). The messages are then those of the lines that
    verify, if its first line does, else those of every line that parses."""
    problems: list[str] = field(default_factory=list)
    """What reading left out (a line, a record, a block, a field), one sentence each
    (:mod:`nbagent.store.records`)."""
    unreadable: str = ""
    """Why nothing of the file can be read (``it cannot be read (...)``); empty when it can."""
    valid: int = 0
    """How many first messages its last state record says form a valid history's start (as
    the agent's last repair left them) and no record changed since; 0 unless
    :attr:`signed`. Resuming repairs only what follows them."""
    compactions: frozenset[int] = frozenset()
    """The messages that may hold a compaction block (where those are looked for on
    resuming); meaningful only when :attr:`signed`."""

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
    """Read a conversation's file, checking its MACs (:func:`~nbagent.store.journal.verify`)
    and replaying its records, each checked (:mod:`nbagent.store.records`).

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
    with _collection_paused():  # a file's records are all kept: nothing to collect
        return _read(path, data, updated)  # what only reading needs is gone when it returns


def _read(path: Path, data: bytes, updated: float) -> SavedConversation | None:
    """A conversation from its file's bytes, as :func:`read_conversation` reads it."""
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
        valid=0 if chain.damage else history.valid,
        compactions=frozenset(history.compactions),
    )


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """Pause the garbage collector while a file's records are read: every object made is
    kept or freed at once, and its passes over them took a third of the time at 10,000
    records."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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
        notebook: The notebook's path (:func:`~nbagent.store.folders.notebook_path`).
        root: The folder of all conversations;
            :func:`~nbagent.store.folders.conversations_folder` by default.
    """
    found = [saved for path in _files(notebook, root) if (saved := _listed(path)) is not None]
    return sorted(found, key=lambda s: (s.updated, s.started), reverse=True)


def newest_first(notebook: str, root: Path | None = None) -> Iterator[SavedConversation]:
    """A notebook's saved conversations as :func:`saved_conversations` lists them, read one
    at a time, the file written last first: what looks for one reads no more than it needs.

    Args:
        notebook: The notebook's path (:func:`~nbagent.store.folders.notebook_path`).
        root: The folder of all conversations;
            :func:`~nbagent.store.folders.conversations_folder` by default.
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
