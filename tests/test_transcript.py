"""Tests of nbagent.transcript: events folded into items, and the static renderings."""

from __future__ import annotations

import html
import re

import pytest

from nbagent.events import (
    Notice,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSearchResults,
    ToolSetAnnounced,
    Usage,
    UsageReported,
)
from nbagent.search import SearchHit
from nbagent.transcript import (
    PREVIEW_CHARS,
    Answer,
    Call,
    Delta,
    Note,
    Search,
    Transcript,
    grouped,
)

HIT = SearchHit("mcp__gh__create_issue", 24.0, ("'gh' name part (12)", "'issue' name part (12)"))
RUN = [
    ToolSetAnnounced(("mcp__gh__create_issue", "mcp__gh__list", "Read"), (), "<system-reminder>"),
    TextDelta("Let me "),
    TextDelta("look."),
    ToolCallStarted("t1", "ToolSearch", {"query": "gh issue"}),
    ToolCallFinished(
        "t1", "ToolSearch", "ok", [{"type": "tool_reference", "tool_name": HIT.name}], 0.01
    ),
    ToolSearchResults("t1", "gh issue", (HIT,), (HIT.name,)),
    ToolCallStarted("t2", HIT.name, {"title": "Bug <b>"}),
    ToolCallFinished("t2", HIT.name, "error", "x" * 1000, 0.5, "deny: rule"),
    Notice("Sending the turn again.", "warning"),
    UsageReported(Usage(10, 5, 100, 20)),
    TextDelta("Done."),
    RunFinished("end_turn", "Done.", Usage(10, 5, 100, 20)),
]


def folded(events: list = RUN) -> Transcript:  # type: ignore[assignment]
    transcript = Transcript()
    for event in events:
        transcript.apply(event)
    return transcript


def test_events_become_items_in_order() -> None:
    t = folded()
    assert [type(i) for i in t.items] == [Delta, Answer, Call, Search, Call, Note, Answer]
    assert t.items[1].text == "Let me look."  # type: ignore[union-attr]
    card = t.calls[1]
    assert (card.status, card.duration, card.permission) == ("error", 0.5, "deny: rule")
    assert t.calls[0].result == f"→ loaded {HIT.name}"
    assert t.answer == "Done." and t.stop_reason == "end_turn"
    assert t.usage == Usage(10, 5, 100, 20)


def test_html_has_collapsible_cards_search_table_banner_and_meter() -> None:
    page = folded().to_html()
    assert page.count('<details class="nbagent-call') == 2
    assert "nbagent-error" in page and "Bug &lt;b&gt;" in page  # escaped
    assert "show more (1,000 characters)" in page
    assert '<table class="nbagent-search">' in page and "<td>loaded</td>" in page
    assert "± 3 deferred tools available: mcp__gh__ (2), Read" in page
    assert "tokens: 130 in (100 from cache, 20 written to it), 5 out" in page


def test_markdown_keeps_the_answer_as_markdown_and_cards_as_details() -> None:
    text = folded().to_markdown()
    assert text.startswith("**± 3 deferred tools available")
    assert "\n\nLet me look.\n\n<details" in text
    assert (
        "| `mcp__gh__create_issue` | 24 | 'gh' name part (12); 'issue' name part (12) | loaded |"
        in text
    )
    assert text.rstrip().endswith("</sub>")


def test_plain_text_reads_in_a_terminal() -> None:
    text = folded().to_text()
    assert "✓ ToolSearch(query='gh issue') ok 0.01 s" in text
    assert f"✗ {HIT.name}(title='Bug <b>') error 0.50 s · deny: rule" in text
    assert f"ToolSearch 'gh issue': {HIT.name} (24)" in text
    assert "<details" not in text


def test_long_runs_fold_old_cards_into_a_count() -> None:
    events: list = []
    for i in range(300):
        events += [
            ToolCallStarted(f"t{i}", "Echo", {"i": i}),
            ToolCallFinished(f"t{i}", "Echo", "ok", str(i), 0.0),
        ]
    t = folded(events)
    page = t.to_html(max_calls=200)
    assert page.count("<details") == 200 and "… 100 earlier tool calls not shown" in page
    assert "i=299" in page and "i=99<" not in page
    assert t.to_markdown(max_calls=200).count("<details") == 200


def test_result_preview_is_cut_and_the_rest_is_behind_show_more() -> None:
    t = folded()
    card_html = t.to_html().split("nbagent-error")[1]
    assert "x" * PREVIEW_CHARS in card_html


def test_stop_reasons_other_than_end_turn_show_in_the_meter() -> None:
    t = folded([RunFinished("max_turns", "", Usage())])
    assert t.meter().startswith("stopped: max_turns · tokens: 0 in")
    t.saved_tokens = 5000
    assert "deferral keeps 5,000 tokens of definitions out" in t.meter()


def test_grouping_by_server() -> None:
    assert (
        grouped(["mcp__a__x", "mcp__b__y", "mcp__a__z", "Read"])
        == "mcp__a__ (2), mcp__b__ (1), Read"
    )


def test_a_search_the_model_did_not_make_has_no_context_column() -> None:
    from nbagent.transcript import item_markdown

    text = item_markdown(Search("q", [("A", 1.0, ("why",))], loaded=None))
    assert "| `A` | 1 | why |" in text and "context" not in text


def test_a_sub_agents_events_nest_under_its_card() -> None:
    from nbagent.events import ToolProgress

    t = folded(
        [
            ToolCallStarted("p", "Agent", {"prompt": "look"}),
            ToolProgress("p", ToolCallStarted("c", "Read", {"file_path": "a.txt"})),
            ToolProgress("p", ToolCallFinished("c", "Read", "ok", "hello", 0.1)),
            ToolProgress("p", TextDelta("It says hello.")),
            ToolCallFinished("p", "Agent", "ok", "It says hello.", 1.0),
        ]
    )
    [card] = t.calls
    assert card.inner is not None and [c.name for c in card.inner.calls] == ["Read"]
    page = t.to_html()
    assert page.count('<details class="nbagent-call') == 2
    assert page.index("<b>Agent</b>") < page.index("<b>Read</b>")
    assert "    ✓ Read(file_path='a.txt') ok 0.10 s" in t.to_text()


def test_the_task_list_is_one_checklist_updated_in_place() -> None:
    from nbagent.events import TaskItem, TaskListChanged

    t = folded(
        [
            TaskListChanged((TaskItem("1", "Load"), TaskItem("2", "Plot"))),
            TextDelta("Working."),
            TaskListChanged(
                (TaskItem("1", "Load", "completed"), TaskItem("2", "Plot", "in_progress"))
            ),
        ]
    )
    assert sum(type(i).__name__ == "Tasks" for i in t.items) == 1
    assert "**Tasks** (1/2 done)\n☑ 1. Load\n▶ 2. Plot" in t.to_markdown()


RESULT_WITH_MARKDOWN = (
    'Report\n\n## A heading in a tool result\n\n    indented "quoted" line\n\n'
    "* a bullet\n\n&amp; an entity\n\n<b>bold?</b>"
)


@pytest.mark.parametrize("renderer", ["markdown-it (CommonMark)", "mistune (nbconvert)"])
def test_a_tool_result_shows_literally_in_the_saved_markdown(renderer: str) -> None:
    """No heading, list, code block or entity of the saved transcript comes from a result."""
    transcript = Transcript()
    transcript.items.append(
        Call("t1", "Read", {"file_path": "notes.md"}, status="ok", result=RESULT_WITH_MARKDOWN)
    )
    transcript.items.append(Answer("## The answer's own heading"))
    markdown = transcript.to_markdown()
    if renderer.startswith("markdown-it"):
        from markdown_it import MarkdownIt

        rendered = MarkdownIt("commonmark").render(markdown)
    else:
        import mistune

        rendered = mistune.html(markdown)
    assert rendered.count("<h2") == 1 and "The answer's own heading" in rendered
    assert "<ul>" not in rendered and "<code>" not in rendered
    shown = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    assert "## A heading in a tool result" in shown
    assert 'indented "quoted" line' in shown and "&amp; an entity" in shown
    assert "<b>bold?</b>" in shown
