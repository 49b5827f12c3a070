"""What a shell command line runs, read the way bash reads it, for the Bash tool's permission rules.

The reading lives in :mod:`nbagent.commandline.reader`; this package gives its public names.
"""

from __future__ import annotations

from nbagent.commandline.parsing import parse, paths_named
from nbagent.commandline.results import CommandLine, SimpleCommand
from nbagent.commandline.rules import allowed_by, always_spec, denied_by

__all__ = [
    "CommandLine",
    "SimpleCommand",
    "allowed_by",
    "always_spec",
    "denied_by",
    "parse",
    "paths_named",
]
