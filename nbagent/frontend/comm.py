"""The kernel comm the front-end channel uses: ipykernel's, fitted to answers over a subshell.

Three things differ from a plain comm, all because the front end answers on a subshell of its
own while the ``%%agent`` cell keeps the main shell busy:

- ipykernel 7.4 sends a comm reply to the subshell that sent the comm's last message: the
  channel's requests are sent from the ``%%agent`` cell (the main shell), so the answers would
  wait for the cell. This comm keeps each answer on the subshell the front end chose.
- ipykernel publishes a busy and an idle status around every shell message it handles, and
  JupyterLab shows the kernel's status from them: after each answer the kernel would show
  "Idle" while the ``%%agent`` cell still runs. Answers on these comms publish no status.
- A comm triggers IPython's ``pre_execute`` and ``post_execute`` events around each message
  (for widget callbacks); ``post_execute`` flushes matplotlib's inline figures, so an answer
  arriving while a cell NotebookRun runs would show and close that cell's figure half drawn.
  Answers on these comms trigger no events: they run no user code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


@functools.cache
def _comm_class() -> type:
    """The comm class (made once, when first needed: ipykernel is imported then)."""
    from ipykernel.comm.comm import BaseComm

    class SubshellComm(BaseComm):
        """A comm whose answers stay on the subshell the front end sent them on.

        Args:
            on_message: Called with each message's data; set before the comm opens, so that
                no answer comes before there is someone to take it.
            **kwargs: As for ipykernel's comm.
        """

        def __init__(self, on_message: Callable[[dict[str, Any]], None], **kwargs: Any) -> None:
            self._on_message = on_message
            super().__init__(**kwargs)

        def _reply_subshell_for(self, data: Any, default: str | None) -> str | None:
            return default

        def handle_msg(self, msg: dict[str, Any]) -> None:
            """Hand the message's data on, without IPython's execution events."""
            self._on_message(msg["content"].get("data") or {})

    return SubshellComm


def open_comm(target: str, on_message: Callable[[dict[str, Any]], None]) -> Any:
    """Open a comm to the front ends and call ``on_message`` with each message's data.

    Args:
        target: The comm target the front end registered.
        on_message: Called on the thread that handles the message (a subshell's).

    Returns:
        The open comm (``send``, ``close``).
    """
    comm = _comm_class()(on_message, target_name=target, data={})
    _quiet_answers(comm.kernel)
    return comm


def _quiet_answers(kernel: Any) -> None:
    """Make the kernel publish no busy/idle status for messages on a :func:`open_comm` comm.

    Wraps the kernel's ``_publish_status`` once; every other message keeps its status.
    """
    if kernel is None or getattr(kernel, "_nbagent_quiet_answers", False):
        return
    publish = kernel._publish_status
    comm_class = _comm_class()

    def publish_status(status: str, channel: str, parent: Any = None) -> None:
        message = parent or kernel.get_parent(channel)
        header = (message.get("header") or {}) if isinstance(message, dict) else {}
        if header.get("msg_type") == "comm_msg":
            comm_id = (message.get("content") or {}).get("comm_id")
            if isinstance(kernel.comm_manager.get_comm(comm_id), comm_class):
                return
        publish(status, channel, parent)

    kernel._publish_status = publish_status
    kernel._nbagent_quiet_answers = True
