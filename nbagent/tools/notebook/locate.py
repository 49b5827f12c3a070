"""Where the notebook tools find a notebook, and where they read and edit it.

The kernel's notebook is the one its front end shows: the path nbagent's extension said in
its ``hello`` and after each rename (:mod:`nbagent.frontend.channel`), from the Jupyter
server's root (:func:`front_end_file`). Only when no front end ever said one is it found from
the name the kernel was started with: ``__session__`` (which ipykernel sets from
``JPY_SESSION_NAME``) or ``JPY_SESSION_NAME`` itself, then VS Code's ``__vsc_ipynb_file__``;
a renamed notebook is then not found (its old name may be another notebook by now). The running
cell's id is the ``cellId`` that JupyterLab and Notebook 7 put in the execute request's
metadata, and the front end that runs it is the request's session, both read through
``shell.kernel.get_parent()``.

The kernel's own notebook is read and edited where the user sees it (:func:`route`): in the
front end that shows it, through nbagent's JupyterLab extension (:mod:`nbagent.frontend`),
else in JupyterLab's live document when it shares the notebook in real time
(:mod:`nbagent.tools.notebook.live`). In a kernel, its file is never written: the front end holds
it open, and its next save would undo the edit or ask the user which to keep; a read of it
says that nbagent cannot see it, why, and what the user can do. Other notebooks are read and
edited in their files (:mod:`nbagent.tools.notebook.file`). A read's :class:`NotebookSnapshot` says
which it was, in the header the model reads.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from nbagent.core.errors import ToolError
from nbagent.frontend.channel import FrontEnd, FrontEndChannel
from nbagent.tools.context import ToolContext
from nbagent.tools.files.paths import resolve, shown
from nbagent.tools.notebook.file import Document, LoadedNotebook, cell_digest, load_notebook
from nbagent.tools.notebook.frontend import FrontEndDocument
from nbagent.tools.notebook.live import Route
from nbagent.tools.notebook.servers import parent_server

NO_NOTEBOOK = (
    "No notebook is open: nbagent could not find this kernel's notebook (no notebook setting, "
    "no __session__ or JPY_SESSION_NAME, no __vsc_ipynb_file__). Pass notebook_path to name "
    "one."
)
"""What the notebook tools say when there is no notebook."""

LIVE = "Live: the document JupyterLab shows (real-time collaboration); edits show there at once."
"""What NotebookRead's header adds when it read the live document."""


class Unseen(ToolError):
    """The kernel's own notebook cannot be changed where it is open: no front end (nor live
    document) serves it, or which notebook it is cannot be known.

    Args:
        message: What the model is told.
        why: Why nbagent cannot see the notebook, and what the user can do.
    """

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why
        """Why nbagent cannot see the notebook, and what the user can do."""


NO_FRONT_END = (
    "{name} was not changed: it is open, but nbagent cannot see it as it is open, and an edit "
    "of its file would be undone by the front end's next save. {why} Tell the user this, and "
    "give the code in your answer meanwhile."
)
"""Why an edit of the kernel's own notebook is refused when no front end can show it."""


def find_notebook(
    shell: Any, explicit: str | Path | None = None, frontend: FrontEndChannel | None = None
) -> Path | None:
    """Find the notebook a kernel runs.

    Args:
        shell: The IPython shell (its ``user_ns`` is read), or None.
        explicit: A path set by the user; it wins when given.
        frontend: The channel to the front ends: the notebook the front end that runs the
            cell shows wins (else the one a front end said last), over the kernel's start name.

    Returns:
        The notebook's resolved path, or None when it cannot be found.
    """
    if explicit:
        return Path(explicit).expanduser().resolve()
    if frontend is not None:
        client = running_client(shell)
        front = frontend.front_end(client=client) or frontend.stated(client)
        if front is not None and front.path:
            return front_end_file(front.path, shell)
    namespace = getattr(shell, "user_ns", None) or {}
    for candidate in (
        namespace.get("__session__"),
        os.environ.get("JPY_SESSION_NAME"),
        namespace.get("__vsc_ipynb_file__"),
    ):
        found = _notebook_file(candidate)
        if found is not None:
            return found
    return None


def _notebook_file(candidate: Any) -> Path | None:
    """Turn a session name into an existing ``.ipynb`` path (relative ones from the cwd)."""
    if not isinstance(candidate, str) or not candidate.endswith(".ipynb"):
        return None
    path = Path(candidate).expanduser()
    options = [path] if path.is_absolute() else [Path.cwd() / path, Path.cwd() / path.name]
    return next((option.resolve() for option in options if option.is_file()), None)


def front_end_file(front_path: str, shell: Any = None) -> Path:
    """Return the file of a notebook a front end shows (its path is from the server's root).

    The root is that of the Jupyter server that started this kernel, from its runtime file;
    else the folder of the notebook the kernel was started for (``JPY_SESSION_NAME``, which
    the server sets to an absolute path), or the first folder above it that holds the file.

    Args:
        front_path: The path the front end said, e.g. ``work/sales.ipynb``.
        shell: The IPython shell (its ``__session__`` is read), or None.

    Returns:
        The file's resolved path (which may not exist: a kernel on another machine).
    """
    parts = PurePosixPath(front_path).parts
    options = [root.joinpath(*parts) for root in _server_roots(shell)]
    return next((option for option in options if option.is_file()), options[0]).resolve()


def _server_roots(shell: Any) -> list[Path]:
    """Where the Jupyter server's root may be, the likeliest first."""
    root = _parent_root()
    if root is not None:
        return [root]
    namespace = getattr(shell, "user_ns", None) or {}
    for candidate in (namespace.get("__session__"), os.environ.get("JPY_SESSION_NAME")):
        if isinstance(candidate, str) and Path(candidate).expanduser().is_absolute():
            start = Path(candidate).expanduser().parent
            return [start, *start.parents]
    return [Path.cwd(), *Path.cwd().parents]


@functools.cache
def _parent_root() -> Path | None:
    """The root folder of the Jupyter server that started this kernel, read from its runtime
    file once: a kernel's parent process and its root do not change while it runs."""
    server = parent_server()
    return server.root_dir if server is not None else None


def running_cell_id(shell: Any) -> str | None:
    """Return the id of the cell being executed, from the execute request's metadata.

    Args:
        shell: The IPython shell of an ipykernel kernel.

    Returns:
        The ``cellId`` the front end sent, or None (a plain IPython, a front end that sends
        none, no request running).
    """
    cell_id = (_request(shell).get("metadata") or {}).get("cellId")
    return cell_id if isinstance(cell_id, str) else None


def running_client(shell: Any) -> str | None:
    """Return the client id of the front end that sent the execute request being run.

    Args:
        shell: The IPython shell of an ipykernel kernel.

    Returns:
        The request's session (a front end's kernel connection names itself so), or None.
    """
    session = (_request(shell).get("header") or {}).get("session")
    return session if isinstance(session, str) else None


def _request(shell: Any) -> dict[str, Any]:
    """The shell request being handled (empty when none, or not in an ipykernel kernel)."""
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    if get_parent is None:
        return {}
    try:
        parent = get_parent("shell")
    except Exception:  # an older or a foreign kernel: nothing known rather than a failure
        return {}
    return parent if isinstance(parent, dict) else {}


def why_unseen(frontend: FrontEndChannel, shell: Any) -> str:
    """Say why nbagent cannot see the kernel's notebook as it is open, and what to do.

    Args:
        frontend: The channel to the front ends.
        shell: The IPython shell (the cell's front end, and whether it is VS Code's).
    """
    namespace = getattr(shell, "user_ns", None) or {}
    return frontend.why_unseen(running_client(shell), vscode="__vsc_ipynb_file__" in namespace)


def target(
    context: ToolContext, notebook_path: str | None, write: bool = False
) -> tuple[Path, str, bool]:
    """Resolve the notebook a call is about.

    Args:
        context: The tools' context.
        notebook_path: The path the model gave, or None for the open notebook.
        write: The notebook is about to be edited: Edit deny rules apply too.

    Returns:
        The resolved path, how it is shown in messages, and whether it is the kernel's own.

    Raises:
        Unseen: In a kernel, none was named and the kernel's notebook cannot be known.
        ToolError: No notebook is open and none was named, or the path is not a notebook.
    """
    open_notebook = context.notebook_path()
    if notebook_path:
        path = resolve(context, notebook_path, write=write)
    elif open_notebook is None and context.frontend is not None:
        why = why_unseen(context.frontend, context.shell)
        raise Unseen(
            "nbagent cannot tell which notebook this kernel runs: no front end said, and the "
            "kernel was not started with the name of a notebook file that is still there "
            f"(__session__, JPY_SESSION_NAME). {why}",
            why,
        )
    elif open_notebook is None:
        raise ToolError(NO_NOTEBOOK)
    else:
        path = open_notebook.resolve()
    if path.suffix.lower() != ".ipynb":
        raise ToolError(f"{shown(context, path)} is not a notebook (.ipynb file).")
    is_open = open_notebook is not None and open_notebook.resolve() == path
    return path, shown(context, path), is_open


def route(context: ToolContext, path: Path, is_open: bool, editing: bool = False) -> Route:
    """Where a notebook is read or edited: the front end that shows it, its live document, or
    its file.

    Args:
        context: The tools' context.
        path: The notebook's resolved path.
        is_open: Whether it is the kernel's own notebook.
        editing: For an edit (a live document that does not answer is then an error).

    Raises:
        Unseen: An edit of the kernel's own notebook, in a kernel, and neither the front end
            nor a live document can take it (its file must not be written behind them).
        ToolError: An edit, and the live document did not answer.
    """
    if is_open and context.frontend is not None:
        client = running_client(context.shell)
        front = context.frontend.front_end(lambda front: _shows(front, path), client)
        if front is not None:
            return Route(FrontEndDocument(context.frontend, front, path))
    route = context.live.route(path, editing) if context.live is not None else Route(None)
    if route.document is None and editing and is_open and context.frontend is not None:
        why = why_unseen(context.frontend, context.shell)
        raise Unseen(NO_FRONT_END.format(name=path.name, why=why), why)
    return route


def _shows(front: FrontEnd, path: Path) -> bool:
    """Whether a front end's notebook (a path from the server's root) is this file."""
    parts = PurePosixPath(front.path).parts
    return bool(parts) and path.parts[-len(parts) :] == parts


@dataclass(frozen=True)
class NotebookSnapshot:
    """A notebook as a reading tool sees it: from a front end or live document, or its file."""

    notebook: LoadedNotebook
    """The notebook's content."""
    document: Document | None
    """The front end's or live document it was read from, or None for the file."""
    note: str
    """What the header adds: where it was read from, and what that leaves out."""

    def remember(self, context: ToolContext, ids: tuple[str, ...]) -> None:
        """Record the read: the file's stamp and the cells seen, or each cell as seen.

        Args:
            context: The tools' context, whose read ledger is updated.
            ids: The ids of the cells whose whole source was shown.
        """
        notebook, shown = self.notebook, set(ids)
        if self.document is None:
            context.reads.note(notebook.path, notebook.stamp, shown)
            return
        context.reads.note_live(
            notebook.path,
            {cell.id: cell_digest(cell) for cell in notebook.cells if cell.get("id") in shown},
        )


def snapshot(context: ToolContext, path: Path, name: str, outputs: bool = True) -> NotebookSnapshot:
    """Read a notebook where the user sees it when it is the kernel's own, else from its file.

    Args:
        context: The tools' context.
        path: The notebook's resolved path.
        name: How it is shown in messages.
        outputs: Read the outputs' data too; without, a front end may send only each
            output's type (a large notebook's figures stay in the browser).

    Raises:
        ToolError: The notebook cannot be read.
    """
    open_notebook = context.notebook_path()
    is_open = open_notebook is not None and open_notebook.resolve() == path
    found = route(context, path, is_open)
    document = found.document
    if document is None and is_open and context.frontend is not None:
        return _unseen_snapshot(context.frontend, context.shell, path, name)
    if document is None:
        note = " ".join(part for part in (_file_note(path), found.note) if part)
        return NotebookSnapshot(load_notebook(path, name), None, note)
    notebook = document.read(outputs)
    if isinstance(document, FrontEndDocument):
        unsaved = "with changes not yet saved" if document.state.dirty else "all saved"
        note = f"Read from the notebook as {document.front_end.app} shows it ({unsaved})."
    else:
        note = " ".join(part for part in (LIVE, found.note) if part)
    return NotebookSnapshot(notebook, document, note)


def _unseen_snapshot(
    frontend: FrontEndChannel, shell: Any, path: Path, name: str
) -> NotebookSnapshot:
    """Read the kernel's own notebook from its file when nbagent cannot see it as it is open,
    saying so; a file without cells (a new notebook is empty until saved) is not read as the
    notebook.

    Raises:
        ToolError: The file is missing, unreadable or has no cells (the message says why
            nbagent cannot see the notebook, and what to do).
    """
    why = why_unseen(frontend, shell)
    try:
        notebook = load_notebook(path, name)
    except ToolError as exc:
        raise ToolError(
            f"{name} is open but nbagent cannot see it, and its file cannot be read ({exc}). {why}"
        ) from exc
    age = _saved(path)
    if not notebook.cells:
        raise ToolError(
            f"{name} is open but nbagent cannot see it, and its file ({age}) has no cells: "
            f"what the notebook shows has not been saved. {why}"
        )
    note = (
        f"[{name} is open but nbagent cannot see it: this is its file, {age}; what was typed "
        f"there since is not included. {why}]"
    )
    return NotebookSnapshot(notebook, None, note)


def _file_note(path: Path) -> str:
    """Say that a notebook was read from its file, and how old the save is."""
    return f"[Read from the file, {_saved(path)}.]"


def _saved(path: Path) -> str:
    """When a file was saved, in words: ``saved 12 s ago``."""
    try:
        return f"saved {_age(time.time() - path.stat().st_mtime)} ago"
    except OSError:
        return "saved earlier"


def _age(seconds: float) -> str:
    """A duration in words: ``12 s``, ``4 min``, ``3 h``, ``2 days``."""
    if seconds < 90:
        return f"{max(0, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} days"
