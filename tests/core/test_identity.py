"""Where two sequences hold the very same objects."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nbagent.core.identity import equal_prefix, same_prefix, same_suffix


def test_a_prefix_counts_the_same_objects_not_equal_ones() -> None:
    a = [{"i": i} for i in range(5)]
    assert same_prefix(a, list(a)) == 5
    assert same_prefix(a, a[:3]) == same_prefix(a[:3], a) == 3
    assert same_prefix(a, [a[0], {"i": 1}, a[2]]) == 1
    assert same_prefix([], a) == 0


def test_a_suffix_counts_from_the_end_up_to_a_limit() -> None:
    a = [{"i": i} for i in range(5)]
    assert same_suffix(a, list(a), 10) == 5
    assert same_suffix(a, [{"i": 0}, *a[1:]], 10) == 4
    assert same_suffix(a, [*a[:4], {"i": 4}], 10) == 0
    assert same_suffix(a, list(a), 2) == 2
    assert same_suffix(a, [], 3) == 0


def test_an_equal_prefix_counts_equal_items_as_well() -> None:
    a = [{"i": i} for i in range(40)]
    assert equal_prefix(a, [dict(m) for m in a]) == 40
    assert equal_prefix(a, [*a[:30], {"i": -1}, *a[31:]]) == 30
    assert equal_prefix(a, [*a[:3], {"i": -1}]) == 3
    assert equal_prefix(a, a[:39]) == 39
    assert equal_prefix([], a) == 0
    assert equal_prefix(a, (*a[:5], {"i": -1})) == 5  # a list and a tuple


@given(
    old=st.lists(st.integers(0, 3), max_size=30),
    new=st.lists(st.integers(0, 3), max_size=30),
    kinds=st.tuples(st.sampled_from([list, tuple]), st.sampled_from([list, tuple])),
)
def test_an_equal_prefix_is_the_first_difference_whatever_the_sequences(
    old: list[int], new: list[int], kinds: tuple[type, type]
) -> None:
    naive = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)),
    )
    assert equal_prefix(kinds[0](old), kinds[1](new)) == naive
