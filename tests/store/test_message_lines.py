"""The one-pass reading of message records agrees with the record-by-record checks."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from nbagent.store.records import BLOCKS, RESULT_ITEMS, Line, read_lines, replayed

ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False), st.text(max_size=3)
)
"""Values that are wrong for most fields."""

FIELDS = {
    "text": st.text(max_size=5),
    "citations": st.one_of(st.none(), st.lists(st.just({}), max_size=1)),
    "source": st.one_of(st.fixed_dictionaries({"type": st.just("base64")}), st.just({})),
    "id": st.sampled_from(["toolu_1", "bad id", "", "toolu_1\n"]),
    "tool_use_id": st.sampled_from(["toolu_1", "bad id", "toolu_1\n"]),
    "name": st.sampled_from(["Read", "mcp__a__b", "no spaces allowed", "x" * 65, "Read\n"]),
    "tool_name": st.sampled_from(["Bash", "not a name!", "Bash\n"]),
    "input": st.one_of(st.just({}), st.just({"a": 1})),
    "thinking": st.text(max_size=3),
    "signature": st.one_of(st.none(), st.text(max_size=3)),
    "data": st.text(max_size=3),
    "server_name": st.text(max_size=3),
    "file_id": st.text(max_size=3),
    "is_error": st.booleans(),
    "title": st.text(max_size=3),
    "encrypted_content": st.one_of(st.none(), st.text(max_size=3)),
    "tool_changes": st.one_of(st.none(), st.just([])),
}
"""Values, mostly right, for the fields the block models name."""


def field_value(name: str) -> st.SearchStrategy[Any]:
    """A value for a field: usually one of its kind, sometimes any."""
    return st.one_of(FIELDS.get(name, ODD_VALUES), ODD_VALUES) if name in FIELDS else ODD_VALUES


@st.composite
def blocks(draw: st.DrawFn, kinds: list[str], depth: int = 0) -> Any:
    """A block of one of these types (or of none), its fields right, wrong or missing."""
    kind = draw(st.sampled_from([*kinds, "no_such_block"]))
    block: dict[str, Any] = {"type": kind}
    for name in draw(
        st.lists(st.sampled_from([*FIELDS, "content", "extra"]), max_size=5, unique=True)
    ):
        if name == "content":
            block[name] = draw(
                st.one_of(
                    st.text(max_size=3),
                    st.none(),
                    st.lists(blocks(list(RESULT_ITEMS), depth + 1), max_size=2)
                    if depth == 0
                    else st.just([]),
                )
            )
        else:
            block[name] = draw(field_value(name))
    return draw(st.one_of(st.just(block), st.just(block), ODD_VALUES))


@st.composite
def message_records(draw: st.DrawFn) -> dict[str, Any]:
    """A record that is usually a message record, of any blocks."""
    role = draw(st.sampled_from(["user", "assistant", "system"]))
    content = draw(st.one_of(st.text(max_size=3), st.lists(blocks(list(BLOCKS)), max_size=3)))
    record: dict[str, Any] = {"i": draw(st.sampled_from([0, -1, 1.0, True])), "message": {}}
    record["message"] = {"role": role, "content": content}
    if draw(st.booleans()):
        del record[draw(st.sampled_from(["i", "message"]))]
    return record


def slow_way(record: dict[str, Any]) -> Any:
    """What the record-by-record checks make of a record: its message, or its problems."""
    history = replayed([Line(2, json.loads(json.dumps(record)))])
    return history.problems or history.messages


@given(st.lists(message_records(), min_size=1, max_size=4))
def test_the_one_pass_reads_exactly_what_the_checks_accept(records: list[dict[str, Any]]) -> None:
    lines = read_lines([(2, json.dumps(record).encode()) for record in records])
    for record, line in zip(records, lines, strict=True):
        slow, fast = slow_way(record), replayed([line])
        assert (fast.problems or fast.messages) == slow
        if not isinstance(slow[0], str):  # accepted: the one pass took it
            assert line.checked


def test_a_line_the_fast_reader_cannot_parse_leaves_the_others_checked() -> None:
    good = b'{"i": 0, "message": {"role": "user", "content": "hi"}}'
    lone_surrogate = b'{"i": 1, "message": {"role": "assistant", "content": "\\ud800"}}'
    lines = read_lines([(2, good), (3, lone_surrogate), (4, good)])
    assert [line.checked for line in lines] == [True, False, True]
    assert lines[1].record == {"i": 1, "message": {"role": "assistant", "content": "\ud800"}}


def test_a_message_keeps_only_its_role_and_content_either_way() -> None:
    body = b'{"i": 0, "message": {"role": "user", "content": "hi", "stop_reason": null}}'
    [line] = read_lines([(2, body)])
    assert line.checked
    expected = [{"role": "user", "content": "hi"}]
    assert replayed([line]).messages == expected == slow_way(json.loads(body))
