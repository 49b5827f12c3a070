"""The recorder: an agent's history mirrored, as it changes, into its conversation's file.

Only the messages that changed since the last record are written (:mod:`nbagent.store.journal`),
with the secrets redacted (:func:`nbagent.core.secrets.redact`) from every string first.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbagent.core.events import Usage
from nbagent.core.identity import equal_prefix
from nbagent.core.markup import plain_markdown
from nbagent.core.secrets import get_logger, redact, secret_values
from nbagent.core.tracked import Since, equal_prefix_since
from nbagent.loop.agent import Agent
from nbagent.loop.state import AgentState
from nbagent.store.folders import notebook_folder

if TYPE_CHECKING:  # the journal and its records' models are imported when first written
    from nbagent.store.journal import ConversationLog
    from nbagent.store.saved import SavedConversation

logger = get_logger("nbagent.store.recorder")

RECHECKED = 2
"""The last messages serialised again at every record, even when the agent still holds the
same objects (the agent merges into the last message by replacing it, but this costs little
and catches a message changed in place)."""


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


class Recorder:
    """Mirrors an agent's history into the file of the conversation going on.

    Each :meth:`sync` writes the messages that changed since the last one; the file is made
    at the first sync that has a message. :meth:`new` starts another file at the next sync,
    :meth:`attach` continues a resumed conversation's own file.

    Args:
        notebook: Gives the notebook's path, read at each sync: when it names another
            folder (the notebook was renamed), the file moves there
            (:meth:`~nbagent.store.journal.ConversationLog.move`).
        root: The folder of all conversations;
            :func:`~nbagent.store.folders.conversations_folder` (read at each new file) by
            default.
    """

    def __init__(self, notebook: Callable[[], str], root: Path | None = None) -> None:
        self._notebook = notebook
        self._root = root
        self.log: ConversationLog | None = None
        """The file of the conversation going on (None until its first message)."""
        self._written: list[str] = []
        self._seen: list[Any] = []
        self._state = ""
        self._recorded: tuple[int, tuple[Any, ...], dict[str, Any]] | None = None
        """What the last :meth:`record` wrote from: the history's length, its last messages
        and the state record (a record with the same is not synced again)."""
        self._since: Since | None = None
        """The agent's history as the last :meth:`record` synced it (what is unchanged since
        is not compared again)."""
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
            self._recorded, self._since = None, None

    def attach(
        self, saved: SavedConversation, history: Sequence[dict[str, Any]] | None = None
    ) -> None:
        """Go on writing a resumed conversation's file (what it holds is not written again).

        Args:
            saved: The conversation as read from its file.
            history: The agent's messages resumed from it
                (:func:`~nbagent.store.resume.resume`): each one equal to the saved one at its
                index counts as written, without being serialised.
        """
        from nbagent.store.journal import ConversationLog

        history = saved.messages if history is None else history
        kept = saved.messages  # what the file holds, index by index
        start = equal_prefix(kept, history)  # a resumed history holds the very same objects
        seen = [*history[:start]] + [
            history[i] if i < len(history) and history[i] == kept[i] else None
            for i in range(start, len(kept))
        ]
        written = [""] * len(kept)
        for i in range(max(len(history) - RECHECKED, 0), len(kept)):
            if seen[i] is not None:
                written[i] = _dumps(kept[i])
        with self._lock:
            self.log = ConversationLog(saved.path)
            self._seen, self._written = seen, written
            self._state = _dumps(saved.state) if saved.state else ""
            self._recorded, self._since = None, None
        try:
            self.log.mend()
        except OSError as exc:
            self._fail(exc)

    def record(self, agent: Agent) -> None:
        """Write what changed in an agent's history and state since the last record.

        The history is read where the agent keeps it, not copied: only the messages its
        marks (:class:`~nbagent.core.tracked.Since`) do not show unchanged since the last
        record are compared. Called between the agent's steps (at its events, after a run).

        Args:
            agent: The agent.
        """
        messages = agent.messages  # read, not copied: only what changed is read
        since = Since(messages)  # before reading: a change meanwhile lowers it
        record = state_record(agent.snapshot(history=False))
        tail = tuple(messages[-RECHECKED:])
        last = self._recorded
        if (
            last is not None
            and last[0] == len(messages)
            and all(map(operator.is_, last[1], tail))
            and last[2] == record
        ):
            return  # nothing changed since the last record (the end of a run, then its cell)
        synced = self._write(messages, agent.model, record, self._since)
        self._recorded = (len(messages), tail, record)
        self._since = since if synced else None

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
            state: What the agent knows beside the history (:func:`state_record`).
        """
        self._since = None  # the next record compares with what this one wrote
        self._write(messages, model, state, None)

    def _write(
        self,
        messages: Sequence[dict[str, Any]],
        model: str,
        state: Mapping[str, Any] | None,
        since: Since | None,
    ) -> bool:
        """:meth:`sync`, the messages ``since`` (the last record's view of them) shows
        unchanged not compared again (:func:`~nbagent.core.tracked.equal_prefix_since`).

        Returns:
            Whether everything was written.
        """
        with self._lock:
            try:
                self._sync(messages, model, since)
                if state is not None and self.log is not None:
                    if (text := _dumps(state)) != self._state:
                        self.log.append({"state": dict(state)})
                        self._state = text
            except OSError as exc:
                self._fail(exc)
                return False
            return True

    def _sync(
        self, messages: Sequence[dict[str, Any]], model: str, since: Since | None = None
    ) -> None:
        if self.log is None:
            if not messages:
                return
            from nbagent.store.journal import ConversationLog

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
        start = min(equal_prefix_since(self._seen, messages, since), max(last_checked, 0))
        for index, message in enumerate(messages[start:], start):
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


_USAGE_FIELDS = dataclasses.fields(Usage)


def state_record(state: AgentState) -> dict[str, Any]:
    """What a resumed agent needs beside the history, as a state record holds it: the
    deferred tools the model loaded, those sent in full since a compaction dropped their
    references, how full the context was, the tokens used, how many first messages the
    agent's last repair left as they are.

    Args:
        state: The agent's state (:meth:`~nbagent.loop.agent.Agent.snapshot`).
    """
    return {
        "loaded": list(state.loaded),
        "expanded": list(state.expanded),
        "prompt_tokens": state.prompt_tokens,
        "usage": {field.name: getattr(state.usage, field.name) for field in _USAGE_FIELDS},
        "valid": state.valid,
    }


def _dumps(value: Any) -> str:
    """A canonical serialisation, to tell whether a message changed."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
