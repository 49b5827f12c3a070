"""One agent's request messages, changed where its history changed
(nbagent.loop.request_messages)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from nbagent.core.tracked import TrackedList
from nbagent.loop.request import build_messages
from nbagent.loop.request_messages import RequestMessages
from tests.messages import assistant, text, user

CHANGES = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant", "replace", "replace_last", "truncate", "clear"]),
        st.integers(0, 30),
    ),
    max_size=30,
)


def change(history: list[dict[str, Any]], kind: str, at: int, step: int) -> None:
    """Change a history as an agent, a repair or a person might."""
    if kind == "user":
        history.append(user(f"prompt {step}"))
    elif kind == "assistant":
        history.append(assistant(text(f"answer {step}")))
    elif kind == "replace" and history:
        index = at % len(history)
        role = history[index]["role"]
        history[index] = user(f"new {step}") if role == "user" else assistant(text(f"new {step}"))
    elif kind == "replace_last" and history:
        history[-1] = {**history[-1], "content": [*history[-1]["content"], text(f"+{step}")]}
    elif kind == "truncate":
        del history[at % (len(history) + 1) :]
    elif kind == "clear":
        history.clear()


@given(CHANGES)
def test_the_messages_are_built_messages_of_the_history_as_it_is(
    changes: list[tuple[str, int]],
) -> None:
    history = TrackedList([user("first"), assistant(text("ok"))])
    messages = RequestMessages()
    sent = messages.build(history)
    for step, (kind, at) in enumerate(changes):
        change(history, kind, at, step)
        again = messages.build(history)
        assert again == build_messages(history)
        assert again is sent  # one list, changed in place
        assert all(
            a is b for a, b in zip(again, history, strict=True) if a.get("role") == "assistant"
        )


def test_other_histories_get_new_lists_and_leave_the_agents_alone() -> None:
    history = TrackedList([user("first")])
    messages = RequestMessages()
    sent = messages.build(history)
    plain = [user("a summary's")]
    assert messages.build(plain) == build_messages(plain) and messages.build(plain) is not sent
    legacy = messages.build(history, ["mcp__a__b"])
    assert legacy is not sent and legacy == build_messages(history, ["mcp__a__b"])
    history.append(assistant(text("hello")))
    assert messages.build(history) is sent and sent == build_messages(history)
    other = TrackedList(history)  # the agent's history replaced (a compaction, a restore)
    assert messages.build(other) is not sent
