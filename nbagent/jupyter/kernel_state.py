"""The kernel's side of the execution record: IPython's events feed it.

:class:`CellWatch` registers ``pre_run_cell`` and ``post_run_cell`` callbacks on the shell and
adds a :class:`~nbagent.tools.notebook.record.CellExecution` to the session's
:class:`~nbagent.tools.notebook.record.ExecutionRecord` for every cell the kernel runs: the
cell id the front end sent (``cellId`` in the execute request's metadata, which ipykernel
hands IPython as ``info.cell_id``), the execution count, the source, the start, the duration,
the outcome and the names bound to another object or deleted: the names the cell's syntax tree
binds (:mod:`~nbagent.tools.notebook.bindings`) are compared by the identity of their values
before and after, no value copied nor kept alive; for code whose tree cannot show all it binds
(a magic, ``import *``, ``exec``), the names new to the namespace are added (those at the end
of its insertion order); what such code rebinds or deletes is not seen. Cells
that ``NotebookRun`` runs inside an ``%%agent`` cell are recorded as the agent's, with the id
of the cell they ran.

The per-cell cost is some tens of microseconds for a trivial cell
(``benchmarks/execution_record.py`` measures it).
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from nbagent.core.secrets import get_logger
from nbagent.tools.notebook.locate import running_cell_id
from nbagent.tools.notebook.record import ExecutionRecord

logger = get_logger("nbagent.jupyter.kernel_state")

IGNORED_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""Names IPython itself rebinds or owns; never reported as a cell's."""


def kernel_start_time() -> float | None:
    """When this process started (seconds since the epoch), or None when unknown."""
    try:
        import psutil

        return float(psutil.Process().create_time())
    except Exception:  # noqa: BLE001 - psutil missing or refused: the record's own start
        return None


class _Started(NamedTuple):
    """A run under way: what ``post_run_cell`` needs to record it."""

    info: Any
    clock: float
    started: float
    values: dict[str, int | None]
    """The identity of the value of each name the code binds (None: unbound)."""
    last_name: str | None
    """The namespace's last name (names come in insertion order), when the code may bind
    names its tree does not show: the names after it at the end are new."""
    opaque: bool
    """Whether the code may bind names its tree does not show."""


class CellWatch:
    """Keeps an execution record from a shell's ``pre_run_cell`` and ``post_run_cell`` events.

    Args:
        shell: The IPython shell.
        record: The record to keep.
    """

    def __init__(self, shell: Any, record: ExecutionRecord) -> None:
        self.shell = shell
        self.record = record
        self._running: list[_Started] = []

    def start(self) -> None:
        """Register the callbacks."""
        events = self.shell.events
        events.register("pre_run_cell", self.pre_run_cell)
        events.register("post_run_cell", self.post_run_cell)

    def stop(self) -> None:
        """Unregister the callbacks."""
        for name, callback in (
            ("pre_run_cell", self.pre_run_cell),
            ("post_run_cell", self.post_run_cell),
        ):
            try:
                self.shell.events.unregister(name, callback)
            except ValueError:  # not registered (already stopped)
                pass

    def pre_run_cell(self, info: Any) -> None:
        """Note when a cell starts, and the values of the names its code binds."""
        from nbagent.tools.notebook.bindings import bindings  # at the first cell, not the load

        namespace = self.shell.user_ns
        found = bindings(_code_of(self.shell, info))
        values = {name: id(namespace[name]) if name in namespace else None for name in found.names}
        last = next(reversed(namespace), None) if found.opaque else None
        self._running.append(
            _Started(info, time.perf_counter(), time.time(), values, last, found.opaque)
        )

    def post_run_cell(self, result: Any) -> None:
        """Record the cell that ended."""
        clock = time.perf_counter()
        info = getattr(result, "info", None)
        started = None
        while self._running:  # a run whose end never came is dropped with it
            started = self._running.pop()
            if started.info is info:
                break
        if started is None or started.info is not info:
            return
        try:
            self._add(result, started, clock)
        except Exception:  # noqa: BLE001 - the record must never break the person's cell
            logger.warning("a cell run was not recorded", exc_info=True)

    def _add(self, result: Any, started: _Started, clock: float) -> None:
        namespace = self.shell.user_ns
        bound = {
            name
            for name, before in started.values.items()
            if name in namespace and id(namespace[name]) != before
        }
        deleted = {
            name
            for name, before in started.values.items()
            if before is not None and name not in namespace
        }
        if started.opaque:  # the code may bind names its tree does not show
            bound.update(_new_names(namespace, started.last_name))
        info = started.info
        attribution = self.record.attribution() if self._running else None
        if attribution is not None:
            cell_id, count, by = attribution.cell_id, attribution.execution_count, "agent"
        else:
            cell_id = getattr(info, "cell_id", None) or running_cell_id(self.shell)
            count, by = result.execution_count, "person"
        self.record.add(
            cell_id=cell_id,
            execution_count=count,
            source=getattr(info, "raw_cell", "") or "",
            started=started.started,
            duration=clock - started.clock,
            error=result.error_before_exec or result.error_in_exec,
            bound=_shown(bound),
            deleted=_shown(deleted),
            by=by,
        )


def _code_of(shell: Any, info: Any) -> str:
    """The code IPython runs for a cell (its magics turned into calls)."""
    transformed = getattr(info, "transformed_cell", None)
    if isinstance(transformed, str):
        return transformed
    raw = getattr(info, "raw_cell", "") or ""
    try:
        return shell.transform_cell(raw)
    except Exception:  # noqa: BLE001 - IPython reports the cell's own error
        return raw


def _new_names(namespace: dict[str, Any], last_name: str | None) -> list[str]:
    """The names added to the namespace after ``last_name``: a dict keeps its keys in the
    order they came, so they are those at its end (time in proportion to them, not to the
    namespace). None when ``last_name`` was deleted meanwhile: then none are known."""
    new = []
    try:
        for name in reversed(namespace):
            if name == last_name:
                return new
            new.append(name)
    except RuntimeError:  # changed by another thread meanwhile: none known
        return []
    return new if last_name is None else []


def _shown(names: set[str]) -> tuple[str, ...]:
    """The names worth telling, sorted: not private, not IPython's own."""
    return tuple(sorted(n for n in names if not n.startswith("_") and n not in IGNORED_NAMES))
