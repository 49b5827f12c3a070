"""Tests of nbagent.jupyter.display: live widgets replaced by a static transcript; terminal text."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nbagent.core.events import (
    PermissionAnswered,
    PermissionRequested,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSetAnnounced,
    Usage,
)
from nbagent.core.markup import Markdown
from nbagent.jupyter.display import CellTranscript
from tests.render.transcript.test_model import RUN

FIRST = ToolSetAnnounced(("TaskCreate", "AskUserQuestion"), (), "<reminder>", initial=True)
"""The conversation's first announcement of the deferred tools."""


@pytest.fixture(scope="module", autouse=True)
def shell() -> InteractiveShell:
    return InteractiveShell.instance()


def outputs(events: list = RUN, **options: Any) -> tuple[list[Any], str]:  # type: ignore[assignment]
    with capture_output() as captured:
        transcript = CellTranscript(**options)
        for event in events:
            transcript(event)
    return captured.outputs, captured.stdout


def test_live_view_is_a_widget_then_the_cell_keeps_static_markdown() -> None:
    shown, printed = outputs(live=True)
    first, last = shown[0].data, shown[-1].data
    assert "application/vnd.jupyter.widget-view+json" in first
    assert set(last) == {"text/markdown", "text/plain"}
    assert last["text/markdown"].count('<details class="nbagent-call') == 2
    assert "Let me look." in last["text/markdown"]
    assert '<div class="nbagent-answer"><p>Done.</p></div>' in last["text/markdown"]
    assert "<details" not in last["text/plain"]
    assert printed == ""


WIDGET = "application/vnd.jupyter.widget-view+json"


def test_a_run_that_only_answers_shows_one_output_and_makes_no_widget() -> None:
    events = [TextDelta("The answer "), TextDelta("is 42."), RunFinished("end_turn", "", Usage())]
    shown, _ = outputs(events, live=True)
    assert [WIDGET in output.data for output in shown] == [False, False]
    streamed, final = shown
    assert "The answer" in streamed.data["text/markdown"] and not streamed.update
    assert final.update  # the same output, now the static transcript
    markdown = final.data["text/markdown"]
    assert "is 42." in markdown and "nbagent-meter" in markdown


def test_a_one_word_answer_is_shown_once_when_the_run_ends_not_as_an_empty_output_first() -> None:
    shown, _ = outputs([TextDelta("Ready."), RunFinished("end_turn", "", Usage())], live=True)
    assert len(shown) == 1 and not shown[0].update
    assert "Ready." in shown[0].data["text/markdown"]


def test_the_widgets_take_the_answers_place_at_the_first_tool_call() -> None:
    events = [
        TextDelta("Let me look. "),
        ToolCallStarted("r", "Read", {"file_path": "a.txt"}),
        ToolCallFinished("r", "Read", "ok", "hi", 0.0),
        TextDelta("Done."),
        RunFinished("end_turn", "", Usage()),
    ]
    with capture_output() as captured:
        transcript = CellTranscript(live=True)
        for event in events:
            transcript(event)
            if isinstance(event, ToolCallStarted):
                view = transcript._view
                children = list(view._items.children)
    kinds = [(WIDGET in output.data, output.update) for output in captured.outputs]
    assert kinds == [(False, False), (True, True), (False, True)]
    answer, card = children  # the answer so far, then the call's card
    assert "Let me look." in answer.outputs[0]["data"]["text/markdown"]
    assert "Read" in card.value


def test_the_static_transcript_follows_the_mode() -> None:
    quiet = outputs([FIRST, *RUN], live=True)[0][-1].data
    verbose = outputs([FIRST, *RUN], live=True, verbose=True)[0][-1].data
    assert "AskUserQuestion" not in quiet["text/markdown"] + quiet["text/plain"]
    assert "allow: mode default" not in quiet["text/markdown"]
    assert (
        "AskUserQuestion" in verbose["text/markdown"] and "AskUserQuestion" in verbose["text/plain"]
    )
    assert "ok 0.01 s · allow: mode default" in verbose["text/markdown"]
    assert "ToolSearch(query='gh issue') ok 0.01 s" in verbose["text/plain"]


def test_in_a_terminal_the_run_is_printed_as_it_goes() -> None:
    shown, printed = outputs([FIRST, *RUN], live=False)
    assert shown == []
    lines = printed.splitlines()
    assert lines[0] == "± 3 deferred tools available: mcp__gh__ (2), Read"
    assert '✓ ToolSearch "gh issue" → loaded 1: mcp__gh__create_issue' in lines
    assert "AskUserQuestion" not in printed
    assert lines[-1].startswith("tokens: 130 in")


def test_in_a_terminal_verbose_prints_the_details() -> None:
    printed = outputs([FIRST, *RUN], live=False, verbose=True)[1]
    assert printed.startswith("± 2 deferred tools available: TaskCreate, AskUserQuestion\n")
    assert "✓ ToolSearch(query='gh issue') ok 0.01 s → loaded 1: mcp__gh__create_issue" in printed
    assert "    ToolSearch 'gh issue': mcp__gh__create_issue (24)" in printed


def test_in_a_terminal_a_question_is_printed_before_it_is_asked() -> None:
    """The waiting card comes before the prompt on stdin; the call's line once it ended."""
    asked: list[str] = []
    transcript = CellTranscript(live=False)
    events = [
        TextDelta("Checking."),
        ToolCallStarted("p", "Bash", {"command": "git status"}),
        PermissionRequested("p", "Bash", "git status", "", "Bash(git status:*)"),
        PermissionAnswered("p", "yes"),
        ToolCallFinished("p", "Bash", "ok", "clean", 0.1),
        TextDelta("Clean."),
        RunFinished("end_turn", "Clean.", Usage()),
    ]
    with capture_output() as captured:
        for event in events:
            transcript(event)
            asked.append(captured.stdout)
    assert asked[2] == (
        "Checking.\n? Bash git status → waiting for your answer\n    git status\n"
        "    y yes · n no · a always (adds Bash(git status:*))\n"
    )
    assert captured.stdout.splitlines()[4:6] == [
        "✓ Bash git status → clean · allowed by you",
        "Clean.",
    ]


def test_in_a_terminal_a_running_call_holds_back_what_follows_it() -> None:
    events = [
        ToolCallStarted("a", "Bash", {"command": "sleep 9"}),
        ToolCallStarted("b", "Read", {"file_path": "a.txt"}),
        ToolCallFinished("b", "Read", "ok", "hi", 0.0),
        TextDelta("Waiting."),
    ]
    assert outputs(events, live=False)[1] == ""
    printed = outputs(
        [*events, ToolCallFinished("a", "Bash", "ok", "", 9.0), TextDelta(".")], live=False
    )[1]
    assert printed.splitlines()[:2] == ["✓ Bash sleep 9 → no output · 9.0 s", "✓ Read a.txt → hi"]


def test_quiet_shows_the_answer_alone() -> None:
    shown, printed = outputs(quiet=True, live=True)
    answer = '<div class="nbagent-answer"><p>Done.</p></div>'
    assert [o.data["text/markdown"] for o in shown] == [answer] and printed == ""


def test_markdown_has_a_plain_text_fallback() -> None:
    md = Markdown("**x**", plain="x")
    assert md._repr_markdown_() == "**x**" and repr(md) == "x"
