"""JupyterLab and Notebook versions other than the project's own, for the browser tests.

Each lives in a virtual environment of its own (made once per machine by ``.ci/run``), as
jupyter-collaboration does (``tests/tools/rtc.py``): the project's environment keeps its
JupyterLab. Each has the widgets' JupyterLab extension, as a user's JupyterLab has it beside
ipywidgets (without it every widget the agent's cell shows is an error in the console). The
Jupyter server runs from that environment; its kernels run this interpreter (the
``nbagent-test`` kernelspec), where nbagent is installed.

- :data:`OLDEST`: the oldest supported versions, JupyterLab 4.4 and Notebook 7.4 (kernel
  subshells, which the extension's answers need, came in them);
- :data:`UNSUPPORTED`: JupyterLab 4.3, older than supported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LabEnv:
    """A virtual environment with pinned JupyterLab (and Notebook) versions."""

    variable: str
    """The environment variable that names another place for it."""
    default: str
    """Where it is by default."""
    pins: tuple[str, ...]
    """What is installed in it (the same pins as in ``.ci/run``)."""

    @property
    def path(self) -> Path:
        """The environment's folder."""
        return Path(os.environ.get(self.variable, self.default)).expanduser()

    @property
    def python(self) -> Path:
        """Its interpreter."""
        return self.path / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")

    @property
    def how(self) -> str:
        """How to make it."""
        return (
            f"python3 -m venv {self.default} && {self.default}/bin/pip install "
            f"{' '.join(self.pins)}; {self.variable} names another; .ci/run makes it"
        )

    def present(self) -> bool:
        """Tell whether it is there with the pinned versions."""
        if not self.python.exists():
            return False
        wanted = dict(pin.split("==") for pin in self.pins)
        check = subprocess.run(
            [
                self.python,
                "-c",
                "import importlib.metadata as m, sys; "
                "print(' '.join(m.version(name) for name in sys.argv[1:]))",
                *wanted,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        return check.returncode == 0 and check.stdout.split() == list(wanted.values())


OLDEST = LabEnv(
    "NBAGENT_LAB44_ENV",
    "~/.cache/nbagent/lab44-venv",
    ("jupyterlab==4.4.10", "notebook==7.4.7", "jupyterlab-widgets==3.0.17"),
)
"""The oldest supported JupyterLab and Notebook."""

UNSUPPORTED = LabEnv(
    "NBAGENT_LAB43_ENV",
    "~/.cache/nbagent/lab43-venv",
    ("jupyterlab==4.3.8", "jupyterlab-widgets==3.0.17"),
)
"""A JupyterLab older than supported (no kernel subshells)."""
