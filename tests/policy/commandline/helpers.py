"""What the tests of nbagent.policy.commandline share: rules, the home folder, spellings of
words."""

from __future__ import annotations

import os

from hypothesis import strategies as st

ALLOWED = ["ls:*", "git status:*", "cat:*"]
"""Allow rules for plain commands."""
HOME = os.path.expanduser("~")
"""The home folder ``~`` stands for."""


def spelled(draw: st.DrawFn, word: str) -> str:
    """``word`` spelled with quotes, backslashes and ``$'..'`` split anywhere.

    Args:
        draw: Hypothesis' draw function (call this from a composite strategy).
        word: The word.

    Returns:
        A spelling bash reads as ``word``.
    """
    out = []
    for char in word:
        style = draw(st.sampled_from(["plain", "backslash", "single", "double", "hex", "octal"]))
        out.append(
            {
                "plain": char,
                "backslash": "\\" + char,
                "single": f"'{char}'",
                "double": f'"{char}"',
                "hex": f"$'\\x{ord(char):02x}'",
                "octal": f"$'\\{ord(char):03o}'",
            }[style]
        )
    return "".join(out)
