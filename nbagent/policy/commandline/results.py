"""What a command line runs, as this package answers: a :class:`CommandLine` and the
:class:`SimpleCommand` objects it lists, and the short texts that say why a line is opaque."""

from __future__ import annotations

from dataclasses import dataclass

from nbagent.core.text import one_line


@dataclass(frozen=True)
class SimpleCommand:
    """One program the line runs, with the words bash passes to it."""

    words: tuple[str, ...]
    """The words after quote and backslash removal, program first, reduced to its name
    (``/bin/rm`` is ``rm``); wrappers and ``VAR=value`` prefixes are not part of them."""
    text: str
    """The source text of this command."""
    unknown: frozenset[int] = frozenset()
    """Indexes of the words whose value only the run decides (``$x``, globs, brace expansion),
    kept as written: such a word may become any number of words."""
    more: bool = False
    """The program gets further words only the run decides (``xargs`` appends its input)."""
    assignments: tuple[str, ...] = ()
    """``NAME=value`` given to the program's environment (prefixes, ``env``'s)."""
    via: tuple[str, ...] = ()
    """The programs that start this one, outermost first (``timeout``, ``bash``, ``find``...)."""
    path: str = ""
    """The program as written when it names a path (``/bin/rm``, ``./ls``), else empty."""
    launcher: bool = False
    """For a wrapper (:attr:`CommandLine.wrappers`): its options were all understood and it
    only starts the next command as the user (``timeout 5``, ``nice -n 5``, ``env FOO=1``,
    ``bash -c``), so an allow rule for that command is enough. ``sudo``, ``ssh`` and the like
    are no launchers: they need an allow rule of their own."""


@dataclass(frozen=True)
class CommandLine:
    """What a command line runs, as far as it can be read."""

    commands: tuple[SimpleCommand, ...]
    """Every simple command the line runs, nested ones included, wrappers taken away."""
    opaque: tuple[str, ...]
    """Why the line can run code that no rule can name, or could not be read; empty when it
    can be judged by its commands alone."""
    redirects: tuple[str, ...]
    """The files that redirections write or read (not ``/dev/null``, ``/dev/stdout``,
    ``/dev/stderr`` or file descriptors)."""
    wrappers: tuple[SimpleCommand, ...] = ()
    """The wrappers, shells and ``eval`` that start those commands, with their own words
    (``timeout 5 rm f``, ``sudo -u x rm f``, ``bash -c 'rm f'``): deny rules look at them too."""
    possible: tuple[SimpleCommand, ...] = ()
    """Commands the line may run that could not be told apart from other words: words after a
    wrapper whose options are not understood, code handed to other interpreters (``python -c``,
    ``awk``) and strings the shell may evaluate. Deny rules count them; allow rules never see
    them (such a line is opaque)."""


def short(text: str, width: int = 60) -> str:
    """Text on one line, cut to a width, for a reason shown to a person
    (:func:`~nbagent.core.text.one_line` at the width reasons quote code at).

    Args:
        text: The text (source code, most often).
        width: The most characters to keep; a cut text ends with ``…``.

    Returns:
        The text.
    """
    return one_line(text, width)
