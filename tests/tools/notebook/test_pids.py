"""Whether a process runs."""

from __future__ import annotations

import os
import subprocess
import sys

from nbagent.tools.notebook.pids import process_exists


def test_this_process_runs_and_an_ended_one_does_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert process_exists(os.getpid())
    assert not process_exists(child.pid)
