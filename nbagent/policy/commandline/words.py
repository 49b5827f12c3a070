"""Shell words as bash passes them to a program: quotes and backslashes removed, ``$'..'``
decoded, the parts only the run decides (``$x``, globs, brace expansion) kept as written."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

BRACES = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
"""A brace expansion (``{a,b}``, ``{1..3}``)."""
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
"""A ``NAME=value`` word."""
ASSIGNMENT_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
"""The start of a word bash reads as an assignment (``NAME=``, ``NAME+=``)."""


def names(text: str) -> frozenset[str]:
    """The names in a space-separated list (tables of names are easier to read so).

    Args:
        text: The names, separated by spaces.

    Returns:
        The set of names.
    """
    return frozenset(text.split())


@dataclass(frozen=True)
class Word:
    """A shell word: its pieces, each literal (quoted or not) or known only at run time."""

    parts: tuple[tuple[str, str], ...]
    """(kind, text): ``u`` unquoted literal, ``q`` quoted literal, ``$`` a plain variable
    (text is its name), ``?`` anything else only the run knows (text is its source)."""
    text: str
    """The source text."""
    start: int = 0
    end: int = 0

    @functools.cached_property
    def dynamic(self) -> bool:
        """Some part's value is only known when the line runs."""
        return any(kind in "$?" for kind, _ in self.parts)

    @functools.cached_property
    def glob(self) -> bool:
        """Bash may turn it into other or several words (unquoted glob or brace expansion)."""
        mask = "".join(text if kind == "u" else "\0" for kind, text in self.parts)
        return bool(re.search(r"[*?[]", mask) or BRACES.search(mask))

    @functools.cached_property
    def known(self) -> bool:
        """Its value is known and bash passes it as one word."""
        return not self.dynamic and not self.glob

    @functools.cached_property
    def value(self) -> str:
        """The value after quote removal; the source text when only the run knows it."""
        if self.dynamic:
            return self.text
        return "".join(text for _, text in self.parts)

    @property
    def tilde(self) -> bool:
        """It starts with an unquoted ``~``."""
        return bool(self.parts) and self.parts[0][0] == "u" and self.parts[0][1].startswith("~")


def literal(text: str, kind: str = "q") -> Word:
    """A word made of literal text.

    Args:
        text: The text.
        kind: ``q`` for quoted text, ``u`` for unquoted text.

    Returns:
        The word.
    """
    return Word(((kind, text),), text)


def unquoted(text: str) -> list[tuple[str, str]]:
    """The parts of unquoted word text: a backslash quotes the next character.

    Args:
        text: The text as written (a backslash-newline is taken away).

    Returns:
        The parts of a :class:`Word`: ``("u", text)`` and ``("q", text)``.
    """
    parts: list[tuple[str, str]] = []
    for match in re.finditer(r"\\\n|\\(.)|[^\\]+|\\$", text, re.DOTALL):
        if match[0] == "\\\n":
            continue
        kind, piece = ("q", match[1]) if match[1] is not None else ("u", match[0])
        if parts and parts[-1][0] == kind:
            parts[-1] = (kind, parts[-1][1] + piece)
        else:
            parts.append((kind, piece))
    return parts


def double_quoted(text: str) -> str:
    """The value of literal text inside double quotes.

    Args:
        text: The text between the quotes.

    Returns:
        The text without the backslashes that quote a ``$``, a backtick, a ``"`` or a
        backslash, and without backslash-newlines.
    """
    return re.sub(r"\\([$`\"\\\n])", lambda m: "" if m[1] == "\n" else m[1], text)


_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def ansi_c(body: str) -> str:
    """Decode the body of a ``$'...'`` string as bash does (a NUL ends it).

    Args:
        body: The text between ``$'`` and ``'``.

    Returns:
        The string bash passes.
    """
    out = []
    i = 0
    while i < len(body):
        char = body[i]
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if char != "\\" or not nxt:
            out.append(char)
            i += 1
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :])[0]  # type: ignore[index]
            out.append(chr(int(digits, 8) & 0xFF))
            i += 1 + len(digits)
        elif nxt in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[nxt]
            digits = re.match(rf"[0-9A-Fa-f]{{0,{width}}}", body[i + 2 :])[0]  # type: ignore[index]
            code = int(digits, 16) if digits else -1
            out.append(chr(code) if 0 <= code <= 0x10FFFF else "\\" + nxt)
            i += 2 + len(digits)
        elif nxt == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append(char + nxt)
            i += 2
    return "".join(out).split("\0")[0]


def unquoted_start(word: Word) -> str:
    """The unquoted literal text a word starts with (where bash looks for ``NAME=``).

    Args:
        word: The word.

    Returns:
        The text, empty when the word starts with a quote or an expansion.
    """
    start = []
    for kind, text in word.parts:
        if kind != "u":
            break
        start.append(text)
    return "".join(start)


def expand_user(path: str) -> str:
    """``~`` and ``~user`` expanded (a path holding NUL names nothing and stays as is).

    Args:
        path: The path.

    Returns:
        The path with its ``~`` expanded.
    """
    return path if "\0" in path else os.path.expanduser(path)
