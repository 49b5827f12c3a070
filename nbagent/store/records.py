"""The records of a saved conversation's file: their schema, and reading them back defensively.

Each line of a conversation's file (:mod:`nbagent.store.journal`) is a JSON object, a record
of
one of five kinds, each with its pydantic model here:

- :class:`Header`, the first line: ``{"nbagent": "conversation", "version": 1, "id": ...}``;
- :class:`MessageRecord`: ``{"i": 2, "message": {"role": "user", "content": [...]}}``;
- :class:`LengthRecord`, the history cut back: ``{"length": 1}``;
- :class:`StateRecord`, the agent's state (:class:`State`): ``{"state": {"loaded": [...]}}``;
- :class:`CutRecord`, a line cut short by a crash acknowledged: ``{"cut": "<SHA-256>"}``.

A signature says who wrote a line, not that it is sound, so no line is trusted. A line longer
than :data:`MAX_LINE` bytes or nested deeper than :data:`MAX_DEPTH` is refused before it is
parsed; one that is not JSON, or not an object, is refused too. A record that does not match
its kind's model is left out. A message's blocks are checked one by one against the API's
shape of their type (the ``anthropic`` SDK's ``Beta*BlockParam`` types: a ``tool_use`` has an
``id``, a tool ``name`` and an ``input`` object...), and so are the items of a
``tool_result``'s content: a block that does not match, of a type the API does not take, or
in a message of the wrong role, is left out of its message. A field of the header or of the
state that is wrong is left out of it (the header's falls back to its default), and so is a
name of the state's lists that is no tool name. Each is named, with its line and why, in a
sentence (:attr:`History.problems`), e.g. ``block 1 of message 2, a tool_use, on line 3 (its
id is missing)``.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from typing import Annotated, Any, Literal, TypeVar

import nbagent.core.pydantic_whole  # noqa: F401 - pydantic whole, one thread at a time (see there)

# isort: split
from pydantic import (
    BaseModel,
    ConfigDict,
    NonNegativeInt,
    StringConstraints,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from nbagent.catalogue.delta import LEGACY_TAG
from nbagent.core.text import cut, plural
from nbagent.core.tool import NAME_PATTERN
from nbagent.loop.history import SUMMARY_TAG
from nbagent.store.message_lines import MessageLines

MAX_LINE = 32 * 2**20
"""The most bytes a line may take (32 MiB, what the API takes in a whole request)."""

MAX_DEPTH = 128
"""The deepest a line may nest arrays and objects."""

MAX_NAMED = 5
"""How many problems of one conversation a sentence names before it says how many more."""

_NOT_PROMPTS = ("<system-reminder>", f"<{LEGACY_TAG}>", f"<{SUMMARY_TAG}>")
"""How the texts nbagent adds to user turns start: announcements, summaries."""

_COMPACTION = b'"compaction"'
"""The bytes a line that holds a compaction block has (its ``type``)."""
_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
"""Opening brackets as 2, closing ones as 0: each minus 1 is how the depth changes."""
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[{]}"))


class LineError(ValueError):
    """A line that cannot be read as a record; the message says why, as ``it is ...``."""


def parse_line(body: bytes) -> dict[str, Any]:
    """One line of a file as a record, refused when too long or too deep before it is parsed.

    Args:
        body: The line's bytes, without its newline (and without its MAC field).

    Returns:
        The JSON object.

    Raises:
        LineError: The line is longer than :data:`MAX_LINE`, nested deeper than
            :data:`MAX_DEPTH`, not JSON or not a JSON object.
    """
    if len(body) > MAX_LINE:
        raise LineError(f"it is {len(body):,} bytes long, longer than the {MAX_LINE:,} allowed")
    too_deep = LineError(f"it is nested more than {MAX_DEPTH} levels deep")
    if _too_deep(body):
        raise too_deep
    try:
        value = json.loads(body)
    except RecursionError:  # only if the stack was nearly full already
        raise too_deep from None
    except ValueError as exc:
        reason = (
            f"{exc.msg} at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else exc
        )
        raise LineError(f"it is not JSON ({reason})") from None
    if not isinstance(value, dict):
        raise LineError(f"it is {shown(value)}, not a record (a JSON object)")
    return value


def _too_deep(body: bytes) -> bool:
    """Whether a JSON text nests arrays and objects deeper than :data:`MAX_DEPTH`, counted
    without parsing it (brackets inside strings left out)."""
    if body.count(b"[") + body.count(b"{") <= MAX_DEPTH:
        return False
    brackets = _STRINGS.sub(b"", body).translate(_BRACKETS, _NOT_BRACKETS)
    return max(accumulate(map(operator.sub, brackets, repeat(1)), initial=0)) > MAX_DEPTH


def shown(value: Any) -> str:
    """A JSON value in a few words: a scalar as JSON (a text cut short), else its kind."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an empty list" if not value else "a list"
    if isinstance(value, str):
        return json.dumps(cut(value, 40), ensure_ascii=False)
    return json.dumps(value)


# -- the schema -----------------------------------------------------------------------------


def _expecting(expected: str) -> WrapValidator:
    """Report any error of a field as one: the value is not ``expected``."""

    def check(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError(
                "expected", "should be {expected}", {"expected": expected}
            ) from None

    return WrapValidator(check)


TOOL_NAME = "a tool name (1 to 64 letters, digits, _ or -)"
"""What :data:`nbagent.core.tool.NAME_PATTERN` takes, in words."""
ToolName = Annotated[str, StringConstraints(pattern=NAME_PATTERN.pattern), _expecting(TOOL_NAME)]
"""A tool's name as the API takes it (:data:`nbagent.core.tool.NAME_PATTERN`)."""
ToolId = Annotated[
    str, StringConstraints(pattern=r"^[a-zA-Z0-9_-]+$"), _expecting("a tool call's id")
]
"""The id of a tool call as the API takes it."""
TextOrBlocks = Annotated[str | list[Any], _expecting("a text or a list of blocks")]
TextOrNull = Annotated[str | None, _expecting("a text or null")]
ListOrNull = Annotated[list[Any] | None, _expecting("a list or null")]
Summary = Annotated[
    str | None, StringConstraints(min_length=1), _expecting("a summary (a text) or null")
]


class Block(BaseModel):
    """A content block: its type, and any other fields (the API's shapes grow)."""

    model_config = ConfigDict(strict=True, extra="allow")

    type: str


class TextBlock(Block):
    """``BetaTextBlockParam``."""

    text: str
    citations: ListOrNull = None


class Source(BaseModel):
    """The source of an image or a document: base64 data, a URL, a file, a text..."""

    model_config = ConfigDict(strict=True, extra="allow")

    type: str


class SourcedBlock(Block):
    """``BetaImageBlockParam``, ``BetaRequestDocumentBlockParam``."""

    source: Source


class SearchResultBlock(Block):
    """``BetaSearchResultBlockParam``."""

    content: list[TextBlock]
    source: str
    title: str


class ThinkingBlock(Block):
    """``BetaThinkingBlockParam``."""

    thinking: str
    signature: str


class RedactedThinkingBlock(Block):
    """``BetaRedactedThinkingBlockParam``."""

    data: str


class ToolUseBlock(Block):
    """``BetaToolUseBlockParam``, ``BetaServerToolUseBlockParam``."""

    id: ToolId
    name: ToolName
    input: dict[str, Any]


class MCPToolUseBlock(ToolUseBlock):
    """``BetaMCPToolUseBlockParam``."""

    server_name: str


class ToolResultBlock(Block):
    """``BetaToolResultBlockParam`` (its content's items are checked one by one)."""

    tool_use_id: ToolId
    content: TextOrBlocks = ""
    is_error: bool = False


class ServerResultBlock(Block):
    """The result of a server tool (``BetaWebSearchToolResultBlockParam``...): the call it
    answers; its content is the API's own."""

    tool_use_id: ToolId


class CompactionBlock(Block):
    """``BetaCompactionBlockParam``."""

    content: Summary = None
    encrypted_content: TextOrNull = None
    signature: TextOrNull = None
    tool_changes: ListOrNull = None


class ContainerUploadBlock(Block):
    """``BetaContainerUploadBlockParam``."""

    file_id: str


class ToolReferenceBlock(Block):
    """``BetaToolReferenceBlockParam``, in a ``tool_result``'s content."""

    tool_name: ToolName


USER: tuple[str] = ("user",)
ASSISTANT: tuple[str] = ("assistant",)
EITHER = ("user", "assistant")

BLOCKS: dict[str, tuple[type[Block], tuple[str, ...]]] = {
    "text": (TextBlock, EITHER),
    "image": (SourcedBlock, EITHER),
    "document": (SourcedBlock, EITHER),
    "search_result": (SearchResultBlock, EITHER),
    "thinking": (ThinkingBlock, ASSISTANT),
    "redacted_thinking": (RedactedThinkingBlock, ASSISTANT),
    "tool_use": (ToolUseBlock, ASSISTANT),
    "server_tool_use": (ToolUseBlock, ASSISTANT),
    "mcp_tool_use": (MCPToolUseBlock, ASSISTANT),
    "tool_result": (ToolResultBlock, USER),
    "web_search_tool_result": (ServerResultBlock, ASSISTANT),
    "web_fetch_tool_result": (ServerResultBlock, ASSISTANT),
    "advisor_tool_result": (ServerResultBlock, ASSISTANT),
    "code_execution_tool_result": (ServerResultBlock, ASSISTANT),
    "bash_code_execution_tool_result": (ServerResultBlock, ASSISTANT),
    "text_editor_code_execution_tool_result": (ServerResultBlock, ASSISTANT),
    "tool_search_tool_result": (ServerResultBlock, ASSISTANT),
    "mcp_tool_result": (ServerResultBlock, ASSISTANT),
    "container_upload": (ContainerUploadBlock, USER),
    "compaction": (CompactionBlock, ASSISTANT),
    "tool_addition": (Block, EITHER),
    "tool_removal": (Block, EITHER),
    "mcp_tool_listing": (Block, EITHER),
    "fallback": (Block, EITHER),
}
"""The block types of a message (the SDK's ``BetaContentBlockParam``): their model, and the
roles whose messages hold them."""
_MESSAGE_BLOCKS = {kind: model for kind, (model, _) in BLOCKS.items()}

RESULT_ITEMS: dict[str, type[Block]] = {
    "text": TextBlock,
    "image": SourcedBlock,
    "document": SourcedBlock,
    "search_result": SearchResultBlock,
    "tool_reference": ToolReferenceBlock,
    "browser_state": Block,
}
"""The block types of a ``tool_result``'s content, and their model."""

_MESSAGE_LINES = MessageLines(BLOCKS, RESULT_ITEMS)


class Message(BaseModel):
    """A message of the history (its blocks are checked one by one)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    role: Literal["user", "assistant"]
    content: TextOrBlocks


class _Record(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class MessageRecord(_Record):
    """The message at an index of the history: appended, or replacing the one there."""

    i: NonNegativeInt
    message: Message


class LengthRecord(_Record):
    """The history cut back to its first ``length`` messages."""

    length: NonNegativeInt


class StateRecord(_Record):
    """The agent's state (:class:`State`, whose fields are checked one by one)."""

    state: dict[str, Any]


class CutRecord(_Record):
    """The acknowledgement of a line cut short by a crash: that line's SHA-256."""

    cut: str


class Header(BaseModel):
    """The first line (a file whose first line has another ``nbagent`` is no conversation;
    any other field falls back to its default when wrong)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    nbagent: Literal["conversation"] = "conversation"
    version: NonNegativeInt = 1
    id: str = ""
    notebook: str = ""
    started: str = ""
    model: str = ""


class State(BaseModel):
    """What a resumed agent needs beside the history
    (:func:`nbagent.store.recorder.state_record`)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    loaded: list[ToolName] = []
    expanded: list[ToolName] = []
    prompt_tokens: NonNegativeInt = 0
    usage: dict[str, NonNegativeInt] = {}
    valid: NonNegativeInt = 0


RECORDS: dict[str, type[_Record]] = {
    "i": MessageRecord,
    "message": MessageRecord,
    "length": LengthRecord,
    "state": StateRecord,
    "cut": CutRecord,
}
"""The kind of a record (after the header), by a field only its kind has."""


# -- errors in words ------------------------------------------------------------------------

_EXPECTED = {
    "string_type": "a text",
    "int_type": "a whole number",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "literal_error": "{expected}",
    "greater_than_equal": "a number of at least {ge}",
    "expected": "{expected}",
}
"""What a value should have been, by pydantic's error type."""


def _path(loc: Sequence[str | int]) -> str:
    """Where in a value an error is: ``content``, ``loaded item 2``, ``message's role``."""
    words = ""
    for part in loc:
        if isinstance(part, int):
            words += f" item {part + 1}"
        else:
            words += f"'s {part}" if words else str(part)
    return words


def _fault(error: ErrorDetails) -> str:
    """What is wrong with one value: ``is missing``, ``is 5, not a list``."""
    if error["type"] == "missing":
        return "is missing"
    if error["type"] == "extra_forbidden":
        return "is one field too many"
    expected = _EXPECTED.get(error["type"])
    if expected is None:
        return f"is {shown(error['input'])} ({error['msg']})"
    return f"is {shown(error['input'])}, not {expected.format(**error.get('ctx', {}))}"


def why(exc: ValidationError) -> str:
    """What is wrong with a value, in words: ``its id is missing; its name is ...``."""
    errors = exc.errors()
    said = [
        f"its {_path(e['loc'])} {_fault(e)}" if e["loc"] else f"it {_fault(e)}" for e in errors[:3]
    ]
    more = f"; and {len(errors) - 3} more" if len(errors) > 3 else ""
    return "; ".join(said) + more


def named(problems: Sequence[str]) -> str:
    """Problems in one sentence, the first :data:`MAX_NAMED` of them and how many more."""
    more = len(problems) - MAX_NAMED
    return "; ".join(problems[:MAX_NAMED]) + (f"; and {more} more" if more > 0 else "")


Model = TypeVar("Model", bound=BaseModel)


def salvaged(
    model: type[Model], data: Mapping[str, Any], subject: str, line: int = 0
) -> tuple[Model, list[str]]:
    """A value read as a model whose fields all have defaults, the wrong fields (and the
    wrong items of its lists and objects) left out.

    Args:
        model: The model.
        data: The object read.
        subject: What it is, for the problems: ``the state`` names ``the state's loaded``.
        line: The number of its line, for the problems; 0 for none.

    Returns:
        The value, and what was left out of it, one sentence each.
    """
    data = {k: (v.copy() if isinstance(v, list | dict) else v) for k, v in data.items()}
    place = f" on line {line}" if line else ""
    problems: list[str] = []
    for _ in range(3):  # each round removes every wrong place: the second passes
        try:
            return model.model_validate(data), problems
        except ValidationError as exc:
            errors = exc.errors()
        problems.extend(f"{subject}'s {_path(e['loc'])}{place} (it {_fault(e)})" for e in errors)
        for error in sorted(errors, key=lambda e: tuple(e["loc"]), reverse=True):
            *parents, last = error["loc"]
            container: Any = data
            for key in parents:
                container = container[key]
            del container[last]
    return model(), problems


# -- blocks and messages --------------------------------------------------------------------


def _a(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def _block_fault(
    block: Any, kinds: Mapping[str, type[Block]], role: str | None = None
) -> tuple[str, str]:
    """What kind a block is (``a tool_use``, or empty when it has none) and what is wrong
    with it (empty when nothing)."""
    if not isinstance(block, dict):
        return "", f"it is {shown(block)}, not a block (an object)"
    kind = block.get("type")
    if not isinstance(kind, str):
        return "", f"its type is {shown(kind)}, not a text" if "type" in block else "it has no type"
    if kind not in kinds:
        return _a(cut(kind, 40)), "the API takes no block of this type here"
    if role is not None and role not in BLOCKS[kind][1]:
        return _a(kind), f"only {BLOCKS[kind][1][0]} messages hold it"
    try:
        kinds[kind].model_validate(block)
    except ValidationError as exc:
        return _a(kind), why(exc)
    return _a(kind), ""


def valid_blocks(
    content: list[Any], role: str, message: str = "a message", line: int = 0
) -> tuple[list[dict[str, Any]], list[str]]:
    """A message's blocks that match the API's shapes (and the items of a ``tool_result``'s
    content that do), and what was left out.

    Args:
        content: The message's content.
        role: The message's role.
        message: The message, for the problems (``message 2``).
        line: The number of its line, for the problems; 0 for none.

    Returns:
        The blocks kept (a ``tool_result`` whose content lost items is a copy), and what was
        left out, one sentence each.
    """
    place = f" on line {line}" if line else ""
    blocks: list[dict[str, Any]] = []
    problems: list[str] = []

    def left_out(what: str, kind: str, fault: str) -> None:
        label = f"{what}, {kind}," if kind else what
        problems.append(f"{label}{place} ({fault})" if place else f"{label.rstrip(',')} ({fault})")

    for j, block in enumerate(content, 1):
        kind, fault = _block_fault(block, _MESSAGE_BLOCKS, role)
        if fault:
            left_out(f"block {j} of {message}", kind, fault)
            continue
        if block["type"] == "tool_result" and isinstance(block.get("content"), list):
            items = []
            for k, item in enumerate(block["content"], 1):
                item_kind, item_fault = _block_fault(item, RESULT_ITEMS)
                if item_fault:
                    left_out(f"item {k} of block {j} of {message}", item_kind, item_fault)
                else:
                    items.append(item)
            if len(items) < len(block["content"]):
                block = {**block, "content": items}
        blocks.append(block)
    return blocks, problems


def prompts(message: Mapping[str, Any]) -> list[str]:
    """The user's own texts in a message (not announcements, not tool results).

    Args:
        message: A message of a history.
    """
    if message.get("role") != "user":
        return []
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return [
        block["text"]
        for block in (blocks if isinstance(blocks, list) else ())
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and not block["text"].lstrip().startswith(_NOT_PROMPTS)
    ]


# -- reading a file -------------------------------------------------------------------------


@dataclass(slots=True)
class Line:
    """One whole line of a file, as read."""

    number: int
    """Its number in the file, from 1."""
    record: dict[str, Any] | None
    """Its record; None when it cannot be read."""
    error: str = ""
    """Why it cannot be read (``it is nested more than ...``)."""
    checked: bool = False
    """Whether the record is a message record already checked, every block of it
    (:mod:`nbagent.store.message_lines`)."""
    compaction: bool = True
    """Whether the line may hold a compaction block (False when its bytes do not name one)."""


def read_lines(numbered: Sequence[tuple[int, bytes]]) -> list[Line]:
    """Lines read (:func:`read_line`), the well-formed message records among them read and
    checked in one quick pass each (:mod:`nbagent.store.message_lines`).

    Args:
        numbered: Each line's number, from 1, and its bytes, without the newline (and
            without its MAC field).
    """
    lines = []
    for number, body in numbered:
        record = (
            _MESSAGE_LINES.checked_message_record(body)
            if len(body) <= MAX_LINE and not _too_deep(body)
            else None
        )
        lines.append(
            read_line(number, body)
            if record is None
            else Line(number, record, checked=True, compaction=_COMPACTION in body)
        )
    return lines


def read_line(number: int, body: bytes) -> Line:
    """A line's record, or why it has none (:func:`parse_line`).

    Args:
        number: The line's number, from 1.
        body: Its bytes, without the newline (and without its MAC field).
    """
    try:
        return Line(number, parse_line(body))
    except LineError as exc:
        return Line(number, None, str(exc))


def parsed_lines(data: bytes) -> tuple[list[Line], int]:
    """Every whole line of a file that is not blank, and whether the last one was cut short.

    Args:
        data: The file's bytes, not signed (each record's ``mac`` field is dropped).

    Returns:
        The lines, and 1 when the file ends in a line cut short (by a crash) that cannot be
        read, which is left out, else 0.
    """
    pieces = data.split(b"\n")
    tail = pieces.pop()
    lines = read_lines([(n, piece) for n, piece in enumerate(pieces, 1) if piece.strip()])
    skipped = 0
    if tail.strip():
        last = read_line(len(pieces) + 1, tail)
        if last.record is None:
            skipped = 1
        else:
            lines.append(last)
    for line in lines:
        if line.record is not None:
            line.record.pop("mac", None)
    return lines, skipped


@dataclass
class History:
    """What the records after the header make: the history, the state, what was left out."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    """The history (not repaired)."""
    state: dict[str, Any] = field(default_factory=dict)
    """The fields of the last state record that are right."""
    turns: int = 0
    """How many prompts the user gave (:attr:`SavedConversation.turns`)."""
    first_prompt: str = ""
    """The first of them."""
    problems: list[str] = field(default_factory=list)
    """What was left out, one sentence each."""
    compactions: set[int] = field(default_factory=set)
    """The messages that may hold a compaction block (those of lines naming one)."""
    changed_from: int = 0
    """The first message set or cut since the last state record (the history's length
    when none was)."""

    @property
    def valid(self) -> int:
        """How many first messages the last state record says are a valid history's
        (:attr:`State.valid`), as far as no record changed them since."""
        return min(self.state.get("valid", 0), self.changed_from, len(self.messages))


def read_header(line: Line) -> tuple[Header | None, list[str]]:
    """A file's header, its wrong fields left out.

    Args:
        line: The first line, read.

    Returns:
        The header, or None when the line is no conversation's header; and what was left out.
    """
    if line.record is None or line.record.get("nbagent") != "conversation":
        return None, []
    return salvaged(Header, line.record, "the header", line.number)


def replayed(lines: Sequence[Line]) -> History:
    """The history and state that the records after the header make, each record checked.

    Args:
        lines: The lines after the header.
    """
    history = History()
    for line in lines:
        if line.record is None:
            history.problems.append(f"line {line.number} ({line.error})")
        elif line.checked:
            index, message = line.record["i"], line.record["message"]
            if len(message) > 2:  # the fields of a message beyond its role and content
                message = {"role": message["role"], "content": message["content"]}
            _put(history, line.number, index, message)
            if line.compaction:
                history.compactions.add(index)
        else:
            _replay(history, line.number, line.record)
    return history


def _replay(history: History, number: int, record: dict[str, Any]) -> None:
    """Apply one record (not checked yet) to the history, or say why it is left out."""
    kind = next((RECORDS[key] for key in RECORDS if key in record), None)
    if kind is None:
        history.problems.append(
            f"line {number} (it is none of the records nbagent writes: a message, a length, "
            "a state)"
        )
        return
    try:
        checked = kind.model_validate(record)
    except ValidationError as exc:
        history.problems.append(f"line {number} ({why(exc)})")
        return
    if isinstance(checked, MessageRecord):
        index, role = checked.i, checked.message.role
        content = record["message"]["content"]
        if isinstance(content, list) and index <= len(history.messages):
            content, problems = valid_blocks(content, role, f"message {index + 1}", number)
            history.problems.extend(problems)
        _put(history, number, index, {"role": role, "content": content})
        history.compactions.add(index)
    elif isinstance(checked, LengthRecord):
        del history.messages[checked.length :]
        history.changed_from = min(history.changed_from, checked.length)
    elif isinstance(checked, StateRecord):
        state, problems = salvaged(State, checked.state, "the state", number)
        history.state = state.model_dump(exclude_unset=True)
        history.problems.extend(problems)
        history.changed_from = len(history.messages)


def _put(history: History, number: int, index: int, message: dict[str, Any]) -> None:
    """Set message ``index`` of the history (append it at the end) to a message of a role and
    a content only, or say why not."""
    messages = history.messages
    if index > len(messages):
        history.problems.append(
            f"line {number} (it sets message {index + 1}, but the history had "
            f"{plural(len(messages), 'message')} then)"
        )
        return
    if message["role"] == "user":  # only a user message says prompts
        said = prompts(message)
        before = len(prompts(messages[index])) if index < len(messages) else 0
        history.turns += max(len(said) - before, 0)  # a merge or a compaction adds none
        history.first_prompt = history.first_prompt or next(iter(said), "")
    if index < len(messages):
        messages[index] = message
        history.changed_from = min(history.changed_from, index)
    else:
        messages.append(message)
