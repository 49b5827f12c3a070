"""Tests of nbagent.widgets: the live widget tree for a scripted run."""

from __future__ import annotations

from nbagent.transcript import Transcript
from nbagent.widgets import TranscriptView
from tests.test_transcript import RUN


def live(events: list, max_cards: int = 50) -> TranscriptView:  # type: ignore[type-arg]
    transcript = Transcript()
    view = TranscriptView(transcript, max_cards=max_cards)
    for event in events:
        item = transcript.apply(event)
        if item is not None:
            view.show(item)
    view.refresh_meter()
    return view


def test_a_scripted_run_becomes_this_widget_tree() -> None:
    view = live(RUN)
    more, items, meter = view.box.children
    kinds = [type(child).__name__ for child in items.children]
    assert kinds == ["HTML", "Output", "HTML", "HTML", "HTML", "HTML", "Output"]
    banner, answer, search_card, table, error_card, notice, last = items.children
    assert "3 deferred tools available" in banner.value
    assert answer.outputs[0]["data"]["text/markdown"] == "Let me look."
    assert search_card.value.startswith('<details class="nbagent-call nbagent-ok">')
    assert "<td>loaded</td>" in table.value
    assert "nbagent-error" in error_card.value and "deny: rule" in error_card.value
    assert "Sending the turn again." in notice.value
    assert last.outputs[0]["data"]["text/markdown"] == "Done."
    assert "tokens: 130 in" in meter.value
    assert more.layout.display == "none"


def test_an_answer_widget_is_refreshed_in_place() -> None:
    from nbagent.events import TextDelta

    transcript = Transcript()
    view = TranscriptView(transcript)
    for piece in ("a", "b", "c"):
        view.show(transcript.apply(TextDelta(piece)))  # type: ignore[arg-type]
    [output] = view.box.children[1].children
    assert output.outputs[0]["data"]["text/markdown"] == "abc"


def test_hundreds_of_calls_keep_a_bounded_number_of_widgets() -> None:
    from nbagent.events import ToolCallFinished, ToolCallStarted

    events: list = []
    for i in range(500):
        events += [
            ToolCallStarted(f"t{i}", "Echo", {"i": i}),
            ToolCallFinished(f"t{i}", "Echo", "ok", str(i), 0.0),
        ]
    view = live(events, max_cards=50)
    more, items, _ = view.box.children
    assert len(items.children) == 50 and view.folded == 450
    assert "450 earlier tool calls not shown live" in more.value and more.layout.display is None
    assert "i=499" in items.children[-1].value


def test_close_closes_every_widget() -> None:
    view = live(RUN)
    children = list(view.box.children[1].children)
    view.close()
    assert all(child.comm is None for child in [view.box, *children])
