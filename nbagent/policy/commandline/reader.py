"""The walk over the syntax tree of a line: its statements, words, redirections and
here-documents, with what each runs (:class:`Reader`); the programs a simple command starts are
followed by :mod:`nbagent.policy.commandline.running`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nbagent.policy.commandline.programs import SAFE_ENVIRONMENT
from nbagent.policy.commandline.results import SimpleCommand, short
from nbagent.policy.commandline.running import Stdin, run
from nbagent.policy.commandline.syntax import (
    EXPRESSIONS,
    PLAIN_EXPANSION,
    STATEMENT_TYPES,
    STATEMENTS,
    TOKENS,
    WORDS,
    decode,
    destination_words,
    extra_words,
    gaps,
    parse_source,
    rightmost_command,
)
from nbagent.policy.commandline.words import (
    ASSIGNMENT_START,
    Word,
    ansi_c,
    double_quoted,
    expand_user,
    literal,
    unquoted,
    unquoted_start,
)

if TYPE_CHECKING:
    from tree_sitter import Node


_FD_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_MAX_DEPTH = 6
_MAX_SCANS = 256
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"})
_HEREDOC_CODE = re.compile(r"`|\$\(|\$\[|\$\{(?!(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]|[-@*#?$!])\})")
"""What runs code in an unquoted here-document: substitutions, arithmetic, ``${`` with an
operator (tree-sitter does not read all of them there)."""
_GAP_WORDS = re.compile(rb"\s*[\w\-./=:,+@%]+(?:\s+[\w\-./=:,+@%]+)*\s*")


@dataclass
class Shared:
    """What the readers of one line (and of the code nested in it) share."""

    values: dict[str, list[str]] = field(default_factory=dict)
    """The values the line gives variables, for the paths that use them."""
    scans: int = _MAX_SCANS
    """How many more texts may be searched for commands (searching is recursive)."""


class Reader:
    """Walks a tree-sitter tree of bash and gathers what it runs.

    What it finds goes to its lists (``commands``, ``wrappers``, ``possible``, ``opaque``,
    ``redirects``, ``path_words``), which :func:`~nbagent.policy.commandline.parsing.read` turns
    into a :class:`~nbagent.policy.commandline.results.CommandLine`.

    Args:
        depth: How deep the code is nested in the line (``bash -c``, ``eval``, searched code).
        via: The programs that start the code, outermost first.
        dirs: The folders earlier ``cd`` commands went to.
        shared: What the readers of one line share.
    """

    def __init__(
        self,
        depth: int,
        via: tuple[str, ...],
        dirs: tuple[str, ...],
        shared: Shared,
    ) -> None:
        self.depth = depth
        self.via = via
        self.dirs = dirs
        self.shared = shared
        self.source = b""
        self.commands: list[SimpleCommand] = []
        self.wrappers: list[SimpleCommand] = []
        self.possible: list[SimpleCommand] = []
        self.opaque: list[str] = []
        self.redirects: list[str] = []
        self.path_words: list[tuple[Word, tuple[str, ...]]] = []
        self.strings: list[str] = []
        self.quoted: list[str] = []
        self.evaluates = False
        self.extra: dict[tuple[int, int], list[Word]] = {}
        self.gap_words: dict[tuple[int, int], list[Word]] = {}

    # --------------------------------------------------------------- entry points

    def code(self, text: str) -> None:
        """Read shell code (the line, or code nested in it).

        Args:
            text: The code.
        """
        source, root = parse_source(text.encode("utf-8", "surrogatepass"))
        self.source = source
        if root.has_error:
            self.hide("it has a syntax error (as tree-sitter-bash reads it)")
        for node, gap in gaps(root, source):
            if node.type == "redirected_statement" and _GAP_WORDS.fullmatch(gap):
                key = (node.start_byte, node.end_byte)
                self.gap_words.setdefault(key, []).extend(
                    Word(tuple(unquoted(w)), w) for w in decode(gap).split()
                )
            else:
                self.hide("part of it could not be read")
        self.statement(root, None)

    def nested(self, text: str, via: tuple[str, ...]) -> None:
        """Read code that a program of this line runs (``bash -c``, ``eval``, backticks).

        Args:
            text: The code.
            via: The programs that run it, outermost first.
        """
        if self.depth >= _MAX_DEPTH:
            self.hide(f"code run by {via[-1]} is nested too deeply")
            return
        inner = self.child(via)
        inner.code(text)
        self.merge(inner)

    def scan(self, text: str) -> None:
        """Search code in another language (or text bash may evaluate) for commands.

        The text is read as shell code; every command found, every tail of one that starts at
        a literal word, and the commands in its strings (recursively) become possible commands.

        Args:
            text: The code.
        """
        if not text.strip():
            return
        if self.shared.scans <= 0 or self.depth >= _MAX_DEPTH:
            self.unseen("it holds too much code to search")
            return
        self.shared.scans -= 1
        inner = self.child((*self.via, "code"))
        inner.code(text)
        for command in (*inner.commands, *inner.wrappers, *inner.possible):
            for start in range(len(command.words)):
                if start not in command.unknown:
                    self.possible.append(_tail(command, start))
        self.path_words += inner.path_words
        for string in inner.quoted:
            self.scan(string)

    def child(self, via: tuple[str, ...]) -> Reader:
        """A reader for code nested one level deeper."""
        return Reader(self.depth + 1, via, self.dirs, self.shared)

    def merge(self, inner: Reader) -> None:
        """Take in what a nested reader found."""
        self.commands += inner.commands
        self.wrappers += inner.wrappers
        self.possible += inner.possible
        self.opaque += inner.opaque
        self.redirects += inner.redirects
        self.path_words += inner.path_words
        self.strings += inner.strings
        self.quoted += inner.quoted
        self.evaluates = self.evaluates or inner.evaluates
        self.dirs = inner.dirs

    def hide(self, reason: str) -> None:
        """Record that the line may run a program no one can name from its text.

        Args:
            reason: Why, for a person
                (:attr:`~nbagent.policy.commandline.results.CommandLine.opaque`).
        """
        self.opaque.append(reason)
        self.commands.append(SimpleCommand(("?",), reason, frozenset({0}), via=self.via))

    def unseen(self, reason: str) -> None:
        """Record that a program of the line runs code the line does not show (a script, its
        input): opaque, and it may be any program, so every deny rule matches it.

        Args:
            reason: Why, for a person
                (:attr:`~nbagent.policy.commandline.results.CommandLine.opaque`).
        """
        self.opaque.append(reason)
        self.possible.append(SimpleCommand(("?",), reason, frozenset({0}), via=self.via))

    def text(self, node: Node) -> str:
        """The source text of a node."""
        return decode(self.source[node.start_byte : node.end_byte])

    # ----------------------------------------------------------------- statements

    def statement(self, node: Node, stdin: Stdin | None) -> None:
        """Read a statement (or a container of statements)."""
        kind = node.type
        if kind == "command":
            self.command(node, stdin)
        elif kind in STATEMENTS or kind == "ERROR":
            self.children(node, stdin)
        elif kind == "redirected_statement":
            self.redirected(node, stdin)
        elif kind == "variable_assignment":
            self.assignment(node, standalone=True)
        elif kind == "variable_assignments":
            for child in node.named_children:
                self.assignment(child, standalone=True)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node)
        elif kind == "test_command":
            self.test(node)
        elif kind == "for_statement":
            self.loop(node)
        elif kind == "case_statement":
            self.case(node)
        elif kind == "comment":
            pass
        elif kind == "function_definition":
            self.opaque.append(f"it defines a function: {short(self.text(node))}")
            self.walk_possible(node)
        elif kind == "c_style_for_statement":
            self.arithmetic(node)
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, None)
        elif node.is_named:
            self.unknown(node)
        elif kind not in TOKENS:
            self.opaque.append(f"unexpected {kind!r}")

    def children(self, node: Node, stdin: Stdin | None) -> None:
        """Read the statements in a container; after ``|`` a command reads a pipe."""
        if (
            node.type == "compound_statement"
            and node.child_count
            and (node.children[0].type == "((")
        ):
            self.arithmetic(node)
            return
        piped = False
        for child in node.children:
            if child.type in ("|", "|&"):
                piped = True
            elif child.type in WORDS and child.type != "$":
                self.word(child)
            elif child.is_named:
                self.statement(child, ("pipe", "") if piped else stdin)
                piped = False
            elif child.type not in TOKENS:
                self.opaque.append(f"unexpected {child.type!r}")

    def redirected(self, node: Node, stdin: Stdin | None) -> None:
        """A statement with redirections: what they feed to standard input, the files."""
        body = node.child_by_field_name("body")
        redirects = [c for c in node.children if c.type.endswith("_redirect")]
        extra = self.gap_words.pop((node.start_byte, node.end_byte), [])
        for redirect in redirects:
            extra += [self.concatenate(nodes) for nodes in extra_words(redirect)]
        if extra:
            target = rightmost_command(body)
            if target is None:
                self.hide("words follow a redirection of a compound command")
            else:
                self.extra[(target.start_byte, target.end_byte)] = extra
        for redirect in redirects:
            stdin = self.redirect(redirect) or stdin
        if body is not None:
            self.statement(body, stdin)
        for redirect in redirects:
            self.after_heredoc(redirect)

    def redirect(self, node: Node, more: list[Node] | None = None) -> Stdin | None:
        """Record a redirection; return what it feeds to standard input, if it does.

        Args:
            node: The redirection.
            more: Nodes right after it that bash reads as part of its word.
        """
        kind = node.type
        if kind == "herestring_redirect":
            nodes = [c for c in node.named_children if c.type in WORDS] + (more or [])
            word = self.concatenate(nodes) if nodes else literal("")
            return ("text" if word.known else "code", word.value + "\n")
        if kind == "heredoc_redirect":
            if more:
                self.hide("words stick to a here-document's delimiter")
            return self.heredoc(node)
        destinations = destination_words(node)
        if not destinations:
            return None
        operator = next((c.type for c in node.children if not c.is_named), "")
        target = self.concatenate(destinations[0] + (more or []))
        self.path_words.append((target, self.dirs))
        if operator in (">&", "<&") and target.known and re.fullmatch(r"\d+|-", target.value):
            return None
        if not (target.known and target.value in _FD_TARGETS):
            self.redirects.append(target.value)
        if operator in ("<", "<>") and node.child_by_field_name("descriptor") is None:
            return ("file", target.value)
        return None

    def heredoc(self, node: Node) -> Stdin:
        """A here-document: its body is standard input; expansions in it run in this shell."""
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        quoted = start is not None and bool(re.search(r"['\"\\]", self.text(start)))
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if body is None:
            return ("text", "")
        text = self.text(body)
        if any(c.type == "<<-" for c in node.children):
            text = re.sub(r"(?m)^\t+", "", text)
        if quoted:
            return ("text", text)
        dynamic = False
        for child in body.named_children:
            if child.type != "heredoc_content":
                dynamic = self.word(child).dynamic or dynamic
        unescaped = re.sub(r"\\[$`\\\n]", "", text)
        if _HEREDOC_CODE.search(unescaped):
            # tree-sitter misses backticks and the body of <<- after a tab: read the text.
            self.opaque.append(f"a here-document runs code: {short(text)}")
            self.scan(text)
            dynamic = True
        if dynamic:
            return ("code", text)
        return ("text", re.sub(r"\\([$`\\])|\\\n", lambda m: m[1] or "", text))

    def after_heredoc(self, node: Node) -> None:
        """The rest of the line after ``<<EOF`` (tree-sitter puts it inside the redirect)."""
        if node.type != "heredoc_redirect":
            return
        piped = False
        for index, child in enumerate(node.children):
            if child.type in ("|", "|&"):
                piped = True
            elif child.type.endswith("_redirect"):
                self.redirect(child)
            elif (
                child.is_named
                and child.type not in ("heredoc_start", "heredoc_body", "heredoc_end")
                and node.field_name_for_child(index) != "argument"
            ):
                self.statement(child, ("pipe", "") if piped else None)
                piped = False

    def assignment(self, node: Node, standalone: bool, more: list[Node] | None = None) -> str:
        """Read ``NAME=value``; return it as a word (``NAME=value``).

        Args:
            node: The assignment.
            standalone: It is a statement of its own (not a command's prefix).
            more: Nodes right after it that bash reads as part of the value.
        """
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        label = self.text(name) if name is not None else "?"
        if name is not None and name.type == "subscript":
            index = name.child_by_field_name("index")
            if index is None or not re.fullmatch(r"\d+", self.text(index)):
                self.evaluate(f"array index {short(label)}")
            if index is not None:
                self.word(index)
            base = name.child_by_field_name("name")
            label = self.text(base) if base is not None else label
        parts = [value, *(more or [])] if value is not None else more or []
        if value is not None and value.type == "array":
            words = [self.word(c) for c in value.named_children if c.type != "comment"]
        else:
            words = [self.concatenate(parts)] if parts else []
        for word in words:
            self.remember(label, word)
        joined = " ".join(w.value for w in words)
        if not SAFE_ENVIRONMENT.fullmatch(label):
            self.scan(joined)
            if standalone:
                self.opaque.append(f"it sets {label}, which changes how programs run")
        return f"{label}={joined}"

    def remember(self, name: str, word: Word) -> None:
        """Keep a value the line gives a variable, for the paths that use it."""
        if word.known:
            value = expand_user(word.value) if word.tilde else word.value
            self.shared.values.setdefault(name, []).append(value)
        self.path_words.append((word, self.dirs))

    def declaration(self, node: Node) -> None:
        """``export``/``declare``/``local``/``readonly``/``typeset``/``unset``: a command."""
        words = [literal(node.children[0].type, "u")]
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                words.append(literal(self.assignment(child, standalone=False)))
            elif child.type in WORDS:
                words.append(self.word(child))
            elif child.is_named:
                self.unknown(child)
        self.evaluates = True
        self.emit(words, [], node, None)

    def test(self, node: Node) -> None:
        """``[[ ... ]]`` and ``[ ... ]``: a command whose words are the expression's."""
        words: list[Word] = []
        double = node.children[0].type == "[["

        def flatten(item: Node) -> None:
            if item.type == "test_operator" or not item.is_named:
                words.append(literal(self.text(item)))
                if double and self.text(item) in _ARITHMETIC_TESTS:
                    self.evaluate(f"arithmetic comparison {self.text(item)} in [[ ]]")
            elif item.type in WORDS:
                words.append(self.word(item))
            elif item.type in EXPRESSIONS:
                for child in item.children:
                    flatten(child)
            else:
                self.unknown(item)

        for child in node.children:
            flatten(child)
        self.emit(words, [], node, None)

    def loop(self, node: Node) -> None:
        """``for x in words; do ...; done`` (and ``select``)."""
        variable = node.child_by_field_name("variable")
        for index, child in enumerate(node.children):
            if node.field_name_for_child(index) == "value" and variable is not None:
                self.remember(self.text(variable), self.word(child))
        body = node.child_by_field_name("body")
        if body is not None:
            self.statement(body, None)

    def case(self, node: Node) -> None:
        """``case word in pattern) ...;; esac``: patterns are words, items are statements."""
        for child in node.named_children:
            if child.type == "case_item":
                for index, item in enumerate(child.children):
                    if child.field_name_for_child(index) == "value" or item.type in WORDS:
                        self.word(item)
                    elif item.is_named:
                        self.statement(item, None)
            elif child.type in WORDS:
                self.word(child)
            elif child.type != "comment":
                self.unknown(child)

    def arithmetic(self, node: Node) -> None:
        """Arithmetic: bash evaluates the text of the variables it names, as code."""
        self.evaluate(f"arithmetic {short(self.text(node))}")
        self.walk_possible(node)

    def evaluate(self, reason: str) -> None:
        """Record a construct where bash evaluates text as code (arithmetic, ``${x@P}``).

        Args:
            reason: Why, for a person
                (:attr:`~nbagent.policy.commandline.results.CommandLine.opaque`).
        """
        self.evaluates = True
        self.opaque.append(reason)

    def unknown(self, node: Node) -> None:
        """A node type this package does not know: opaque, and it may run anything."""
        self.hide(f"unsupported construct {node.type}: {short(self.text(node))}")
        self.walk_possible(node)

    def walk_possible(self, node: Node) -> None:
        """Find the substitutions, commands and words inside a node read no further.

        Substitutions run; commands (a function's body) may run: deny rules count them.
        """
        for child in node.named_children:
            if child.type in ("command_substitution", "process_substitution"):
                self.word(child)
            elif child.type in STATEMENT_TYPES:
                inner = Reader(self.depth, self.via, self.dirs, self.shared)
                inner.source = self.source
                inner.statement(child, None)
                self.possible += inner.commands + inner.wrappers + inner.possible
                self.opaque += inner.opaque
                self.redirects += inner.redirects
                self.path_words += inner.path_words
                self.strings += inner.strings
                self.quoted += inner.quoted
                self.evaluates = self.evaluates or inner.evaluates
            elif child.type in ("word", "string", "raw_string", "concatenation"):
                self.path_words.append((self.word(child), self.dirs))
            else:
                self.walk_possible(child)

    # ------------------------------------------------------------------- commands

    def command(self, node: Node, stdin: Stdin | None) -> None:
        """A simple command: prefix assignments, words, redirections."""
        prefixes: list[tuple[Node, list[Node]]] = []
        redirects: list[tuple[Node, list[Node]]] = []
        groups: list[list[Node]] = []
        last_end = -1
        target: list[Node] | None = None  # where a node right after the last one belongs
        split = False  # target is an assignment's or redirection's: tree-sitter split a word
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            nodes = list(child.children) if child.type == "command_name" else [child]
            adjacent = child.start_byte == last_end
            last_end = child.end_byte
            wordlike = field_name in ("name", "argument") or child.type in WORDS
            if child.type.endswith("_redirect"):
                more: list[Node] = []
                redirects.append((child, more))
                extra = extra_words(child)
                groups += extra
                target, split = (extra[-1], False) if extra else (more, True)
            elif adjacent and target is not None and wordlike:
                if split:  # x='a'\b, <a'b'\c: one word to bash, two to tree-sitter
                    self.opaque.append(f"a word tree-sitter splits: {short(self.text(node))}")
                target.extend(nodes)
            elif child.type == "variable_assignment" and not groups:
                more = []
                prefixes.append((child, more))
                target, split = more, True
            elif wordlike:
                groups.append(nodes)
                target, split = groups[-1], False
            elif child.is_named:
                self.unknown(child)
        for redirect, more in redirects:
            stdin = self.redirect(redirect, more) or stdin
            self.after_heredoc(redirect)
        assignments = [self.assignment(prefix, False, more) for prefix, more in prefixes]
        words = [self.concatenate(group) for group in groups]
        words += self.extra.pop((node.start_byte, node.end_byte), [])
        while words and ASSIGNMENT_START.match(unquoted_start(words[0])):
            word = words.pop(0)
            self.remember(word.value.partition("=")[0].rstrip("+"), word)
            assignments.append(word.value)
        if not words:
            for assignment in assignments:
                name = assignment.partition("=")[0]
                if not SAFE_ENVIRONMENT.fullmatch(name):
                    self.opaque.append(f"it sets {name}, which changes how programs run")
        self.emit(words, assignments, node, stdin)

    def emit(
        self, words: list[Word], assignments: list[str], node: Node, stdin: Stdin | None
    ) -> None:
        """Record a command (and the commands it starts) with its words as path words."""
        for word in words:
            self.path_words.append((word, self.dirs))
        if words:
            end = max(node.end_byte, words[-1].end)
            run(self, words, assignments, self.via, end, stdin)

    # ---------------------------------------------------------------------- words

    def concatenate(self, nodes: list[Node]) -> Word:
        """One shell word made of adjacent nodes."""
        parts: list[tuple[str, str]] = []
        for index, node in enumerate(nodes):
            if node.type == "$" and index + 1 < len(nodes) and nodes[index + 1].type == "string":
                self.opaque.append('a $"..." string is translated at run time')
                parts.append(("?", "$"))
            else:
                parts += self.word(node).parts
        start, end = nodes[0].start_byte, nodes[-1].end_byte
        text = decode(self.source[start:end])
        return Word(tuple(parts), text, start, end)

    def word(self, node: Node) -> Word:
        """Read a word node: its value, and what running it involves."""
        text = self.text(node)
        kind = node.type
        parts: list[tuple[str, str]]
        if kind == "word":
            parts = unquoted(text)
            mask = "".join(t if k == "u" else "\0" for k, t in parts)
            if re.search(r"[ \t\n]", mask):
                self.hide(f"tree-sitter read a blank inside a word: {short(text)}")
                parts = [("?", text)]
            elif "`" in mask or "$(" in mask:
                self.opaque.append(f"a substitution tree-sitter did not read: {short(text)}")
                self.scan(text)
                parts = [("?", text)]
        elif kind in (
            "number",
            "$",
            "variable_name",
            "test_operator",
            "extglob_pattern",
            "brace_expression",
        ):
            parts = [("u", text)]
        elif kind == "regex":
            parts = [("q", text)]
        elif kind == "raw_string":
            parts = [("q", text[1:-1])]
        elif kind == "ansi_c_string":
            parts = [("q", ansi_c(text[2:-1]))]
        elif kind in ("string", "translated_string"):
            parts = self.string(node)
        elif kind == "concatenation":
            parts = list(self.concatenate(list(node.children)).parts)
        elif kind == "simple_expansion":
            name = node.named_children[0] if node.named_children else None
            plain = name is not None and name.type == "variable_name"
            parts = [("$", self.text(name)) if plain and name is not None else ("?", text)]
        elif kind == "expansion":
            parts = self.expansion(node, text)
        elif kind in ("command_substitution", "process_substitution"):
            self.opaque.append(f"{kind.replace('_', ' ')} {short(text)}")
            self.substitution(node, text)
            parts = [("?", text)]
        elif kind == "arithmetic_expansion":
            self.arithmetic(node)
            parts = [("?", text)]
        else:
            self.unknown(node)
            parts = [("?", text)]
        word = Word(tuple(parts), text, node.start_byte, node.end_byte)
        if word.known and re.search(r"[\s$`\[(;|&]", word.value):
            self.strings.append(word.value)
        if word.known and kind in ("raw_string", "string", "ansi_c_string"):
            self.quoted.append(word.value)
        return word

    def string(self, node: Node) -> list[tuple[str, str]]:
        """The parts of a double-quoted string (everything in it is quoted)."""
        parts: list[tuple[str, str]] = []
        position = node.start_byte
        for child in node.children:
            if child.start_byte > position:  # tree-sitter leaves line breaks out of the content
                gap = decode(self.source[position : child.start_byte])
                parts.append(("q", double_quoted(gap)))
            position = child.end_byte
            if child.type == "string_content":
                parts.append(("q", double_quoted(self.text(child))))
            elif child.type == "$":
                parts.append(("q", "$"))
            elif child.is_named:
                parts += [("q" if k == "u" else k, t) for k, t in self.word(child).parts]
        if node.type == "translated_string":
            self.opaque.append('a $"..." string is translated at run time')
            return [("?", self.text(node))]
        return parts

    def expansion(self, node: Node, text: str) -> list[tuple[str, str]]:
        """``${...}``: plain for ``${NAME}``; any operator makes the line opaque."""
        kinds = [c.type for c in node.children]
        if len(kinds) == 3 and set(kinds) <= PLAIN_EXPANSION:
            name = node.children[1]
            return [("$", self.text(name)) if name.type == "variable_name" else ("?", text)]
        if any(k in ("@", "!", "subscript", ":") for k in kinds):
            self.evaluate(f"parameter expansion {short(text)}")
        else:
            self.opaque.append(f"parameter expansion {short(text)}")
        self.walk_possible(node)
        return [("?", text)]

    def substitution(self, node: Node, text: str) -> None:
        """``$(...)``, backticks, ``<(...)``: their commands run in this line.

        Backticks are read again after their backslashes are taken away, as bash does (so
        nested backticks are commands, not words).
        """
        if text.startswith("`"):
            self.nested(re.sub(r"\\([$`\\])", r"\1", text[1:-1]), self.via)
            return
        for child in node.named_children:
            self.statement(child, None)


def _tail(command: SimpleCommand, start: int) -> SimpleCommand:
    """The command made of a command's words from ``start`` on (for searched code)."""
    return SimpleCommand(
        command.words[start:],
        command.text,
        frozenset(i - start for i in command.unknown if i >= start),
        command.more,
        via=command.via,
    )
