"""A conversation's history, and the one repair that makes it one the API accepts again.

A history is a list of messages, ``{"role": "user" | "assistant", "content": ...}``. The agent
keeps its own valid as it goes, but a run stopped between two steps (an interrupt after the
model called tools) leaves tool calls unanswered; and a history read back from its file
(:mod:`nbagent.store.saved`) may end where a kernel was killed, or hold what the API refuses
(beside the blocks that do not have its shape, which reading left out:
:mod:`nbagent.store.records`): empty texts, roles that do not alternate, a compaction block
whose summary lost a secret (and so its signature). :func:`repaired` makes either valid, for
the agent before each run and for resuming; :func:`loaded_in` reads back the deferred tools
a history loaded.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from nbagent.catalogue.delta import COMPACTION
from nbagent.catalogue.registry import TOOL_SEARCH_NAME
from nbagent.core.tool import NAME_PATTERN
from nbagent.loop.execution import interrupted, without_empty_texts
from nbagent.loop.request import content_blocks

Role = Literal["user", "assistant"]
"""Who a message is from."""


class Message(TypedDict):
    """One message of a history, as the Messages API takes it (its blocks are the API's)."""

    role: Role
    content: str | list[dict[str, Any]]


History = list[Message]
"""A conversation's messages, oldest first: what the agent sends, saves and restores."""

SUMMARY_TAG = "conversation-summary"
"""The tag around a summary that replaces the earlier turns."""

_REDACTED = re.compile(r"\[redacted [A-Za-z_][A-Za-z0-9_]*\]")
"""What :func:`nbagent.core.secrets.redact` leaves of a secret."""


@dataclass
class Repair:
    """What :func:`repaired` changed to make a history valid."""

    messages: History
    """The history the API accepts."""
    interrupted: list[str] = field(default_factory=list)
    """The tools whose unanswered calls got an "interrupted" result."""
    dropped: int = 0
    """Blocks or messages left out (empty, misplaced, an unanswered result)."""
    summarised: bool = False
    """The last compaction block had a secret redacted from its summary, so its signature
    no longer matched: the history now starts from its summary, as nbagent's own
    compaction writes one."""
    valid: int = 0
    """How many first messages were kept as they were without being read: the ``valid``
    given to :func:`repaired` (as many as the history has, at most), or 0 when the history
    was read whole (a compaction block in it lost its signature)."""


def repaired(
    messages: Sequence[Mapping[str, Any]],
    *,
    redacted: bool = True,
    valid: int = 0,
    compactions: Collection[int] | None = None,
) -> Repair:
    """Make a history one the API accepts again.

    The history starts with a user message and the roles alternate (consecutive messages of
    a role are merged); empty texts and messages are left out; every ``tool_use`` is answered
    by a ``tool_result`` first in the next user message (a call without one gets the
    "interrupted" result of :func:`nbagent.loop.execution.interrupted`) and every ``tool_result``
    answers a call of the message before. A last assistant message is kept without its
    server tool calls left unanswered (and left out when nothing else remains). A message
    that needs no change is kept as the same object.

    Args:
        messages: The history: every block has the API's shape of its type, in a message of
            a role that holds it (the agent's own, or as reading keeps them:
            :func:`~nbagent.store.records.replayed`).
        redacted: The history may have had its secrets redacted, as a saved one has: a
            compaction block whose summary shows a redaction lost its signature, and is
            replaced by its summary. False for the agent's own history, which has not.
        valid: How many first messages are known to be the first messages of a valid
            history (the same objects as a repaired one's, as the agent's history is after
            its last repair): they are kept without being read, so that a repair costs
            what was added since. A redacted history needs ``compactions`` for it, and is
            read whole when a compaction block in it lost its signature.
        compactions: The messages that may hold a compaction block (those of a redacted
            history are looked for there only); all of them when None.

    Returns:
        The valid history and what was changed.

    Raises:
        ValueError: ``valid`` is given for a redacted history without ``compactions``.
    """
    if redacted and valid and compactions is None:
        raise ValueError("A redacted history read in part needs where its compactions are.")
    repair = Repair([])
    source = _resigned(messages, repair, compactions) if redacted else messages
    repair.valid = 0 if source is not messages else min(valid, len(messages))
    out = repair.messages
    out += source[: repair.valid]
    for message in source[repair.valid :]:
        blocks = _blocks(message["content"], repair)
        if role_of(message) == "assistant":
            _push_assistant(repair, message, blocks)
        else:
            _push_user(repair, message, blocks)
    if ends_with(out, "assistant"):
        last = out[-1]
        answered = {
            b.get("tool_use_id") for b in last["content"] if b.get("type") != "server_tool_use"
        }
        kept = [
            b
            for b in last["content"]
            if b.get("type") != "server_tool_use" or b.get("id") in answered
        ]
        repair.dropped += len(last["content"]) - len(kept)
        if kept:
            if len(kept) < len(last["content"]):
                out[-1] = {**last, "content": kept}
            _answer_calls(repair)
        else:
            out.pop()
            repair.dropped += 1
    return repair


def repaired_after(messages: Sequence[Mapping[str, Any]], valid: int) -> tuple[int, History]:
    """The agent's own history repaired (:func:`repaired`, ``redacted=False``), without
    copying the messages it keeps: what :func:`repaired` does with the first ``valid``
    messages is keep them, and of them it reads (merges into, answers the calls of) only the
    last; so the repair of the history from that last one on, with ``valid=1``, is the same
    as the whole history's after the others.

    Args:
        messages: The history.
        valid: As for :func:`repaired`.

    Returns:
        How many first messages are kept as they are, and what follows them in the history
        :func:`repaired` returns.
    """
    base = max(min(valid, len(messages)) - 1, 0)
    window = messages[base:]
    return base, repaired(window, redacted=False, valid=valid - base).messages


def _resigned(
    messages: Sequence[Mapping[str, Any]],
    repair: Repair,
    compactions: Collection[int] | None = None,
) -> Sequence[Mapping[str, Any]]:
    """A history without the compaction blocks whose summary had a secret redacted (the
    same history when it has none; looked for in ``compactions`` only, when given).

    The API refuses a compaction block that differs from the one it signed. The last one
    becomes a user turn with its summary, from which the history goes on (what came before
    it is what the API dropped anyway); an earlier one becomes a text (dropped by the API,
    as everything before the last compaction is).
    """
    looked = range(len(messages)) if compactions is None else sorted(compactions)
    spots = [
        (i, j)
        for i in looked
        if i < len(messages)
        for j, block in enumerate(_list(messages[i].get("content")))
        if _compacts(block)
    ]
    if not any(_secret_cut(messages[i]["content"][j]) for i, j in spots):
        return messages
    last = spots[-1]
    out: list[Mapping[str, Any]] = []
    for i, message in enumerate(messages):
        content = _list(message.get("content"))
        blocks: list[Any] = []
        for j, block in enumerate(content):
            if not (_compacts(block) and _secret_cut(block)):
                blocks.append(block)
            elif (i, j) == last:
                repair.summarised = True
                summary = f"<{SUMMARY_TAG}>\n{block['content']}\n</{SUMMARY_TAG}>"
                rest = content[j + 1 :]
                return [
                    {"role": "user", "content": [{"type": "text", "text": summary}]},
                    *([{**message, "content": rest}] if rest else []),
                    *messages[i + 1 :],
                ]
            else:
                blocks.append({"type": "text", "text": str(block["content"])})
        out.append({**message, "content": blocks} if content else message)
    return out


def _compacts(block: Any) -> bool:
    """Whether a block is a compaction block with a summary (a failed one has none)."""
    return (
        isinstance(block, Mapping)
        and block.get("type") == COMPACTION
        and bool(block.get("content"))
    )


def _secret_cut(block: Mapping[str, Any]) -> bool:
    """Whether redaction changed a compaction block (so that its signature fails)."""
    return any(
        isinstance(block.get(key), str) and _REDACTED.search(block[key])
        for key in ("content", "encrypted_content")
    )


def _list(content: Any) -> list[Any]:
    return content if isinstance(content, list) else []


def _push_assistant(repair: Repair, message: Mapping[str, Any], blocks: list[dict]) -> None:
    """Add an assistant message: after a user message, or merged into an assistant one."""
    out = repair.messages
    if not blocks:
        return
    if not out:  # the history starts with the user
        repair.dropped += 1
        return
    if ends_with(out, "assistant"):
        if tool_calls(out[-1]):
            _answer_calls(repair)
        else:
            out[-1] = {**out[-1], "content": [*out[-1]["content"], *blocks]}
            return
    out.append(_kept(message, "assistant", blocks))


def _push_user(repair: Repair, message: Mapping[str, Any], blocks: list[dict]) -> None:
    """Add a user message: its results answer the calls before it, in their order."""
    out = repair.messages
    results = {}
    for block in blocks:
        if block.get("type") == "tool_result":
            results.setdefault(block.get("tool_use_id"), block)
    others = [b for b in blocks if b.get("type") != "tool_result"]
    calls = tool_calls(out[-1]) if ends_with(out, "assistant") else []
    answers = []
    for call in calls:
        if call.get("id") in results:
            answers.append(results.pop(call.get("id")))
        else:
            answers.append(interrupted(call).block())
            repair.interrupted.append(str(call.get("name")))
    repair.dropped += len(results)
    content = answers + others
    if not content:
        repair.dropped += 1
        return
    if ends_with(out, "user"):
        out[-1] = {**out[-1], "content": [*out[-1]["content"], *others]}
    else:
        out.append(_kept(message, "user", blocks if content == blocks else content))


def _kept(message: Mapping[str, Any], role: str, content: list[dict]) -> dict[str, Any]:
    """A message of a role with a content: the message itself when it is one already."""
    if isinstance(message, dict) and message.get("role") == role:
        if message.get("content") is content:
            return message
    return {**message, "role": role, "content": content}


def _answer_calls(repair: Repair) -> None:
    """Answer the last assistant message's calls as interrupted, in a user message."""
    calls = tool_calls(repair.messages[-1])
    if calls:
        repair.messages.append(
            {"role": "user", "content": [interrupted(call).block() for call in calls]}
        )
        repair.interrupted.extend(str(call.get("name")) for call in calls)


def _blocks(content: str | list[dict[str, Any]], repair: Repair) -> list[dict[str, Any]]:
    """A valid message's content as blocks, without the empty texts the API refuses, in it
    or in a tool result's blocks (the same list when it has none)."""
    blocks = content_blocks(content)
    kept = [
        _without_empty_texts(b, repair) if b["type"] == "tool_result" else b
        for b in blocks
        if not (b["type"] == "text" and not b["text"].strip())
    ]
    repair.dropped += len(blocks) - len(kept)
    unchanged = len(kept) == len(blocks) and all(map(operator.is_, kept, blocks))
    return content if isinstance(content, list) and unchanged else kept


def _without_empty_texts(result: dict[str, Any], repair: Repair) -> dict[str, Any]:
    """A tool result without the empty text blocks the API refuses in its content, as a
    tool's own result is sent (:func:`~nbagent.loop.execution.without_empty_texts`); the same
    block when it has none."""
    inner = result.get("content")
    if not isinstance(inner, list) or not inner:
        return result
    sendable = without_empty_texts(inner)
    if sendable is inner:
        return result
    repair.dropped += len(inner) - (len(sendable) if isinstance(sendable, list) else 0)
    return {**result, "content": sendable}


def role_of(message: Mapping[str, Any]) -> Role:
    """Who a message is from.

    Args:
        message: A message of a history.
    """
    return message["role"]


def ends_with(messages: Sequence[Mapping[str, Any]], role: Role) -> bool:
    """Whether a history's last message is from ``role`` (False for an empty history).

    Args:
        messages: The history.
        role: ``user`` or ``assistant``.
    """
    return bool(messages) and role_of(messages[-1]) == role


def tool_calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_use`` blocks of a message, in order.

    Args:
        message: A message of a history.
    """
    return [b for b in content_blocks(message["content"]) if b.get("type") == "tool_use"]


def last_answer(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of a history's last assistant message (empty when it has none).

    Args:
        messages: The history.
    """
    for message in reversed(messages):
        if role_of(message) == "assistant":
            blocks = content_blocks(message["content"])
            return "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    return ""


def compaction_keeps(messages: Sequence[Mapping[str, Any]]) -> int:
    """Where the part of a history that a compaction keeps starts.

    The last user turn is kept, with the assistant turn before it when that one called tools
    (its calls and their results stay together); after a final answer nothing is kept.

    Args:
        messages: The history.
    """
    if not ends_with(messages, "user"):
        return len(messages)
    if len(messages) > 1 and tool_calls(messages[-2]):
        return len(messages) - 2
    return len(messages) - 1


def loaded_in(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The deferred tools a history loaded, in order: by ``tool_reference`` (ToolSearch in
    ``native`` mode, the API's own search in ``server`` mode) or by the names a ``client``
    mode ToolSearch result gives.

    Args:
        messages: The history.
    """
    names: dict[str, None] = {}
    searches: set[str] = set()
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            kind = block.get("type")
            if kind == "tool_use" and block.get("name") == TOOL_SEARCH_NAME:
                searches.add(block.get("id"))
            elif kind in ("tool_result", "tool_search_tool_result"):
                names.update(dict.fromkeys(_references(block)))
                text = block.get("content")
                if kind == "tool_result" and block.get("tool_use_id") in searches:
                    if isinstance(text, str) and text.startswith("Loaded: "):
                        listed = text[len("Loaded: ") :].partition(". ")[0]
                        names.update(dict.fromkeys(n.strip() for n in listed.split(",")))
    return [name for name in names if NAME_PATTERN.match(name)]


def _references(value: Any) -> list[str]:
    """The tool names of the ``tool_reference`` blocks in a value, at any depth."""
    if isinstance(value, list):
        return [name for item in value for name in _references(item)]
    if not isinstance(value, Mapping):
        return []
    if value.get("type") == "tool_reference":
        return [str(value.get("tool_name", ""))]
    return [name for item in value.values() for name in _references(item)]
