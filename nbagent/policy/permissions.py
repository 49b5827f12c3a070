"""The agent's permission policy: what each thing a call touches may do, by the mode and the
allow and deny rules.

Its decision is combined with a tool's own hook by :mod:`nbagent.policy.combining`
(:mod:`nbagent.policy.decisions`: what a decision is).

:class:`PermissionPolicy` is the agent's policy. It does not trust the model: every call is
checked as if an attacker wrote it. A tool declares what a call touches (:mod:`nbagent.core.access`:
paths read or written, a command line, a URL, an MCP server), and the policy checks each of
those, whatever the tool. Rules are written as Claude Code users know them:

===========================  ==============================================================
rule                         covers
===========================  ==============================================================
``Read(./data/**)``          every path read by any tool (Read, Grep, Glob, NotebookRead…)
``Edit(./src/**)``           every path written by any tool (Edit, Write, NotebookEdit…);
                             ``Write(…)`` is the same
``*(~/.ssh/**)``             every path read or written
``Grep(./logs/**)``          the paths one tool touches
``Bash(git status:*)``       shell lines whose every command starts with these words;
                             ``Bash(make test)`` an exact line (see
                             :mod:`nbagent.policy.commandline`)
``WebFetch(domain:x.org)``   URLs of that host (``*.x.org``: its subdomains)
``mcp__github`` or           every tool and resource of a server; ``mcp__github__get_issue``
``mcp__github__*``           one tool
``NotebookEdit``             a tool, whatever its input; ``Read`` and ``Edit`` every read or
                             write
===========================  ==============================================================

Deny rules win over everything; then plan mode refuses every change; then what the rules
and the mode allow. A call is allowed only when every thing it touches is:

===================  =====================================================================
mode                 what runs without asking
===================  =====================================================================
``default``          read-only tools inside the working folder (MCP tools always ask:
                     their annotations are claims; WebFetch asks per domain)
``acceptEdits``      the above, and writes inside the working folder; the shell still asks
``plan``             read-only tools; everything else is refused with a message
``bypassPermissions`` everything but what is refused in every mode (shown as a warning)
===================  =====================================================================

Refused in every mode, unless an allow rule names the place itself: credentials
(:func:`~nbagent.policy.pathrules.credential_paths`), for every tool and in any spelling, Bash lines
included; URLs of loopback, private and link-local addresses (the fetch itself re-checks
each address it connects to). Asked in every mode but bypass: writes to protected places
(:func:`~nbagent.policy.pathrules.protected_paths`: start-up files, git and Jupyter configuration,
``.mcp.json``, a file that shadows a module), and shell lines the parser cannot read through
(substitutions, ``eval``, …), which no rule can vouch for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nbagent.core.access import Touch
from nbagent.core.errors import ConfigurationError
from nbagent.policy.calls import PATH_FIELDS
from nbagent.policy.credentials import (
    credential_refusal,
    names_home_credential,
    walked_credential_folder,
)
from nbagent.policy.decisions import RANK, PermissionDecision, allow, ask, deny
from nbagent.policy.hosts import host_matches, normal_host, private_literal, url_host
from nbagent.policy.modes import MODES, PLAN_MESSAGE, by_mode
from nbagent.policy.pathrules import (
    PathPattern,
    credential_paths,
    inside,
    protected_reason,
    spellings,
)
from nbagent.policy.permission_rules import READ_NAMES, WRITE_NAMES, Rule, narrowest_rule

if TYPE_CHECKING:
    from nbagent.core.tool import Tool


class PermissionPolicy:
    """The agent's permission policy: a mode and allow and deny rules.

    Args:
        mode: One of :data:`MODES`.
        allow: Allow rules.
        deny: Deny rules.
        root: The folder relative paths in rules and inputs are resolved against.

    Raises:
        ConfigurationError: The mode or a rule is invalid.
    """

    sandboxed: bool = False
    """Bash runs in the sandbox (``c.NbAgent.sandbox``): its lines run without asking, but
    for deny rules and credentials."""

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
        self._patterns: dict[str, PathPattern] = {}
        self.configure(allow, deny)

    @property
    def allow_rules(self) -> list[Rule]:
        """The allow rules: the configured ones, then those added during the session."""
        return [*self._configured["allow"], *self._added["allow"]]

    @property
    def deny_rules(self) -> list[Rule]:
        """The deny rules: the configured ones, then the added ones."""
        return [*self._configured["deny"], *self._added["deny"]]

    def configure(self, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> None:
        """Replace the configured rules; rules added with :meth:`add` stay.

        Args:
            allow: Allow rules.
            deny: Deny rules.

        Raises:
            ConfigurationError: A rule is invalid (the rules in force stay).
        """
        self._configured = {
            "allow": [Rule(text) for text in allow],
            "deny": [Rule(text) for text in deny],
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
        """Decide a call: deny rules and what every mode refuses, then plan mode, then each
        thing the call touches by the allow rules and the mode.

        Args:
            tool: The tool called.
            tool_input: Its input.

        Returns:
            The decision, naming the rule or mode that made it.
        """
        touches = self.touches(tool, tool_input)
        if any("\0" in t.target for t in touches):
            return deny("The input holds a NUL character; no path or command has one.", "NUL")
        for rule in self.deny_rules:
            if self._denies(rule, tool, touches):
                return deny(f"Permission denied by the rule {rule.text}.", f"deny rule {rule.text}")
        for touch in touches:
            refusal = self._refused_in_every_mode(tool, touch)
            if refusal is not None:
                return refusal
        if self.mode == "plan" and not (tool.read_only and not tool.is_mcp):
            return deny(PLAN_MESSAGE, "mode plan")
        if not touches:
            whole = next(
                (r for r in self.allow_rules if r.specifier is None and r.names_tool(tool)), None
            )
            if whole is not None:
                return allow(f"allow rule {whole.text}", explicit=True)
            return by_mode(self.mode, tool)
        decisions = [self._touch(tool, touch) for touch in touches]
        worst = max(decisions, key=lambda d: RANK[d.behavior])
        if worst.behavior == "ask":
            asking = [d for d in decisions if d.behavior == "ask"]
            return ask(worst.message, worst.rule, asking[0].always if len(asking) == 1 else "")
        return next((d for d in decisions if d.explicit), worst)

    def baseline(self, tool: Tool, tool_input: Mapping[str, Any]) -> PermissionDecision | None:
        """What holds even for an agent without a policy: credentials and private addresses
        refused, a path outside the working folder asked about; no opinion otherwise.

        Args:
            tool: The tool called.
            tool_input: Its input.

        Returns:
            A deny, an ask, or None.
        """
        for touch in self.touches(tool, tool_input):
            refusal = self._refused_in_every_mode(tool, touch)
            if refusal is not None:
                return refusal
            if touch.access in ("read", "write"):
                real = spellings(touch.target, self.root)[-1]
                if not inside(real, self.root):
                    return self._outside(tool, touch, real)
        return None

    def touches(self, tool: Tool, tool_input: Mapping[str, Any]) -> list[Touch]:
        """What a call touches: the tool's declaration, else the path or command in its input.

        Args:
            tool: The tool called.
            tool_input: Its input.

        Returns:
            The touches; a declaration that fails on odd input declares nothing odd, so the
            call is then judged by its tool alone.
        """
        if tool.touches is not None:
            try:
                return [t for t in tool.touches(tool_input) if isinstance(t.target, str)]
            except (KeyError, TypeError, ValueError, AttributeError):
                return []
        command = tool_input.get("command")
        if isinstance(command, str) and not any(f in tool_input for f in PATH_FIELDS):
            return [Touch("run", command)]
        access: Literal["read", "write"] = "read" if tool.read_only else "write"
        return [
            Touch(access, tool_input[f]) for f in PATH_FIELDS if isinstance(tool_input.get(f), str)
        ]

    def readable(self, path: str | Path) -> bool:
        """Tell whether any tool may read a path at all: not a credential, not denied by a
        rule. Searches over a folder skip what is not readable.

        Args:
            path: An absolute path, or one relative to the root.
        """
        return self._open_to(Touch("read", str(path)))

    def writable(self, path: str | Path) -> bool:
        """Tell whether any tool may write a path at all: not a credential, not denied by an
        Edit rule. The file tools check the path they really write (after links) with it.

        Args:
            path: An absolute path, or one relative to the root.
        """
        return self._open_to(Touch("write", str(path)))

    def _open_to(self, touch: Touch) -> bool:
        """Neither a credential (unless a rule names it) nor denied by a rule, whatever tool."""
        if "\0" in touch.target:
            return False
        names = spellings(touch.target, self.root)
        if self._credential(names) is not None and not self._names_credential(
            _ANY_TOOL, touch, names
        ):
            return False
        return not any(
            r.covers(_ANY_TOOL, touch) and self._path_rule_matches(r, names)
            for r in self.deny_rules
        )

    def names_host(self, host: str) -> bool:
        """Tell whether an allow rule names a host exactly (``WebFetch(domain:127.0.0.1)``):
        what lets WebFetch reach a loopback or private address.

        Args:
            host: The URL's host.
        """
        wanted = normal_host(host)
        return any(
            r.tool == "WebFetch"
            and r.specifier is not None
            and r.specifier.startswith("domain:")
            and normal_host(r.specifier[7:]) == wanted
            for r in self.allow_rules
        )

    def _denies(self, rule: Rule, tool: Tool, touches: Sequence[Touch]) -> bool:
        """Tell whether a deny rule refuses a call: by its tool, or by a thing it touches.

        A path rule (``Read(./secrets/**)``) also refuses a shell line that names a path it
        covers.
        """
        if rule.specifier is None and rule.names_tool(tool):
            return True
        for touch in touches:
            if touch.access == "run" and rule.specifier is not None and rule.tool != "Bash":
                if rule.tool in READ_NAMES | WRITE_NAMES | {"*"} and self._names_path(
                    rule, touch.target
                ):
                    return True
            elif rule.covers(tool, touch) and self._matches(rule, touch, deny=True):
                return True
        return False

    def _names_path(self, rule: Rule, line: str) -> bool:
        """Tell whether a shell line names a path a path rule covers."""
        from nbagent.policy import commandline

        return any(
            self._path_rule_matches(rule, spellings(word, self.root))
            for word in commandline.paths_named(line)
        )

    def _matches(self, rule: Rule, touch: Touch, deny: bool) -> bool:
        """Tell whether a rule that covers a touch matches it (a rule with no specifier
        matches whatever it covers)."""
        spec = rule.specifier
        if spec is None:
            return True
        if touch.access in ("read", "write"):
            return self._path_rule_matches(rule, spellings(touch.target, self.root))
        if touch.access == "run":
            from nbagent.policy import commandline

            if deny:
                return commandline.denied_by(touch.target, spec)
            return commandline.allowed_by(touch.target, [spec])
        if touch.access == "fetch":
            return spec.startswith("domain:") and host_matches(url_host(touch.target), spec[7:])
        return False

    def _path_rule_matches(self, rule: Rule, names: Sequence[str]) -> bool:
        spec = rule.specifier
        if spec is None:
            return True
        if spec.startswith("domain:") or spec.endswith(":*"):
            return False
        return self._pattern(spec).matches(names)

    def _pattern(self, text: str) -> PathPattern:
        pattern = self._patterns.get(text)
        if pattern is None:
            pattern = self._patterns[text] = PathPattern(text, self.root)
        return pattern

    def _refused_in_every_mode(self, tool: Tool, touch: Touch) -> PermissionDecision | None:
        """Credentials in any spelling, and private addresses, whatever the mode."""
        if "\0" in touch.target:
            return deny("The input holds a NUL character; no path or command has one.", "NUL")
        if touch.access in ("read", "write"):
            names = spellings(touch.target, self.root)
            if self._credential(names) is not None and not self._names_credential(
                tool, touch, names
            ):
                return credential_refusal(touch.target)
        elif touch.access == "run":
            from nbagent.policy import commandline

            for word in commandline.paths_named(touch.target):
                if self._credential(spellings(word, self.root)) or names_home_credential(word):
                    return credential_refusal(word)
        elif touch.access == "fetch":
            host = url_host(touch.target)
            if private_literal(host) and not self.names_host(host):
                return deny(
                    f"{touch.target} is a loopback, private or link-local address; WebFetch "
                    f"reaches those only when an allow rule names the host, e.g. "
                    f'c.NbAgent.allow_rules = ["WebFetch(domain:{host})"].',
                    "private address",
                )
        return None

    def _credential(self, names: Sequence[str]) -> PathPattern | None:
        return next((p for p in credential_paths(self.root) if p.matches(names)), None)

    def _names_credential(self, tool: Tool, touch: Touch, names: Sequence[str]) -> bool:
        """An allow rule whose own pattern lies inside the credential's place unlocks it."""
        for rule in self.allow_rules:
            if rule.specifier is None or not rule.covers(tool, touch):
                continue
            if rule.specifier.startswith("domain:") or rule.specifier.endswith(":*"):
                continue
            pattern = self._pattern(rule.specifier)
            if pattern.matches(names) and any(
                pattern.within(credential) for credential in credential_paths(self.root)
            ):
                return True
        return False

    def _touch(self, tool: Tool, touch: Touch) -> PermissionDecision:
        """Decide one thing a call touches, by the allow rules and the mode."""
        if touch.access == "run":
            return self._run(tool, touch)
        rule = next(
            (
                r
                for r in self.allow_rules
                if r.covers(tool, touch) and self._matches(r, touch, False)
            ),
            None,
        )
        if touch.access == "write":
            protected = protected_reason(touch.target, self.root)
            named = rule is not None and rule.specifier is not None
            if protected and self.mode != "bypassPermissions" and not named:
                return ask(
                    f"{protected}: writing it can run code later.",
                    "protected path",
                    narrowest_rule(tool, touch, self.root),
                )
        if rule is not None:
            return allow(f"allow rule {rule.text}", explicit=True)
        if self.mode == "bypassPermissions":
            return allow(f"mode {self.mode}", explicit=True)
        reason = f"mode {self.mode}"
        if touch.access in ("read", "write"):
            real = spellings(touch.target, self.root)[-1]
            if not inside(real, self.root):
                return self._outside(tool, touch, real)
            if touch.access == "read" and tool.read_only and not tool.is_mcp:
                return allow(reason)
            if touch.access == "write" and self.mode == "acceptEdits":
                return allow(reason)
        return ask("", reason, narrowest_rule(tool, touch, self.root))

    def _outside(self, tool: Tool, touch: Touch, real: str) -> PermissionDecision:
        """Ask before a path outside the working folder is read or written."""
        verb = "read" if touch.access == "read" else "write to"
        return ask(
            f"Allow the agent to {verb} {real}? It is outside the working folder {self.root}.",
            "outside the working folder",
            narrowest_rule(tool, touch, self.root),
        )

    def _run(self, tool: Tool, touch: Touch) -> PermissionDecision:
        """A command line: allowed when every command matches an allow rule, in bypass mode,
        or in the sandbox; a line the parser cannot read through is asked about."""
        from nbagent.policy import commandline

        line = commandline.parse(touch.target)
        opaque = line.opaque
        bash_denies = any(r.tool == "Bash" for r in self.deny_rules)
        walked = None if self.sandboxed else walked_credential_folder(line.commands, self.root)
        if walked:
            return ask(
                f"This line reads the whole of {walked}, which holds credentials.",
                "folder with credentials",
                narrowest_rule(tool, touch, self.root),
            )
        if opaque and not (self.sandboxed and not bash_denies):
            return ask(
                f"nbagent cannot tell everything this line runs ({opaque[0]}).",
                "unreadable command",
                narrowest_rule(tool, touch, self.root),
            )
        rules = [r for r in self.allow_rules if r.covers(tool, touch)]
        whole = next((r for r in rules if r.specifier is None), None)
        if whole is not None:
            return allow(f"allow rule {whole.text}", explicit=True)
        specs = [r.specifier for r in rules if r.specifier is not None]
        if specs and commandline.allowed_by(touch.target, specs):
            texts = ", ".join(r.text for r in rules if r.specifier is not None)
            return allow(
                f"allow rule {texts}" if len(specs) == 1 else f"allow rules {texts}", explicit=True
            )
        if self.mode == "bypassPermissions":
            return allow(f"mode {self.mode}", explicit=True)
        if self.sandboxed:
            return allow("sandbox")
        return ask("", f"mode {self.mode}", narrowest_rule(tool, touch, self.root))


class _AnyTool:
    """Stands for "whichever tool" where only a rule's access names matter."""

    name = "\0"
    is_mcp = False
    server = None
    read_only = True
    touches = None


_ANY_TOOL: Any = _AnyTool()
