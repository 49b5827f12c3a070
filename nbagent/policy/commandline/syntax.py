"""The syntax tree of shell code: tree-sitter-bash, the text mended where it misreads, and the
node kinds and tree shapes the reader relies on.

tree-sitter is imported on first use: ``import nbagent`` stays fast.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import TYPE_CHECKING

from nbagent.policy.commandline.words import names

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


STATEMENTS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "compound_statement",
        "do_group",
        "negated_command",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "case_item",
    }
)
"""Nodes that hold statements (and tokens): read child by child."""

TOKENS = names(
    "; & && || | |& ( ) { } ! if then else elif fi while until do done for select in case esac "
    ";; ;& ;;& function"
) | {"\n"}
"""The tokens of shell syntax between statements."""

PLAIN_EXPANSION = frozenset({"${", "}", "variable_name", "special_variable_name"})
"""The children of a plain ``${NAME}``."""

WORDS = frozenset(
    {
        "word",
        "number",
        "string",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
        "extglob_pattern",
        "regex",
        "variable_name",
        "test_operator",
        "$",
    }
)
"""Nodes that are (parts of) words."""

STATEMENT_TYPES = frozenset(
    {
        "command",
        "redirected_statement",
        "list",
        "pipeline",
        "compound_statement",
        "subshell",
        "if_statement",
        "while_statement",
        "for_statement",
        "case_statement",
        "negated_command",
        "variable_assignment",
        "declaration_command",
        "test_command",
    }
)
"""Statements, looked for inside nodes that are read no further (a function's body)."""

EXPRESSIONS = frozenset(
    {
        "binary_expression",
        "unary_expression",
        "parenthesized_expression",
        "ternary_expression",
        "postfix_expression",
    }
)
"""The expressions of ``[[ ]]``."""

RESERVED = names(
    "{ } if then else elif fi do done while until for case esac select function in ! [[ ]]"
)
"""Reserved words, which tree-sitter may read as a program's name (``! { ...; }``)."""

_NOT_ASCII = re.compile(rb"[\x80-\xff]")
_BLANK = re.compile(rb"(?:[ \t\r\n]|\\\n)*")


@functools.cache
def _parser() -> tuple[Parser, threading.Lock]:
    """The tree-sitter parser for bash (imported on first use: ``import nbagent`` stays fast)."""
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language())), threading.Lock()


def _tree(source: bytes) -> Node:
    """Parse source text and return the root node.

    Tree-sitter sees every byte outside ASCII as ``_`` (same offsets; values are read from the
    real text): tree-sitter-bash 0.25 crashes the process on ``{`` followed by a 4-byte UTF-8
    character (tree-sitter/tree-sitter-bash#337), and outside ASCII bash has no operators.
    """
    parser, lock = _parser()
    with lock:
        return parser.parse(_NOT_ASCII.sub(b"_", source)).root_node


def parse_source(source: bytes) -> tuple[bytes, Node]:
    """Parse shell code, first mending the text where tree-sitter would misread it.

    Backslash-newlines are removed where bash removes them (:func:`_join_continuations`),
    and a line that starts with a backslash gets a space in front: tree-sitter takes the line
    break and ``\\rm`` for one word (``ls\\n\\rm f`` would read as ``ls`` with arguments).

    Args:
        source: The code, UTF-8 encoded.

    Returns:
        The mended code, which node offsets refer to, and the root of its tree.
    """
    source = _join_continuations(source)
    root = _tree(source)
    for _ in range(8):
        breaks = sorted(
            {
                node.start_byte + match.end()
                for node in _descendants(root)
                if node.type == "word"
                for match in re.finditer(rb"\n", source[node.start_byte : node.end_byte])
            },
            reverse=True,
        )
        if not breaks:
            break
        for at in breaks:
            source = source[:at] + b" " + source[at:]
        root = _tree(source)
    return source, root


def _descendants(root: Node) -> list[Node]:
    """Every node under a root, the root included."""
    nodes = [root]
    for node in nodes:
        nodes.extend(node.children)
    return nodes


def _join_continuations(source: bytes) -> bytes:
    """Remove backslash-newlines where bash does, before tree-sitter splits words at them.

    ``r\\<newline>m`` is ``rm`` to bash; tree-sitter reads two words. Inside single quotes,
    ``$'..'``, comments and here-documents the pair stays (a here-document fed to a shell is
    read again as code, where it is removed).
    """
    if b"\\\n" not in source:
        return source
    root = _tree(source)
    keep = {"raw_string", "ansi_c_string", "comment", "heredoc_body", "heredoc_content"}
    cut = []
    for match in re.finditer(rb"\\\n", source):
        at = match.start()
        before = at
        while before and source[before - 1] == 0x5C:  # an escaped backslash ends no line
            before -= 1
        if (at - before) % 2:
            continue
        node: Node | None = root.descendant_for_byte_range(at, at + 1)
        inside = False
        while node is not None:
            inside = inside or node.type in keep
            node = node.parent
        if not inside:
            cut.append(at)
    for at in reversed(cut):
        source = source[:at] + source[at + 2 :]
    return source


def decode(data: bytes) -> str:
    """Text from source bytes (tree-sitter may cut inside a character that is not UTF-8).

    Args:
        data: Bytes of the source.

    Returns:
        The text, with bytes that are not UTF-8 kept as lone surrogates.
    """
    return data.decode("utf-8", "surrogateescape")


def gaps(root: Node, source: bytes) -> list[tuple[Node, bytes]]:
    """The text tree-sitter left out of every node (it drops what it cannot read), by parent.

    ``python - <<EOF`` loses its ``-``: such plain words are put back; any other gap makes
    the line opaque.

    Args:
        root: The root of the tree.
        source: The code it was parsed from.

    Returns:
        Each gap that is not blank, with the node it was left out of.
    """
    found = [
        (root, text)
        for text in (source[: root.start_byte], source[root.end_byte :])
        if not _BLANK.fullmatch(text)
    ]
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "heredoc_body":
            continue
        position = node.start_byte
        for child in node.children:
            if not _BLANK.fullmatch(source[position : child.start_byte]):
                found.append((node, source[position : child.start_byte]))
            position = child.end_byte
            stack.append(child)
        if node.children and not _BLANK.fullmatch(source[position : node.end_byte]):
            found.append((node, source[position : node.end_byte]))
    return found


def destination_words(redirect: Node) -> list[list[Node]]:
    """The destination words of a file redirection, each as its adjacent nodes.

    Tree-sitter puts the words after the target there (``ls > out x``), and may split one word
    in several nodes (``> a'b'\\c``).

    Args:
        redirect: The redirection.

    Returns:
        The words, the target first.
    """
    words: list[list[Node]] = []
    for index, child in enumerate(redirect.children):
        if redirect.field_name_for_child(index) == "destination":
            if words and words[-1][-1].end_byte == child.start_byte:
                words[-1].append(child)
            else:
                words.append([child])
    return words


def extra_words(redirect: Node) -> list[list[Node]]:
    """Words tree-sitter puts in a redirection that belong to the command.

    ``ls > out x``: ``x`` is an argument of ``ls``; so is ``b`` in ``cat a <<EOF b``.

    Args:
        redirect: The redirection.

    Returns:
        The words, each as its adjacent nodes.
    """
    words = destination_words(redirect)[1:]
    for index, child in enumerate(redirect.children):
        if child.type == "file_redirect":
            words += destination_words(child)[1:]
        elif redirect.field_name_for_child(index) == "argument":
            words.append([child])
    return words


def rightmost_command(node: Node | None) -> Node | None:
    """The simple command that words after a statement's redirection belong to, if any.

    Args:
        node: The statement's body.

    Returns:
        The last command of its pipelines and lists; None when that is no simple command.
    """
    while node is not None and node.type in ("pipeline", "list", "redirected_statement"):
        parts = [c for c in node.named_children if not c.type.endswith("_redirect")]
        node = parts[-1] if parts else None
    return node if node is not None and node.type == "command" else None
