"""``%load_ext nbagent``: what loading and unloading the extension sets up and takes down.

Loading registers the ``c.NbAgent`` configuration, the magics, the registry browser (in a
kernel), the built-in tools (files, shell, notebook cells, variables, web; built on a
background thread, which the magics wait for), the channel to nbagent's JupyterLab extension
(in a kernel), the log file that takes nbagent's log records in a kernel (never the notebook;
:mod:`nbagent.store.logfile`) and the MCP manager, which starts the configured servers in the
background: loading never waits for a server. Unloading closes the servers (no process is
left behind), the channel, the connections to JupyterLab's live notebook documents and the
log file, and removes everything again, so ``%reload_ext nbagent`` starts clean.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from IPython.display import display

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import NbAgentError
from nbagent.core.markup import Markdown, code_markdown, plain_markdown
from nbagent.jupyter.config import NbAgent
from nbagent.jupyter.display import in_kernel
from nbagent.jupyter.magics import AgentMagics
from nbagent.jupyter.mcp_magics import FIX_CONFIG, McpMagics, approval_notice
from nbagent.jupyter.session import Session
from nbagent.store.logfile import LogFile, stop_writing, write_to_file

if TYPE_CHECKING:
    from nbagent.frontend.channel import FrontEndChannel
    from nbagent.mcp.config import McpConfig
    from nbagent.tools.notebook.live import LiveDocuments


@dataclass
class Loaded:
    """What the extension set up in one shell."""

    session: Session
    """The settings and the agent, tasks, servers and front-end channel they configure."""
    agent_magics: AgentMagics
    """``%%agent``, ``%agent``, ``%tools``, ``%tool_search``."""
    mcp_magics: McpMagics
    """``%mcp``."""
    builtin: list[str]
    """The built-in tools registered (files, shell, notebook, variables, web)."""
    live: LiveDocuments | None = None
    """The notebook tools' connections to JupyterLab's live documents (made with the tools)."""
    log_file: LogFile | None = None
    """Where nbagent's log records go in a kernel: its log file (never the notebook)."""

    @property
    def settings(self) -> NbAgent:
        """The ``c.NbAgent`` configuration."""
        return self.session.settings

    @property
    def manager(self) -> Any:
        """The :class:`~nbagent.mcp.McpManager`."""
        return self.session.mcp_manager

    @property
    def frontend(self) -> FrontEndChannel | None:
        """The channel to nbagent's JupyterLab extension (in a kernel only)."""
        return self.session.frontend


_loaded: dict[int, Loaded] = {}
"""What the extension set up in each shell (by id)."""


def load(shell: Any) -> Loaded:
    """Set up nbagent in a shell (``%load_ext nbagent``); a second call changes nothing.

    Args:
        shell: The IPython shell.

    Returns:
        What was set up.
    """
    from nbagent.catalogue.process import process_registry
    from nbagent.frontend.channel import FrontEndChannel
    from nbagent.mcp import McpManager
    from nbagent.tools import ToolContext, builtin_tools

    if id(shell) in _loaded:
        return _loaded[id(shell)]
    settings = NbAgent(parent=shell)
    shell.configurables.append(settings)
    registry = process_registry()
    manager = McpManager(registry)
    kernel = in_kernel()
    frontend = FrontEndChannel() if kernel else None
    session = Session(settings, registry, mcp_manager=manager, frontend=frontend)
    loaded = Loaded(
        session,
        AgentMagics(shell, session),
        McpMagics(shell, manager),
        [],
        log_file=write_to_file() if kernel else None,
    )
    loaded.agent_magics.log_file = loaded.log_file

    def register_builtin() -> None:
        from nbagent.tools.notebook.live import LiveDocuments

        loaded.live = LiveDocuments()
        context = ToolContext.for_shell(shell, live=loaded.live, frontend=frontend)
        context.policy = session.policy
        tools = builtin_tools(context)
        registry.register_many(tools, replace=True)
        loaded.builtin = [t.name for t in tools]
        session.agent  # noqa: B018 - built now, so its session tools are listed from the start

    # Building the tools imports pydantic (about 0.25 s): done beside the user's next cell.
    builder = threading.Thread(target=register_builtin, name="nbagent-builtin-tools", daemon=True)
    builder.start()
    threading.Thread(target=_warm_imports, name="nbagent-warm-imports", daemon=True).start()
    loaded.agent_magics.wait_for = builder.join

    def index_after_load(result: Any = None) -> None:
        shell.events.unregister("post_run_cell", index_after_load)

        def prepare() -> None:
            builder.join()
            session.agent.search.prepare()

        threading.Thread(target=prepare, name="nbagent-search-prepare", daemon=True).start()

    # ToolSearch indexes (and its embedding models load) once the %load_ext cell is done.
    shell.events.register("post_run_cell", index_after_load)
    shell.register_magics(loaded.agent_magics)
    shell.register_magics(loaded.mcp_magics)
    if in_kernel():
        from nbagent.jupyter.registry_browser import registry_mimebundle

        shell.display_formatter.mimebundle_formatter.for_type(
            ToolRegistry, partial(registry_mimebundle, loaded_by_search=session.loaded_by_search)
        )
    _loaded[id(shell)] = loaded
    if frontend is not None:
        frontend.open()  # the front ends make their subshells now, not in an %%agent cell
    try:
        config = session.start_servers()
    except NbAgentError as exc:
        display(
            Markdown(f"> **MCP configuration not used**: {plain_markdown(str(exc))} {FIX_CONFIG}")
        )
    else:
        if config is not None and config.problems:
            display(Markdown(_not_started_notice(config)))
        if waiting := approval_notice(manager):
            display(Markdown(waiting))
    return loaded


def _not_started_notice(config: McpConfig) -> str:
    """The notice naming each bad entry of a configuration and its faults (the rest start)."""
    from nbagent.mcp.config import fault_text

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
    import anthropic  # noqa: F401

    if sys.version_info >= (3, 12):
        import nbformat  # noqa: F401


def unload(shell: Any) -> None:
    """Take nbagent down in a shell: servers closed, magics and configuration removed.

    Args:
        shell: The IPython shell.
    """
    loaded = _loaded.pop(id(shell), None)
    if loaded is None:
        return
    loaded.agent_magics.wait_for()
    loaded.session.close()
    loaded.manager.close()
    if loaded.live is not None:
        loaded.live.close()
    if loaded.frontend is not None:
        loaded.frontend.close()
    if loaded.log_file is not None:
        stop_writing(loaded.log_file)
    loaded.agent_magics.registry.unregister_many(loaded.builtin)
    manager = shell.magics_manager
    for magics in (loaded.agent_magics, loaded.mcp_magics):
        for kind, names in magics.magics.items():
            for name in names:
                manager.magics[kind].pop(name, None)
        manager.registry.pop(type(magics).__name__, None)
    shell.display_formatter.mimebundle_formatter.pop(ToolRegistry, None)
    if loaded.settings in shell.configurables:
        shell.configurables.remove(loaded.settings)
