"""Local token estimates of tool definitions and requests.

Counts use the BPE tokenizer Anthropic published with its Python SDK (up to 0.38.0, shipped
here as ``data/claude-v1-tokenizer.json.gz``) through the ``tokenizers`` library. It is the
tokenizer of the Claude 2 generation: current models tokenize differently and Anthropic
publishes no offline tokenizer for them, so these are estimates (see
docs/explanation/token-estimates.md for the measured error). For exact counts against a live
model use the API's ``messages.count_tokens``.

A definition is counted as the compact JSON the API receives; a request adds the fixed
tool-use system prompt that the API documents for requests with tools.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokenizers import Tokenizer

TOOL_USE_SYSTEM_PROMPT_TOKENS = 346
"""Tokens the API adds to a request with tools (tool_choice auto), per Anthropic's docs."""

_TOKENIZER_FILE = "claude-v1-tokenizer.json.gz"


@functools.cache
def _tokenizer() -> Tokenizer:
    """Load the packaged tokenizer once (about 50 ms)."""
    import gzip  # with importlib.resources, 15 ms at %load_ext otherwise
    from importlib import resources

    from tokenizers import Tokenizer

    packed = resources.files("nbagent.core.data").joinpath(_TOKENIZER_FILE).read_bytes()
    return Tokenizer.from_str(gzip.decompress(packed).decode("utf-8"))


@functools.lru_cache(maxsize=1 << 16)
def count_tokens(text: str) -> int:
    """Count the tokens of a text (memoised: requests repeat the same blocks turn after turn).

    Args:
        text: Any text.

    Returns:
        The number of tokens.
    """
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def count_many(texts: Iterable[str]) -> list[int]:
    """Count the tokens of many texts in one batch (parallel in the tokenizer's threads).

    Args:
        texts: Any texts.

    Returns:
        One count per text, in order.
    """
    batch = list(texts)
    encodings = _tokenizer().encode_batch(batch, add_special_tokens=False) if batch else []
    return [len(encoding.ids) for encoding in encodings]


def compact_json(value: Any) -> str:
    """Serialise a value as the compact JSON that is counted."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def definition_tokens(definitions: Iterable[Mapping[str, Any]]) -> int:
    """Count the tokens of tool definitions as sent to the API.

    Args:
        definitions: API tool definitions (``name``, ``description``, ``input_schema``).

    Returns:
        Their total tokens.
    """
    return sum(count_many(compact_json(dict(d)) for d in definitions))


def request_tokens(request: Mapping[str, Any]) -> int:
    """Estimate the input tokens of a Messages API request.

    Deferred tools (``defer_loading``) are not counted: the model does not see them.

    Args:
        request: The request body (``system``, ``messages``, ``tools``).

    Returns:
        The estimated input tokens.
    """
    tools = [t for t in request.get("tools", ()) if not t.get("defer_loading")]
    texts = [compact_json(request.get("system", "")), compact_json(request.get("messages", []))]
    total = sum(count_many(texts)) + definition_tokens(tools)
    return total + (TOOL_USE_SYSTEM_PROMPT_TOKENS if tools else 0)
