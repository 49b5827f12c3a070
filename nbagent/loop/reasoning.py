"""Effort and thinking: how hard the model works on an answer, and whether it thinks first.

``effort`` (``%%agent --effort``, ``c.NbAgent.effort``) is sent as ``output_config.effort``;
``thinking`` ``adaptive`` as ``thinking: {"type": "adaptive"}`` (the model decides whether
and how much to think). Each is sent only to a model that takes it, by the table below
(Anthropic's model pages, read 2026-12-01):

=====================================================  =================  ========
model                                                  effort             adaptive
=====================================================  =================  ========
Fable 5.x, Mythos 5.x, Opus 5.x, Sonnet 5.x            low … max, xhigh   yes
Opus 4.6, 4.7, 4.8; Sonnet 4.6                         low … max          yes
Opus 4.5                                               low … high         no
any other model                                        none               no
=====================================================  =================  ========

The thinking blocks of an answer stay in the history with their signatures, as the API
requires (it refuses a tool-use turn whose thinking was dropped or changed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nbagent.api.pricing import model_entry
from nbagent.core.errors import ConfigurationError
from nbagent.loop.options import EFFORTS, Effort


@dataclass(frozen=True)
class Capability:
    """What a model takes of effort and thinking."""

    efforts: tuple[Effort, ...] = ()
    """The effort levels it takes (none: ``output_config.effort`` is not sent)."""
    adaptive: bool = False
    """Whether it takes adaptive thinking."""


_NEWEST = Capability(EFFORTS, adaptive=True)
_ADAPTIVE = Capability(("low", "medium", "high", "max"), adaptive=True)

CAPABILITIES: dict[str, Capability] = {
    **dict.fromkeys(
        (
            "claude-fable-5-2",
            "claude-fable-5-1",
            "claude-fable-5",
            "claude-mythos-5-2",
            "claude-mythos-5-1",
            "claude-mythos-5",
            "claude-opus-5-5",
            "claude-opus-5",
            "claude-sonnet-5-5",
            "claude-sonnet-5",
        ),
        _NEWEST,
    ),
    **dict.fromkeys(
        ("claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-sonnet-4-6"), _ADAPTIVE
    ),
    "claude-opus-4-5": Capability(("low", "medium", "high")),
}
"""Each model's effort levels and thinking (source in the docstring)."""


def capability_of(model: str, table: Mapping[str, Capability] = CAPABILITIES) -> Capability:
    """A model's capability: by its id, else by its id without a snapshot date; none known
    for a model the table lacks.

    Args:
        model: The model id.
        table: The table.
    """
    return model_entry(model, table) or Capability()


def check_effort(value: str | None) -> Effort | None:
    """Validate an effort level (None or "" for the model's default).

    Raises:
        ConfigurationError: The level is not one of :data:`EFFORTS`.
    """
    if not value:
        return None
    if value not in EFFORTS:
        raise ConfigurationError(
            f"Unknown effort {value!r}; choose one of: {', '.join(EFFORTS)} (or leave it out)."
        )
    return value  # type: ignore[return-value]


def reasoning_fields(
    model: str,
    effort: str | None,
    thinking: str,
    table: Mapping[str, Capability] = CAPABILITIES,
) -> dict[str, Any]:
    """The fields of a request that ask for effort and thinking, for what the model takes.

    Args:
        model: The model.
        effort: The effort level, or None for the model's default.
        thinking: ``adaptive`` or ``off``.
        table: The capability table.

    Returns:
        ``output_config`` (``OutputConfigParam``) and ``thinking``
        (``ThinkingConfigAdaptiveParam``), each when it applies.
    """
    capability = capability_of(model, table)
    fields: dict[str, Any] = {}
    if thinking == "adaptive" and capability.adaptive:
        fields["thinking"] = {"type": "adaptive"}
    if effort and effort in capability.efforts:
        fields["output_config"] = {"effort": effort}
    return fields


def effort_not_sent(
    model: str, effort: str | None, table: Mapping[str, Capability] = CAPABILITIES
) -> str | None:
    """Why an effort level asked for is not sent to a model, or None when it is (or none was
    asked for).

    Args:
        model: The model.
        effort: The effort level asked for, or None.
        table: The capability table.
    """
    if not effort:
        return None
    takes = capability_of(model, table).efforts
    if effort in takes:
        return None
    which = f"it takes {', '.join(takes)}" if takes else "it takes no effort setting"
    return (
        f"Effort {effort!r} is not sent: {model} does not take it ({which}); the model's "
        "default effort applies. Choose another level with %%agent --effort, or another model."
    )
