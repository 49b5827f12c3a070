"""The paths a word may name, spelled out: variables' values, ``~``, brace expansions and
globs expanded, the value after ``=`` and after an option letter, ``..`` collapsed."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from itertools import islice, product

from nbagent.policy.commandline.globs import MAX_EXPANSIONS, glob_paths
from nbagent.policy.commandline.results import short
from nbagent.policy.commandline.words import BRACES, Word, expand_user

_MAX_VALUES = 16
"""Values of one variable followed into a path."""
_MAX_SPELLINGS = 64
"""Spellings of one word (the product of its variables' values)."""
_EXTGLOB = re.compile(r"[?*+@!]\(")


def path_candidates(word: Word, values: Mapping[str, list[str]]) -> tuple[list[str], list[str]]:
    """The spellings of a path a word may name (see
    :func:`~nbagent.policy.commandline.paths_named`).

    Args:
        word: The word.
        values: The values the line gives variables (the environment's are looked up too).

    Returns:
        The spellings, and why they may not be all of them (a cap reached, a glob this cannot
        match the way bash does): such a line is opaque.
    """
    problems: list[str] = []
    pieces: list[list[str]] = []
    for kind, text in word.parts:
        if kind == "$":
            known = values.get(text) or ([os.environ[text]] if text in os.environ else [])
            if text == "HOME" and not known:
                known = [expand_user("~")]
            known = list(dict.fromkeys(known))
            if len(known) > _MAX_VALUES:
                problems.append(f"${text} has too many values to follow")
            pieces.append(known[:_MAX_VALUES] or ["$" + text])
        else:
            pieces.append([text])
    spelled = ["".join(p) for p in islice(product(*pieces), _MAX_SPELLINGS + 1)]
    if len(spelled) > _MAX_SPELLINGS:
        problems.append(f"{short(word.text)} has too many spellings to follow")
        spelled = spelled[:_MAX_SPELLINGS]
    if word.tilde:
        spelled = [expand_user(s) for s in spelled]
    unquoted = any(kind in "u$" for kind, _ in word.parts)
    found: list[str] = []
    for text in spelled:
        expansions, complete = _braces(text)
        if not complete:
            problems.append(f"{short(word.text)} expands to too many words to follow")
        for expanded in expansions:
            found.append(expanded)
            if unquoted and _EXTGLOB.search(expanded):
                problems.append(f"an extended glob this cannot match: {short(word.text)}")
            elif re.search(r"[*?[]", expanded) and "\0" not in expanded:
                matches = glob_paths(expanded)
                if matches is None:
                    problems.append(f"a glob this cannot match as bash does: {short(word.text)}")
                else:
                    found += matches[:MAX_EXPANSIONS]
                    if len(matches) > MAX_EXPANSIONS:
                        problems.append(f"{short(word.text)} matches too many paths to follow")
            if "=" in expanded:
                found.append(expand_user(expanded.partition("=")[2]))
            tail = re.search(r"(?<=.)[/~].*", expanded)
            if tail and expanded.startswith("-"):
                found.append(expand_user(tail[0]))
    found += [expand_user(p) for p in found if p.startswith("~")]
    found += [posixpath.normpath(p) for p in found if "/." in p or "//" in p]
    return [p for p in dict.fromkeys(found) if p], problems


def _braces(text: str, limit: int = MAX_EXPANSIONS) -> tuple[list[str], bool]:
    """Bash brace expansion (``{a,b}``, ``{1..3}``, ``{01..9..2}``, ``{a..c}``).

    Returns:
        At most ``limit`` results, and whether they are all of them.
    """
    match = BRACES.search(text)
    if not match:
        return [text], True
    body = match[0][1:-1]
    sequence = re.fullmatch(r"(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.(-?\d+))?", body)
    complete = True
    if sequence:
        first, last, increment = sequence.groups()
        numbers = first.lstrip("-").isdigit() and last.lstrip("-").isdigit()
        if not numbers and (first.lstrip("-").isdigit() or last.lstrip("-").isdigit()):
            return [text], False  # {1..a}: bash keeps these braces and expands later ones
        else:
            low, high = (int(v) if numbers else ord(v) for v in (first, last))
            step = abs(int(increment or 1)) or 1
            step = step if high >= low else -step
            count = abs(high - low) // abs(step) + 1
            complete = count <= limit
            values = range(low, low + step * min(count, limit), step)
            padded = any(re.fullmatch(r"-?0\d+", v) for v in (first, last))
            width = max(len(first), len(last)) if padded else 0
            options = [str(v).zfill(width) if numbers else chr(v) for v in values]
    else:
        options = body.split(",")
    results: list[str] = []
    for option in options:
        more, whole = _braces(text[: match.start()] + option + text[match.end() :], limit)
        results += more
        complete = complete and whole
        if len(results) > limit:
            return results[:limit], False
    return results[:limit], complete
