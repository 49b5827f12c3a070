"""Tests of nbagent.jupyter.widgets: the live widget tree for a scripted run."""

from __future__ import annotations

from nbagent.core.events import (
    Citation,
    PermissionAnswered,
    PermissionRequested,
    TextCited,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSetAnnounced,
    WebPage,
    WebSearched,
)
from nbagent.jupyter.widgets import TranscriptView
from nbagent.render.transcript.model import Transcript
from tests.render.transcript.test_model import RUN

ASKING = [
    ToolCallStarted("a", "Read", {"file_path": "a.txt"}),
    ToolCallStarted("p", "Bash", {"command": "rm -rf build"}),
    PermissionRequested("p", "Bash", "rm -rf build", "", "Bash(rm:*)"),
    ToolCallFinished("a", "Read", "ok", "hello", 0.0),
]
"""Two calls at once: one waits for the user while the other ends."""


def live(events: list, max_cards: int = 50, verbose: bool = False) -> TranscriptView:  # type: ignore[type-arg]
    transcript = Transcript()
    view = TranscriptView(transcript, max_cards=max_cards, verbose=verbose)
    for event in events:
        item = transcript.apply(event)
        if item is not None:
            view.show(item)
    view.refresh_meter()
    return view


def test_a_scripted_run_becomes_this_widget_tree() -> None:
    view = live(RUN)
    more, items, meter, asking = view.box.children
    kinds = [type(child).__name__ for child in items.children]
    assert kinds == ["HTML", "Output", "HTML", "HTML", "HTML", "Output"]
    banner, answer, search_card, error_card, notice, last = items.children
    assert "3 deferred tools available" in banner.value
    assert answer.outputs[0]["data"]["text/markdown"] == (
        '<div class="nbagent-narration"><p>Let me look.</p></div>'
    )
    assert "nbagent-narration" in answer._dom_classes
    assert search_card.value.startswith('<details class="nbagent-call nbagent-ok tex2jax_ignore">')
    assert "<td>loaded</td>" in search_card.value  # the table is the card's body
    assert "nbagent-error" in error_card.value and "deny: rule" not in error_card.value
    assert "Sending the turn again." in notice.value
    assert (
        last.outputs[0]["data"]["text/markdown"] == '<div class="nbagent-answer"><p>Done.</p></div>'
    )
    assert "tokens: 130 in" in meter.value
    assert more.layout.display == "none" and asking.children == ()


def test_verbose_cards_keep_the_details() -> None:
    first = ToolSetAnnounced(("TaskCreate",), (), "<reminder>", initial=True)
    quiet, verbose = live([first, *RUN]), live([first, *RUN], verbose=True)
    assert len(quiet.box.children[1].children) == len(live(RUN).box.children[1].children)
    assert not any("TaskCreate" in getattr(c, "value", "") for c in quiet.box.children[1].children)
    banner = verbose.box.children[1].children[0]
    assert "1 deferred tool available: TaskCreate" in banner.value
    search_card = verbose.box.children[1].children[3]
    assert "ok 0.01 s · allow: mode default" in search_card.value


def test_a_waiting_call_is_the_last_thing_above_the_stdin_box() -> None:
    view = live(ASKING)
    more, items, meter, asking = view.box.children
    assert view.box.children[-1] is asking
    [question] = asking.children
    assert "nbagent-waiting" in question.value and "<code>rm -rf build</code>" in question.value
    read, bash = items.children
    assert bash.layout.display == "none" and read.layout.display is None
    assert "nbagent-ok" in read.value


def test_after_the_answer_the_card_goes_back_to_its_place() -> None:
    view = live([*ASKING, PermissionAnswered("p", "always", "Bash(rm:*)")])
    _, items, _, asking = view.box.children
    assert asking.children == ()
    bash = items.children[1]
    assert bash.layout.display is None and "nbagent-running" in bash.value


def test_an_answer_widget_is_refreshed_in_place() -> None:
    transcript = Transcript()
    view = TranscriptView(transcript)
    for piece in ("a", "b", "c"):
        view.show(transcript.apply(TextDelta(piece)))  # type: ignore[arg-type]
    [output] = view.box.children[1].children
    assert output.outputs[0]["data"]["text/markdown"] == (
        '<div class="nbagent-narration"><p>abc</p></div>'
    )


def test_hundreds_of_calls_keep_a_bounded_number_of_widgets() -> None:
    events: list = []
    for i in range(500):
        events += [
            ToolCallStarted(f"t{i}", "Echo", {"i": i}),
            ToolCallFinished(f"t{i}", "Echo", "ok", str(i), 0.0),
        ]
    view = live(events, max_cards=50)
    more, items, _, _ = view.box.children
    assert len(items.children) == 50 and view.folded == 450
    assert "450 earlier tool calls not shown live" in more.value and more.layout.display is None
    assert "i=499" in items.children[-1].value


def test_close_closes_every_widget() -> None:
    view = live([*RUN, *ASKING])
    children = [*view.box.children[1].children, *view.box.children[3].children]
    view.close()
    assert all(child.comm is None for child in [view.box, *children])


def test_a_web_search_is_a_card_and_the_live_answer_links_its_citations() -> None:
    page = WebPage("Python docs", "https://docs.python.org/3/")
    view = live(
        [
            WebSearched("s1", "python", (page,)),
            TextDelta("Read the docs."),
            TextCited((Citation(page.url, page.title, "docs"),)),
        ]
    )
    card, answer = view.box.children[1].children
    assert 'href="https://docs.python.org/3/"' in card.value and "web_search" in card.value
    markdown = answer.outputs[0]["data"]["text/markdown"]
    assert markdown.startswith(
        '<div class="nbagent-narration"><p>Read the docs.<sup><a href="https://docs.python.org/3/" '
        'title="docs"'
    )
    assert "<b>Sources</b>" in markdown
