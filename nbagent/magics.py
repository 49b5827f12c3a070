"""The IPython magics: ``%%agent``, ``%agent``, ``%tools`` and ``%tool_search``.

Type ``%%agent?`` (or ``%tools?``, ``%tool_search?``) in a notebook for the options.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from IPython.core.error import StdinNotImplementedError, UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from nbagent.agent import Agent, AgentResult
from nbagent.config import NbAgent
from nbagent.display import CellTranscript, Markdown, table_cell
from nbagent.errors import ModelAPIError, NbAgentError
from nbagent.frontend.channel import FrontEndChannel
from nbagent.orchestration import TaskBoard, session_tools
from nbagent.permissions import DEFAULT_DENY, PermissionPolicy
from nbagent.registry import ToolRegistry
from nbagent.request import MODES
from nbagent.tool import Tool
from nbagent.transcript import Search, Tasks, item_markdown, plural, tasks_markdown, usage_line

COMMANDS = ("status", "reset", "config", "history", "allow", "deny")
"""The subcommands of the ``%agent`` line magic."""


@magics_class
class AgentMagics(Magics):
    """The nbagent magics, bound to one shell, one configuration and one registry.

    Args:
        shell: The IPython shell.
        settings: The ``c.NbAgent`` configuration.
        registry: The tools.
        mcp_manager: The MCP servers' manager, for the session tools that reach it.
        frontend: The channel to nbagent's JupyterLab extension, opened anew at each
            ``%%agent`` cell (so a reloaded page or a new tab answers too).
    """

    def __init__(
        self,
        shell: Any,
        settings: NbAgent,
        registry: ToolRegistry,
        mcp_manager: Any = None,
        frontend: FrontEndChannel | None = None,
    ) -> None:
        super().__init__(shell)
        self.settings = settings
        self.registry = registry
        self.mcp_manager = mcp_manager
        self.frontend = frontend
        self.tasks = TaskBoard()
        self._agent: Agent | None = None
        self._session_tools: list[str] = []
        self.wait_for: Callable[[], None] = lambda: None
        """Waits until the extension's background set-up (the built-in tools) is done."""

    @magic_arguments()
    @argument(
        "command",
        nargs="?",
        choices=COMMANDS,
        help="%agent only: status, reset, config, history, allow RULE or deny RULE.",
    )
    @argument(
        "rule",
        nargs="*",
        help="%agent allow|deny only: a permission rule, e.g. 'Bash(git status:*)', "
        "'Read(./data/**)', 'mcp__github__*'.",
    )
    @argument("--model", help="The model for this cell (default: c.NbAgent.model).")
    @argument("--max-turns", type=int, help="Model requests for this cell at most.")
    @argument("--mode", choices=MODES, help="How deferred tools reach the model.")
    @argument("--new", action="store_true", help="Start a new conversation.")
    @argument("-o", "--output", metavar="VAR", help="Store the AgentResult in this variable.")
    @argument("--quiet", action="store_true", help="Show only the final answer.")
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Run the agent on the cell, or manage the conversation.

        ``%%agent``: the cell is the prompt; ``{name}`` is replaced by the value of a
        notebook variable (write ``{{`` and ``}}`` for literal braces). The conversation
        goes on across cells until ``--new`` or ``%agent reset``.

        ``%agent status|reset|config|history``: what is loaded, deferred and announced,
        and the tokens used; forget the conversation; the settings; the conversation in
        brief. ``%agent allow RULE`` and ``%agent deny RULE`` add a permission rule.
        """
        self.wait_for()
        args = parse_argstring(self.agent, line)
        if cell is None:
            if args.command is None:
                raise UsageError(
                    f"Use %%agent with a prompt in the cell, or %agent {'|'.join(COMMANDS)}."
                )
            if args.command in ("allow", "deny"):
                self._add_rule(args.command, " ".join(args.rule))
            elif args.rule:
                raise UsageError(f"%agent {args.command} takes no argument.")
            else:
                getattr(self, f"_{args.command}")()
            return
        if args.command is not None:
            raise UsageError(f"'{args.command}' is a %agent command; %%agent takes a prompt.")
        prompt = expand_prompt(cell, self.shell.user_ns)
        if args.max_turns is not None and args.max_turns < 1:
            raise UsageError("--max-turns must be at least 1.")
        agent = self._agent_for(args)
        if self.frontend is not None:
            self.frontend.open()
        try:
            result = self._run(agent, prompt, args.quiet)
        finally:  # --model, --max-turns and --mode are this cell's only
            agent.model, agent.max_turns = self.settings.model, self.settings.max_turns
            agent.mode = self.settings.mode
        if args.output:
            self.shell.user_ns[args.output] = result

    @magic_arguments()
    @argument(
        "pattern",
        nargs="?",
        default="*",
        help="A tool name (shows its card) or a glob pattern such as 'mcp__github__*'.",
    )
    @line_magic
    def tools(self, line: str) -> None:
        """Show the registry as a table, or one tool's card with its schema."""
        self.wait_for()
        args = parse_argstring(self.tools, line)
        if args.pattern in self.registry:
            display(
                Markdown(
                    tool_card(
                        self.registry.get(args.pattern),
                        self.registry.is_deferred(self.registry.get(args.pattern)),
                    )
                )
            )
            return
        matches = [
            t
            for t in self.registry.tools()
            if fnmatch.fnmatchcase(t.name.lower(), args.pattern.lower())
        ]
        if not matches:
            raise UsageError(f"No tool matches {args.pattern!r}; %tools lists them all.")
        display(Markdown(tools_table(matches, self.registry)))

    @magic_arguments()
    @argument("query", nargs="+", help="The query, exactly as the model would send it.")
    @argument("-n", "--max-results", type=int, default=5, help="How many hits at most.")
    @line_magic
    def tool_search(self, line: str) -> None:
        """Run ToolSearch as the model would and show the ranked hits and why each matched."""
        self.wait_for()
        args = parse_argstring(self.tool_search, line)
        query = " ".join(args.query).strip("'\"")
        try:
            hits = self.agent_instance.search.search(query, args.max_results)
        except NbAgentError as exc:
            raise UsageError(str(exc)) from None
        search = Search(query, [(h.name, h.score, h.reasons) for h in hits], loaded=None)
        display(Markdown(item_markdown(search)))

    @property
    def agent_instance(self) -> Agent:
        """The kernel's agent, built on first use from the settings."""
        if self._agent is None:
            settings = self.settings
            for name in settings.loaded_tools:
                self.registry.override(name, deferred=False)
            for name in settings.deferred_tools:
                self.registry.override(name, deferred=True)
            policy = PermissionPolicy(
                settings.permission_mode,
                allow=settings.allow_rules,
                deny=settings.deny_rules,
                root=Path.cwd(),
            )
            self._agent = Agent(
                registry=self.registry,
                policy=policy,
                model=settings.model,
                system=settings.system_prompt or None,
                max_turns=settings.max_turns,
                mode=settings.mode,
                max_tokens=settings.max_tokens,
                ranker=settings.ranker,
                asker=ask_on_stdin,
                announcement_style=settings.announcement_style,
                preload_budget=settings.preload_budget if settings.preload else None,
                usage_store=_usage_store(settings),
            )
            tools = session_tools(self._agent, self.tasks, mcp_manager=self.mcp_manager)
            self.registry.register_many(tools, replace=True)
            self._session_tools = [t.name for t in tools]
        return self._agent

    def close(self) -> None:
        """Release what the magics hold: the agent's worker threads, its session tools."""
        if self._agent is not None:
            self._agent.runner.close()
        self.registry.unregister_many(self._session_tools)

    def _agent_for(self, args: Any) -> Agent:
        """The agent, reset or adjusted for this cell's options."""
        agent = self.agent_instance
        if args.new:
            agent.reset()
        agent.model = args.model or self.settings.model
        agent.max_turns = args.max_turns or self.settings.max_turns
        agent.mode = args.mode or self.settings.mode
        policy = agent.runner.policy
        if isinstance(policy, PermissionPolicy):
            policy.mode = self.settings.permission_mode
            if policy.mode == "bypassPermissions":
                display(
                    Markdown(
                        "> **Warning**: permission mode bypassPermissions: every tool "
                        "call runs without asking (credentials stay denied)."
                    )
                )
        return agent

    def _run(self, agent: Agent, prompt: str, quiet: bool) -> AgentResult:
        cost = self.registry.context_cost() if agent.mode != "off" else None
        transcript = CellTranscript(
            quiet=quiet,
            stream=self.settings.stream,
            saved_tokens=cost.all_loaded - cost.deferred if cost else None,
        )
        try:
            return agent.run(prompt, on_event=transcript)
        except ModelAPIError as exc:
            if exc.status == 404:
                raise UsageError(f"Unknown model {agent.model!r}: {exc}") from None
            raise UsageError(str(exc)) from None

    def _status(self) -> None:
        agent = self.agent_instance
        deferred = self.registry.deferred()
        lines = [
            f"**model** `{agent.model}` · **mode** `{agent.mode}` · **ranker** "
            f"`{agent.search.ranker.name}`",
            f"**tools**: {len(self.registry)} registered, {len(self.registry.loaded())} loaded, "
            f"{len(deferred)} deferred",
            f"**loaded by ToolSearch**: {_names(agent.loaded_names) or 'none'}",
            f"**announced to the model**: {plural(len(agent.announced_names()), 'name')}",
            f"**conversation**: {len(agent.messages)} messages · {usage_line(agent.usage)}",
            f"**permissions**: {_permissions(agent.runner.policy)}",
        ]
        if agent.usage_store is not None:
            used = ", ".join(f"`{u.tool}` ({u.uses})" for u in agent.usage_store.usage()[:10])
            lines.append(f"**usage** (promotion on): {used or 'nothing counted yet'}")
        if self.tasks.snapshot():
            lines.append(tasks_markdown(Tasks(self.tasks.snapshot())).replace("\n", "  \n"))
        display(Markdown("  \n".join(lines)))

    def _add_rule(self, behavior: str, text: str) -> None:
        policy = self.agent_instance.runner.policy
        if not text:
            raise UsageError(
                f"%agent {behavior} needs a rule, e.g. %agent {behavior} Bash(git status:*)"
            )
        try:
            rule = policy.add(behavior, text)  # type: ignore[union-attr]
        except NbAgentError as exc:
            raise UsageError(str(exc)) from None
        display(Markdown(f"{behavior.capitalize()} rule added: `{rule.text}`"))

    def _reset(self) -> None:
        self.agent_instance.reset()
        self.tasks.clear()
        display(Markdown("The conversation was reset."))

    def _config(self) -> None:
        rows = "\n".join(
            f"| `{name}` | `{getattr(self.settings, name)!r}` | {trait.help.splitlines()[0]} |"
            for name, trait in sorted(self.settings.traits(config=True).items())
        )
        display(Markdown(f"| c.NbAgent | value | |\n|---|---|---|\n{rows}"))

    def _history(self) -> None:
        lines = [
            f"{i}. **{m['role']}**: {summarise_content(m['content'])}"
            for i, m in enumerate(self.agent_instance.messages, 1)
        ]
        display(Markdown("\n".join(lines) or "No conversation yet."))


def expand_prompt(cell: str, namespace: dict[str, Any]) -> str:
    """Fill ``{name}`` from the notebook's variables.

    Args:
        cell: The cell's text.
        namespace: The user namespace.

    Returns:
        The prompt.

    Raises:
        UsageError: The cell is empty, names an unknown variable, or has a lone brace.
    """
    if not cell.strip():
        raise UsageError("The cell is empty: write the prompt below %%agent.")
    try:
        return cell.format_map(namespace).strip()
    except KeyError as exc:
        raise UsageError(
            f"{{{exc.args[0]}}} in the prompt is not a notebook variable; write "
            "{{ and }} for literal braces."
        ) from None
    except (ValueError, IndexError, AttributeError) as exc:
        raise UsageError(
            f"The prompt's braces do not parse ({exc}); write {{{{ and }}}} for literal braces."
        ) from None


def ask_on_stdin(tool: Tool, tool_input: Any, question: str) -> bool | None:
    """Ask the user about a tool call on the kernel's stdin (works while the cell is busy).

    Args:
        tool: The tool called.
        tool_input: Its input.
        question: Why the call needs approval.

    Returns:
        Whether the user approved; None when no stdin is available.
    """
    brief = json.dumps(tool_input, ensure_ascii=False)[:200]
    prompt = f"{question + ' ' if question else ''}Allow {tool.name}({brief})? [y/N] "
    try:
        return input(prompt).strip().lower() in ("y", "yes")
    except (StdinNotImplementedError, EOFError):
        return None


def tools_table(tools: list[Tool], registry: ToolRegistry) -> str:
    """Render tools as a Markdown table.

    Args:
        tools: The tools.
        registry: Their registry (for deferral).

    Returns:
        The table.
    """
    rows = "\n".join(
        f"| `{t.name}` | {f'mcp:{t.server}' if t.is_mcp else 'python'} | "
        f"{'deferred' if registry.is_deferred(t) else 'loaded'} | "
        f"{'yes' if t.read_only else ''} | {table_cell(t.description)} |"
        for t in tools
    )
    return "| tool | source | state | read-only | description |\n|---|---|---|---|---|\n" + rows


def tool_card(tool: Tool, deferred: bool) -> str:
    """Render one tool in full: flags, description and schema.

    Args:
        tool: The tool.
        deferred: Whether it is deferred.

    Returns:
        The Markdown card.
    """
    flags = [
        name
        for name in ("read_only", "concurrency_safe", "should_defer", "always_load", "is_mcp")
        if getattr(tool, name)
    ]
    schema = json.dumps(tool.input_schema, indent=2, ensure_ascii=False)
    return (
        f"### `{tool.name}`\n\n{'deferred' if deferred else 'loaded'}"
        f"{' · ' + ', '.join(flags) if flags else ''}"
        f"{' · server ' + tool.server if tool.server else ''}"
        f"{' · hint: ' + tool.search_hint if tool.search_hint else ''}\n\n"
        f"{tool.description}\n\n```json\n{schema}\n```"
    )


def summarise_content(content: Any, limit: int = 100) -> str:
    """One line for a message's content: its text, tool calls and results.

    Args:
        content: A message's content.
        limit: How long a text part may be.

    Returns:
        The summary.
    """
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    parts = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            text = " ".join(block["text"].split())
            parts.append(text if len(text) <= limit else text[: limit - 1] + "…")
        elif kind == "tool_use":
            parts.append(f"→ `{block['name']}`")
        elif kind == "tool_result":
            parts.append("← error" if block.get("is_error") else "← result")
        else:
            parts.append(f"[{kind}]")
    return " · ".join(parts)


def _usage_store(settings: NbAgent) -> Any:
    """The usage store when promotion is on, else None."""
    if not settings.promotion:
        return None
    from nbagent.promotion import DEFAULT_PATH, UsageStore

    return UsageStore(Path(settings.usage_db).expanduser() if settings.usage_db else DEFAULT_PATH)


def _permissions(policy: Any) -> str:
    """The permission mode and the user's rules, in one line."""
    if not isinstance(policy, PermissionPolicy):
        return "custom policy"
    allowed = _names([r.text for r in policy.allow_rules]) or "none"
    denied = _names([r.text for r in policy.deny_rules[len(DEFAULT_DENY) :]]) or "none"
    return f"mode `{policy.mode}` · allow {allowed} · deny {denied} (+ credentials)"


def _names(names: list[str]) -> str:
    """``a``, ``b`` as inline code."""
    return ", ".join(f"`{name}`" for name in names)
