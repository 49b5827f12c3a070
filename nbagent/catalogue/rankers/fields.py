"""What the BM25 and semantic rankers read of a tool: its text fields, cut into tokens.

A tool has six fields: its own name's parts, its MCP server's name parts, the search hint,
the description, the parameter names and the parameter descriptions (top-level properties of
the input schema). Tokens are lower-case words with a light plural stemmer (Harman's
S-stemmer: ``issues`` -> ``issue``, ``queries`` -> ``query``), and for Chinese and Japanese,
which have no spaces, every character and character bigram (see :mod:`nbagent.core.text`).

>>> tokens("Lists open issues; 列出问题")
['list', 'open', 'issue', '出', '出问', '列', '列出', '问', '问题', '题']
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from nbagent.catalogue.toolsearch import Term, parse_tool_name
from nbagent.core.text import cjk_grams, split_name, words
from nbagent.core.tool import Tool

FIELDS = ("name", "server", "hint", "description", "params", "param_docs")
"""The field names, in the order :class:`ToolFields` holds them."""


def stem(word: str) -> str:
    """Strip an English plural ending (Harman's S-stemmer).

    Args:
        word: A lower-case word.

    Returns:
        ``-ies`` -> ``-y`` (not ``-eies``, ``-aies``); ``-es`` -> ``-e`` (not ``-aes``,
        ``-ees``, ``-oes``); ``-s`` dropped (not ``-us``, ``-ss``); else the word. Words of
        three letters or fewer are kept.
    """
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("us", "ss")):
        return word
    return word[:-1]


def cjk_tokens(text: str) -> list[str]:
    """Return the distinct CJK characters and character bigrams of a text.

    Args:
        text: Any text.

    Returns:
        The n-grams, sorted.
    """
    return sorted(cjk_grams(text, with_unigrams=True))


def tokens(text: str) -> list[str]:
    """Cut a text into search tokens: stemmed words, then CJK characters and bigrams.

    Args:
        text: Any text.

    Returns:
        The words in order with repeats (term frequency counts), then each distinct CJK
        n-gram once.
    """
    return [stem(word) for word in words(text)] + cjk_tokens(text)


def name_tokens(parts: Iterable[str]) -> list[str]:
    """Stem the parts of a name (already lower-case and split).

    Args:
        parts: Name parts such as ``("list", "issues")``.

    Returns:
        The stemmed parts.
    """
    return [token for part in parts for token in tokens(part)]


@dataclass(frozen=True)
class ToolFields:
    """A tool's tokens, field by field."""

    name: str
    """The tool's name."""
    fields: tuple[tuple[str, ...], ...]
    """The tokens of each field, in :data:`FIELDS` order."""
    text: str
    """The tool as one line of prose, for sentence embeddings."""

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        """Every token of every field."""
        return frozenset(token for field in self.fields for token in field)

    @classmethod
    def of(cls, tool: Tool) -> ToolFields:
        """Analyse a tool, once: the analysis is kept while the tool lives (tools are frozen).

        Args:
            tool: The tool.

        Returns:
            Its fields.
        """
        analysed = _ANALYSED.get(tool)
        if analysed is None:
            analysed = _ANALYSED[tool] = cls._analyse(tool)
        return analysed

    @classmethod
    def _analyse(cls, tool: Tool) -> ToolFields:
        """Analyse a tool (see :meth:`of`)."""
        parsed = parse_tool_name(tool.name)
        own = split_name(tool.name.split("__", 2)[-1]) if parsed.is_mcp else parsed.parts
        server = split_name(parsed.server) if parsed.server else ()
        properties = _properties(tool.input_schema)
        param_docs = [str(p.get("description", "")) for p in properties.values()]
        fields = (
            name_tokens(own),
            name_tokens(server),
            tokens(tool.search_hint),
            tokens(tool.description),
            name_tokens(part for key in properties for part in split_name(key)),
            [token for doc in param_docs for token in tokens(doc)],
        )
        text = " ".join(
            chunk
            for chunk in (
                " ".join(server) + ":" if server else "",
                " ".join(own) + ".",
                tool.search_hint,
                tool.description,
                "Parameters: " + ", ".join(" ".join(split_name(k)) for k in properties) + "."
                if properties
                else "",
            )
            if chunk
        )
        return cls(name=tool.name, fields=tuple(tuple(f) for f in fields), text=text)


_ANALYSED: weakref.WeakKeyDictionary[Tool, ToolFields] = weakref.WeakKeyDictionary()
"""The analysis of each live tool, shared by the rankers (BM25 and the embeddings)."""


def term_tokens(term: Term) -> list[str]:
    """Return the search tokens of one query term.

    Args:
        term: The term.

    Returns:
        Its tokens, without repeats, in order.
    """
    return list(dict.fromkeys(tokens(term.text)))


def requirement(term: Term) -> tuple[list[str], list[str]]:
    """Split a required term into what a tool must contain.

    Args:
        term: The term.

    Returns:
        The words that must all be present, and the CJK n-grams of which at least a third
        must be present.
    """
    grams = cjk_tokens(term.text)
    cjk = set(grams)
    return [t for t in term_tokens(term) if t not in cjk], grams


def has_term(vocabulary: frozenset[str], term: Term) -> bool:
    """Tell whether a tool contains a required term.

    Args:
        vocabulary: The tool's tokens (:attr:`ToolFields.vocabulary`).
        term: The term.

    Returns:
        True when every word of the term is present and, for CJK text, at least a third of
        its characters and bigrams.
    """
    words_, grams = requirement(term)
    found = sum(gram in vocabulary for gram in grams)
    return (
        bool(words_ or grams) and all(w in vocabulary for w in words_) and found * 3 >= len(grams)
    )


def _properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return the top-level properties of an input schema (descriptions may be missing)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {str(k): v if isinstance(v, dict) else {} for k, v in properties.items()}
