"""The words through which a program runs other code or writes anywhere (:data:`RISKS`): a
prefix rule covers a use of a program only when it names every such word (``git:*`` does not
cover ``git -c alias.x=.. x``). ``sed`` scripts are read for the commands that run programs
or write files."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from nbagent.policy.commandline.programs import INTERPRETERS, interpreter
from nbagent.policy.commandline.results import SimpleCommand
from nbagent.policy.commandline.words import ASSIGNMENT, names


@dataclass(frozen=True)
class Risk:
    """The words through which a program runs other code or writes anywhere.

    A prefix spec covers a use of the program only when it names (its own words include) every
    such word. Options are written ``-x`` (a short option, also inside ``-abx`` and as
    ``-xVALUE``), ``--long`` (also ``--long=value`` and GNU abbreviations such as ``--lo``) or
    ``-word`` (one word, as ``find -exec``).
    """

    options: tuple[str, ...] = ()
    """Risky options anywhere in the command."""
    everything: bool = False
    """Every word is risky: no prefix shorter than the command covers it."""
    globals: tuple[str, ...] = ()
    """Risky options before the subcommand (``git -c``)."""
    global_valued: tuple[str, ...] = ()
    """Options before the subcommand that take the next word as value (``git -C dir``)."""
    global_flags: tuple[str, ...] = ()
    """Options before the subcommand known to be harmless; with :attr:`known`, any other
    option there is risky (it may take the next word, hiding the real subcommand)."""
    subcommands: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Risky subcommands: ``("*",)`` for the subcommand itself, else its risky options or words."""
    known: frozenset[str] = frozenset()
    """When given, the only subcommands that are not risky by name (``git x`` may be an alias
    that runs a shell)."""
    assignments: bool = False
    """``NAME=value`` arguments are risky (``make SHELL=...``)."""
    bundled: bool = False
    """The first word may be options without a dash (``tar xIf``)."""
    output_operand: int | None = None
    """The operand (counted from 0, options skipped) that names a file it writes
    (``uniq IN OUT``)."""
    script: Callable[[tuple[str, ...]], int | None] | None = None
    """Finds the index of a risky script word (``sed``'s ``e`` and ``w`` commands)."""


_SED_FLAGS = "nrEsuzb"
_SED_LONG = (
    "--quiet",
    "--silent",
    "--debug",
    "--posix",
    "--regexp-extended",
    "--separate",
    "--sandbox",
    "--unbuffered",
    "--null-data",
    "--zero-terminated",
    "--follow-symlinks",
    "--binary",
)


def sed_risk(words: tuple[str, ...]) -> int | None:
    """Index of a ``sed`` word that runs a command or writes a file.

    The scripts are the values of ``-e``/``--expression``, else the first operand (GNU sed
    reads options anywhere). An option sed does not have, or that this does not know, counts.

    Args:
        words: The command's words, ``sed`` first.

    Returns:
        The index of the first such word, or None when there is none.
    """
    scripts: list[tuple[int, str]] = []
    operands: list[int] = []
    index = 1
    while index < len(words):
        word = words[index]
        if word == "--":
            operands += range(index + 1, len(words))
            break
        if word.startswith("--") and len(word) > 2:
            equals = "=" in word
            if is_option(word, ["--expression"]) or is_option(word, ["--line-length"]):
                value = word.partition("=")[2] if equals else None
                if value is None and index + 1 < len(words):
                    index += 1
                    value = words[index]
                if is_option(word, ["--expression"]):
                    scripts.append((index, value or ""))
            elif not any(is_option(word, [option]) for option in _SED_LONG) or equals:
                return index
        elif word.startswith("-") and len(word) > 1:
            for position, letter in enumerate(word[1:]):
                rest = word[position + 2 :]
                if letter in "el":
                    if not rest and index + 1 < len(words):
                        index += 1
                        rest = words[index]
                    if letter == "e":
                        scripts.append((index, rest))
                    break
                if letter not in _SED_FLAGS:
                    return index
        else:
            operands.append(index)
        index += 1
    if not scripts and operands:
        scripts.append((operands[0], words[operands[0]]))
    for position, script in scripts:
        if _sed_runs(script, brackets=False) or _sed_runs(script, brackets=True):
            return position
    return None


def _sed_runs(script: str, brackets: bool) -> bool:
    """Whether a sed script may run a command or write a file (text not understood counts).

    Args:
        script: The script.
        brackets: Read ``[...]`` in regular expressions as hiding the delimiter.
    """
    size = len(script)

    def delimited(start: int, sections: int) -> int:
        """The index after ``sections`` sections ended by the delimiter at ``start``; -1."""
        delimiter = script[start]
        at = start + 1
        while sections and at < size:
            char = script[at]
            if char == "\\":
                at += 2
                continue
            if brackets and char == "[":
                close = script.find("]", at + 2)
                at = close + 1 if close > 0 else size
                continue
            sections -= char == delimiter
            at += 1
        return -1 if sections else at

    def line_end(start: int, stop: str) -> int:
        ends = [p for p in (script.find(c, start) for c in stop) if p >= 0]
        return min(ends, default=size)

    at = 0
    while at < size:
        char = script[at]
        if char in " \t\n;{}!$,~+#" or char.isdigit():
            at = line_end(at, "\n") if char == "#" else at + 1
        elif char in "/\\":
            start = at + 1 if char == "\\" else at
            at = delimited(start, 1) if start < size else -1
            if at < 0:
                return True
            while at < size and script[at] in "IM":
                at += 1
        elif char in "aicrR":
            at = line_end(at, "\n")
        elif char in "btT:":
            at = line_end(at, ";\n")
        elif char in "=dDgGhHlnNpPqQxzFL":
            at += 1
        elif char in "sy" and at + 1 < size and script[at + 1] not in "\n\\":
            at = delimited(at + 1, 2)
            if at < 0:
                return True
            while at < size and script[at] not in ";\n}":
                if (
                    char == "y"
                    and script[at] not in " \t"
                    or script[at] not in "gpiImM \t0123456789"
                ):
                    return True
                at += 1
        else:
            return True
    return False


_ALL = ("*",)
_EVERYTHING = Risk(everything=True)


_GIT_KNOWN = names(
    "add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore "
    "check-mailmap checkout cherry cherry-pick clean clone commit commit-graph commit-tree "
    "config count-objects describe diff diff-files diff-index diff-tree difftool fetch "
    "for-each-ref format-patch fsck gc grep hash-object help init log ls-files ls-remote "
    "ls-tree maintenance merge merge-base merge-file merge-tree mergetool mktag mktree mv "
    "name-rev notes prune pull push range-diff read-tree rebase reflog remote repack replace "
    "rerere reset restore rev-list rev-parse revert rm shortlog show show-branch show-ref "
    "sparse-checkout stash status submodule switch symbolic-ref tag update-index update-ref "
    "var verify-commit verify-pack verify-tag version whatchanged worktree write-tree"
)


_SCRIPT_RUNNERS = (
    "run",
    "run-script",
    "rum",
    "urn",
    "exec",
    "x",
    "explore",
    "test",
    "t",
    "tst",
    "start",
    "stop",
    "restart",
    "config",
    "c",
    "set",
    "dlx",
    "create",
)


_MAKE = Risk(
    options=(
        "-f",
        "--file",
        "--makefile",
        "-E",
        "--eval",
        "-C",
        "--directory",
        "-I",
        "--include-dir",
    ),
    assignments=True,
)


_PACKAGE_OPTIONS = ("--script-shell", "--userconfig", "--globalconfig", "--node-options")
_PACKAGE_KNOWN = names(
    "install i add remove rm uninstall un update up upgrade outdated list ls ll why info view "
    "init audit ci pack publish login logout whoami version help search link unlink prune "
    "dedupe doctor cache store root bin prefix"
)


RISKS: Mapping[str, Risk] = {
    "git": Risk(
        globals=("-c", "--config-env", "--exec-path", "--git-dir", "--work-tree"),
        global_valued=(
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--config-env",
            "--super-prefix",
        ),
        global_flags=(
            "-p",
            "--paginate",
            "-P",
            "--no-pager",
            "--bare",
            "--no-replace-objects",
            "--literal-pathspecs",
            "--glob-pathspecs",
            "--noglob-pathspecs",
            "--icase-pathspecs",
            "--no-optional-locks",
            "--no-advice",
            "--version",
            "--help",
            "-h",
        ),
        known=_GIT_KNOWN,
        subcommands={
            "config": _ALL,
            "filter-branch": _ALL,
            "difftool": _ALL,
            "mergetool": _ALL,
            "send-email": _ALL,
            "instaweb": _ALL,
            "daemon": _ALL,
            "credential": _ALL,
            "rebase": ("-x", "--exec"),
            "bisect": ("run",),
            "submodule": ("foreach",),
            "grep": ("-O", "--open-files-in-pager"),
            "archive": ("--exec", "--remote", "-o", "--output"),
            "fetch": ("--upload-pack",),
            "pull": ("--upload-pack",),
            "ls-remote": ("--upload-pack",),
            "push": ("--receive-pack", "--exec"),
            "clone": ("-u", "--upload-pack", "--template", "-c", "--config"),
            "init": ("--template",),
            "log": ("--output", "--ext-diff"),
            "show": ("--output", "--ext-diff"),
            "diff": ("--output", "--ext-diff"),
            "format-patch": ("--output", "-o"),
            "help": ("-w", "--web", "-i", "--info", "-m", "--man"),
        },
    ),
    "gh": Risk(subcommands={"alias": _ALL, "extension": _ALL, "config": _ALL, "ext": _ALL}),
    "npm": Risk(options=_PACKAGE_OPTIONS, subcommands=dict.fromkeys(_SCRIPT_RUNNERS, _ALL)),
    "pnpm": Risk(
        options=_PACKAGE_OPTIONS,
        subcommands=dict.fromkeys(_SCRIPT_RUNNERS, _ALL),
        known=_PACKAGE_KNOWN,
    ),
    "yarn": Risk(
        options=_PACKAGE_OPTIONS,
        subcommands=dict.fromkeys(_SCRIPT_RUNNERS, _ALL),
        known=_PACKAGE_KNOWN,
    ),
    "pytest": Risk(options=("-p", "-c", "--config-file", "--rootdir", "-o", "--override-ini")),
    "rg": Risk(options=("--pre", "--hostname-bin")),
    "uniq": Risk(output_operand=1),
    "uv": Risk(subcommands={"run": _ALL, "tool": _ALL}),
    "poetry": Risk(subcommands={"run": _ALL, "shell": _ALL}),
    "conda": Risk(subcommands={"run": _ALL}),
    "mamba": Risk(subcommands={"run": _ALL}),
    "cargo": Risk(subcommands={"run": _ALL, "r": _ALL, "install": _ALL}),
    "go": Risk(subcommands={"run": _ALL, "generate": _ALL, "tool": _ALL}),
    "jupyter": Risk(subcommands={"execute": _ALL, "run": _ALL, "nbconvert": ("--execute",)}),
    "find": Risk(
        options=(
            "-exec",
            "-execdir",
            "-ok",
            "-okdir",
            "-delete",
            "-fprint",
            "-fprint0",
            "-fprintf",
            "-fls",
        )
    ),
    "sed": Risk(options=("-i", "--in-place", "-f", "--file"), script=sed_risk),
    "tar": Risk(
        options=(
            "--checkpoint-action",
            "--to-command",
            "--use-compress-program",
            "-I",
            "--info-script",
            "--new-volume-script",
            "-F",
            "--rsh-command",
            "--rmt-command",
            "-C",
            "--directory",
            "-P",
            "--absolute-names",
        ),
        bundled=True,
    ),
    "make": _MAKE,
    "gmake": _MAKE,
    "sort": Risk(options=("-o", "--output", "--compress-program")),
    "zip": Risk(options=("-T", "--test", "--unzip-command")),
    "rsync": Risk(options=("-e", "--rsh", "--rsync-path")),
    "curl": Risk(
        options=(
            "-o",
            "--output",
            "--output-dir",
            "-K",
            "--config",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--libcurl",
            "--stderr",
            "--etag-save",
            "--hsts",
            "--alt-svc",
        )
    ),
    "wget": Risk(
        options=(
            "-O",
            "--output-document",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
            "-P",
            "--directory-prefix",
            "-e",
            "--execute",
            "--config",
        )
    ),
    "nc": Risk(options=("-e", "-c")),
    "ncat": Risk(options=("-e", "-c", "--exec", "--sh-exec", "--lua-exec")),
    "printf": Risk(options=("-v",)),
    "test": Risk(options=("-v", "-R")),
    "[": Risk(options=("-v", "-R")),
    "set": Risk(options=("-k", "keyword", "onecmd")),
    "docker": Risk(
        globals=("--config", "-H", "--host", "-c", "--context"),
        known=names(
            "ps images logs inspect version info stats top port history search events diff"
        ),
    ),
    "podman": Risk(
        globals=("--config", "-H", "--host", "-c", "--connection", "--url"),
        known=names(
            "ps images logs inspect version info stats top port history search events diff"
        ),
    ),
    "kubectl": Risk(
        globals=("--kubeconfig", "--exec"),
        global_valued=("-n", "--namespace", "--context", "--cluster", "--user"),
        known=names(
            "get describe logs version explain api-resources api-versions cluster-info top"
        ),
    ),
    **dict.fromkeys(
        names(
            "awk gawk mawk nawk dc m4 sqlite3 psql mysql crontab at batch tmux screen open "
            "xdg-open busybox toybox ssh slogin scp sftp socat telnet vim vi nvim view "
            "vimdiff ex ed emacs nano pico less more most man info cmake helm terraform ansible "
            "ansible-playbook eval source . trap hash enable bind complete compgen fc history let "
            "declare typeset local export readonly read mapfile readarray unset alias shopt ulimit "
            "sudo doas su pkexec runuser chroot flock script strace ltrace nsenter unshare "
            "firejail fakeroot proxychains torsocks xvfb-run dbus-run-session systemd-run parallel "
            "npx bunx uvx pipx direnv nix nix-shell bundle pixi pipenv [["
        ),
        _EVERYTHING,
    ),
}
"""What a prefix spec must name before it covers a use of a program: the table of programs
that can run other code or write anywhere through their words."""


def risky_words(command: SimpleCommand) -> list[int]:
    """Indexes of the words through which a command may run other code or write anywhere.

    ``len(words)`` stands for words only the run adds (``xargs``).

    Args:
        command: The command.

    Returns:
        The indexes, sorted; empty for a program that is not in :data:`RISKS` and is no
        interpreter.
    """
    words = command.words
    base = interpreter(words[0])
    risk = RISKS.get(words[0]) or (Risk(options=INTERPRETERS[base]) if base else None)
    if risk is None:
        return []
    found = [len(words)] if command.more else []
    if risk.everything:
        return [*range(1, len(words)), *found]
    found += [i for i in command.unknown if i > 0]
    subcommand = _subcommand(words, risk)
    found += [
        index
        for index, word in enumerate(words[1:], 1)
        if index not in command.unknown and _risky_word(risk, word, index, subcommand)
    ]
    if risk.script is not None:
        script = risk.script(words)
        if script is not None:
            found.append(script)
    if risk.output_operand is not None:
        operands = [i for i, w in enumerate(words) if i and not w.startswith("-")]
        found += operands[risk.output_operand : risk.output_operand + 1]
    if subcommand is None:
        return sorted(set(found))
    if subcommand < len(words) and risk.known and words[subcommand] not in risk.known:
        found.append(subcommand)
    for index, word in enumerate(words[subcommand:], subcommand):
        risky = risk.subcommands.get(word)
        if risky is None or (risk.known and index != subcommand):
            continue
        if risky == _ALL:
            found.append(index)
        else:
            found += [
                i
                for i in range(index + 1, len(words))
                if i not in command.unknown and (is_option(words[i], risky) or words[i] in risky)
            ]
    return sorted(set(found))


def _risky_word(risk: Risk, word: str, index: int, subcommand: int | None) -> bool:
    """Whether a word is risky by itself: a risky option, an assignment, a global option."""
    if risk.bundled and index == 1 and not word.startswith("-"):
        word = "-" + word
    before = subcommand is not None and index < subcommand
    unknown = bool(risk.known) and word.partition("=")[0] not in (
        *risk.global_flags,
        *risk.global_valued,
    )
    return (
        is_option(word, risk.options)
        or (risk.assignments and bool(ASSIGNMENT.fullmatch(word)))
        or (before and (is_option(word, risk.globals) or unknown))
    )


def _subcommand(words: tuple[str, ...], risk: Risk) -> int | None:
    """Index of the subcommand word, after the options before it; None for no subcommands."""
    if not (risk.subcommands or risk.known or risk.globals):
        return None
    index = 1
    while index < len(words) and words[index].startswith("-"):
        index += 2 if words[index] in risk.global_valued else 1
    return index


def is_option(word: str, options: Iterable[str]) -> bool:
    """Whether a word uses one of the options (short ones in clusters, long ones abbreviated).

    Args:
        word: The word.
        options: Options written as in :class:`Risk`: ``-x``, ``--long`` or ``-word``.

    Returns:
        Whether the word is (or holds) one of them.
    """
    for option in options:
        if option.startswith("--"):
            name = word.partition("=")[0]
            if word.startswith("--") and len(name) > 2 and option.startswith(name):
                return True
        elif len(option) == 2 and option[0] == "-":
            if word[:1] == "-" and word[:2] != "--" and option[1] in word[1:]:
                return True
        elif word == option or word.startswith(option + "="):
            return True
    return False
