"""The values the agent's options take: its defaults, and the choices of its modes.

Kept apart from the loop's modules, which import them from here, so that the settings
(:mod:`nbagent.jupyter.config`) and the magics' arguments name them without importing the
agent loop at ``%load_ext``.
"""

from __future__ import annotations

from typing import Literal

DEFAULT_MODEL = "claude-sonnet-5-5"
"""The model used unless another is named."""

DEFAULT_SYSTEM = (
    "You are an assistant working inside a Jupyter notebook. Use the tools you have; "
    "deferred tools are announced by name and must be loaded with ToolSearch before use. "
    "Be concise."
)
"""The system prompt used unless another is given."""

Mode = Literal["native", "client", "server", "off"]
MODES: tuple[Mode, ...] = ("native", "client", "server", "off")
"""The deferral modes: how deferred tools reach the model (:mod:`nbagent.loop.request`)."""

Effort = Literal["low", "medium", "high", "xhigh", "max"]
EFFORTS: tuple[Effort, ...] = ("low", "medium", "high", "xhigh", "max")
"""The effort levels, least first (:mod:`nbagent.loop.reasoning`)."""

Thinking = Literal["adaptive", "off"]
THINKING_MODES: tuple[Thinking, ...] = ("adaptive", "off")
"""Adaptive thinking where the model has it, or none."""
