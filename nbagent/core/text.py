"""Text operations, one helper each: the units search matches (tool-name parts, words,
character n-grams for CJK scripts), and the short forms a person reads (a text cut at its end
or its start, its first line, a description's first sentence, a count with its noun).

Chinese and Japanese have no spaces between words, so a word match cannot work there. Runs
of CJK characters are cut into overlapping character bigrams instead (and single characters,
so one-character queries still match); Latin-script text is cut into words.

>>> split_name("mcp__slack__send_message")
('slack', 'send', 'message')
>>> split_name("getHTTPResponse")
('get', 'http', 'response')
>>> Units.of("发送消息 to Slack").words, sorted(Units.of("发送消息").grams)
(('to', 'slack'), ['发送', '消息', '送消'])
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af"


@functools.cache
def _cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A word or a CJK run, and a CJK run: compiled at first use (their character classes
    take about 5 ms to compile, which ``%load_ext nbagent`` need not wait for)."""
    return re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+"), re.compile(rf"[{_CJK}]+")


_NAME_CHUNK = re.compile(r"[_\-\s.:/]+")
_NAME_PART = re.compile(
    r"[A-Z]+(?=[A-Z][a-z])|[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W_A-Za-z0-9]+"
)
MCP_PREFIX = "mcp__"
"""The prefix of every MCP tool name: ``mcp__<server>__<tool>``."""


def split_name(name: str) -> tuple[str, ...]:
    """Split a tool name into lower-case parts on ``__``, ``_``, ``-`` and CamelCase.

    The ``mcp__`` prefix is dropped; the server's name stays a part.

    Args:
        name: A tool name.

    Returns:
        The parts, in order.
    """
    body = name[len(MCP_PREFIX) :] if name.lower().startswith(MCP_PREFIX) else name
    return tuple(
        part.lower() for chunk in _NAME_CHUNK.split(body) for part in _NAME_PART.findall(chunk)
    )


def words(text: str) -> list[str]:
    """Return the lower-case Latin-script (and other spaced-script) words of a text, in order."""
    token, cjk_run = _cjk_patterns()
    return [t for t in token.findall(text.lower()) if not cjk_run.fullmatch(t)]


def cjk_grams(text: str, with_unigrams: bool = False) -> set[str]:
    """Return the character bigrams of every CJK run in a text.

    Args:
        text: Any text.
        with_unigrams: Also return every single CJK character (for indexing documents).

    Returns:
        The n-grams; a one-character run gives itself.
    """
    grams: set[str] = set()
    for run in _cjk_patterns()[1].findall(text):
        if len(run) == 1 or with_unigrams:
            grams.update(run)
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
    return grams


@dataclass(frozen=True)
class Units:
    """The searchable units of a piece of text: words and CJK n-grams."""

    words: tuple[str, ...]
    """Lower-case words, in order, without repeats."""
    grams: frozenset[str]
    """CJK character n-grams."""

    @classmethod
    def of(cls, text: str) -> Units:
        """Cut a text (a query term) into units.

        Args:
            text: The text.

        Returns:
            Its units.
        """
        return cls(words=tuple(dict.fromkeys(words(text))), grams=frozenset(cjk_grams(text)))

    def __bool__(self) -> bool:
        """Tell whether there is anything to search for."""
        return bool(self.words or self.grams)


def cut(text: str, limit: int) -> str:
    """A text cut to ``limit`` characters, the cut marked with an ellipsis.

    Args:
        text: The text.
        limit: The most characters (at least 1).

    Returns:
        The text, or its start and ``…``.
    """
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def cut_start(text: str, limit: int) -> str:
    """A text cut to ``limit`` characters from the start (a long path keeps its end).

    Args:
        text: The text.
        limit: The most characters (at least 1).

    Returns:
        The text, or ``…`` and its end.
    """
    return text if len(text) <= limit else "…" + text[len(text) - max(limit - 1, 0) :]


def collapse_whitespace(text: str) -> str:
    """A text with every run of white space (newlines included) made one space.

    Args:
        text: Any text.

    Returns:
        The text, with no white space at its ends.
    """
    return " ".join(text.split())


def one_line(text: str, width: int) -> str:
    """A text on one line, cut to ``width`` characters: its white space collapsed
    (:func:`collapse_whitespace`), the cut marked with an ellipsis (:func:`cut`).

    Args:
        text: Any text (a message, an error, a quotation).
        width: The most characters (at least 1).

    Returns:
        The line.
    """
    return cut(collapse_whitespace(text), width)


def first_line(text: str | None, width: int = 80) -> str:
    """The first non-blank line of a text, cut to ``width`` characters with an ellipsis.

    Args:
        text: Any text (a description, an error), or None.
        width: The most characters.

    Returns:
        The line; empty for an empty text.
    """
    stripped = (text or "").strip()
    line = stripped.splitlines()[0] if stripped else ""
    return cut(line, width)


def first_line_noting_more(text: str) -> str:
    """The first non-blank line of a text, with `` …`` when more lines follow.

    Args:
        text: Any text (a command, a piece of code).

    Returns:
        The line, its runs of spaces kept.
    """
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[0].strip() + (" …" if len(lines) > 1 else "")


def plural(count: int, noun: str, nouns: str = "") -> str:
    """``1 tool``, ``2 tools``.

    Args:
        count: How many.
        noun: The singular noun.
        nouns: The plural noun, when it is not ``noun`` and an s.

    Returns:
        The phrase.
    """
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<!\b\w)[.!?](?=\s+[A-Z]|$)|[。！？]")


def description_line(text: str | None, width: int = 120) -> str:
    """The first sentence of a description, cut to ``width`` characters.

    The sentence ends at the first ``.``, ``!`` or ``?`` before a capital letter, or at the end
    of the first paragraph (unless the next one goes on in lower case).

    Args:
        text: A tool's description (a docstring, an MCP server's text), or None.
        width: The most characters, an ellipsis included.

    Returns:
        One line; empty for an empty text.
    """
    paragraphs = _PARAGRAPH_BREAK.split((text or "").strip())
    line = collapse_whitespace(paragraphs[0])
    for more in paragraphs[1:]:  # a sentence cut by a blank line (a docstring's first line)
        ended = line.endswith((".", "!", "?", ":", "。", "！", "？"))
        if ended or len(line) > width or not more.lstrip()[:1].islower():
            break
        line += " " + collapse_whitespace(more)
    end = _SENTENCE_END.search(line)
    if end:
        line = line[: end.end()]
    return cut(line, width)
