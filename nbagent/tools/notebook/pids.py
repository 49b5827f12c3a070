"""Whether a process runs on this machine, by its id."""

from __future__ import annotations

import os


def process_exists(pid: int) -> bool:
    """Tell whether a process with this id runs on this machine.

    On Windows, where signalling a process stops it, every process counts as running.

    Args:
        pid: The process id.
    """
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return True
