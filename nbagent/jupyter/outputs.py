"""What the magics show outside a run's transcript: whether the code runs in a kernel, and
what background work has to tell the user.

Kept apart from :mod:`nbagent.jupyter.display` (the live transcript of a run, and the
rendering it imports), which ``%load_ext nbagent`` need not import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.display import display

from nbagent.core.markup import Markdown

if TYPE_CHECKING:
    from nbagent.core.notices import Notices


def in_kernel() -> bool:
    """Tell whether the code runs in a Jupyter kernel (so widgets can be shown)."""
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def show_notices(notices: Notices) -> None:
    """Show what background work has to tell the user (once), as a quoted block.

    Args:
        notices: The queue; it is emptied.
    """
    lines = notices.take()
    if lines:
        display(Markdown(notices_markdown(lines)))


def notices_markdown(lines: list[str]) -> str:
    """Notices as a quoted block, a line each.

    Args:
        lines: Notices (Markdown, one line each).

    Returns:
        The block.
    """
    return "\n".join(f"> {line}  " for line in lines)
