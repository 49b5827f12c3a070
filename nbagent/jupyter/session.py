"""One kernel's nbagent session: the settings, and everything they configure.

A :class:`Session` owns all that nbagent keeps for one shell: the ``c.NbAgent`` settings and
what they shape (the agent and its conversation, the task board, the MCP manager and its
notices, the channel to the JupyterLab extension), the recorder that saves the conversation,
the built-in tools and their connections to live notebook documents, and the log file.
``Session.of(shell)`` is the one way to reach it: :meth:`Session.open` makes it at
``%load_ext nbagent`` and :meth:`Session.close` takes it down at ``%unload_ext`` (and so at
``%reload_ext``); the magics hold the session and nothing of their own.

It observes the settings (traitlets ``observe``, as IPython's own configurable objects do), so
an option set with ``%config`` applies from the next cell on, in the conversation going on;
nothing copies the settings once and forgets them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import StdinNotImplementedError
from traitlets import Bunch

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.errors import NbAgentError
from nbagent.core.events import PermissionRequested, Usage
from nbagent.core.markup import code_markdown, plain_markdown, show_controls
from nbagent.core.secrets import ONE_LINE, get_logger, redact
from nbagent.core.text import one_line
from nbagent.jupyter.config import NbAgent
from nbagent.jupyter.kernel_state import CellWatch, kernel_start_time
from nbagent.jupyter.memory_magics import drop_memory, sync_memory
from nbagent.jupyter.queued_runs import Sent
from nbagent.jupyter.queued_runs import apply_settings as apply_run_settings
from nbagent.loop import cellthread
from nbagent.orchestration import TaskBoard, session_tools
from nbagent.policy.decisions import PermissionAnswer
from nbagent.policy.permissions import PermissionPolicy
from nbagent.render.codeview import plain_text
from nbagent.store.checkpoints import notebook_checkpoints
from nbagent.store.folders import notebook_path
from nbagent.store.logfile import LogFile, stop_writing, write_to_file
from nbagent.tools.notebook.locate import front_end_file, running_client
from nbagent.tools.notebook.record import ExecutionRecord
from nbagent.tools.notebook.run_queue import RunQueue
from nbagent.tools.shell import sandbox

# The agent loop, the API's modules and the recorder are imported when the agent is first
# used (on the start-up thread after the load cell, or by the first magic that needs it).
if TYPE_CHECKING:
    from nbagent.api.api_tools import ServerTool
    from nbagent.api.pricing import Price
    from nbagent.catalogue.skills import SkillSet
    from nbagent.frontend.channel import FrontEndChannel
    from nbagent.loop.agent import Agent
    from nbagent.store.instructions import ProjectInstructions
    from nbagent.store.recorder import Recorder
    from nbagent.tools.context import ToolContext
    from nbagent.tools.notebook.live import LiveDocuments

logger = get_logger("nbagent.jupyter.session")

SANDBOX_SETTINGS = ("sandbox", "sandbox_network", "sandbox_write_paths")
"""The settings of Bash's sandbox (:mod:`nbagent.tools.shell.sandbox`)."""

POLICY_SETTINGS = ("permission_mode", "allow_rules", "deny_rules")
"""The settings of the agent's permission policy (changed in place: it keeps the rules added
with ``%agent allow`` and the plan mode the agent entered)."""

SETTERS: dict[str, Callable[[Agent, Any], None]] = {
    "ranker": lambda agent, ranker: agent.search.use(ranker),
    "call_timeout": lambda agent, seconds: setattr(agent.runner, "call_timeout", seconds),
}
"""How a changed setting reaches an agent built, for the parameters that are not an
attribute of the agent of their name (the others are set as that attribute)."""

CELL_OPTIONS = ("model", "max_turns", "mode", "effort", "cell_budget")
"""The parameters one ``%%agent`` cell may set for itself (``--model``, ``--max-turns``,
``--mode``, ``--effort``, ``--budget``): :meth:`Session.for_cell`."""

SET_ONCE_BUILT = ("call_timeout",)
"""The parameters a setting names that ``Agent(...)`` takes no keyword for (the timeout is
its ToolRunner's): set by :data:`SETTERS` once the agent is built."""

ANSWERS: dict[str, PermissionAnswer] = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "": "no"}
"""What a person may type at a permission question, and what it means ("a" is added when
an "always" rule can be offered)."""


_sessions: dict[Any, Session] = {}
"""The session of each shell nbagent is loaded in (:meth:`Session.of`)."""


class Session:
    """Everything nbagent keeps for one shell: the settings and what they configure.

    Args:
        settings: The ``c.NbAgent`` configuration (observed from now on).
        registry: The tools.
        shell: The IPython shell (whose notebook the conversations are saved under).
        mcp_manager: The MCP servers' manager (closed with the session).
        frontend: The channel to nbagent's JupyterLab extension, in a kernel.
        log_file: The file taking nbagent's log records, in a kernel (never the notebook).
        asker: Asks the user about a tool call; :func:`ask_on_stdin` by default.
        root: The folder permission rules' relative paths are resolved against.
    """

    def __init__(
        self,
        settings: NbAgent,
        registry: ToolRegistry,
        *,
        shell: Any = None,
        mcp_manager: Any = None,
        frontend: FrontEndChannel | None = None,
        log_file: LogFile | None = None,
        asker: Callable[[PermissionRequested], PermissionAnswer | None] | None = None,
        root: Path | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.shell = shell
        self.mcp_manager = mcp_manager
        """The :class:`~nbagent.mcp.McpManager`; what it reports in the background waits in
        its ``notices`` for the next ``%%agent`` cell or ``%mcp`` command."""
        self.frontend = frontend
        self.log_file = log_file
        self.tasks = TaskBoard()
        """The agent's task list (TaskCreate, TaskUpdate, ...)."""
        self._instructions: ProjectInstructions | None = None
        """The AGENTS.md and CLAUDE.md files put in the system prompt at each cell (made at
        the first cell, as the skills)."""
        self._skills: SkillSet | None = None
        """The skills registered as deferred tools, found again at each cell."""
        self.live: LiveDocuments | None = None
        """The notebook tools' connections to JupyterLab's live documents (made with them)."""
        self.builtin: list[str] = []
        """The built-in tools registered (files, shell, notebook, variables, web)."""
        self.root = root or Path.cwd()
        self.checkpoints = notebook_checkpoints(self.notebook, lambda: settings.checkpoints)
        """What each ``%%agent`` cell changed, for ``%agent undo`` (beside the conversations)."""
        self.context: ToolContext | None = None
        """The built-in tools' context, once they are built."""
        self.record = ExecutionRecord(kernel_start_time())
        """What the kernel ran, cell by cell (kept from IPython's events while loaded)."""
        self._watch = CellWatch(shell, self.record) if hasattr(shell, "events") else None
        self.runs = RunQueue()
        """NotebookRun's time limit and runs queued for after the turn (settings applied)."""
        self.sent_runs: Sent | None = None
        """The queued runs last handed to the front end, until an ``--after`` cell goes on."""
        apply_run_settings(self.runs, settings)
        if self._watch is not None:
            self._watch.start()
        self.agent_running = False
        """Whether an ``%%agent`` cell is running: then only the agent's tools run code, and
        the permission settings do not change (:meth:`_changed`)."""
        self._reverting = False
        self._builder: threading.Thread | None = None
        self._front_path = ""
        self._front_said = ""  # the front end's path that _front_path was found for
        self._asker = asker or ask_on_stdin
        self._agent: Agent | None = None
        self._closed = False
        self._recorder: Recorder | None = None
        self._recorder_lock = threading.Lock()
        self._lock = threading.Lock()
        self._overrides: dict[str, bool] = {}
        self._mcp_servers: list[str] = []
        self._server_tools: list[str] = []
        self._restarting: threading.Thread | None = None
        self._prices: dict[str, Price] | None = None
        self._session_tools = self._register_session_tools()
        self._apply_overrides()
        self._apply_server_tools()
        self._apply_sandbox()
        settings.observe(self._changed)

    @classmethod
    def of(cls, shell: Any) -> Session | None:
        """The session of a shell: the one way to reach what nbagent keeps for a kernel.

        Args:
            shell: The IPython shell.

        Returns:
            Its session, or None when nbagent is not loaded in it.
        """
        return _sessions.get(shell)

    @classmethod
    def open(cls, shell: Any, kernel: bool) -> Session:
        """Make a shell's session (``%load_ext nbagent``), kept as ``Session.of(shell)``.

        The settings join the shell's configurables (so ``%config NbAgent`` reaches them), and
        the built-in tools are built on a background thread (:meth:`ready` waits for them).

        Args:
            shell: The IPython shell.
            kernel: Whether the shell runs in a kernel: only there is there a channel to the
                JupyterLab extension, and a log file.

        Returns:
            The new session.
        """
        from nbagent.catalogue.process import process_registry
        from nbagent.frontend.channel import FrontEndChannel
        from nbagent.mcp import McpManager

        settings = NbAgent(parent=shell)
        shell.configurables.append(settings)
        registry = process_registry()
        session = cls(
            settings,
            registry,
            shell=shell,
            mcp_manager=McpManager(registry),
            frontend=FrontEndChannel() if kernel else None,
            log_file=write_to_file() if kernel else None,
        )
        # The built-in tools, made on a thread (their modules and definitions, about 35 ms).
        session._builder = threading.Thread(
            target=session._register_builtin, name="nbagent-builtin-tools", daemon=True
        )
        session._builder.start()
        _sessions[shell] = session
        return session

    def _register_builtin(self) -> None:
        """Build the built-in tools for the shell and register them (the agent is built at
        its first use)."""
        from nbagent.tools import ToolContext, builtin_tools
        from nbagent.tools.notebook.live import LiveDocuments

        self.live = LiveDocuments()
        context = ToolContext.for_shell(self.shell, live=self.live, frontend=self.frontend)
        context.policy = self.policy
        context.checkpoints = self.checkpoints
        self.context = context
        context.record = self.record
        context.runs = self.runs
        tools = builtin_tools(context)
        self.registry.register_many(tools, replace=True)
        self.builtin = [t.name for t in tools]

    def ready(self) -> None:
        """Wait until the built-in tools are registered (at once when they are)."""
        if self._builder is not None:
            self._builder.join()

    def notebook(self) -> str:
        """The notebook's path, the key of its saved conversations: where a front end shows
        it (its name now, after a rename; the last one said when no front end shows it
        now), else the name the kernel started with."""
        frontend = self.frontend
        front = frontend.stated(running_client(self.shell)) if frontend is not None else None
        if front is not None and front.path and front.path != self._front_said:
            found = front_end_file(front.path, self.shell)
            self._front_path = str(found)
            self._front_said = front.path if found.is_file() else ""
        return self._front_path or notebook_path(self.shell)

    @property
    def agent(self) -> Agent:
        """The kernel's agent, built on first use from the settings in force.

        Raises:
            NbAgentError: A setting the agent cannot take (said where it is first used), or
                the session was closed before its agent was built.
        """
        with self._lock:
            if self._agent is None:
                if self._closed:  # e.g. the start-up thread, after an %unload_ext
                    raise NbAgentError(
                        "nbagent was unloaded from this kernel: %load_ext nbagent loads it again."
                    )
                self._agent = self._build_agent()
        return self._agent

    @property
    def recorder(self) -> Recorder:
        """Saves the conversation as it goes (``%agent sessions``, ``%agent resume``); made
        at its first use."""
        with self._recorder_lock:  # not the agent's: an agent being built need not be waited for
            if self._recorder is None:
                from nbagent.store.recorder import Recorder

                self._recorder = Recorder(self.notebook)
        return self._recorder

    @property
    def prices(self) -> dict[str, Price]:
        """The price table in force: the built-in one, with ``c.NbAgent.prices`` over it."""
        prices = self._prices
        if prices is None:
            from nbagent.api.pricing import PRICES, parse_prices

            prices = self._prices = PRICES | parse_prices(self.settings.prices)
        return prices

    def for_cell(self, agent: Agent, **options: Any) -> None:
        """Give the agent one cell's own values of the :data:`CELL_OPTIONS`; one not given
        (or None) takes the settings' value again.

        Args:
            agent: The session's agent.
            **options: Values by parameter (``model``, ``max_turns``, ``mode``).
        """
        from nbagent.catalogue.skills import SkillSet
        from nbagent.store.instructions import ProjectInstructions, notebook_dir, repository_root

        self.cell_options(agent, **options)
        folder = notebook_dir(self.notebook())
        if self._instructions is None or self._skills is None:
            self._instructions, self._skills = ProjectInstructions(), SkillSet()
        agent.system = self._instructions.system(self.settings.agent_value("system"), folder)
        agent.prices = self.prices
        self._skills.sync(self.registry, repository_root(folder))
        sync_memory(self)

    def cell_options(self, agent: Agent, **options: Any) -> None:
        """Give the agent one cell's values of the :data:`CELL_OPTIONS` (the settings' where
        one is not given), and nothing else: how a cell's end puts the settings' values back.

        Args:
            agent: The session's agent.
            **options: Values by parameter (``model``, ``max_turns``, ``mode``).
        """
        for parameter in CELL_OPTIONS:
            value = options.get(parameter) or self.settings.agent_value(parameter)
            set_parameter(agent, parameter, value)

    def policy(self) -> PermissionPolicy | None:
        """The agent's permission policy, once the agent exists (what the tools' searches
        filter their files by); None before, or when the agent has a policy of another kind.
        """
        agent = self._agent
        policy = agent.runner.policy if agent is not None else None
        return policy if isinstance(policy, PermissionPolicy) else None

    @property
    def agent_built(self) -> bool:
        """Whether the agent exists yet (a status need not build it)."""
        return self._agent is not None

    def loaded_by_search(self) -> list[str]:
        """The deferred tools the model loaded in this conversation, in order."""
        return self._agent.loaded_names if self._agent is not None else []

    def cost(self, usage: Usage, model: str) -> str:
        """What some usage cost at the model's list price, as shown beside the tokens.

        Args:
            usage: Tokens of a cell or of the conversation.
            model: The model the requests named.

        Returns:
            E.g. ``≈ $0.012``, or ``cost unknown`` for a model no price table knows.
        """
        from nbagent.api.pricing import cost_text, estimate

        return cost_text(estimate(usage, model, self.prices))

    def server_tools(self) -> list[ServerTool]:
        """The server tools this session offers (``c.NbAgent.server_tools``), in order."""
        from nbagent.api.api_tools import ServerTool

        found = (self.registry.get(n) for n in self._server_tools if n in self.registry)
        return [t for t in found if isinstance(t, ServerTool)]

    def start_servers(self) -> Any:
        """Start the MCP servers of ``c.NbAgent.mcp_config`` (or of the file found).

        Its good entries start; its disabled and bad ones do not (the faults of the bad ones
        are in the configuration's ``problems``).

        Returns:
            The configuration started, or None when there is none.

        Raises:
            NbAgentError: The file is not a configuration (not JSON, no ``mcpServers``
                object): nothing of it started.
        """
        if self.mcp_manager is None:
            return None
        config = self.mcp_manager.start(self.settings.mcp_config or None, folder=self.root)
        self._mcp_servers = list(config.servers) if config is not None else []
        return config

    def close(self, timeout: float = 10.0) -> None:
        """Take everything of the session down (``%unload_ext nbagent``): the settings are no
        longer observed nor the shell's, the agent's workers, the MCP servers (no process is
        left behind), the channel, the live documents' connections and the log file are
        closed, the tools the session registered removed; ``Session.of(shell)`` is None again.

        The built-in tools still being built are waited for, and a change of ``mcp_config``
        still being applied (``timeout`` seconds at most), so that the manager closes what it
        started.
        """
        self.ready()
        if _sessions.get(self.shell) is self:
            del _sessions[self.shell]
        self.settings.unobserve(self._changed)
        if self._watch is not None:
            self._watch.stop()
        if self._restarting is not None:
            self._restarting.join(timeout)
        with self._lock:  # an agent being built (on the start-up thread) is built first
            self._closed = True
            agent = self._agent
        if agent is not None:
            agent.runner.close()
        self.registry.unregister_many(
            [
                *self._session_tools,
                *self._server_tools,
                *self.builtin,
                *(self._skills.names if self._skills is not None else ()),
            ]
        )
        drop_memory(self.registry)
        for name in self._overrides:
            self.registry.override(name, None)
        sandbox.use(sandbox.Sandbox())
        if self.mcp_manager is not None:
            self.mcp_manager.close()
        if self.live is not None:
            self.live.close()
        if self.frontend is not None:
            self.frontend.close()
        if self.log_file is not None:
            stop_writing(self.log_file)
        if self.shell is not None and self.settings in self.shell.configurables:
            self.shell.configurables.remove(self.settings)

    def _register_session_tools(self) -> list[str]:
        """Register the session's own tools (sub-agents, tasks, questions, plan mode, MCP
        resources), which reach the agent when they run, and name them."""
        tools = session_tools(lambda: self.agent, self.tasks, mcp_manager=self.mcp_manager)
        self.registry.register_many(tools, replace=True)
        return [t.name for t in tools]

    def _build_agent(self) -> Agent:
        """Make the agent from the settings."""
        from nbagent.jupyter.kernel_reminders import KernelChanges
        from nbagent.loop.agent import Agent

        settings = self.settings
        values = settings.agent_values()
        later = {parameter: values.pop(parameter) for parameter in SET_ONCE_BUILT}
        agent = Agent(
            registry=self.registry,
            policy=PermissionPolicy(
                settings.permission_mode,
                allow=settings.allow_rules,
                deny=settings.deny_rules,
                root=self.root,
            ),
            asker=self._asker,
            **values,
        )
        for parameter, value in later.items():
            set_parameter(agent, parameter, value)
        agent.reminders.append(KernelChanges(self.record))
        # setattr: the attribute is PermissionPolicy's own only in newer versions.
        setattr(agent.runner.policy, "sandboxed", sandbox.runs_sandboxed())  # noqa: B010
        return agent

    def _changed(self, change: Bunch) -> None:
        """Apply a setting that changed to what it configures (settings read at each cell,
        ``stream`` and ``verbose``, need nothing here)."""
        name = change["name"]
        if name in (*POLICY_SETTINGS, *SANDBOX_SETTINGS) and self._refused(change):
            return
        parameter = self.settings.trait_metadata(name, "agent")
        if parameter is not None:
            with self._lock:  # an agent being built meanwhile is built first, then changed
                if self._agent is not None:
                    set_parameter(self._agent, parameter, self.settings.agent_value(parameter))
        elif name in POLICY_SETTINGS:
            self._apply_policy(name)
        elif name in ("loaded_tools", "deferred_tools"):
            self._apply_overrides()
        elif name == "mcp_config":
            self._restart_servers()
        elif name == "prices":
            self._prices = None  # made again from the new table at its next use
        elif name == "server_tools" or name in _server_tool_options():
            self._apply_server_tools()
        elif name in SANDBOX_SETTINGS:
            self._apply_sandbox()
        elif name in ("max_run_seconds", "continue_after_run"):
            apply_run_settings(self.runs, self.settings)

    def _refused(self, change: Bunch) -> bool:
        """Whether a change of a permission or sandbox setting is refused (and undone): while
        an ``%%agent`` cell runs, only code the agent runs can make it (a cell it runs with
        NotebookRun, RunCode), and the agent must not raise its own permissions."""
        if self._reverting:
            return True
        if not self.agent_running:
            return False
        self._reverting = True
        try:
            self.settings.set_trait(change["name"], change["old"])
        finally:
            self._reverting = False
        print(  # in the output of the cell the agent ran, and so in what the model reads
            f"nbagent: NbAgent.{change['name']} was not changed: code an agent cell runs cannot "
            "change the permission settings. Change them from a cell of your own.",
            file=sys.stderr,
        )
        return True

    def _apply_policy(self, name: str) -> None:
        """Set the permission mode, or the rules, of the settings on the agent's policy."""
        with self._lock:
            policy = self._agent.runner.policy if self._agent is not None else None
            if not isinstance(policy, PermissionPolicy):
                return
            if name == "permission_mode":
                policy.mode = self.settings.permission_mode
            else:
                policy.configure(self.settings.allow_rules, self.settings.deny_rules)

    def _apply_overrides(self) -> None:
        """Make the registry's loaded and deferred overrides those of the settings."""
        wanted = {name: False for name in self.settings.loaded_tools}
        wanted.update((name, True) for name in self.settings.deferred_tools)
        for name in set(self._overrides) - set(wanted):
            self.registry.override(name, None)
        for name, deferred in wanted.items():
            self.registry.override(name, deferred)
        self._overrides = wanted

    def _apply_server_tools(self) -> None:
        """Register the server tools of the settings, with their options; drop the others.

        A tool whose definition did not change is left as it is (no registry change).
        """
        if not self.settings.server_tools and not self._server_tools:
            return  # none wanted, none registered (the API's modules need not be imported)
        from nbagent.api.api_tools import server_tool

        wanted = {
            name: server_tool(name, getattr(self.settings, name))
            for name in self.settings.server_tools
        }
        self.registry.unregister_many(n for n in self._server_tools if n not in wanted)
        changed = [
            tool
            for name, tool in wanted.items()
            if name not in self.registry
            or self.registry.get(name).definition() != tool.definition()
        ]
        if changed:
            self.registry.register_many(changed, replace=True)
        self._server_tools = list(wanted)

    def _apply_sandbox(self) -> None:
        """Make Bash's sandbox that of the settings, and the policy know whether it runs.

        A sandbox turned on that cannot run here is said at once, with what to do: Bash then
        refuses every command rather than run it outside the sandbox.
        """
        settings = self.settings
        sandbox.use(
            sandbox.Sandbox(
                enabled=settings.sandbox,
                network=settings.sandbox_network,
                write_paths=tuple(
                    Path(p).expanduser().resolve() for p in settings.sandbox_write_paths
                ),
            )
        )
        why = sandbox.problem() if settings.sandbox else None
        if why is not None:
            print(
                "c.NbAgent.sandbox is on but cannot run here; Bash refuses every command "
                f"until it can. {why}",
                file=sys.stderr,
            )
        with self._lock:
            if self._agent is not None:
                runs = settings.sandbox and why is None
                setattr(self._agent.runner.policy, "sandboxed", runs)  # noqa: B010

    def _restart_servers(self) -> None:
        """Stop the servers the previous configuration started and start the new one's.

        Stopping a server can take seconds, so it happens on a thread of its own: the cell
        that changed the setting returns at once, and ``%mcp list`` shows the servers come.
        """
        if self.mcp_manager is None:
            return
        old, self._mcp_servers = self._mcp_servers, []

        def restart() -> None:
            for name in old:
                try:
                    self.mcp_manager.remove(name)
                except Exception:  # noqa: BLE001 - a server already gone is no reason to stop
                    logger.warning("MCP server %s was not removed", name, exc_info=True)
            try:
                self.start_servers()
                for name, why in self.mcp_manager.not_started().items():
                    if why != "disabled":
                        self.mcp_manager.notices.add(
                            f"MCP server {code_markdown(name)} not started: {plain_markdown(why)}"
                        )
            except Exception as exc:  # noqa: BLE001 - told at the next %%agent or %mcp
                logger.warning("MCP configuration not used: %s", exc)
                self.mcp_manager.notices.add(
                    f"**MCP configuration not used**: {plain_markdown(str(exc))} None of its "
                    "servers started: fix "
                    "it, then set `c.NbAgent.mcp_config` again."
                )

        previous = self._restarting

        def after_previous() -> None:
            if previous is not None:
                previous.join()
            restart()

        self._restarting = threading.Thread(
            target=after_previous, name="nbagent-mcp-config", daemon=True
        )
        self._restarting.start()


def _server_tool_options() -> tuple[str, ...]:
    """The settings holding a server tool's options (``web_search``), named after it."""
    from nbagent.api.api_tools import SERVER_TOOLS

    return tuple(SERVER_TOOLS)


def ask_on_stdin(request: PermissionRequested) -> PermissionAnswer | None:
    """Ask about a tool call on the kernel's stdin, as long as the person takes.

    The card above the prompt shows the call (the command, the path); the prompt names it
    again in one line, after the tool's own question when it asks one (NotebookRun and
    RunCode show the code, NotebookEdit the new cell's code or the diff of the cell it
    changes; without the fences the card highlights them by: :mod:`nbagent.render.codeview`), and
    takes ``y``, ``n`` or (when a rule can be offered) ``a``. The
    environment's secrets are redacted before it is cut to one line
    (:func:`nbagent.core.secrets.redact`), and tokens found by their shape within one line; a
    block over several lines (a crafted "private key") stays shown, so that no line of what
    the person approves is hidden.
    It is asked on the cell's thread, one question at a time (:func:`nbagent.loop.cellthread.ask`).

    Args:
        request: The call waiting for an answer.

    Returns:
        The answer; None when no stdin is available.

    Raises:
        Cancelled: The question was withdrawn (its call was stopped or abandoned).
    """
    choices = ANSWERS | ({"a": "always", "always": "always"} if request.always else {})
    always = (
        f", a = always (allow {redact(request.always, shapes=ONE_LINE)})" if request.always else ""
    )
    what = one_line(redact(request.request, shapes=ONE_LINE), 80)
    reason = plain_text(redact(request.reason, shapes=ONE_LINE)).rstrip()
    asked = f"{reason}\n\n" if reason else ""
    prompt = show_controls(f"{asked}Allow {request.name}: {what}?  y = yes, n = no{always} ")
    try:
        while True:
            typed = cellthread.ask(prompt).strip().lower()
            if typed in choices:
                return choices[typed]
            prompt = f"Please answer y or n{' or a' if request.always else ''}: "
    except (StdinNotImplementedError, EOFError, OSError):  # no stdin, or one closed or captured
        return None


def set_parameter(agent: Agent, parameter: str, value: Any) -> None:
    """Set one of the agent's parameters on an agent built: by :data:`SETTERS`, or else as
    the agent's attribute of the parameter's name.

    Args:
        agent: The agent.
        parameter: The parameter, as a setting's ``agent`` tag names it.
        value: Its value (:meth:`~nbagent.jupyter.config.NbAgent.agent_value`).
    """
    setter = SETTERS.get(parameter)
    if setter is None:
        setattr(agent, parameter, value)
    else:
        setter(agent, value)
