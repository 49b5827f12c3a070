"""What a shell command line runs, read the way bash reads it, for the Bash tool's permission rules.

A Bash rule names commands (``Bash(git status:*)``), but the model writes command lines, and a
prompt-injected model writes them to get past the rules: ``\\rm f``, ``r''m f``, ``/bin/rm f``,
``env rm f``, ``true; rm f``, ``bash -c 'rm f'``, ``ls $(rm f)``, ``git -c alias.x='!rm f' x``.
This package parses a line with tree-sitter-bash and answers in terms of what bash would run.

**Simple commands.** :func:`parse` gives every simple command the line runs: the ones in lists,
pipelines, ``!``, ``&``, subshells, ``{ }``, ``if``/``while``/``until``/``for``/``select``/
``case``, command and process substitutions, and the ones other programs start: the code of
``bash -c`` / ``sh -c`` / ``eval`` / a here-document fed to a shell, the program after a wrapper
(``env``, ``command``, ``exec``, ``nice``, ``timeout``, ``sudo``, ``xargs``, ... with their
options), ``find -exec``/``-execdir``/``-ok``/``-okdir`` (and ``find -delete`` as ``rm``); the
wrappers themselves are listed apart (:attr:`CommandLine.wrappers`). A command's words are what
bash passes to the program: quotes and backslashes removed, ``$'..'`` decoded, ``VAR=value``
prefixes set aside (:attr:`SimpleCommand.assignments`), the program reduced to its name
(``/bin/rm`` is ``rm``). A word whose value only the run decides (``$x``, a glob, a brace
expansion) is kept as written and listed in :attr:`SimpleCommand.unknown`.

**Opaque.** Some lines run code that no rule can name, or cannot be read:
:attr:`CommandLine.opaque` says why. Command and process substitution (their output becomes
words), parameter expansion with any operator (``${x:=..}``, ``${x@P}``, ``${!x}``, ``${a[i]}``;
only ``$NAME``, ``${NAME}`` and positional or special parameters are plain), arithmetic
(``$((..))``, ``$[..]``, ``((..))``, ``let``, ``for ((..))``, the ``[[ -eq ]]`` family: bash
evaluates the text of variables there, ``a[$(cmd)]`` included), a program name computed at run
time, ``eval``/``bash -c`` of computed text, interpreters given code (``python -c``,
``curl .. | sh``), code the line does not show or feeds on standard input (a script given to a
shell, ``source``, ``awk -f``, a here-document or here-string fed to ``python``, ``ed``,
``vim``, ``sqlite3``; ``at``, ``sg``: the program it runs may be any, so every deny rule
matches it), substitutions in an unquoted here-document, function definitions, aliases, assignments
to variables that change how programs run (``PATH=..``, ``LD_PRELOAD=..``; lower-case names are
the script's own), syntax errors, and every node type this package does not know: unknown is
opaque, never allowed. An opaque line is only allowed by an exact rule for the whole line.

**Rule specifiers.** A spec is what goes inside ``Bash(...)``: ``git status:*`` (a prefix: the
command's words start with these words, compared after quote removal) or an exact command
(``npm run test``, compared word for word, or the whole line as written). A line is allowed
when it is not opaque, redirects no file, and every simple command matches a spec (a wrapper
that only starts the next program, like ``timeout 5``, leaves the match to that program;
``sudo`` needs a spec of its own). A prefix never covers a use of a program that can run other
code or write anywhere through words the spec does not name
(:data:`~nbagent.policy.commandline.risks.RISKS`): ``git:*`` does not cover ``git -c alias.x=.. x``,
``find:*`` does not cover ``find -delete``, ``awk:*`` covers no awk program at all. A deny
spec is matched the other way round: it denies a line when any command (nested ones included)
may be the one it names, so a command whose program only the run decides matches every deny
spec.

Modules, each with one job:

- :mod:`~nbagent.policy.commandline.parsing`: :func:`parse` and :func:`paths_named`, on one cached
  reading of a line;
- :mod:`~nbagent.policy.commandline.rules`: :func:`allowed_by`, :func:`denied_by`,
  :func:`always_spec`: rule specifiers matched against what a line runs;
- :mod:`~nbagent.policy.commandline.results`: :class:`CommandLine` and :class:`SimpleCommand`;
- :mod:`~nbagent.policy.commandline.syntax`: tree-sitter-bash, the text mended where it misreads,
  node kinds and tree shapes;
- :mod:`~nbagent.policy.commandline.reader`: the walk over statements, words, redirections and
  here-documents;
- :mod:`~nbagent.policy.commandline.running`: what a simple command starts (wrappers, shells,
  ``eval``, ``find -exec``, interpreters' code, scripts and input the line does not show);
- :mod:`~nbagent.policy.commandline.words`: shell words, quote removal, ``$'..'``;
- :mod:`~nbagent.policy.commandline.programs`: the tables of wrappers (with their options), shells,
  interpreters, and the environment variables that leave the code alone;
- :mod:`~nbagent.policy.commandline.risks`: :data:`~nbagent.policy.commandline.risks.RISKS`, the
    words
  through which programs run other code or write anywhere, and ``sed`` scripts;
- :mod:`~nbagent.policy.commandline.paths` and :mod:`~nbagent.policy.commandline.globs`: the paths a
    word may
  name, spelled out, with globs matched the way bash matches them.

Importing this package does not import tree-sitter; the first line read does.
"""

from __future__ import annotations

from nbagent.policy.commandline.parsing import parse, paths_named
from nbagent.policy.commandline.results import CommandLine, SimpleCommand
from nbagent.policy.commandline.rules import allowed_by, always_spec, denied_by

__all__ = [
    "CommandLine",
    "SimpleCommand",
    "allowed_by",
    "always_spec",
    "denied_by",
    "parse",
    "paths_named",
]
