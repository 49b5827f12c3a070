"""Bash rule specifiers (what goes inside ``Bash(...)``) matched against what a line runs: which
allow rules cover a line, which deny rules name something in it, and the narrowest rule an
"always" answer can give."""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from nbagent.policy.commandline.parsing import parse, paths_named, read
from nbagent.policy.commandline.programs import (
    INTERPRETERS,
    SAFE_ENVIRONMENT,
    SHELLS,
    WRAPPERS,
    interpreter,
)
from nbagent.policy.commandline.results import SimpleCommand
from nbagent.policy.commandline.risks import RISKS, is_option, risky_words
from nbagent.policy.commandline.words import names

SUBCOMMAND_PROGRAMS = names(
    "git gh npm pnpm yarn pip pip3 uv conda mamba poetry cargo go jupyter brew apt apt-get "
    "systemctl"
)
"""Programs whose first word is a subcommand: "always" allows that subcommand only."""

ALWAYS_EXACT = frozenset(
    {
        *(name for name in WRAPPERS if " " not in name),
        *SHELLS,
        *INTERPRETERS,
        *(p for p in RISKS if p not in SUBCOMMAND_PROGRAMS),
    }
)
"""Programs an "always" answer never generalizes: it allows the exact line only."""

CREDENTIALS = re.compile(
    r"(^|/)(\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.azure|\.netrc|\.pgpass|\.claude|\.anthropic"
    r"|\.nbagent|\.git-credentials|\.npmrc|\.pypirc|\.config/gcloud|\.env(\.[^/]*)?"
    r"|id_(rsa|dsa|ecdsa|ed25519)[^/]*|credentials[^/]*|secrets?[^/]*|shadow)(/|$)"
)
"""Paths that look like they hold keys or credentials: an "always" answer for a line naming
one allows that line only."""


def allowed_by(line: str, specs: Iterable[str]) -> bool:
    """Tell whether allow specs cover everything a line runs.

    True only when the line has no opaque construct, no redirection to or from a file, and
    every simple command matches one of the specs, or when an exact spec is the line itself.
    A spec is Claude Code's Bash rule specifier: ``git status:*`` (the command's words start
    with these words, compared after quote removal) or an exact command (``npm run test``). A
    prefix spec never matches a command that can run other code or write anywhere through words
    the spec does not name (:data:`~nbagent.policy.commandline.risks.RISKS`): ``git:*`` does not
    match ``git -c alias.x=.. x``.

    Args:
        line: The command line.
        specs: The specifiers of the allow rules (what goes inside ``Bash(...)``).

    Returns:
        Whether the line may run without asking.
    """
    specs = list(specs)
    if any(not spec.endswith(":*") and spec.strip() == line.strip() for spec in specs):
        return True
    parsed = parse(line)
    if parsed.opaque or parsed.redirects or not parsed.commands:
        return False
    rules = [rule for rule in map(_spec, specs) if rule is not None]
    return all(
        any(_allows(rule, command) for rule in rules) for command in parsed.commands
    ) and all(
        (wrapper.launcher and _safe_environment(wrapper))
        or any(_allows(rule, wrapper) for rule in rules)
        for wrapper in parsed.wrappers
    )


def denied_by(line: str, spec: str) -> bool:
    """Tell whether a deny spec names anything a line may run.

    True when any simple command of the line (nested ones included, after wrappers, quotes,
    backslashes, absolute paths and ``VAR=value`` prefixes are taken away) may be the spec's
    program with the spec's words: ``rm:*`` matches ``\\rm``, ``/bin/rm``, ``command rm``,
    ``r''m``, ``xargs rm``, ``find . -delete``, ``bash -c 'rm f'``, ``true; rm f``. The spec's
    options may come anywhere and in any grouping (``rm -rf:*`` matches ``rm -r -f x`` and
    ``rm -fr x``), its other words in order; a word only the run decides may be any of them,
    and a command whose program only the run decides may be any program.

    Args:
        line: The command line.
        spec: The specifier of a deny rule (what goes inside ``Bash(...)``).

    Returns:
        Whether the rule denies the line.
    """
    if spec.strip() == line.strip():
        return True
    words = _deny_words(spec)
    if not words:
        return False
    parsed = read(line).line
    return any(
        _may_be(command, words)
        for command in (*parsed.commands, *parsed.wrappers, *parsed.possible)
    )


def always_spec(line: str) -> str:
    """The narrowest rule specifier that covers a line, for an "always" answer.

    A single simple command of a program that cannot run other programs or write anywhere
    through its words gives ``program subcommand:*`` for programs known for subcommands
    (:data:`SUBCOMMAND_PROGRAMS`; the line itself when an option comes before the subcommand
    or there is none: ``git:*`` would allow ``git push --force``) and ``program:*`` for the
    others. Everything else gives the line itself: several commands, an
    opaque construct, a redirection, a wrapper, a program of :data:`ALWAYS_EXACT` (interpreters,
    shells, ``awk``, ``sed``, ``find``, ``xargs``, ``tar``, ``make``, ``ssh``, ``docker``...),
    a use of a risky word (``git -c``, ``git config``, ``npm run``), a path that looks like it
    holds credentials.

    Args:
        line: The command line the person saw.

    Returns:
        The specifier (what goes inside ``Bash(...)``).
    """
    exact = line.strip()
    parsed = parse(line)
    if parsed.opaque or parsed.redirects or parsed.wrappers or len(parsed.commands) != 1:
        return exact
    command = parsed.commands[0]
    words = command.words
    program = words[0]
    if (
        command.via
        or command.path
        or command.assignments
        or program in ALWAYS_EXACT
        or interpreter(program)
        or risky_words(command)
        or any(CREDENTIALS.search(path) for path in paths_named(line))
    ):
        return exact
    if program in SUBCOMMAND_PROGRAMS:
        # Options before the subcommand (``git --no-pager status``): ``git:*`` would allow
        # every subcommand, and a prefix with the options hides which word is the subcommand.
        if len(words) < 2 or words[1].startswith("-") or 1 in command.unknown:
            return exact
        candidate = f"{program} {shlex.quote(words[1])}:*"
        return candidate if allowed_by(line, [candidate]) else exact
    candidate = f"{program}:*"
    return candidate if allowed_by(line, [candidate]) else exact


@dataclass(frozen=True)
class _Spec:
    """An allow spec read into words (the program as written, then the rest)."""

    words: tuple[str, ...]
    prefix: bool


def _spec(spec: str) -> _Spec | None:
    """Read an allow spec into literal words, or None when it is not one plain command."""
    prefix = spec.endswith(":*")
    body = spec[:-2] if prefix else spec
    parsed = read(body).line
    if parsed.opaque or parsed.redirects or parsed.wrappers or len(parsed.commands) != 1:
        return None
    command = parsed.commands[0]
    if command.unknown or command.via or command.assignments:
        return None
    return _Spec((command.path or command.words[0], *command.words[1:]), prefix)


def _allows(spec: _Spec, command: SimpleCommand) -> bool:
    """Whether an allow spec covers one simple command."""
    words = command.words
    count = len(spec.words)
    if (command.path or words[0]) != spec.words[0] or len(words) < count:
        return False
    if not _safe_environment(command):
        return False
    if any(i in command.unknown for i in range(count)) or words[1:count] != spec.words[1:]:
        return False
    if not spec.prefix:
        return len(words) == count and not command.unknown and not command.more
    return all(index < count for index in risky_words(command))


def _safe_environment(command: SimpleCommand) -> bool:
    """Whether the variables a command is given leave the code it runs alone."""
    return all(SAFE_ENVIRONMENT.fullmatch(a.partition("=")[0]) for a in command.assignments)


def _deny_words(spec: str) -> tuple[str, ...]:
    """A deny spec's words (its program reduced to a name)."""
    body = spec.removesuffix(":*")
    try:
        words = shlex.split(body)
    except ValueError:
        words = body.split()
    if not words:
        return ()
    return (posixpath.basename(words[0].rstrip("/")) or words[0], *words[1:])


def _may_be(command: SimpleCommand, spec: tuple[str, ...]) -> bool:
    """Whether a command may be the one a deny spec names.

    The program must be the spec's (or be only known at run time); each of the spec's options
    must be used somewhere (``-rf`` as ``-r -f`` or ``-fr``; ``--force`` also abbreviated), its
    other words must come in order. A word only the run knows may be any of them.
    """
    words = command.words
    if 0 in command.unknown:
        return True
    if words[0] != spec[0]:
        return False
    if command.more or len(command.unknown):
        return True
    used = words[1:]
    position = 0
    for word in spec[1:]:
        if word.startswith("--") and len(word) > 2:
            found = any(u.startswith("--") and is_option(u, [word]) for u in used)
        elif word.startswith("-") and len(word) > 1:
            found = word in used or all(
                is_option(u, ["-" + c])
                for c in word[1:]
                for u in [next((u for u in used if is_option(u, ["-" + c])), "")]
            )
        else:
            while position < len(used) and used[position] != word:
                position += 1
            found = position < len(used)
            position += 1
        if not found:
            return False
    return True
