"""A simple command followed into what it starts: the program after a wrapper's options, the
code of ``bash -c``, ``eval``, ``su -c`` and a here-document fed to a shell, ``find -exec``,
code handed to interpreters, ``awk`` and ``sed``, scripts and input the line does not show.

The functions record into a :class:`~nbagent.policy.commandline.reader.Reader`, which reads the
shell code they find (:meth:`~nbagent.policy.commandline.reader.Reader.nested`) and searches the
code of other languages (:meth:`~nbagent.policy.commandline.reader.Reader.scan`).
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from nbagent.policy.commandline.programs import (
    AWK_SED,
    INTERPRETERS,
    RUNS_UNSEEN,
    SAFE_ENVIRONMENT,
    SCRIPT_SHELLS,
    SHELL_FLAGS,
    SHELL_LONG,
    SHELLS,
    STDIN_CODE,
    VI,
    WRAPPERS,
    Wrapper,
    interpreter,
    wrapper_options,
)
from nbagent.policy.commandline.results import SimpleCommand, short
from nbagent.policy.commandline.risks import is_option, risky_words, sed_risk
from nbagent.policy.commandline.syntax import RESERVED, decode
from nbagent.policy.commandline.words import Word, expand_user

if TYPE_CHECKING:
    from nbagent.policy.commandline.reader import Reader

Stdin = tuple[str, str]
"""What a command reads on standard input: ``("pipe", "")``, ``("file", path)``, ``("text",
literal text)`` or ``("code", text with expansions)``."""

_CODE_PREFIX = re.compile(r"^([\w.-]*=)?(exec=)?[+!:]*")
_SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/", "/usr/local/bin/")
_MAX_DIRS = 16


def run(
    reader: Reader,
    words: list[Word],
    assignments: list[str],
    via: tuple[str, ...],
    end: int,
    stdin: Stdin | None,
    more: bool = False,
) -> None:
    """Record the command ``words`` (started by ``via``) and what it starts in turn.

    Args:
        reader: The reader of the code the command is in: it gets what is found.
        words: The command's words, the program first.
        assignments: The ``NAME=value`` words its environment gets.
        via: The programs that start it, outermost first.
        end: Where its text ends in the reader's source.
        stdin: What it reads on standard input, when the line says.
        more: It gets further words only the run decides (after ``xargs``).
    """
    first = words[0]
    text = decode(reader.source[first.start : max(end, first.end)])
    for assignment in assignments:
        if not SAFE_ENVIRONMENT.fullmatch(assignment.partition("=")[0]):
            reader.scan(assignment.partition("=")[2])
    if not first.known:
        reader.opaque.append(f"the program {short(first.text)} is only known at run time")
        _listed(reader, _command(words, text, assignments, via, more), words)
        return
    if first.text in RESERVED:
        # ! { ...; }, time if ...: tree-sitter reads the keyword as a program.
        reader.opaque.append(f"a compound command tree-sitter did not read: {short(text)}")
        _listed(reader, _command(words, text, assignments, via, more), words)
        if len(words) > 1:
            run(reader, words[1:], assignments, via, end, stdin, more)
        return
    program = first.value
    name = posixpath.basename(program.rstrip("/")) or program
    trusted = "/" not in program or program.startswith(_SYSTEM_DIRS)
    pair = f"{name} {words[1].value}" if len(words) > 1 and words[1].known else ""
    wrapper = WRAPPERS.get(pair) or WRAPPERS.get(name)
    if name in ("cd", "pushd") and len(words) > 1 and words[1].known:
        _cd(reader, words[1])
    if wrapper is not None:
        skip = 2 if pair in WRAPPERS else 1
        _wrapper(reader, wrapper, name, words, skip, assignments, via, end, stdin, trusted)
    elif name in SHELLS:
        _shell(reader, name, words, assignments, via, stdin, text, trusted)
    elif name == "eval":
        known = all(w.known for w in words[1:])
        _listed(reader, _command(words, text, assignments, via, launcher=known), words, True)
        _code_of(reader, words[1:], text, (*via, name))
    else:
        _listed(reader, _command(words, text, assignments, via, more), words)
        if name in ("source", "."):
            reader.unseen(f"{name} runs a script this line does not show: {short(text)}")
        elif name in RUNS_UNSEEN and not (
            name == "crontab" and len(words) == 2 and words[1].value == "-l"
        ):
            reader.unseen(f"{name} runs commands this line does not show: {short(text)}")
            _guess(reader, words, 1, (*via, name))
        elif name == "find":
            _find(reader, words, via)
        elif name == "let":
            reader.evaluate(f"arithmetic {short(text)}")
        elif name == "alias":
            reader.opaque.append(f"it defines an alias: {short(text)}")
        elif name in ("shopt", "set", "enable") and len(words) > 1:
            reader.opaque.append(f"it changes how the shell reads words: {short(text)}")
        elif name == "coproc":
            reader.opaque.append(f"coproc runs a command with pipes: {short(text)}")
            _guess(reader, words, 1, (*via, name))
        _program_code(reader, name, words, stdin, text)


def _listed(
    reader: Reader, command: SimpleCommand, words: list[Word], wrapper: bool = False
) -> None:
    """Record a command (or wrapper); search the words through which it may run code.

    A risky option's value (``tar -I CMD``, ``ssh -o ProxyCommand=CMD``) and every word of
    a risky command that looks like code (``trap 'rm f' EXIT``, ``alias x=rm``) are read
    as shell code.
    """
    (reader.wrappers if wrapper else reader.commands).append(command)
    risky = risky_words(command)
    if not risky:
        return
    for index, word in enumerate(words):
        if index == 0 or not word.known:
            continue
        value = word.value
        after_option = index - 1 in risky and words[index - 1].value.startswith("-")
        if after_option or (index >= risky[0] and re.search(r"[\s=;|&$`<>(]", value)):
            reader.scan(_CODE_PREFIX.sub("", value))


def _guess(reader: Reader, words: list[Word], start: int, via: tuple[str, ...]) -> None:
    """For deny rules: any literal word from ``start`` on may start a command.

    Used where the program that runs a command cannot be read (an option not
    understood, arguments handed to ``bash -c`` code).
    """
    for index in range(start, len(words)):
        word = words[index]
        if not word.known:
            reader.possible.append(SimpleCommand(("?",), word.text, frozenset({0}), via=via))
        elif not word.value.startswith("-"):
            text = decode(reader.source[word.start : words[-1].end])
            reader.possible.append(_command(words[index:], text, [], via))
            reader.scan(word.value)


def _cd(reader: Reader, target: Word) -> None:
    """Remember where ``cd`` goes, for relative paths that follow."""
    folder = expand_user(target.value) if target.tilde else target.value
    if folder == "-":
        return
    joined = {folder} | {posixpath.join(d, folder) for d in reader.dirs if folder[:1] != "/"}
    reader.dirs = tuple(dict.fromkeys((*reader.dirs, *sorted(joined))))
    if len(reader.dirs) > _MAX_DIRS:
        reader.opaque.append("it changes folders too often to follow")
        reader.dirs = reader.dirs[-_MAX_DIRS:]


def _wrapper(
    reader: Reader,
    wrapper: Wrapper,
    name: str,
    words: list[Word],
    skip: int,
    assignments: list[str],
    via: tuple[str, ...],
    end: int,
    stdin: Stdin | None,
    trusted: bool,
) -> None:
    """A program that starts another one: read its options, then the command it starts."""
    text = decode(reader.source[words[0].start : end])
    inner_via = (*via, name)
    parsed = wrapper_options(wrapper, words, skip)
    if parsed is None:
        reader.opaque.append(f"could not tell what {name} runs: {short(text)}")
        _listed(reader, _command(words, text, assignments, via), words)
        _guess(reader, words, skip, inner_via)
        return
    start, env, code, replace = parsed
    rest = words[start:]
    if name == "xargs" and not rest:
        rest = [Word((("u", "echo"),), "echo", end, end)]
    if not wrapper.command:
        _guess(reader, words, skip, inner_via)
        rest = []
    command = _command(words, text, assignments, via, launcher=wrapper.launcher and trusted)
    _listed(reader, command, words, wrapper=trusted and bool(rest or code))
    if code:
        _code_of(reader, [*code, *rest], text, inner_via)
        return
    if not rest:
        return
    if replace is not None:
        rest = [
            Word((("?", w.text),), w.text, w.start, w.end) if replace in w.text else w for w in rest
        ]
    if wrapper.joins and not {"-x", "--exec"} & {w.value for w in words[skip:start]}:
        _code_of(reader, rest, text, inner_via)
        return
    more = name == "xargs" and replace is None
    run(reader, rest, [*assignments, *env], inner_via, end, stdin, more=more)


def _code_of(reader: Reader, words: list[Word], text: str, via: tuple[str, ...]) -> None:
    """Shell code given to a program as words, joined by spaces (``eval``, ``su -c``)."""
    if all(w.known for w in words):
        if words:
            reader.nested(" ".join(w.value for w in words), via)
    else:
        reader.hide(f"{via[-1]} runs code that is only known at run time: {short(text)}")


def _shell(
    reader: Reader,
    name: str,
    words: list[Word],
    assignments: list[str],
    via: tuple[str, ...],
    stdin: Stdin | None,
    text: str,
    trusted: bool,
) -> None:
    """``bash -c 'code'``, ``sh script``, ``bash <<EOF``: read the code it runs."""
    code_next = reads_input = False
    known = True
    index = 1
    while index < len(words):
        word = words[index]
        value = word.value
        if not word.known:
            known = False
            break
        if value in ("--", "-"):
            index += 1
            reads_input = reads_input or value == "-"
            break
        if value in ("-o", "+o", "-O", "+O"):
            index += 2
        elif value in SHELL_LONG:
            index += 1
        elif re.fullmatch(r"[-+][a-zA-Z]+", value):
            letters = set(value[1:])
            code_next = code_next or (value[0] == "-" and "c" in letters)
            reads_input = reads_input or (value[0] == "-" and "s" in letters)
            known = known and letters <= set(SHELL_FLAGS + "c")
            index += 1
        else:
            known = known and not value.startswith("-")
            break
    operands = words[index:]
    if not known:
        reader.opaque.append(f"could not tell what {name} runs: {short(text)}")
        _guess(reader, words, 1, (*via, name))
    if code_next:
        launcher = known and len(operands) == 1
        _listed(reader, _command(words, text, assignments, via, launcher=launcher), words, trusted)
        if operands:
            _code_of(reader, operands[:1], text, (*via, name))
            _guess(reader, operands, 1, (*via, name))
        return
    _listed(reader, _command(words, text, assignments, via), words)
    if operands and not reads_input:
        reader.unseen(f"{name} runs a script this line does not show: {short(text)}")
    elif stdin is None:
        return
    elif stdin[0] == "text":
        reader.nested(stdin[1], (*via, name))
    else:
        reader.hide(f"{name} runs code from its input, only known at run time")


def _find(reader: Reader, words: list[Word], via: tuple[str, ...]) -> None:
    """``find ... -exec prog args ;`` (``-execdir``, ``-ok``, ``-okdir``) and ``-delete``."""
    index = 1
    while index < len(words):
        word = words[index]
        if word.known and word.value in ("-exec", "-execdir", "-ok", "-okdir"):
            stop = index + 1
            while stop < len(words) and not (words[stop].known and words[stop].value in (";", "+")):
                stop += 1
            inner = [
                Word((("?", w.text),), w.text, w.start, w.end) if "{}" in w.text else w
                for w in words[index + 1 : stop]
            ]
            if inner:
                run(reader, inner, [], (*via, "find"), inner[-1].end, None)
            index = stop + 1
            continue
        if word.known and word.value == "-delete":
            reader.commands.append(SimpleCommand(("rm",), "-delete", via=(*via, "find")))
        elif not word.known:
            reader.possible.append(
                SimpleCommand(("?",), word.text, frozenset({0}), via=(*via, "find"))
            )
        index += 1


def _program_code(
    reader: Reader, name: str, words: list[Word], stdin: Stdin | None, text: str = ""
) -> None:
    """Code handed to an interpreter, ``awk`` or ``sed``: opaque or searched as text."""
    base = interpreter(name)
    if stdin is not None and (name in STDIN_CODE or base in STDIN_CODE):
        if stdin[0] in ("text", "code"):
            reader.scan(stdin[1])
        reader.unseen(f"{name} reads commands from its input: {short(stdin[1] or stdin[0])}")
        return
    if name in VI and any(w.value in ("-s", "-S") or w.value.startswith("-S") for w in words):
        reader.unseen(f"{name} runs a script this line does not show")
        return
    if name in AWK_SED and any(is_option(w.value, AWK_SED[name]) for w in words[1:]):
        reader.unseen(f"{name} runs a program file this line does not show")
        return
    if base is not None:
        for index, word in enumerate(words[1:], 1):
            code = _code_option(word.value, INTERPRETERS[base])
            if code is not None:
                if not code and index + 1 < len(words):
                    code = words[index + 1].value
                reader.opaque.append(f"{name} {word.value} runs code: {short(code)}")
                reader.scan(code)
                return
        operands = [w for w in words[1:] if not w.value.startswith("-") or w.value == "-"]
        if operands and operands[0].value != "-":
            if base in SCRIPT_SHELLS:
                reader.unseen(f"{name} runs a script this line does not show: {short(text)}")
            return
        if stdin is not None and stdin[0] in ("text", "code"):
            reader.scan(stdin[1])
            reader.unseen(f"{name} runs code from its input: {short(stdin[1])}")
        elif stdin is not None:
            reader.hide(f"{name} runs code from its input, only known at run time")
    elif name in ("awk", "gawk", "mawk", "nawk"):
        script = next((w for w in words[1:] if not w.value.startswith("-")), None)
        if script is not None and script.known:
            reader.scan(script.value)
    elif name == "sed":
        index = sed_risk(tuple(w.value for w in words))
        if index is not None and words[index].known:
            reader.scan(words[index].value)
            reader.scan(re.sub(r"[^\w\s.-]", "\n", words[index].value))


def _command(
    words: list[Word],
    text: str,
    assignments: list[str],
    via: tuple[str, ...],
    more: bool = False,
    launcher: bool = False,
) -> SimpleCommand:
    """The :class:`SimpleCommand` for words (the program reduced to its name)."""
    first = words[0]
    name, path = first.value, ""
    if first.known and "/" in name:
        name, path = posixpath.basename(name.rstrip("/")) or name, name
    return SimpleCommand(
        words=(name, *(w.value for w in words[1:])),
        text=text,
        unknown=frozenset(i for i, w in enumerate(words) if not w.known),
        more=more,
        assignments=tuple(assignments),
        via=via,
        path=path,
        launcher=launcher,
    )


def _code_option(word: str, options: tuple[str, ...]) -> str | None:
    """The code a word gives through one of the options: ``""`` when the next word holds it.

    ``-c`` also counts inside ``-Bc`` and as ``-cCODE``; ``--eval`` as ``--eval=CODE``.
    """
    for option in options:
        if word == option:
            return ""
        if option.startswith("--") and word.startswith(option + "="):
            return word[len(option) + 1 :]
        if len(option) == 2 and re.fullmatch(r"-[A-Za-z]+.*", word) and not word.startswith("--"):
            letters = re.match(r"-([A-Za-z]*)", word)[1]  # type: ignore[index]
            if option[1] in letters:
                return word[2 + letters.index(option[1]) :]
    return None
