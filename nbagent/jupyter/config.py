"""``c.NbAgent``: the traitlets configuration of the magics.

Set options in ``ipython_kernel_config.py`` (``c.NbAgent.model = "..."``) or in a notebook
(``%config NbAgent.model = "..."``). Every option applies from the next cell on, in the
conversation going on (:class:`~nbagent.jupyter.session.Session` observes them); a bad value is
refused when it is set, with what to write instead. ``%agent config`` shows the values in
force.

A setting that configures the agent names, in its trait's ``agent`` tag, the keyword
parameter of :class:`~nbagent.loop.agent.Agent` it sets: building the agent and applying a
changed setting both read the tag (:meth:`NbAgent.agent_values`), so adding such a setting is
one trait. A parameter made from its settings otherwise than as their value is in
:data:`AGENT_VALUES`. The other settings configure the session itself
(:class:`~nbagent.jupyter.session.Session`) or are read at each cell (``stream``,
``verbose``).
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, validate
from traitlets.config import Config, Configurable

from nbagent.api.quoted import PRICES_DATE, PRICES_SOURCE, WEB_SEARCH_EXAMPLE
from nbagent.catalogue.rankers import best_available
from nbagent.catalogue.rankers.embedder import require_packages
from nbagent.catalogue.toolsearch import RANKERS
from nbagent.core.errors import ConfigurationError
from nbagent.loop.execution import DEFAULT_CALL_TIMEOUT
from nbagent.loop.options import DEFAULT_MODEL, DEFAULT_SYSTEM, EFFORTS, MODES, THINKING_MODES
from nbagent.policy.modes import MODES as PERMISSION_MODES
from nbagent.policy.permission_rules import Rule
from nbagent.tools.notebook.run_queue import MAX_RUN_SECONDS

PARSERS: dict[str, tuple[str, str]] = {
    "context_windows": ("nbagent.loop.context_window", "parse_windows"),
    "prices": ("nbagent.api.pricing", "parse_prices"),
    "server_tools": ("nbagent.api.api_tools", "check_names"),
    "web_search": ("nbagent.api.api_tools", "web_search_options"),
    "effort": ("nbagent.loop.reasoning", "check_effort"),
}
"""The options checked by a parser, which says what is wrong (a ConfigurationError): its
module and name, imported when a value is checked (:func:`parser`), so that ``%load_ext``
does not import the agent loop for them."""

AGENT_VALUES: dict[str, Callable[[NbAgent], Any]] = {
    "system": lambda settings: settings.system_prompt or None,
    "preload_budget": lambda settings: settings.preload_budget if settings.preload else None,
    "usage_store": lambda settings: _usage_store(settings),
    "context_windows": lambda settings: parser("context_windows")(settings.context_windows),
    "context_editing": lambda settings: _context_editing(settings),
    "effort": lambda settings: settings.effort or None,
    "cell_budget": lambda settings: settings.cell_budget or None,
}
"""The Agent parameters whose value is not their one setting's own value, by parameter:
how the settings tagged with it make it."""


class NbAgent(Configurable):
    """Options of the ``%%agent`` magics (``c.NbAgent.*``)."""

    model = Unicode(DEFAULT_MODEL, help="The Claude model the agent uses.").tag(
        config=True, agent="model"
    )
    max_turns = Int(25, help="Model requests per %%agent cell at most.").tag(
        config=True, agent="max_turns"
    )
    max_tokens = Int(8192, help="The output limit of one model response.").tag(
        config=True, agent="max_tokens"
    )
    mode = Enum(
        list(MODES),
        default_value="native",
        help="How deferred tools reach the model: native (tool_reference), client (the "
        "client sends loaded definitions), server (the API's own tool search) or off "
        "(everything loaded).",
    ).tag(config=True, agent="mode")
    ranker = Unicode(
        best_available(),
        help=f"The ToolSearch ranker: {', '.join(sorted(RANKERS))}; by default hybrid when the "
        "semantic extra and the MiniLM weights are installed, else keyword.",
    )
    ranker.tag(config=True, agent="ranker")
    system_prompt = Unicode(DEFAULT_SYSTEM, help="The agent's system prompt.").tag(
        config=True, agent="system"
    )
    loaded_tools = List(
        Unicode(), help="Tools always sent in full, whatever their flags (names)."
    ).tag(config=True)
    deferred_tools = List(
        Unicode(), help="Tools always deferred, whatever their flags (names)."
    ).tag(config=True)
    announcement_style = Enum(
        ["plain", "compact"],
        default_value="plain",
        help="How deferred-tool names are announced: one a line, or grouped by MCP server.",
    ).tag(config=True, agent="announcement_style")
    permission_mode = Enum(
        list(PERMISSION_MODES),
        default_value="default",
        help="Which tool calls run without asking (default, acceptEdits, plan, bypassPermissions).",
    ).tag(config=True)
    allow_rules = List(
        Unicode(), help="Permission rules that allow calls, e.g. 'Bash(git status:*)'."
    ).tag(config=True)
    deny_rules = List(
        Unicode(), help="Permission rules that refuse calls (they win over allow rules)."
    ).tag(config=True)
    mcp_config = Unicode(
        "",
        help="Path of an MCP config file ({'mcpServers': ...}); by default .mcp.json in the "
        "notebook's folder, then ~/.nbagent/mcp.json.",
    ).tag(config=True)
    stream = Bool(True, help="Show the answer as it streams in.").tag(config=True)
    verbose = Bool(
        False,
        help="Show every call in full (input, duration, permission decision) and the "
        "deferred tools announced at the start; %%agent --verbose for one cell.",
    ).tag(config=True)
    call_timeout = Float(
        DEFAULT_CALL_TIMEOUT,
        help="Seconds a tool call may run before the model is told it timed out (the time a "
        "person takes to answer a permission question does not count).",
    ).tag(config=True, agent="call_timeout")
    preload = Bool(
        False,
        help="Before a conversation's first request, load the deferred tools the "
        "prompt clearly needs (a server it names, a very confident search hit).",
    ).tag(config=True, agent="preload_budget")
    preload_budget = Int(3000, help="Tokens of definitions preloading may add.").tag(
        config=True, agent="preload_budget"
    )
    promotion = Bool(
        False,
        help="Count calls of deferred tools per user and load the ones used often "
        "from the start of each conversation.",
    ).tag(config=True, agent="usage_store")
    usage_db = Unicode(
        "", help="The SQLite file of tool use counts; ~/.nbagent/usage.sqlite3 by default."
    ).tag(config=True, agent="usage_store")

    prices = Dict(
        help="Your price table, over the built-in one (list prices read on "
        f"{PRICES_DATE} from {PRICES_SOURCE}): dollars per million tokens by model id, "
        'e.g. {"my-model": {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}}.',
    ).tag(config=True)

    compaction = Enum(
        ["server", "client", "off"],
        default_value="server",
        help="How a long conversation is kept inside the context window: server (the API "
        "compacts it, beta compact-2026-01-12; a client summary where the endpoint has none), "
        "client (nbagent asks the model for a summary) or off.",
    ).tag(config=True, agent="compaction")
    compact_threshold = Int(
        150_000, help="Input tokens of a request from which the conversation is compacted."
    ).tag(config=True, agent="compact_threshold")
    context_windows = Dict(
        help="Context windows in tokens by model id, over the built-in table, "
        'e.g. {"my-model": 500000}.',
    ).tag(config=True, agent="context_windows")
    context_editing = Bool(
        True,
        help="Clear old tool results from what the model reads once a request passes "
        "clear_trigger tokens (the API's context editing, beta context-management-2025-06-27; "
        "nbagent's own where the endpoint lacks it). The conversation keeps them.",
    ).tag(config=True, agent="context_editing")
    clear_trigger = Int(
        60_000, help="Input tokens of a request from which old tool results are cleared."
    ).tag(config=True, agent="context_editing")
    clear_keep = Int(4, help="The most recent tool results never cleared.").tag(
        config=True, agent="context_editing"
    )
    clear_at_least = Int(
        10_000,
        help="Clear only when this many tokens are freed (so that the prompt cache is not "
        "broken for little); 0 for any amount.",
    ).tag(config=True, agent="context_editing")
    clear_exclude = List(
        Unicode(), help="Tools whose results are never cleared (ToolSearch's never are)."
    ).tag(config=True, agent="context_editing")

    effort = Unicode(
        "",
        help=f"How much effort the model puts into an answer: {', '.join(EFFORTS)}, or '' for "
        "the model's default (sent as output_config.effort to the models that take it); "
        "%%agent --effort for one cell.",
    ).tag(config=True, agent="effort")
    thinking = Enum(
        list(THINKING_MODES),
        default_value="adaptive",
        help="adaptive: the model thinks when it helps, on the models that can (its summary "
        "is shown in the card); off: never.",
    ).tag(config=True, agent="thinking")
    memory = Bool(
        False,
        help="Give the agent the API's memory tool: notes it keeps for this project across "
        "conversations, in a folder of its own under ~/.nbagent/memory (%agent memory lists "
        "them); it can reach nothing else.",
    ).tag(config=True)
    cell_budget = Float(
        0.0,
        help="Dollars one %%agent cell may spend at list prices: the run stops at the first "
        "turn boundary past it and the next cell can go on; 0 for no limit; %%agent --budget "
        "for one cell.",
    ).tag(config=True, agent="cell_budget")

    @validate("cell_budget")
    def _budget(self, proposal: dict[str, Any]) -> float:
        """Refuse a negative budget."""
        if proposal["value"] < 0:
            raise TraitError("NbAgent.cell_budget must be 0 (no limit) or more dollars.")
        return proposal["value"]

    @validate("clear_trigger", "clear_keep", "clear_at_least")
    def _clearing_counts(self, proposal: dict[str, Any]) -> int:
        """Refuse a negative count, or a trigger below 1."""
        least = 1 if proposal["trait"].name == "clear_trigger" else 0
        if proposal["value"] < least:
            raise TraitError(f"NbAgent.{proposal['trait'].name} must be at least {least}.")
        return proposal["value"]

    server_tools = List(
        Unicode(),
        help='Server tools the API runs itself, deferred like other tools: ["web_search"] '
        "(each search billed by the API, $10 per 1,000); none by default.",
    ).tag(config=True)
    web_search = Dict(
        help='The options of web search (with server_tools = ["web_search"]): max_uses '
        "(searches per request), allowed_domains or blocked_domains, user_location, e.g. "
        f"{WEB_SEARCH_EXAMPLE}.",
    ).tag(config=True)

    sandbox = Bool(
        False,
        help="Run every Bash command in a bubblewrap sandbox (Linux): the filesystem read-only "
        "but the working folder, credentials and the kernel's environment hidden; sandboxed "
        "commands run without asking. A sandbox that cannot run here refuses commands.",
    ).tag(config=True)
    review = Bool(
        False,
        help="Review mode: each notebook and file edit is made, then kept only once accepted "
        "(y) or undone (n, and the model is told why); %%agent --review for one cell.",
    ).tag(config=True)
    checkpoints = Int(
        50,
        help="Checkpoints kept per notebook for %agent undo, rewind and the Undo buttons (what "
        "each %%agent cell changed in notebook cells and files, kept beside its saved "
        "conversations); 0 records none.",
    ).tag(config=True)
    sandbox_network = Bool(
        False, help="Let sandboxed Bash commands use the network (off by default)."
    ).tag(config=True)
    sandbox_write_paths = List(
        Unicode(),
        help="Folders sandboxed Bash commands may write besides the working folder "
        "(absolute or ~ paths).",
    ).tag(config=True)

    max_run_seconds = Float(
        MAX_RUN_SECONDS,
        help="The longest time limit the agent may give a NotebookRun (300 s when it names "
        "none); a longer run is queued for after its turn (NotebookRun when='after_turn') and "
        "runs as a normal cell.",
    ).tag(config=True)
    continue_after_run = Bool(
        True,
        help="After the runs the agent queued for after its turn, go on with the conversation "
        "in a new %%agent cell below (never after an interrupt).",
    ).tag(config=True)

    def agent_values(self) -> dict[str, Any]:
        """The agent's parameters the settings give (those tagged ``agent``), by name.

        Returns:
            Each parameter's value, made by :data:`AGENT_VALUES` or else the value of the
            one setting tagged with it.
        """
        return {parameter: self.agent_value(parameter) for parameter in _agent_tags(type(self))}

    def agent_value(self, parameter: str) -> Any:
        """The value the settings give one of the agent's parameters.

        Args:
            parameter: The parameter, as a setting's ``agent`` tag names it.

        Returns:
            Its value.
        """
        if parameter in AGENT_VALUES:
            return AGENT_VALUES[parameter](self)
        (name,) = _agent_tags(type(self))[parameter]
        return getattr(self, name)

    def _load_config(
        self, cfg: Config, section_names: list[str] | None = None, traits: Any = None
    ) -> None:
        """Load the options one by one: a bad value is said, by name, and skipped.

        ``%config`` keeps a value it set in the shell's configuration even when it was
        refused, and the next ``%load_ext`` reads it again: one bad option there must not stop
        nbagent from loading, nor take the other options with it.
        """
        section = self._find_my_config(cfg)
        for name in list(section.keys()):
            one = Config({type(self).__name__: {name: section[name]}})
            try:
                super()._load_config(one, section_names, traits)
            except TraitError as exc:
                print(
                    f"c.NbAgent.{name} not used: {exc} (it stays {getattr(self, name)!r})",
                    file=sys.stderr,
                )

    @validate("ranker")
    def _known_ranker(self, proposal: dict[str, Any]) -> str:
        """Refuse a ranker nobody made, or one whose packages are not installed."""
        if proposal["value"] not in RANKERS:
            raise TraitError(
                f"Unknown ranker {proposal['value']!r}; choose one of: "
                f"{', '.join(sorted(RANKERS))}."
            )
        try:
            require_packages(proposal["value"])
        except ConfigurationError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    @validate("max_turns", "max_tokens", "compact_threshold")
    def _at_least_one(self, proposal: dict[str, Any]) -> int:
        """Refuse a limit below 1."""
        if proposal["value"] < 1:
            raise TraitError(f"{proposal['trait'].name} must be at least 1.")
        return proposal["value"]

    @validate("checkpoints")
    def _not_negative(self, proposal: Any) -> int:
        """Refuse a negative count of checkpoints."""
        if proposal["value"] < 0:
            raise TraitError(
                f"NbAgent.{proposal['trait'].name} must be 0 or more (0 records no checkpoint)."
            )
        return int(proposal["value"])

    @validate("call_timeout", "preload_budget", "max_run_seconds")
    def _positive(self, proposal: dict[str, Any]) -> Any:
        """Refuse a time or a budget that is not positive."""
        if proposal["value"] <= 0:
            raise TraitError(f"{proposal['trait'].name} must be more than 0.")
        return proposal["value"]

    @validate("allow_rules", "deny_rules")
    def _rules(self, proposal: dict[str, Any]) -> list[str]:
        """Refuse a rule that does not parse, naming it."""
        for text in proposal["value"]:
            try:
                Rule(text)
            except ConfigurationError as exc:
                raise TraitError(str(exc)) from None
        return proposal["value"]

    @validate(*PARSERS)
    def _parsed(self, proposal: dict[str, Any]) -> Any:
        """Refuse a value its parser refuses (a price or window table naming the model and
        the field, an unknown server tool, a web search option), with the parser's message."""
        try:
            parser(proposal["trait"].name)(proposal["value"])
        except ConfigurationError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    @validate("sandbox_write_paths")
    def _existing_folders(self, proposal: dict[str, Any]) -> list[str]:
        """Refuse a writable path that is relative or not an existing folder."""
        for value in proposal["value"]:
            path = Path(value).expanduser()
            if not path.is_absolute() or not path.is_dir():
                raise TraitError(
                    f"sandbox_write_paths: {value!r} is not an existing folder given by an "
                    "absolute or ~ path."
                )
        return proposal["value"]

    @validate("mcp_config")
    def _existing_file(self, proposal: dict[str, Any]) -> str:
        """Refuse a configuration file that is not there."""
        value = proposal["value"]
        if value and not Path(value).expanduser().is_file():
            raise TraitError(
                f"No MCP configuration file at {value!r}; give the path of a JSON file "
                'holding {"mcpServers": {...}}, or "" for .mcp.json beside the notebook.'
            )
        return value


def parser(name: str) -> Callable[[Any], Any]:
    """The parser of an option of :data:`PARSERS`, its module imported now.

    Args:
        name: The option.

    Returns:
        The function that checks (and reads) its value.
    """
    module, function = PARSERS[name]
    found: Callable[[Any], Any] = getattr(importlib.import_module(module), function)
    return found


def _context_editing(settings: NbAgent) -> Any:
    """How old tool results are cleared (a
    :class:`~nbagent.loop.context_editing.ContextEditing`), or None when that is off."""
    if not settings.context_editing:
        return None
    from nbagent.loop.context_editing import ContextEditing

    return ContextEditing(
        trigger=settings.clear_trigger,
        keep=settings.clear_keep,
        clear_at_least=settings.clear_at_least,
        exclude=tuple(settings.clear_exclude),
    )


def _usage_store(settings: NbAgent) -> Any:
    """The usage store when promotion is on, else None."""
    if not settings.promotion:
        return None
    from nbagent.catalogue.promotion import DEFAULT_PATH, UsageStore

    return UsageStore(Path(settings.usage_db).expanduser() if settings.usage_db else DEFAULT_PATH)


@functools.cache
def _agent_tags(settings: type[Configurable]) -> dict[str, tuple[str, ...]]:
    """The settings tagged with each of the agent's parameters, in the order they are
    declared (asked at every cell: ``traits()`` walks the whole class)."""
    tags: dict[str, tuple[str, ...]] = {}
    for name, trait in settings.class_traits(agent=lambda p: p is not None).items():
        parameter = trait.metadata["agent"]
        tags[parameter] = (*tags.get(parameter, ()), name)
    return tags
