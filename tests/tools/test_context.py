"""ToolContext and its ReadLedger."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from nbagent.tools import Limits, ReadLedger, ToolContext
from nbagent.tools.files.stamps import FileStamp


def test_the_root_is_resolved(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    context = ToolContext(root=tmp_path / "link" / ".." / "link")
    assert context.root == (tmp_path / "real").resolve()
    assert context.notebook_path() is None and context.cell_id() is None
    assert context.limits == Limits()


def test_the_ledger_forgets_cells_seen_at_an_older_stamp() -> None:
    ledger = ReadLedger()
    path = Path("/nb.ipynb")
    ledger.note(path, FileStamp(1, "a"), {"c1"})
    ledger.note(path, FileStamp(1, "a"), {"c2"})
    assert ledger.cells(path) == {"c1", "c2"} and ledger.stamp(path) == FileStamp(1, "a")
    ledger.note(path, FileStamp(2, "b"))
    assert ledger.cells(path) == set()
    assert ledger.stamp(Path("/other")) is None


def test_for_shell_finds_the_notebook_and_its_folder(
    tmp_path: Path, shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = tmp_path / "project" / "nb.ipynb"
    notebook.parent.mkdir()
    notebook.write_text("{}")
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    shell.user_ns["__session__"] = str(notebook)
    context = ToolContext.for_shell(shell)
    assert context.root == notebook.parent.resolve()
    assert context.notebook_path() == notebook.resolve()
    assert context.cell_id() is None  # a plain InteractiveShell has no kernel
    assert context.shell is shell


def test_for_shell_without_a_notebook_uses_the_working_folder(
    tmp_path: Path, shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    shell.user_ns.pop("__session__", None)
    shell.user_ns.pop("__vsc_ipynb_file__", None)
    context = ToolContext.for_shell(shell, limits=Limits(variables=3))
    assert context.root == Path(os.getcwd()).resolve() and context.notebook_path() is None
    assert context.limits.variables == 3
