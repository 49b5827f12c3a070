"""Tests of nbagent.catalogue.delta: announcements read back from history, rendering, legacy
block."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.catalogue import delta as delta_module
from nbagent.catalogue.delta import (
    ADDED_HEADER,
    REMOVED_HEADER,
    Announcements,
    DeferredToolsDelta,
    announced_names,
    deferred_tools_delta,
    last_compaction,
    render_announcement,
    render_legacy_block,
)
from nbagent.core.tool import Tool


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_first_delta_announces_every_deferred_tool() -> None:
    delta = deferred_tools_delta(["b", "a"], [user("hello")])
    assert delta == DeferredToolsDelta(added_names=("a", "b"), removed_names=())


def test_accepts_tools_as_well_as_names() -> None:
    delta = deferred_tools_delta([Tool(name="T")], [])
    assert delta is not None and delta.added_names == ("T",)


def test_nothing_to_say_is_none() -> None:
    messages = [user(render_announcement(added=["a", "b"]))]
    assert deferred_tools_delta(["a", "b"], messages) is None
    assert deferred_tools_delta([], []) is None


def test_removed_and_added_after_an_announcement() -> None:
    messages = [user(render_announcement(added=["a", "b"])), {"role": "assistant", "content": "ok"}]
    delta = deferred_tools_delta(["b", "c"], messages)
    assert delta == DeferredToolsDelta(added_names=("c",), removed_names=("a",))


def test_rendered_text_has_the_exact_headers() -> None:
    text = render_announcement(added=["mcp__x__a"], removed=["mcp__y__b"])
    assert text == (
        f"<system-reminder>\n{ADDED_HEADER}\nmcp__x__a\n</system-reminder>\n\n"
        f"<system-reminder>\n{REMOVED_HEADER}\nmcp__y__b\n</system-reminder>"
    )
    assert "Do not search for them — ToolSearch will return no match:" in REMOVED_HEADER


def test_compact_style_groups_mcp_tools_by_server() -> None:
    text = render_announcement(
        added=["mcp__github__list_issues", "Read", "mcp__github__create_issue", "mcp__s__a__b"],
        style="compact",
    )
    assert "Read\nmcp__github__: create_issue, list_issues\nmcp__s__: a__b\n" in text
    assert announced_names([user(text)]) == {
        "Read",
        "mcp__github__list_issues",
        "mcp__github__create_issue",
        "mcp__s__a__b",
    }


def test_announcements_in_string_content_and_other_text_are_read() -> None:
    messages = [{"role": "user", "content": "question\n\n" + render_announcement(added=["a"])}]
    assert announced_names(messages) == {"a"}


def test_announcements_in_assistant_turns_or_tool_results_do_not_count() -> None:
    text = render_announcement(added=["a"])
    messages = [
        {"role": "assistant", "content": [{"type": "text", "text": text}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": text}]},
    ]
    assert announced_names(messages) == set()


def test_other_system_reminders_are_ignored() -> None:
    assert (
        announced_names([user("<system-reminder>\nSomething else\nx\n</system-reminder>")]) == set()
    )


def test_legacy_block_lists_every_name_sorted() -> None:
    assert render_legacy_block(["b", "a"]) == (
        "<available-deferred-tools>\na\nb\n</available-deferred-tools>"
    )


NAMES = st.sampled_from(["Read", "mcp__gh__a", "mcp__gh__b", "mcp__sl__c", "x", "mcp__sl__d_e"])


@given(st.lists(st.sets(NAMES), min_size=1, max_size=8), st.sampled_from(["plain", "compact"]))
def test_any_sequence_of_changes_reconstructs_the_current_set(
    states: list[set[str]], style: str
) -> None:
    messages: list[dict[str, Any]] = []
    previous: set[str] = set()
    for state in states:
        delta = deferred_tools_delta(state, messages)
        if delta is None:
            assert state == previous
        else:
            assert not set(delta.added_names) & previous  # never announced twice in a row
            assert set(delta.removed_names) <= previous
            messages += [user(delta.render(style)), {"role": "assistant", "content": "ok"}]
        assert announced_names(messages) == state
        previous = state


@pytest.mark.parametrize("style", ["plain", "compact"])
def test_rendering_round_trips(style: str) -> None:
    names = ["mcp__a__x", "mcp__a__y", "Z"]
    assert announced_names([user(render_announcement(added=names, style=style))]) == set(names)  # type: ignore[arg-type]


COMPACTED = {"role": "assistant", "content": [{"type": "compaction", "content": "summary"}]}

EDITS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.sets(NAMES), st.booleans()),
        st.tuples(st.just("replace_last"), st.sets(NAMES), st.booleans()),
        st.tuples(st.just("compact"), st.just(set()), st.just(False)),
        st.tuples(st.just("truncate"), st.just(set()), st.just(False)),
    ),
    max_size=12,
)


@given(EDITS)
def test_announcements_kept_up_to_date_agree_with_reading_the_whole_history(
    edits: list[tuple[str, set[str], bool]],
) -> None:
    kept = Announcements()
    messages: list[dict[str, Any]] = []
    for edit, names, removes in edits:
        text = (
            render_announcement(removed=sorted(names))
            if removes
            else (render_announcement(added=sorted(names)))
        )
        if edit == "append":
            messages.append(user(text))
        elif edit == "replace_last" and messages:
            messages[-1] = user(text)
        elif edit == "compact":
            messages.append(COMPACTED)
        elif edit == "truncate":
            del messages[len(messages) // 2 :]
        assert kept.names(messages) == announced_names(messages)
        assert kept.last_compaction(messages) == last_compaction(messages)
        deferred = frozenset(names)
        assert kept.delta(deferred, messages) == deferred_tools_delta(deferred, messages)


def test_each_message_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    texts = delta_module._texts
    monkeypatch.setattr(delta_module, "_texts", lambda m: read.append("x") or texts(m))
    kept = Announcements()
    messages = [user(render_announcement(added=["a"])), {"role": "assistant", "content": "ok"}]
    deferred = frozenset({"a"})
    assert kept.delta(deferred, messages) is None
    messages.append(user("next"))
    assert kept.delta(deferred, messages) is None
    assert kept.names(messages) == {"a"} and kept.last_compaction(messages) is None
    assert len(read) == 2  # the two user messages, once each


def test_a_tracked_history_is_read_from_its_mark_and_an_early_change_is_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nbagent.core import tracked as tracked_module
    from nbagent.core.tracked import TrackedList

    history = TrackedList([user(render_announcement(["a", "b"])), user("x"), user("y")])
    kept = Announcements()
    assert kept.names(history) == {"a", "b"}
    read: list[Any] = []
    real = tracked_module.equal_prefix  # what equal_prefix_since compares after the mark
    monkeypatch.setattr(
        tracked_module, "equal_prefix", lambda old, new: read.append(len(new)) or real(old, new)
    )
    history.append(user(render_announcement([], ["b"])))
    assert kept.names(history) == {"a"}
    assert read == [1]  # only the new message compared
    history[0] = user("no announcement any more")  # replaced: seen at once
    assert kept.names(history) == frozenset()
