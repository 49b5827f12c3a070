"""The execution record in a real kernel, over the kernel protocol with JupyterLab's cellId."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.jupyter.kernel_state import CellWatch
from nbagent.tools.notebook.record import ExecutionRecord
from tests.kernels import execute, kernel

RUNS = (
    "import json\nfrom nbagent.jupyter.session import Session\n"
    "print(json.dumps([[r.cell_id, r.execution_count, r.source, r.outcome, list(r.bound), "
    "list(r.deleted), r.by, r.duration] for r in Session.of(get_ipython()).record.runs()]))"
)


def _runs(client: Any) -> list[list[Any]]:
    return json.loads(execute(client, RUNS).text.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_record_of_person_runs_in_a_kernel() -> None:
    with kernel() as (manager, client):
        assert execute(client, "%load_ext nbagent", cell_id="load").status == "ok"
        first = execute(client, "x = 1\ny = [1]", cell_id="c1")
        execute(client, "x = 2\ny.append(2)\nz = x", cell_id="c2")
        failed = execute(client, "w = 5\n1 / 0", cell_id="c3")
        execute(client, "del z", cell_id="c4")
        execute(client, "from math import *", cell_id="c5")
        timer = threading.Timer(1.5, manager.interrupt_kernel)
        timer.start()
        stopped = execute(client, "import time\ntime.sleep(30)", cell_id="c6")
        timer.join()
        runs = {run[0]: run for run in _runs(client)}
    assert failed.status == "error" and stopped.status == "error"
    c1, c2, c3, c4, c5, c6 = (runs[f"c{i}"] for i in range(1, 7))
    assert c1[1] == first.execution_count and c1[2] == "x = 1\ny = [1]"
    assert (c1[3], c1[4], c1[6]) == ("ok", ["x", "y"], "person")
    assert c2[4] == ["x", "z"]  # y was changed in place, not rebound
    assert c3[3] == "ZeroDivisionError: division by zero" and c3[4] == ["w"]
    assert c4[5] == ["z"]
    assert {"acos", "pi"} <= set(c5[4]) and len(c5[4]) == 50  # the first 50, sorted
    assert c6[3] == "interrupted" and c6[7] >= 1.0 and c6[4] == ["time"]


def test_cells_run_by_the_agent_are_recorded_as_its_own() -> None:
    shell = InteractiveShell.instance()
    record = ExecutionRecord()
    watch = CellWatch(shell, record)
    watch.start()
    try:
        shell.run_cell("outer_value = 1", store_history=True)

        def nested() -> None:
            with record.attributed("run-me", 41):
                shell.run_cell("inner_value = 2", store_history=False)

        shell.user_ns["nested"] = nested
        shell.run_cell("nested()", store_history=True)
    finally:
        watch.stop()
        del shell.user_ns["nested"]
    inner = next(r for r in record.runs() if r.source == "inner_value = 2")
    assert (inner.cell_id, inner.execution_count, inner.by, inner.bound) == (
        "run-me",
        41,
        "agent",
        ("inner_value",),
    )
    outer = record.runs()[-1]
    assert outer.source == "nested()" and outer.by == "person"
    assert time.time() - outer.started < 3600
