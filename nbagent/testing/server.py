"""FakeAnthropicServer: a loopback Messages API that answers from a script, for tests and demos.

It is a real HTTP server on 127.0.0.1, so the real ``anthropic`` SDK talks to it through
``base_url``, streaming included. It checks each request as the API does (``fakeapi.rules``),
simulates prompt caching by prefix (``fakeapi.cache``), and answers each valid
``POST /v1/messages`` with the next item of its script (``fakeapi.script``):

- a ``Reply``: content (text citing web results, tool uses, server-side tool search, web
  search), a stop reason, a delay;
- a ``Fault``: an HTTP error, a dropped stream, a malformed body, an error event mid-stream;
- a callable ``(request_body) -> Reply | Fault``, to answer from what was asked.

It also plays the API's server-side compaction (beta ``compact-2026-01-12``, see
``fakeapi.compaction``), its context editing (``clear_tool_uses_20250919``, beta
``context-management-2025-06-27``, see ``fakeapi.edits``) and refuses a prompt longer than
the model's context window (``context_window``, ``context_windows``) with the API's "prompt
is too long" error.

An invalid request is answered 400 without using the script. A script that cannot be played
(empty queue; a reply calling a tool the model cannot see, unless the ``ToolUse`` is marked
``unchecked`` to script a misbehaving model) is answered 500 with ``x-should-retry: false``
(the SDK does not retry it) and recorded in ``errors``::

    script = [Reply.tool_use("Read", {"path": "a.txt"}), Reply.text("Done.")]
    with FakeAnthropicServer(script) as api:
        client = api.client()
        ...
        api.assert_no_errors()
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from nbagent.core.tokens import compact_json, count_tokens
from nbagent.testing.fakeapi import wire
from nbagent.testing.fakeapi.cache import PromptCache
from nbagent.testing.fakeapi.compaction import (
    DEFAULT_CONTEXT_WINDOW,
    CompactEdit,
    CompactionSigner,
    compact,
    compact_edit,
)
from nbagent.testing.fakeapi.edits import (
    COMPACT_BETA,
    CONTEXT_BETA,
    MIN_TRIGGER,
    clear_edit,
    clear_tool_uses,
    memory_beta_error,
)
from nbagent.testing.fakeapi.http import (
    DropAnswer,
    HttpAnswer,
    JsonAnswer,
    LoopbackServer,
    StreamAnswer,
)
from nbagent.testing.fakeapi.rules import (
    ApiError,
    check_request,
    context_tools,
    invalid,
    model_messages,
)
from nbagent.testing.fakeapi.script import (
    Fault,
    Reply,
    ScriptError,
    ScriptItem,
    render,
)
from nbagent.testing.fakeapi.thinking import ThinkingSigner, config_error

if TYPE_CHECKING:
    import anthropic

_MESSAGES, _COUNT_TOKENS = "/v1/messages", "/v1/messages/count_tokens"


@dataclass
class RecordedRequest:
    """A request the server received.

    Attributes:
        path: The URL path, e.g. ``/v1/messages``.
        headers: The headers, names lower-cased.
        body: The parsed JSON body (None if it did not parse).
        status: The HTTP status answered (0 if the connection was closed with no answer).
        stream: Whether the request asked for a stream.
        interrupted: Whether the client went away before the end of the answer.
        answer: The message answered (as a non-streaming response carries it, whether it
            was streamed or not), if the request got one.
    """

    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0
    stream: bool = False
    interrupted: bool = False
    answer: dict[str, Any] | None = None

    def mark_interrupted(self) -> None:
        """Note that the client went away before the end of the answer."""
        self.interrupted = True


class FakeAnthropicServer:
    """A Messages API on 127.0.0.1 that answers from a script.

    Args:
        script: The first script items (more with ``enqueue``).
        supports_tool_reference: False to act as an endpoint without tool search: any
            ``defer_loading``, tool search tool or ``tool_reference`` is rejected.
        deferred_in_prefix: Whether deferred tool definitions belong to the cached prefix
            (see ``nbagent.testing.fakeapi.cache``).
        context_window: The context window, in input tokens, of every model not in
            ``context_windows``: a longer prompt (counted from its last compaction block on,
            after compacting if the request compacts) is refused.
        context_windows: Context windows by model name.
        min_compaction_trigger: The smallest compact ``trigger.value`` accepted (the API's
            is 50,000; lower it to test compaction with short conversations).
        supports_compaction: False to act as an endpoint without server-side compaction: the
            ``compact-2026-01-12`` beta is ignored, so ``context_management`` is refused.
        supports_context_editing: False to act as an endpoint without context editing: the
            ``context-management-2025-06-27`` beta is ignored, so its edits are refused.

    Attributes:
        prompt_cache: The simulated prompt cache (``clear()`` it to start cold).
        supports_tool_reference: As given.
        context_window: As given; may be changed between requests.
        context_windows: As given (a dict, empty by default); may be changed too.
        min_compaction_trigger: As given; may be changed too.
        supports_compaction: As given.
        supports_context_editing: As given.
    """

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        supports_tool_reference: bool = True,
        deferred_in_prefix: bool = True,
        context_window: int = DEFAULT_CONTEXT_WINDOW,
        context_windows: Mapping[str, int] | None = None,
        min_compaction_trigger: int = MIN_TRIGGER,
        supports_compaction: bool = True,
        supports_context_editing: bool = True,
    ) -> None:
        self.supports_tool_reference = supports_tool_reference
        self.supports_compaction = supports_compaction
        self.supports_context_editing = supports_context_editing
        self.prompt_cache = PromptCache(deferred_in_prefix=deferred_in_prefix)
        self.context_window = context_window
        self.context_windows: dict[str, int] = dict(context_windows or {})
        self.min_compaction_trigger = min_compaction_trigger
        self._signer = CompactionSigner()
        self._thinking = ThinkingSigner()
        self._script: deque[ScriptItem] = deque(script)
        self._requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._http = LoopbackServer(self._answer)

    # -- life cycle -----------------------------------------------------------------------

    def start(self) -> Self:
        """Start serving on a free port of 127.0.0.1 (a no-op if started)."""
        self._http.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every connection (a no-op if stopped)."""
        self._http.stop()

    def __enter__(self) -> Self:
        """Start the server."""
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the server."""
        self.stop()

    @property
    def url(self) -> str:
        """The base URL to give the SDK, ``http://127.0.0.1:PORT``."""
        return self._http.url

    def client(self, **kwargs: Any) -> anthropic.Anthropic:
        """Return an ``anthropic.Anthropic`` client for this server.

        Args:
            **kwargs: Passed to the client (defaults: ``api_key="test-key"``,
                ``max_retries=0``, a 10 s timeout, no proxy from the environment).
        """
        import anthropic

        kwargs.setdefault("api_key", "test-key")
        kwargs.setdefault("max_retries", 0)
        kwargs.setdefault("timeout", 10.0)
        # Plain HTTP on loopback: no proxy, and no TLS context to build (verify=False).
        kwargs.setdefault(
            "http_client", anthropic.DefaultHttpxClient(trust_env=False, verify=False)
        )
        return anthropic.Anthropic(base_url=self.url, **kwargs)

    def wait_idle(self, timeout: float = 2.0) -> bool:
        """Wait until no request is being answered (e.g. after a client closed a stream).

        Args:
            timeout: Seconds to wait at most.

        Returns:
            True when idle, False on timeout.
        """
        return self._http.wait_idle(timeout)

    # -- script and records ---------------------------------------------------------------

    def enqueue(self, *items: ScriptItem) -> None:
        """Append items to the script.

        Args:
            *items: Replies, faults or callables ``(request_body) -> Reply | Fault``.
        """
        with self._lock:
            self._script.extend(items)

    def replace_script(self, items: Iterable[ScriptItem]) -> None:
        """Drop what is left of the script and use these items instead.

        Args:
            items: Replies, faults or callables ``(request_body) -> Reply | Fault``.
        """
        with self._lock:
            self._script = deque(items)

    @property
    def pending(self) -> int:
        """How many script items are left."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order (a copy of the list)."""
        with self._lock:
            return list(self._requests)

    @property
    def errors(self) -> list[str]:
        """The script errors so far (a copy of the list)."""
        with self._lock:
            return list(self._errors)

    def take_errors(self) -> list[str]:
        """Return the script errors so far and forget them (for tests that expect some)."""
        with self._lock:
            taken, self._errors = self._errors, []
            return taken

    def assert_no_errors(self) -> None:
        """Raise AssertionError listing the script errors, if there are any."""
        if errors := self.errors:
            raise AssertionError("FakeAnthropicServer script errors:\n" + "\n".join(errors))

    def context_tools(self, request_body: Mapping[str, Any]) -> set[str]:
        """Return the names of the tools the model can see for a request (from its last
        compaction block on).

        Args:
            request_body: A Messages API request body.
        """
        return context_tools(request_body)

    def window(self, model: str) -> int:
        """Return a model's context window: ``context_windows[model]``, else ``context_window``.

        Args:
            model: The model name of a request.
        """
        return self.context_windows.get(model, self.context_window)

    def compaction_block(self, content: str, tool_names: Iterable[str] = ()) -> dict[str, Any]:
        """Issue a compaction block this server accepts, as if it had compacted.

        For tests that start a conversation from a compaction without reaching a trigger.

        Args:
            content: The summary (not empty).
            tool_names: The deferred tools its ``tool_changes`` add (``tool_addition``).

        Returns:
            The block, to send in an assistant message.
        """
        return self._signer.issue(content, list(tool_names))

    # -- answering ------------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        """Return a new id such as ``toolu_fake000001``."""
        return f"{prefix}_fake{next(self._ids):06d}"

    def _answer(self, path: str, headers: Mapping[str, str], raw: bytes) -> HttpAnswer:
        """Decide the answer to one request, and record it."""
        try:
            body = json.loads(raw) if raw else None
        except ValueError as exc:
            body, parse_error = None, str(exc)
        else:
            parse_error = "" if isinstance(body, dict) else "the body is not a JSON object"
        stream = isinstance(body, dict) and body.get("stream") is True
        record = RecordedRequest(path, dict(headers), body, stream=stream)
        request_id = self._new_id("req")
        if problem := _http_problem(path, headers, parse_error):
            answer: HttpAnswer = _error(problem, request_id)
        else:
            assert isinstance(body, dict)  # _http_problem refused any other body
            answer = self._answer_valid_json(path, headers, body, record, request_id)
        if isinstance(answer, JsonAnswer):
            record.status = answer.status
        elif isinstance(answer, StreamAnswer):
            record.status = 200
        with self._lock:
            self._requests.append(record)
        return answer

    def _answer_valid_json(
        self,
        path: str,
        headers: Mapping[str, str],
        body: dict[str, Any],
        record: RecordedRequest,
        request_id: str,
    ) -> HttpAnswer:
        """Answer a request whose body parsed: validate it, compact it, then play the script."""
        checked = check_request(
            body,
            count_tokens=path == _COUNT_TOKENS,
            supports_tool_reference=self.supports_tool_reference,
            betas=self._supported(_betas(headers)),
            verify_compaction=self._signer.verify,
            min_trigger=self.min_compaction_trigger,
        )
        if isinstance(checked, ApiError):
            return _error(checked, request_id)
        betas = self._supported(_betas(headers))
        if problem := (
            config_error(body) or self._thinking.error(body) or memory_beta_error(body, betas)
        ):
            return _error(invalid(problem), request_id)
        if path == _COUNT_TOKENS:
            return _json(200, {"input_tokens": self.prompt_cache.count(body)}, request_id)
        plan = self._plan(body, checked)
        if isinstance(plan, ApiError):
            return _error(plan, request_id)
        if plan.applied:  # what a cleared tool_reference loaded is gone
            checked = context_tools(plan.read_body)
        if plan.block is not None and plan.edit is not None and plan.edit.pause:
            return self._send(self._paused(body, plan), record, request_id, 0.0)
        try:
            item = self._next_item(body)
            if isinstance(item, Fault):
                return self._fault(item, body, checked, plan, record, request_id)
            return self._reply(item, body, checked, plan, record, request_id)
        except ScriptError as exc:
            with self._lock:
                self._errors.append(str(exc))
            # The SDK retries 500s; a script error must fail once, loudly.
            return _error(
                ApiError(500, "api_error", str(exc)), request_id, {"x-should-retry": "false"}
            )

    def _supported(self, betas: set[str]) -> set[str]:
        """The betas of a request this server plays (the others are ignored, as unknown)."""
        ignored = set() if self.supports_compaction else {COMPACT_BETA}
        return betas - ignored - (set() if self.supports_context_editing else {CONTEXT_BETA})

    def _plan(self, body: dict[str, Any], visible: set[str]) -> _Plan | ApiError:
        """Clear old tool uses and compact the request if their edits' triggers are exceeded
        (in that order), then check that what the model reads fits the context window."""
        applied: tuple[dict[str, Any], ...] = ()
        clear = clear_edit(body)
        if clear is not None:
            cleared = clear_tool_uses(body, clear, self.prompt_cache.count, model_messages)
            if cleared is not None:
                body, applied = cleared.body, (cleared.applied,)
                visible = context_tools(body)
        edit = compact_edit(body)
        tokens = self.prompt_cache.count(body)
        plan = _Plan(edit, None, body, applied, body)
        if edit is not None and tokens > edit.trigger:
            block, compacted = compact(body, visible, edit, self._signer)
            plan = _Plan(edit, block, compacted, applied, body)
            tokens = self.prompt_cache.count(compacted)
        window = self.window(body["model"])
        if tokens > window:
            return invalid(f"prompt is too long: {tokens} tokens > {window} maximum")
        return plan

    def _next_item(self, body: dict[str, Any]) -> Reply | Fault:
        """Pop the next script item, calling it if it is a callable."""
        with self._lock:
            answered = sum(r.path == _MESSAGES and r.status == 200 for r in self._requests)
            item = self._script.popleft() if self._script else None
        if item is None:
            raise ScriptError(
                f"script exhausted: no reply left for this request ({answered} answered)"
            )
        if isinstance(item, Reply | Fault):
            return item
        try:
            produced = item(copy.deepcopy(body))
        except Exception as exc:  # a broken responder must fail the test, not the server
            raise ScriptError(f"script error: the responder {item!r} raised {exc!r}") from exc
        if not isinstance(produced, Reply | Fault):
            raise ScriptError(
                f"script error: the responder returned {produced!r}, not a Reply or Fault"
            )
        return produced

    def _message(
        self, reply: Reply, body: dict[str, Any], visible: set[str], plan: _Plan
    ) -> dict[str, Any]:
        """Render a reply as the message the API would send, and account its usage.

        When the request compacts, the compaction block comes first, then the reply the model
        gives from the compacted request; the top-level usage is that of this answer (the
        ``message`` iteration), the compaction's own is only in ``usage.iterations``.
        """
        content = self._thinking.sign(render(reply, plan.model_body, visible, self._new_id))
        compaction = self._compaction_usage(plan)
        cache = self.prompt_cache.account(plan.model_body)
        output = sum(
            count_tokens(b["text"]) if b["type"] == "text" else count_tokens(compact_json(b))
            for b in content
        )
        usage: dict[str, Any] = {
            "input_tokens": cache.input_tokens,
            "cache_creation_input_tokens": cache.cache_creation_input_tokens,
            "cache_read_input_tokens": cache.cache_read_input_tokens,
            "output_tokens": max(1, output),
        }
        if plan.edit is not None:
            usage["iterations"] = [*compaction, {"type": "message", **usage}]
        searches = sum(
            b["type"] == "web_search_tool_result" and isinstance(b["content"], list)
            for b in content
        )
        if searches:
            usage["server_tool_use"] = {"web_search_requests": searches, "web_fetch_requests": 0}
        return wire.message(
            message_id=self._new_id("msg"),
            model=body["model"],
            content=[plan.block, *content] if plan.block is not None else content,
            stop_reason=reply.resolved_stop_reason(),
            usage=usage,
            context_management=_context_management(body, plan),
        )

    def _compaction_usage(self, plan: _Plan) -> list[dict[str, Any]]:
        """Account the compaction iteration, which reads the whole request (as cleared), if
        there is one."""
        if plan.block is None:
            return []
        cache = self.prompt_cache.account(plan.read_body)
        return [
            {
                "type": "compaction",
                "input_tokens": cache.input_tokens,
                "cache_creation_input_tokens": cache.cache_creation_input_tokens,
                "cache_read_input_tokens": cache.cache_read_input_tokens,
                "output_tokens": count_tokens(str(plan.block["content"])),
            }
        ]

    def _paused(self, body: dict[str, Any], plan: _Plan) -> dict[str, Any]:
        """The answer of pause_after_compaction: the compaction block alone.

        The model did not answer, so the top-level usage is all zeros and ``iterations``
        holds the compaction alone.
        """
        usage: dict[str, Any] = dict.fromkeys(
            (
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "output_tokens",
            ),
            0,
        )
        usage["iterations"] = self._compaction_usage(plan)
        return wire.message(
            message_id=self._new_id("msg"),
            model=body["model"],
            content=[plan.block] if plan.block is not None else [],
            stop_reason="compaction",
            usage=usage,
            context_management=_context_management(body, plan),
        )

    def _send(
        self, whole: dict[str, Any], record: RecordedRequest, request_id: str, delay: float
    ) -> HttpAnswer:
        """Send a message as JSON or as a stream, as the request asked."""
        record.answer = whole
        if not record.stream:
            payload = json.dumps(whole).encode()
            return JsonAnswer(200, payload, _headers(request_id), delay, record.mark_interrupted)
        events = [wire.encode_event(name, data) for name, data in wire.stream_events(whole)]
        return _stream(events, request_id, record, delay=delay)

    def _reply(
        self,
        reply: Reply,
        body: dict[str, Any],
        visible: set[str],
        plan: _Plan,
        record: RecordedRequest,
        request_id: str,
    ) -> HttpAnswer:
        """Answer with a reply, as JSON or as a stream."""
        return self._send(
            self._message(reply, body, visible, plan), record, request_id, reply.delay
        )

    def _fault(
        self,
        fault: Fault,
        body: dict[str, Any],
        visible: set[str],
        plan: _Plan,
        record: RecordedRequest,
        request_id: str,
    ) -> HttpAnswer:
        """Answer with a fault."""
        if fault.kind == "http" or (fault.kind == "stream_error" and not record.stream):
            error = ApiError(fault.status, fault.error_type, fault.message)
            wait = {} if fault.retry_after is None else {"retry-after": f"{fault.retry_after:g}"}
            return _error(error, request_id, wait)
        if fault.kind == "malformed":
            whole = self._message(Reply.text("malformed"), body, visible, plan)
            text = json.dumps(whole)
            if not record.stream:
                return JsonAnswer(200, text[: len(text) // 2].encode(), _headers(request_id))
            start = wire.stream_events(whole)[0]
            return _stream(
                [wire.encode_event(*start), wire.encode_event("message_delta", text[:20])],
                request_id,
                record,
            )
        if not record.stream:
            return DropAnswer()
        assert fault.reply is not None
        events = wire.stream_events(self._message(fault.reply, body, visible, plan))
        cut = (
            fault.after_events
            if fault.after_events is not None
            else wire.middle_of_last_block(events)
        )
        encoded = [wire.encode_event(name, data) for name, data in events]
        if fault.kind == "drop":
            return _stream(encoded, request_id, record, delay=fault.reply.delay, cut_after=cut)
        error_event = wire.encode_event(
            "error", ApiError(fault.status, fault.error_type, fault.message).body(request_id)
        )
        return _stream([*encoded[:cut], error_event], request_id, record, delay=fault.reply.delay)


@dataclass(frozen=True)
class _Plan:
    """How a valid request is answered.

    Attributes:
        edit: Its compact edit, if any (then usage has ``iterations``).
        block: The compaction block, when the request compacts.
        model_body: What the model answers from: the request (cleared), or the compacted
            request.
        applied: The ``applied_edits`` of the answer (a clear edit's).
        read_body: The request as cleared, before compacting (what a compaction reads).
    """

    edit: CompactEdit | None
    block: dict[str, Any] | None
    model_body: dict[str, Any]
    applied: tuple[dict[str, Any], ...]
    read_body: dict[str, Any]


def _betas(headers: Mapping[str, str]) -> set[str]:
    """The betas named by the ``anthropic-beta`` header (comma-separated)."""
    return {beta.strip() for beta in headers.get("anthropic-beta", "").split(",") if beta.strip()}


def _context_management(body: Mapping[str, Any], plan: _Plan) -> dict[str, Any] | None:
    """The answer's ``context_management``, present when the request carried the field: the
    clear edits applied (compaction is reported by its block and ``usage.iterations``)."""
    if body.get("context_management") is None:
        return None
    return {"applied_edits": [dict(applied) for applied in plan.applied]}


def _headers(request_id: str) -> dict[str, str]:
    """Return the headers of every JSON answer."""
    return {"Content-Type": "application/json", "request-id": request_id}


def _json(status: int, payload: Any, request_id: str) -> JsonAnswer:
    """Build a JSON answer."""
    return JsonAnswer(status, json.dumps(payload).encode(), _headers(request_id))


def _error(
    error: ApiError, request_id: str, headers: Mapping[str, str] | None = None
) -> JsonAnswer:
    """Build the answer carrying an API error, with extra headers if given."""
    answer = _json(error.status, error.body(request_id), request_id)
    return JsonAnswer(answer.status, answer.body, {**answer.headers, **(headers or {})})


def _http_problem(path: str, headers: Mapping[str, str], parse_error: str) -> ApiError | None:
    """Return the error of a request refused before its body is read, if any."""
    if not (headers.get("x-api-key") or headers.get("authorization", "").startswith("Bearer ")):
        message = "x-api-key header is required (or Authorization: Bearer)"
        return ApiError(401, "authentication_error", message)
    if "anthropic-version" not in headers:
        return ApiError(400, "invalid_request_error", "anthropic-version: header is required")
    if path not in (_MESSAGES, _COUNT_TOKENS):
        return ApiError(404, "not_found_error", f"Not Found: {path}")
    if parse_error:
        message = f"There was an error parsing the body: {parse_error}"
        return ApiError(400, "invalid_request_error", message)
    return None


def _stream(
    events: list[bytes],
    request_id: str,
    record: RecordedRequest,
    *,
    delay: float = 0.0,
    cut_after: int | None = None,
) -> StreamAnswer:
    """Build a streamed answer that marks the record interrupted if the client goes away."""
    headers = {"request-id": request_id}
    return StreamAnswer(events, headers, delay, cut_after, record.mark_interrupted)
