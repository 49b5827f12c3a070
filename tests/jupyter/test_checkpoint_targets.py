"""Which checkpoint ``%agent undo`` and ``%agent redo`` take (no kernel: files only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.error import UsageError

from nbagent.jupyter.checkpoint_magics import _undo_target
from nbagent.tools.checkpoints.undo import undo
from tests.tools.checkpoints.test_undo import setup
from tests.tools.helpers import text


def test_redo_twice_does_not_undo_again(tmp_path: Path) -> None:
    """%agent redo takes back the last undo; a second redo finds nothing to take back."""
    tools, log, context = setup(tmp_path)
    log.begin(None, "write")
    text(tools["Write"], file_path=str(tmp_path / "f.txt"), content="agent")
    item = log.end()
    assert item is not None
    undone = undo(context, log, [_undo_target(log, "undo", None)])
    assert not (tmp_path / "f.txt").exists() and undone.record is not None
    undo(context, log, [_undo_target(log, "redo", None)])
    assert (tmp_path / "f.txt").read_text() == "agent"
    with pytest.raises(UsageError, match="Nothing to redo"):
        _undo_target(log, "redo", None)
    undo(context, log, [_undo_target(log, "undo", None)])  # the cell's changes, again
    assert not (tmp_path / "f.txt").exists()
