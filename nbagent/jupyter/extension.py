"""``%load_ext nbagent``: what loading and unloading the extension sets up and takes down.

Loading makes the shell's :class:`~nbagent.jupyter.session.Session` (``Session.of(shell)``),
which owns all that follows, and registers the magics and, in a kernel, the registry browser.
The session holds the ``c.NbAgent`` configuration, the built-in tools (files, shell, notebook
cells, variables, web; built on a background thread, which the magics wait for), the channel
to nbagent's JupyterLab extension (in a kernel), the log file that takes nbagent's log
records in a kernel (never the notebook; :mod:`nbagent.store.logfile`) and the MCP manager,
which starts the configured servers in the background: loading never waits for a server.
Once the load cell is done, one thread does the rest of the start-up work (:func:`_start_up`)
with a short GIL switch interval and paced imports, so that the person's cells meanwhile stay
responsive, and imports the SDK only once the kernel is idle (docs/explanation/start-up.md).
Unloading closes the session (the servers, no process left behind; the channel, the
connections to JupyterLab's live notebook documents, the log file) and removes the magics, so
``%reload_ext nbagent`` starts clean.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Collection
from functools import partial
from typing import TYPE_CHECKING, Any

from IPython.core.magic import Magics
from IPython.display import display

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import NbAgentError
from nbagent.core.markup import Markdown, code_markdown, plain_markdown
from nbagent.core.pacing import paced_imports
from nbagent.core.secrets import get_logger
from nbagent.core.switching import short_switch_interval
from nbagent.jupyter.idle import IdleWatch
from nbagent.jupyter.magics import AgentMagics
from nbagent.jupyter.mcp_magics import FIX_CONFIG, McpMagics, approval_notice
from nbagent.jupyter.outputs import in_kernel
from nbagent.jupyter.session import Session

if TYPE_CHECKING:
    from nbagent.mcp.config import McpConfig

logger = get_logger("nbagent.jupyter.extension")


def load(shell: Any) -> Session:
    """Set up nbagent in a shell (``%load_ext nbagent``); a second call changes nothing.

    Args:
        shell: The IPython shell.

    Returns:
        The shell's session (``Session.of(shell)``), which holds all that was set up.
    """
    found = Session.of(shell)
    if found is not None:
        return found
    kernel = in_kernel()
    session = Session.open(shell, kernel)
    loaded = threading.Event()

    def after_load(result: Any = None) -> None:
        shell.events.unregister("post_run_cell", after_load)
        _load_cells.pop(session, None)
        loaded.set()

    shell.events.register("post_run_cell", after_load)
    _load_cells[session] = (loaded, after_load)
    threading.Thread(
        target=_start_up, args=(session, loaded), name="nbagent-start-up", daemon=True
    ).start()
    shell.register_magics(AgentMagics(shell, session))
    shell.register_magics(McpMagics(shell, session))
    if kernel:
        shell.display_formatter.mimebundle_formatter.for_type(
            ToolRegistry, partial(_registry_mimebundle, loaded_by_search=session.loaded_by_search)
        )
    if session.frontend is not None:
        session.frontend.open()  # the front ends make their subshells now, not in an %%agent cell
    try:
        config = session.start_servers()
    except NbAgentError as exc:
        display(
            Markdown(f"> **MCP configuration not used**: {plain_markdown(str(exc))} {FIX_CONFIG}")
        )
    else:
        if config is not None and config.problems:
            display(Markdown(_not_started_notice(config)))
        if waiting := approval_notice(session.mcp_manager):
            display(Markdown(waiting))
    return session


def _registry_mimebundle(
    registry: ToolRegistry, loaded_by_search: Callable[[], Collection[str]]
) -> dict[str, Any]:
    """The registry's browser (:func:`~nbagent.jupyter.registry_browser.registry_mimebundle`),
    whose module (and ipywidgets, about 40 ms) is imported when a registry is first shown."""
    from nbagent.jupyter.registry_browser import registry_mimebundle

    return registry_mimebundle(registry, loaded_by_search)


def _not_started_notice(config: McpConfig) -> str:
    """The notice naming each bad entry of a configuration and its faults (the rest start)."""
    from nbagent.mcp.config_file import fault_text

    where = f" (in {plain_markdown(str(config.source))})" if config.source else ""
    names = dict.fromkeys(str(problem.server) for problem in config.problems)
    lines = "\n".join(
        f"> - {code_markdown(name)}: "
        + "; ".join(
            plain_markdown(fault_text(fault, config.source)) for fault in config.faults(name)
        )
        for name in names
    )
    others = "; the others start" if config.servers else ""
    return f"> **MCP servers not started**{where}{others}:\n>\n{lines}"


_load_cells: dict[Session, tuple[threading.Event, Callable[..., None]]] = {}
"""The sessions whose load cell is still running: the event their start-up thread waits for,
and the hook that sets it when the cell ends."""

SERVERS_SETTLE = 120.0
"""Seconds the start-up work waits, at most, for the MCP servers to finish connecting."""

IDLE_SECONDS = 1.0
"""Seconds with no code run in the kernel before the SDK is imported ahead of its first use."""


def _start_up(session: Session, loaded: threading.Event) -> None:
    """nbagent's start-up work after the load, with a short GIL switch interval while it runs.

    Once the ``%load_ext`` cell is done (so none of this competes with the load, or with a
    ``%tools`` in the same cell): the agent is built (the agent loop's modules imported; a
    setting it cannot take is said where the agent is first used), ToolSearch indexes the
    deferred tools (and its embedding models load), and the MCP servers connect, their tools
    are parsed and indexed. Then, once no code has run in the kernel for :data:`IDLE_SECONDS`,
    the SDK is imported (:func:`_warm_imports`): that saves the first ``%%agent`` cell a
    second, and would slow every cell run beside it. Meanwhile the switch interval is short
    and the imports paced (:mod:`nbagent.core.switching`, :mod:`nbagent.core.pacing`), so the
    person's cells wait less for the GIL; the person's own interval comes back when each part
    ends.

    Args:
        session: The shell's new session.
        loaded: Set once the load cell is done.
    """
    shell = session.shell
    idle = IdleWatch(shell)
    try:
        with short_switch_interval(), paced_imports():
            session.ready()
            loaded.wait()
            if Session.of(shell) is not session:
                return  # unloaded before its load cell ended
            try:
                session.agent.search.prepare()
            except NbAgentError:  # a setting the agent cannot take: said at its first use
                logger.info("The agent was not built at start-up", exc_info=True)
            session.mcp_manager.wait_ready(SERVERS_SETTLE)
        if idle.wait(IDLE_SECONDS, go_on=lambda: Session.of(shell) is session):
            with short_switch_interval(), paced_imports():
                _warm_imports()
    finally:
        idle.close()


def _warm_imports() -> None:
    """Import what the first ``%%agent`` cell and the notebook tools need, beside the user's
    next cells.

    The SDK takes about a second to import. nbformat imports jsonschema, whose format
    checkers can take a second more (a grammar is compiled with thousands of ``ast.parse``
    calls). On Python 3.11, ``ast.parse`` on two threads at once can fail with "SystemError:
    AST constructor recursion depth mismatch" (seen here on 3.11.7; CPython gh-106905), and
    IPython parses every cell the user runs: there nbformat is left to the first notebook
    tool call.
    Nobody waits for this thread: a cell or a tool that needs a module meanwhile just waits
    for the import it would have done.
    """
    import nbagent.core.pydantic_whole  # noqa: F401 - before the SDK's pydantic (see there)

    # isort: split
    import anthropic  # noqa: F401

    if sys.version_info >= (3, 12):
        import nbformat  # noqa: F401


def unload(shell: Any) -> None:
    """Take nbagent down in a shell: its session closed, the magics removed.

    Args:
        shell: The IPython shell.
    """
    session = Session.of(shell)
    if session is None:
        return
    session.close()
    if (pending := _load_cells.pop(session, None)) is not None:
        loaded, after_load = pending
        shell.events.unregister("post_run_cell", after_load)
        loaded.set()  # the start-up thread ends
    for magics in (AgentMagics, McpMagics):
        _unregister(shell, magics)
    shell.display_formatter.mimebundle_formatter.pop(ToolRegistry, None)


def _unregister(shell: Any, kind: type[Magics]) -> None:
    """Remove the magics of a class from the shell, as registered by :func:`load`: from the
    magics manager, and from the shell's configurables, which would otherwise keep the
    magics (and through them the closed session, its agent and its search threads) alive."""
    manager = shell.magics_manager
    magics = manager.registry.pop(kind.__name__, None)
    if magics is None:
        return
    for family, names in magics.magics.items():
        for name in names:
            manager.magics[family].pop(name, None)
    configurables = getattr(shell, "configurables", None)
    if isinstance(configurables, list):
        configurables[:] = [c for c in configurables if c is not magics]
