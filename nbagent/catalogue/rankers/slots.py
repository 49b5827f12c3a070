"""Positions of the searched tools in a ranker's index, kept as tools come and go.

A ranker stores what it knows of each tool at the tool's position (arrays, posting lists);
adding a tool takes a free position, removing one frees it, and nothing else moves, so a
change costs the size of the tools changed, never of the catalogue. A fresh index gives
tools the positions ``0, 1, ...`` in indexing order. Scores never depend on positions (ties
break by name), so an index grown by changes ranks exactly like one built afresh.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

from nbagent.core.tool import Tool

D = TypeVar("D")
"""What a ranker keeps of each tool (its analysed fields)."""


class Slots(Generic[D]):
    """The position of each indexed tool and what the ranker keeps of it; a removed tool's
    position is reused.

    Attributes:
        tools: The tool at each position, ``None`` where the position is free.
        names: The name of the tool at each position, ``""`` where it is free.
        docs: What the ranker keeps of the tool at each position, ``None`` where it is free.
        positions: Each indexed tool's position, by name.
    """

    def __init__(self) -> None:
        self.tools: list[Tool | None] = []
        self.names: list[str] = []
        self.docs: list[D | None] = []
        self.positions: dict[str, int] = {}
        self._free: list[int] = []

    def __len__(self) -> int:
        """Return how many positions there are (free ones included)."""
        return len(self.tools)

    @property
    def count(self) -> int:
        """How many tools are indexed."""
        return len(self.positions)

    def add(self, tool: Tool, doc: D) -> int:
        """Give a tool a position (a freed one if any, else a new one at the end).

        Args:
            tool: A tool whose name is not indexed.
            doc: What the ranker keeps of it.

        Returns:
            Its position.
        """
        if self._free:
            position = self._free.pop()
            self.tools[position], self.names[position] = tool, tool.name
            self.docs[position] = doc
        else:
            position = len(self.tools)
            self.tools.append(tool)
            self.names.append(tool.name)
            self.docs.append(doc)
        self.positions[tool.name] = position
        return position

    def remove(self, name: str) -> tuple[int, D]:
        """Free the position of a tool.

        Args:
            name: An indexed tool's name.

        Returns:
            The position it had, and what the ranker kept of it.
        """
        position = self.positions.pop(name)
        doc = self.docs[position]
        assert doc is not None
        self.tools[position], self.names[position], self.docs[position] = None, "", None
        self._free.append(position)
        return position, doc

    def indexed(self) -> dict[str, Tool]:
        """Return the indexed tools by name."""
        return {name: self.tools[p] for name, p in self.positions.items()}  # type: ignore[misc]


class SlotIndexed(Generic[D]):
    """A ranker whose index keeps its tools in :class:`Slots`: indexing a set of tools is
    updating the index by the difference."""

    slots: Slots[D]

    def update(self, added: Sequence[Tool], removed: Sequence[Tool]) -> None:
        """Remove tools from the searched set, then add tools, at the cost of those tools.

        Args:
            added: Tools to search from now on (their names are not indexed, or are removed).
            removed: Indexed tools to forget.
        """
        raise NotImplementedError

    def index(self, tools: Sequence[Tool]) -> None:
        """Make ``tools`` the searched set; tools indexed before are not analysed again.

        Args:
            tools: The deferred tools.
        """
        self.update(*difference(self.slots.indexed(), tools))


def difference(indexed: Mapping[str, Tool], tools: Sequence[Tool]) -> tuple[list[Tool], list[Tool]]:
    """Say what makes an indexed set the given one: tools to add and tools to remove.

    A tool is the same when it is the same object (tools are frozen; a re-registered tool of
    the same name is another one).

    Args:
        indexed: The tools indexed now, by name.
        tools: The tools wanted.

    Returns:
        The tools to add and the indexed tools to remove, each in their order.
    """
    wanted = {tool.name: tool for tool in tools}
    removed = [tool for name, tool in indexed.items() if wanted.get(name) is not tool]
    added = [tool for name, tool in wanted.items() if indexed.get(name) is not tool]
    return added, removed
