"""Where two sequences hold the very same objects: what is unchanged between two versions of
a history or of a request, found at C speed (``operator.is_not`` over both), so that only what
changed is worked on again.

Identity, not equality: the agent never changes a message in place (it replaces one to merge
into it), so the same object is the same content.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any


def same_prefix(old: Sequence[Any], new: Sequence[Any]) -> int:
    """How many leading items two sequences share, object for object.

    Args:
        old: One sequence.
        new: The other.

    Returns:
        The length of the longest common prefix by identity.
    """
    length = min(len(old), len(new))
    near = max(length - 8, 0)  # a history differs most often in its last messages
    if all(map(operator.is_, old[:near], new)):  # 3 times as fast as below
        return next((i for i in range(near, length) if old[i] is not new[i]), length)
    differ = map(operator.is_not, old, new)
    return next(itertools.compress(itertools.count(), differ))


def same_suffix(old: Sequence[Any], new: Sequence[Any], limit: int) -> int:
    """How many trailing items two sequences share, object for object, up to ``limit``.

    Args:
        old: One sequence.
        new: The other.
        limit: The most to count (so that a suffix does not overlap a prefix already found).

    Returns:
        The length of the longest common suffix by identity, at most ``limit``.
    """
    length = min(len(old), len(new), limit)
    near = max(length - 8, 0)  # a list of tools differs most often in its first items
    if all(map(operator.is_, old[len(old) - near :], new[len(new) - near :])):
        return next(
            (i for i in range(near, length) if old[-1 - i] is not new[-1 - i]),
            length,
        )
    differ = map(operator.is_not, reversed(old), reversed(new))
    return next(itertools.compress(itertools.count(), differ))


def equal_prefix(old: Sequence[Any], new: Sequence[Any]) -> int:
    """How many leading items two sequences share, equal or the same objects.

    Many times as fast as :func:`same_prefix` where most items are the same objects (a list
    comparison skips those without looking inside), for whoever reads content: equal
    messages hold the same texts and blocks (though ``1 == 1.0 == True``, and a dict's key
    order is not compared: :func:`same_prefix` where the exact encoding counts).

    Args:
        old: One sequence.
        new: The other.

    Returns:
        The length of the longest common prefix by equality.
    """
    high = min(len(old), len(new))
    # Compared as two lists (a list never equals a tuple), copying the longer one only.
    left = _first(old, high)
    right = _first(new, high)
    if left == right:
        return high
    low = 0
    near = max(high - 8, 0)  # a history differs most often in its last messages
    if left[:near] == right[:near]:
        low = near
    while high - low > 1:  # the items before low are equal; the one before high is not
        middle = (low + high) // 2
        if left[low:middle] == right[low:middle]:
            low = middle
        else:
            high = middle
    return low


def _first(items: Sequence[Any], count: int) -> list[Any]:
    """The first ``count`` items as a list: the list itself when it has no more, else a slice
    of a list (a subclass's too) or tuple (a copy of its pointers, many times as fast as
    iterating it), else a new list."""
    if isinstance(items, list):
        return items if len(items) == count else items[:count]
    if type(items) is tuple:
        return list(items[:count])
    return list(itertools.islice(items, count))
