"""Where saved conversations are kept: the notebook's path and folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbagent.store.folders import notebook_folder, notebook_path


def test_the_notebook_is_the_session_else_jpy_session_name_else_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Shell:
        user_ns: dict[str, Any] = {}

    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.ipynb").write_text("{}")
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert notebook_path(Shell()) == str(tmp_path.resolve())
    monkeypatch.setenv("JPY_SESSION_NAME", "sub/b.ipynb")  # relative to the server's root
    assert notebook_path(Shell()) == str((tmp_path / "b.ipynb").resolve())
    shell = Shell()
    shell.user_ns = {"__session__": str(tmp_path / "a.ipynb")}
    assert notebook_path(shell) == str((tmp_path / "a.ipynb").resolve())
    assert notebook_folder("/x/a.ipynb", tmp_path) != notebook_folder("/y/a.ipynb", tmp_path)
