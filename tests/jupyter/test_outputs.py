"""Tests of nbagent.jupyter.outputs: notices shown as a quoted block, and where the code runs."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.core.notices import Notices
from nbagent.jupyter import outputs


def test_notices_are_a_quoted_block_a_line_each() -> None:
    assert outputs.notices_markdown(["**a** started", "b failed"]) == (
        "> **a** started  \n> b failed  "
    )


def test_notices_are_shown_once(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []
    monkeypatch.setattr(outputs, "display", lambda markdown: shown.append(markdown.text))
    notices = Notices()
    notices.add("server `x` connected")
    outputs.show_notices(notices)
    outputs.show_notices(notices)
    assert shown == ["> server `x` connected  "]


def test_a_shell_without_a_kernel_is_not_a_kernel() -> None:
    InteractiveShell.instance()
    assert outputs.in_kernel() is False
