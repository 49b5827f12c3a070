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
from nbagent.tools.files.paths import shown
from nbagent.tools.notebook.file import Document, LoadedNotebook, render_outputs, source_of
from nbagent.tools.notebook.images import ImageBudget, with_images
from nbagent.tools.notebook.locate import NO_NOTEBOOK, NotebookSnapshot, snapshot
from nbagent.tools.notebook.read_edit import cell_index
from nbagent.tools.digest import with_frame_digest
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

    def check(tool_input: Mapping[str, Any]) -> PermissionDecision:
        """Ask before every run, showing the code.

        Raises:
            ToolError: The cell cannot run; the call fails with why, before anyone is asked.
        """
        cell_id = str(tool_input.get("cell_id", ""))
        cell = _cell(_snapshot(context).notebook, cell_id, context.cell_id())
        code = approved[cell_id] = source_of(cell)
        return ask(
            fenced(capped(code), "python"),
            rule="NotebookRun asks",
            request=f"run cell {short_id(cell.id)} in the kernel",
        )

    @tool(
        name="NotebookRun",
        search_hint="run execute notebook cell outputs plot figure chart image result",
        check_permission=check,
    )
    def notebook_run(cell_id: str) -> ToolResult:
        """Run one code cell of the open notebook, as the user would, and see what it shows.

        The cell runs in the user's namespace (variables, `%magics`, inline plots), and its
        outputs appear in that cell in the notebook with an execution count. They come back
        here too: text, errors with their traceback, and figures and other images. Work as
        in a notebook: NotebookRead to see the cells, NotebookEdit to write or fix one, then
        NotebookRun it and look at its outputs (a plot included) before you go on. Each run
        asks the user's permission. The cell that runs this agent cannot be run.

        Args:
            cell_id: The id of the code cell to run (from NotebookRead or NotebookEdit), or
                the first 8 or more characters of it.
        """
        if context.shell is None:
            raise ToolError("NotebookRun needs an IPython kernel, and none is running here.")
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
            run = run_source(context.shell, source_of(cell), count, context.limits.run_seconds)
        finally:  # a Ctrl-C at any point still leaves the cell with its outputs, not at [*]
            elapsed = time.perf_counter() - started
            where = _place(context, seen, cell_id, run, count)
            if where == IN_THE_CELL:
                record_run(context, seen.notebook.path, before, run.outputs, count)
        if run.interrupted:
            raise KeyboardInterrupt
        return _report(context, cell_id, run, count, elapsed, where)

    # User code belongs on the kernel's main thread (signals, GUI event loops, Ctrl-C).
    return dataclasses.replace(notebook_run, main_thread=True)


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
    if cell_id == running or source.lstrip().startswith("%%agent"):
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
) -> ToolResult:
    """What the model is told: how the run ended, where the outputs are, and the outputs."""
    limits = context.limits
    if run.timed_out:
        ended = f"stopped after {limits.run_seconds:g} s (the time limit)"
        said = f"stopped at the {limits.run_seconds:g} s limit"
    elif run.error is not None:
        ended = said = f"raised {type(run.error).__name__}"
    else:
        ended = "finished"
        said = f"finished, {plural(len(run.outputs), 'output')}"
    label = f"In [{count}]" if count is not None else "no execution count"
    head = f"Ran cell {cell_id} ({label}) in {elapsed:.2f} s: {ended}. {where}"
    images = ImageBudget(limits.images, limits.image_bytes)
    results = getattr(context.shell, "user_ns", {}).get("Out", {})
    outputs = with_frame_digest(run.outputs, results, count)
    body = render_outputs(outputs, limits.output_chars // 2, images, cell_id)
    text = cap_text(
        "\n".join([head, *(body or ["(no output)"])]), limits.output_chars, "print less"
    )
    result = with_images(text, images)
    content = result.content if isinstance(result, ToolResult) else result
    if images.blocks:
        said += f", {plural(len(images.blocks), 'image')}"
    return ToolResult(content=content, is_error=run.error is not None, metadata={"summary": said})
