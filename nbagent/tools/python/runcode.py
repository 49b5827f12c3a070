"""The RunCode tool: Python run in the kernel's namespace, with its output captured.

The code goes through IPython's input transformers (so ``%magic`` and ``!shell`` lines
work), then runs like a cell: statements in order, the value of a final expression returned.
What it prints to stdout and stderr is captured (start and end kept within the limit), not
shown in the notebook; rich displays (plots, widgets) still go to the notebook, and the images
among them (matplotlib's inline figures flushed at the end) come back to the model too. Top-level
``await`` is not supported.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import itertools
import linecache
import sys
import traceback
from collections.abc import Iterator, Mapping
from typing import Any

from nbagent.core.errors import ToolError
from nbagent.core.text import plural
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.policy.decisions import PermissionDecision, ask
from nbagent.render.codeview import capped, fenced
from nbagent.tools.checkpoints.review import UNTRACKED_REVIEW
from nbagent.tools.context import Limits, ToolContext
from nbagent.tools.notebook.images import ImageBudget
from nbagent.tools.output import HeadTail
from nbagent.tools.python.reprs import safe_repr
from nbagent.tools.python.safe_access import type_label

_runs = itertools.count(1)


class _Capture(HeadTail):
    """A text stream for ``redirect_stdout`` that keeps the start and end of what it gets.

    Args:
        limit: Characters kept at most: half from the start, half from the end.
    """

    encoding = "utf-8"

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self._newlines = 0
        self._last = "\n"

    @property
    def lines(self) -> int:
        """Lines written in all (a last line without its newline counted)."""
        return self._newlines + (self._last != "\n")

    def write(self, text: str) -> int:  # type: ignore[override]
        """Take text, as a file does.

        Args:
            text: The text.
        """
        super().write(text)
        self._newlines += text.count("\n")
        self._last = text[-1:] or self._last
        return len(text)

    def flush(self) -> None:
        """Nothing to flush: the text is kept in memory."""

    def isatty(self) -> bool:
        """Say that this is not a terminal."""
        return False


def ask_to_run(tool_input: Mapping[str, Any]) -> PermissionDecision:
    """RunCode's permission hook: always ask, showing the code.

    Args:
        tool_input: The call's input.
    """
    code = str(tool_input.get("code", ""))
    return ask(
        fenced(capped(code), "python"),
        rule="RunCode asks by default",
        request="run this code in the kernel",
    )


def run_code_tool(context: ToolContext) -> Tool:
    """Build the RunCode tool.

    Args:
        context: The tools' context.
    """

    @tool(
        name="RunCode",
        should_defer=True,
        search_hint="execute python code kernel evaluate expression compute run statement",
        check_permission=ask_to_run,
    )
    def run_code(code: str) -> ToolResult:
        """Run Python code in the notebook's kernel, in the user's namespace.

        Works like running a cell that nobody sees: variables it defines stay defined,
        `%magics` work, and the value of a final expression is returned with what the code
        printed (stdout, stderr), the traceback of any error, and the figures and other
        images it displays. To run code the user should see in the notebook, write it into a
        cell and use NotebookRun. Each run asks the user's permission.

        Args:
            code: The Python code.
        """
        if context.shell is None:
            raise ToolError("RunCode needs an IPython kernel, and none is running here.")
        return execute(context.shell, code, context.limits)

    # User code belongs on the kernel's main thread (signals, GUI event loops, Ctrl-C).
    return dataclasses.replace(run_code, main_thread=True)


def execute(shell: Any, code: str, limits: Limits) -> ToolResult:
    """Run code in a shell's user namespace and report its output, result and error.

    Args:
        shell: An IPython shell (``user_ns`` and, if present, ``transform_cell`` are used).
        code: The code.
        limits: ``output_chars`` (for stdout, stderr and traceback each) and the repr limits.

    Returns:
        The report; an error result when the code raised.

    Raises:
        KeyboardInterrupt: The user interrupted the kernel (the output so far is lost).
    """
    transform = getattr(shell, "transform_cell", None)
    source = transform(code) if transform else code
    filename = f"<nbagent-run-{next(_runs)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    stdout, stderr = _Capture(limits.output_chars), _Capture(limits.output_chars)
    result: Any = None
    error: str | None = None
    raised = ""
    with _displays_seen(shell) as displayed:
        try:
            body, last = _compile(source, filename)
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                exec(body, shell.user_ns)
                if last is not None:
                    result = eval(last, shell.user_ns)
        except Exception as exc:
            error = _traceback(exc, filename, limits.output_chars)
            raised = type(exc).__name__
        _flush_inline_figures()
    parts = []
    for label, stream in (("stdout", stdout), ("stderr", stderr)):
        text = stream.text()
        if text:
            parts.append(f"{label}:\n{text.rstrip()}")
    if result is not None:
        parts.append(f"result: {safe_repr(result, limits.output_chars // 4, limits.repr_seconds)}")
    if error:
        parts.append(f"error:\n{error.rstrip()}")
    images = ImageBudget(limits.images, limits.image_bytes)
    shown = [
        line
        for number, data in enumerate(displayed, 1)
        if (line := images.take(data, f"display {number}"))
    ]
    if shown:
        parts.append("displayed:\n" + "\n".join(shown))
    text = "\n\n".join(parts) or "(The code ran without output or result.)"
    content: Any = [{"type": "text", "text": text}, *images.blocks] if images.blocks else text
    said = _summary(raised, result, stdout.lines + stderr.lines, len(images.blocks))
    metadata = {"summary": said, "review": UNTRACKED_REVIEW}
    return ToolResult(content=content, is_error=error is not None, metadata=metadata)


def _summary(raised: str, result: Any, printed: int, images: int) -> str:
    """A run in a few words: ``raised KeyError``, ``printed 3 lines, returned int``."""
    parts = [f"raised {raised}"] if raised else []
    if printed:
        parts.append(f"printed {plural(printed, 'line')}")
    if result is not None:
        parts.append(f"returned {type_label(result)}")
    if images:
        parts.append(plural(images, "image"))
    return ", ".join(parts) or "no output"


@contextlib.contextmanager
def _displays_seen(shell: Any) -> Iterator[list[dict[str, Any]]]:
    """Record the mime bundles the code displays, which still go to the notebook."""
    publisher = getattr(shell, "display_pub", None)
    bundles: list[dict[str, Any]] = []
    if publisher is None:
        yield bundles
        return

    def publish(data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        bundles.append(data)
        return type(publisher).publish(publisher, data, *args, **kwargs)

    publisher.publish = publish
    try:
        yield bundles
    finally:
        del publisher.publish


def _flush_inline_figures() -> None:
    """Display the figures the code drew, now (matplotlib's inline backend waits for the end of
    the cell, after the model has moved on)."""
    inline = sys.modules.get("matplotlib_inline.backend_inline")
    pyplot = sys.modules.get("matplotlib.pyplot")
    if inline is not None and pyplot is not None and "inline" in pyplot.get_backend():
        inline.flush_figures()


def _compile(source: str, filename: str) -> tuple[Any, Any]:
    """Compile the statements, and the final expression apart (to return its value)."""
    tree = ast.parse(source, filename=filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expression = ast.Expression(tree.body.pop().value)
        last = compile(expression, filename, "eval")
    return compile(tree, filename, "exec"), last


def _traceback(exc: BaseException, filename: str, limit: int) -> str:
    """Format a traceback from the first frame of the run code on (this module's left out)."""
    summary = traceback.TracebackException.from_exception(exc)
    frames = list(summary.stack)
    first = next((i for i, f in enumerate(frames) if f.filename == filename), len(frames))
    summary.stack = traceback.StackSummary.from_list(frames[first:])
    text = "".join(summary.format())
    if len(text) > limit:
        text = f"[... {len(text) - limit:,} characters cut ...]\n" + text[-limit:]
    return text
