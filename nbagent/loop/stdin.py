"""Asking the person on the kernel's stdin, each answer bound to the request it was typed for.

ipykernel's ``input()`` takes whatever reply comes next on the stdin socket. A question that
nbagent withdrew (its call was stopped or reached its time limit) stays on screen in
JupyterLab as an input box, and an answer typed there later would answer the question open at
that moment. A front end says which request a reply answers, in the reply's parent header
(JupyterLab and Notebook 7 do): :func:`ask` sends its own request and takes only the reply to
it, or a reply that names no request (a console's); a reply to another request does nothing,
and says so.

Each request carries :data:`METADATA`, by which nbagent's JupyterLab extension knows it: once
the person answers, the extension takes the answer JupyterLab records in the cell (the prompt
and what was typed, as a ``stdin`` stream) out again, since the call's card in the transcript
says what was asked and answered. A question withdrawn while it waits (:func:`withdraw`) is
shown withdrawn on its box by that extension (the box is disabled, and goes when the cell
ends); without it, the cell says so in a line of its output.

Outside a kernel (an InteractiveShell, a terminal IPython), :func:`ask` is ``input()``.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from typing import Any

EOF = "\x04"
"""What a front end sends for end of input (Ctrl-D)."""

POLL_SECONDS = 0.01
"""How long one wait on the stdin socket lasts: signals (Stop, a withdrawn question) are seen
between two waits, as in ipykernel."""

REMEMBERED = 64
"""How many of the latest requests' prompts are kept, to name the question a late answer was
typed for."""

METADATA = {"nbagent": "question"}
"""The metadata of nbagent's input requests: nbagent's JupyterLab extension knows them by it."""

_prompts: OrderedDict[str, str] = OrderedDict()
"""The prompts of the latest requests sent, by message id (main thread only)."""

_open: tuple[str, str] | None = None
"""The request left waiting for its answer when :func:`ask` was interrupted (Stop, a
withdrawal): its message id and the client id of the front end it was sent to (main thread
only)."""


def ask(prompt: str) -> str:
    """Ask the person and return what they typed for this very question.

    Args:
        prompt: The prompt, as ``input()`` takes it.

    Returns:
        The answer.

    Raises:
        StdinNotImplementedError: The front end has no stdin (``nbconvert``, a headless run).
        EOFError: The person ended input (Ctrl-D).
        KeyboardInterrupt: Stop was pressed while waiting.
    """
    global _open
    _open = None
    kernel = _kernel()
    if kernel is None:
        return input(prompt)
    return _KernelStdin(kernel).ask(prompt)


def withdraw(reason: str) -> None:
    """Say that the question being asked was withdrawn, and why.

    Called on the cell's thread once its wait was interrupted. The front end that shows the
    question's box is told, when it has nbagent's JupyterLab extension (it disables the box and
    says why on it); else a line in the cell's output says so.

    Args:
        reason: Why, as a clause ("its call reached its time limit").
    """
    global _open
    left, _open = _open, None
    if left is None or not _shown_withdrawn(*left, reason):
        print(f"\n(Question withdrawn: {reason}. An answer typed now does nothing.)")


def _shown_withdrawn(request: str, client: str, reason: str) -> bool:
    """Whether the front end ``client`` shows the box of ``request`` withdrawn, once told."""
    from nbagent.frontend.channel import latest

    channel = latest()
    return channel is not None and channel.show_withdrawn(request, client, reason)


def _kernel() -> Any:
    """The running ipykernel, if it has what :class:`_KernelStdin` needs; else None."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    needed = ("stdin_socket", "session", "get_parent", "_get_shell_context_var")
    if kernel is None or not all(hasattr(kernel, name) for name in needed):
        return None
    return kernel


class _KernelStdin:
    """One kernel's stdin socket, asked and read as ipykernel does, replies matched by id."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.socket = kernel.stdin_socket
        self.session = kernel.session

    def ask(self, prompt: str) -> str:
        """Send an input request and wait for the reply to it (see :func:`ask`)."""
        from IPython.core.error import StdinNotImplementedError

        if not getattr(self.kernel, "_allow_stdin", False):
            raise StdinNotImplementedError(
                "nbagent asked a question, but this front end does not support input requests."
            )
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        for late in self.waiting():
            _say_dropped(*late)
        global _open
        asked = self.request(prompt)
        _open = (asked, _client(self.kernel.get_parent("shell")))
        while True:
            reply = self.receive()
            if reply is None:
                continue
            answered = _answered(reply)
            value = _value(reply)
            if answered and answered != asked:
                _say_dropped(value, answered)
                continue
            _open = None
            if value == EOF:
                raise EOFError
            return value

    def waiting(self) -> list[tuple[str, str]]:
        """Take the replies already waiting: they were typed for questions no longer asked.

        Returns:
            Each reply's text and the id of the request it answers ("" if it names none).
        """
        import zmq

        answers = []
        while self.socket.poll(0):
            _, reply = self.session.recv(self.socket, mode=zmq.NOBLOCK)
            if reply is None:
                break
            answers.append((_value(reply), _answered(reply)))
        return answers

    def request(self, prompt: str) -> str:
        """Send an input request on behalf of the running cell; return its message id."""
        from jupyter_client.jsonutil import json_clean

        ident = self.kernel._get_shell_context_var(self.kernel._shell_parent_ident)
        content = json_clean({"prompt": prompt, "password": False})
        message = self.session.send(
            self.socket,
            "input_request",
            content,
            self.kernel.get_parent("shell"),
            ident=ident,
            metadata=METADATA,
        )
        asked = str(message["header"]["msg_id"])
        _prompts[asked] = prompt
        while len(_prompts) > REMEMBERED:
            _prompts.popitem(last=False)
        return asked

    def receive(self) -> dict[str, Any] | None:
        """Wait a moment for one reply; None if none came (or it was not a valid message)."""
        import zmq

        try:
            readable, _, failed = zmq.select([self.socket], [], [self.socket], POLL_SECONDS)
            if not (readable or failed):
                return None
            _, reply = self.session.recv(self.socket)
        except KeyboardInterrupt:
            raise KeyboardInterrupt("Interrupted by user") from None
        except Exception:  # noqa: BLE001 - a garbled message is skipped, as ipykernel does
            self.kernel.log.warning("Invalid message on stdin", exc_info=True)
            return None
        return reply


def _value(reply: dict[str, Any]) -> str:
    """The text of an input reply ("" when it has none)."""
    content = reply.get("content")
    value = content.get("value", "") if isinstance(content, dict) else ""
    return value if isinstance(value, str) else ""


def _answered(reply: dict[str, Any]) -> str:
    """The id of the request a reply names ("" when it names none)."""
    parent = reply.get("parent_header")
    answered = parent.get("msg_id", "") if isinstance(parent, dict) else ""
    return answered if isinstance(answered, str) else ""


def _client(parent: Any) -> str:
    """The client id of the front end that sent a request (its header's session; "" if none)."""
    header = parent.get("header") if isinstance(parent, dict) else None
    session = header.get("session", "") if isinstance(header, dict) else ""
    return session if isinstance(session, str) else ""


def _question(prompt: str) -> str:
    """The question a prompt asks: its first line, without the answers it offers."""
    first = prompt.strip().split("\n")[0]
    question, mark, _ = first.partition("?  ")
    return question + "?" if mark else first


def _say_dropped(answer: str, answered: str = "") -> None:
    """Tell the person an answer reached no question, naming the question when known."""
    asked = _question(_prompts.get(answered, ""))
    question = f" to {asked!r}" if asked else ""
    print(f"(Your answer {answer!r}{question} did nothing: that question had been withdrawn.)")
