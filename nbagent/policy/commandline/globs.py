"""Globs matched against the files the way bash matches them (hidden files included, POSIX
classes, ``[!..]`` and ``[^..]``), or not at all when bash may match otherwise."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MAX_EXPANSIONS = 256
"""Words of one brace expansion, paths of one glob (and of each folder level on the way)."""

_GLOB_CLASSES: Mapping[str, Callable[[str], bool]] = {
    "alpha": str.isalpha,
    "digit": lambda c: c in "0123456789",
    "alnum": str.isalnum,
    "upper": str.isupper,
    "lower": str.islower,
    "space": str.isspace,
    "blank": lambda c: c in " \t",
    "punct": lambda c: c.isprintable() and not c.isalnum() and not c.isspace(),
    "print": lambda c: c.isprintable(),
    "graph": lambda c: c.isprintable() and not c.isspace(),
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "word": lambda c: c.isalnum() or c == "_",
}
"""Bash's bracket classes (``[[:alpha:]]``), exact for ASCII characters."""


@dataclass(frozen=True)
class _Bracket:
    """A bracket expression of a glob (``[a-z]``, ``[!x]``, ``[^x]``, ``[[:alpha:]]``)."""

    negated: bool
    chars: str
    ranges: tuple[tuple[str, str], ...]
    classes: tuple[Callable[[str], bool], ...]

    def matches(self, char: str) -> bool:
        """Whether bash may match the character, in any locale and version.

        Outside ASCII any character may match (locales disagree). A range of letters also
        matches the other case (bash before 5.0 compared ranges by the locale's order, where
        ``[a-z]`` holds ``B``); a negated one excludes only its own case.
        """
        if not char.isascii():
            return True
        inside = (
            char in self.chars
            or any(low <= char <= high for low, high in self.ranges)
            or any(test(char) for test in self.classes)
        )
        if self.negated:
            return not inside
        return inside or any(low <= char.swapcase() <= high for low, high in self.ranges)


_GlobToken = str | _Bracket
"""A glob piece: ``*``, ``?``, a literal character as ``\\c``, or a bracket expression."""


def _glob_tokens(pattern: str) -> list[_GlobToken] | None:
    """A glob component read as bash reads it; None when it holds what this cannot match
    the way bash does (``[[=a=]]``, ``[[.a.]]``, an unknown class, a range of other than
    same-case letters or digits)."""
    tokens: list[_GlobToken] = []
    at = 0
    size = len(pattern)
    while at < size:
        char = pattern[at]
        if char == "\\" and at + 1 < size:
            tokens.append("\\" + pattern[at + 1])
            at += 2
        elif char in "*?":
            if not (char == "*" and tokens and tokens[-1] == "*"):
                tokens.append(char)
            at += 1
        elif char == "[":
            read = _bracket(pattern, at)
            if read is False:
                return None
            if read is None:
                tokens.append("\\[")
                at += 1
            else:
                tokens.append(read[0])
                at = read[1]
        else:
            tokens.append("\\" + char)
            at += 1
    return tokens


def _bracket(pattern: str, start: int) -> tuple[_Bracket, int] | None | bool:
    """The bracket expression at ``start`` and the index after it; None when the ``[`` is a
    plain character (no ``]`` closes it), False when this cannot match it as bash does."""
    at = start + 1
    size = len(pattern)
    negated = at < size and pattern[at] in "!^"
    at += negated
    chars: list[str] = []
    ranges: list[tuple[str, str]] = []
    classes: list[Callable[[str], bool]] = []
    first = True
    while at < size and (pattern[at] != "]" or first):
        first = False
        if pattern.startswith(("[=", "[."), at):
            return False
        if pattern.startswith("[:", at):
            close = pattern.find(":]", at + 2)
            if close < 0:
                return False
            test = _GLOB_CLASSES.get(pattern[at + 2 : close])
            if test is None:
                return False
            classes.append(test)
            at = close + 2
            continue
        char = pattern[at]
        if char == "\\" and at + 1 < size:
            at += 1
            char = pattern[at]
        at += 1
        if at + 1 < size and pattern[at] == "-" and pattern[at + 1] != "]":
            high = pattern[at + 1]
            if high == "\\" and at + 2 < size:
                at += 1
                high = pattern[at + 1]
            at += 2
            same = (char + high).isdigit() or all(
                c.isascii() and c.isalpha() and c.islower() == char.islower() for c in (char, high)
            )
            if not same:
                return False
            ranges.append((char, high))
        else:
            chars.append(char)
    if at >= size:
        return None
    return _Bracket(negated, "".join(chars), tuple(ranges), tuple(classes)), at + 1


def _glob_match(tokens: list[_GlobToken], name: str) -> bool:
    """Whether a file name may match a glob component (a leading dot too: bash may have
    ``dotglob`` set)."""
    # positions[i]: the tokens matched so far may end at name[:i]
    positions = {0}
    for token in tokens:
        if token == "*":
            positions = set(range(min(positions), len(name) + 1)) if positions else set()
            continue
        following = set()
        for at in positions:
            if at >= len(name):
                continue
            char = name[at]
            if (
                token == "?"
                or (isinstance(token, _Bracket) and token.matches(char))
                or (isinstance(token, str) and token[1:] == char)
            ):
                following.add(at + 1)
        positions = following
        if not positions:
            return False
    return len(name) in positions


def glob_paths(pattern: str) -> list[str] | None:
    """The existing paths a glob may match, bash's way (POSIX classes, ``[!..]`` and ``[^..]``).

    Args:
        pattern: The glob (a backslash quotes the next character).

    Returns:
        The paths, at most one more than :data:`MAX_EXPANSIONS` (more means the cap was hit);
        None when a component holds what this cannot match as bash does.
    """
    absolute = pattern.startswith("/")
    components = pattern.split("/")[1 if absolute else 0 :]
    prefixes = ["/" if absolute else ""]
    for index, component in enumerate(components):
        tokens = _glob_tokens(component)
        if tokens is None:
            return None
        if all(isinstance(t, str) and t.startswith("\\") for t in tokens):
            literal = "".join(t[1:] for t in tokens if isinstance(t, str))
            prefixes = [p + literal for p in prefixes]
        else:
            matched: list[str] = []
            for prefix in prefixes:
                try:
                    names = [*os.listdir(prefix or "."), ".", ".."]
                except (OSError, ValueError):
                    continue
                matched += [prefix + n for n in sorted(names) if _glob_match(tokens, n)]
                if len(matched) > MAX_EXPANSIONS:
                    return matched
            prefixes = matched
        if index < len(components) - 1:
            prefixes = [p + "/" for p in prefixes]
    return [p for p in prefixes if os.path.lexists(p)]
