"""Fixtures of the built-in tools' tests: a context over a temporary folder, a real shell."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nbagent.core.tool import Tool
from nbagent.tools import ToolContext
from tests.tools.helpers import LazyTools


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The working folder of the tools (a fresh temporary folder)."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def context(root: Path) -> ToolContext:
    """A context over ``root`` with no notebook and no kernel."""
    return ToolContext(root=root)


@pytest.fixture
def tools(context: ToolContext) -> dict[str, Tool]:
    """The built-in tools over ``context``, by name (built on first use)."""
    return LazyTools(context)


@pytest.fixture
def shell() -> Iterator[Any]:
    """The process's real IPython InteractiveShell; variables a test adds are removed after."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    before = set(ip.user_ns)
    yield ip
    for name in set(ip.user_ns) - before:
        del ip.user_ns[name]
