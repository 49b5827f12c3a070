"""Who may run what: permission decisions and how a tool call's decision is reached.

A tool's own ``check_permission`` hook and the agent's policy each give a
:class:`PermissionDecision` (or ``None`` for no opinion). Deny wins over ask, ask over allow;
with no opinion at all a call is allowed. An ``ask`` goes to the agent's asker (a prompt on
the kernel's stdin, a test's answer); with no asker it is denied.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from nbagent.tool import Tool

Behavior = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class PermissionDecision:
    """Whether a tool call may run."""

    behavior: Behavior
    """``allow``, ``deny`` or ``ask`` the user."""
    message: str = ""
    """For deny, what the model is told; for ask, the question shown to the user."""
    rule: str = ""
    """The rule or hook that decided, shown on the tool-call card."""


def allow(rule: str = "") -> PermissionDecision:
    """Return an allow decision.

    Args:
        rule: What decided.
    """
    return PermissionDecision("allow", rule=rule)


def deny(message: str, rule: str = "") -> PermissionDecision:
    """Return a deny decision.

    Args:
        message: What the model is told.
        rule: What decided.
    """
    return PermissionDecision("deny", message=message, rule=rule)


def ask(message: str = "", rule: str = "") -> PermissionDecision:
    """Return a decision to ask the user.

    Args:
        message: The question.
        rule: What decided.
    """
    return PermissionDecision("ask", message=message, rule=rule)


Policy = Callable[["Tool", Mapping[str, Any]], PermissionDecision | None]
"""The agent-wide permission policy: a decision for a call, or None for no opinion."""

Asker = Callable[["Tool", Mapping[str, Any], str], bool]
"""Asks the user about a call (tool, input, question) and returns whether it may run."""

_RANK: dict[Behavior, int] = {"allow": 0, "ask": 1, "deny": 2}


def _as_decision(value: Any, rule: str) -> PermissionDecision | None:
    """Accept a decision, a bool (allow / deny) or None from a hook."""
    if value is None or isinstance(value, PermissionDecision):
        return value
    if value is True:
        return allow(rule)
    if value is False:
        return deny("Permission to use this tool was denied.", rule)
    raise TypeError(f"A permission hook returned {value!r}; return a PermissionDecision.")


def decide(tool: Tool, tool_input: Mapping[str, Any], policy: Policy | None) -> PermissionDecision:
    """Combine the tool's hook and the agent's policy into one decision.

    Args:
        tool: The tool called.
        tool_input: Its input.
        policy: The agent's policy, if any.

    Returns:
        The strictest decision (deny > ask > allow); allow when nobody has an opinion.
    """
    decisions = [
        _as_decision(tool.check_permission(tool_input), f"{tool.name}.check_permission")
        if tool.check_permission
        else None,
        policy(tool, tool_input) if policy else None,
    ]
    given = [d for d in decisions if d is not None]
    return max(given, key=lambda d: _RANK[d.behavior]) if given else allow()
