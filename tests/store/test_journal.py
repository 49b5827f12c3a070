"""The signed file: every change to a conversation's lines is detected."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.store.folders import notebook_folder
from nbagent.store.journal import verify
from nbagent.store.key import conversation_key
from nbagent.store.saved import read_conversation
from tests.messages import assistant, call, text, user
from tests.store.builders import PLANTED, check, planted_file, recorder, signed_file


def test_a_planted_file_and_every_change_are_detected(tmp_path: Path) -> None:
    path = signed_file(tmp_path)
    good = path.read_bytes()
    header, first, second, third, end = good.split(b"\n")
    assert end == b"" and check(path).signed

    def damage(data: bytes, where: Path = path) -> str:
        where.write_bytes(data)
        saved = read_conversation(where)
        assert saved is not None and not saved.signed, data
        return saved.damage

    fake = json.dumps({"i": 1, "message": user(PLANTED)}).encode()
    edited = first.replace(b'"one"', b'"ONE"')
    assert damage(b"\n".join([header, edited, second, third, b""])) == "line 2 has no valid MAC"
    assert damage(b"\n".join([header, first, fake, second, third, b""])) == (
        "line 3 has no valid MAC"
    )
    assert damage(b"\n".join([header, first, first, second, third, b""])) == (
        "line 3 has no valid MAC"  # a line of its own, replayed
    )
    assert damage(b"\n".join([header, second, first, third, b""])) == "line 2 has no valid MAC"
    assert damage(b"\n".join([header, first, third, b""])) == "line 3 has no valid MAC"
    saved = read_conversation(path)
    assert saved is not None and saved.messages == [user("one")]  # what verifies before
    assert damage(good[:-1] + b"x") == "line 4 has no valid MAC"  # a newline changed
    path.write_bytes(good)
    other = path.with_name(path.name.replace(path.stem[-8:], "0badc0de"))
    assert damage(good, other) == "its first line has no valid MAC"  # under another id
    elsewhere = notebook_folder("/work/other.ipynb", tmp_path) / path.name
    elsewhere.parent.mkdir()
    assert damage(good, elsewhere) == "its first line has no valid MAC"  # another notebook's
    planted = read_conversation(planted_file(path.parent))
    assert planted is not None and not planted.signed and planted.prompts == [PLANTED]
    assert planted.damage == "its first line has no valid MAC"


def test_a_file_cut_short_still_verifies_and_goes_on_signed(tmp_path: Path) -> None:
    path = signed_file(tmp_path)
    good = path.read_bytes()
    lines = good.split(b"\n")
    path.write_bytes(b"\n".join(lines[:3]) + b"\n")  # at a record's end: still signed
    cut = read_conversation(path)
    assert cut is not None and cut.signed and cut.messages == [user("one"), assistant(text("two"))]
    path.write_bytes(good[:-20])  # killed in the middle of the last line's write
    cut = read_conversation(path)
    assert cut is not None and cut.signed and cut.skipped == 1 and len(cut.messages) == 2
    again = recorder(tmp_path)
    again.attach(cut)
    again.sync([*cut.messages, user("three, again")])
    saved = read_conversation(path)
    assert saved is not None and saved.signed and saved.skipped == 1
    assert saved.prompts == ["one", "three, again"]
    acknowledged = lines[3][:-19]  # the remnant, then the record that acknowledges it
    record = json.loads(path.read_text().splitlines()[4])
    assert record.pop("mac") and record == {"cut": hashlib.sha256(acknowledged).hexdigest()}


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_flipping_any_byte_of_a_signed_file_fails_verification(
    data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("flips")
    path = signed_file(root, user("é ✓ \ud83d"), assistant(text("two"), call("t1", x=1)))
    if data.draw(st.booleans(), label="with a mended crash"):
        path.write_bytes(path.read_bytes()[:-7])
        saved = read_conversation(path)
        assert saved is not None
        log = recorder(root)
        log.attach(saved)
        log.sync([*saved.messages, user("after the crash")])
    good = path.read_bytes()
    assert check(path).signed
    where = data.draw(st.integers(0, len(good) - 1), label="byte")
    flip = data.draw(st.integers(1, 255), label="xor")
    changed = good[:where] + bytes([good[where] ^ flip]) + good[where + 1 :]
    assert not verify(changed, path, conversation_key()).signed
