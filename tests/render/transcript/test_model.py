"""Tests of nbagent.render.transcript.model: events folded into items, and the static renderings."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.catalogue.toolsearch import SearchHit
from nbagent.core.events import (
    Notice,
    PermissionAnswered,
    PermissionRequested,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSearchResults,
    ToolSetAnnounced,
    Usage,
    UsageReported,
)
from nbagent.render.transcript.html import search_html
from nbagent.render.transcript.items import (
    PREVIEW_CHARS,
    AnswerItem,
    Call,
    Delta,
    Note,
    Search,
    score_texts,
    visible,
)
from nbagent.render.transcript.markdown import item_markdown
from nbagent.render.transcript.model import Transcript
from nbagent.render.transcript.summaries import (
    LINE_CHARS,
    STATUS_MARK,
    result_summary,
)
from nbagent.render.transcript.text import item_text

HIT = SearchHit("mcp__gh__create_issue", 24.0, ("'gh' name part (12)", "'issue' name part (12)"))
RUN = [
    ToolSetAnnounced(("mcp__gh__create_issue", "mcp__gh__list", "Read"), (), "<system-reminder>"),
    TextDelta("Let me "),
    TextDelta("look."),
    ToolCallStarted("t1", "ToolSearch", {"query": "gh issue"}),
    ToolCallFinished(
        "t1",
        "ToolSearch",
        "ok",
        [{"type": "tool_reference", "tool_name": HIT.name}],
        0.01,
        "allow: mode default",
    ),
    ToolSearchResults("t1", "gh issue", (HIT,), (HIT.name,)),
    ToolCallStarted("t2", HIT.name, {"title": "Bug <b>"}),
    ToolCallFinished("t2", HIT.name, "error", "x" * 1000, 0.5, "deny: rule"),
    Notice("Sending the turn again.", "warning"),
    UsageReported(Usage(10, 5, 100, 20)),
    TextDelta("Done."),
    RunFinished("end_turn", "Done.", Usage(10, 5, 100, 20)),
]
"""A scripted run: a tool-set change, narration, a ToolSearch, a failed call, the answer."""

ROUTINE = [
    ToolCallStarted("r", "Read", {"file_path": "sales.csv"}),
    ToolCallFinished("r", "Read", "ok", "a\n" * 42, 0.003, "allow: mode default", "42 lines"),
    ToolCallStarted("e", "NotebookEdit", {"cell_id": "sales-df", "new_source": "df.head()"}),
    ToolCallFinished(
        "e", "NotebookEdit", "ok", "Inserted.", 0.0, "allow: rule NotebookEdit", "inserted cell"
    ),
    ToolCallStarted("b", "Bash", {"command": "pytest"}),
    ToolCallFinished("b", "Bash", "error", "3 failed\nexit 1", 0.2, "", "exit 1: 3 failed"),
    ToolCallStarted("n", "TaskList", {}),
    ToolCallFinished("n", "TaskList", "ok", "nothing to do", 0.0, "allow: mode default"),
]
"""Calls of a session: summaries from the tools, permission notes, an empty input."""


def folded(events: list = RUN) -> Transcript:  # type: ignore[assignment]
    transcript = Transcript()
    for event in events:
        transcript.apply(event)
    return transcript


def asked(answer: str, rule: str = "") -> list:  # type: ignore[type-arg]
    """A Bash call that asks the user, and the user's answer."""
    events: list = [
        ToolCallStarted("p", "Bash", {"command": "git status --short"}),
        PermissionRequested(
            "p", "Bash", "git status --short", "Bash is not read-only.", "Bash(git status:*)"
        ),
        PermissionAnswered("p", answer, rule),  # type: ignore[arg-type]
    ]
    if answer == "no":
        return [
            *events,
            ToolCallFinished("p", "Bash", "denied", "The user refused this call.", 0.0),
        ]
    return [*events, ToolCallFinished("p", "Bash", "ok", " M a.py", 0.1, "approved by the user")]


def test_events_become_items_in_order() -> None:
    t = folded()
    assert [type(i) for i in t.items] == [Delta, AnswerItem, Call, Call, Note, AnswerItem]
    assert t.items[1].text == "Let me look."  # type: ignore[union-attr]
    card = t.calls[1]
    assert (card.status, card.duration, card.permission) == ("error", 0.5, "deny: rule")
    assert t.calls[0].result == f"→ loaded {HIT.name}"
    assert t.answer == "Done." and t.stop_reason == "end_turn"
    assert t.usage == Usage(10, 5, 100, 20)


def test_a_call_is_one_line_of_its_main_argument_and_its_result() -> None:
    text = folded(ROUTINE).to_text()
    assert "✓ Read sales.csv → 42 lines" in text
    assert "✓ NotebookEdit sales-df → inserted cell" in text
    assert "✗ Bash pytest → exit 1: 3 failed" in text
    assert "✓ TaskList → nothing to do" in text


@pytest.mark.parametrize("render", ["to_html", "to_markdown", "to_text"])
def test_routine_calls_say_nothing_of_permission_duration_or_empty_input(render: str) -> None:
    shown = getattr(folded(ROUTINE), render)()
    assert "allow:" not in shown and "mode default" not in shown
    assert " s ·" not in shown and "0.00" not in shown and "{}" not in shown
    assert '"file_path"' not in shown and "file_path=" not in shown  # not JSON, not k=v


def test_the_card_still_opens_on_the_input_and_the_result() -> None:
    page = folded(ROUTINE).to_html()
    read = page.split("</details>")[0]
    assert read.startswith(
        '<div class="nbagent-transcript"><details class="nbagent-call nbagent-ok tex2jax_ignore">'
    )
    assert '<summary title="✓ Read sales.csv → 42 lines">' in read  # in full on hover
    assert '<pre class="nbagent-input">file_path: sales.csv</pre>' in read
    assert '<pre class="nbagent-output">a\na\n' in read


def test_a_slow_call_says_how_long_it_ran() -> None:
    t = folded(
        [
            ToolCallStarted("b", "Bash", {"command": "make"}),
            ToolCallFinished("b", "Bash", "ok", "", 41.2),
        ]
    )
    assert item_text(t.calls[0]) == "✓ Bash make → no output · 41 s"


def test_verbose_keeps_input_json_status_duration_and_permission() -> None:
    t = folded(ROUTINE)
    page = t.to_html(verbose=True)
    assert "&quot;file_path&quot;: &quot;sales.csv&quot;" in page
    assert "ok 0.00 s · allow: mode default" in page
    assert "<pre>{}</pre>" in page  # the whole input, even an empty one
    text = t.to_text(verbose=True)
    assert "✓ Read(file_path='sales.csv') ok 0.00 s → 42 lines · allow: mode default" in text
    assert "✗ Bash(command='pytest') error 0.20 s → exit 1: 3 failed\n    3 failed exit 1" in text


def test_a_tool_search_is_one_card_with_its_table_inside() -> None:
    t = folded()
    page = t.to_html()
    card = page.split("</details>")[0]
    assert page.count('"nbagent-name">ToolSearch<') == 1 and page.count("<table") == 1
    assert '<table class="nbagent-search">' in card and "<caption>" not in card
    assert "<td>loaded</td>" in card
    assert f"→ loaded 1: {HIT.name}</span>" in card
    assert f"→ loaded {HIT.name}" not in page  # the raw result says nothing the table does not
    assert f'✓ ToolSearch "gh issue" → loaded 1: {HIT.name}' in t.to_text()
    assert f"→ loaded {HIT.name}" in t.to_html(verbose=True)


@pytest.mark.parametrize(
    ("hits", "loaded", "summary"),
    [
        ((HIT,), (), "1 match, all loaded before"),
        ((), (), "no match"),
        ((HIT, HIT), (HIT.name, HIT.name), f"loaded 2: {HIT.name}, {HIT.name}"),
    ],
)
def test_what_a_tool_search_did_in_a_few_words(hits: tuple, loaded: tuple, summary: str) -> None:  # type: ignore[type-arg]
    t = folded(
        [
            ToolCallStarted("s", "ToolSearch", {"query": "q"}),
            ToolCallFinished("s", "ToolSearch", "ok", "", 0.0),
            ToolSearchResults("s", "q", hits, loaded),
        ]
    )
    assert result_summary(t.calls[0]) == summary


def test_a_search_without_a_call_stays_an_item_of_its_own() -> None:
    t = folded([ToolSearchResults("s", "q", (HIT,), ())])
    assert [type(i) for i in t.items] == [Search]


def test_the_first_announcement_shows_in_verbose_only_changes_always() -> None:
    first = ToolSetAnnounced(("TaskCreate", "AskUserQuestion"), (), "<reminder>", initial=True)
    later = ToolSetAnnounced(("mcp__gh__list",), ("TaskCreate",), "<reminder>")
    t = folded([first, TextDelta("Hi."), later])
    assert not visible(t.items[0]) and visible(t.items[0], verbose=True)
    for render in (t.to_html, t.to_markdown, t.to_text):
        assert "AskUserQuestion" not in render() and "AskUserQuestion" in render(verbose=True)
        assert "± 1 deferred tool available: mcp__gh__ (1)" in render().replace("\\_", "_")
        assert "± 1 deferred tool removed: TaskCreate" in render()


def test_a_call_waiting_for_the_user_shows_the_request_and_the_choices() -> None:
    t = folded(asked("yes")[:2])
    [call] = t.calls
    assert call.status == "waiting"
    card = item_markdown(call)
    assert card.startswith('<details class="nbagent-call nbagent-waiting tex2jax_ignore" open>')
    assert "→ waiting for your answer" in card
    assert '<pre class="nbagent-request"><code>git status --short</code></pre>' in card
    assert "<kbd>y</kbd> yes · <kbd>n</kbd> no · <kbd>a</kbd> always" in card
    assert "(adds <code>Bash(git status:*)</code>)" in card
    assert card.index("nbagent-choices") > card.index("nbagent-request")  # last, above stdin
    assert item_text(call) == (
        "? Bash git status --short → waiting for your answer\n"
        "    Bash is not read-only.\n"
        "    git status --short\n"
        "    y yes · n no · a always (adds Bash(git status:*))"
    )


CELL = "0f3c9a2e-5b7d-4e1a-9c8b-2d4f6a8b0c1e"
DIFF = "@@ -1,2 +1,2 @@\n import math\n-r = 2\n+r = 3"


def edit_asked(answer: str) -> list:  # type: ignore[type-arg]
    """A NotebookEdit that asks with the diff of the cell it replaces, and the answer."""
    return [
        ToolCallStarted("q", "NotebookEdit", {"cell_id": CELL, "new_source": "import math\nr = 3"}),
        PermissionRequested(
            "q",
            "NotebookEdit",
            "replace cell 0f3c9a2e in sales.ipynb",
            f"```diff python\n{DIFF}\n```",
            "NotebookEdit",
        ),
        PermissionAnswered("q", answer),  # type: ignore[arg-type]
        ToolCallFinished(
            "q", "NotebookEdit", "ok", f"Replaced cell {CELL}.", 0.0, "", "replaced: +1 -1"
        ),
    ]


def test_a_question_shows_its_code_highlighted_under_what_the_call_would_do() -> None:
    [call] = folded(edit_asked("yes")[:2]).calls
    card = item_markdown(call)
    request = '<pre class="nbagent-request"><code>replace cell 0f3c9a2e in sales.ipynb</code></pre>'
    code = card[card.index('<pre class="nbagent-code">') :]
    assert card.index(request) < card.index('<pre class="nbagent-code">')
    assert code.index("</pre>") < code.index("nbagent-choices")  # the answers stay last
    assert 'color-mix(in srgb,var(--jp-error-color1) 18%,transparent)">-r <span' in code
    assert 'font-weight:bold;color:var(--jp-mirror-editor-keyword-color)">import' in code
    assert "```" not in card and "nbagent-reason" not in card  # no words but the code
    assert item_text(call) == (
        "? NotebookEdit 0f3c9a2e → waiting for your answer\n"
        "    replace cell 0f3c9a2e in sales.ipynb\n"
        + "".join(f"    {line}\n" for line in DIFF.split("\n"))
        + "    y yes · n no · a always (adds NotebookEdit)"
    )


def test_an_answered_question_keeps_its_words_not_its_code_and_the_id_shows_once() -> None:
    t = folded(edit_asked("yes"))
    assert item_text(t.calls[0]) == ("✓ NotebookEdit 0f3c9a2e → replaced: +1 -1 · allowed by you")
    assert "asked: replace cell 0f3c9a2e in sales.ipynb · answered: yes" in t.to_html()
    asked_why = folded(
        [
            ToolCallStarted("w", "NotebookEdit", {"cell_id": CELL}),
            PermissionRequested(
                "w", "NotebookEdit", "delete cell 0f3c9a2e", "Outside.\n\n```python\nr = 2\n```"
            ),
            PermissionAnswered("w", "no"),
        ]
    ).to_html()
    assert "asked: delete cell 0f3c9a2e (Outside.) · answered: no" in asked_why
    assert CELL not in folded(edit_asked("yes")).to_text()


def test_without_an_always_rule_the_choices_are_yes_and_no() -> None:
    t = folded([PermissionRequested("p", "Write", "write notes.md (3 lines)")])
    [call] = t.calls
    assert "<kbd>a</kbd>" not in item_markdown(call) and item_text(call).endswith("y yes · n no")


@pytest.mark.parametrize(
    ("answer", "status"), [("yes", "running"), ("always", "running"), ("no", "denied")]
)
def test_an_answer_sends_the_card_back_to_running_or_denied(answer: str, status: str) -> None:
    t = folded(asked(answer, "Bash(git status:*)")[:3])
    assert t.calls[0].status == status and "nbagent-waiting" not in t.to_html()


def test_the_saved_transcript_says_who_refused_and_which_rule_was_added() -> None:
    refused = folded(asked("no")).to_markdown()
    assert "⊘</span>" in refused and "→ refused by you</span>" in refused
    always = folded(asked("always", "Bash(git status:*)"))
    assert "allowed by you, always: added rule Bash(git status:*)" in always.to_markdown()
    assert item_text(always.calls[0]) == (
        "✓ Bash git status --short → M a.py · allowed by you, always: added rule Bash(git status:*)"
    )
    assert "allowed by you" in folded(asked("yes")).to_text()
    assert (
        "asked: git status --short (Bash is not read-only.) · answered: always" in always.to_html()
    )


def test_a_question_withdrawn_by_a_stop_says_so_on_the_card() -> None:
    t = folded(
        [
            *asked("no")[:2],
            ToolCallFinished("p", "Bash", "interrupted", "Interrupted by the user.", 0.0),
        ]
    )
    [call] = t.calls
    assert item_text(call) == "■ Bash git status --short → interrupted · question withdrawn"
    assert (
        "asked: git status --short (Bash is not read-only.) · withdrawn before an answer"
        in t.to_markdown()
    )


def test_a_sub_agents_question_open_when_its_call_ends_is_withdrawn_not_waiting() -> None:
    """The sub-agent's call reached its time limit while its question waited: nothing of
    the sub-agent comes after, and its card must not wait for an answer in the saved cell."""
    from nbagent.core.events import ToolProgress

    t = folded(
        [
            ToolCallStarted("a", "Agent", {"description": "first", "prompt": "Run it."}),
            *(ToolProgress("a", event) for event in asked("no")[:2]),
            ToolProgress("a", ToolCallStarted("r", "Read", {"file_path": "a.txt"})),
            ToolCallFinished("a", "Agent", "error", "The tool did not finish within 2 s.", 2.0),
        ]
    )
    [agent] = t.calls
    assert agent.inner is not None
    assert [c.status for c in agent.inner.calls] == ["interrupted", "interrupted"]
    saved = t.to_markdown()
    assert "waiting for your answer" not in saved and "nbagent-waiting" not in saved
    assert "Bash git status --short → interrupted · question withdrawn" in saved
    assert "asked: git status --short (Bash is not read-only.) · withdrawn before an answer" in (
        saved
    )


def test_a_refusal_by_a_rule_says_the_rule() -> None:
    t = folded(
        [
            ToolCallStarted("d", "Bash", {"command": "rm -rf /"}),
            ToolCallFinished("d", "Bash", "denied", "Denied.", 0.0, "deny: deny rule Bash(rm:*)"),
        ]
    )
    assert item_text(t.calls[0]) == "⊘ Bash rm -rf / → denied: deny rule Bash(rm:*)"


def test_an_interrupted_call_says_after_how_long() -> None:
    t = folded(
        [
            ToolCallStarted("w", "WebFetch", {"url": "https://example.com"}),
            ToolCallFinished("w", "WebFetch", "interrupted", "Interrupted.", 3.21),
        ]
    )
    assert item_text(t.calls[0]) == "■ WebFetch https://example.com → interrupted after 3.2 s"


def test_every_status_has_a_text_mark() -> None:
    for status, mark in STATUS_MARK.items():
        call = Call("c", "Echo", {}, status=status)
        assert item_text(call).startswith(f"{mark} Echo → ")
        assert f'<span class="nbagent-mark">{mark}</span>' in item_markdown(call)


def test_the_last_stretch_is_the_answer_earlier_ones_are_narration() -> None:
    t = folded()
    narration, answer = [i for i in t.items if isinstance(i, AnswerItem)]
    assert not narration.final and answer.final
    text = t.to_markdown()
    assert text.count('<div class="nbagent-answer">') == 1
    assert '<hr class="nbagent-rule">\n<div class="nbagent-answer"><p>Done.</p></div>' in text
    assert '\n\n<div class="nbagent-narration"><p>Let me look.</p></div>\n\n<details' in text


def test_a_run_that_ends_on_a_tool_call_has_no_answer_to_set_apart() -> None:
    t = folded(
        [
            TextDelta("Let me look."),
            ToolCallStarted("c", "Read", {"file_path": "a"}),
            ToolCallFinished("c", "Read", "interrupted", "", 0.1),
            RunFinished("interrupted", "", Usage()),
        ]
    )
    assert "nbagent-answer" not in t.to_markdown()


def test_the_answer_keeps_its_markdown_inside_its_frame() -> None:
    from markdown_it import MarkdownIt

    t = folded(
        [TextDelta("It is **sunny**.\n\n```python\nx = 1"), RunFinished("max_tokens", "", Usage())]
    )
    rendered = MarkdownIt("commonmark").render(t.to_markdown())
    assert "<strong>sunny</strong>" in rendered
    assert '<code class="language-python">x = 1</code></pre></div>' in rendered


def test_html_has_collapsible_cards_banner_and_meter() -> None:
    page = folded().to_html()
    assert page.count('<details class="nbagent-call') == 2
    assert "nbagent-error" in page and "Bug &lt;b&gt;" in page  # escaped
    assert "show more (1,000 characters)" in page
    assert "± 3 deferred tools available: mcp__gh__ (2), Read" in page
    assert "tokens: 130 in (100 from cache, 20 written to it), 5 out" in page


def test_markdown_keeps_the_answer_as_markdown_and_cards_as_details() -> None:
    text = folded().to_markdown()
    assert text.startswith("**± 3 deferred tools available")
    assert "<td>&#x27;gh&#x27; name part (12); &#x27;issue&#x27; name part (12)</td>" in text
    assert text.rstrip().endswith("</sub>")


def test_plain_text_reads_in_a_terminal() -> None:
    text = folded().to_text()
    assert f'✓ ToolSearch "gh issue" → loaded 1: {HIT.name}' in text
    assert f"✗ {HIT.name} Bug <b> → {'x' * (LINE_CHARS - 1)}…" in text
    assert "<details" not in text
    verbose = folded().to_text(verbose=True)
    assert f"✓ ToolSearch(query='gh issue') ok 0.01 s → loaded 1: {HIT.name}" in verbose
    assert f"    ToolSearch 'gh issue': {HIT.name} (24)" in verbose
    assert (
        f"✗ {HIT.name}(title='Bug <b>') error 0.50 s → x" in verbose and "· deny: rule" in verbose
    )


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


def test_a_search_the_model_did_not_make_has_no_context_column() -> None:
    text = item_markdown(Search("q", [("A", 1.0, ("why",))], loaded=None))
    assert "| `A` | 1 | why |" in text and "context" not in text


def test_a_searchs_scores_share_their_decimals() -> None:
    search = Search("q", [("A", 1.0, ()), ("B", 0.85, ()), ("C", 0.412, ())], loaded=None)
    assert "| `A` | 1.000 |" in item_markdown(search) and "|---|--:|" in item_markdown(search)
    assert '<td class="nbagent-score">0.850</td>' in search_html(search)
    assert score_texts([12.0, 8.0]) == ["12", "8"]


@given(st.lists(st.integers(0, 10**6).map(lambda n: n / 1000), max_size=8))
def test_score_texts_read_back_as_the_scores_with_one_precision(scores: list[float]) -> None:
    texts = score_texts(scores)
    assert [float(t) for t in texts] == pytest.approx(scores, abs=5e-4)
    assert len({len(t.partition(".")[2]) for t in texts}) <= 1


def test_a_sub_agents_events_nest_under_its_card() -> None:
    from nbagent.core.events import ToolProgress

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
    assert page.index('nbagent-name">Agent<') < page.index('nbagent-name">Read<')
    assert "    ✓ Read a.txt → hello" in t.to_text()


def test_the_task_list_is_one_checklist_updated_in_place() -> None:
    from nbagent.core.events import TaskItem, TaskListChanged

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
    assert "**Tasks (1/2 done)**  \n☑ 1\\. Load  \n▶ 2\\. Plot" in t.to_markdown()


RESULT_WITH_MARKDOWN = (
    'Report\n\n## A heading in a tool result\n\n    indented "quoted" line\n\n'
    "* a bullet\n\n&amp; an entity\n\n<b>bold?</b>"
)


def rendered_by(renderer: str, markdown: str) -> str:
    if renderer.startswith("markdown-it"):
        from markdown_it import MarkdownIt

        return str(MarkdownIt("commonmark").render(markdown))
    import mistune

    return str(mistune.html(markdown))


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize("renderer", ["markdown-it (CommonMark)", "mistune (nbconvert)"])
def test_a_tool_result_shows_literally_in_the_saved_markdown(renderer: str, verbose: bool) -> None:
    """No heading, list, code block or entity of the saved transcript comes from a result."""
    transcript = Transcript()
    transcript.items.append(
        Call("t1", "Read", {"file_path": "notes.md"}, status="ok", result=RESULT_WITH_MARKDOWN)
    )
    transcript.items.append(AnswerItem("## The answer's own heading"))
    rendered = rendered_by(renderer, transcript.to_markdown(verbose=verbose))
    assert rendered.count("<h2") == 1 and "The answer's own heading" in rendered
    assert "<ul>" not in rendered and "<code>" not in rendered
    shown = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    assert "## A heading in a tool result" in shown
    assert 'indented "quoted" line' in shown and "&amp; an entity" in shown
    assert "<b>bold?</b>" in shown


MARKDOWNISH = st.text(
    alphabet=st.sampled_from(list("ab #*-_>`~<&;/\n\r\t\x0c\u00a0\u2028 1.")), max_size=120
)


@settings(max_examples=60, deadline=None)
@given(MARKDOWNISH, MARKDOWNISH, st.booleans(), st.sampled_from(["ok", "error", "waiting"]))
def test_no_result_or_input_ever_becomes_markdown(
    result: str, command: str, verbose: bool, status: str
) -> None:
    call = Call("t", "Bash", {"command": command}, status=status, result=result, request=command)
    transcript = Transcript(items=[call])
    rendered = rendered_by("markdown-it", transcript.to_markdown(verbose=verbose))
    assert rendered.startswith("<details")
    outside = rendered.split("</details>")[-1].strip()
    assert re.fullmatch(r'<p><sub class="nbagent-meter">tokens: [^<]*</sub></p>', outside)


def test_a_notice_with_detail_is_folded_under_its_line() -> None:
    """The model's thinking: "Thought for 12 s" opens on its summary (escaped)."""
    t = Transcript()
    t.apply(Notice("Thought for 12 s", detail="Compare the <b>two</b> joins."))
    (note,) = t.items
    assert note == Note("Thought for 12 s", "info", "Compare the <b>two</b> joins.")
    shown = item_markdown(note)
    assert "<details" in shown and "<summary>Thought for 12 s</summary>" in shown
    assert "Compare the &lt;b&gt;two&lt;/b&gt; joins." in shown
    assert item_text(note) == "> Thought for 12 s: Compare the <b>two</b> joins."
    assert item_markdown(Note("Retrying.")) == "> Retrying."
