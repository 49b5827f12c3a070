"""The key that signs conversations: private, and made by the first save."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.store.folders import notebook_folder
from nbagent.store.key import ConversationKeyError, conversation_key, key_path
from nbagent.store.saved import read_conversation
from tests.store.builders import NOTEBOOK, PLANTED, check, planted_file, signed_file

# -- signatures -----------------------------------------------------------------------------


def test_every_line_is_signed_with_a_private_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / ".nbagent"
    monkeypatch.setenv("NBAGENT_CONVERSATIONS", str(home / "conversations"))
    path = signed_file(home / "conversations")
    assert key_path() == home / "conversations.key"
    assert home.stat().st_mode & 0o777 == 0o700  # made by the notebook's folder, then closed
    assert key_path().stat().st_mode & 0o777 == 0o600
    assert len(key_path().read_text().strip()) == 64
    raw = path.read_bytes().splitlines()
    assert all(line.endswith(b'"}') and b',"mac":"' in line for line in raw)
    saved = read_conversation(path)
    assert saved is not None and saved.signed and saved.damage == ""
    assert saved.prompts == ["one", "three"]
    key_path().chmod(0o644)
    with pytest.raises(ConversationKeyError, match="others can read it .*chmod 600 it"):
        conversation_key()
    unreadable = read_conversation(path)
    assert unreadable is not None and not unreadable.signed and "chmod 600" in unreadable.damage
    key_path().chmod(0o600)
    home.chmod(0o755)
    assert conversation_key(create=True) is not None and home.stat().st_mode & 0o777 == 0o700


def test_without_a_key_nothing_verifies_and_the_first_save_makes_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NBAGENT_CONVERSATIONS", str(tmp_path / "nb" / "conversations"))
    assert conversation_key() is None and not (tmp_path / "nb").exists()  # reading makes none
    planted = planted_file(notebook_folder(NOTEBOOK))
    saved = read_conversation(planted)
    assert saved is not None and not saved.signed and saved.prompts == [PLANTED]
    assert "no conversation key" in saved.damage
    assert check(signed_file(tmp_path / "nb" / "conversations")).signed
