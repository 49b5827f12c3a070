"""NotebookRun's ``"stale"``: run, in notebook order, the cells changed since they ran or never run.

The cells are those :func:`~nbagent.tools.notebook.state.to_run` finds from the execution
record. The person is asked once, with the list (each cell's id and code); the cells run one
after the other as NotebookRun runs one, and the first that fails stops the rest, as Jupyter's
"run all" does. A cell that changed after the question is not run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbagent.core.errors import ToolError
from nbagent.core.text import plural
from nbagent.core.tool import ToolResult
from nbagent.policy.decisions import PermissionDecision, ask
from nbagent.render.codeview import capped, fenced, short_id
from nbagent.tools.context import ToolContext
from nbagent.tools.notebook.locate import NotebookSnapshot
from nbagent.tools.notebook.record import source_digest
from nbagent.tools.notebook.state import CellState, cell_states, to_run

STALE = "stale"
"""The ``cell_id`` that runs the stale cells."""

NO_RECORD = (
    'NotebookRun "stale" needs nbagent loaded in the notebook\'s kernel, which keeps the record '
    "of what ran; run the cells one by one instead."
)


def stale_cells(context: ToolContext, seen: NotebookSnapshot) -> list[CellState]:
    """The cells ``"stale"`` runs, in notebook order (the running agent's own cell left out).

    Args:
        context: The tools' context.
        seen: The notebook as the person sees it.

    Raises:
        ToolError: There is no execution record here.
    """
    if context.record is None:
        raise ToolError(NO_RECORD)
    running = context.cell_id()
    return [s for s in to_run(cell_states(seen.notebook, context.record)) if s.cell_id != running]


def ask_stale(
    context: ToolContext, seen: NotebookSnapshot, approved: dict[str, str], when: Any
) -> PermissionDecision:
    """Ask once to run the stale cells, showing them; remember what was shown.

    Args:
        context: The tools' context.
        seen: The notebook as the person sees it.
        approved: Filled with the cells shown: id -> digest of the source.
        when: The call's ``when``.

    Raises:
        ToolError: Nothing is stale, or the call cannot be made.
    """
    if when == "after_turn":
        raise ToolError('"stale" runs now only: queue the cells one by one instead.')
    cells = stale_cells(context, seen)
    if not cells:
        raise ToolError(
            "No cell is stale: every code cell ran in this kernel as it is now "
            "(NotebookState shows them)."
        )
    approved.clear()
    approved.update((c.cell_id, source_digest(c.source)) for c in cells)
    shown = "\n\n".join(
        f"# cell {short_id(c.cell_id)} ({c.state})\n{capped(c.source)}" for c in cells
    )
    return ask(
        fenced(shown, "python"),
        rule="NotebookRun asks",
        request=f"run {plural(len(cells), 'stale cell')} in the kernel, in order",
    )


def run_stale(
    context: ToolContext,
    seen: NotebookSnapshot,
    approved: dict[str, str],
    run_cell: Callable[[str, float], ToolResult],
    seconds: float,
) -> ToolResult:
    """Run the stale cells in order, stopping at the first that fails.

    Args:
        context: The tools' context.
        seen: The notebook as the person sees it.
        approved: The cells the person was asked about (id -> digest); emptied.
        run_cell: Runs one cell and reports it (NotebookRun's own run).
        seconds: Each cell's time limit.

    Raises:
        ToolError: A cell changed, or another became stale, since the question.
    """
    cells = stale_cells(context, seen)
    shown, now = dict(approved), {c.cell_id: source_digest(c.source) for c in cells}
    approved.clear()
    if shown and shown != now:
        raise ToolError(
            "The stale cells changed while the user was asked to run them; none was run. "
            'Call NotebookRun with "stale" again to ask with the cells as they are now.'
        )
    if not cells:
        return ToolResult(content="No cell is stale: every code cell ran as it is now.")
    blocks: list[dict[str, Any]] = []
    images = 0
    ran = 0
    failed: ToolResult | None = None
    for cell in cells:
        result = run_cell(cell.cell_id, seconds)
        ran += 1
        content = result.content
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if block.get("type") == "image":
                if images >= context.limits.images:
                    continue
                images += 1
            blocks.append(block)
        if result.is_error:
            failed = result
            break
    left = len(cells) - ran
    head = f"Ran {plural(ran, 'stale cell')} of {len(cells)}, in notebook order"
    head += f"; stopped at the error, {plural(left, 'cell')} not run." if failed else "."
    return ToolResult(
        content=[{"type": "text", "text": head}, *blocks],
        is_error=failed is not None,
        metadata={"summary": head.split(";")[0].removesuffix(".")},
    )
