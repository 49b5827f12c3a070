"""A list that knows what changed in it: so that whoever looked at it before reads again only
what changed since, not the whole list.

An agent's history grows by a few messages a turn, and several readers (the repair before a
run, the state a record saves, the recorder, a request's body) need to know what stayed the
same since they last read it. Comparing the lists costs the whole history at each look; a
:class:`TrackedList` instead lowers each of its :class:`Mark` objects to the first index any
change touched (``append``, ``del items[i:]``, ``items[i] = ...``, a sort...), so that the
items before a mark's :attr:`~Mark.low` are, provably, the very objects they were when the
mark was taken. A message changed *in place* (a dict mutated) is not a change of the list:
the agent never does that (it replaces a message to merge into it).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import Any, SupportsIndex

from nbagent.core.identity import equal_prefix

_MARKING = threading.Lock()
"""Held while a mark is added (two threads adding marks to one list at once keep both)."""


class Mark:
    """A point in a :class:`TrackedList`'s life: the items before :attr:`low` have not been
    replaced, moved or removed since (by the list's own methods)."""

    __slots__ = ("low", "__weakref__")

    def __init__(self, low: int) -> None:
        self.low = low
        """How many first items are the same objects as when the mark was taken."""


class TrackedList(list[Any]):
    """A list that lowers its marks to the first index each change touches.

    Every method of ``list`` that changes it is tracked; copying (``copy``, ``pickle``,
    slicing) gives a list without marks. A change that fails after it was noted only makes
    a mark lower than it could be (its reader reads a little more).
    """

    __slots__ = ("_marks",)

    def __init__(self, items: Iterable[Any] = ()) -> None:
        super().__init__(items)
        self._marks: list[weakref.ref[Mark]] = []

    def mark(self) -> Mark:
        """A new mark at the list's end: every item the same until a change touches it."""
        mark = Mark(len(self))
        with _MARKING:  # a new list: one being walked by a change is left as it was
            live = [ref for ref in self._marks if ref() is not None]
            self._marks = [*live, weakref.ref(mark)]
        return mark

    def _changed(self, index: int) -> None:
        """Lower every live mark to ``index`` (a mark added meanwhile in another thread was
        taken after the change began, and its reader reads the list after it)."""
        for ref in self._marks:
            mark = ref()
            if mark is not None and mark.low > index:
                mark.low = index

    def _start(self, key: SupportsIndex | slice) -> int:
        """The first index a subscript touches (0 for a slice with a step)."""
        if isinstance(key, slice):
            start, _, step = key.indices(len(self))
            return start if step == 1 else 0
        index = key.__index__()
        return max(index + len(self), 0) if index < 0 else index

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return (type(self), (list(self),))

    def __setitem__(self, key: Any, value: Any) -> None:
        self._changed(self._start(key))
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self._changed(self._start(key))
        super().__delitem__(key)

    def __iadd__(self, items: Iterable[Any]) -> TrackedList:  # type: ignore[override,misc]
        self._changed(len(self))
        return super().__iadd__(items)  # type: ignore[return-value]

    def __imul__(self, times: SupportsIndex) -> TrackedList:  # type: ignore[override,misc]
        self._changed(len(self) if times.__index__() > 0 else 0)
        return super().__imul__(times)  # type: ignore[return-value]

    def append(self, item: Any) -> None:
        """Append an item (marks after the last item stay)."""
        self._changed(len(self))
        super().append(item)

    def extend(self, items: Iterable[Any]) -> None:
        """Append items."""
        self._changed(len(self))
        super().extend(items)

    def insert(self, index: SupportsIndex, item: Any) -> None:
        """Insert an item before an index."""
        self._changed(min(self._start(index), len(self)))
        super().insert(index, item)

    def pop(self, index: SupportsIndex = -1) -> Any:
        """Remove and return an item (the last by default)."""
        self._changed(self._start(index))
        return super().pop(index)

    def remove(self, item: Any) -> None:
        """Remove the first item equal to ``item``."""
        self._changed(self.index(item))
        super().remove(item)

    def clear(self) -> None:
        """Remove every item."""
        self._changed(0)
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        """Sort in place."""
        self._changed(0)
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        """Reverse in place."""
        self._changed(0)
        super().reverse()


class Since:
    """What a reader saw of a list: the list itself, and a mark on it when it is tracked.

    Args:
        items: The list as it is now.
    """

    __slots__ = ("items", "mark")

    def __init__(self, items: Sequence[Any]) -> None:
        self.items = items
        self.mark = items.mark() if isinstance(items, TrackedList) else None

    def unchanged(self, items: Sequence[Any]) -> int:
        """How many first items of ``items`` are known, without reading them, to be the very
        objects they were when this was taken: the mark's, when ``items`` is the same tracked
        list; else 0 (the reader compares them itself)."""
        if self.mark is None or items is not self.items:
            return 0
        return min(self.mark.low, len(items))


def equal_prefix_since(old: Sequence[Any], new: Sequence[Any], since: Since | None) -> int:
    """:func:`~nbagent.core.identity.equal_prefix` of two lists, where ``old`` is what a
    reader kept of ``new`` when it took ``since``: the first items ``since``'s mark shows
    unchanged are counted without being read, then the equal ones after them are.

    Args:
        old: What the reader kept (``new``'s items, or a first part of them, as they were).
        new: The list now.
        since: What the reader saw of ``new`` then; None when it has not seen it.

    Returns:
        How many first items of ``new`` are those of ``old`` (the same objects, or equal).
    """
    known = min(since.unchanged(new), len(old)) if since is not None else 0
    return known + equal_prefix(old[known:], new[known:])
