"""Permission decisions: allow, deny or ask, the constructors a tool's hook and the policy
use, and the types of a policy and of the asker a question goes to.

A tool's own ``check_permission`` hook and the agent's policy each give a
:class:`PermissionDecision` (or ``None`` for no opinion); :mod:`nbagent.policy.combining`
makes one decision of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from nbagent.core.events import PermissionRequested

if TYPE_CHECKING:
    from nbagent.core.tool import Tool

Behavior = Literal["allow", "deny", "ask"]

PermissionAnswer = Literal["yes", "no", "always"]
"""A person's answer to a permission question: run it, refuse it, or run it and add the
allow rule that lets such calls run from now on."""


@dataclass(frozen=True)
class PermissionDecision:
    """Whether a tool call may run."""

    behavior: Behavior
    """``allow``, ``deny`` or ``ask`` the user."""
    message: str = ""
    """For deny, what the model is told; for ask, the question shown to the user."""
    rule: str = ""
    """The rule, mode or hook that decided, shown on the tool-call card."""
    explicit: bool = False
    """The user's own choice (an allow rule, bypass mode): it beats a tool's default ask."""
    always: str = ""
    """For ask, the allow rule an "always" answer adds: the narrowest that covers the call
    (empty: "always" is not offered)."""
    request: str = ""
    """For ask, what the call would do in the tool's own words (``run cell 1a2b3c4d``), said
    in place of what its input shows (empty: from the input)."""
    explains: bool = False
    """A hook's words for the question only (:func:`explain`): no opinion on the call."""


def allow(rule: str = "", explicit: bool = False) -> PermissionDecision:
    """Return an allow decision.

    Args:
        rule: What decided.
        explicit: The user chose it (an allow rule, bypass mode).

    Returns:
        The decision.
    """
    return PermissionDecision("allow", rule=rule, explicit=explicit)


def deny(message: str, rule: str = "") -> PermissionDecision:
    """Return a deny decision.

    Args:
        message: What the model is told.
        rule: What decided.

    Returns:
        The decision.
    """
    return PermissionDecision("deny", message=message, rule=rule)


def ask(
    message: str = "", rule: str = "", always: str = "", request: str = ""
) -> PermissionDecision:
    """Return a decision to ask the user.

    Args:
        message: The question.
        rule: What decided.
        always: The allow rule an "always" answer adds (none offered when empty).
        request: What the call would do, in the tool's words (empty: from its input).

    Returns:
        The decision.
    """
    return PermissionDecision("ask", message=message, rule=rule, always=always, request=request)


def explain(question: str, request: str = "") -> PermissionDecision:
    """Return a tool hook's words for the question, should the call be asked about.

    The hook takes no side: the call runs, is refused or is asked about as the policy
    decides; when it is asked about, the person is shown these words too (the code the call
    would run, the edit it would make: see :mod:`nbagent.render.codeview`).

    Args:
        question: The words, after any reason the policy gives.
        request: What the call would do (empty: from its input).

    Returns:
        The decision.
    """
    return PermissionDecision("allow", message=question, request=request, explains=True)


Policy = Callable[["Tool", Mapping[str, Any]], PermissionDecision | None]
"""The agent-wide permission policy: a decision for a call, or None for no opinion."""

Asker = Callable[[PermissionRequested], PermissionAnswer | None]
"""Asks the user about a call and waits, without a time limit, for the answer; None when no
one can be asked (no stdin)."""

RANK: dict[Behavior, int] = {"allow": 0, "ask": 1, "deny": 2}
"""How strict each behavior is: deny over ask, ask over allow."""
