"""Code as a person is shown it: in permission questions, in cards, as diffs; cell ids short.

A question that shows code (the cell NotebookRun would run, the cell NotebookEdit would add,
the diff of the cell it would change) holds it as a Markdown fenced block whose info string
names the language: ``python``, ``markdown``, or ``diff python`` for a unified diff of Python
(:func:`fenced`). The prompt on stdin shows the block without its fences (:func:`plain_text`);
a card highlights it (:func:`code_html`) in the colours of JupyterLab's editor, the added and
removed lines of a diff tinted. The colours are the theme's ``--jp-mirror-editor-*``
variables, set inline: no stylesheet is needed, a dark theme gets its own colours, and a front
end without those variables shows the code plain.
"""

from __future__ import annotations

import difflib
import html
import re
from functools import cache
from typing import Any

from nbagent.core.markup import show_controls
from nbagent.core.secrets import ONE_LINE, redact

SHORT_ID = 8
"""How many characters of a cell id a person is shown (as git shows commits)."""

QUESTION_CHARS = 2000
"""The most characters of code a question shows; the rest is counted."""

_FENCE = re.compile(r"^(`{3,})([A-Za-z][\w+-]*(?: [A-Za-z][\w+-]*)*)?$")

_KEYWORD = "font-weight:bold;color:var(--jp-mirror-editor-keyword-color)"
_STYLES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("Comment",), "font-style:italic;color:var(--jp-mirror-editor-comment-color)"),
    (("Keyword", "Constant"), "color:var(--jp-mirror-editor-atom-color)"),
    (("Keyword",), _KEYWORD),
    (("Operator", "Word"), _KEYWORD),
    (("Operator",), "font-weight:bold;color:var(--jp-mirror-editor-operator-color)"),
    (("Name", "Builtin"), "color:var(--jp-mirror-editor-builtin-color)"),
    (("Name", "Function"), "color:var(--jp-mirror-editor-def-color)"),
    (("Name", "Class"), "color:var(--jp-mirror-editor-def-color)"),
    (("Name", "Decorator"), "color:var(--jp-mirror-editor-meta-color)"),
    (("Name", "Tag"), "color:var(--jp-mirror-editor-link-color)"),
    (("Literal", "String", "Escape"), "color:var(--jp-mirror-editor-string-2-color)"),
    (("Literal", "String", "Interpol"), "color:var(--jp-mirror-editor-string-2-color)"),
    (("Literal", "String"), "color:var(--jp-mirror-editor-string-color)"),
    (("Literal", "Number"), "color:var(--jp-mirror-editor-number-color)"),
    (("Punctuation",), "color:var(--jp-mirror-editor-punctuation-color)"),
    (("Generic", "Heading"), "font-weight:bold;color:var(--jp-mirror-editor-header-color)"),
    (("Generic", "Subheading"), "font-weight:bold;color:var(--jp-mirror-editor-header-color)"),
    (("Generic", "Strong"), "font-weight:bold"),
    (("Generic", "Emph"), "font-style:italic"),
)
"""Pygments token types (the first that a token's type falls under) and their style: the
mapping of JupyterLab's own editor (keywords and operators bold, comments italic)."""

_LINE = "display:block"
_DIFF_LINES = {
    "+": f"{_LINE};background:color-mix(in srgb,var(--jp-success-color1) 18%,transparent)",
    "-": f"{_LINE};background:color-mix(in srgb,var(--jp-error-color1) 18%,transparent)",
    "@": f"{_LINE};color:var(--jp-ui-font-color2)",
}
"""The style of a diff's added, removed and hunk-header lines (other lines: :data:`_LINE`)."""


def short_id(cell_id: str) -> str:
    """Return a cell id as a person is shown it: its first :data:`SHORT_ID` characters.

    Args:
        cell_id: A cell's id (JupyterLab's are 36 characters long).
    """
    return cell_id[:SHORT_ID]


def capped(code: str, chars: int = QUESTION_CHARS) -> str:
    """Return code cut at a line end before ``chars`` characters, the rest counted.

    Args:
        code: The code.
        chars: The most characters kept.
    """
    if len(code) <= chars:
        return code
    end = code.rfind("\n", 0, chars)
    end = end if end > 0 else chars
    return f"{code[:end]}\n… ({len(code) - end:,} more characters)"


def fenced(code: str, info: str) -> str:
    """Return code as a Markdown fenced block, its fence longer than any run of backticks in it.

    Args:
        code: The code.
        info: Its language (``python``), or ``diff`` and the language of a diff.
    """
    longest = max((len(run) for run in re.findall("`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{code}\n{fence}"


def cell_diff(old: str, new: str) -> str:
    """Return a unified diff of a cell's source (no file header: the question names the cell).

    Args:
        old: The source as it is.
        new: The source it would get.

    Returns:
        The hunks (``@@ -1,2 +1,3 @@`` then `` ``, ``-`` and ``+`` lines), empty when the
        sources are the same.
    """
    lines = difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=3)
    return "\n".join(list(lines)[2:])


def diff_counts(old: str, new: str) -> tuple[int, int]:
    """Count the lines a change of source adds and removes.

    Args:
        old: The source as it is.
        new: The source it would get.
    """
    matcher = difflib.SequenceMatcher(None, old.split("\n"), new.split("\n"), autojunk=False)
    added = removed = 0
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag != "equal":
            removed += old_end - old_start
            added += new_end - new_start
    return added, removed


def question_parts(text: str) -> list[tuple[str | None, str]]:
    """Split a question into its words and its fenced blocks of code, in order.

    Args:
        text: A question (a permission decision's message).

    Returns:
        ``(None, words)`` and ``(info, code)`` pairs; a fence never closed is words.
    """
    parts: list[tuple[str | None, str]] = []
    words: list[str] = []

    def said() -> None:
        if "\n".join(words).strip():
            parts.append((None, "\n".join(words).strip("\n")))
        words.clear()

    lines = text.split("\n")
    at = 0
    while at < len(lines):
        opening = _FENCE.match(lines[at])
        fence = opening.group(1) if opening else None
        close = lines.index(fence, at + 1) if fence and fence in lines[at + 1 :] else -1
        if opening is None or close < 0:
            words.append(lines[at])
            at += 1
            continue
        said()
        parts.append((opening.group(2) or "", "\n".join(lines[at + 1 : close])))
        at = close + 1
    said()
    return parts


def words_of(text: str) -> str:
    """Return a question's words, without its code.

    Args:
        text: A question.
    """
    return "\n\n".join(part for info, part in question_parts(text) if info is None)


def plain_text(text: str) -> str:
    """Return a question as plain text: its blocks of code without their fences.

    Args:
        text: A question.
    """
    return "\n\n".join(part for _, part in question_parts(text))


def code_html(code: str, info: str) -> str:
    """Return a block of a question as a highlighted ``<pre>`` (a diff's lines tinted).

    The code is redacted as the question is (:data:`~nbagent.core.secrets.ONE_LINE`) and its
    invisible characters shown before it is highlighted, so no token splits a secret.

    Args:
        code: The block's code.
        info: Its info string: a language (``python``, ``markdown``; another or none: plain),
            or ``diff`` and a language.
    """
    shown = show_controls(redact(code, shapes=ONE_LINE))
    kind, _, language = info.partition(" ")
    if kind == "diff":
        body = "".join(_diff_lines(shown, language))
    else:
        body = "\n".join(_highlighted(shown, kind))
    return f'<pre class="nbagent-code"><code>{body}</code></pre>'


def _diff_lines(diff: str, language: str) -> list[str]:
    """A diff's lines as block elements, each hunk's old and new sides highlighted whole (a
    string over several lines stays a string)."""
    lines = diff.split("\n")
    shown: list[str] = []
    at = 0
    while at < len(lines):
        if not lines[at].startswith("@@"):
            shown.append(f'<span style="{_LINE}">{_escape(lines[at])}</span>')
            at += 1
            continue
        end = next((i for i in range(at + 1, len(lines)) if lines[i].startswith("@@")), None)
        hunk = lines[at + 1 : end]
        body = [line for line in hunk if line[:1] in (" ", "-", "+")]
        old = iter(_highlighted("\n".join(line[1:] for line in body if line[0] != "+"), language))
        new = iter(_highlighted("\n".join(line[1:] for line in body if line[0] != "-"), language))
        shown.append(f'<span style="{_DIFF_LINES["@"]}">{_escape(lines[at])}</span>')
        for line in hunk:
            mark = line[:1]
            if mark not in (" ", "-", "+"):
                shown.append(f'<span style="{_LINE}">{_escape(line)}</span>')
                continue
            text = next(new) if mark == "+" else next(old)
            if mark == " ":
                next(new)
            shown.append(f'<span style="{_DIFF_LINES.get(mark, _LINE)}">{mark}{text}</span>')
        at = len(lines) if end is None else end
    return shown


def _highlighted(code: str, language: str) -> list[str]:
    """Code as HTML, one string per line, its tokens coloured when the language is known."""
    lexer = _lexer(language)
    if lexer is None:
        return [_escape(line) for line in code.split("\n")]
    lines: list[list[tuple[str, str]]] = [[]]  # each line's runs of one style
    for kind, value in lexer.get_tokens(code):
        style = _style(kind)
        for number, piece in enumerate(value.split("\n")):
            if number:
                lines.append([])
            runs = lines[-1]
            if piece and runs and runs[-1][0] == style:
                runs[-1] = (style, runs[-1][1] + piece)
            elif piece:
                runs.append((style, piece))
    return [
        "".join(
            f'<span style="{style}">{_escape(text)}</span>' if style else _escape(text)
            for style, text in runs
        )
        for runs in lines[: code.count("\n") + 1]
    ]


@cache
def _lexer(language: str) -> Any:
    """The Pygments lexer of a language (IPython's for Python: magics, ``!`` lines), or None."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    options = {"stripnl": False, "ensurenl": True}
    if language in ("python", "ipython", "python3", "ipython3"):
        try:
            from IPython.lib.lexers import IPython3Lexer

            return IPython3Lexer(**options)
        except ImportError:
            language = "python"
    if not language or language == "text":
        return None
    try:
        return get_lexer_by_name(language, **options)
    except ClassNotFound:
        return None


def _style(kind: Any) -> str:
    """The style of a Pygments token type: that of the first entry of :data:`_STYLES` it falls
    under, else none."""
    path = tuple(kind)
    return next((style for parts, style in _STYLES if path[: len(parts)] == parts), "")


def _escape(text: str) -> str:
    """Text (already redacted and its invisible characters shown) as HTML that shows it as
    written, ``$`` and ``\\`` as character references (:func:`~nbagent.core.markup.escape_html`)."""
    return html.escape(text).replace("$", "&#36;").replace("\\", "&#92;")
