"""How full the model's context window is: a window per model, and the line that says it.

The windows are those of Anthropic's model pages
(``https://platform.claude.com/docs/en/models/<model>/overview``, read 2026-12-01):

=====================================================  ==========
model                                                  window
=====================================================  ==========
Fable 5.2, 5.1, 5; Mythos 5.2, 5.1, 5                  1,000,000
Opus 5.5, 5, 4.6; Sonnet 5.5, 5, 4.6                   1,000,000
Opus 4.8, 4.7, 4.5; Sonnet 4.5; Haiku 4.5              200,000
any other model                                        200,000
=====================================================  ==========

A model not in the table is taken to have the smaller window, so that the line warns early
rather than late; ``c.NbAgent.context_windows`` sets others (``{"my-model": 500000}``).

>>> context_line(45_120, 200_000)
'context: 45,120 of 200,000 tokens (23%)'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from nbagent.api.pricing import model_entry
from nbagent.core.errors import ConfigurationError

if TYPE_CHECKING:
    from nbagent.loop.context_editing import Clearing

DEFAULT_WINDOW = 200_000
"""The window of a model the table does not know."""

_MILLION = 1_000_000

CONTEXT_WINDOWS: dict[str, int] = {
    **dict.fromkeys(
        (
            "claude-fable-5-2",
            "claude-fable-5-1",
            "claude-fable-5",
            "claude-mythos-5-2",
            "claude-mythos-5-1",
            "claude-mythos-5",
            "claude-opus-5-5",
            "claude-opus-5",
            "claude-opus-4-6",
            "claude-sonnet-5-5",
            "claude-sonnet-5",
            "claude-sonnet-4-6",
        ),
        _MILLION,
    ),
    **dict.fromkeys(
        (
            "claude-opus-4-8",
            "claude-opus-4-7",
            "claude-opus-4-5",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
        ),
        DEFAULT_WINDOW,
    ),
}
"""Each model's context window in tokens, by model id or alias (source in the docstring)."""


def window_of(model: str, windows: Mapping[str, int] = CONTEXT_WINDOWS) -> int:
    """Find a model's context window: by its id, else by its id without a snapshot date.

    Args:
        model: The model id.
        windows: The table (the user's entries first, then :data:`CONTEXT_WINDOWS`).

    Returns:
        Tokens; :data:`DEFAULT_WINDOW` for a model the table does not know.
    """
    found = model_entry(model, windows)
    return found if found is not None else DEFAULT_WINDOW


def parse_windows(value: Mapping[str, object]) -> dict[str, int]:
    """Check a table of context windows given in the configuration.

    Args:
        value: ``{"model id": tokens}``.

    Returns:
        The table, merged over :data:`CONTEXT_WINDOWS`.

    Raises:
        ConfigurationError: A key is not a model id or a value is not a positive integer.
    """
    table = dict(CONTEXT_WINDOWS)
    for model, tokens in value.items():
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError(
                f"context_windows has the key {model!r}: write each model id as a string, "
                'e.g. {"claude-sonnet-5-5": 1000000}.'
            )
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
            raise ConfigurationError(
                f"context_windows[{model!r}] is {tokens!r}: write the window as a whole "
                "number of tokens, e.g. 200000."
            )
        table[model] = tokens
    return table


def context_line(
    tokens: int, window: int, threshold: int | None = None, cleared: Clearing | None = None
) -> str:
    """Say how full the context window is.

    Args:
        tokens: The input tokens of the last request (cached ones included).
        window: The model's window.
        threshold: Where compaction starts, if it is on.
        cleared: What context editing cleared from the last request, if anything.

    Returns:
        E.g. ``context: 45,120 of 200,000 tokens (23%) · compacts at 150,000 · cleared 12
        old tool results (38,400 tokens)``.
    """
    share = 100 * tokens / window
    percent = "<1" if 0 < share < 1 else f"{round(share)}"
    line = f"context: {tokens:,} of {window:,} tokens ({percent}%)"
    if threshold:
        line += f" · compacts at {threshold:,}"
    if cleared is not None:
        freed = f" ({cleared.tokens:,} tokens)" if cleared.tokens else ""
        line += f" · cleared {cleared.tool_uses} old tool results{freed}"
    return line
