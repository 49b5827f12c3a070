"""The programs that run other code, and how to read their words: wrappers (``env``,
``timeout``, ``sudo``, ``xargs``, ...) with their options, shells, interpreters, programs that
read commands from their input or run commands the line does not show, and the environment
variables that leave the code a program runs alone."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from nbagent.policy.commandline.words import ASSIGNMENT, Word, literal, names

SAFE_ENVIRONMENT = re.compile(
    r"[a-z_][a-z0-9_]*|LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|COLUMNS|LINES|NO_COLOR|FORCE_COLOR"
    r"|CLICOLOR|CLICOLOR_FORCE|CI|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|PYTHONIOENCODING"
    r"|PYTHONHASHSEED|NODE_ENV|RUST_BACKTRACE|RUST_LOG"
)
"""Variables a command may be given without changing which code runs; any other (``PATH``,
``LD_PRELOAD``, ``GIT_SSH_COMMAND``, ``PAGER``, ``BASH_ENV``...) needs an exact rule."""


@dataclass(frozen=True)
class Wrapper:
    """How a program that starts another one reads its own options."""

    flags: str = ""
    """Short options without a value."""
    valued: str = ""
    """Short options taking a value (attached, or the next word)."""
    optional: str = ""
    """Short options taking an optional attached value (``xargs -i``)."""
    long_flags: tuple[str, ...] = ()
    long_valued: tuple[str, ...] = ()
    long_optional: tuple[str, ...] = ()
    """Long options whose value is optional (``--replace[=R]``)."""
    code: tuple[str, ...] = ()
    """Options whose value is shell code (``su -c``), also listed as valued."""
    stops: tuple[str, ...] = ()
    """Options after which no command runs (``command -v``)."""
    positionals: int = 0
    """Words before the command (``timeout``'s duration, ``ssh``'s host)."""
    command: bool = True
    """The words after the options are a command (``su``'s are not: it runs ``-c``'s code)."""
    launcher: bool = True
    """Only starts the command as the user: rules look at the command alone. ``sudo`` is no
    launcher: a rule must allow it too."""
    joins: bool = False
    """The command's words are joined into shell code (``watch``, ``ssh``)."""
    assigns: bool = False
    """``NAME=value`` words before the command set its environment (``env``)."""


_SSH = Wrapper(
    flags="46AaCfGgKkMNnqsTtVvXxYy",
    valued="BbcDEeFIiJLlmOoPpQRSWw",
    positionals=1,
    launcher=False,
    joins=True,
)


WRAPPERS: Mapping[str, Wrapper] = {
    "command": Wrapper(flags="p", stops=("-v", "-V")),
    "builtin": Wrapper(),
    "exec": Wrapper(flags="cl", valued="a"),
    "nohup": Wrapper(),
    "time": Wrapper(flags="p"),
    "nice": Wrapper(flags="0123456789", valued="n", long_valued=("--adjustment",)),
    "timeout": Wrapper(
        flags="fpv",
        valued="ks",
        positionals=1,
        long_flags=("--foreground", "--preserve-status", "--verbose"),
        long_valued=("--kill-after", "--signal"),
    ),
    "stdbuf": Wrapper(valued="ioe", long_valued=("--input", "--output", "--error")),
    "setsid": Wrapper(flags="cfw", long_flags=("--ctty", "--fork", "--wait")),
    "ionice": Wrapper(
        flags="t",
        valued="cn",
        stops=("-p", "-P", "-u"),
        long_flags=("--ignore",),
        long_valued=("--class", "--classdata"),
    ),
    "chrt": Wrapper(flags="abdefimoRrv", valued="TPD", stops=("-p",), positionals=1),
    "taskset": Wrapper(flags="ac", stops=("-p",), positionals=1),
    "unbuffer": Wrapper(flags="p"),
    "caffeinate": Wrapper(flags="dimsu", valued="tw"),
    "env": Wrapper(
        flags="i0v",
        valued="uCS",
        code=("-S", "--split-string"),
        assigns=True,
        long_flags=("--ignore-environment", "--null", "--debug"),
        long_valued=("--unset", "--chdir", "--split-string"),
    ),
    "xargs": Wrapper(
        flags="0oprtx",
        valued="aEdILnPs",
        optional="eil",
        long_flags=(
            "--null",
            "--interactive",
            "--verbose",
            "--exit",
            "--no-run-if-empty",
            "--open-tty",
            "--show-limits",
        ),
        long_valued=("--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars"),
        long_optional=("--eof", "--replace", "--max-lines"),
    ),
    "watch": Wrapper(
        flags="bcCeghptx",
        valued="nq",
        optional="d",
        joins=True,
        long_flags=(
            "--beep",
            "--color",
            "--no-color",
            "--errexit",
            "--chgexit",
            "--precise",
            "--no-title",
            "--exec",
            "--no-wrap",
        ),
        long_valued=("--interval", "--differences"),
    ),
    "busybox": Wrapper(),
    "toybox": Wrapper(),
    "sudo": Wrapper(
        flags="AbEHiKknPSs",
        valued="uUgCchDpRrTt",
        stops=("-e", "-l", "-v", "-V", "-K"),
        launcher=False,
        long_flags=(
            "--askpass",
            "--background",
            "--preserve-env",
            "--set-home",
            "--login",
            "--non-interactive",
            "--shell",
            "--stdin",
            "--reset-timestamp",
        ),
        long_valued=(
            "--user",
            "--group",
            "--chdir",
            "--prompt",
            "--role",
            "--type",
            "--other-user",
            "--close-from",
            "--host",
            "--command-timeout",
        ),
    ),
    "doas": Wrapper(flags="Lns", valued="uC", launcher=False),
    "pkexec": Wrapper(
        launcher=False,
        long_flags=("--disable-internal-agent", "--keep-cwd"),
        long_valued=("--user",),
    ),
    "su": Wrapper(
        flags="lmpfP",
        valued="gGsw",
        code=("-c", "--command"),
        command=False,
        launcher=False,
        long_flags=("--login", "--preserve-environment", "--pty"),
        long_valued=("--group", "--supp-group", "--shell", "--command", "--whitelist-environment"),
    ),
    "runuser": Wrapper(
        flags="lmpfP",
        valued="gGsuw",
        code=("-c", "--command"),
        command=False,
        launcher=False,
        long_flags=("--login", "--preserve-environment", "--pty"),
        long_valued=("--group", "--supp-group", "--shell", "--command", "--user"),
    ),
    "chroot": Wrapper(
        positionals=1,
        launcher=False,
        long_flags=("--skip-chdir",),
        long_valued=("--userspec", "--groups"),
    ),
    "flock": Wrapper(
        flags="sexnuoFv",
        valued="wEc",
        code=("-c", "--command"),
        positionals=1,
        launcher=False,
    ),
    "script": Wrapper(flags="aefqT", code=("-c", "--command"), command=False, launcher=False),
    "strace": Wrapper(flags="cCdfFhiqrtTvVxyzZwk", valued="abeEIoOpPsSuX", launcher=False),
    "ltrace": Wrapper(flags="bcCfhiLrStTV", valued="aAeFlnopsuwx", launcher=False),
    "nsenter": Wrapper(launcher=False),
    "unshare": Wrapper(launcher=False),
    "firejail": Wrapper(launcher=False),
    "fakeroot": Wrapper(launcher=False),
    "proxychains": Wrapper(launcher=False),
    "torsocks": Wrapper(launcher=False),
    "xvfb-run": Wrapper(launcher=False),
    "dbus-run-session": Wrapper(launcher=False),
    "systemd-run": Wrapper(launcher=False),
    "parallel": Wrapper(launcher=False),
    "npx": Wrapper(launcher=False),
    "bunx": Wrapper(launcher=False),
    "uvx": Wrapper(launcher=False),
    "pipx run": Wrapper(launcher=False),
    "uv run": Wrapper(launcher=False),
    "poetry run": Wrapper(launcher=False),
    "pipenv run": Wrapper(launcher=False),
    "pixi run": Wrapper(launcher=False),
    "bundle exec": Wrapper(launcher=False),
    "npm exec": Wrapper(launcher=False, code=("-c", "--call")),
    "pnpm exec": Wrapper(launcher=False),
    "pnpm dlx": Wrapper(launcher=False),
    "yarn exec": Wrapper(launcher=False),
    "yarn dlx": Wrapper(launcher=False),
    "conda run": Wrapper(
        valued="np",
        launcher=False,
        long_flags=("--no-capture-output", "--live-stream"),
        long_valued=("--name", "--prefix"),
    ),
    "direnv exec": Wrapper(positionals=1, launcher=False),
    "nix-shell": Wrapper(code=("--run", "--command"), command=False, launcher=False),
    "ssh": _SSH,
    "slogin": _SSH,
}
"""Programs that start another program given in their words: the options each understands
(an option not listed makes the line opaque), and whether rules may look through it."""


SHELLS = names("sh bash dash zsh ksh mksh ash yash posh rbash")
"""Shells whose code this package reads (``bash -c 'code'``, ``sh <<EOF``)."""


SHELL_FLAGS = "abefhkmnptuvxBCEHPTilrs"
"""The short options of :data:`SHELLS` that take no value (``-c`` aside)."""
SHELL_LONG = (
    "--login",
    "--noprofile",
    "--norc",
    "--posix",
    "--restricted",
    "--verbose",
    "--noediting",
    "--debugger",
)
"""The long options of :data:`SHELLS` that take no value."""


INTERPRETERS: Mapping[str, tuple[str, ...]] = {
    "python": ("-c",),
    "pypy": ("-c",),
    "ipython": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",),
    "ruby": ("-e",),
    "irb": (),
    "perl": ("-e", "-E"),
    "php": ("-r",),
    "Rscript": ("-e",),
    "R": ("-e",),
    "julia": ("-e", "-E", "--eval", "--print"),
    "lua": ("-e",),
    "luajit": ("-e",),
    "tclsh": (),
    "wish": (),
    "expect": ("-c",),
    "osascript": ("-e",),
    "pwsh": ("-c", "-Command", "-EncodedCommand"),
    "powershell": ("-c", "-Command", "-EncodedCommand"),
    "groovy": ("-e",),
    "jshell": (),
    "fish": ("-c", "--command"),
    "csh": ("-c",),
    "tcsh": ("-c",),
    "nu": ("-c", "--commands"),
    "xonsh": ("-c",),
    "elvish": ("-c",),
    "gdb": ("-ex", "--eval-command", "-x", "--command"),
    "sqlite3": (),
    "psql": ("-c", "--command"),
    "mysql": ("-e", "--execute"),
}
"""Programs that run code in a language this package does not read, and the options that give
them that code: such code makes a line opaque (it is searched for the programs deny rules
name, as text). Code they read from standard input (``python - <<EOF``, ``perl <<< ..``) may
run any program: deny rules all match it."""


SCRIPT_SHELLS = names("fish csh tcsh nu xonsh elvish pwsh powershell")
"""Interpreters of :data:`INTERPRETERS` that are shells: a script operand runs unseen commands."""


STDIN_CODE = names(
    "ed red ex vi vim nvim view vimdiff rvim rview gvim evim emacs sqlite3 psql mysql gdb dc "
    "ftp sftp lftp"
)
"""Programs that read commands from standard input whatever their operands, some of which run
shell commands (``ed``'s ``!rm f``, ``sqlite3``'s ``.shell``): fed anything, they may run
anything."""


RUNS_UNSEEN = names("at batch sg newgrp crontab")
"""Programs that run commands this line does not show (``at`` and ``batch`` read them from
standard input or a file, ``sg group -c``, ``crontab`` installs them)."""


VI = names("vi vim nvim view vimdiff rvim rview gvim evim ex")
"""vi and its kin: ``-s``/``-S`` run a script the line does not show."""
AWK_SED: Mapping[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("awk", "gawk", "mawk", "nawk"),
        ("-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"),
    ),
    "sed": ("-f", "--file"),
}
"""The options of ``awk`` and ``sed`` that run a program file the line does not show."""


def interpreter(name: str) -> str | None:
    """The :data:`INTERPRETERS` entry for a program name (``python3.11`` is ``python``).

    Args:
        name: The program's name.

    Returns:
        The entry's name, or None when the program is no interpreter of the table.
    """
    if name in INTERPRETERS:
        return name
    base = re.sub(r"[\d.]+$", "", name)
    return base if base in INTERPRETERS else None


def wrapper_options(
    wrapper: Wrapper, words: list[Word], skip: int
) -> tuple[int, list[str], list[Word], str | None] | None:
    """Read a wrapper's options.

    Args:
        wrapper: How the wrapper reads its options.
        words: The command's words, the wrapper's name first.
        skip: How many words name the wrapper (``uv run`` is two).

    Returns:
        None when an option is not understood or a word only the run knows comes before the
        command; else the index of the command's first word (``len(words)`` when none runs),
        the ``NAME=value`` words it sets, the code words it runs, and ``xargs``' replace
        string.
    """
    index = skip
    env: list[str] = []
    code: list[Word] = []
    replace: str | None = None
    positionals = wrapper.positionals
    longs = (*wrapper.long_flags, *wrapper.long_valued, *wrapper.long_optional)

    def value_of(attached: str) -> str | None:
        nonlocal index
        if attached:
            return attached
        if index >= len(words) or not words[index].known:
            return None
        index += 1
        return words[index - 1].value

    while index < len(words):
        word = words[index]
        if not word.known:
            return None
        text = word.value
        if text in wrapper.stops:
            return len(words), env, code, replace
        if text == "--":
            index += 1
            break
        if wrapper.assigns and (ASSIGNMENT.fullmatch(text) or text == "-"):
            env += [text] if text != "-" else []
            index += 1
            continue
        if text.startswith("--") and len(text) > 2:
            name, equals, attached = text.partition("=")
            matches = [o for o in longs if o == name] or [o for o in longs if o.startswith(name)]
            if len(matches) != 1:
                return None
            option = matches[0]
            index += 1
            if option in wrapper.long_valued:
                value = value_of(attached)
                if value is None:
                    return None
                if option in wrapper.code:
                    code.append(literal(value))
            elif equals and option not in wrapper.long_optional:
                return None
            if option == "--replace":
                replace = attached or "{}"
            continue
        if text.startswith("-") and len(text) > 1:
            if text in wrapper.stops:
                return len(words), env, code, replace
            letters = text[1:]
            index += 1
            for position, letter in enumerate(letters):
                rest = letters[position + 1 :]
                if letter in wrapper.optional:
                    replace = (rest or "{}") if letter == "i" else replace
                    break
                if letter in wrapper.valued or f"-{letter}" in wrapper.code:
                    value = value_of(rest)
                    if value is None:
                        return None
                    if f"-{letter}" in wrapper.code:
                        code.append(literal(value))
                    replace = value if letter == "I" else replace
                    break
                if letter not in wrapper.flags:
                    return None
                if f"-{letter}" in wrapper.stops:
                    return len(words), env, code, replace
            continue
        if not wrapper.command:
            index += 1
            continue
        if not positionals:
            break
        positionals -= 1
        index += 1
        if not positionals and index < len(words) and words[index].value.startswith("-"):
            # The command, or an option some versions read anyway: only a code option is sure.
            if words[index].value not in wrapper.code:
                return None
            index += 1
            value = value_of("")
            if value is None:
                return None
            code.append(literal(value))
    if positionals and wrapper.command:
        return None
    return index, env, code, replace
