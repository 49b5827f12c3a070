"""AskUserQuestion: the agent asks the user and waits for the answer (deferred).

The default answerer asks on the kernel's stdin, which works while the cell is busy. The
question waits at most ``timeout`` seconds; a timeout, an interrupt or a missing stdin comes
back to the model as a clear result, never as a dead loop.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Sequence

from IPython.core.error import StdinNotImplementedError

from nbagent.tool import Tool, tool

Answerer = Callable[[str, Sequence[str]], str]
"""Asks a question (with its choices, maybe none) and returns the answer."""

DEFAULT_TIMEOUT = 600.0
"""Seconds a question waits for an answer."""


def ask_on_stdin(question: str, options: Sequence[str]) -> str:
    """Ask on stdin; a number picks one of the options.

    Args:
        question: The question.
        options: The choices (may be empty).

    Returns:
        The answer (the option's text when a number was given).
    """
    lines = [question, *(f"  {i}. {option}" for i, option in enumerate(options, 1))]
    answer = input("\n".join(lines) + "\n> ").strip()
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return options[int(answer) - 1]
    return answer


def ask_user_question_tool(
    answerer: Answerer | None = None, timeout: float = DEFAULT_TIMEOUT
) -> Tool:
    """Build AskUserQuestion.

    Args:
        answerer: Asks the user; :func:`ask_on_stdin` by default.
        timeout: Seconds to wait for an answer.

    Returns:
        The tool.
    """
    ask = answerer or ask_on_stdin

    @tool(
        name="AskUserQuestion",
        read_only=True,
        should_defer=True,
        search_hint="ask user question clarify choose option confirm human input",
    )
    def ask_user_question(question: str, options: list[str] | None = None) -> str:
        """Ask the user a question and wait for the answer, when you cannot decide alone.

        Args:
            question: The question, self-contained.
            options: Choices to offer (the user may still answer freely).
        """
        outcome: dict[str, object] = {}

        def target() -> None:
            try:
                outcome["answer"] = ask(question, options or [])
            except (StdinNotImplementedError, EOFError) as exc:
                outcome["error"] = exc

        context = contextvars.copy_context()  # the kernel's parent message, for stdin
        thread = threading.Thread(
            target=context.run, args=(target,), name="nbagent-question", daemon=True
        )
        thread.start()
        try:
            thread.join(timeout)
        except KeyboardInterrupt:
            return "The user interrupted instead of answering. Do not ask again; go on or stop."
        if "error" in outcome:
            return (
                "No one can answer questions here (no interactive input). Decide yourself "
                "and say what you assumed."
            )
        if thread.is_alive():
            return f"The user did not answer within {timeout:g} s. Go on with your best guess."
        answer = str(outcome.get("answer", "")).strip()
        return f"The user answered: {answer}" if answer else "The user gave an empty answer."

    return ask_user_question
