"""What the built-in tools share: the root folder, the notebook, the kernel, limits, reads.

One :class:`ToolContext` serves every built-in tool of an agent. It says where relative paths
start (``root``), how to find the open notebook and the running cell, which IPython shell
holds the user's variables, and how much a tool may print or wait. It also remembers what the
model has read (:class:`ReadLedger`), because editing a file or a notebook cell that the model
has not seen, or that changed since it saw it, is refused. A notebook that JupyterLab shares
in real time is read and edited through :attr:`ToolContext.live`; its cells are remembered
one by one, because the user may type in other cells between the model's reads and edits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbagent.tools.files.stamps import FileStamp
from nbagent.tools.notebook.run_queue import RunQueue

if TYPE_CHECKING:
    from nbagent.frontend.channel import FrontEndChannel
    from nbagent.policy.permissions import PermissionPolicy
    from nbagent.tools.checkpoints.recording import CheckpointLog
    from nbagent.tools.notebook.live import LiveDocuments
    from nbagent.tools.notebook.record import ExecutionRecord


def _no_notebook() -> Path | None:
    return None


def _no_cell() -> str | None:
    return None


def _no_policy() -> PermissionPolicy | None:
    return None


@dataclass(frozen=True)
class Limits:
    """Caps on what a tool reads, prints and waits for.

    Read's and Bash's descriptions state their defaults from these values.
    """

    read_lines: int = 2000
    """Lines Read shows when no ``limit`` is given."""
    line_chars: int = 2000
    """Characters of one line shown by Read and Grep before it is cut."""
    read_chars: int = 100_000
    """Characters one Read returns at most (it stops at a line boundary and says where)."""
    output_chars: int = 30_000
    """Characters of output Bash, Grep, Glob, NotebookRead, RunCode and WebFetch return."""
    glob_results: int = 100
    """Paths Glob lists at most."""
    bash_timeout: float = 120.0
    """Seconds a Bash command runs when it names no timeout."""
    bash_max_timeout: float = 600.0
    """The longest timeout a Bash command may ask for, in seconds."""
    image_bytes: int = 3_750_000
    """The largest image Read returns (the API takes 5 MB of base64, about 3.75 MB raw)."""
    web_timeout: float = 30.0
    """Seconds WebFetch waits for a page, connection and transfer together."""
    web_bytes: int = 5_000_000
    """Bytes of a page WebFetch downloads at most."""
    cell_output_chars: int = 2000
    """Characters of one cell output NotebookRead and NotebookRun show."""
    images: int = 4
    """Images one NotebookRead, NotebookRun or RunCode result carries at most."""
    run_seconds: float = 300.0
    """Seconds a cell NotebookRun runs may take before it is stopped, as Ctrl-C would."""
    repr_chars: int = 300
    """Characters of a value's preview in ListVariables and InspectVariable."""
    repr_seconds: float = 0.5
    """Seconds a user-defined ``__repr__`` may run before it is stopped."""
    variables: int = 200
    """Variables ListVariables lists at most."""


class ReadLedger:
    """What the model has read: files and notebooks with the stamp they had, cells seen, and
    each cell of a live document as it was seen.

    Thread-safe: read-only tools run on a thread pool.
    """

    def __init__(self) -> None:
        self._files: dict[Path, FileStamp] = {}
        self._cells: dict[Path, set[str]] = {}
        self._live: dict[Path, dict[str, str]] = {}
        self._lock = threading.Lock()

    def note(self, path: Path, stamp: FileStamp, cells: set[str] | None = None) -> None:
        """Record that ``path`` was read as it was at ``stamp``.

        A notebook read again at a new stamp forgets the cells seen at the old one.

        Args:
            path: The resolved path.
            stamp: The file's stamp when it was read.
            cells: Ids of notebook cells whose whole source was shown.
        """
        with self._lock:
            if self._files.get(path) != stamp:
                self._cells.pop(path, None)
            self._files[path] = stamp
            if cells:
                self._cells.setdefault(path, set()).update(cells)

    def stamp(self, path: Path) -> FileStamp | None:
        """Return the stamp ``path`` had when it was last read or written, or None.

        Args:
            path: The resolved path.
        """
        with self._lock:
            return self._files.get(path)

    def cells(self, path: Path) -> set[str]:
        """Return the ids of the cells of notebook ``path`` whose source the model has seen.

        Args:
            path: The resolved path.
        """
        with self._lock:
            return set(self._cells.get(path, ()))

    def note_live(self, path: Path, cells: Mapping[str, str], forget: Iterable[str] = ()) -> None:
        """Record a read of (or an edit to) the live document of notebook ``path``.

        Args:
            path: The notebook's resolved path.
            cells: Cells whose whole source the model now knows: id -> digest of type and
                source (:func:`~nbagent.tools.notebook.file.cell_digest`).
            forget: Ids of cells that are gone.
        """
        with self._lock:
            known = self._live.setdefault(path, {})
            known.update(cells)
            for cell_id in forget:
                known.pop(cell_id, None)

    def live_cells(self, path: Path) -> dict[str, str] | None:
        """Return what the model knows of the cells of ``path``'s live document.

        Args:
            path: The notebook's resolved path.

        Returns:
            Cell id -> digest of the cell as last read or written, or None when the live
            document was never read.
        """
        with self._lock:
            known = self._live.get(path)
            return None if known is None else dict(known)


@dataclass
class ToolContext:
    """The environment of the built-in tools.

    Build one per agent; :meth:`for_shell` builds one for a running IPython kernel.
    """

    root: Path
    """The folder relative paths start from; leaving it needs the user's permission."""
    notebook_path: Callable[[], Path | None] = _no_notebook
    """Returns the open notebook's path, or None when there is none."""
    cell_id: Callable[[], str | None] = _no_cell
    """Returns the id of the cell that runs the agent, or None when unknown."""
    shell: Any = None
    """The IPython shell whose namespace the variable tools and RunCode use, or None."""
    limits: Limits = field(default_factory=Limits)
    """Caps on output sizes and timeouts."""
    reads: ReadLedger = field(default_factory=ReadLedger, repr=False)
    """What the model has read, for the read-before-edit rule."""
    live: LiveDocuments | None = field(default=None, repr=False)
    """JupyterLab's live notebook documents, or None to read and edit notebook files only."""
    frontend: FrontEndChannel | None = field(default=None, repr=False)
    """The channel to nbagent's JupyterLab extension in the front ends that show the kernel's
    notebook; set in a kernel, where the notebook's file is then never written behind them."""
    policy: Callable[[], PermissionPolicy | None] = field(default=_no_policy, repr=False)
    """Returns the agent's permission policy, which tools that walk a folder (Grep, Glob) ask
    which files they may read; None for the default policy (credentials hidden)."""
    checkpoints: CheckpointLog | None = field(default=None, repr=False)
    """Where notebook and file changes are recorded for ``%agent undo``; None: not recorded."""
    record: ExecutionRecord | None = field(default=None, repr=False)
    """What the kernel ran, cell by cell (:mod:`nbagent.tools.notebook.record`), in a kernel
    where nbagent is loaded; None elsewhere."""
    runs: RunQueue = field(default_factory=RunQueue, repr=False)
    """NotebookRun's longest time limit and its runs queued for after the agent's turn."""

    def __post_init__(self) -> None:
        """Resolve the root to an absolute path without symlinks."""
        self.root = Path(self.root).expanduser().resolve()

    @classmethod
    def for_shell(
        cls,
        shell: Any,
        notebook: str | Path | None = None,
        root: str | Path | None = None,
        limits: Limits | None = None,
        live: LiveDocuments | None = None,
        frontend: FrontEndChannel | None = None,
    ) -> ToolContext:
        """Build the context of a running IPython kernel.

        The notebook is found each time it is needed (see :func:`find_notebook`): the one
        the front end shows, so a notebook renamed while the kernel runs is followed.

        Args:
            shell: The IPython shell (``get_ipython()``).
            notebook: The notebook's path, when it is known; found otherwise.
            root: The root folder; the notebook's folder by default, else the working folder.
            limits: Caps; the defaults otherwise.
            live: JupyterLab's live documents, to edit notebooks through them; files only
                without.
            frontend: The channel to the front ends that show the kernel's notebook.

        Returns:
            The context.
        """
        from nbagent.tools.notebook.locate import find_notebook, running_cell_id

        def notebook_path() -> Path | None:
            return find_notebook(shell, notebook, frontend)

        if root is None:  # the name the kernel started with: no front end is asked yet
            found = find_notebook(shell, notebook)
            root = found.parent if found else Path.cwd()
        return cls(
            root=Path(root),
            notebook_path=notebook_path,
            cell_id=lambda: running_cell_id(shell),
            shell=shell,
            limits=limits or Limits(),
            live=live,
            frontend=frontend,
        )
