"""Saved conversations found: by the start of an id, reading no more files than needed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from nbagent.core.errors import NbAgentError
from nbagent.store import saved as conversations
from nbagent.store.folders import notebook_folder
from nbagent.store.journal import ConversationLog
from nbagent.store.saved import find_conversation, saved_conversations
from tests.messages import user
from tests.store.builders import NOTEBOOK


def test_find_by_id_prefix_says_when_none_or_several_match(tmp_path: Path) -> None:
    folder = notebook_folder(NOTEBOOK, tmp_path)
    assert find_conversation(NOTEBOOK, root=tmp_path) is None
    for n, ident in enumerate(("abc111", "abc222", "def333")):
        log = ConversationLog.create(folder, NOTEBOOK, "m", ident=ident)
        log.append({"i": 0, "message": user(f"from {ident}")})
        os.utime(log.path, (1_700_000_000 + n, 1_700_000_000 + n))  # the last written first
    ConversationLog.create(folder, NOTEBOOK, "m", ident="empty0")  # no message: not listed
    assert [s.id for s in saved_conversations(NOTEBOOK, tmp_path)] == [
        "def333",
        "abc222",
        "abc111",
    ]
    last, named = (
        find_conversation(NOTEBOOK, root=tmp_path),
        find_conversation(NOTEBOOK, "ABC1", root=tmp_path),
    )
    assert last is not None and last.id == "def333"
    assert named is not None and named.id == "abc111"
    with pytest.raises(NbAgentError, match="2 saved conversations have an id starting with 'abc'"):
        find_conversation(NOTEBOOK, "abc", root=tmp_path)
    with pytest.raises(NbAgentError, match="No saved conversation .* starting with 'zz'"):
        find_conversation(NOTEBOOK, "zz", root=tmp_path)


def test_finding_one_reads_only_the_files_it_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = notebook_folder(NOTEBOOK, tmp_path)
    for n, ident in enumerate(("aaa111", "bbb222", "ccc333", "ddd444")):
        log = ConversationLog.create(folder, NOTEBOOK, "m", ident=ident)
        log.append({"i": 0, "message": user(f"from {ident}")})
        os.utime(log.path, (1_700_000_000 + n, 1_700_000_000 + n))
    read: list[str] = []
    real = conversations.read_conversation

    def counted(path: Path) -> Any:
        read.append(path.stem.rpartition("-")[2])
        return real(path)

    monkeypatch.setattr(conversations, "read_conversation", counted)
    found = find_conversation(NOTEBOOK, "bbb", root=tmp_path)
    assert found is not None and found.prompts == ["from bbb222"] and read == ["bbb222"]
    read.clear()
    last = find_conversation(NOTEBOOK, root=tmp_path)
    assert last is not None and last.id == "ddd444" and read == ["ddd444"]
