"""Resolving paths against the root, and the leave-the-root permission rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.errors import ToolError
from nbagent.tools import ToolContext
from nbagent.tools.paths import ask_outside_root, inside_root, refuse_open_notebook, resolve, shown


def test_relative_paths_start_at_the_root(context: ToolContext, root: Path) -> None:
    assert resolve(context, "a/b.txt") == root / "a" / "b.txt"
    assert resolve(context, "a/../c.txt") == root / "c.txt"
    assert resolve(context, str(root / "x")) == root / "x"
    assert resolve(context, "~") == Path.home().resolve()
    with pytest.raises(ToolError, match="The path is empty"):
        resolve(context, "  ")


def test_paths_are_shown_relative_to_the_root_when_inside(context: ToolContext, root: Path) -> None:
    assert shown(context, root) == "."
    assert shown(context, root / "a" / "b") == "a/b"
    assert shown(context, root.parent) == str(root.parent)
    assert inside_root(context, root / "a") and not inside_root(context, root.parent / "other")


def test_a_folder_beside_the_root_with_the_same_prefix_is_outside(tmp_path: Path) -> None:
    context = ToolContext(root=tmp_path / "work")
    (tmp_path / "work").mkdir()
    hook = ask_outside_root(context, lambda i: [i["p"]], "read")
    decision = hook({"p": str(tmp_path / "work-other" / "f")})
    assert decision is not None and decision.behavior == "ask"
    assert decision.rule == "outside the working folder"
    assert hook({"p": "f"}) is None and hook({"p": ""}) is None


def test_the_open_notebook_is_refused_by_name(root: Path) -> None:
    notebook = root / "nb.ipynb"
    context = ToolContext(root=root, notebook_path=lambda: notebook)
    with pytest.raises(ToolError, match="nb.ipynb is the open notebook"):
        refuse_open_notebook(context, notebook, "Write")
    refuse_open_notebook(context, root / "other.ipynb", "Write")
