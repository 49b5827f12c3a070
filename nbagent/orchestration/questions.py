"""AskUserQuestion: the agent asks the user and waits for the answer (deferred).

The default answerer asks on the kernel's stdin, which works while the cell is busy. Like a
permission question, it runs on the cell's own thread (a ``main_thread`` tool, a sub-agent's
included) and waits as long as the person takes. Stop (an interrupt) ends the run, as
anywhere else; in a sub-agent, the question is withdrawn when the sub-agent's call is stopped
or abandoned at its time limit, and an answer typed after that does nothing. A missing stdin
comes back to the model as a clear result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import partial

from IPython.core.error import StdinNotImplementedError

from nbagent.core.markup import show_controls
from nbagent.core.tool import Tool, tool
from nbagent.loop import cellthread

Answerer = Callable[[str, Sequence[str]], str]
"""Asks a question (with its choices, maybe none) and returns the answer."""


def ask_on_stdin(question: str, options: Sequence[str]) -> str:
    """Ask on stdin; a number picks one of the options.

    Args:
        question: The question.
        options: The choices (may be empty).

    Returns:
        The answer (the option's text when a number was given).

    Raises:
        Cancelled: The question was withdrawn (its call was stopped or abandoned).
    """
    asked = [question, *(f"  {i}. {option}" for i, option in enumerate(options, 1))]
    lines = [show_controls(line) for line in asked]
    answer = cellthread.ask("\n".join(lines) + "\n> ").strip()
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return options[int(answer) - 1]
    return answer


def ask_user_question_tool(answerer: Answerer | None = None) -> Tool:
    """Build AskUserQuestion.

    Args:
        answerer: Asks the user; :func:`ask_on_stdin` by default.

    Returns:
        The tool.
    """
    ask = answerer or ask_on_stdin

    @tool(
        name="AskUserQuestion",
        read_only=True,
        should_defer=True,
        concurrency_safe=False,
        search_hint="ask user question clarify choose option confirm human input",
    )
    def ask_user_question(question: str, options: list[str] | None = None) -> str:
        """Ask the user a question and wait for the answer, when you cannot decide alone.

        Args:
            question: The question, self-contained.
            options: Choices to offer (the user may still answer freely).
        """
        try:
            answer = cellthread.question(partial(ask, question, options or [])).strip()
        except (StdinNotImplementedError, EOFError, OSError):  # no stdin, closed or captured
            return (
                "No one can answer questions here (no interactive input). Decide yourself "
                "and say what you assumed."
            )
        return f"The user answered: {answer}" if answer else "The user gave an empty answer."

    return dataclasses.replace(ask_user_question, main_thread=True)
