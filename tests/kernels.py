"""Real IPython kernels for tests: start one with an environment, run code, read outputs."""

from __future__ import annotations

import inspect
import os
import queue
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager


@dataclass
class Execution:
    """What one execute request produced."""

    status: str = ""
    """The reply's status: ok, error or aborted."""
    outputs: list[dict[str, Any]] = field(default_factory=list)
    """iopub messages' contents, in order (stream, display_data, update_display_data, ...)."""
    error: dict[str, Any] = field(default_factory=dict)
    """The reply content when the status is error."""
    execution_count: int | None = None
    """The count the reply gave the cell."""
    payload: list[dict[str, Any]] = field(default_factory=list)
    """The reply's payloads (``set_next_input``: a new cell for the front end to add)."""

    @property
    def text(self) -> str:
        """Every text the cell showed: streams, plain text and Markdown."""
        parts = []
        for content in self.outputs:
            if "text" in content:
                parts.append(content["text"])
            data = content.get("data", {})
            parts.append(data.get("text/markdown") or data.get("text/plain", ""))
        return "\n".join(parts)


def execute(
    client: BlockingKernelClient,
    code: str,
    timeout: float = 60,
    on_output: Any = None,
    stdin: Any = None,
    cell_id: str | None = None,
) -> Execution:
    """Run code in the kernel and collect its outputs until it is idle again.

    Args:
        client: A started client.
        code: The cell.
        timeout: Seconds to wait for the kernel at most between two messages.
        on_output: Called with the content of each output (and widget message) as it arrives.
        stdin: Answers the kernel's input requests: called with the prompt, returns the reply,
            or None to leave the request unanswered (without it, the cell has no stdin). The
            reply names its request in its parent header, as JupyterLab's does; a callable
            taking a second argument gets the request message too.
        cell_id: The id of the cell being run, sent in the request's metadata as JupyterLab
            sends it.

    Returns:
        The execution.
    """
    request = client.session.msg(
        "execute_request",
        {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": stdin is not None,
            "stop_on_error": True,
        },
    )
    if cell_id is not None:
        request["metadata"]["cellId"] = cell_id
    client.shell_channel.send(request)
    msg_id = request["header"]["msg_id"]
    result = Execution()
    quiet_since = time.monotonic()
    while True:
        if stdin is not None:
            try:
                request = client.get_stdin_msg(timeout=0.05)
                prompt = request["content"]["prompt"]
                takes_request = len(inspect.signature(stdin).parameters) > 1
                answer = stdin(prompt, request) if takes_request else stdin(prompt)
                if answer is not None:
                    answer_request(client, answer, request)
            except queue.Empty:
                pass
        try:
            message = client.get_iopub_msg(timeout=timeout if stdin is None else 0.05)
        except queue.Empty:
            if time.monotonic() - quiet_since > timeout:
                raise TimeoutError(f"no output from the kernel for {timeout} s") from None
            continue
        quiet_since = time.monotonic()
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "status" and content["execution_state"] == "idle":
            break
        if kind in ("stream", "display_data", "update_display_data", "execute_result", "error"):
            result.outputs.append(content)
        if kind in ("stream", "display_data", "update_display_data", "comm_msg") and on_output:
            on_output(content)
    reply = client.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:  # wait_for_ready's extra replies
        reply = client.get_shell_msg(timeout=timeout)
    result.status = reply["content"]["status"]
    result.execution_count = reply["content"].get("execution_count")
    result.payload = reply["content"].get("payload") or []
    if result.status == "error":
        result.error = reply["content"]
    return result


def answer_request(client: BlockingKernelClient, answer: str, request: dict[str, Any]) -> None:
    """Answer an input request as JupyterLab does: the reply's parent header is the request's.

    Args:
        client: A started client.
        answer: What the person typed.
        request: The input request message answered.
    """
    client.stdin_channel.send(client.session.msg("input_reply", {"value": answer}, request))


@contextmanager
def kernel(
    env: Mapping[str, str] | None = None, cwd: str | None = None
) -> Iterator[tuple[KernelManager, BlockingKernelClient]]:
    """Start a real IPython kernel with extra environment variables.

    Args:
        env: Variables added to this process's environment.
        cwd: The kernel's working folder.

    Yields:
        The manager and a started blocking client.
    """
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(env={**os.environ, **(env or {})}, cwd=cwd)
    client = manager.blocking_client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield manager, client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
