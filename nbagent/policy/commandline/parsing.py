"""A command line read once (cached) for every question asked about it: :func:`parse`, what
it runs, and :func:`paths_named`, the paths it may name."""

from __future__ import annotations

import dataclasses
import functools
import posixpath
from dataclasses import dataclass

from nbagent.policy.commandline.paths import path_candidates
from nbagent.policy.commandline.reader import Reader, Shared
from nbagent.policy.commandline.results import CommandLine
from nbagent.policy.commandline.words import Word


def parse(line: str) -> CommandLine:
    """Read a command line the way bash would run it.

    The reading is cached (a policy asks several questions about one line); the paths the line
    names are spelled out anew each time (globs match the files as they are now), and the line
    is opaque when they cannot all be.

    Args:
        line: The command line, as given to ``bash -c``.

    Returns:
        Its simple commands, why it is opaque (if it is), and the files it redirects.
    """
    reading = read(line)
    problems = _paths(reading)[1]
    if not problems:
        return reading.line
    return dataclasses.replace(reading.line, opaque=(*reading.line.opaque, *problems))


def paths_named(line: str) -> tuple[str, ...]:
    """Every path a line may name, spelled out, so a policy can deny lines touching secrets.

    Each word of the line (arguments, assignment values, redirection targets, nested commands'
    words) is given after quote removal, with ``~``, ``$HOME``, ``${HOME}`` (and other
    variables the line sets or the environment has) expanded, brace expansions and globs
    expanded (globs matched the way bash matches them, hidden files included: ``[[:lower:]]``,
    ``[!x]``, ``[^x]``; what cannot be matched so, an extended glob, or more values, words or
    paths than are followed make :func:`parse` call the line opaque, never a silent cut), the
    value after an ``=`` and the tail after a leading option letter (``--file=~/.ssh/id_rsa``,
    ``-f/home/u/.ssh/id_rsa``), ``..`` collapsed, and joined to the folders earlier ``cd``
    commands moved to (``cd ~/.ssh && cat id_rsa``).

    Args:
        line: The command line.

    Returns:
        The candidate paths, each once, in order.
    """
    return _paths(read(line))[0]


def _paths(reading: Reading) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The paths a line may name, and why they may not be all of them (see
    :func:`~nbagent.policy.commandline.paths.path_candidates`)."""
    found: dict[str, None] = {}
    problems: dict[str, None] = {}
    for word, dirs in reading.path_words:
        candidates, trouble = path_candidates(word, reading.values)
        problems.update(dict.fromkeys(trouble))
        for candidate in candidates:
            found.setdefault(candidate)
            if not candidate.startswith("/"):
                for folder in dirs:
                    found.setdefault(posixpath.normpath(posixpath.join(folder, candidate)))
    return tuple(found), tuple(problems)


@dataclass
class Reading:
    """Everything read from a line: the public result and what :func:`paths_named` needs."""

    line: CommandLine
    """What the line runs (without the problems of its paths)."""
    path_words: list[tuple[Word, tuple[str, ...]]]
    """The words that may name paths, each with the folders earlier ``cd`` commands went to."""
    values: dict[str, list[str]]
    """The values the line gives variables."""


@functools.lru_cache(maxsize=512)
def read(line: str) -> Reading:
    """Read a line (cached: the policy asks several questions about one line).

    Args:
        line: The command line.

    Returns:
        What the line runs, and the words and values its paths are spelled from.
    """
    reader = Reader(depth=0, via=(), dirs=(), shared=Shared())
    try:
        reader.code(line)
        if reader.evaluates:
            for text in reader.strings:
                reader.scan(text)
    except RecursionError:
        reader.hide("the line is nested too deeply to read")
    return Reading(
        CommandLine(
            tuple(reader.commands),
            tuple(dict.fromkeys(reader.opaque)),
            tuple(dict.fromkeys(reader.redirects)),
            tuple(reader.wrappers),
            tuple(reader.possible),
        ),
        reader.path_words,
        reader.shared.values,
    )
