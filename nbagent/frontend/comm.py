"""The kernel comm the front-end channel uses: ipykernel's, with replies left on their subshell.

ipykernel 7.4 sends a comm reply to the subshell that sent the comm's last message; the
channel's messages are sent from the ``%%agent`` cell (the main shell, busy until the cell
ends), so the replies would wait for the cell. This comm keeps each reply on the subshell the
front end sent it on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def open_comm(target: str, on_message: Callable[[dict[str, Any]], None]) -> Any:
    """Open a comm to the front ends and call ``on_message`` with each message's data.

    Args:
        target: The comm target the front end registered.
        on_message: Called on the thread that handles the message (a subshell's).

    Returns:
        The open comm (``send``, ``close``).
    """
    from ipykernel.comm.comm import BaseComm

    class SubshellComm(BaseComm):
        """A comm whose replies stay on the subshell the front end chose."""

        def _reply_subshell_for(self, data: Any, default: str | None) -> str | None:
            return default

    comm = SubshellComm(target_name=target, data={})
    comm.on_msg(lambda message: on_message(message["content"].get("data") or {}))
    return comm
