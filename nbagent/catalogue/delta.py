"""Deferred-tool announcements: what the model has been told, and what it must be told next.

The model learns the names of deferred tools from ``<system-reminder>`` texts appended to
user turns. Earlier turns are never edited (that would break the prompt cache), so what was
announced is read back from the history itself: every announcement adds or removes names,
and the delta is the difference between that and the tools deferred now.

Two renderings exist: ``plain`` (one name a line) and ``compact`` (MCP tools grouped by
server, ``mcp__github__: create_issue, list_issues``). Both parse back to the same names.
A legacy mode lists every deferred tool in an ``<available-deferred-tools>`` block at the
head of the messages instead (it changes the prefix at every change, which breaks the cache).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from nbagent.core.text import MCP_PREFIX
from nbagent.core.tool import Tool
from nbagent.core.tracked import Since, equal_prefix_since

ADDED_HEADER = "The following deferred tools are now available via ToolSearch:"
"""The first line of an announcement of new deferred tools."""

REMOVED_HEADER = (
    "The following deferred tools are no longer available (their MCP server disconnected). "
    "Do not search for them — ToolSearch will return no match:"
)
"""The first line of an announcement of removed deferred tools."""

COMPACTION = "compaction"
"""The type of the block the API answers with when it compacted the conversation."""

LEGACY_TAG = "available-deferred-tools"
"""The tag of the legacy block that lists every deferred tool."""

Style = Literal["plain", "compact"]

_REMINDER = re.compile(r"<system-reminder>\n(.*?)\n</system-reminder>", re.DOTALL)


@dataclass(frozen=True)
class DeferredToolsDelta:
    """Names to announce: deferred tools the model was not told of, and ones that went away."""

    added_names: tuple[str, ...]
    """Deferred now, not announced yet (sorted)."""
    removed_names: tuple[str, ...]
    """Announced, not deferred any more (sorted)."""

    def render(self, style: Style = "plain") -> str:
        """Render the delta as the ``<system-reminder>`` text for the next user turn.

        Args:
            style: ``plain`` (a name a line) or ``compact`` (MCP tools grouped by server).

        Returns:
            The text.
        """
        return render_announcement(self.added_names, self.removed_names, style)


def render_announcement(
    added: Sequence[str] = (), removed: Sequence[str] = (), style: Style = "plain"
) -> str:
    """Render announcements of added and removed deferred tools.

    Args:
        added: Names now available.
        removed: Names gone.
        style: ``plain`` or ``compact``.

    Returns:
        One ``<system-reminder>`` block per non-empty list, separated by a blank line.
    """
    blocks = [
        f"<system-reminder>\n{header}\n{_render_names(names, style)}\n</system-reminder>"
        for header, names in ((ADDED_HEADER, added), (REMOVED_HEADER, removed))
        if names
    ]
    return "\n\n".join(blocks)


def render_legacy_block(names: Iterable[str]) -> str:
    """Render the legacy block listing every deferred tool.

    Args:
        names: All deferred tool names.

    Returns:
        The ``<available-deferred-tools>`` block.
    """
    return f"<{LEGACY_TAG}>\n" + "\n".join(sorted(names)) + f"\n</{LEGACY_TAG}>"


def announced_names(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """Replay the announcements in a history.

    Args:
        messages: API messages (``role`` and ``content``, a string or blocks).

    Returns:
        The deferred names the model has been told of and not told are gone, since the last
        compaction (:func:`since_compaction`).
    """
    names: set[str] = set()
    for text in _user_texts(messages):
        for body in _REMINDER.findall(text):
            header, _, listing = body.partition("\n")
            if header == ADDED_HEADER:
                names.update(_parse_names(listing))
            elif header == REMOVED_HEADER:
                names.difference_update(_parse_names(listing))
    return names


def deferred_tools_delta(
    tools: Iterable[Tool | str], messages: Iterable[Mapping[str, Any]]
) -> DeferredToolsDelta | None:
    """Compare the deferred tools with what the history has announced.

    Args:
        tools: The tools deferred now (Tool objects or names).
        messages: The conversation so far.

    Returns:
        The names to announce, or ``None`` when the history is up to date.
    """
    current = {t.name if isinstance(t, Tool) else t for t in tools}
    announced = announced_names(messages)
    added, removed = current - announced, announced - current
    if not added and not removed:
        return None
    return DeferredToolsDelta(
        added_names=tuple(sorted(added)), removed_names=tuple(sorted(removed))
    )


class Announcements:
    """What one history announced and where it was last compacted, kept up to date as the
    history grows: each message is read once (:func:`announced_names` and
    :func:`last_compaction` read the whole history at each call).

    Each method takes the history as it is now: the messages equal to (mostly the same
    objects as) the last time's, up to the first that is not, are not read again
    (:func:`~nbagent.core.identity.equal_prefix`; a message is never changed in place:
    :class:`~nbagent.loop.state.AgentState`).
    """

    def __init__(self) -> None:
        self._seen: list[Mapping[str, Any]] = []
        self._compactions: list[int] = []
        """The indexes of the messages holding a (successful) compaction block."""
        self._announced: list[tuple[int, bool, tuple[str, ...]]] = []
        """Every announcement: its message's index, whether it adds, its names."""
        self._changes = 0
        """Counts the changes to the two lists above."""
        self._names: tuple[int, frozenset[str]] | None = None
        self._read: Since | None = None
        """The history as last read: when it is the same :class:`~nbagent.core.tracked.TrackedList`
        again (an agent's history), the messages its mark shows unchanged since are not
        compared again."""
        self._delta: tuple[frozenset[str], frozenset[str]] | None = None
        """The deferred names last compared, and the announced names they matched."""

    def last_compaction(self, messages: Sequence[Mapping[str, Any]]) -> int | None:
        """As :func:`last_compaction`.

        Args:
            messages: The history now.
        """
        self._update(messages)
        return self._compactions[-1] if self._compactions else None

    def names(self, messages: Sequence[Mapping[str, Any]]) -> frozenset[str]:
        """As :func:`announced_names`.

        Args:
            messages: The history now.
        """
        self._update(messages)
        since = self._compactions[-1] if self._compactions else -1
        if self._names is None or self._names[0] != self._changes:
            names: set[str] = set()
            for index, adds, listed in self._announced:
                if index < since:
                    continue
                if adds:
                    names.update(listed)
                else:
                    names.difference_update(listed)
            self._names = (self._changes, frozenset(names))
        return self._names[1]

    def delta(
        self, deferred: frozenset[str], messages: Sequence[Mapping[str, Any]]
    ) -> DeferredToolsDelta | None:
        """As :func:`deferred_tools_delta`; nothing is compared again while neither the
        deferred names (the same object) nor what the history announced changed.

        Args:
            deferred: The names deferred now
                (:meth:`~nbagent.catalogue.registry.ToolRegistry.deferred_names`).
            messages: The history now.
        """
        announced = self.names(messages)
        if self._delta is not None and self._delta[0] is deferred and self._delta[1] is announced:
            return None
        added, removed = deferred - announced, announced - deferred
        if not added and not removed:
            self._delta = (deferred, announced)
            return None
        return DeferredToolsDelta(tuple(sorted(added)), tuple(sorted(removed)))

    def _update(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Forget what changed since the last call, read what is new."""
        read, self._read = self._read, Since(messages)  # before reading: a change lowers it
        kept = equal_prefix_since(self._seen, messages, read)
        if kept == len(self._seen) == len(messages):
            return
        del self._seen[kept:]
        facts = (len(self._compactions), len(self._announced))
        while self._compactions and self._compactions[-1] >= kept:
            self._compactions.pop()
        while self._announced and self._announced[-1][0] >= kept:
            self._announced.pop()
        dropped = facts != (len(self._compactions), len(self._announced))
        facts = (len(self._compactions), len(self._announced))
        for index in range(kept, len(messages)):
            message = messages[index]
            self._seen.append(message)
            if _has_compaction(message):
                self._compactions.append(index)
            if message.get("role") == "user":
                for text in _texts(message):
                    for body in _REMINDER.findall(text):
                        header, _, listing = body.partition("\n")
                        if header in (ADDED_HEADER, REMOVED_HEADER):
                            names = tuple(_parse_names(listing))
                            self._announced.append((index, header == ADDED_HEADER, names))
        if dropped or facts != (len(self._compactions), len(self._announced)):
            self._changes += 1


def _render_names(names: Sequence[str], style: Style) -> str:
    """List names one a line, or with MCP tools grouped by server in the compact style."""
    if style == "plain":
        return "\n".join(sorted(names))
    groups: dict[str, list[str]] = {}
    lines: list[str] = []
    for name in sorted(names):
        server, tool = _split_mcp(name)
        if server is None:
            lines.append(name)
        else:
            groups.setdefault(server, []).append(tool)
    lines += [f"{MCP_PREFIX}{server}__: {', '.join(tools)}" for server, tools in groups.items()]
    return "\n".join(lines)


def _parse_names(listing: str) -> list[str]:
    """Read the names of an announcement in either style."""
    names: list[str] = []
    for line in listing.splitlines():
        line = line.strip()
        if ":" in line:
            prefix, _, tools = line.partition(": ")
            names.extend(prefix + tool.strip() for tool in tools.split(",") if tool.strip())
        elif line:
            names.append(line)
    return names


def _split_mcp(name: str) -> tuple[str | None, str]:
    """Split ``mcp__server__tool`` into server and tool; other names have no server."""
    if name.startswith(MCP_PREFIX):
        server, sep, tool = name[len(MCP_PREFIX) :].partition("__")
        if sep and server and tool:
            return server, tool
    return None, name


def last_compaction(messages: Sequence[Mapping[str, Any]]) -> int | None:
    """Find the message that holds a history's last (successful) compaction block.

    Args:
        messages: The conversation.

    Returns:
        Its index, or ``None`` when no message holds one.
    """
    for index in range(len(messages) - 1, -1, -1):
        if _has_compaction(messages[index]):
            return index
    return None


def _has_compaction(message: Mapping[str, Any]) -> bool:
    """Whether a message holds a (successful) compaction block."""
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(block, Mapping)
        and block.get("type") == COMPACTION
        and block.get("content")  # a failed compaction (no summary) drops nothing
        for block in content
    )


def since_compaction(messages: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The part of a history the model still sees: from its last ``compaction`` block on.

    The API drops everything before a compaction block (the block stands for it), so the
    announcements made before it are gone from what the model sees.

    Args:
        messages: The conversation.

    Returns:
        The messages from the one holding the last compaction block (all when none has).
    """
    index = last_compaction(messages)
    return messages if index is None else messages[index:]


def _user_texts(messages: Iterable[Mapping[str, Any]]) -> Iterable[str]:
    """Yield the text of every user message the model still sees, block by block."""
    for message in since_compaction(list(messages)):
        if message.get("role") == "user":
            yield from _texts(message)


def _texts(message: Mapping[str, Any]) -> Iterable[str]:
    """Yield the texts of a message, block by block."""
    content = message.get("content")
    if isinstance(content, str):
        yield content
        return
    for block in content or ():
        if isinstance(block, Mapping) and block.get("type") == "text":
            yield block.get("text", "")
