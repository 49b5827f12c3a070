"""Who may run what: permission modes, allow and deny rules, and how a call's decision is made.

A tool's own ``check_permission`` hook and the agent's policy each give a
:class:`PermissionDecision` (or ``None`` for no opinion). Deny wins over ask, ask over allow;
with no opinion at all a call is allowed. An ``ask`` goes to the agent's asker (a prompt on
the kernel's stdin, a test's answer); with no asker it is denied.

:class:`PermissionPolicy` is the agent's policy. Its rules are written as Claude Code users
know them: ``Bash(git status:*)`` (a command and its arguments), ``Read(./data/**)`` (paths,
relative to the root; ``~`` is the home folder), ``mcp__github__*`` (every tool of a
server), ``NotebookEdit`` (a tool, whatever its input), ``*(~/.ssh/**)`` (any tool touching
a path). Deny rules win over allow rules, and both over the mode, except that plan mode refuses
every change whatever the allow rules say:

===================  =====================================================================
mode                 what runs without asking
===================  =====================================================================
``default``          read-only tools (MCP tools always ask: their annotations are claims)
``acceptEdits``      read-only tools and file or notebook edits; the shell still asks
``plan``             read-only tools; everything else is refused with a message
``bypassPermissions`` everything (shown as a warning)
===================  =====================================================================
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nbagent.errors import ConfigurationError
from nbagent.events import PermissionRequested

if TYPE_CHECKING:
    from nbagent.tool import Tool

Behavior = Literal["allow", "deny", "ask"]

Answer = Literal["yes", "no", "always"]
"""A person's answer to a permission question: run it, refuse it, or run it and add the
allow rule that lets such calls run from now on."""

MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
"""The permission modes."""

EDIT_TOOLS = frozenset({"Write", "Edit", "NotebookEdit"})
"""The tools ``acceptEdits`` lets run: they change files or the notebook, nothing else."""

PATH_FIELDS = ("file_path", "notebook_path", "path")
"""Input fields that name a path, in the order a rule looks for one."""

SENSITIVE_PATHS = (
    "~/.ssh/**",
    "~/.aws/**",
    "~/.gnupg/**",
    "~/.config/gcloud/**",
    "~/.azure/**",
    "~/.kube/**",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.pgpass",
    "~/.claude/**",
    "~/.anthropic/**",
    "~/.nbagent/credentials*",
)
"""Paths no tool may touch unless a rule allows it explicitly (keys and credentials)."""

DEFAULT_DENY = tuple(f"*({path})" for path in SENSITIVE_PATHS)
"""The deny rules every policy starts with."""

PLAN_MESSAGE = (
    "Plan mode: only read-only tools run. Finish the plan and present it for approval before "
    "changing anything."
)
"""What the model is told when plan mode refuses a call."""


@dataclass(frozen=True)
class PermissionDecision:
    """Whether a tool call may run."""

    behavior: Behavior
    """``allow``, ``deny`` or ``ask`` the user."""
    message: str = ""
    """For deny, what the model is told; for ask, the question shown to the user."""
    rule: str = ""
    """The rule, mode or hook that decided, shown on the tool-call card."""
    explicit: bool = False
    """The user's own choice (an allow rule, bypass mode): it beats a tool's default ask."""


def allow(rule: str = "", explicit: bool = False) -> PermissionDecision:
    """Return an allow decision.

    Args:
        rule: What decided.
        explicit: The user chose it (an allow rule, bypass mode).

    Returns:
        The decision.
    """
    return PermissionDecision("allow", rule=rule, explicit=explicit)


def deny(message: str, rule: str = "") -> PermissionDecision:
    """Return a deny decision.

    Args:
        message: What the model is told.
        rule: What decided.

    Returns:
        The decision.
    """
    return PermissionDecision("deny", message=message, rule=rule)


def ask(message: str = "", rule: str = "") -> PermissionDecision:
    """Return a decision to ask the user.

    Args:
        message: The question.
        rule: What decided.

    Returns:
        The decision.
    """
    return PermissionDecision("ask", message=message, rule=rule)


Policy = Callable[["Tool", Mapping[str, Any]], PermissionDecision | None]
"""The agent-wide permission policy: a decision for a call, or None for no opinion."""

Asker = Callable[[PermissionRequested], Answer | None]
"""Asks the user about a call and waits, without a time limit, for the answer; None when no
one can be asked (no stdin)."""

SHELL_OPERATORS = re.compile(r"[;&|<>`\n]|\$\(")
"""What makes a command line more than one command (or redirects it): a prefix rule such as
``Bash(git status:*)`` never allows a command holding one."""

SUBCOMMAND_PROGRAMS = frozenset(
    "git gh npm pnpm yarn pip pip3 uv conda mamba poetry cargo go docker kubectl jupyter "
    "brew apt apt-get systemctl make".split()
)
"""Programs whose second word is a subcommand: "always" allows that subcommand only."""

INTERPRETERS = frozenset(
    "python python3 ipython node deno bun bash sh zsh ruby perl php Rscript julia env sudo "
    "xargs eval exec".split()
)
"""Programs that run whatever code they are given: "always" allows the exact line only."""

_RANK: dict[Behavior, int] = {"allow": 0, "ask": 1, "deny": 2}
_RULE = re.compile(r"^(?P<tool>[^()\s]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    """An allow or deny rule: a tool name (or glob) and an optional specifier.

    Raises:
        ConfigurationError: The text is not ``Tool`` or ``Tool(specifier)``.
    """

    text: str
    """The rule as written."""
    tool: str = field(init=False)
    """The tool name or glob."""
    specifier: str | None = field(init=False)
    """What the input must match: a command prefix (``git status:*``) or a path glob."""

    def __post_init__(self) -> None:
        """Parse the text."""
        match = _RULE.match(self.text.strip())
        if not match or match["spec"] == "":
            raise ConfigurationError(
                f"Permission rule {self.text!r} is not of the form Tool or Tool(specifier), "
                "e.g. Bash(git status:*), Read(./data/**), mcp__github__*."
            )
        object.__setattr__(self, "tool", match["tool"])
        object.__setattr__(self, "specifier", match["spec"])

    def matches(self, tool_name: str, tool_input: Mapping[str, Any], root: Path) -> bool:
        """Tell whether a call falls under this rule.

        Args:
            tool_name: The tool called.
            tool_input: Its input.
            root: The folder relative paths are resolved against.

        Returns:
            True when the tool matches and, if there is a specifier, the input too.
        """
        if not fnmatch.fnmatchcase(tool_name, self.tool):
            return False
        if self.specifier is None:
            return True
        command = tool_input.get("command")
        if isinstance(command, str) and not any(f in tool_input for f in PATH_FIELDS):
            return _command_matches(command, self.specifier)
        path = next(
            (tool_input[f] for f in PATH_FIELDS if isinstance(tool_input.get(f), str)), None
        )
        return path is not None and _path_matches(path, self.specifier, root)


def _command_matches(command: str, specifier: str) -> bool:
    """``git status:*`` matches ``git status`` and ``git status -s``; else an exact command.

    A prefix never matches a command line that chains, pipes, redirects or substitutes
    (``git status && rm -r data``): only an exact rule allows such a line.
    """
    if specifier.endswith(":*"):
        if SHELL_OPERATORS.search(command):
            return False
        command, prefix = " ".join(command.split()), " ".join(specifier[:-2].split())
        return command == prefix or command.startswith(prefix + " ")
    command = " ".join(command.split())
    return command == " ".join(specifier.split())


def describe_request(tool: Tool, tool_input: Mapping[str, Any]) -> str:
    """What a call would do, as a person reads it: the command, the path, else its input.

    Args:
        tool: The tool called.
        tool_input: Its input.

    Returns:
        One line (a command may hold several).
    """
    command = tool_input.get("command")
    if isinstance(command, str):
        return command
    path = next((tool_input[f] for f in PATH_FIELDS if isinstance(tool_input.get(f), str)), None)
    if path is not None:
        return path
    return ", ".join(f"{key}={value!r}" for key, value in tool_input.items())


def always_rule(tool: Tool, tool_input: Mapping[str, Any]) -> str:
    """The allow rule an "always" answer adds: the command's prefix, else the tool.

    ``git status -s`` gives ``Bash(git status:*)``: a program known for subcommands and its
    subcommand, so every ``git status`` runs from now on and no other git command; ``ls -la``
    gives ``Bash(ls:*)``. An interpreter's command line (``python train.py``), and a line that
    chains, pipes or redirects, gives an exact rule: a prefix would allow any code.

    Args:
        tool: The tool called.
        tool_input: Its input.

    Returns:
        The rule's text.
    """
    command = tool_input.get("command")
    if not isinstance(command, str) or not command.split():
        return tool.name
    words = command.split()
    program = Path(words[0]).name
    if SHELL_OPERATORS.search(command) or program in INTERPRETERS:
        return f"{tool.name}({' '.join(words)})"
    if program in SUBCOMMAND_PROGRAMS and len(words) > 1 and not words[1].startswith("-"):
        return f"{tool.name}({' '.join(words[:2])}:*)"
    return f"{tool.name}({words[0]}:*)"


def _path_matches(path: str, pattern: str, root: Path) -> bool:
    """Match a path against a glob (``**`` crosses folders), both resolved against the root."""
    target = _absolute(path, root)
    glob = str(_absolute(pattern, root, strict=False))
    regex = "".join(
        ".*"
        if part == "**"
        else "[^/]*"
        if part == "*"
        else "[^/]"
        if part == "?"
        else re.escape(part)
        for part in re.split(r"(\*\*|\*|\?)", glob)
    )
    return re.fullmatch(regex.replace("/.*/", "/(?:.*/)?"), str(target)) is not None


def _absolute(path: str, root: Path, strict: bool = True) -> Path:
    """Expand ``~`` and make a path absolute against the root (resolving links if it exists)."""
    expanded = Path(os.path.expanduser(path))
    absolute = expanded if expanded.is_absolute() else root / expanded
    return absolute.resolve() if strict else Path(os.path.normpath(absolute))


class PermissionPolicy:
    """The agent's permission policy: a mode and allow and deny rules.

    Args:
        mode: One of :data:`MODES`.
        allow: Allow rules.
        deny: Deny rules (added to :data:`DEFAULT_DENY`).
        root: The folder relative paths in rules and inputs are resolved against.

    Raises:
        ConfigurationError: The mode or a rule is invalid.
    """

    def __init__(
        self,
        mode: str = "default",
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        root: Path | None = None,
    ) -> None:
        self.mode = mode
        self.root = (root or Path.cwd()).resolve()
        self._configured: dict[str, list[Rule]] = {"allow": [], "deny": []}
        self._added: dict[str, list[Rule]] = {"allow": [], "deny": []}
        self.configure(allow, deny)

    @property
    def allow_rules(self) -> list[Rule]:
        """The allow rules: the configured ones, then those added during the session."""
        return [*self._configured["allow"], *self._added["allow"]]

    @property
    def deny_rules(self) -> list[Rule]:
        """The deny rules: :data:`DEFAULT_DENY`, the configured ones, then the added ones."""
        return [*self._configured["deny"], *self._added["deny"]]

    def configure(self, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> None:
        """Replace the configured rules; rules added with :meth:`add` stay.

        Args:
            allow: Allow rules.
            deny: Deny rules (added to :data:`DEFAULT_DENY`).

        Raises:
            ConfigurationError: A rule is invalid (the rules in force stay).
        """
        self._configured = {
            "allow": [Rule(text) for text in allow],
            "deny": [Rule(text) for text in (*DEFAULT_DENY, *deny)],
        }

    @property
    def mode(self) -> str:
        """The permission mode."""
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ConfigurationError(
                f"Unknown permission mode {mode!r}; choose one of: {', '.join(MODES)}."
            )
        self._mode = mode

    def add(self, behavior: Literal["allow", "deny"], text: str) -> Rule:
        """Add a rule for the rest of the session (``%agent allow``, an "always" answer).

        Args:
            behavior: ``allow`` or ``deny``.
            text: The rule.

        Returns:
            The parsed rule.

        Raises:
            ConfigurationError: The rule is invalid.
        """
        rule = Rule(text)
        self._added[behavior].append(rule)
        return rule

    def __call__(self, tool: Tool, tool_input: Mapping[str, Any]) -> PermissionDecision:
        """Decide a call: deny rules, then plan mode, then allow rules, then the mode.

        Args:
            tool: The tool called.
            tool_input: Its input.

        Returns:
            The decision, naming the rule or mode that made it.
        """
        for rule in self.deny_rules:
            if rule.matches(tool.name, tool_input, self.root):
                return deny(f"Permission denied by the rule {rule.text}.", f"deny rule {rule.text}")
        if self.mode == "plan" and not (tool.read_only and not tool.is_mcp):
            return deny(PLAN_MESSAGE, "mode plan")
        for rule in self.allow_rules:
            if rule.matches(tool.name, tool_input, self.root):
                return allow(f"allow rule {rule.text}", explicit=True)
        return self._by_mode(tool)

    def _by_mode(self, tool: Tool) -> PermissionDecision:
        reason = f"mode {self.mode}"
        safe = tool.read_only and not tool.is_mcp
        if self.mode == "bypassPermissions":
            return allow(reason, explicit=True)
        if safe:
            return allow(reason)
        if self.mode == "plan":
            return deny(PLAN_MESSAGE, reason)
        if self.mode == "acceptEdits" and tool.name in EDIT_TOOLS:
            return allow(reason)
        return ask("", reason)


def _as_decision(value: Any, rule: str) -> PermissionDecision | None:
    """Accept a decision, a bool (allow / deny) or None from a hook."""
    if value is None or isinstance(value, PermissionDecision):
        return value
    if value is True:
        return allow(rule)
    if value is False:
        return deny("Permission to use this tool was denied.", rule)
    raise TypeError(f"A permission hook returned {value!r}; return a PermissionDecision.")


def decide(tool: Tool, tool_input: Mapping[str, Any], policy: Policy | None) -> PermissionDecision:
    """Combine the tool's hook and the agent's policy into one decision.

    Args:
        tool: The tool called.
        tool_input: Its input.
        policy: The agent's policy, if any.

    Returns:
        A deny if anyone denies; else the user's explicit allow (a rule, bypass mode) if there
        is one; else the strictest (ask over allow); allow when nobody has an opinion.
    """
    hook = (
        _as_decision(tool.check_permission(tool_input), f"{tool.name}.check_permission")
        if tool.check_permission
        else None
    )
    given = [d for d in (hook, policy(tool, tool_input) if policy else None) if d is not None]
    if not given:
        return allow()
    strictest = max(given, key=lambda d: _RANK[d.behavior])
    if strictest.behavior == "deny":
        return strictest
    return next((d for d in given if d.explicit), strictest)
