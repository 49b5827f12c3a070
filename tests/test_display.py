"""Tests of nbagent.display: live widgets replaced by a static transcript; terminal text."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent.display import CellTranscript, Markdown
from tests.test_transcript import RUN


@pytest.fixture(scope="module", autouse=True)
def shell() -> InteractiveShell:
    return InteractiveShell.instance()


def outputs(**options: Any) -> tuple[list[Any], str]:
    with capture_output() as captured:
        transcript = CellTranscript(**options)
        for event in RUN:
            transcript(event)
    return captured.outputs, captured.stdout


def test_live_view_is_a_widget_then_the_cell_keeps_static_markdown() -> None:
    shown, printed = outputs(live=True)
    first, last = shown[0].data, shown[-1].data
    assert "application/vnd.jupyter.widget-view+json" in first
    assert set(last) == {"text/markdown", "text/plain"}
    assert last["text/markdown"].count('<details class="nbagent-call') == 2
    assert "Let me look." in last["text/markdown"] and "Done." in last["text/markdown"]
    assert "<details" not in last["text/plain"]
    assert printed == ""


def test_in_a_terminal_the_run_is_printed_as_it_goes() -> None:
    shown, printed = outputs(live=False)
    assert shown == []
    lines = printed.splitlines()
    assert lines[0] == "± 3 deferred tools available: mcp__gh__ (2), Read"
    assert "✓ ToolSearch(query='gh issue') ok 0.01 s" in lines
    assert lines[-1].startswith("tokens: 130 in")


def test_quiet_shows_the_answer_alone() -> None:
    shown, printed = outputs(quiet=True, live=True)
    assert [o.data["text/markdown"] for o in shown] == ["Done."] and printed == ""


def test_markdown_has_a_plain_text_fallback() -> None:
    md = Markdown("**x**", plain="x")
    assert md._repr_markdown_() == "**x**" and repr(md) == "x"
