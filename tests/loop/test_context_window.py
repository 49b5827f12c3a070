"""How full the context window is, said in one line."""

from __future__ import annotations

from nbagent.loop.context_window import context_line


def test_context_line() -> None:
    assert context_line(150_000, 200_000, 150_000) == (
        "context: 150,000 of 200,000 tokens (75%) · compacts at 150,000"
    )
