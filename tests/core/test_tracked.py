"""A list that knows what changed in it since each mark (nbagent.core.tracked)."""

from __future__ import annotations

import copy
import itertools
import pickle
import threading
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from nbagent.core.identity import equal_prefix
from nbagent.core.tracked import Mark, Since, TrackedList, equal_prefix_since

OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "append",
                "extend",
                "iadd",
                "imul",
                "insert",
                "pop",
                "remove",
                "clear",
                "sort",
                "reverse",
                "set",
                "set_slice",
                "set_step",
                "del",
                "del_slice",
                "mark",
            ]
        ),
        st.integers(-12, 12),
        st.integers(-12, 12),
    ),
    max_size=40,
)


def apply(
    items: list[Any], operation: str, a: int, b: int, new: Callable[[], Any] = object
) -> None:
    """One change of a list, the same for a plain list and a tracked one."""
    if operation == "append":
        items.append(new())
    elif operation == "extend":
        items.extend([new(), new()])
    elif operation == "iadd":
        items += [new()]
    elif operation == "imul":
        items *= abs(a) % 3
    elif operation == "insert":
        items.insert(a, new())
    elif operation == "pop" and items:
        items.pop(a % len(items))
    elif operation == "remove" and items:
        items.remove(items[a % len(items)])
    elif operation == "clear":
        items.clear()
    elif operation == "sort":
        items.sort(key=str)
    elif operation == "reverse":
        items.reverse()
    elif operation == "set" and items:
        items[a % len(items)] = new()
    elif operation == "set_slice":
        items[a:b] = [new()]
    elif operation == "set_step" and items:
        items[::2] = [new() for _ in items[::2]]
    elif operation == "del" and items:
        del items[a % len(items)]
    elif operation == "del_slice":
        del items[a:b]


@given(OPERATIONS)
def test_the_items_before_a_mark_are_the_objects_they_were(
    operations: list[tuple[str, int, int]],
) -> None:
    tracked = TrackedList(object() for _ in range(6))
    marks = [(tracked.mark(), list(tracked))]
    for operation, a, b in operations:
        if operation == "mark":
            marks.append((tracked.mark(), list(tracked)))
            continue
        apply(tracked, operation, a, b)
        for mark, seen in marks:
            low = min(mark.low, len(tracked))
            assert low <= len(seen)
            assert all(x is y for x, y in zip(tracked[:low], seen[:low], strict=True))


@given(OPERATIONS, st.booleans())
def test_equal_prefix_since_a_view_is_the_whole_comparisons(
    operations: list[tuple[str, int, int]], tracked_list: bool
) -> None:
    """What a reader kept of a list, and its view then: after any changes, the prefix found
    from the view's mark is the one a whole comparison finds (a plain list: no mark)."""
    items: list[Any] = TrackedList(range(6)) if tracked_list else list(range(6))
    kept, since = list(items), Since(items)
    for operation, a, b in operations:
        if operation == "mark":
            kept, since = list(items), Since(items)
            continue
        apply(items, operation, a, b, object)
        assert equal_prefix_since(kept, items, since) == equal_prefix(kept, items)
    assert equal_prefix_since(kept, items, None) == equal_prefix(kept, items)


@given(OPERATIONS)
def test_a_tracked_list_changes_as_a_list_does(operations: list[tuple[str, int, int]]) -> None:
    tracked = TrackedList(range(6))
    plain = list(tracked)
    for operation, a, b in operations:
        if operation == "mark":
            tracked.mark()
            continue
        apply(plain, operation, a, b, itertools.count(100).__next__)
        apply(tracked, operation, a, b, itertools.count(100).__next__)
        assert list(tracked) == plain
        assert type(tracked) is TrackedList


def test_an_append_keeps_every_mark_a_replacement_lowers_it() -> None:
    items = TrackedList(["a", "b", "c"])
    mark = items.mark()
    items.append("d")
    items += ["e"]
    assert mark.low == 3
    items[-1] = "E"
    assert mark.low == 3
    items[1] = "B"
    assert mark.low == 1
    again = items.mark()
    del items[4:]
    assert (mark.low, again.low) == (1, 4)


def test_copies_are_plain_or_new_tracked_lists_without_marks() -> None:
    items = TrackedList([1, 2, 3])
    mark = items.mark()
    for other in (copy.copy(items), copy.deepcopy(items), pickle.loads(pickle.dumps(items))):
        assert type(other) is TrackedList and other == items
        other.clear()
    assert mark.low == 3 and items == [1, 2, 3]
    assert type(items[:]) is list


def test_since_knows_only_the_same_tracked_list() -> None:
    items = TrackedList([1, 2, 3])
    since = Since(items)
    items.append(4)
    assert since.unchanged(items) == 3
    assert since.unchanged(TrackedList(items)) == 0  # another list: the reader compares
    plain = [1, 2, 3]
    assert Since(plain).unchanged(plain) == 0
    items.clear()
    assert since.unchanged(items) == 0


def test_marks_taken_by_several_threads_at_once_are_all_kept() -> None:
    items = TrackedList(range(10))
    marks: list[Mark] = []

    def take() -> None:
        for _ in range(300):
            marks.append(items.mark())

    threads = [threading.Thread(target=take) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    items[2] = "changed"
    assert len(marks) == 1800 and all(mark.low == 2 for mark in marks)
