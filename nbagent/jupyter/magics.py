"""The IPython magics: ``%%agent``, ``%agent``, ``%tools`` and ``%tool_search``.

Type ``%%agent?`` (or ``%tools?``, ``%tool_search?``) in a notebook for the options.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from nbagent.catalogue.registry import TABLE_COLUMNS, ToolRegistry, ToolRow
from nbagent.core.errors import ConfigurationError, ModelAPIError, NbAgentError
from nbagent.core.events import (
    Notice,
    RunFinished,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    Usage,
    UsageReported,
)
from nbagent.core.markup import Markdown, code_markdown, model_markdown, plain_markdown, table_cell
from nbagent.core.secrets import redact
from nbagent.core.text import one_line, plural
from nbagent.core.tool import Tool
from nbagent.jupyter import checkpoint_magics
from nbagent.jupyter.checkpoint_magics import CHECKPOINT_COMMANDS
from nbagent.jupyter.config import NbAgent
from nbagent.jupyter.conversations_table import damage_notes, left_out, local_time, sessions_table
from nbagent.jupyter.memory_magics import memory_report
from nbagent.jupyter.outputs import show_notices
from nbagent.jupyter.queued_runs import continuation, show_queued
from nbagent.jupyter.session import Session
from nbagent.loop.options import EFFORTS, MODES
from nbagent.policy.permissions import PermissionPolicy
from nbagent.store.logfile import DEFAULT_LINES, LOG_ENV, LogFile, last_lines, log_path
from nbagent.tools.shell import sandbox

# The agent loop, the API's modules, the store's reading (its records' models) and the
# transcript's rendering are imported where they are first used: %load_ext need not wait for
# them.
if TYPE_CHECKING:
    from nbagent.api.api_tools import ServerTool
    from nbagent.loop.agent import Agent, AgentResult
    from nbagent.store.recorder import Recorder
    from nbagent.store.saved import SavedConversation

COMMANDS = (
    "status",
    "reset",
    "compact",
    "config",
    "history",
    "allow",
    "deny",
    "sessions",
    "resume",
    "log",
    "memory",
    *CHECKPOINT_COMMANDS,
)
"""The subcommands of the ``%agent`` line magic."""

RECORDED_AT = (TurnStarted, ToolCallStarted, ToolCallFinished, RunFinished)
"""The events after which the conversation's file is brought up to date (the history
changes just before each: a prompt or tool results, a model's answer, its end)."""


@magics_class
class AgentMagics(Magics):
    """The nbagent magics of one shell, over its :class:`~nbagent.jupyter.session.Session`
    (they hold nothing of their own).

    Args:
        shell: The IPython shell.
        session: The shell's session. Its channel to nbagent's JupyterLab extension is
            opened anew at each ``%%agent`` cell (so a reloaded page or a new tab answers too).
    """

    def __init__(self, shell: Any, session: Session) -> None:
        super().__init__(shell)
        self.session = session

    @property
    def settings(self) -> NbAgent:
        """The session's ``c.NbAgent`` configuration."""
        return self.session.settings

    @property
    def registry(self) -> ToolRegistry:
        """The session's tools."""
        return self.session.registry

    @property
    def recorder(self) -> Recorder:
        """The session's recorder, which saves the conversation as it goes."""
        return self.session.recorder

    @magic_arguments()
    @argument(
        "command",
        nargs="?",
        choices=COMMANDS,
        help="%%agent only: status, reset, config, history, allow RULE, deny RULE, sessions, "
        "resume [ID] or log [-n N].",
    )
    @argument(
        "rule",
        nargs="*",
        help="%%agent allow|deny only: a permission rule, e.g. 'Bash(git status:*)', "
        "'Read(./data/**)', 'mcp__github__*'. %%agent resume: a conversation's id (or its "
        "start), from %%agent sessions.",
    )
    @argument(
        "-n",
        "--lines",
        type=int,
        metavar="N",
        help=f"%%agent log only: how many of the log's last lines to show (default "
        f"{DEFAULT_LINES}).",
    )
    @argument(
        "--force",
        action="store_true",
        help="%%agent undo|redo|rewind: overwrite too what a person changed since.",
    )
    @argument(
        "--conversation",
        action="store_true",
        help="%%agent rewind N: cut the conversation back to before that cell too.",
    )
    @argument(
        "--conversation-only",
        action="store_true",
        help="%%agent rewind N: cut only the conversation back, not the changes.",
    )
    @argument("--model", help="The model for this cell (default: c.NbAgent.model).")
    @argument("--max-turns", type=int, help="Model requests for this cell at most.")
    @argument("--mode", choices=MODES, help="How deferred tools reach the model.")
    @argument("--effort", choices=EFFORTS, help="The model's effort for this cell.")
    @argument("--budget", type=float, help="Dollars this cell may spend at most.")
    @argument("--new", action="store_true", help="Start a new conversation.")
    @argument(
        "--review",
        action="store_true",
        help="Keep each notebook or file edit of this cell only once accepted "
        "(default: c.NbAgent.review).",
    )
    @argument(
        "--after",
        metavar="CELLS",
        help="Go on after the runs the agent queued (cell ids, comma separated): the cell "
        "nbagent adds below them.",
    )
    @argument(
        "--trust",
        action="store_true",
        help="%%agent resume only: resume a conversation not written by nbagent (unsigned or "
        "changed) too.",
    )
    @argument("-o", "--output", metavar="VAR", help="Store the AgentResult in this variable.")
    @argument("--quiet", action="store_true", help="Show only the final answer.")
    @argument(
        "--verbose",
        action="store_true",
        help="Show every call in full for this cell (default: c.NbAgent.verbose).",
    )
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Run the agent on the cell, or manage the conversation.

        ``%%agent``: the cell is the prompt; ``{name}`` is replaced by the value of a
        notebook variable (write ``{{`` and ``}}`` for literal braces). The conversation
        goes on across cells until ``--new`` or ``%agent reset``.

        ``%agent status|reset|config|history``: what is loaded, deferred and announced,
        and the tokens used; forget the conversation; the settings; the conversation in
        brief. ``%agent allow RULE`` and ``%agent deny RULE`` add a permission rule.
        ``%agent log [-n N]`` shows the end of nbagent's log: the tracebacks of handled
        errors, which a card shows as one line and never prints into the notebook.

        ``%agent checkpoints`` lists what each ``%%agent`` cell changed in notebook cells and
        files; ``%agent undo [N]`` puts the last cell's (or checkpoint N's) changes back,
        ``%agent redo`` takes the last undo back, ``%agent rewind N [--conversation]`` goes
        back to before checkpoint N. What a person changed since is kept unless ``--force``.

        Each conversation is saved as it goes, under ``~/.nbagent/conversations`` (never in
        the notebook). ``%agent sessions`` lists this notebook's; ``%agent resume [ID]``
        continues the last one (or the one named), after a kernel restart too. A file that
        nbagent did not write (unsigned or changed) is resumed only with ``--trust``.
        """
        self.session.ready()
        args = parse_argstring(self.agent, line)
        if cell is None:
            if args.command is None:
                raise UsageError(
                    f"Use %%agent with a prompt in the cell, or %agent {'|'.join(COMMANDS)}."
                )
            if args.lines is not None and args.command != "log":
                raise UsageError("-n goes with %agent log only.")
            if args.command in ("allow", "deny"):
                self._add_rule(args.command, " ".join(args.rule))
            elif args.command == "resume":
                if len(args.rule) > 1:
                    raise UsageError("%agent resume takes one id at most (see %agent sessions).")
                self._resume(args.rule[0] if args.rule else None, args.trust)
            elif args.command in CHECKPOINT_COMMANDS:
                checkpoint_magics.run_command(
                    self.session,
                    args.command,
                    args.rule,
                    force=args.force,
                    conversation=args.conversation,
                    conversation_only=args.conversation_only,
                )
            elif args.command == "memory":
                display(Markdown(memory_report(self.session)))
            elif args.rule:
                raise UsageError(f"%agent {args.command} takes no argument.")
            elif args.command == "log":
                self._log(DEFAULT_LINES if args.lines is None else args.lines)
            else:
                getattr(self, f"_{args.command}")()
            return
        if args.command is not None:
            raise UsageError(f"'{args.command}' is a %agent command; %%agent takes a prompt.")
        prompt = expand_prompt(cell, self.shell.user_ns)
        if args.after and (prompt := continuation(self.session, args.after, prompt)) is None:
            return
        if args.max_turns is not None and args.max_turns < 1:
            raise UsageError("--max-turns must be at least 1.")
        if args.budget is not None and args.budget <= 0:
            raise UsageError("--budget must be more than 0 dollars, e.g. --budget 0.50.")
        agent = self._agent_for(args)
        if self.session.mcp_manager is not None:
            show_notices(self.session.mcp_manager.notices)
        if self.session.frontend is not None:
            for notice in self.session.frontend.notices():  # once per front end
                display(Markdown(f"> **nbagent cannot see this notebook**: {_with_code(notice)}"))
            self.session.frontend.open()
        checkpoint_magics.begin_cell(self.session, agent, prompt, review=args.review)
        result = None
        try:
            result = self._run(agent, prompt, args)
        finally:  # --model, --max-turns and --mode are this cell's only
            checkpoint_magics.end_cell(self.session)
            self.session.cell_options(agent)
            show_queued(self.session, result)
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
        """Show the registry as a table, or one tool's card with its parameters."""
        self.session.ready()
        args = parse_argstring(self.tools, line)
        loaded = self.session.loaded_by_search()
        if args.pattern in self.registry:
            tool = self.registry.get(args.pattern)
            display(Markdown(tool_card(tool, self.registry.state(tool, loaded))))
            return
        matches = [
            t
            for t in self.registry.tools()
            if fnmatch.fnmatchcase(t.name.lower(), args.pattern.lower())
        ]
        if not matches:
            raise UsageError(f"No tool matches {args.pattern!r}; %tools lists them all.")
        display(Markdown(tools_table(self.registry.rows(matches, loaded))))

    @magic_arguments()
    @argument("query", nargs="+", help="The query, exactly as the model would send it.")
    @argument("-n", "--max-results", type=int, default=5, help="How many hits at most.")
    @line_magic
    def tool_search(self, line: str) -> None:
        """Run ToolSearch as the model would and show the ranked hits and why each matched."""
        self.session.ready()
        args = parse_argstring(self.tool_search, line)
        query = " ".join(args.query).strip("'\"")
        search_tool = self.agent_instance.search
        try:
            hits = search_tool.search(query, args.max_results)
        except NbAgentError as exc:
            raise UsageError(str(exc)) from None
        from nbagent.render.transcript.items import Search
        from nbagent.render.transcript.markdown import item_markdown

        rows = [(h.name, h.score, h.reasons) for h in hits]
        display(Markdown(item_markdown(Search(query, rows, None, search_tool.fallback))))

    @property
    def agent_instance(self) -> Agent:
        """The kernel's agent (the session's), built on first use from the settings."""
        return self.session.agent

    def _agent_for(self, args: Any) -> Agent:
        """The agent, reset or adjusted for this cell's options, with a client to call.

        Raises:
            UsageError: No API key is set (said before anything is shown in the cell).
        """
        agent = self.agent_instance
        try:
            agent.client  # noqa: B018 - built now, so a missing key is said at once
        except ModelAPIError as exc:
            raise UsageError(str(exc)) from None
        if args.new:
            agent.reset()
            self.recorder.new()
        self.session.for_cell(
            agent,
            model=args.model,
            max_turns=args.max_turns,
            mode=args.mode,
            effort=args.effort,
            cell_budget=args.budget,
        )
        policy = agent.runner.policy
        if isinstance(policy, PermissionPolicy) and policy.mode == "bypassPermissions":
            display(
                Markdown(
                    "> **Warning**: permission mode bypassPermissions: every tool "
                    "call runs without asking (credentials stay denied)."
                )
            )
        return agent

    def _run(self, agent: Agent, prompt: str, args: Any) -> AgentResult:
        from nbagent.jupyter.display import CellTranscript

        cost = self.registry.context_cost() if agent.mode != "off" else None
        transcript = CellTranscript(
            quiet=args.quiet,
            stream=self.settings.stream,
            saved_tokens=cost.all_loaded - cost.deferred if cost else None,
            verbose=args.verbose or self.settings.verbose,
            cost=partial(self.session.cost, model=agent.model),
            context=partial(_context_line, agent),
        )

        def on_event(event: Any) -> None:
            if isinstance(event, RECORDED_AT):  # saved first: a kernel killed now keeps it
                self.recorder.record(agent)
            checkpoint_magics.watch(self.session, event)
            transcript(event)

        self.session.agent_running = True
        try:
            return agent.run(prompt, on_event=on_event)
        except ModelAPIError as exc:
            if exc.status == 404:
                raise UsageError(f"Unknown model {agent.model!r}: {exc}") from None
            raise UsageError(str(exc)) from None
        except ConfigurationError as exc:  # a request that cannot be made (too many tools)
            raise UsageError(str(exc)) from None
        finally:  # what changed after the last event: a failed first request took its prompt
            self.session.agent_running = False
            self.recorder.record(agent)

    def _status(self) -> None:
        from nbagent.render.transcript.items import Tasks
        from nbagent.render.transcript.markdown import tasks_markdown
        from nbagent.render.transcript.summaries import usage_line
        from nbagent.store.instructions import instructions_line

        agent = self.agent_instance
        deferred = self.registry.deferred()
        fallback = agent.search.fallback
        lines = [
            f"**model** {code_markdown(agent.model)} · **mode** {code_markdown(agent.mode)} · "
            f"**ranker** {code_markdown(agent.search.ranker.name)}"
            + (f" (now {plain_markdown(fallback)})" if fallback else ""),
            f"**tools**: {len(self.registry)} registered, {len(self.registry.loaded())} loaded, "
            f"{len(deferred)} deferred",
            f"**loaded by ToolSearch**: {_names(agent.loaded_names) or 'none'}",
            f"**announced to the model**: {plural(len(agent.announced_names()), 'name')}",
            f"**conversation**: {plural(len(agent.messages), 'message')} · "
            f"{usage_line(agent.usage)} · "
            f"{self.session.cost(agent.usage, agent.model)} at "
            f"{code_markdown(agent.model)} list prices",
            f"**context**: {_context_line(agent).removeprefix('context: ')}",
            f"**instructions**: {plain_markdown(instructions_line(self.session.notebook()))}",
            f"**effort** {code_markdown(agent.effort or 'default')} · **thinking** "
            f"{code_markdown(agent.thinking)} · **cell budget** "
            + (f"${agent.cell_budget:.2f}" if agent.cell_budget else "none"),
            f"**permissions**: {_permissions(agent.runner.policy)}",
            f"**server tools**: {_server_tools(self.session.server_tools())}",
            f"**Bash sandbox**: {sandbox.status()}",
            f"**log**: {_log_status(self.session.log_file)}",
        ]
        if agent.usage_store is not None:
            used = ", ".join(
                f"{code_markdown(u.tool)} ({u.uses})" for u in agent.usage_store.usage()[:10]
            )
            lines.append(f"**usage** (promotion on): {used or 'nothing counted yet'}")
        tasks = self.session.tasks.snapshot()
        if tasks:
            lines.append(tasks_markdown(Tasks(tasks)))
        display(Markdown("  \n".join(lines)))

    def _add_rule(self, behavior: str, text: str) -> None:
        if self.session.agent_running:
            raise UsageError(
                f"%agent {behavior} cannot run inside an agent cell (code the agent runs cannot "
                "change its permissions): run it in a cell of your own."
            )
        policy = self.agent_instance.runner.policy
        if not text:
            raise UsageError(
                f"%agent {behavior} needs a rule, e.g. %agent {behavior} Bash(git status:*)"
            )
        try:
            rule = policy.add(behavior, text)  # type: ignore[union-attr]
        except NbAgentError as exc:
            raise UsageError(str(exc)) from None
        display(Markdown(f"{behavior.capitalize()} rule added: {code_markdown(rule.text)}"))

    def _compact(self) -> None:
        from nbagent.render.transcript.summaries import usage_line

        agent = self.agent_instance
        try:
            events = list(agent.compact())
        except ModelAPIError as exc:
            raise UsageError(str(exc)) from None
        lines = [plain_markdown(e.message) for e in events if isinstance(e, Notice)]
        usage = sum((e.usage for e in events if isinstance(e, UsageReported)), Usage())
        if usage.total_input_tokens:
            lines.append(f"{usage_line(usage)} · {self.session.cost(usage, agent.model)}")
        self.recorder.record(agent)
        display(Markdown("  \n".join(lines)))

    def _reset(self) -> None:
        self.agent_instance.reset()
        self.recorder.new()
        self.session.tasks.clear()
        display(Markdown("The conversation was reset."))

    def _config(self) -> None:
        rows = "\n".join(
            f"| `{name}` | {code_markdown(repr(getattr(self.settings, name)))} | "
            f"{trait.help.splitlines()[0]} |"
            for name, trait in sorted(self.settings.traits(config=True).items())
        )
        table = f"| c.NbAgent | value | |\n|---|---|---|\n{rows}"
        policy = self.agent_instance.runner.policy if self.session.agent_built else None
        if isinstance(policy, PermissionPolicy) and policy.mode != self.settings.permission_mode:
            table += (
                f"\n\nIn effect now: permission mode {code_markdown(policy.mode)} (the agent "
                f"entered plan mode; {code_markdown(self.settings.permission_mode)} applies again "
                "once you approve its "
                "plan, or when you set `%config NbAgent.permission_mode`)."
            )
        display(Markdown(table))

    def _sessions(self) -> None:
        from nbagent.store.saved import NOT_SIGNED, saved_conversations

        notebook = self.session.notebook()
        found = saved_conversations(notebook)
        if not found:
            display(Markdown(f"No saved conversation for {code_markdown(str(notebook))} yet."))
            return
        table = sessions_table(found, self.recorder.current_id) + damage_notes(found)
        if any(saved.damage for saved in found):
            table += (
                f"\n\nA conversation {NOT_SIGNED} is not resumed by `%agent resume`: what it "
                "says you said would reach the model as your own words. "
                "`%agent resume ID --trust` resumes one you know."
            )
        display(
            Markdown(
                f"{table}\n\nSaved conversations of {code_markdown(str(notebook))}, last written "
                "first; `%agent resume ID` continues one."
            )
        )

    def _resume(self, ident: str | None, trust: bool = False) -> None:
        from nbagent.store.resume import resume
        from nbagent.store.saved import NOT_SIGNED, find_conversation

        notebook = self.session.notebook()
        try:
            saved = find_conversation(notebook, ident, trust=trust)
        except NbAgentError as exc:
            raise UsageError(str(exc)) from None
        skipped = "" if ident or trust else _skipped(notebook, saved)
        if saved is None and skipped:
            display(Markdown(f"Nothing to resume that nbagent wrote.{skipped}"))
            return
        if saved is None:
            display(
                Markdown(
                    f"Nothing to resume: no conversation of {code_markdown(str(notebook))} is "
                    "saved. The next `%%agent` cell starts one."
                )
            )
            return
        repair = resume(self.agent_instance, saved, trust=trust)
        if saved.signed:
            self.recorder.attach(saved, self.agent_instance.messages)
        else:  # trusted: it goes on in a file nbagent signs, the other stays as it is
            self.recorder.new()
        self.session.tasks.clear()
        notes = ""
        if repair.interrupted:
            notes = (
                f" Unanswered when it stopped: {_names(repair.interrupted)}, now answered as "
                "interrupted."
            )
        if not saved.signed:
            notes += (
                f" It was {NOT_SIGNED} ({saved.damage}); resumed as you asked, it goes on in a "
                "new saved conversation."
            )
        notes += left_out(saved) + skipped
        display(
            Markdown(
                f"Resumed conversation {code_markdown(saved.id)} (started "
                f"{plain_markdown(local_time(saved.started))}): "
                f"{plural(saved.turns, 'turn')}, {plural(len(repair.messages), 'message')}."
                f"{notes} `%agent history` shows it; the next `%%agent` cell continues it."
            )
        )

    def _log(self, count: int) -> None:
        """Print the last lines of nbagent's log, or say where it is and why it is empty."""
        if count < 1:
            raise UsageError("%agent log -n takes a number of lines of 1 or more.")
        log_file = self.session.log_file
        path = log_file.path if log_file is not None else log_path()
        try:
            lines = last_lines(path, count)
        except OSError as exc:
            raise UsageError(f"nbagent's log {path} cannot be read: {exc}") from None
        failure = log_file.failure if log_file is not None else None
        if failure:
            print(f"nbagent's log is not written any more ({failure}).")
        if not lines:
            state = "is empty" if path.exists() else "does not exist yet"
            print(
                f"Nothing logged: {path} {state}. In a kernel, nbagent writes there what goes "
                "wrong out of sight (the traceback of a tool that raised, whose card shows "
                "one line; an MCP server's dropped connection), warnings and errors only: run "
                "import logging; logging.getLogger('nbagent').setLevel(logging.DEBUG) to "
                f"write everything, then the cell again. {LOG_ENV} names another file."
            )
            return
        print(f"The last {plural(len(lines), 'line')} of {path} (%agent log -n N for more):")
        print("\n".join(lines))

    def _history(self) -> None:
        lines = [
            f"{i}. **{plain_markdown(str(m['role']))}**: {summarise_content(m['content'])}"
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


def tools_table(rows: Sequence[ToolRow]) -> str:
    """Render tools as a Markdown table.

    Args:
        rows: The tools' rows (:meth:`~nbagent.catalogue.registry.ToolRegistry.rows`).

    Returns:
        The table.
    """
    header = f"| {' | '.join(TABLE_COLUMNS)} |\n|{'---|' * len(TABLE_COLUMNS)}\n"
    return header + "\n".join(
        f"| {code_markdown(row.name)} | {' | '.join(map(table_cell, row.cells[1:]))} |"
        for row in rows
    )


def tool_card(tool: Tool, state: str) -> str:
    """Render one tool in full: state, flags, description and its parameters.

    Args:
        tool: The tool.
        state: Its state in this session (loaded, deferred, loaded by ToolSearch).

    Returns:
        The Markdown card.
    """
    from nbagent.render.schema_view import parameters_markdown

    flags = [
        name
        for name in ("read_only", "concurrency_safe", "should_defer", "always_load", "is_mcp")
        if getattr(tool, name)
    ]
    return (
        f"### {code_markdown(tool.name)}\n\n{state}"
        f"{' · ' + ', '.join(flags) if flags else ''}"
        f"{' · server ' + plain_markdown(tool.server) if tool.server else ''}"
        f"{' · hint: ' + plain_markdown(tool.search_hint) if tool.search_hint else ''}\n\n"
        f"{model_markdown(tool.description)}\n\n{parameters_markdown(tool.input_schema)}"
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
        if kind == "text":  # redacted before it is cut: a cut secret would no longer be found
            parts.append(plain_markdown(one_line(redact(str(block["text"])), limit)))
        elif kind == "tool_use":
            parts.append(f"→ {code_markdown(str(block['name']))}")
        elif kind == "tool_result":
            parts.append("← error" if block.get("is_error") else "← result")
        else:
            parts.append(plain_markdown(f"[{kind}]"))
    return " · ".join(parts)


def _permissions(policy: Any) -> str:
    """The permission mode and the user's rules, in one line."""
    if not isinstance(policy, PermissionPolicy):
        return "custom policy"
    allowed = _names([r.text for r in policy.allow_rules]) or "none"
    denied = _names([r.text for r in policy.deny_rules]) or "none"
    return f"mode {code_markdown(policy.mode)} · allow {allowed} · deny {denied} (+ credentials)"


def _server_tools(tools: list[ServerTool]) -> str:
    """The server tools on, with their options and price; or how to turn web search on."""
    if not tools:
        return 'none (`c.NbAgent.server_tools = ["web_search"]` turns web search on)'
    from nbagent.api.api_tools import options_line

    return " · ".join(f"{code_markdown(t.name)} ({plain_markdown(options_line(t))})" for t in tools)


def _skipped(notebook: str, chosen: SavedConversation | None) -> str:
    """What ``%agent resume`` passed over: the conversations not written by nbagent last
    written after the one it resumes (all of them when it resumes none)."""
    from nbagent.store.saved import NOT_SIGNED, newest_first

    passed = []
    for saved in newest_first(notebook):
        if chosen is not None and saved.path == chosen.path:
            break
        if not saved.signed and saved.messages:
            passed.append(saved.id)
    if not passed:
        return ""
    return (
        f" Passed over, as {NOT_SIGNED}: {_names(passed)}; `%agent resume ID --trust` resumes "
        "one anyway."
    )


def _log_status(log_file: LogFile | None) -> str:
    """Where nbagent's log records go, for ``%agent status``."""
    if log_file is None:
        return "written to a file in a kernel only (here records go to stderr)"
    if log_file.failure is not None:
        return (
            f"not written ({plain_markdown(log_file.failure)}): records are dropped until "
            f"nbagent is loaded again; {code_markdown(LOG_ENV)} names another file"
        )
    return f"{code_markdown(str(log_file.path))} ({code_markdown('%agent log')} shows its end)"


def _with_code(text: str) -> str:
    """The Markdown of a message whose spans between backticks are commands: those as code,
    the rest as written."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # a backtick left open: no span is sure
        return plain_markdown(text)
    return "".join(
        code_markdown(part) if index % 2 else plain_markdown(part)
        for index, part in enumerate(parts)
    )


def _names(names: list[str]) -> str:
    """``a``, ``b`` as inline code."""
    return ", ".join(code_markdown(name) for name in names)


def _context_line(agent: Agent) -> str:
    """How full the agent's context window is, and where it compacts."""
    from nbagent.loop.context_window import context_line

    threshold = agent.compact_threshold if agent.compaction != "off" else None
    return context_line(
        agent.last_prompt_tokens, agent.context_window, threshold, agent.editor.last
    )
