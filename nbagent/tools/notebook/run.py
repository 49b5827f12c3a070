"""The NotebookRun tool: run a cell of the open notebook where the user sees it, and look at it.

The cell's source is read where the user sees the notebook (the front end through nbagent's
extension, or JupyterLab's live document), run in the kernel's namespace as a cell
(:func:`~nbagent.tools.python.cellrun.run_source`), and its outputs are written into that cell with
an execution count, as if the user had run it: ``[*]`` while it runs. The model gets the text
of the outputs and their images (figures included, a few per run, downscaled to what the API
takes). With neither channel, the source comes from the saved file and the outputs show
below the ``%%agent`` cell instead, and the result says so.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from nbagent.core.errors import ToolError
from nbagent.core.text import plural
from nbagent.core.tool import Tool, ToolResult, tool
from nbagent.policy.decisions import PermissionDecision, ask
from nbagent.render.codeview import capped, fenced, short_id
from nbagent.tools.checkpoints.hooks import record_run, whole_cells
from nbagent.tools.context import ToolContext
from nbagent.tools.digest import with_frame_digest
from nbagent.tools.files.paths import shown
from nbagent.tools.notebook.file import Document, LoadedNotebook, render_outputs, source_of
from nbagent.tools.notebook.frontend import FrontEndDocument
from nbagent.tools.notebook.images import ImageBudget, with_images
from nbagent.tools.notebook.locate import NO_NOTEBOOK, NotebookSnapshot, snapshot
from nbagent.tools.notebook.read_edit import cell_index
from nbagent.tools.notebook.run_queue import QueuedRun, When
from nbagent.tools.notebook.run_stale import STALE, ask_stale, run_stale
from nbagent.tools.notebook.streaming import streamed
from nbagent.tools.output import cap_text
from nbagent.tools.python.cellrun import CellRun, run_source, running_count

IN_THE_CELL = "Its outputs are in the cell, in the notebook."
"""Where a run's outputs went when they were written into its cell."""


def notebook_run_tool(context: ToolContext) -> Tool:
    """Build the NotebookRun tool.

    Args:
        context: The tools' context.
    """

    approved: dict[str, str] = {}  # cell id -> the code the question showed
    approved_stale: dict[str, str] = {}  # cell id -> digest, of the stale cells asked about

    def check(tool_input: Mapping[str, Any]) -> PermissionDecision:
        """Ask before every run, showing the code (the list of cells, for ``"stale"``).

        Raises:
            ToolError: The cell cannot run; the call fails with why, before anyone is asked.
        """
        cell_id = str(tool_input.get("cell_id", ""))
        context.runs.limit(tool_input.get("timeout"), context.limits.run_seconds)
        if cell_id == STALE:
            return ask_stale(context, _snapshot(context), approved_stale, tool_input.get("when"))
        cell = _cell(_snapshot(context).notebook, cell_id, context.cell_id())
        code = approved[cell_id] = source_of(cell)
        later = " after this turn" if tool_input.get("when") == "after_turn" else ""
        return ask(
            fenced(capped(code), "python"),
            rule="NotebookRun asks",
            request=f"run cell {short_id(cell.id)} in the kernel{later}",
        )

    @tool(
        name="NotebookRun",
        search_hint="run execute notebook cell outputs plot figure chart image result",
        check_permission=check,
    )
    def notebook_run(cell_id: str, timeout: float | None = None, when: When = "now") -> ToolResult:
        """Run one code cell of the open notebook, as the user would, and see what it shows.

        The cell runs in the user's namespace (variables, `%magics`, inline plots), and its
        outputs appear in that cell in the notebook with an execution count. They come back
        here too: text, errors with their traceback, and figures and other images. Work as
        in a notebook: NotebookRead to see the cells, NotebookEdit to write or fix one, then
        NotebookRun it and look at its outputs (a plot included) before you go on. Each run
        asks the user's permission. The cell that runs this agent cannot be run. Its outputs
        show in the cell while it runs; it is stopped at the time limit (as Ctrl-C would). A
        cell that takes longer (training a model) is best queued with when="after_turn": it
        runs as a normal cell once your turn ends, and the conversation goes on by itself
        after it, its outputs in hand (end your turn after queueing).

        Args:
            cell_id: The id of the code cell to run (from NotebookRead or NotebookEdit), or
                the first 8 or more characters of it; or "stale" to run, in notebook order,
                every code cell changed since it last ran or not run in this kernel
                (NotebookState lists them), stopping at the first error.
            timeout: Seconds the run may take before it is stopped; the default is
                300 s, at most the maximum the user allows.
            when: "now" (the default) to run it and wait for its outputs, or "after_turn" to
                queue it for when your turn ends.
        """
        if context.shell is None:
            raise ToolError("NotebookRun needs an IPython kernel, and none is running here.")
        seconds = context.runs.limit(timeout, context.limits.run_seconds)
        if cell_id == STALE:
            if when == "after_turn":
                raise ToolError('"stale" runs now only: queue the cells one by one instead.')
            return run_stale(context, _snapshot(context), approved_stale, run_cell, seconds)
        if when == "after_turn":
            return _queue(context, cell_id, approved.pop(cell_id, None))
        return run_cell(cell_id, seconds)

    def run_cell(cell_id: str, seconds: float) -> ToolResult:
        """Run one cell now and report it."""
        seen = _snapshot(context)
        cell = _cell(seen.notebook, cell_id, context.cell_id())
        shown = approved.pop(cell_id, None)
        cell_id = cell.id
        if shown is not None and shown != source_of(cell):
            raise ToolError(
                f"Cell {cell_id} changed while the user was asked to run it; it was not run. "
                "Read it again with NotebookRead and ask to run it as it is now."
            )
        count = running_count(context.shell)
        # The cell as it was, to undo the run: read whole only if it has outputs to keep.
        before = whole_cells(context, seen.document).get(cell_id) if cell.get("outputs") else cell
        run, started = CellRun(), time.perf_counter()
        try:
            if seen.document is not None:
                _show(seen.document, cell_id, run, count, running=True)
            with streamed(context, seen.document, cell_id, count) as on_change:
                run = run_source(
                    context.shell, source_of(cell), count, seconds, on_change=on_change
                )
        finally:  # a Ctrl-C at any point still leaves the cell with its outputs, not at [*]
            elapsed = time.perf_counter() - started
            where = _place(context, seen, cell_id, run, count)
            if where == IN_THE_CELL:
                record_run(context, seen.notebook.path, before, run.outputs, count)
        if run.interrupted:
            raise KeyboardInterrupt
        return _report(context, cell_id, run, count, elapsed, where, seconds)

    # User code belongs on the kernel's main thread (signals, GUI event loops, Ctrl-C).
    return dataclasses.replace(notebook_run, main_thread=True)


def _queue(context: ToolContext, cell_id: str, shown_code: str | None) -> ToolResult:
    """Queue a cell for after the turn (the front end runs it, through nbagent's extension)."""
    seen = _snapshot(context)
    cell = _cell(seen.notebook, cell_id, context.cell_id())
    if not isinstance(seen.document, FrontEndDocument):
        raise ToolError(
            "Queueing a run for after your turn needs JupyterLab with nbagent's extension "
            "showing the notebook, and none does. Run the cell now instead (a timeout up to "
            f"{context.runs.max_seconds:g} s), or ask the user to run it."
        )
    if shown_code is not None and shown_code != source_of(cell):
        raise ToolError(
            f"Cell {cell.id} changed while the user was asked to run it; it was not queued. "
            "Read it again with NotebookRead and ask to queue it as it is now."
        )
    queued = context.runs.add(QueuedRun(cell.id, source_of(cell)))
    then = (
        "then a new %%agent cell below goes on with this conversation, with its outputs"
        if context.runs.continue_after
        else "the user has turned off going on by itself after it: they will come back to you"
    )
    return ToolResult(
        content=f"Cell {cell.id} is queued ({queued} queued): it runs as a normal cell once your "
        f"turn ends, with no time limit; {then}. End your turn now, saying what runs.",
        metadata={"summary": "queued for after this turn"},
    )


def _snapshot(context: ToolContext) -> NotebookSnapshot:
    path = context.notebook_path()
    if path is None:
        raise ToolError(NO_NOTEBOOK)
    path = path.resolve()
    return snapshot(context, path, shown(context, path), outputs=False)


def _cell(notebook: LoadedNotebook, cell_id: str, running: str | None = None) -> Any:
    """The code cell to run, or a ToolError saying why it cannot be run."""
    cell = notebook.cells[cell_index(notebook, cell_id)]
    cell_id = cell.id
    if cell.cell_type != "code":
        raise ToolError(
            f"Cell {cell_id} is a {cell.cell_type} cell; NotebookRun runs code cells. Change "
            "its type with NotebookEdit (cell_type='code') first if it holds code."
        )
    source = source_of(cell)
    nested = any(line.lstrip().startswith("%%agent") for line in source.splitlines())
    if cell_id == running or nested:  # %%time then %%agent runs an agent cell too
        what = "the cell running this agent" if cell_id == running else "an %%agent cell"
        raise ToolError(f"Cell {cell_id} is {what}: NotebookRun does not run agent cells.")
    if not source.strip():
        raise ToolError(f"Cell {cell_id} is empty: write its code with NotebookEdit first.")
    return cell


def _show(
    document: Document, cell_id: str, run: CellRun, count: int | None, running: bool = False
) -> None:
    """Write a run's outputs (or that it runs) into the cell, where the user sees it."""
    document.show_outputs(cell_id, tuple(run.outputs), count, running)


def _place(
    context: ToolContext, seen: NotebookSnapshot, cell_id: str, run: CellRun, count: int | None
) -> str:
    """Put the outputs where the user sees them; say where that is."""
    if seen.document is not None:
        try:
            _show(seen.document, cell_id, run, count)
            return IN_THE_CELL
        except ToolError as exc:
            reason = f"they could not be written into cell {cell_id} ({exc})"
    else:
        reason = f"no front end showing the notebook answered, so cell {cell_id} was not updated"
    _publish(context.shell, run.outputs)
    return f"Its outputs are shown below the %%agent cell: {reason}. {seen.note}"


def _publish(shell: Any, outputs: list[dict[str, Any]]) -> None:
    """Show outputs in the running cell's output area, as the cell would have shown them."""
    import sys

    for output in outputs:
        kind = output["output_type"]
        if kind == "stream":
            stream = sys.stderr if output["name"] == "stderr" else sys.stdout
            stream.write(output["text"])
            stream.flush()
        elif kind == "error":
            shell.display_pub.publish({"text/plain": "\n".join(output["traceback"])})
        else:
            shell.display_pub.publish(output["data"], output.get("metadata") or {})


def _report(
    context: ToolContext,
    cell_id: str,
    run: CellRun,
    count: int | None,
    elapsed: float,
    where: str,
    seconds: float,
) -> ToolResult:
    """What the model is told: how the run ended, where the outputs are, and the outputs."""
    limits = context.limits
    if run.timed_out:
        ended = f"stopped after {seconds:g} s (the time limit)"
        said = f"stopped at the {seconds:g} s limit"
    elif run.error is not None:
        ended = said = f"raised {type(run.error).__name__}"
    else:
        ended = "finished"
        said = f"finished, {plural(len(run.outputs), 'output')}"
    label = f"In [{count}]" if count is not None else "no execution count"
    head = f"Ran cell {cell_id} ({label}) in {elapsed:.2f} s: {ended}. {where}"
    images = ImageBudget(limits.images, limits.image_bytes)
    outputs = with_frame_digest(run.outputs, run.result)
    body = render_outputs(outputs, limits.output_chars // 2, images, cell_id)
    text = cap_text(
        "\n".join([head, *(body or ["(no output)"])]), limits.output_chars, "print less"
    )
    result = with_images(text, images)
    content = result.content if isinstance(result, ToolResult) else result
    if images.blocks:
        said += f", {plural(len(images.blocks), 'image')}"
    return ToolResult(content=content, is_error=run.error is not None, metadata={"summary": said})
